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
 * - Every change is also kept in a history (persisted by lmdb, in memory otherwise) bounded by count and age, so a
 *   watch can resume and a list can read an older snapshot from any revision at or above `compactedRevision()`.
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
  /**
   * Set on the DELETED event of an object whose stored data did not decode (Storage.deleteUnreadable): why. `object`
   * then holds only its name and namespace, and there is no prevObject; a watch that meets it ends with a
   * CorruptObjectError (storage/corrupt-object.ts) instead, and so does a list of a snapshot from before it.
   */
  unreadable?: string;
}

/** ListRequest narrows a list: an older snapshot, a page, a filter. Every field is optional. */
export interface ListRequest {
  /** Read the snapshot at this revision (≥ compactedRevision, ≤ currentRevision); default: the current one. */
  revision?: number;
  /** Start after this object (exclusive): the position a continue token carries. */
  after?: { namespace: string; name: string };
  /**
   * How many objects of the snapshot under this prefix sort at or before `after` (the `position` of the page that
   * ended there). With it a backend that keeps counts tells `remaining` without counting what follows.
   */
  position?: number;
  /**
   * The caller has no use for `remaining` (a walk over every object, page by page at the current revision): a
   * backend that would have to count the rest of the collection to tell it leaves it out.
   */
  noRemaining?: boolean;
  /** Return at most this many matching items (0 or undefined: all). */
  limit?: number;
  /** Keep only items the predicate accepts (selectors); filtered items do not count against the limit. */
  filter?: (obj: KubeObject) => boolean;
  /**
   * With a filter: a test on an object's JSON text (as JSON.stringify writes it) that every object the filter
   * accepts passes. A backend holding JSON text may skip objects that fail it without decoding them.
   */
  prefilter?: (json: Uint8Array) => boolean;
  /**
   * For the server's own walks over every object (storage version migration, metadata repair), never for a client's
   * list: an object whose stored data does not decode is left out of `items` and named in the result's `unreadable`
   * instead of failing the whole list with a CorruptObjectError (storage/corrupt-object.ts). A client's list fails,
   * as kube-apiserver's does. Only for the current revision and without a prefilter: an older snapshot holding such
   * an object, or such bytes a prefilter let through, still fail. A backend that never holds such an object ignores it.
   */
  skipUnreadable?: boolean;
  /**
   * The caller only sends the items on as JSON: a backend that stores JSON may answer with each item's text in
   * `encoded` (and `items` empty), sparing a parse and a stringify per object. With a filter, a backend may answer
   * decoded all the same (lmdb answers encoded only when a prefilter came with the filter).
   */
  encoded?: boolean;
}

/** ListResult is a consistent snapshot: the items, the revision they were read at, and whether a page follows. */
export interface ListResult {
  items: KubeObject[];
  revision: number;
  /** More keys follow the last item (a limited list stopped early). */
  more: boolean;
  /** How many objects follow the last item, when `more` and the list has no filter. */
  remaining?: number;
  /** The key of the last item returned (where the next page starts). */
  last?: ObjectKey;
  /**
   * How many objects of the snapshot under the prefix sort at or before `last`, filtered out or not, when `more` and
   * the backend can tell cheaply: hand it back as `position` with `after` for the next page.
   */
  position?: number;
  /** The items as JSON text, in order, when the request asked for `encoded` and the backend could. */
  encoded?: Uint8Array[];
  /**
   * With `skipUnreadable`: the objects the page passed over because their stored data does not decode, each with
   * kube's corruptObjectError text (`object not decodable revision=0: ...`). A page may name one the previous page
   * named already (met past that page's last item); absent when there was none.
   */
  unreadable?: { key: ObjectKey; reason: string }[];
}

/** WatchSink receives a subscription's events. */
export interface WatchSink {
  /** onEvent gets each change in revision order. */
  onEvent(e: ChangeEvent): void;
  /**
   * onError ends the subscription: Expired when the watcher fell behind what can be replayed or buffered, or (from a
   * backend that learns of compaction only when it answers) when fromRevision was already compacted (see Storage.watch).
   */
  onError(err: Error): void;
  /** ready paces the replay of history: the next batch is read only once it resolves (a slow client is not flooded). */
  ready?(): Promise<void>;
}

/**
 * UpdateFn computes the new object from the current one. Return the new object, `null` for "no change"
 * (nothing is written, the current object is returned) or throw to abort (the error propagates unchanged).
 * It must be synchronous and may be called more than once.
 */
export type UpdateFn = (current: KubeObject) => KubeObject | null;

/** DeleteCheck throws to refuse a delete after seeing the current object (preconditions). */
export type DeleteCheck = (current: KubeObject) => void;

/** WatchHandle controls a subscription. */
export interface WatchHandle {
  /** position is the revision up to which the sink has been given every change (what a BOOKMARK may carry). */
  position(): number;
  stop(): void;
}

/**
 * Storage is the backend interface. Reads are asynchronous so that a remote engine (etcd) can implement it as well
 * as an embedded one (lmdb) or the in-memory one; the revision accessors stay synchronous (each backend tracks them
 * in process). One shared conformance suite (storage/conformance.ts) states the contract every backend passes.
 */
export interface Storage {
  /**
   * currentRevision is the latest revision this process knows to be committed (0 for an empty store). lmdb: exact.
   * A remote engine may lag behind writes of other processes until it hears of them (its watch or its next answer).
   */
  currentRevision(): number;
  /** get resolves with the object, or undefined when there is none. */
  get(key: ObjectKey): Promise<KubeObject | undefined>;
  /**
   * compactedRevision is the oldest revision a watch can resume from or a list can read (older ones are Expired), as
   * far as this process knows (lmdb: exact). A remote engine may compact further before it says so: its reads and
   * watches then report Expired all the same.
   */
  compactedRevision(): number;
  /**
   * waitForRevision resolves true once `revision` is committed and its events delivered, false after `timeoutMs`
   * (a list or watch at a resourceVersion this replica has not seen yet waits so long, as kube-apiserver's cache does).
   */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean>;
  /**
   * list resolves with the objects under the prefix, ordered by namespace then name, at one revision (one consistent
   * snapshot, however the backend reads it). Rejects StorageError('Expired') for a revision older than
   * compactedRevision, ('TooLarge') for a future one. `req.filter` stays a synchronous predicate, applied to the
   * snapshot's objects before the limit.
   */
  list(prefix: KeyPrefix, req?: ListRequest): Promise<ListResult>;
  /** create stores a new object; rejects StorageError('KeyExists') if the key is taken. */
  create(key: ObjectKey, obj: KubeObject): Promise<KubeObject>;
  /** update applies tryUpdate to the current object atomically; rejects StorageError('KeyNotFound') if absent. */
  update(key: ObjectKey, tryUpdate: UpdateFn): Promise<KubeObject>;
  /**
   * rewrite replaces the stored form of an object with an equivalent one, the same object in every served version
   * (a storage version migration), keeping its resourceVersion and publishing no event; `fn` returns null for no
   * change. Resolves whether it rewrote; KeyNotFound when the object is gone. Absent: callers update instead (a new
   * resourceVersion and a MODIFIED event, as kube's storage version migrator does on etcd).
   */
  rewrite?(key: ObjectKey, fn: UpdateFn): Promise<boolean>;
  /** delete removes the object after `check` accepts it; resolves with the last state at the deletion revision. */
  delete(key: ObjectKey, check?: DeleteCheck): Promise<KubeObject>;
  /**
   * deleteUnreadable removes an object whose stored data does not decode (DeleteOptions
   * ignoreStoreReadErrorWithClusterBreakingPotential; kube's etcd3 Delete with ExpectTransformOrDecodeError): it reads
   * the object in the write and deletes it only if it still does not decode. Rejects KeyNotFound when there is none,
   * InvalidObject when it decodes. Absent: the backend never holds such an object.
   */
  deleteUnreadable?(key: ObjectKey): Promise<void>;
  /**
   * watch delivers every change under the prefix with revision > fromRevision (history first, paced by
   * `sink.ready`), then live changes, with no gap and no duplicate. It returns at once; events follow.
   * When fromRevision is older than compactedRevision the watch is Expired, reported either way:
   * - by throwing StorageError('Expired') synchronously (lmdb and memory: they know their compacted revision), or
   * - later, through `sink.onError(StorageError('Expired'))` (a remote engine learns of the compaction only when it
   *   answers); no event precedes that error, and the subscription is over (stop() is then a no-op).
   * Every consumer must treat both forms alike.
   */
  watch(prefix: KeyPrefix, fromRevision: number, sink: WatchSink): WatchHandle;
  /**
   * writable is false while writes cannot commit (a disk fault: they reject with StorageError('Unavailable')) and
   * true again once one commits; reads and watches are served either way. Absent: always writable.
   */
  writable?(): boolean;
  /**
   * marked and mark record that a one-time pass over the store is done (the repair of what older builds stored), so
   * later starts skip it: a pass over 1M objects is seconds of CPU after every start. Marks live with the data (a
   * restored backup carries its own). Absent: such passes run at every start.
   */
  marked?(name: string): boolean;
  mark?(name: string): Promise<void>;
  /**
   * seal begins `resource`'s history anew (storage/sealed.ts): objects moved in from another server, whose
   * resourceVersions its clients hold, were just written. The revision counter moves up to at least `minRevision`
   * (past every number the other server gave out), no event is published, and from then on a watch of the resource
   * from an earlier revision, or a list of an earlier snapshot, is Expired. Resolves with the sealed revision, the
   * new current one. Absent: the backend cannot move its counter (etcd's revision is etcd's).
   */
  seal?(resource: string, minRevision: number): Promise<number>;
  /** sealedAt is the revision of `resource`'s last seal (0: never sealed). */
  sealedAt?(resource: string): number;
  /** close flushes and closes the backend; pending writes finish first. */
  close(): Promise<void>;
}
