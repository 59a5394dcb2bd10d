/**
 * @module storage/lmdb-storage
 * LmdbStorage: the embedded backend. One lmdb environment in `--data-dir` with two named databases:
 * `objects` ([resource, namespace, name] → object JSON) and `meta` (`revision` → last committed revision).
 *
 * ## Guarantees
 * - The revision counter and the object are written in the same write transaction, so a crash can never leave an
 *   object whose resourceVersion is ahead of the counter (no resourceVersion is ever reused after a restart).
 * - Writes resolve only after the commit is flushed to disk (`await db.flushed`); lmdb batches concurrent
 *   transactions of one event-loop turn into one commit, so concurrent requests share an fsync.
 * - Checks (exists, preconditions, tryUpdate) run inside the transaction callback before any write, because a
 *   callback that throws after writing would still commit those writes (DEPENDENCIES.md §3).
 */
import { mkdirSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { MAXIMUM_KEY } from 'ordered-binary';
import type { KubeObject } from '../apis/meta/types.js';
import { ChangeFeed } from './change-feed.js';
import { StorageError } from './errors.js';
import type { ChangeEvent, DeleteCheck, KeyPrefix, ListResult, ObjectKey, Storage, UpdateFn, WatchHandle } from './interface.js';
import { keyString, keyTuple } from './keys.js';

const REVISION = 'revision';

/** LmdbStorageOptions configures the backend. */
export interface LmdbStorageOptions {
  /** Directory of the lmdb environment (created if missing). */
  path: string;
  /** How many recent change events a watch can resume from (in memory). */
  historySize?: number;
}

type Key = [string, string, string];

/** LmdbStorage implements Storage on lmdb. */
export class LmdbStorage implements Storage {
  readonly #root: RootDatabase;
  readonly #objects: Database<KubeObject, Key>;
  readonly #meta: Database<number, string>;
  readonly #feed: ChangeFeed;
  #closed = false;

  constructor(opts: LmdbStorageOptions) {
    mkdirSync(opts.path, { recursive: true });
    // Durability is lmdb's default (synced commits); never noSync. JSON values keep the file readable with other tools.
    // noSubdir must be explicit: lmdb-js guesses it from the path, and a directory name with a dot in it
    // (`/var/lib/website.data`, a `mktemp -d` name) would be opened as the database file and fail.
    this.#root = open({ path: opts.path, maxDbs: 8, noSubdir: false });
    this.#objects = this.#root.openDB<KubeObject, Key>('objects', { encoding: 'json' });
    this.#meta = this.#root.openDB<number, string>('meta', { encoding: 'json' });
    this.#feed = new ChangeFeed(this.currentRevision(), opts.historySize);
  }

  /** feed exposes the change feed (metrics and tests). */
  get feed(): ChangeFeed {
    return this.#feed;
  }

  currentRevision(): number {
    return this.#meta.get(REVISION) ?? 0;
  }

  get(key: ObjectKey): KubeObject | undefined {
    return this.#objects.get(keyTuple(key));
  }

  list(prefix: KeyPrefix): ListResult {
    // One read transaction for the counter and the scan, so the revision matches the items exactly.
    const txn = this.#root.useReadTransaction();
    try {
      const revision = this.#meta.get(REVISION, { transaction: txn }) ?? 0;
      const start: unknown[] = prefix.namespace === undefined ? [prefix.resource] : [prefix.resource, prefix.namespace];
      const items: KubeObject[] = [];
      for (const { value } of this.#objects.getRange({
        start: start as unknown as Key,
        end: [...start, MAXIMUM_KEY] as unknown as Key,
        transaction: txn,
      })) {
        items.push(value);
      }
      return { items, revision };
    } finally {
      txn.done();
    }
  }

  async create(key: ObjectKey, obj: KubeObject): Promise<KubeObject> {
    return this.#write(key, (current) => {
      if (current !== undefined) throw new StorageError('KeyExists', `key exists: ${keyString(key)}`, key);
      return { type: 'ADDED', object: obj };
    });
  }

  async update(key: ObjectKey, tryUpdate: UpdateFn): Promise<KubeObject> {
    return this.#write(key, (current) => {
      if (current === undefined) throw new StorageError('KeyNotFound', `key not found: ${keyString(key)}`, key);
      const next = tryUpdate(structuredClone(current));
      return next === null ? { type: 'NONE', object: current } : { type: 'MODIFIED', object: next, prev: current };
    });
  }

  async delete(key: ObjectKey, check?: DeleteCheck): Promise<KubeObject> {
    return this.#write(key, (current) => {
      if (current === undefined) throw new StorageError('KeyNotFound', `key not found: ${keyString(key)}`, key);
      check?.(structuredClone(current));
      return { type: 'DELETED', object: current, prev: current };
    });
  }

  watch(prefix: KeyPrefix, fromRevision: number, onEvent: (e: ChangeEvent) => void): WatchHandle {
    return this.#feed.subscribe(prefix, fromRevision, onEvent);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#feed.closeAll();
    await this.#root.flushed;
    await this.#root.close();
  }

  // #write runs decide() inside a write transaction on the current object, applies its decision with a new
  // revision, waits for the flush and publishes the change event.
  async #write(
    key: ObjectKey,
    decide: (current: KubeObject | undefined) =>
      | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject; prev?: KubeObject }
      | { type: 'NONE'; object: KubeObject },
  ): Promise<KubeObject> {
    if (this.#closed) throw new Error('storage is closed');
    const k = keyTuple(key);
    let event: ChangeEvent | undefined;
    let unchanged: KubeObject | undefined;
    let revision = 0;
    try {
      await this.#root.transaction(() => {
        const d = decide(this.#objects.get(k));
        if (d.type === 'NONE') {
          unchanged = d.object;
          return;
        }
        revision = (this.#meta.get(REVISION) ?? 0) + 1;
        const object = withRevision(d.object, revision);
        if (d.type === 'DELETED') this.#objects.remove(k);
        else this.#objects.put(k, object);
        this.#meta.put(REVISION, revision);
        event = d.type === 'ADDED' ? { type: d.type, key, revision, object } : { type: d.type, key, revision, object, prevObject: d.prev as KubeObject };
      });
      await this.#root.flushed;
    } catch (e) {
      if (revision > 0) this.#feed.resync(this.currentRevision());
      throw e;
    }
    if (unchanged) return unchanged;
    if (!event) throw new Error('lmdb transaction finished without a decision');
    this.#feed.publish(event);
    return structuredClone(event.object);
  }
}

/** withRevision returns a copy of obj with metadata.resourceVersion set to the revision. */
export function withRevision(obj: KubeObject, revision: number): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } };
}
