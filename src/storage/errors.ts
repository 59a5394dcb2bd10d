/**
 * @module storage/errors
 * StorageError: backend failures as codes. The registry turns them into API StatusErrors.
 */
import type { ObjectKey } from './interface.js';

/**
 * StorageErrorCode mirrors pkg/storage ErrCode*. Unavailable has no counterpart there (etcd's "database space
 * exceeded" reaches kube-apiserver as a plain error): the backend cannot commit writes now (a disk fault) and
 * nothing of the write was stored, so a retry is safe. CorruptObject is ErrCodeCorruptObj (a stored value that does
 * not decode: always a CorruptObjectError, storage/corrupt-object.ts), InvalidObject is ErrCodeInvalidObj (here only
 * the refusal of an unsafe delete of an object that decodes). Damaged has no counterpart either: the store's own
 * structure failed a read (lmdb's MDB_CORRUPTED, MDB_PAGE_NOTFOUND), nothing a request can fix.
 */
export type StorageErrorCode =
  | 'KeyNotFound'
  | 'KeyExists'
  | 'Expired'
  | 'TooLarge'
  | 'Conflict'
  | 'Unavailable'
  | 'CorruptObject'
  | 'InvalidObject'
  | 'Damaged';

/** StorageError is thrown (or rejected) by every Storage implementation. */
export class StorageError extends Error {
  readonly code: StorageErrorCode;
  readonly key: ObjectKey | undefined;
  constructor(code: StorageErrorCode, message: string, key?: ObjectKey, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageError';
    this.code = code;
    this.key = key;
  }
}

/** isStorageError narrows an unknown error to a StorageError with the given code. */
export function isStorageError(e: unknown, code?: StorageErrorCode): e is StorageError {
  return e instanceof StorageError && (code === undefined || e.code === code);
}
