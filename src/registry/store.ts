/**
 * @module registry/store
 * ResourceStore: the generic registry for one kind (the role of k8s.io/apiserver's generic registry Store).
 * Every write goes through one documented pipeline:
 *
 *   decode (the type, metadata as a typed metav1.ObjectMeta, namespace, name) → unknown fields per fieldValidation,
 *   prune →
 *   system metadata (uid, creationTimestamp, generation, generateName) → status/spec split →
 *   schema defaults + schema validation + ObjectMeta validation + kind validation (422 with causes) →
 *   storage write with resourceVersion precondition (409) — skipped entirely for dryRun=All.
 *
 * Handlers stay thin: they parse the request and call one method here.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  alreadyExists, badRequest, conflict, expired, invalid, notFound, OBJECT_MODIFIED, StatusError, successStatus, type GroupResource,
} from '../apis/meta/errors.js';
import { invalid as invalidField, path, required, type FieldError } from '../apis/meta/field-path.js';
import type { FieldSelector } from '../apis/meta/fields.js';
import type { LabelSelector } from '../apis/meta/labels.js';
import { cloneJson, cloneJsonSharing } from '../apis/meta/json-clone.js';
import type { KubeObject, ListMeta, ObjectMeta, Status } from '../apis/meta/types.js';
import {
  DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN_MAX_LENGTH, finalizerWarnings, FINALIZER_DELETE_DEPENDENTS,
  FINALIZER_ORPHAN_DEPENDENTS, generateName, validateObjectMetaCreate, validateObjectMetaUpdate,
} from '../apis/meta/validation.js';
import {
  decodeObjectMeta, decodeScaleBody, GoDecodeError, interpretTypeMeta, objectMetaDecodes, repairObjectMeta, type DecodedScale,
} from '../apis/meta/decode.js';
import { compileSchemaAdmission, type SchemaAdmission } from '../admission/schema.js';
import { isStorageError } from '../storage/errors.js';
import type { KeyPrefix, ListRequest, ListResult, ObjectKey, Storage, WatchHandle, WatchSink } from '../storage/interface.js';
import { invalidOptions, unsafeDeleteCollection, validateDeleteOptions } from '../apis/meta/options-validation.js';
import { decodeFailure, groupOf, invalidPatch, type DecodeMode } from './decode-errors.js';
import { goMarshal } from '../apis/meta/go-json.js';
import { getAt, leafPaths, serverSideApply, setAt, trackUpdate, type ApplyScope, type FieldVersions } from './managed-fields.js';
import { jsonPatch, mergePatch, type PatchType } from './patch.js';
import type { FieldValidation } from '../apis/meta/types.js';
import { rfc3339 } from '../apis/meta/go-time.js';
import type { ResourceDefinition } from './resource.js';
import { duplicatesOf } from './duplicate-fields.js';

export type { FieldValidation };

/** WriteOptions are the query options every write takes. */
export interface WriteOptions {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** The field manager recorded in managedFields (the `fieldManager` parameter, else derived from the User-Agent). */
  manager: string;
}

/** ApplyOptions adds `force` for server-side apply. */
export interface ApplyOptions extends WriteOptions {
  force: boolean;
}

// How a write records field ownership: tracked for a manager (on /scale, labelled so), already computed by apply,
// or not at all (system).
type Ownership = { kind: 'update'; manager: string; subresource?: 'scale' } | { kind: 'apply' } | { kind: 'system' };

/** WriteResult is the stored (or dry-run) object and the warnings to send as `Warning` headers. */
export interface WriteResult {
  object: KubeObject;
  warnings: string[];
}

// asExpired turns the storage's Expired (history compacted past the request) into 410 Expired; other errors pass.
function asExpired(e: unknown): unknown {
  return isStorageError(e, 'Expired') ? expired(e.message) : e;
}

/** Selectors restrict a list, watch or deletecollection. */
export interface Selectors {
  label?: LabelSelector | undefined;
  field?: FieldSelector | undefined;
}

/** DeleteOptions mirrors metav1.DeleteOptions (the fields we honour). */
export interface DeleteOptions {
  /** Foreground, Background or Orphan; anything else (the empty policy too) is refused by validation. */
  propagationPolicy?: string;
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: string[];
  /** Deletes an object storage cannot read; ours always can, so it is refused as kube refuses a readable one. */
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

/**
 * CollectionLister reads one page of the collection a deletecollection addresses: the request's first page for no
 * token, else the page after `continueToken` (endpoints/list-page.ts gives list semantics).
 */
export type CollectionLister = (continueToken: string | undefined) => Promise<{ items: KubeObject[]; meta: ListMeta }>;

/** DeleteResult is a delete's response: the object while finalizers hold it, else a Success Status. */
export type DeleteResult = { code: 200 | 202; body: KubeObject | Status };

/** Subresource is the part of the object a write addresses. */
export type Subresource = 'main' | 'status';

const ORPHAN = FINALIZER_ORPHAN_DEPENDENTS;
const FOREGROUND = FINALIZER_DELETE_DEPENDENTS;
const GENERATE_NAME_ATTEMPTS = 8;
// How many stored objects repairStoredMetadata reads before yielding to requests.
const REPAIR_PAGE_SIZE = 500;

// Thrown inside an update to say "this write removes the last finalizer of a deleted object: delete it instead".
class DeleteInstead extends Error {}

/** CreateAdmission vets a create before defaults and validation (namespace lifecycle when delegated). */
export interface CreateAdmission {
  admitCreate(namespace: string, gr: GroupResource, name: string): Promise<void>;
}

/** StoreOptions are the optional collaborators of a ResourceStore. */
export interface StoreOptions {
  admission?: CreateAdmission | undefined;
  /** No cluster is configured: the kind's standaloneStatus, if it has one, is written at create and on spec changes. */
  standalone?: boolean | undefined;
  /** How managedFields paths translate between the kind's versions (a kind served in several versions). */
  fieldVersions?: FieldVersions | undefined;
}

/** ResourceStore implements every verb of one kind on top of a Storage. */
export class ResourceStore {
  readonly def: ResourceDefinition;
  readonly gr: GroupResource;
  readonly #storage: Storage;
  readonly #schema: SchemaAdmission;
  readonly #resourceKey: string;
  readonly #admission: CreateAdmission | undefined;
  readonly #systemStatus: ((obj: KubeObject) => unknown) | undefined;
  readonly #fields: FieldVersions | undefined;

  constructor(def: ResourceDefinition, storage: Storage, opts: StoreOptions = {}) {
    this.def = def;
    this.#admission = opts.admission;
    this.#fields = opts.fieldVersions;
    this.#systemStatus = def.subresources.status && opts.standalone && def.standaloneStatus ? (o) => def.standaloneStatus?.(o) : undefined;
    this.gr = { group: def.group, resource: def.plural };
    this.#storage = storage;
    this.#schema = compileSchemaAdmission(def.schema);
    this.#resourceKey = `${def.group}/${def.plural}`;
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
    return { resource: this.#resourceKey, namespace: this.def.namespaced ? namespace ?? '' : '', name };
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

  /** get returns the object or throws 404. */
  get(namespace: string | undefined, name: string): KubeObject {
    const obj = this.#storage.get(this.#existingKey(namespace, name));
    if (!obj) throw notFound(this.gr, name);
    return obj;
  }

  /**
   * list returns matching objects (one namespace, or all when namespace is undefined) at the snapshot revision,
   * optionally one page of them (`page.after`, `page.limit`) or an older snapshot (`page.revision`).
   * A snapshot older than the retained history is 410 Expired.
   */
  list(namespace: string | undefined, sel: Selectors, page: Omit<ListRequest, 'filter'> = {}): ListResult {
    const filtered = (sel.label && !sel.label.empty) || (sel.field && !sel.field.empty);
    // A namespace no object can be in holds nothing.
    if (namespace !== undefined && !this.#canExist(namespace, '')) return { items: [], revision: this.#storage.currentRevision(), more: false };
    try {
      return this.#storage.list(this.#prefix(namespace), { ...page, ...(filtered ? { filter: (o: KubeObject) => this.matches(o, sel) } : {}) });
    } catch (e) {
      throw asExpired(e);
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
   * of 100k objects takes about a second); `stopped` ends it early. `onRepair` hears of each repair.
   */
  async repairStoredMetadata(onRepair: (r: { namespace: string; name: string; dropped: string[] }) => void, stopped: () => boolean = () => false): Promise<{ checked: number; repaired: number }> {
    let checked = 0;
    let repaired = 0;
    let after: { namespace: string; name: string } | undefined;
    while (!stopped()) {
      const page = this.#storage.list(this.#prefix(undefined), { limit: REPAIR_PAGE_SIZE, ...(after ? { after } : {}) });
      for (const item of page.items) {
        checked++;
        if (objectMetaDecodes(item.metadata)) continue;
        const namespace = this.def.namespaced && typeof item.metadata?.namespace === 'string' ? item.metadata.namespace : '';
        const name = typeof item.metadata?.name === 'string' ? item.metadata.name : '';
        let dropped: string[] = [];
        await this.#storage.update(this.key(namespace, name), (cur) => {
          if (objectMetaDecodes(cur.metadata)) return null;
          const r = repairObjectMeta(cur.metadata);
          dropped = r.dropped;
          return { ...cur, metadata: { ...r.meta, name, ...(this.def.namespaced ? { namespace } : {}) } };
        });
        repaired++;
        onRepair({ namespace, name, dropped });
      }
      if (!page.more || !page.last) break;
      after = { namespace: page.last.namespace, name: page.last.name };
      await new Promise((r) => setImmediate(r));
    }
    return { checked, repaired };
  }

  /** watch subscribes to changes after `fromRevision` in one namespace or all. */
  watch(namespace: string | undefined, fromRevision: number, sink: WatchSink): WatchHandle {
    // Storage speaks StorageError; watchers get the 410 Status their clients expect, at start or mid-replay.
    try {
      const ready = sink.ready?.bind(sink);
      return this.#storage.watch(this.#prefix(namespace), fromRevision, {
        onEvent: (e) => sink.onEvent(e),
        onError: (err) => sink.onError(asExpired(err) as Error),
        ...(ready ? { ready } : {}),
      });
    } catch (e) {
      throw asExpired(e);
    }
  }

  /** create runs the create pipeline (201 on success). */
  async create(namespace: string | undefined, body: unknown, opts: WriteOptions): Promise<WriteResult> {
    const { obj, warnings } = this.#decode(body, namespace, undefined, opts.fieldValidation, 'create');
    return this.#create(namespace, obj, opts, warnings, { kind: 'update', manager: opts.manager });
  }

  // #create runs the create pipeline on a decoded object.
  async #create(namespace: string | undefined, obj: KubeObject, opts: WriteOptions, warnings: string[], own: Ownership): Promise<WriteResult> {
    const meta = obj.metadata;
    if (namespace !== undefined && this.#admission) await this.#admission.admitCreate(namespace, this.gr, meta.name ?? '');
    // System fields: whatever the client sent is replaced, as rest.FillObjectMetaSystemFields does.
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(new Date());
    meta.generation = 1;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (own.kind !== 'apply') delete meta.managedFields;
    delete meta.selfLink;
    if (this.def.subresources.status) delete obj['status'];
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = generateName(meta.generateName ?? '');
    this.#validate(obj, undefined);
    warnings.push(...finalizerWarnings(meta.finalizers, undefined));
    if (this.#systemStatus) obj['status'] = this.#systemStatus(obj);
    if (own.kind === 'update') meta.managedFields = trackUpdate(undefined, obj, own.manager, 'main', this.apiVersion, meta.creationTimestamp);
    if (opts.dryRun) return { object: obj, warnings };
    for (let attempt = 0; ; attempt++) {
      try {
        return { object: await this.#storage.create(this.key(namespace, meta.name ?? ''), obj), warnings };
      } catch (e) {
        if (!isStorageError(e, 'KeyExists')) throw e;
        if (!generated || attempt >= GENERATE_NAME_ATTEMPTS) throw alreadyExists(this.gr, meta.name ?? '');
        meta.name = generateName(meta.generateName ?? '');
      }
    }
  }

  /** update replaces the object (PUT) or its status (PUT /status). */
  async update(namespace: string | undefined, name: string, body: unknown, sub: Subresource, opts: WriteOptions): Promise<WriteResult> {
    const { obj, warnings } = this.#decode(body, namespace, name, opts.fieldValidation, 'update');
    return this.#guaranteedUpdate(namespace, name, opts, warnings, (cur) => {
      // registry/store.go Update: the body's uid is a storage precondition, then a resourceVersion is required.
      this.#checkUidPrecondition(cur, obj.metadata.uid, namespace, name);
      this.#requireResourceVersion(obj, name);
      return this.#prepareUpdate(cur, cloneJson(obj), sub, { kind: 'update', manager: opts.manager });
    });
  }

  /**
   * apply is server-side apply (PATCH application/apply-patch+yaml) on the object or its status: on the object it
   * creates when absent, else merges the applied configuration under field ownership rules; 409 on conflicts unless
   * forced. On /status only the applied status counts (the CRD status strategy resets metadata and spec), the entry
   * is recorded under subresource "status", and a missing object is 404, as kube's status store never creates.
   * Returns created=true on create (201).
   */
  async apply(namespace: string | undefined, name: string, body: unknown, opts: ApplyOptions, sub: Subresource = 'main'): Promise<WriteResult & { created: boolean }> {
    if (sub === 'status') this.get(namespace, name);
    checkApplyBody(body, this.apiVersion, this.def.kind);
    const { obj, warnings } = this.#decode(body, namespace, name, opts.fieldValidation, 'apply');
    if (sub === 'main' && this.def.subresources.status) delete obj['status'];
    const scope: ApplyScope = sub === 'status' ? { part: 'status', subresource: 'status' } : { part: 'main' };
    for (let attempt = 0; ; attempt++) {
      const cur = this.#canExist(namespace, name) ? this.#storage.get(this.key(namespace, name)) : undefined;
      if (!cur) {
        if (sub === 'status') throw notFound(this.gr, name);
        const created = serverSideApply(undefined, obj, opts.manager, opts.force, this.apiVersion, rfc3339(new Date()));
        try {
          return { ...(await this.#create(namespace, created, opts, warnings, { kind: 'apply' })), created: true };
        } catch (e) {
          // Someone created it between our read and our write: apply again, as an update this time.
          if (e instanceof StatusError && e.reason === 'AlreadyExists' && attempt < 3) continue;
          throw e;
        }
      }
      const res = await this.#guaranteedUpdate(namespace, name, opts, warnings, (c) => {
        const rv = obj.metadata.resourceVersion;
        if (rv && rv !== c.metadata.resourceVersion) throw conflict(this.gr, name, OBJECT_MODIFIED);
        const merged = serverSideApply(c, obj, opts.manager, opts.force, this.apiVersion, rfc3339(new Date()), scope, this.#fields);
        return this.#prepareUpdate(c, merged, sub, { kind: 'apply' });
      });
      return { ...res, created: false };
    }
  }

  /** patch applies a merge or JSON patch to the current object (or its status) and updates it. */
  async patch(namespace: string | undefined, name: string, type: PatchType, patch: unknown, sub: Subresource, opts: WriteOptions): Promise<WriteResult> {
    const warnings: string[] = [];
    return this.#guaranteedUpdate(namespace, name, opts, warnings, (cur) => {
      const patchWarnings: string[] = [];
      const patched = this.#applyPatch(cur, type, patch, name, opts.fieldValidation, patchWarnings);
      if (type === 'application/merge-patch+json') this.#mergePatchDuplicates(patch, patched, opts.fieldValidation, patchWarnings);
      const { obj, warnings: w } = this.#decode(patched, namespace, name, opts.fieldValidation, 'patch');
      warnings.splice(0, warnings.length, ...patchWarnings, ...w);
      this.#requireResourceVersion(obj, name);
      return this.#prepareUpdate(cur, obj, sub, { kind: 'update', manager: opts.manager });
    });
  }

  /** getScale returns the autoscaling/v1 Scale view of the object. */
  getScale(namespace: string | undefined, name: string): KubeObject {
    return this.#toScale(this.get(namespace, name));
  }

  /**
   * applyScale is server-side apply on /scale: the body is an autoscaling/v1 Scale whose spec.replicas is applied
   * to the object's replicas field, owned by the manager under subresource "scale"; conflicts read in the Scale's
   * terms (`using autoscaling/v1`, `.spec.replicas`), as kube's ScaleHandler maps them. Never creates (404).
   */
  async applyScale(namespace: string | undefined, name: string, body: unknown, opts: ApplyOptions): Promise<KubeObject> {
    this.get(namespace, name);
    checkApplyBody(body, 'autoscaling/v1', 'Scale');
    const decoded = this.#decodeScale(body, name, 'apply', opts.fieldValidation).scale;
    const scale = { replicas: (body as { spec?: { replicas?: unknown } }).spec?.replicas, resourceVersion: decoded.metadata.resourceVersion };
    const scope: ApplyScope = { part: 'main', subresource: 'scale', view: { apiVersion: 'autoscaling/v1', field: () => '.spec.replicas' } };
    const res = await this.#guaranteedUpdate(namespace, name, opts, [], (cur) => {
      if (scale.resourceVersion && scale.resourceVersion !== cur.metadata.resourceVersion) throw conflict(this.gr, name, OBJECT_MODIFIED);
      const replicas = this.#checkReplicas(scale.replicas, name);
      // The applied configuration in the object's own terms: only its replicas field.
      const applied: KubeObject = { metadata: {} };
      setAt(applied, this.#replicasPath(cur), replicas);
      const merged = serverSideApply(cur, applied, opts.manager, opts.force, this.apiVersion, rfc3339(new Date()), scope, this.#fields);
      return this.#prepareUpdate(cur, merged, 'main', { kind: 'apply' });
    });
    return this.#toScale(res.object);
  }

  /**
   * updateScale sets spec.replicas from a Scale (PUT /scale). The body is a typed autoscaling/v1 Scale: a missing
   * spec.replicas is 0 (what a Go client sends to scale to zero, the field being omitempty), and a uid in it is a
   * precondition, as for any update.
   */
  async updateScale(namespace: string | undefined, name: string, body: unknown, opts: WriteOptions, raw?: Uint8Array): Promise<WriteResult> {
    const { scale, warnings } = this.#decodeScale(body, name, 'update', opts.fieldValidation, raw);
    const res = await this.#guaranteedUpdate(namespace, name, opts, [], (cur) => {
      this.#checkUidPrecondition(cur, scale.metadata.uid, namespace, name);
      return this.#applyScale(cur, { replicas: scale.spec.replicas, resourceVersion: scale.metadata.resourceVersion }, opts.manager);
    });
    return { object: this.#toScale(res.object), warnings };
  }

  /** patchScale patches the Scale view and applies its spec.replicas (PATCH /scale, used by kubectl scale). */
  async patchScale(namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: WriteOptions): Promise<WriteResult> {
    let warnings: string[] = [];
    const res = await this.#guaranteedUpdate(namespace, name, opts, [], (cur) => {
      const patched = this.#applyPatch(this.#toScale(cur), type, patch, name, opts.fieldValidation);
      const decoded = this.#decodeScale(patched, name, 'patch', opts.fieldValidation);
      warnings = decoded.warnings;
      return this.#applyScale(cur, { replicas: decoded.scale.spec.replicas, resourceVersion: decoded.scale.metadata.resourceVersion }, opts.manager);
    });
    return { object: this.#toScale(res.object), warnings };
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
    const cur = this.#storage.get(key);
    if (!cur) throw notFound(this.gr, name);
    if (options.ignoreStoreReadErrorWithClusterBreakingPotential) {
      // The unsafe deleter only removes what storage cannot decode; a readable object is refused
      // (registry/corrupt_obj_deleter.go, etcd3 getState: an InvalidObj StorageError, 409 through InterpretDeleteError).
      throw conflict(this.gr, name, `StorageError: invalid object, Code: 4, Key: ${this.#storageKeyText(namespace, name)}, ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage`);
    }
    this.#checkPreconditionsBeforeDelete(cur, options, name);
    const marked = this.#markDeleting(cur, options);
    const kept = options.orphanDependents === false ? 202 : 200;
    if (marked) {
      if (dryRun) return { code: kept, body: marked };
      const res = await this.#guaranteedUpdate(namespace, name, { dryRun: false, fieldValidation: 'Ignore', manager: '' }, [], (c) => {
        this.#checkPreconditions(c, options, namespace, name);
        const m = this.#markDeleting(c, options);
        return m === undefined || m === c ? null : m;
      });
      return { code: kept, body: res.object };
    }
    if (dryRun) return { code: 200, body: successStatus(this.gr, name, cur.metadata.uid) };
    try {
      const gone = await this.#storage.delete(key, (c) => {
        this.#checkPreconditions(c, options, namespace, name);
        // The object gained finalizers since we looked: refuse, the caller retries and marks it instead.
        if (this.#markDeleting(c, options)) throw conflict(this.gr, name, OBJECT_MODIFIED);
      });
      return { code: 200, body: successStatus(this.gr, name, gone.metadata.uid) };
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound')) throw notFound(this.gr, name);
      throw e;
    }
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
    for (let token: string | undefined; ;) {
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

  /**
   * #decode is the custom resource codec (apiextensions-apiserver customresource_handler.go: the JSON serializer's
   * type sniffing, schemaCoercingDecoder, unstructuredSchemaCoercer.apply) and then the handlers' checks (create.go,
   * update.go, patch.go checkName). In order:
   * - the type: apiVersion and kind must be strings, kind must be there;
   * - metadata decoded as metav1.ObjectMeta (objectmeta.GetObjectMetaWithOptions) and replaced by its stored form, so
   *   nothing a Go client could not decode goes on (`"labels": true` is 400 `Website in version "v1alpha1" cannot
   *   be handled as a Website: json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type
   *   map[string]string`);
   * - unknown fields (metadata's first, then the rest in sorted order) refused, warned about or dropped per
   *   fieldValidation;
   * - the API version (400), the kind (422, ValidateTypeMeta), the namespace (400) and, for an update or a patch, the
   *   name, which must be in the object (checkName: 400 `... was undeterminable: name must be provided`).
   * A patch's result fails as patch.go reports it: 422 ` "" is invalid: patch: Invalid value: "<the object>": ...`.
   */
  #decode(body: unknown, namespace: string | undefined, name: string | undefined, fieldValidation: FieldValidation, mode: DecodeMode): { obj: KubeObject; warnings: string[] } {
    const failure = (message: string, unrecognized: boolean, handledAs?: { kind: string; apiVersion: string }) =>
      decodeFailure(body, mode, this.def.kind, message, unrecognized, handledAs);
    if (body === undefined) throw failure("couldn't get version/kind; json parse error: unexpected end of JSON input", true);
    let tm: { apiVersion: string; kind: string };
    try {
      tm = interpretTypeMeta(body);
    } catch (e) {
      if (e instanceof GoDecodeError) throw failure(e.message, true);
      throw e;
    }
    if (tm.kind === '') throw failure(`Object 'Kind' is missing in '${mode === 'patch' ? goMarshal(body) : JSON.stringify(body)}'`, true);
    // The metadata is not copied: its decoded form replaces it below.
    const obj = cloneJsonSharing(body, 'metadata') as KubeObject;
    const unknown: string[] = [];
    if (Object.hasOwn(obj, 'metadata')) {
      try {
        const decoded = decodeObjectMeta(obj.metadata);
        obj.metadata = decoded.meta;
        unknown.push(...decoded.unknownFields);
      } catch (e) {
        if (e instanceof GoDecodeError) throw failure(e.message, false, tm);
        throw e;
      }
    } else {
      obj.metadata = {};
    }
    const ours = groupOf(tm.apiVersion) === this.def.group && tm.kind === this.def.kind;
    // Pruning and unknown fields apply to our own kind only (unstructuredSchemaCoercer.apply).
    if (ours) unknown.push(...this.#schema.pruneUnknown(obj as unknown as Record<string, unknown>));
    const warnings: string[] = [];
    // The decoder's duplicate members come first, then the pruned unknown fields (strict decoding error order).
    const strict = [...duplicatesOf(body).map((f) => `duplicate field ${JSON.stringify(f)}`), ...unknown.map((f) => `unknown field ${JSON.stringify(f)}`)];
    if (strict.length > 0 && fieldValidation === 'Strict') throw failure(`strict decoding error: ${strict.join(', ')}`, false, tm);
    if (fieldValidation === 'Warn') warnings.push(...strict);
    this.#checkType(tm, obj.metadata.name ?? '', mode);
    obj.apiVersion = this.apiVersion;
    obj.kind = this.def.kind;
    const meta = obj.metadata;
    if (this.def.namespaced) {
      if (!meta.namespace) meta.namespace = namespace ?? '';
      else if (meta.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
    } else delete meta.namespace;
    if (name !== undefined) {
      if (!meta.name) {
        // An apply takes the name from the URL; an update or a patch result must carry it (handlers checkName).
        if (mode === 'apply') meta.name = name;
        else throw badRequest(`the name of the object (${name} based on URL) was undeterminable: name must be provided`);
      } else if (meta.name !== name) throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    return { obj, warnings };
  }

  // #checkType is the handlers' API version check (400; a patch has none) and ValidateTypeMeta (422, named after the
  // object's own kind and group, as customresource validator.go reports it).
  #checkType(tm: { apiVersion: string; kind: string }, name: string, mode: DecodeMode): void {
    if (mode !== 'patch' && tm.apiVersion !== this.apiVersion) {
      throw badRequest(`the API version in the data (${tm.apiVersion}) does not match the expected API version (${this.apiVersion})`);
    }
    const errs: FieldError[] = [];
    if (tm.kind !== this.def.kind) errs.push(invalidField('kind', tm.kind, `must be ${this.def.kind}`));
    if (tm.apiVersion !== this.apiVersion) errs.push(invalidField('apiVersion', tm.apiVersion, `must be ${this.apiVersion}`));
    if (errs.length) throw invalid(tm.kind, groupOf(tm.apiVersion), name, errs);
  }

  // #storageKeyText is the etcd key kube-apiserver names in storage errors.
  #storageKeyText(namespace: string | undefined, name: string): string {
    return `/registry/${this.#resourceKey}/${this.def.namespaced && namespace ? `${namespace}/` : ''}${name}`;
  }

  // #checkUidPrecondition is the storage precondition an update with a uid carries (rest.defaultUpdatedObjectInfo
  // Preconditions): a different uid is 409 before anything else is looked at.
  #checkUidPrecondition(cur: KubeObject, uid: string | undefined, namespace: string | undefined, name: string): void {
    if (!uid || uid === cur.metadata.uid) return;
    throw conflict(this.gr, name, `StorageError: invalid object, Code: 4, Key: ${this.#storageKeyText(namespace, name)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: ${cur.metadata.uid ?? ''}`);
  }

  // #requireResourceVersion is the store's refusal of an unconditional update (a custom resource never allows one):
  // 422 named after the resource, as registry/store.go Update words it.
  #requireResourceVersion(obj: KubeObject, name: string): void {
    if (obj.metadata.resourceVersion) return;
    throw invalid(this.gr.resource, this.gr.group, name, [invalidField(path('metadata', 'resourceVersion'), 0, 'must be specified for an update')]);
  }

  // #validate defaults and validates a complete object; every problem is one cause of a single 422.
  #validate(obj: KubeObject, old: KubeObject | undefined, schemaErrs?: FieldError[]): void {
    const errs: FieldError[] = [];
    const opts = { namespaced: this.def.namespaced };
    errs.push(...(old ? validateObjectMetaUpdate(obj.metadata, old.metadata, opts) : validateObjectMetaCreate(obj.metadata, opts)));
    errs.push(...(schemaErrs ?? this.#schema.defaultAndValidate(obj as unknown as Record<string, unknown>)));
    if (errs.length === 0) errs.push(...(this.def.validate?.(obj, old) ?? []));
    if (errs.length > 0) throw invalid(this.def.kind, this.def.group, obj.metadata.name || obj.metadata.generateName || '', errs);
  }

  // #prepareUpdate builds the object to store from the current one and the client's version (PrepareForUpdate).
  #prepareUpdate(cur: KubeObject, incoming: KubeObject, sub: Subresource, own: Ownership): KubeObject | null {
    const name = cur.metadata.name ?? '';
    if (incoming.metadata.resourceVersion && incoming.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(this.gr, name, OBJECT_MODIFIED);
    }
    let next: KubeObject;
    if (sub === 'status') {
      // The status endpoint takes only status; metadata and spec stay as stored (but for what apply recorded).
      next = cloneJson(cur);
      if (incoming['status'] === undefined) delete next['status'];
      else next['status'] = incoming['status'];
      if (own.kind === 'apply') copyOrDelete(next.metadata, incoming.metadata, 'managedFields');
    } else {
      next = incoming;
      if (this.def.subresources.status) {
        if (cur['status'] === undefined) delete next['status'];
        else next['status'] = cloneJson(cur['status']);
      }
      // rest.BeforeUpdate: the generation and creationTimestamp cannot be changed by a write, a missing uid is the
      // stored one, a deletion already under way keeps its timestamp and grace period. Anything else the client
      // changed among these (a uid, a deletionTimestamp) is left for validation to refuse as immutable.
      const m = next.metadata;
      const c = cur.metadata;
      if (!m.uid) m.uid = c.uid;
      m.creationTimestamp = c.creationTimestamp;
      m.generation = c.generation;
      if (c.deletionTimestamp) m.deletionTimestamp = c.deletionTimestamp;
      if (c.deletionGracePeriodSeconds !== undefined && m.deletionGracePeriodSeconds === undefined) m.deletionGracePeriodSeconds = c.deletionGracePeriodSeconds;
      if (own.kind !== 'apply') copyOrDelete(m, c, 'managedFields');
      delete m.selfLink;
    }
    next.metadata.resourceVersion = cur.metadata.resourceVersion;
    // Defaults first, as the custom resource codec applies them while decoding: a body that leaves a defaulted field
    // out does not change the spec, so it does not bump the generation.
    const schemaErrs = this.#schema.defaultAndValidate(next as unknown as Record<string, unknown>);
    if (sub === 'main' && !isDeepStrictEqual(specOf(next), specOf(cur))) {
      next.metadata.generation = (cur.metadata.generation ?? 0) + 1;
      if (this.#systemStatus) next['status'] = this.#systemStatus(next);
    }
    this.#validate(next, cur, schemaErrs);
    if (own.kind === 'update') {
      next.metadata.managedFields = trackUpdate(cur, next, own.manager, sub, this.apiVersion, rfc3339(new Date()), own.subresource ?? (sub === 'status' ? 'status' : undefined), this.#fields);
    }
    if (next.metadata.deletionTimestamp && !(next.metadata.finalizers?.length)) throw new DeleteInstead();
    return isDeepStrictEqual(next, cur) ? null : next;
  }

  // #guaranteedUpdate runs tryUpdate atomically against the stored object (or only computes it for dryRun).
  async #guaranteedUpdate(namespace: string | undefined, name: string, opts: WriteOptions, decodeWarnings: string[], update: (cur: KubeObject) => KubeObject | null): Promise<WriteResult> {
    const key = this.#existingKey(namespace, name);
    // The strategy's warnings (finalizers added by this write) follow the decoding ones, from the last attempt.
    let warnings = decodeWarnings;
    const tryUpdate = (cur: KubeObject) => {
      const before = cur.metadata.finalizers;
      const next = update(cur);
      warnings = [...decodeWarnings, ...(next ? finalizerWarnings(next.metadata.finalizers, before) : [])];
      return next;
    };
    if (opts.dryRun) {
      const cur = this.#storage.get(key);
      if (!cur) throw notFound(this.gr, name);
      try {
        const object = tryUpdate(cloneJson(cur)) ?? cur;
        return { object, warnings };
      } catch (e) {
        if (e instanceof DeleteInstead) return { object: cur, warnings };
        throw e;
      }
    }
    try {
      const object = await this.#storage.update(key, tryUpdate);
      return { object, warnings };
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound')) throw notFound(this.gr, name);
      if (!(e instanceof DeleteInstead)) throw e;
    }
    // The update removed the last finalizer of an object being deleted: delete it now, unless it changed meanwhile.
    const seen = this.#storage.get(key);
    if (!seen) throw notFound(this.gr, name);
    try {
      const gone = await this.#storage.delete(key, (c) => {
        if (c.metadata.resourceVersion !== seen.metadata.resourceVersion) throw conflict(this.gr, name, OBJECT_MODIFIED);
      });
      return { object: gone, warnings };
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound')) throw notFound(this.gr, name);
      throw e;
    }
  }

  // #applyPatch applies a merge or JSON patch; strict-decoding warnings about a JSON patch itself go to `warnings`.
  #applyPatch(target: KubeObject, type: PatchType, patch: unknown, name: string, fieldValidation: FieldValidation, warnings: string[] = []): unknown {
    if (type === 'application/json-patch+json') return jsonPatch(target, patch, this.def.kind, this.def.group, name, { fieldValidation, warnings });
    if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
      throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
    }
    return mergePatch(target, patch);
  }

  // #mergePatchDuplicates: a merge patch's duplicate members are strict decoding errors of the patch (patch.go
  // applyJSPatch: kjson.UnmarshalStrict), warnings under Warn, under Strict kube's 422 on field `patch`.
  #mergePatchDuplicates(patch: unknown, patched: unknown, fieldValidation: FieldValidation, warnings: string[]): void {
    if (fieldValidation === 'Ignore') return;
    const strict = duplicatesOf(patch).map((f) => `duplicate field ${JSON.stringify(f)}`);
    if (strict.length === 0) return;
    if (fieldValidation === 'Warn') {
      warnings.push(...strict);
      return;
    }
    const detail = `Invalid value: ${JSON.stringify(goMarshal(patched))}: strict decoding error: ${strict.join(', ')}`;
    throw new StatusError({
      code: 422, reason: 'Invalid', message: ` "" is invalid: patch: ${detail}`,
      details: { causes: [{ reason: 'FieldValueInvalid', message: detail, field: 'patch' }] },
    });
  }

  #toScale(obj: KubeObject): KubeObject {
    const scale = this.def.subresources.scale;
    if (!scale) throw notFound(this.gr, obj.metadata.name ?? '');
    const m = obj.metadata;
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: m.name, namespace: m.namespace, uid: m.uid, resourceVersion: m.resourceVersion, creationTimestamp: m.creationTimestamp,
      },
      spec: { replicas: scale.specReplicas(obj) },
      status: { replicas: scale.statusReplicas(obj), selector: scale.selector(obj) },
    };
  }

  /**
   * #decodeScale decodes an autoscaling/v1 Scale as a typed object: its type, then Go's type errors (400 `Scale in
   * version "v1" cannot be handled as a Scale: ...`, or the 422 of a patch), unknown fields per fieldValidation, and
   * the name (checkName). kube-apiserver words the type errors of a custom resource's /scale as `no kind is
   * registered for the type v1.Scale in scheme ...` (its decoder cannot name the type); the decoder's own error is
   * given instead, with the same code and reason.
   */
  #decodeScale(body: unknown, name: string, mode: DecodeMode, fieldValidation: FieldValidation, raw?: Uint8Array): { scale: DecodedScale; warnings: string[] } {
    const fail = (message: string) => (mode === 'patch' ? invalidPatch(goMarshal(body), message) : badRequest(message));
    if (body === undefined) throw fail("couldn't get version/kind; json parse error: unexpected end of JSON input");
    let scale: DecodedScale;
    try {
      const tm = interpretTypeMeta(body);
      if ((tm.kind !== '' && tm.kind !== 'Scale') || (tm.apiVersion !== '' && tm.apiVersion !== 'autoscaling/v1')) {
        throw fail(`no kind ${JSON.stringify(tm.kind || 'Scale')} is registered for version ${JSON.stringify(tm.apiVersion || 'autoscaling/v1')} in scheme "pkg/runtime/scheme.go:111"`);
      }
      scale = decodeScaleBody(body, raw);
    } catch (e) {
      if (!(e instanceof GoDecodeError)) throw e;
      throw fail(mode === 'patch' || e.message.startsWith("couldn't") ? e.message : `Scale in version "v1" cannot be handled as a Scale: ${e.message}`);
    }
    const warnings: string[] = [];
    const unknown = scale.unknownFields.map((f) => `unknown field ${JSON.stringify(f)}`);
    if (unknown.length && fieldValidation === 'Strict') {
      throw fail(mode === 'patch' ? `strict decoding error: ${unknown.join(', ')}` : `Scale in version "v1" cannot be handled as a Scale: strict decoding error: ${unknown.join(', ')}`);
    }
    if (fieldValidation === 'Warn') warnings.push(...unknown);
    const got = scale.metadata.name;
    if (!got && mode !== 'apply') throw badRequest(`the name of the object (${name} based on URL) was undeterminable: name must be provided`);
    if (got && got !== name) throw badRequest(`the name of the object (${got}) does not match the name on the URL (${name})`);
    return { scale, warnings };
  }

  // #applyScale sets the object's replicas from a decoded Scale; the object's own validation judges the number, as
  // a custom resource's scale update does (a negative count is the Website's 422, not the Scale's).
  #applyScale(cur: KubeObject, scale: { replicas: number; resourceVersion: string | undefined }, manager: string): KubeObject | null {
    const name = cur.metadata.name ?? '';
    if (scale.resourceVersion && scale.resourceVersion !== cur.metadata.resourceVersion) throw conflict(this.gr, name, OBJECT_MODIFIED);
    const next = cloneJson(cur);
    this.def.subresources.scale?.setSpecReplicas(next, scale.replicas);
    return this.#prepareUpdate(cur, next, 'main', { kind: 'update', manager, subresource: 'scale' });
  }

  // #checkReplicas validates a Scale's spec.replicas (required, an integer >= 0).
  #checkReplicas(r: unknown, name: string): number {
    if (r === undefined || r === null) throw invalid('Scale', 'autoscaling', name, [required(path('spec', 'replicas'))]);
    if (typeof r !== 'number' || !Number.isInteger(r) || r < 0) {
      throw invalid('Scale', 'autoscaling', name, [invalidField(path('spec', 'replicas'), r, 'must be greater than or equal to 0')]);
    }
    return r;
  }

  // #replicasPath is where the kind keeps spec replicas (a CRD's specReplicasPath), found through its scale mapping.
  #replicasPath(cur: KubeObject): string[] {
    const probe = cloneJson(cur);
    const marker = -0.5; // no object holds this replica count
    this.def.subresources.scale?.setSpecReplicas(probe, marker);
    const found = leafPaths(probe, 'main').find((p) => getAt(probe, p) === marker);
    if (!found) throw new Error(`the scale mapping of ${this.def.kind} sets no field`);
    return found;
  }

  /** validateDeleteOptions is ValidateDeleteOptions, reported as the delete handlers do (422, DeleteOptions ""). */
  validateDeleteOptions(o: DeleteOptions): void {
    const errs = validateDeleteOptions(o);
    if (errs.length) throw invalidOptions('DeleteOptions', errs);
  }

  // #checkPreconditionsBeforeDelete is rest.BeforeDelete's early check: a Conflict named after the kind, worded for
  // people (`the UID in the precondition (x) does not match the UID in record (y). ...`). An empty precondition is
  // still a precondition (Go compares the pointer's value).
  #checkPreconditionsBeforeDelete(cur: KubeObject, o: DeleteOptions, name: string): void {
    const p = o.preconditions;
    const gk = { group: this.def.group, resource: this.def.kind };
    if (p?.uid !== undefined && p.uid !== cur.metadata.uid) {
      throw conflict(gk, name, `the UID in the precondition (${p.uid}) does not match the UID in record (${cur.metadata.uid ?? ''}). The object might have been deleted and then recreated`);
    }
    if (p?.resourceVersion !== undefined && p.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(gk, name, `the ResourceVersion in the precondition (${p.resourceVersion}) does not match the ResourceVersion in record (${cur.metadata.resourceVersion ?? ''}). The object might have been modified`);
    }
  }

  // #checkPreconditions is the storage's check inside the write (storage.Preconditions.Check), for an object changed
  // since the early check: InterpretDeleteError's Conflict around the StorageError text.
  #checkPreconditions(cur: KubeObject, o: DeleteOptions, namespace: string | undefined, name: string): void {
    const p = o.preconditions;
    const fail = (what: string) => conflict(this.gr, name, `StorageError: invalid object, Code: 4, Key: ${this.#storageKeyText(namespace, name)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ${what}`);
    if (p?.uid !== undefined && p.uid !== cur.metadata.uid) throw fail(`UID in precondition: ${p.uid}, UID in object meta: ${cur.metadata.uid ?? ''}`);
    if (p?.resourceVersion !== undefined && p.resourceVersion !== cur.metadata.resourceVersion) {
      throw fail(`ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion ?? ''}`);
    }
  }

  // #markDeleting returns the object marked for deletion when finalizers must run first, or undefined to delete now.
  #markDeleting(cur: KubeObject, o: DeleteOptions): KubeObject | undefined {
    const finalizers = new Set(cur.metadata.finalizers ?? []);
    const policy = o.propagationPolicy ?? (o.orphanDependents === true ? 'Orphan' : o.orphanDependents === false ? 'Background' : undefined);
    if (policy === 'Orphan') { finalizers.add(ORPHAN); finalizers.delete(FOREGROUND); }
    if (policy === 'Foreground') { finalizers.add(FOREGROUND); finalizers.delete(ORPHAN); }
    if (policy === 'Background') { finalizers.delete(ORPHAN); finalizers.delete(FOREGROUND); }
    if (finalizers.size === 0) return undefined;
    const next = cloneJson(cur);
    next.metadata.finalizers = [...finalizers];
    if (!next.metadata.deletionTimestamp) {
      next.metadata.deletionTimestamp = rfc3339(new Date());
      next.metadata.deletionGracePeriodSeconds = 0;
      next.metadata.generation = (cur.metadata.generation ?? 0) + 1;
    }
    return isDeepStrictEqual(next, cur) ? cur : next;
  }
}

function copyOrDelete(to: ObjectMeta, from: ObjectMeta, field: keyof ObjectMeta): void {
  if (from[field] === undefined) delete to[field];
  else to[field] = cloneJson(from[field]);
}

// specOf is everything that counts for metadata.generation: the object minus metadata and status.
function specOf(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}


/**
 * checkApplyBody refuses what kube's field manager refuses before applying: an object of another type
 * (versionCheckManager: `invalid object type: <group>/<version>, Kind=<kind>`) and one carrying managedFields
 * (structuredMergeManager.Apply: `metadata.managedFields must be nil`).
 */
function checkApplyBody(body: unknown, apiVersion: string, kind: string): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body of an apply patch must be a YAML or JSON object');
  const b = body as { apiVersion?: unknown; kind?: unknown; metadata?: { managedFields?: unknown } };
  const gvk = groupVersionKind(b.apiVersion, b.kind);
  if (gvk !== groupVersionKind(apiVersion, kind)) throw badRequest(`invalid object type: ${gvk}`);
  const mf = typeof b.metadata === 'object' && b.metadata !== null ? b.metadata.managedFields : undefined;
  if (mf !== undefined && mf !== null) throw badRequest('metadata.managedFields must be nil');
}

// groupVersionKind prints an unstructured object's GVK as schema.GroupVersionKind.String does; an apiVersion that
// does not parse (more than one '/') gives the empty GVK, kind included.
function groupVersionKind(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const parts = av === '' ? ['', ''] : av.split('/');
  if (parts.length > 2) return '/, Kind=';
  const [group, version] = parts.length === 1 ? ['', parts[0]] : parts;
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}
