/**
 * @module registry/store
 * ResourceStore: the generic registry for one kind (the role of k8s.io/apiserver's generic registry Store).
 * Every write goes through one documented pipeline:
 *
 *   decode (kind/apiVersion, namespace, name) → unknown fields per fieldValidation, prune →
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
import type { KubeObject, ObjectMeta, Status } from '../apis/meta/types.js';
import {
  finalizerWarnings, FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS, generateName, validateObjectMetaCreate,
  validateObjectMetaUpdate,
} from '../apis/meta/validation.js';
import { compileSchemaAdmission, type SchemaAdmission } from '../admission/schema.js';
import { isStorageError } from '../storage/errors.js';
import type { KeyPrefix, ListRequest, ListResult, ObjectKey, Storage, WatchHandle, WatchSink } from '../storage/interface.js';
import { invalidOptions, unsafeDeleteCollection, validateDeleteOptions } from '../apis/meta/options-validation.js';
import { getAt, leafPaths, serverSideApply, setAt, trackUpdate, type ApplyScope } from './managed-fields.js';
import { jsonPatch, mergePatch, type PatchType } from './patch.js';
import type { ResourceDefinition } from './resource.js';

/** FieldValidation is the `fieldValidation` query parameter. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

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

/** DeleteResult is a delete's response: the object while finalizers hold it, else a Success Status. */
export type DeleteResult = { code: 200 | 202; body: KubeObject | Status };

/** Subresource is the part of the object a write addresses. */
export type Subresource = 'main' | 'status';

const ORPHAN = FINALIZER_ORPHAN_DEPENDENTS;
const FOREGROUND = FINALIZER_DELETE_DEPENDENTS;
const GENERATE_NAME_ATTEMPTS = 8;

// Thrown inside an update to say "this write removes the last finalizer of a deleted object: delete it instead".
class DeleteInstead extends Error {}

/** CreateAdmission vets a create before defaults and validation (namespace lifecycle when delegated). */
export interface CreateAdmission {
  admitCreate(namespace: string, gr: GroupResource, name: string): Promise<void>;
}

/**
 * SystemStatus is the status the server itself sets when no reconciler will (standalone: Ready=False, NoCluster), at
 * create and when the spec changes, as kube strategies' PrepareForCreate set initial status. Undefined: none.
 */
export type SystemStatus = (obj: KubeObject) => unknown;

/** StoreOptions are the optional collaborators of a ResourceStore. */
export interface StoreOptions {
  admission?: CreateAdmission | undefined;
  systemStatus?: SystemStatus | undefined;
}

/** ResourceStore implements every verb of one kind on top of a Storage. */
export class ResourceStore {
  readonly def: ResourceDefinition;
  readonly gr: GroupResource;
  readonly #storage: Storage;
  readonly #schema: SchemaAdmission;
  readonly #resourceKey: string;
  readonly #admission: CreateAdmission | undefined;
  readonly #systemStatus: SystemStatus | undefined;

  constructor(def: ResourceDefinition, storage: Storage, opts: StoreOptions = {}) {
    this.def = def;
    this.#admission = opts.admission;
    this.#systemStatus = def.subresources.status ? opts.systemStatus : undefined;
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

  /** key builds the storage key of an object. */
  key(namespace: string | undefined, name: string): ObjectKey {
    return { resource: this.#resourceKey, namespace: this.def.namespaced ? namespace ?? '' : '', name };
  }

  /** get returns the object or throws 404. */
  get(namespace: string | undefined, name: string): KubeObject {
    const obj = this.#storage.get(this.key(namespace, name));
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
    const { obj, warnings } = this.#decode(body, namespace, undefined, opts.fieldValidation);
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
    const { obj, warnings } = this.#decode(body, namespace, name, opts.fieldValidation);
    if (!obj.metadata.resourceVersion) {
      throw invalid(this.def.kind, this.def.group, name, [invalidField(path('metadata', 'resourceVersion'), 0, 'must be specified for an update')]);
    }
    return this.#guaranteedUpdate(namespace, name, opts, warnings, (cur) => this.#prepareUpdate(cur, obj, sub, { kind: 'update', manager: opts.manager }));
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
    const { obj, warnings } = this.#decode(body, namespace, name, opts.fieldValidation);
    if (sub === 'main' && this.def.subresources.status) delete obj['status'];
    const scope: ApplyScope = sub === 'status' ? { part: 'status', subresource: 'status' } : { part: 'main' };
    for (let attempt = 0; ; attempt++) {
      const cur = this.#storage.get(this.key(namespace, name));
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
        const merged = serverSideApply(c, obj, opts.manager, opts.force, this.apiVersion, rfc3339(new Date()), scope);
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
      const { obj, warnings: w } = this.#decode(patched, namespace, name, opts.fieldValidation);
      warnings.splice(0, warnings.length, ...patchWarnings, ...w);
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
    const scale = this.#decodeScale(body, name);
    const scope: ApplyScope = { part: 'main', subresource: 'scale', view: { apiVersion: 'autoscaling/v1', field: () => '.spec.replicas' } };
    const res = await this.#guaranteedUpdate(namespace, name, opts, [], (cur) => {
      if (scale.resourceVersion && scale.resourceVersion !== cur.metadata.resourceVersion) throw conflict(this.gr, name, OBJECT_MODIFIED);
      const replicas = this.#checkReplicas(scale.replicas, name);
      // The applied configuration in the object's own terms: only its replicas field.
      const applied: KubeObject = { metadata: {} };
      setAt(applied, this.#replicasPath(cur), replicas);
      const merged = serverSideApply(cur, applied, opts.manager, opts.force, this.apiVersion, rfc3339(new Date()), scope);
      return this.#prepareUpdate(cur, merged, 'main', { kind: 'apply' });
    });
    return this.#toScale(res.object);
  }

  /** updateScale sets spec.replicas from a Scale (PUT /scale). */
  async updateScale(namespace: string | undefined, name: string, body: unknown, opts: WriteOptions): Promise<KubeObject> {
    const scale = this.#decodeScale(body, name);
    const res = await this.#guaranteedUpdate(namespace, name, opts, [], (cur) => this.#applyScale(cur, scale, opts.manager));
    return this.#toScale(res.object);
  }

  /** patchScale patches the Scale view and applies its spec.replicas (PATCH /scale, used by kubectl scale). */
  async patchScale(namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: WriteOptions): Promise<KubeObject> {
    const res = await this.#guaranteedUpdate(namespace, name, opts, [], (cur) => {
      const patched = this.#applyPatch(this.#toScale(cur), type, patch, name, opts.fieldValidation);
      return this.#applyScale(cur, this.#decodeScale(patched, name), opts.manager);
    });
    return this.#toScale(res.object);
  }

  /** delete follows finalizer semantics: with finalizers left it only marks the object deleting. */
  async delete(namespace: string | undefined, name: string, options: DeleteOptions, dryRun: boolean): Promise<DeleteResult> {
    this.#validateDeleteOptions(options);
    const key = this.key(namespace, name);
    const cur = this.#storage.get(key);
    if (!cur) throw notFound(this.gr, name);
    if (options.ignoreStoreReadErrorWithClusterBreakingPotential) {
      // The unsafe deleter only removes what storage cannot decode; a readable object is refused
      // (registry/corrupt_obj_deleter.go, etcd3 getState: an InvalidObj StorageError, 409 through InterpretDeleteError).
      throw conflict(this.gr, name, `StorageError: invalid object, Code: 4, Key: /registry/${this.#resourceKey}/${namespace ? `${namespace}/` : ''}${name}, ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage`);
    }
    this.#checkPreconditions(cur, options, name);
    const marked = this.#markDeleting(cur, options);
    if (marked) {
      if (dryRun) return { code: 200, body: marked };
      const res = await this.#guaranteedUpdate(namespace, name, { dryRun: false, fieldValidation: 'Ignore', manager: '' }, [], (c) => {
        this.#checkPreconditions(c, options, name);
        const m = this.#markDeleting(c, options);
        return m === undefined || m === c ? null : m;
      });
      return { code: 200, body: res.object };
    }
    if (dryRun) return { code: 200, body: successStatus(this.gr, name, cur.metadata.uid) };
    try {
      const gone = await this.#storage.delete(key, (c) => {
        this.#checkPreconditions(c, options, name);
        // The object gained finalizers since we looked: refuse, the caller retries and marks it instead.
        if (this.#markDeleting(c, options)) throw conflict(this.gr, name, OBJECT_MODIFIED);
      });
      return { code: 200, body: successStatus(this.gr, name, gone.metadata.uid) };
    } catch (e) {
      if (isStorageError(e, 'KeyNotFound')) throw notFound(this.gr, name);
      throw e;
    }
  }

  /** deleteCollection deletes every matching object and returns the list of what was deleted or marked. */
  async deleteCollection(namespace: string | undefined, sel: Selectors, options: DeleteOptions, dryRun: boolean): Promise<KubeObject[]> {
    this.#validateDeleteOptions(options);
    if (options.ignoreStoreReadErrorWithClusterBreakingPotential) throw invalidOptions('DeleteOptions', [unsafeDeleteCollection()]);
    const { items } = this.list(namespace, sel);
    const out: KubeObject[] = [];
    for (const item of items) {
      try {
        const r = await this.delete(item.metadata.namespace, item.metadata.name ?? '', { ...options, preconditions: {} }, dryRun);
        out.push('kind' in r.body && r.body.kind === 'Status' ? item : (r.body as KubeObject));
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
    }
    return out;
  }

  // #decode checks the body's identity and applies field validation and pruning.
  #decode(body: unknown, namespace: string | undefined, name: string | undefined, fieldValidation: FieldValidation): { obj: KubeObject; warnings: string[] } {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw badRequest(`Object '${this.def.kind}' is invalid: the body must be a JSON object`);
    }
    const obj = structuredClone(body) as KubeObject;
    if (obj.apiVersion !== undefined && obj.apiVersion !== this.apiVersion) {
      throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${this.apiVersion})`);
    }
    if (obj.kind !== undefined && obj.kind !== this.def.kind) {
      throw badRequest(`the kind in the data (${String(obj.kind)}) does not match the expected kind (${this.def.kind})`);
    }
    obj.apiVersion = this.apiVersion;
    obj.kind = this.def.kind;
    if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
    if (typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) throw badRequest('metadata must be an object');
    const meta = obj.metadata;
    if (this.def.namespaced) {
      if (!meta.namespace) meta.namespace = namespace ?? '';
      else if (meta.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
    } else delete meta.namespace;
    if (name !== undefined) {
      if (!meta.name) meta.name = name;
      else if (meta.name !== name) throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    const unknown = this.#schema.pruneUnknown(obj as unknown as Record<string, unknown>);
    const warnings: string[] = [];
    if (unknown.length > 0 && fieldValidation === 'Strict') {
      const list = unknown.map((f) => `unknown field "${f}"`);
      throw badRequest(`strict decoding error: ${list.join(', ')}`, unknown.map((f) => ({ reason: 'FieldValueInvalid', message: `unknown field "${f}"`, field: f })));
    }
    if (fieldValidation === 'Warn') warnings.push(...unknown.map((f) => `unknown field "${f}"`));
    return { obj, warnings };
  }

  // #validate defaults and validates a complete object; every problem is one cause of a single 422.
  #validate(obj: KubeObject, old: KubeObject | undefined): void {
    const errs: FieldError[] = [];
    const opts = { namespaced: this.def.namespaced };
    errs.push(...(old ? validateObjectMetaUpdate(obj.metadata, old.metadata, opts) : validateObjectMetaCreate(obj.metadata, opts)));
    errs.push(...this.#schema.defaultAndValidate(obj as unknown as Record<string, unknown>));
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
      next = structuredClone(cur);
      if (incoming['status'] === undefined) delete next['status'];
      else next['status'] = incoming['status'];
      if (own.kind === 'apply') copyOrDelete(next.metadata, incoming.metadata, 'managedFields');
    } else {
      next = incoming;
      if (this.def.subresources.status) {
        if (cur['status'] === undefined) delete next['status'];
        else next['status'] = structuredClone(cur['status']);
      }
      const m = next.metadata;
      const c = cur.metadata;
      m.uid = c.uid;
      m.creationTimestamp = c.creationTimestamp;
      m.generation = c.generation;
      copyOrDelete(m, c, 'deletionTimestamp');
      copyOrDelete(m, c, 'deletionGracePeriodSeconds');
      if (own.kind !== 'apply') copyOrDelete(m, c, 'managedFields');
      delete m.selfLink;
    }
    next.metadata.resourceVersion = cur.metadata.resourceVersion;
    if (sub === 'main' && !isDeepStrictEqual(specOf(next), specOf(cur))) {
      next.metadata.generation = (cur.metadata.generation ?? 0) + 1;
      if (this.#systemStatus) next['status'] = this.#systemStatus(next);
    }
    this.#validate(next, cur);
    if (own.kind === 'update') {
      next.metadata.managedFields = trackUpdate(cur, next, own.manager, sub, this.apiVersion, rfc3339(new Date()), own.subresource ?? (sub === 'status' ? 'status' : undefined));
    }
    if (next.metadata.deletionTimestamp && !(next.metadata.finalizers?.length)) throw new DeleteInstead();
    return isDeepStrictEqual(next, cur) ? null : next;
  }

  // #guaranteedUpdate runs tryUpdate atomically against the stored object (or only computes it for dryRun).
  async #guaranteedUpdate(namespace: string | undefined, name: string, opts: WriteOptions, decodeWarnings: string[], update: (cur: KubeObject) => KubeObject | null): Promise<WriteResult> {
    const key = this.key(namespace, name);
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
        const object = tryUpdate(structuredClone(cur)) ?? cur;
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

  #decodeScale(body: unknown, name: string): { replicas: unknown; resourceVersion: string | undefined } {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body must be an autoscaling/v1 Scale object');
    const b = body as { kind?: unknown; metadata?: { name?: string; resourceVersion?: string }; spec?: { replicas?: unknown } };
    if (b.kind !== undefined && b.kind !== 'Scale') throw badRequest(`the kind in the data (${String(b.kind)}) does not match the expected kind (Scale)`);
    if (b.metadata?.name && b.metadata.name !== name) throw badRequest(`the name of the object (${b.metadata.name}) does not match the name on the URL (${name})`);
    return { replicas: b.spec?.replicas, resourceVersion: b.metadata?.resourceVersion };
  }

  #applyScale(cur: KubeObject, scale: { replicas: unknown; resourceVersion: string | undefined }, manager: string): KubeObject | null {
    const name = cur.metadata.name ?? '';
    if (scale.resourceVersion && scale.resourceVersion !== cur.metadata.resourceVersion) throw conflict(this.gr, name, OBJECT_MODIFIED);
    const next = structuredClone(cur);
    this.def.subresources.scale?.setSpecReplicas(next, this.#checkReplicas(scale.replicas, name));
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
    const probe = structuredClone(cur);
    const marker = -0.5; // no object holds this replica count
    this.def.subresources.scale?.setSpecReplicas(probe, marker);
    const found = leafPaths(probe, 'main').find((p) => getAt(probe, p) === marker);
    if (!found) throw new Error(`the scale mapping of ${this.def.kind} sets no field`);
    return found;
  }

  // #validateDeleteOptions is ValidateDeleteOptions, reported as the delete handlers do (422, DeleteOptions "").
  #validateDeleteOptions(o: DeleteOptions): void {
    const errs = validateDeleteOptions(o);
    if (errs.length) throw invalidOptions('DeleteOptions', errs);
  }

  #checkPreconditions(cur: KubeObject, o: DeleteOptions, name: string): void {
    const p = o.preconditions;
    if (p?.uid && p.uid !== cur.metadata.uid) {
      throw conflict(this.gr, name, `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${cur.metadata.uid ?? ''}`);
    }
    if (p?.resourceVersion && p.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(this.gr, name, `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion ?? ''}`);
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
    const next = structuredClone(cur);
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
  else to[field] = structuredClone(from[field]);
}

// specOf is everything that counts for metadata.generation: the object minus metadata and status.
function specOf(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}

/** rfc3339 formats a time at second precision in UTC, as metav1.Time marshals. */
export function rfc3339(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
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
