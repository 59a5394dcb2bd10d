/**
 * @module storage/sealed
 * A sealed resource's history begins at its seal (Storage.seal): its objects were moved in from another server (a
 * CRD's objects from kube-apiserver's etcd), whose resourceVersions its clients still hold. Those numbers mean nothing
 * here, so every backend answers a watch from before the seal, or a list of a snapshot from before it, as
 * kube-apiserver answers a compacted revision: Expired, which clients meet with a re-list.
 */
import { StorageError } from './errors.js';

/** sealKey is the key a backend keeps a resource's seal under. */
export const sealKey = (resource: string) => `sealed:${resource}`;

/** checkSealed throws Expired when `revision` is from before `resource`'s seal at `sealedAt` (0: never sealed). */
export function checkSealed(sealedAt: number, revision: number | undefined): void {
  if (revision !== undefined && revision < sealedAt) {
    throw new StorageError('Expired', `too old resource version: ${revision} (${sealedAt})`);
  }
}
