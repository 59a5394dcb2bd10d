/**
 * @module registry/guaranteed-update
 * The storage step of every update (the role of storage.Interface GuaranteedUpdate as registry/store.go drives it):
 * the update function runs atomically against the stored object, retried by the storage on a concurrent write, or
 * only computed for dryRun; an update that leaves a deleted object without finalizers deletes it instead.
 */
import { conflict, notFound, OBJECT_MODIFIED, StatusError, type GroupResource } from '../apis/meta/errors.js';
import { cloneJson } from '../apis/meta/json-clone.js';
import type { KubeObject } from '../apis/meta/types.js';
import { finalizerWarnings } from '../apis/meta/validation.js';
import { isStorageError } from '../storage/errors.js';
import type { ObjectKey, Storage } from '../storage/interface.js';
import type { WriteResult } from './store-types.js';
import { DeleteInstead } from './strategy.js';

/**
 * guaranteedUpdate runs `update` atomically against the object stored under `key` (or only computes it for
 * dryRun); null from `update` leaves the object as it is. 404 (named `name`) when there is no object. `update` may
 * warn (validation rules ratcheted on an unchanged value); a refused update still sends those warnings.
 */
export async function guaranteedUpdate(
  storage: Storage,
  gr: GroupResource,
  key: ObjectKey,
  name: string,
  dryRun: boolean,
  decodeWarnings: string[],
  update: (cur: KubeObject, warn: (message: string) => void) => KubeObject | null,
): Promise<WriteResult> {
  // Warnings in the order kube records them: decoding, then validation, then the strategy's (finalizers added by
  // this write), from the last attempt.
  let warnings = decodeWarnings;
  const tryUpdate = (cur: KubeObject) => {
    const before = cur.metadata.finalizers;
    const validation: string[] = [];
    let next: KubeObject | null;
    try {
      next = update(cur, (m) => validation.push(m));
    } catch (e) {
      if (e instanceof StatusError && validation.length && e.warnings === undefined) e.warnings = [...decodeWarnings, ...validation];
      throw e;
    }
    warnings = [...decodeWarnings, ...validation, ...(next ? finalizerWarnings(next.metadata.finalizers, before) : [])];
    return next;
  };
  if (dryRun) {
    const cur = await storage.get(key);
    if (!cur) throw notFound(gr, name);
    try {
      const object = tryUpdate(cloneJson(cur)) ?? cur;
      return { object, warnings };
    } catch (e) {
      if (e instanceof DeleteInstead) return { object: cur, warnings };
      throw e;
    }
  }
  try {
    const object = await storage.update(key, tryUpdate);
    return { object, warnings };
  } catch (e) {
    if (isStorageError(e, 'KeyNotFound')) throw notFound(gr, name);
    if (!(e instanceof DeleteInstead)) throw e;
  }
  // The update removed the last finalizer of an object being deleted: delete it now, unless it changed meanwhile.
  const seen = await storage.get(key);
  if (!seen) throw notFound(gr, name);
  try {
    const gone = await storage.delete(key, (c) => {
      if (c.metadata.resourceVersion !== seen.metadata.resourceVersion) throw conflict(gr, name, OBJECT_MODIFIED);
    });
    return { object: gone, warnings };
  } catch (e) {
    if (isStorageError(e, 'KeyNotFound')) throw notFound(gr, name);
    throw e;
  }
}
