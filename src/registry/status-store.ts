/**
 * @module registry/status-store
 * StatusStore: the /status subresource of one kind as a store of its own (kube's StatusREST): reads answer the whole
 * object, writes change only its status (metadata and spec stay as stored; the object's store applies that rule,
 * registry/strategy.ts), and an apply never creates. It answers get, update, patch and apply, nothing else.
 */
import type { GroupResource } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { PatchType } from './patch.js';
import type { ResourceDefinition } from './resource.js';
import type { ResourceStore } from './store.js';
import type { ApplyOptions, WriteOptions, WriteResult } from './store-types.js';

/** StatusStore writes the status of the objects of one kind (only a kind with a status subresource has one). */
export class StatusStore {
  readonly def: ResourceDefinition;
  readonly gr: GroupResource;
  readonly #store: ResourceStore;

  constructor(store: ResourceStore) {
    this.def = store.def;
    this.gr = store.gr;
    this.#store = store;
  }

  /** get resolves with the whole object, as kube's status GET answers. */
  get(namespace: string | undefined, name: string): Promise<KubeObject> {
    return this.#store.get(namespace, name);
  }

  /** update replaces the status with the body's (PUT /status). */
  update(namespace: string | undefined, name: string, body: unknown, opts: WriteOptions): Promise<WriteResult> {
    return this.#store.update(namespace, name, body, 'status', opts);
  }

  /** patch patches the object and keeps only the status the patch gives it (PATCH /status). */
  patch(namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: WriteOptions): Promise<WriteResult> {
    return this.#store.patch(namespace, name, type, patch, 'status', opts);
  }

  /** apply is server-side apply of the status, recorded under subresource "status"; a missing object is 404. */
  apply(namespace: string | undefined, name: string, body: unknown, opts: ApplyOptions): Promise<WriteResult & { created: boolean }> {
    return this.#store.apply(namespace, name, body, opts, 'status');
  }
}
