/**
 * @module storage/errors
 * StorageError: backend failures as codes. The registry turns them into API StatusErrors.
 */
import type { ObjectKey } from './interface.js';

/**
 * StorageErrorCode mirrors pkg/storage ErrCode*. Unavailable has no counterpart there (etcd's "database space
 * exceeded" reaches kube-apiserver as a plain error): the backend cannot commit writes now (a disk fault) and
 * nothing of the write was stored, so a retry is safe.
 */
export type StorageErrorCode = 'KeyNotFound' | 'KeyExists' | 'Expired' | 'TooLarge' | 'Conflict' | 'Unavailable';

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
