/**
 * @module storage/corrupt-object
 * A stored object that does not decode, reported as kube-apiserver reports one it reads from etcd
 * (k8s.io/apiserver pkg/storage/errors.go ErrCodeCorruptObj, etcd3/corrupt_obj_deleter.go): the backend throws a
 * CorruptObjectError naming the key, never a decoder's own error (a SyntaxError read as "error decoding request
 * body" by the server), and never skips the object. What a client then gets (registry/storage-status.ts):
 * - a read of the object (get, and the read a write or a delete starts with): 500 InternalError
 *   `Internal error occurred: StorageError: corrupt object, Code: 7, Key: /registry/<group>/<plural>/<ns>/<name>, ...`;
 * - a list whose snapshot holds one: the whole list fails, 500 StoreReadError naming every such key (at most
 *   MAX_REPORTED, then a TooMany cause), as the corrupt-object aggregator of kube's etcd3 store does;
 * - a watch that meets one (its initial events, or the DELETED event of one removed with
 *   ignoreStoreReadErrorWithClusterBreakingPotential): one ERROR event, and the watch ends (etcd3/watcher.go).
 * The revision kube prints is the etcd key's mod revision; lmdb keeps an object's revision inside the value that did
 * not decode, so a read says revision=0, and only the DELETED event of an unsafe delete knows its own revision.
 */
import type { KubeObject } from '../apis/meta/types.js';
import { StorageError } from './errors.js';
import type { ObjectKey } from './interface.js';

/** MAX_REPORTED is how many undecodable objects one list names before it adds "too many errors". */
export const MAX_REPORTED = 100;

/** etcdKey is the key kube-apiserver would name for an object (`/registry/<group>/<plural>/[<namespace>/]<name>`). */
export const etcdKey = (k: ObjectKey): string => `/registry/${k.resource}/${k.namespace ? `${k.namespace}/` : ''}${k.name}`;

/** UnreadableObject is one stored object that does not decode, and why. */
export interface UnreadableObject {
  key: ObjectKey;
  /** kube's corruptObjectError text: `object not decodable revision=N: <decoder's message>`. */
  reason: string;
}

/** corruptReason words a decoder's failure as kube's corruptObjectError does. */
export const corruptReason = (cause: unknown, revision = 0): string =>
  `object not decodable revision=${revision}: ${cause instanceof Error ? cause.message : String(cause)}`;

/** storageErrorText is kube's StorageError.Error() for a corrupt object. */
export const storageErrorText = (o: UnreadableObject): string =>
  `StorageError: corrupt object, Code: 7, Key: ${etcdKey(o.key)}, ResourceVersion: 0, AdditionalErrorMsg: ${o.reason}`;

/**
 * CorruptObjectError (code CorruptObject) is what a backend throws for stored objects that do not decode:
 * `read` for one object, `list` for the undecodable objects a list met, `deleted` for a watch that saw the
 * DELETED event of an object whose data was corrupt.
 */
export class CorruptObjectError extends StorageError {
  readonly kind: 'read' | 'list' | 'deleted';
  readonly objects: readonly UnreadableObject[];
  /** The list met more than MAX_REPORTED such objects (only those are named). */
  readonly more: boolean;

  constructor(kind: 'read' | 'list' | 'deleted', objects: readonly UnreadableObject[], more = false) {
    const first = objects[0] as UnreadableObject;
    const message =
      kind === 'read'
        ? storageErrorText(first)
        : kind === 'deleted'
          ? `saw a DELETED event, but object data is corrupt - ${first.reason}`
          : `unable to transform or decode ${objects.length}${more ? '+' : ''} objects: {${objects.map((o) => `\n\t${storageErrorText(o)}`).join('')}\n}`;
    super('CorruptObject', message, kind === 'list' ? undefined : first.key);
    this.name = 'CorruptObjectError';
    this.kind = kind;
    this.objects = objects;
    this.more = more;
  }
}

/** isCorruptObject narrows an error to a CorruptObjectError. */
export const isCorruptObject = (e: unknown): e is CorruptObjectError => e instanceof CorruptObjectError;

/**
 * checkDecoded accepts what a stored object must decode to: a JSON object with an object `metadata` (anything else,
 * a number, a string, null, came out of bytes that were not an object this server wrote).
 */
export function checkDecoded(value: unknown, key: ObjectKey): KubeObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CorruptObjectError('read', [{ key, reason: corruptReason(`not a JSON object: ${describe(value)}`) }]);
  }
  const meta = (value as { metadata?: unknown }).metadata;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    throw new CorruptObjectError('read', [{ key, reason: corruptReason('the object has no metadata') }]);
  }
  return value as KubeObject;
}

const describe = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

/** decodeStored parses an object's stored JSON bytes, or throws CorruptObjectError. */
export function decodeStored(bytes: Uint8Array, key: ObjectKey): KubeObject {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (e) {
    throw new CorruptObjectError('read', [{ key, reason: corruptReason(e) }]);
  }
  return checkDecoded(value, key);
}

/**
 * framedAsObject is the check a list that sends stored bytes on undecoded can afford: JSON.stringify of an object
 * starts with `{` and ends with `}`. Bytes cut short or overwritten at either end fail it; damage inside that still
 * ends in a brace is left to the client's decoder (decoding every item would cost the list what sending bytes saves).
 */
export const framedAsObject = (b: Uint8Array): boolean => b.length >= 2 && b[0] === 0x7b && b[b.length - 1] === 0x7d;

/** framingReason is why bytes failed framedAsObject, worded like a decoder's message. */
export function framingReason(b: Uint8Array): string {
  try {
    JSON.parse(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8'));
    return corruptReason('not a JSON object');
  } catch (e) {
    return corruptReason(e);
  }
}

/**
 * UnreadableCollector gathers the undecodable objects one list meets, and fails the list with them; for a walk's list
 * (ListRequest.skipUnreadable, `skip`) it keeps every one of them for the result instead, and fails nothing.
 */
export class UnreadableCollector {
  readonly #found: UnreadableObject[] = [];
  readonly #skip: boolean;
  #more = false;

  constructor(skip = false) {
    this.#skip = skip;
  }

  add(o: UnreadableObject): void {
    if (this.#skip || this.#found.length < MAX_REPORTED) this.#found.push(o);
    else this.#more = true;
  }

  /** check throws the list's CorruptObjectError when it met any (never when skipping). */
  check(): void {
    if (this.#found.length && !this.#skip) throw new CorruptObjectError('list', this.#found, this.#more);
  }

  /** skipped is what a skipping list passed over, for ListResult.unreadable (undefined when nothing). */
  skipped(): UnreadableObject[] | undefined {
    return this.#skip && this.#found.length ? [...this.#found] : undefined;
  }
}

/** DAMAGE_CODES are lmdb's answers that mean the file itself is damaged (mdb.c): no request can fix them. */
const DAMAGE_CODES = /\b(MDB_CORRUPTED|MDB_PAGE_NOTFOUND|MDB_INVALID|MDB_VERSION_MISMATCH|MDB_BAD_DBI|MDB_PROBLEM)\b/;

/** isDamage tells an lmdb error that reports a damaged file from every other failure. */
export const isDamage = (e: unknown): boolean => e instanceof Error && DAMAGE_CODES.test(e.message);

/** damaged is the StorageError('Damaged') for such an lmdb error while reading the store in `dataFile`. */
export const damaged = (e: Error, dataFile: string): StorageError =>
  new StorageError('Damaged', `the store ${dataFile} is damaged (${e.message}): restore it from a backup (website-apiserver restore)`, undefined, { cause: e });
