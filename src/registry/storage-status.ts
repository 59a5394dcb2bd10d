/**
 * @module registry/storage-status
 * The kube Status of a storage failure that is not the request's fault, as kube-apiserver maps its storage errors
 * (k8s.io/apiserver pkg/storage/errors/storage.go Interpret*Error; etcd3/corrupt_obj_deleter.go; etcd3/watcher.go):
 * - an object that does not decode, read alone (get, the read of an update or a delete): 500 InternalError,
 *   `Internal error occurred: StorageError: corrupt object, Code: 7, Key: <etcd key>, ResourceVersion: 0,
 *   AdditionalErrorMsg: object not decodable revision=0: <why>` (InterpretGetError/InterpretDeleteError of
 *   ErrCodeCorruptObj: errors.NewInternalError);
 * - a list that met such objects: the whole list fails, 500 StoreReadError `failed to read one or more
 *   <resource>.<group> from the storage`, details {group, kind: <resource>, name: "list"}, one cause per object
 *   (reason UnexpectedServerResponse, field: its etcd key, message: the StorageError) and a TooMany cause past 100
 *   (aggregatedStorageError.NewAPIStatusError);
 * - a watch that saw the DELETED event of such an object: 500 StoreReadError `saw a DELETED event, but object data
 *   is corrupt - <why>` (the watcher's interpretWatchError), sent as the watch's ERROR event;
 * - lmdb finding the file itself damaged (StorageError Damaged): 500 InternalError naming the file.
 * Used by the registry for its reads and watches and by the server's error handler for anything else.
 */
import { internalError, StatusError } from '../apis/meta/errors.js';
import type { StatusCause } from '../apis/meta/types.js';
import { etcdKey, isCorruptObject, storageErrorText, type CorruptObjectError } from '../storage/corrupt-object.js';
import { isStorageError } from '../storage/errors.js';

/** storageStatus is the Status of a corrupt object or a damaged store, or undefined for any other error. */
export function storageStatus(e: unknown): StatusError | undefined {
  if (isCorruptObject(e)) return corruptStatus(e);
  if (isStorageError(e, 'Damaged')) return internalError(e.message);
  return undefined;
}

function corruptStatus(e: CorruptObjectError): StatusError {
  if (e.kind === 'read') return internalError(e.message);
  if (e.kind === 'deleted') return new StatusError({ code: 500, reason: 'StoreReadError', message: e.message });
  // The collection's group and resource, from the key (`<group>/<plural>`) of what it met.
  const resource = e.objects[0]?.key.resource ?? '';
  const slash = resource.lastIndexOf('/');
  const group = resource.slice(0, slash);
  const plural = resource.slice(slash + 1);
  const causes: StatusCause[] = e.objects.map((o) => ({ reason: 'UnexpectedServerResponse', message: storageErrorText(o), field: etcdKey(o.key) }));
  if (e.more) causes.push({ reason: 'TooMany', message: 'too many errors, the list is truncated' });
  return new StatusError({
    code: 500,
    reason: 'StoreReadError',
    message: `failed to read one or more ${group ? `${plural}.${group}` : plural} from the storage`,
    details: { ...(group ? { group } : {}), kind: plural, name: 'list', causes },
  });
}
