/**
 * @module storage/interface
 * The storage contract the registry uses (the shape of k8s.io/apiserver pkg/storage.Interface), so that an etcd
 * backend can replace lmdb without touching the registry. Objects are plain JSON; the storage owns
 * `metadata.resourceVersion`: one global, persisted, strictly increasing revision shared by every write.
 *
 * ## Guarantees
 * - Every successful write is durable (fsynced) before its promise resolves.
 * - Each write gets a revision greater than every earlier write's; the revision and the object are written in one transaction.
 * - Change events are delivered to watchers in revision order, each exactly once, and only after the write is durable.
 */
import type { KubeObject } from '../apis/meta/types.js';

/** ObjectKey addresses one object: `resource` is `<group>/<plural>`; namespace is '' for cluster-scoped kinds. */
export interface ObjectKey {
  resource: string;
  namespace: string;
  name: string;
}

/** KeyPrefix addresses a collection: all namespaces when `namespace` is undefined. */
export interface KeyPrefix {
  resource: string;
  namespace?: string;
}

/** ChangeEvent is one committed change, in revision order. For DELETED, `object` is the last state with the deletion's revision. */
export interface ChangeEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  key: ObjectKey;
  revision: number;
  object: KubeObject;
  /** The state before the change (MODIFIED and DELETED), for selector transitions. */
  prevObject?: KubeObject;
}

/** ListResult is a consistent snapshot: every item and the revision it was read at. */
export interface ListResult {
  items: KubeObject[];
  revision: number;
}

/**
 * UpdateFn computes the new object from the current one. Return the new object, `null` for "no change"
 * (nothing is written, the current object is returned) or throw to abort (the error propagates unchanged).
 * It must be synchronous and may be called more than once.
 */
export type UpdateFn = (current: KubeObject) => KubeObject | null;

/** DeleteCheck throws to refuse a delete after seeing the current object (preconditions). */
export type DeleteCheck = (current: KubeObject) => void;

/** WatchHandle stops a subscription. */
export interface WatchHandle {
  stop(): void;
}

/** Storage is the backend interface. */
export interface Storage {
  /** currentRevision returns the revision of the latest committed write (0 for an empty store). */
  currentRevision(): number;
  /** get returns the object or undefined. */
  get(key: ObjectKey): KubeObject | undefined;
  /** list returns every object under the prefix, ordered by namespace then name, at one revision. */
  list(prefix: KeyPrefix): ListResult;
  /** create stores a new object; rejects StorageError('KeyExists') if the key is taken. */
  create(key: ObjectKey, obj: KubeObject): Promise<KubeObject>;
  /** update applies tryUpdate to the current object atomically; rejects StorageError('KeyNotFound') if absent. */
  update(key: ObjectKey, tryUpdate: UpdateFn): Promise<KubeObject>;
  /** delete removes the object after `check` accepts it; resolves with the last state at the deletion revision. */
  delete(key: ObjectKey, check?: DeleteCheck): Promise<KubeObject>;
  /**
   * watch delivers every change under the prefix with revision > fromRevision, then live changes.
   * Throws StorageError('Expired') when fromRevision is older than the retained history.
   */
  watch(prefix: KeyPrefix, fromRevision: number, onEvent: (e: ChangeEvent) => void): WatchHandle;
  /** close flushes and closes the backend; pending writes finish first. */
  close(): Promise<void>;
}
