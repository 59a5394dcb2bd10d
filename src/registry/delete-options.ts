/**
 * @module registry/delete-options
 * The options of a delete (metav1.DeleteOptions): their validation as the delete handlers report it, the refusal
 * of an unsafe delete, and the finalizers a propagation policy asks of the object before it goes
 * (registry/store.go updateForGracefulDeletionAndFinalizers).
 */
import { isDeepStrictEqual } from 'node:util';
import { conflict, type GroupResource, type StatusError } from '../apis/meta/errors.js';
import { cloneJson } from '../apis/meta/json-clone.js';
import { rfc3339 } from '../apis/meta/go-time.js';
import type { KubeObject } from '../apis/meta/types.js';
import { FINALIZER_DELETE_DEPENDENTS, FINALIZER_ORPHAN_DEPENDENTS } from '../apis/meta/validation.js';
import { invalidOptions, validateDeleteOptions } from '../apis/meta/options-validation.js';

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

const ORPHAN = FINALIZER_ORPHAN_DEPENDENTS;
const FOREGROUND = FINALIZER_DELETE_DEPENDENTS;

/** checkDeleteOptions is ValidateDeleteOptions, reported as the delete handlers do (422, DeleteOptions ""). */
export function checkDeleteOptions(o: DeleteOptions): void {
  const errs = validateDeleteOptions(o);
  if (errs.length) throw invalidOptions('DeleteOptions', errs);
}

/** UNSAFE_DELETE_VERB is the verb an unsafe delete needs besides `delete`. */
export const UNSAFE_DELETE_VERB = 'unsafe-delete-ignore-read-errors';

/** UNSAFE_DELETE_QUERY is the query a DELETE of an object whose stored data does not decode needs. */
export const UNSAFE_DELETE_QUERY = 'ignoreStoreReadErrorWithClusterBreakingPotential=true';

/**
 * unsafeDeleteRefused is the answer to ignoreStoreReadErrorWithClusterBreakingPotential on an object storage can
 * read (`keyText` is its etcd key): the unsafe deleter only removes what storage cannot decode
 * (registry/corrupt_obj_deleter.go, etcd3 getState: an InvalidObj StorageError, 409 through InterpretDeleteError).
 */
export function unsafeDeleteRefused(gr: GroupResource, name: string, keyText: string): StatusError {
  return conflict(
    gr,
    name,
    `StorageError: invalid object, Code: 4, Key: ${keyText}, ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage`,
  );
}

/**
 * markDeleting returns the object marked for deletion when finalizers must run first (the object itself when it is
 * marked already), or undefined to delete now.
 */
export function markDeleting(cur: KubeObject, o: DeleteOptions): KubeObject | undefined {
  const finalizers = new Set(cur.metadata.finalizers ?? []);
  const policy = o.propagationPolicy ?? (o.orphanDependents === true ? 'Orphan' : o.orphanDependents === false ? 'Background' : undefined);
  if (policy === 'Orphan') {
    finalizers.add(ORPHAN);
    finalizers.delete(FOREGROUND);
  }
  if (policy === 'Foreground') {
    finalizers.add(FOREGROUND);
    finalizers.delete(ORPHAN);
  }
  if (policy === 'Background') {
    finalizers.delete(ORPHAN);
    finalizers.delete(FOREGROUND);
  }
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
