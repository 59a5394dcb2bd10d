/**
 * @module registry/preconditions
 * Preconditions: what a write requires of the stored object, each refusal worded as kube-apiserver words it. An
 * update's uid (a storage precondition) and its required resourceVersion; a delete's uid and resourceVersion, checked
 * before the write as rest.BeforeDelete words them and again inside it as the storage does.
 */
import { conflict, invalid, type GroupResource } from '../apis/meta/errors.js';
import { invalid as invalidField, path } from '../apis/meta/field-path.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { DeleteOptions } from './delete-options.js';
import type { ResourceDefinition } from './resource.js';

/** Preconditions checks the preconditions of the writes to one kind. */
export class Preconditions {
  readonly #def: ResourceDefinition;
  readonly #gr: GroupResource;

  constructor(def: ResourceDefinition, gr: GroupResource) {
    this.#def = def;
    this.#gr = gr;
  }

  /** storageKeyText is the etcd key kube-apiserver names in storage errors. */
  storageKeyText(namespace: string | undefined, name: string): string {
    return `/registry/${this.#def.group}/${this.#def.plural}/${this.#def.namespaced && namespace ? `${namespace}/` : ''}${name}`;
  }

  /**
   * checkUidPrecondition is the storage precondition an update with a uid carries (rest.defaultUpdatedObjectInfo
   * Preconditions): a different uid is 409 before anything else is looked at.
   */
  checkUidPrecondition(cur: KubeObject, uid: string | undefined, namespace: string | undefined, name: string): void {
    if (!uid || uid === cur.metadata.uid) return;
    throw conflict(
      this.#gr,
      name,
      `StorageError: invalid object, Code: 4, Key: ${this.storageKeyText(namespace, name)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${uid}, UID in object meta: ${cur.metadata.uid ?? ''}`,
    );
  }

  /**
   * requireResourceVersion is the store's refusal of an unconditional update (a custom resource never allows one):
   * 422 named after the resource, as registry/store.go Update words it.
   */
  requireResourceVersion(obj: KubeObject, name: string): void {
    if (obj.metadata.resourceVersion) return;
    throw invalid(this.#gr.resource, this.#gr.group, name, [invalidField(path('metadata', 'resourceVersion'), 0, 'must be specified for an update')]);
  }

  /**
   * checkPreconditionsBeforeDelete is rest.BeforeDelete's early check: a Conflict named after the kind, worded for
   * people (`the UID in the precondition (x) does not match the UID in record (y). ...`). An empty precondition is
   * still a precondition (Go compares the pointer's value).
   */
  checkPreconditionsBeforeDelete(cur: KubeObject, o: DeleteOptions, name: string): void {
    const p = o.preconditions;
    const gk = { group: this.#def.group, resource: this.#def.kind };
    if (p?.uid !== undefined && p.uid !== cur.metadata.uid) {
      throw conflict(
        gk,
        name,
        `the UID in the precondition (${p.uid}) does not match the UID in record (${cur.metadata.uid ?? ''}). The object might have been deleted and then recreated`,
      );
    }
    if (p?.resourceVersion !== undefined && p.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(
        gk,
        name,
        `the ResourceVersion in the precondition (${p.resourceVersion}) does not match the ResourceVersion in record (${cur.metadata.resourceVersion ?? ''}). The object might have been modified`,
      );
    }
  }

  /**
   * checkPreconditions is the storage's check inside a delete's write (storage.Preconditions.Check), for an object
   * changed since the early check: InterpretDeleteError's Conflict around the StorageError text.
   */
  checkPreconditions(cur: KubeObject, o: DeleteOptions, namespace: string | undefined, name: string): void {
    const p = o.preconditions;
    const fail = (what: string) =>
      conflict(
        this.#gr,
        name,
        `StorageError: invalid object, Code: 4, Key: ${this.storageKeyText(namespace, name)}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: ${what}`,
      );
    if (p?.uid !== undefined && p.uid !== cur.metadata.uid) throw fail(`UID in precondition: ${p.uid}, UID in object meta: ${cur.metadata.uid ?? ''}`);
    if (p?.resourceVersion !== undefined && p.resourceVersion !== cur.metadata.resourceVersion) {
      throw fail(`ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion ?? ''}`);
    }
  }
}
