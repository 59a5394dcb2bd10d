/**
 * @module registry/store
 * ResourceStore: the generic registry for one kind (the role of k8s.io/apiserver's generic registry Store).
 * Every write goes through one documented pipeline, each step in its own module of registry/:
 *
 *   decode (object-codec.ts: the type, metadata as a typed metav1.ObjectMeta, namespace, name) → unknown fields per
 *   fieldValidation, prune →
 *   strategy (strategy.ts): system metadata (uid, creationTimestamp, generation, generateName) → status/spec split →
 *   schema defaults + schema validation + ObjectMeta validation + kind validation (422 with causes) →
 *   storage write with resourceVersion precondition (409; an update through guaranteed-update.ts) — skipped entirely
 *   for dryRun=All.
 *
 * Beside them: patches (patch.ts), the preconditions of updates and deletes (preconditions.ts), a
 * delete's options and finalizers (delete-options.ts), the types of the store's interface (store-types.ts). The
 * subresources are stores of their own over this one (status-store.ts, scale-store.ts), and the REST map
 * (rest-map.ts) builds them all for the handlers, which parse the request and call one method.
 */
import { alreadyExists, conflict, expired, notFound, OBJECT_MODIFIED, StatusError, successStatus, type GroupResource } from '../apis/meta/errors.js';
import { cloneJson } from '../apis/meta/json-clone.js';
import type { FieldValidation, KubeObject, ListMeta } from '../apis/meta/types.js';
import { DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN_MAX_LENGTH, generateName } from '../apis/meta/validation.js';
import { rfc3339 } from '../apis/meta/go-time.js';
import { invalidOptions, unsafeDeleteCollection } from '../apis/meta/options-validation.js';
import { compileSchemaAdmission } from '../admission/schema.js';
import type { UnreadableObject } from '../storage/corrupt-object.js';
import { isStorageError } from '../storage/errors.js';
import type { KeyPrefix, ListRequest, ListResult, ObjectKey, Storage, WatchHandle, WatchSink } from '../storage/interface.js';
import type { ResourceDefinition } from './resource.js';
import type { ApplyOptions, CollectionLister, CreateAdmission, DeleteResult, Selectors, StoreOptions, WriteOptions, WriteResult } from './store-types.js';
import { checkApplyBody, ObjectCodec } from './object-codec.js';
import { WriteStrategy, type Ownership, type Subresource } from './strategy.js';
import { serverSideApply, type ApplyScope, type FieldVersions, type Managed } from './managed-fields.js';
import { mergePatchDuplicates, patchObject, type PatchType } from './patch.js';
import { checkDeleteOptions, markDeleting, unsafeDeleteRefused, type DeleteOptions } from './delete-options.js';
import { Preconditions } from './preconditions.js';
import { guaranteedUpdate } from './guaranteed-update.js';
import { repairStoredMetadata } from './metadata-repair.js';
import { storageStatus } from './storage-status.js';

export type { DeleteOptions, FieldValidation, Subresource };
export type { ApplyOptions, CollectionLister, CreateAdmission, DeleteResult, Selectors, StoreOptions, WriteOptions, WriteResult };

// asStatus turns the storage's Expired (history compacted past the request) into 410 Expired, and a corrupt
// object or a damaged store into kube's 500 (storage-status.ts); other errors pass.
function asStatus(e: unknown): unknown {
  return isStorageError(e, 'Expired') ? expired(e.message) : (storageStatus(e) ?? e);
}

const GENERATE_NAME_ATTEMPTS = 8;

/** ResourceStore implements every verb of one kind on top of a Storage. */
export class ResourceStore {
  readonly def: ResourceDefinition;
  readonly gr: GroupResource;
  readonly #storage: Storage;
  readonly #resourceKey: string;
  readonly #admission: CreateAdmission | undefined;
  readonly #fields: FieldVersions | undefined;
  readonly #codec: ObjectCodec;
  readonly #strategy: WriteStrategy;
  readonly #preconditions: Preconditions;

  constructor(def: ResourceDefinition, storage: Storage, opts: StoreOptions = {}) {
    this.def = def;
    this.#admission = opts.admission;
    this.#fields = opts.fieldVersions;
    this.gr = { group: def.group, resource: def.plural };
    this.#storage = storage;
    const schema = compileSchemaAdmission(def.schema);
    this.#resourceKey = `${def.group}/${def.plural}`;
    this.#codec = new ObjectCodec(def, schema);
    this.#strategy = new WriteStrategy(def, this.gr, schema, opts.standalone, this.#fields);
    this.#preconditions = new Preconditions(def, this.gr);
  }

  get apiVersion(): string {
    return `${this.def.group}/${this.def.version}`;
  }

  /** currentRevision is the storage's latest revision. */
  currentRevision(): number {
    return this.#storage.currentRevision();
  }

  /** waitForRevision resolves true once the storage has committed `revision`, false after `timeoutMs`. */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    return this.#storage.waitForRevision(revision, timeoutMs);
  }

  /** key builds the storage key of an object. */
  key(namespace: string | undefined, name: string): ObjectKey {
    return { resource: this.#resourceKey, namespace: this.def.namespaced ? (namespace ?? '') : '', name };
  }

  /**
   * #canExist tells whether an object could be stored under this name and namespace: validation never lets a name
   * past 253 characters or a namespace past 63 in, so any longer one is simply not found (as kube-apiserver answers
   * it) without asking storage, whose keys are bounded.
   */
  #canExist(namespace: string | undefined, name: string): boolean {
    return name.length <= DNS1123_SUBDOMAIN_MAX_LENGTH && (!this.def.namespaced || (namespace ?? '').length <= DNS1123_LABEL_MAX_LENGTH);
  }

  // #existingKey is the key of an object that must exist, or 404.
  #existingKey(namespace: string | undefined, name: string): ObjectKey {
    if (!this.#canExist(namespace, name)) throw notFound(this.gr, name);
    return this.key(namespace, name);
  }

  /** get resolves with the object or rejects 404. */
  async get(namespace: string | undefined, name: string): Promise<KubeObject> {
    const obj = await this.#storage.get(this.#existingKey(namespace, name)).catch((e: unknown) => {
      throw asStatus(e);
    });
    if (!obj) throw notFound(this.gr, name);
    return obj;
  }

  /**
   * list resolves with matching objects (one namespace, or all when namespace is undefined) at the snapshot revision,
   * optionally one page of them (`page.after`, `page.limit`) or an older snapshot (`page.revision`).
   * A snapshot older than the retained history is 410 Expired.
   */
  async list(namespace: string | undefined, sel: Selectors, page: Omit<ListRequest, 'filter'> = {}): Promise<ListResult> {
    const filtered = (sel.label && !sel.label.empty) || (sel.field && !sel.field.empty);
    // A namespace no object can be in holds nothing.
    if (namespace !== undefined && !this.#canExist(namespace, '')) return { items: [], revision: this.#storage.currentRevision(), more: false };
    try {
      const prefilter = filtered ? labelPrefilter(sel) : undefined;
      return await this.#storage.list(this.#prefix(namespace), {
        ...page,
        ...(filtered ? { filter: (o: KubeObject) => this.matches(o, sel) } : {}),
        ...(prefilter ? { prefilter } : {}),
      });
    } catch (e) {
      throw asStatus(e);
    }
  }

  /** compactedRevision is the oldest revision a watch or list can start from. */
  compactedRevision(): number {
    return this.#storage.compactedRevision();
  }

  #prefix(namespace: string | undefined): KeyPrefix {
    return { resource: this.#resourceKey, ...(namespace !== undefined ? { namespace } : {}) };
  }

  /** matches evaluates label and field selectors against an object. */
  matches(obj: KubeObject, sel: Selectors): boolean {
    if (sel.label && !sel.label.empty && !sel.label.matches(obj.metadata.labels)) return false;
    if (sel.field && !sel.field.empty) {
      const fields: Record<string, string> = { 'metadata.name': obj.metadata.name ?? '' };
      if (this.def.namespaced) fields['metadata.namespace'] = obj.metadata.namespace ?? '';
      for (const f of this.def.selectableFields ?? []) {
        const v = f.value(obj);
        if (v !== undefined) fields[f.field] = v;
      }
      if (!sel.field.matches(fields)) return false;
    }
    return true;
  }

  /**
   * repairStoredMetadata rewrites every stored object whose metadata a Go client could not decode into
   * metav1.ObjectMeta (objects written before metadata was decoded as a typed ObjectMeta): each malformed field is
   * dropped, as kube-apiserver drops it when it reads such a custom resource (apiextensions-apiserver's storage
   * codec decodes metadata with DropMalformedFields), and name and namespace come from the key. Each repair is an
   * ordinary write (a new resourceVersion, a MODIFIED event), so watchers and caches see the decodable object.
   * The store is read a page at a time, yielding between pages, so it can run while the server serves (a full scan
   * of 100k objects takes about a second); `stopped` ends it early. `onRepair` hears of each repair. An object whose
   * stored data does not decode at all is passed over, and `onUnreadable` hears of it once (the walk goes on).
   */
  async repairStoredMetadata(
    onRepair: (r: { namespace: string; name: string; dropped: string[] }) => void,
    stopped: () => boolean = () => false,
    onUnreadable?: (o: UnreadableObject) => void,
  ): Promise<{ checked: number; repaired: number; unreadable: number }> {
    return repairStoredMetadata(
      this.#storage,
      this.#prefix(undefined),
      (namespace, name) => this.key(namespace, name),
      this.def.namespaced,
      onRepair,
      stopped,
      onUnreadable,
    );
  }

  /**
   * watch subscribes to changes after `fromRevision` in one namespace or all. A revision already compacted is 410
   * Expired, thrown here or (from a backend that learns of it only when it answers) passed to `sink.onError`.
   */
  watch(namespace: string | undefined, fromRevision: number, sink: WatchSink): WatchHandle {
    // Storage speaks StorageError; watchers get the 410 Status their clients expect, whether the storage throws it at
    // start or reports it through onError (a remote engine's Expired at start, or a replay that fell behind).
    try {
      const ready = sink.ready?.bind(sink);
      return this.#storage.watch(this.#prefix(namespace), fromRevision, {
        onEvent: (e) => sink.onEvent(e),
        onError: (err) => sink.onError(asStatus(err) as Error),
        ...(ready ? { ready } : {}),
      });
    } catch (e) {
      throw asStatus(e);
    }
  }

  /** create runs the create pipeline (201 on success). */
  async create(namespace: string | undefined, body: unknown, opts: WriteOptions): Promise<WriteResult> {
    const { obj, warnings } = this.#codec.decode(body, namespace, undefined, opts.fieldValidation, 'create');
    return carryWarnings(warnings, this.#create(namespace, obj, opts, warnings, { kind: 'update', manager: opts.manager }));
  }

  // #create runs the create pipeline on a decoded object.
  async #create(namespace: string | undefined, obj: KubeObject, opts: WriteOptions, warnings: string[], own: Ownership): Promise<WriteResult> {
    const meta = obj.metadata;
    if (namespace !== undefined && this.#admission) await this.#admission.admitCreate(namespace, this.gr, meta.name ?? '');
    const prepared = this.#strategy.prepareCreate(obj, own);
    warnings.push(...prepared.warnings);
    if (opts.dryRun) return { object: obj, warnings };
    for (let attempt = 0; ; attempt++) {
      try {
        return { object: await this.#storage.create(this.key(namespace, meta.name ?? ''), obj), warnings };
      } catch (e) {
        if (!isStorageError(e, 'KeyExists')) throw e;
        if (!prepared.generated || attempt >= GENERATE_NAME_ATTEMPTS) throw alreadyExists(this.gr, meta.name ?? '');
        meta.name = generateName(meta.generateName ?? '');
      }
    }
  }

  /**
   * update replaces the object (PUT), or with `sub` 'status' its status (what StatusStore and a kind's controllers
   * write status through).
   */
  update(namespace: string | undefined, name: string, body: unknown, opts: WriteOptions): Promise<WriteResult>;
  update(namespace: string | undefined, name: string, body: unknown, sub: Subresource, opts: WriteOptions): Promise<WriteResult>;
  async update(
    namespace: string | undefined,
    name: string,
    body: unknown,
    subOrOpts: Subresource | WriteOptions,
    maybeOpts?: WriteOptions,
  ): Promise<WriteResult> {
    const [sub, opts] = partAndOptions(subOrOpts, maybeOpts);
    const { obj, warnings } = this.#codec.decode(body, namespace, name, opts.fieldValidation, 'update');
    return carryWarnings(
      warnings,
      this.#guaranteedUpdate(namespace, name, opts, warnings, (cur, warn) => {
        // registry/store.go Update: the body's uid is a storage precondition, then a resourceVersion is required.
        this.#preconditions.checkUidPrecondition(cur, obj.metadata.uid, namespace, name);
        this.#preconditions.requireResourceVersion(obj, name);
        return this.#strategy.prepareUpdate(cur, cloneJson(obj), sub, { kind: 'update', manager: opts.manager }, warn);
      }),
    );
  }

  /**
   * apply is server-side apply (PATCH application/apply-patch+yaml) on the object or its status: on the object it
   * creates when absent, else merges the applied configuration under field ownership rules; 409 on conflicts unless
   * forced. On /status only the applied status counts (the CRD status strategy resets metadata and spec), the entry
   * is recorded under subresource "status", and a missing object is 404, as kube's status store never creates.
   * Returns created=true on create (201).
   */
  async apply(
    namespace: string | undefined,
    name: string,
    body: unknown,
    opts: ApplyOptions,
    sub: Subresource = 'main',
  ): Promise<WriteResult & { created: boolean }> {
    if (sub === 'status') await this.get(namespace, name);
    checkApplyBody(body, this.apiVersion, this.def.kind);
    const { obj, warnings } = this.#codec.decode(body, namespace, name, opts.fieldValidation, 'apply');
    return carryWarnings(warnings, this.#apply(namespace, name, obj, body, opts, sub, warnings));
  }

  async #apply(
    namespace: string | undefined,
    name: string,
    obj: KubeObject,
    body: unknown,
    opts: ApplyOptions,
    sub: Subresource,
    warnings: string[],
  ): Promise<WriteResult & { created: boolean }> {
    if (sub === 'main' && this.def.subresources.status) delete obj['status'];
    const sent = (body as { metadata?: { namespace?: unknown } } | null)?.metadata?.namespace;
    const namespaceSent = typeof sent === 'string' ? sent : undefined;
    const scope: ApplyScope =
      sub === 'status'
        ? { part: 'status', subresource: 'status', namespace: namespaceSent, sent: body }
        : { part: 'main', namespace: namespaceSent, sent: body };
    for (let attempt = 0; ; attempt++) {
      const cur = this.#canExist(namespace, name) ? await this.#storage.get(this.key(namespace, name)) : undefined;
      if (!cur) {
        if (sub === 'status') throw notFound(this.gr, name);
        const created = serverSideApply(this.#strategy.managed, undefined, obj, opts.manager, opts.force, rfc3339(new Date()), scope);
        try {
          return { ...(await this.#create(namespace, created, opts, warnings, { kind: 'apply' })), created: true };
        } catch (e) {
          // Someone created it between our read and our write: apply again, as an update this time.
          if (e instanceof StatusError && e.reason === 'AlreadyExists' && attempt < 3) continue;
          throw e;
        }
      }
      const res = await this.#guaranteedUpdate(namespace, name, opts, warnings, (c, warn) => {
        const rv = obj.metadata.resourceVersion;
        if (rv && rv !== c.metadata.resourceVersion) throw conflict(this.gr, name, OBJECT_MODIFIED);
        const merged = serverSideApply(this.#strategy.managed, c, obj, opts.manager, opts.force, rfc3339(new Date()), scope);
        return this.#strategy.prepareUpdate(c, merged, sub, { kind: 'apply' }, warn);
      });
      return { ...res, created: false };
    }
  }

  /** patch applies a merge or JSON patch to the current object (or, with `sub` 'status', its status) and updates it. */
  patch(namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: WriteOptions): Promise<WriteResult>;
  patch(namespace: string | undefined, name: string, type: PatchType, patch: unknown, sub: Subresource, opts: WriteOptions): Promise<WriteResult>;
  async patch(
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patch: unknown,
    subOrOpts: Subresource | WriteOptions,
    maybeOpts?: WriteOptions,
  ): Promise<WriteResult> {
    const [sub, opts] = partAndOptions(subOrOpts, maybeOpts);
    const warnings: string[] = [];
    return carryWarnings(
      warnings,
      this.#guaranteedUpdate(namespace, name, opts, warnings, (cur, warn) => {
        const patchWarnings: string[] = [];
        const patched = patchObject(cur, type, patch, this.def.kind, this.def.group, name, opts.fieldValidation, patchWarnings);
        if (type === 'application/merge-patch+json') mergePatchDuplicates(patch, patched, opts.fieldValidation, patchWarnings);
        const { obj, warnings: w } = this.#codec.decode(patched, namespace, name, opts.fieldValidation, 'patch');
        warnings.splice(0, warnings.length, ...patchWarnings, ...w);
        this.#preconditions.requireResourceVersion(obj, name);
        return this.#strategy.prepareUpdate(cur, obj, sub, { kind: 'update', manager: opts.manager }, warn);
      }),
    );
  }

  /**
   * updateFrom is the update a subresource's store makes of the whole object (kube's ScaleREST updates through the
   * main store with an UpdatedObjectInfo): `next` derives the object to store from the current one, with how the
   * write owns its fields (`managed` is what a server-side apply needs), and the result goes through the main
   * resource's update strategy like any update. 404 when the object is missing.
   */
  async updateFrom(
    namespace: string | undefined,
    name: string,
    opts: WriteOptions,
    next: (cur: KubeObject, managed: Managed) => { object: KubeObject; own: Ownership },
  ): Promise<WriteResult> {
    return this.#guaranteedUpdate(namespace, name, opts, [], (cur, warn) => {
      const { object, own } = next(cur, this.#strategy.managed);
      return this.#strategy.prepareUpdate(cur, object, 'main', own, warn);
    });
  }

  /** validateDeleteOptions is ValidateDeleteOptions, reported as the delete handlers do (422, DeleteOptions ""). */
  validateDeleteOptions(o: DeleteOptions): void {
    checkDeleteOptions(o);
  }

  /**
   * delete follows finalizer semantics: with finalizers left it only marks the object deleting. Options are validated
   * before anything is read; preconditions are checked first as rest.BeforeDelete words them, then again inside the
   * write (the storage's wording, for a change in between). A delete that leaves the object in place answers 202 when
   * the client asked `orphanDependents: false` (handlers/delete.go).
   */
  async delete(namespace: string | undefined, name: string, options: DeleteOptions, dryRun: boolean): Promise<DeleteResult> {
    this.validateDeleteOptions(options);
    const key = this.#existingKey(namespace, name);
    if (options.ignoreStoreReadErrorWithClusterBreakingPotential) return this.#deleteUnreadable(key, namespace, name, dryRun);
    const cur = await this.#storage.get(key).catch((e: unknown) => {
      throw asStatus(e);
    });
    if (!cur) throw notFound(this.gr, name);
    this.#preconditions.checkPreconditionsBeforeDelete(cur, options, name);
    const marked = markDeleting(cur, options);
    const kept = options.orphanDependents === false ? 202 : 200;
    if (marked) {
      if (dryRun) return { code: kept, body: marked };
      const res = await this.#guaranteedUpdate(namespace, name, { dryRun: false, fieldValidation: 'Ignore', manager: '' }, [], (c) => {
        this.#preconditions.checkPreconditions(c, options, namespace, name);
        const m = markDeleting(c, options);
        return m === undefined || m === c ? null : m;
      });
      return { code: kept, body: res.object };
    }
    if (dryRun) return { code: 200, body: successStatus(this.gr, name, cur.metadata.uid) };
    try {
      const gone = await this.#storage.delete(key, (c) => {
        this.#preconditions.checkPreconditions(c, options, namespace, name);
        // The object gained finalizers since we looked: refuse, the caller retries and marks it instead.
        if (markDeleting(c, options)) throw conflict(this.gr, name, OBJECT_MODIFIED);
      });
      return { code: 200, body: successStatus(this.gr, name, gone.metadata.uid) };
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound')) throw notFound(this.gr, name);
      throw e;
    }
  }

  /**
   * #deleteUnreadable is the delete with ignoreStoreReadErrorWithClusterBreakingPotential (the caller checked the
   * extra verb), kube's corrupt-object deleter (registry/corrupt_obj_deleter.go, etcd3 Delete expecting a decode
   * error): only an object whose stored data does not decode is removed, without preconditions, finalizers or the
   * object (there is none to return); it answers a Status naming the kind, as handlers/delete.go fills one for a
   * deleter that returns no object. An object that decodes is refused (409, the storage's InvalidObj), a missing one
   * is 404. A dry run only reads.
   */
  async #deleteUnreadable(key: ObjectKey, namespace: string | undefined, name: string, dryRun: boolean): Promise<DeleteResult> {
    const done: DeleteResult = {
      code: 200,
      body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, kind: this.def.kind }, code: 200 },
    };
    const refused = () => unsafeDeleteRefused(this.gr, name, this.#preconditions.storageKeyText(namespace, name));
    if (dryRun || !this.#storage.deleteUnreadable) {
      let cur: KubeObject | undefined;
      try {
        cur = await this.#storage.get(key);
      } catch (e) {
        if (dryRun && isStorageError(e, 'CorruptObject')) return done;
        throw asStatus(e);
      }
      throw cur ? refused() : notFound(this.gr, name);
    }
    try {
      await this.#storage.deleteUnreadable(key);
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound')) throw notFound(this.gr, name);
      if (isStorageError(e, 'InvalidObject')) throw refused();
      throw asStatus(e);
    }
    return done;
  }

  /**
   * deleteCollection is registry/store.go DeleteCollection: it reads the collection page by page through `list`
   * (the request's ListOptions: selectors, resourceVersion, limit, continue) and deletes each item in turn with the
   * request's DeleteOptions, preconditions included; an item already gone is skipped, any other failure stops the
   * deletion and is the answer (what was deleted before it stays deleted). With a limit only the first page is
   * read and the answer is that page, continue token included; otherwise every page is read, each after the
   * previous one's token. The answer lists the items as they were listed. Options are validated before any read.
   */
  async deleteCollection(options: DeleteOptions, dryRun: boolean, limited: boolean, list: CollectionLister): Promise<{ items: KubeObject[]; meta: ListMeta }> {
    this.validateDeleteOptions(options);
    if (options.ignoreStoreReadErrorWithClusterBreakingPotential) throw invalidOptions('DeleteOptions', [unsafeDeleteCollection()]);
    const items: KubeObject[] = [];
    let first: ListMeta | undefined;
    for (let token: string | undefined; ; ) {
      const page = await list(token);
      first ??= page.meta;
      for (const item of page.items) {
        try {
          await this.delete(item.metadata.namespace, item.metadata.name ?? '', options, dryRun);
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 404)) throw e;
        }
      }
      items.push(...page.items);
      if (limited) return { items, meta: page.meta };
      token = page.meta.continue;
      if (!token) return { items, meta: { resourceVersion: first.resourceVersion } };
    }
  }

  // #guaranteedUpdate runs tryUpdate atomically against the stored object (or only computes it for dryRun).
  async #guaranteedUpdate(
    namespace: string | undefined,
    name: string,
    opts: WriteOptions,
    decodeWarnings: string[],
    update: (cur: KubeObject, warn: (message: string) => void) => KubeObject | null,
  ): Promise<WriteResult> {
    return guaranteedUpdate(this.#storage, this.gr, this.#existingKey(namespace, name), name, opts.dryRun, decodeWarnings, update);
  }
}

// partAndOptions reads the arguments of update and patch: the part written ('main' unless named) and the options.
function partAndOptions(subOrOpts: Subresource | WriteOptions, opts: WriteOptions | undefined): [Subresource, WriteOptions] {
  if (typeof subOrOpts !== 'string') return ['main', subOrOpts];
  if (!opts) throw new Error('update and patch of a subresource take options');
  return [subOrOpts, opts];
}

/**
 * carryWarnings gives a failed write the warnings it had gathered: kube records warnings in the request as they
 * arise, so a write refused after decoding (422, 409) still sends the unknown fields it warned about.
 */
async function carryWarnings<T>(warnings: readonly string[], write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (e) {
    if (e instanceof StatusError && warnings.length && e.warnings === undefined) e.warnings = [...warnings];
    throw e;
  }
}

/**
 * labelPrefilter is a test on an object's JSON text that every object the label selector accepts passes: for each
 * `=`/`==`/`in` requirement the text must hold `"key":"value"` for one of its values (labels are written by
 * JSON.stringify, and a label key or value has no character it escapes differently). Undefined when no requirement
 * narrows that way.
 */
export function labelPrefilter(sel: Selectors): ((json: Uint8Array) => boolean) | undefined {
  const groups = (sel.label?.equalities() ?? []).map((r) => r.values.map((v) => Buffer.from(`${JSON.stringify(r.key)}:${JSON.stringify(v)}`)));
  if (groups.length === 0) return undefined;
  return (json) => {
    const text = Buffer.from(json.buffer, json.byteOffset, json.byteLength);
    return groups.every((needles) => needles.some((n) => text.includes(n)));
  };
}
