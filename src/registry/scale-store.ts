/**
 * @module registry/scale-store
 * ScaleStore: the /scale subresource of one kind as a store of its own (kube's ScaleREST): an autoscaling/v1 Scale
 * read from the object, and written back to the object's replicas field through the object's store, so the write is
 * judged, owned and stored like any update of the object. It answers get, update, patch and apply, nothing else;
 * every answer is a Scale.
 */
import { conflict, OBJECT_MODIFIED, type GroupResource } from '../apis/meta/errors.js';
import { rfc3339 } from '../apis/meta/go-time.js';
import type { KubeObject } from '../apis/meta/types.js';
import { serverSideApply, type ApplyScope } from './managed-fields.js';
import { checkApplyBody } from './object-codec.js';
import { patchObject, type PatchType } from './patch.js';
import { Preconditions } from './preconditions.js';
import type { ResourceDefinition } from './resource.js';
import { ScaleSubresource } from './scale.js';
import type { ResourceStore } from './store.js';
import type { ApplyOptions, WriteOptions, WriteResult } from './store-types.js';

// What a server-side apply on /scale records and how its conflicts read: in the Scale's terms, as kube's ScaleHandler maps them.
const SCALE_APPLY: ApplyScope = { part: 'main', subresource: 'scale', view: { apiVersion: 'autoscaling/v1', field: () => '.spec.replicas' } };

/** ScaleStore serves the autoscaling/v1 Scale of the objects of one kind (only a kind with a scale mapping has one). */
export class ScaleStore {
  readonly def: ResourceDefinition;
  readonly gr: GroupResource;
  readonly #store: ResourceStore;
  readonly #scale: ScaleSubresource;
  readonly #preconditions: Preconditions;

  constructor(store: ResourceStore) {
    this.def = store.def;
    this.gr = store.gr;
    this.#store = store;
    this.#scale = new ScaleSubresource(store.def, store.gr);
    this.#preconditions = new Preconditions(store.def, store.gr);
  }

  /** get resolves with the Scale view of the object (404 when it is missing). */
  async get(namespace: string | undefined, name: string): Promise<KubeObject> {
    return this.#scale.toScale(await this.#store.get(namespace, name));
  }

  /**
   * update sets the replicas from a Scale (PUT /scale). The body is a typed autoscaling/v1 Scale, read from its
   * bytes when the route kept them (`raw`): a missing spec.replicas is 0 (what a Go client sends to scale to zero,
   * the field being omitempty), and a uid in it is a precondition, as for any update.
   */
  async update(namespace: string | undefined, name: string, body: unknown, opts: WriteOptions, raw?: Uint8Array): Promise<WriteResult> {
    const { scale, warnings } = this.#scale.decode(body, name, 'update', opts.fieldValidation, raw);
    const res = await this.#store.updateFrom(namespace, name, opts, (cur) => {
      this.#preconditions.checkUidPrecondition(cur, scale.metadata.uid, namespace, name);
      return this.#withReplicas(cur, { replicas: scale.spec.replicas, resourceVersion: scale.metadata.resourceVersion }, opts.manager);
    });
    return { object: this.#scale.toScale(res.object), warnings };
  }

  /** patch patches the Scale view and applies its spec.replicas (PATCH /scale, what kubectl scale sends). */
  async patch(namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: WriteOptions): Promise<WriteResult> {
    let warnings: string[] = [];
    const res = await this.#store.updateFrom(namespace, name, opts, (cur) => {
      const patched = patchObject(this.#scale.toScale(cur), type, patch, this.def.kind, this.def.group, name, opts.fieldValidation);
      const decoded = this.#scale.decode(patched, name, 'patch', opts.fieldValidation);
      warnings = decoded.warnings;
      return this.#withReplicas(cur, { replicas: decoded.scale.spec.replicas, resourceVersion: decoded.scale.metadata.resourceVersion }, opts.manager);
    });
    return { object: this.#scale.toScale(res.object), warnings };
  }

  /**
   * apply is server-side apply on /scale: the body is an autoscaling/v1 Scale whose spec.replicas is applied to the
   * object's replicas field, owned by the manager under subresource "scale"; conflicts read in the Scale's terms
   * (`using autoscaling/v1`, `.spec.replicas`). Never creates (404), and has no warnings of its own.
   */
  async apply(namespace: string | undefined, name: string, body: unknown, opts: ApplyOptions): Promise<WriteResult & { created: boolean }> {
    await this.#store.get(namespace, name);
    checkApplyBody(body, 'autoscaling/v1', 'Scale');
    const decoded = this.#scale.decode(body, name, 'apply', opts.fieldValidation).scale;
    const replicas = (body as { spec?: { replicas?: unknown } }).spec?.replicas;
    const resourceVersion = decoded.metadata.resourceVersion;
    const res = await this.#store.updateFrom(namespace, name, opts, (cur, managed) => {
      if (resourceVersion && resourceVersion !== cur.metadata.resourceVersion) throw conflict(this.gr, name, OBJECT_MODIFIED);
      const applied = this.#scale.appliedReplicas(cur, replicas, name);
      return { object: serverSideApply(managed, cur, applied, opts.manager, opts.force, rfc3339(new Date()), SCALE_APPLY), own: { kind: 'apply' } };
    });
    return { object: this.#scale.toScale(res.object), warnings: [], created: false };
  }

  // #withReplicas is the object with the replicas of a decoded Scale, its field owned by the manager under "scale".
  #withReplicas(cur: KubeObject, scale: { replicas: number; resourceVersion: string | undefined }, manager: string) {
    return { object: this.#scale.withReplicas(cur, scale), own: { kind: 'update' as const, manager, subresource: 'scale' as const } };
  }
}
