/**
 * @module registry/versioned-storage
 * The storage as one served version sees it (the role of kube's storage codec): objects are kept in the kind's
 * storage version, and this view converts every object it hands out to its own version and every object it is given
 * back to the storage version. A ResourceStore over it reads, writes and watches in its version only.
 *
 * Objects written by an earlier release in another version (an upgrade) are converted on the way out as well, and
 * rewritten in the storage version by migrateStorageVersion in the background (lists convert each item meanwhile).
 */
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { KubeObject } from '../apis/meta/types.js';
import type { UnreadableObject } from '../storage/corrupt-object.js';
import { isStorageError, StorageError } from '../storage/errors.js';
import { countUnder, currentPages, progressReporter, type WalkPhase, type WalkProgress } from '../storage/walk.js';
import type {
  ChangeEvent,
  DeleteCheck,
  KeyPrefix,
  ListRequest,
  ListResult,
  ObjectKey,
  Storage,
  UpdateFn,
  WatchHandle,
  WatchSink,
} from '../storage/interface.js';
import type { FieldVersions } from './managed-fields.js';
import type { ServedVersion } from './resource.js';

/** ToStorage and FromStorage convert whole objects between one served version and the storage version. */
export interface VersionCodec {
  /** The served version's apiVersion (group/version). */
  apiVersion: string;
  /** The storage version's apiVersion. */
  storageApiVersion: string;
  /** toStorage converts an object of this version (or already stored) into the storage version. */
  toStorage(obj: KubeObject): KubeObject;
  /** fromStorage converts a stored object (of any served version, the storage one normally) into this version. */
  fromStorage(obj: KubeObject): KubeObject;
  /**
   * defaults is a stored object (in the storage version) with the defaults its schema gives, as kube's codec applies
   * them on every read from storage; null when it has them all. Absent when the schema has no defaults.
   */
  defaults?(obj: KubeObject): KubeObject | null;
}

/**
 * versionCodecs builds a codec per served version of one kind. A stored object in a version other than the storage
 * version (written before an upgrade) first goes to the storage version through that version's conversion.
 */
export function versionCodecs(versions: readonly ServedVersion[], defaults?: (obj: KubeObject) => KubeObject | null): Map<string, VersionCodec> {
  const byApiVersion = new Map(versions.map((v) => [`${v.definition.group}/${v.definition.version}`, v]));
  const out = new Map<string, VersionCodec>();
  for (const v of versions) {
    const apiVersion = `${v.definition.group}/${v.definition.version}`;
    const storageApiVersion = v.storageApiVersion;
    const toStorageForm = (obj: KubeObject): KubeObject => {
      if (obj.apiVersion === storageApiVersion || obj.apiVersion === undefined) return obj;
      const from = byApiVersion.get(obj.apiVersion);
      if (!from?.conversion) return obj;
      return { ...from.conversion.toStorage(obj), apiVersion: storageApiVersion };
    };
    const conversion = v.conversion;
    out.set(apiVersion, {
      apiVersion,
      storageApiVersion,
      ...(defaults ? { defaults } : {}),
      toStorage: toStorageForm,
      fromStorage: conversion ? (obj) => (obj.apiVersion === apiVersion ? obj : { ...conversion.fromStorage(toStorageForm(obj)), apiVersion }) : toStorageForm,
    });
  }
  return out;
}

/**
 * versionedStorage is `inner` as seen in one served version (the storage version itself passes objects through).
 * `migrating` says objects of another version may still be stored (migrateStorageVersion has not finished): the
 * storage version's lists then convert each item instead of sending the stored text as is.
 */
export function versionedStorage(inner: Storage, codec: VersionCodec, migrating: () => boolean = () => false): Storage {
  if (codec.apiVersion === codec.storageApiVersion) return new StorageVersionView(inner, codec, migrating);
  return new ConvertingView(inner, codec, migrating);
}

// StorageVersionView serves the storage version: stored objects are already in it, except an earlier release's.
class StorageVersionView implements Storage {
  constructor(
    protected readonly inner: Storage,
    protected readonly codec: VersionCodec,
    protected readonly migrating: () => boolean,
  ) {}

  // Converted objects and events are remembered per stored one, so that every watcher of this version gets the same
  // converted event (its encoding is shared) and a stored object is converted once however often it is read.
  readonly #objects = new WeakMap<KubeObject, KubeObject>();
  readonly #events = new WeakMap<ChangeEvent, ChangeEvent>();

  protected out(obj: KubeObject): KubeObject {
    // Until the walk has stored every object with its defaults, each one read gets them here.
    const defaults = this.migrating() ? this.codec.defaults : undefined;
    if (obj.apiVersion === this.codec.apiVersion && !defaults) return obj;
    let v = this.#objects.get(obj);
    if (!v) {
      const stored = defaults ? (defaults(this.codec.toStorage(obj)) ?? obj) : obj;
      v = stored.apiVersion === this.codec.apiVersion ? stored : this.codec.fromStorage(stored);
      this.#objects.set(obj, v);
    }
    return v;
  }

  protected in(obj: KubeObject): KubeObject {
    return this.codec.toStorage(obj);
  }

  protected event(e: ChangeEvent): ChangeEvent {
    if (e.object.apiVersion === this.codec.apiVersion && (!e.prevObject || e.prevObject.apiVersion === this.codec.apiVersion)) return e;
    let v = this.#events.get(e);
    if (!v) {
      v = { ...e, object: this.out(e.object), ...(e.prevObject ? { prevObject: this.out(e.prevObject) } : {}) };
      this.#events.set(e, v);
    }
    return v;
  }

  currentRevision(): number {
    return this.inner.currentRevision();
  }

  compactedRevision(): number {
    return this.inner.compactedRevision();
  }

  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    return this.inner.waitForRevision(revision, timeoutMs);
  }

  // Marks are of the store, whichever version views it.
  marked(name: string): boolean {
    return this.inner.marked?.(name) ?? false;
  }

  async mark(name: string): Promise<void> {
    await this.inner.mark?.(name);
  }

  // A seal is of the stored objects, whichever version views them.
  async seal(resource: string, minRevision: number): Promise<number> {
    if (!this.inner.seal) throw new Error('this storage cannot seal a resource');
    return this.inner.seal(resource, minRevision);
  }

  sealedAt(resource: string): number {
    return this.inner.sealedAt?.(resource) ?? 0;
  }

  async get(key: ObjectKey): Promise<KubeObject | undefined> {
    const obj = await this.inner.get(key);
    return obj && this.out(obj);
  }

  async list(prefix: KeyPrefix, req: ListRequest = {}): Promise<ListResult> {
    const filter = req.filter;
    const r = await this.inner.list(prefix, {
      ...req,
      ...(filter ? { filter: (o: KubeObject) => filter(this.out(o)) } : {}),
      ...(this.passesEncoded() ? {} : { encoded: false }),
    });
    if (r.encoded) return r;
    return { ...r, items: r.items.map((o) => this.out(o)) };
  }

  // The stored JSON text is this version's only when no conversion applies (migrateStorageVersion has run).
  protected passesEncoded(): boolean {
    return !this.migrating();
  }

  async create(key: ObjectKey, obj: KubeObject): Promise<KubeObject> {
    return this.out(await this.inner.create(key, this.in(obj)));
  }

  async update(key: ObjectKey, tryUpdate: UpdateFn): Promise<KubeObject> {
    return this.out(
      await this.inner.update(key, (cur) => {
        const next = tryUpdate(this.out(cur));
        return next === null ? null : this.in(next);
      }),
    );
  }

  async delete(key: ObjectKey, check?: DeleteCheck): Promise<KubeObject> {
    return this.out(await this.inner.delete(key, check && ((cur) => check(this.out(cur)))));
  }

  // An object that does not decode has no version to convert: the backend removes it as it is.
  async deleteUnreadable(key: ObjectKey): Promise<void> {
    if (this.inner.deleteUnreadable) return this.inner.deleteUnreadable(key);
    // A backend that never holds such an object: what it holds decodes, or is missing.
    if (await this.inner.get(key)) throw new StorageError('InvalidObject', 'unsafe deletion is not allowed because the object is decodable from storage', key);
    throw new StorageError('KeyNotFound', `key not found: ${key.resource}/${key.namespace}/${key.name}`, key);
  }

  watch(prefix: KeyPrefix, fromRevision: number, sink: WatchSink): WatchHandle {
    return this.inner.watch(prefix, fromRevision, {
      onEvent: (e) => sink.onEvent(this.event(e)),
      onError: (err) => sink.onError(err),
      ...(sink.ready ? { ready: () => sink.ready?.() ?? Promise.resolve() } : {}),
    });
  }

  writable(): boolean {
    return this.inner.writable?.() ?? true;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

// CONVERTED_BYTES bounds the converted JSON texts a view remembers (about 25k Websites).
const CONVERTED_BYTES = 32 * 1024 * 1024;

// ConvertingView serves a version other than the storage version: every object crosses a conversion. A list sent on
// as JSON text (the endpoints' fast path) gets each item's converted text, remembered by the stored text's hash, so
// an unchanged object is converted once however often it is listed, and Table rows can be cached from it as well.
class ConvertingView extends StorageVersionView {
  readonly #texts = new LRUCache<string, Uint8Array>({ maxSize: CONVERTED_BYTES, sizeCalculation: (b) => b.byteLength + 64 });

  protected override passesEncoded(): boolean {
    return false;
  }

  override async list(prefix: KeyPrefix, req: ListRequest = {}): Promise<ListResult> {
    if (!req.encoded || req.filter) return super.list(prefix, req);
    const r = await this.inner.list(prefix, req);
    if (!r.encoded) return { ...r, items: r.items.map((o) => this.out(o)) };
    return { ...r, encoded: r.encoded.map((bytes) => this.#converted(bytes)) };
  }

  #converted(bytes: Uint8Array): Uint8Array {
    const key = hash('sha1', bytes, 'base64');
    let text = this.#texts.get(key);
    if (!text) {
      const stored = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as KubeObject;
      text = Buffer.from(JSON.stringify(this.codec.fromStorage(stored)));
      this.#texts.set(key, text);
    }
    return text;
  }
}

/** MIGRATION_PAGE is how many objects the migration reads in one read transaction (a short one: it pins nothing long). */
const MIGRATION_PAGE = 500;
/** MIGRATION_BATCH is how many rewrites of a page are in flight at once: lmdb commits those of one turn together. */
const MIGRATION_BATCH = 100;

/**
 * migrateStorageVersion rewrites every stored object of one resource that is not in the storage version (an earlier
 * release's) in the storage version, or lacks a default its schema gives (a CRD file changed to add one: kube
 * defaults on every read from storage, so the object is stored with it, as kube would show it). On a backend that can (Storage.rewrite: lmdb) the object keeps its
 * resourceVersion and no event is written, as nothing any version shows changes: the store does not grow by a
 * history entry per object (which holds it twice) and watchers get no storm of MODIFIED events. Elsewhere (etcd) it
 * is kube's storage version migration: a no-op update that stores the converted form (a new resourceVersion, a
 * MODIFIED event with the same content in every version). Each page is its own short read; rewrites are ordinary
 * write transactions, so pages freed by one are reused by the next. `onProgress` hears where it stands at the start,
 * every few seconds and at the end. An object whose stored data does not decode is passed over (it has no version to
 * convert; it stays for the unsafe delete), `onUnreadable` hears of it once, and the walk goes on; any other failure
 * ends it.
 */
export async function migrateStorageVersion(
  storage: Storage,
  resource: string,
  codec: VersionCodec,
  stopped: () => boolean = () => false,
  onProgress?: (p: WalkProgress, phase: WalkPhase) => void,
  onUnreadable: (o: UnreadableObject) => void = () => undefined,
): Promise<{ checked: number; migrated: number; unreadable: number; elapsedSeconds?: number; perSecond?: number }> {
  let checked = 0;
  let migrated = 0;
  let unreadable = 0;
  const skipped = (o: UnreadableObject) => {
    unreadable++;
    onUnreadable(o);
  };
  const prefix = { resource };
  // Started at the first page with something to migrate: a store already migrated reports nothing.
  let progress: ReturnType<typeof progressReporter> | undefined;
  // The stored form in the storage version with its schema's defaults (kube gives them on every read); null when the
  // stored object is that already.
  const convert = (cur: KubeObject): KubeObject | null => {
    const stored = cur.apiVersion === codec.storageApiVersion ? cur : codec.toStorage(cur);
    return codec.defaults?.(stored) ?? (stored === cur ? null : stored);
  };
  const rewriteOne = async (obj: KubeObject): Promise<number> => {
    const key = { resource, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
    try {
      if (storage.rewrite) return (await storage.rewrite(key, convert)) ? 1 : 0;
      await storage.update(key, convert);
      return 1;
    } catch (e) {
      // Deleted since the page was read: nothing to migrate.
      if (isStorageError(e, 'KeyNotFound')) return 0;
      throw e;
    }
  };
  for await (const items of currentPages(storage, prefix, MIGRATION_PAGE, stopped, skipped)) {
    const stale = items.filter((o) => convert(o) !== null);
    if (stale.length && onProgress && !progress) {
      progress = progressReporter(await countUnder(storage, prefix), onProgress);
      progress.add(checked, migrated);
    }
    let done = 0;
    for (let i = 0; i < stale.length; i += MIGRATION_BATCH) {
      const counts = await Promise.all(stale.slice(i, i + MIGRATION_BATCH).map(rewriteOne));
      done += counts.reduce((a, b) => a + b, 0);
    }
    checked += items.length;
    migrated += done;
    progress?.add(items.length, done);
  }
  const end = progress?.end();
  return { checked, migrated, unreadable, ...(end ? { elapsedSeconds: end.elapsedSeconds, perSecond: end.perSecond } : {}) };
}

/** fieldVersions translates managedFields paths between a kind's versions, through the storage version. */
export function fieldVersions(versions: readonly ServedVersion[]): FieldVersions {
  const conversions = new Map(versions.map((v) => [`${v.definition.group}/${v.definition.version}`, v.conversion]));
  return (path, from, to) => {
    if (from === to) return path;
    if (!conversions.has(from) || !conversions.has(to)) return undefined;
    const source = conversions.get(from);
    const stored = source ? source.fieldToStorage(path) : [...path];
    if (!stored) return undefined;
    const target = conversions.get(to);
    return target ? target.fieldFromStorage(stored) : stored;
  };
}
