/**
 * @module storage/lmdb-storage
 * LmdbStorage: the embedded backend. One lmdb environment in `--data-dir` with three named databases:
 * `objects` ([resource, namespace, name] → object JSON), `events` (revision → the change, the persisted watch
 * history) and `meta` (`revision` → last committed revision, `compacted` → highest revision dropped from `events`,
 * and how many objects each resource and each of its namespaces holds, see countKey).
 *
 * ## Guarantees
 * - The revision counter, the object and its event are written in the same write transaction, so a crash can never
 *   leave an object whose resourceVersion is ahead of the counter (no resourceVersion is ever reused after a
 *   restart), nor a change without its event: a watch resumes across restarts with nothing missing.
 * - Writes resolve only after the commit is flushed to disk (`db.flushed`, see WriteHealth.flushed); lmdb batches concurrent
 *   transactions of one event-loop turn into one commit, so concurrent requests share an fsync.
 * - Checks (exists, preconditions, tryUpdate) run inside the transaction callback before any write, because a
 *   callback that throws after writing would still commit those writes (DEPENDENCIES.md §3).
 * - A disk fault (ENOSPC, EIO, MDB_MAP_FULL) fails every write of the batch whose commit failed with
 *   StorageError('Unavailable'): nothing of it is visible, no event is published, and its revisions are used by
 *   the next writes (no gap, no reuse a client can see). The store keeps serving reads and watches, `writable()`
 *   is false until a commit succeeds again (a probe tries, see lmdb-faults), and writes work again once space is
 *   freed, without a restart. The objects and events of one write go in a child transaction, so a fault raised
 *   halfway through one cannot leave half of it in a batch that commits.
 * - The object counts change in the transaction of the write that changes them, so a list page tells
 *   remainingItemCount in O(page) (snapshot.ts), not by counting the rest of the collection.
 * - Compaction (count and age bounds) runs at start, on a timer, and from the write path once the count bound is
 *   passed by a slack of 10% (at most 1000), in batches of small transactions, so it never holds writers back for
 *   long. It keeps history a running replay still needs, up to twice the count bound: a replay lagging further
 *   behind than that is passed and ends with Expired (its client re-lists), so a stalled reader cannot keep
 *   history growing without bound.
 */
import { mkdirSync } from 'node:fs';
import { open, type Database, type Key as LmdbKey, type RootDatabase } from 'lmdb';
import { MAXIMUM_KEY } from 'ordered-binary';
import { cloneJson } from '../apis/meta/json-clone.js';
import type { KubeObject } from '../apis/meta/types.js';
import { ChangeFeed } from './change-feed.js';
import {
  checkDecoded,
  corruptReason,
  CorruptObjectError,
  damaged,
  decodeStored,
  framedAsObject,
  framingReason,
  isCorruptObject,
  isDamage,
  UnreadableCollector,
} from './corrupt-object.js';
import { StorageError } from './errors.js';
import { checkDataFile, checkHistory } from './lmdb-integrity.js';
import { describeFault, faultCause, guardBatchStart, isCommitFault, isFatal, WriteHealth } from './lmdb-faults.js';
import type { History } from './history.js';
import type { ChangeEvent, DeleteCheck, KeyPrefix, ListRequest, ListResult, ObjectKey, Storage, UpdateFn, WatchHandle, WatchSink } from './interface.js';
import { keyString, keyTuple } from './keys.js';
import { drain, pageStats, readerSlots, readScope, type PageStats, type ReaderSlots, type ReadScope } from './lmdb-read.js';
import { checkSealed, sealKey } from './sealed.js';
import { readList, type SnapshotView } from './snapshot.js';

const REVISION = 'revision';
const COMPACTED = 'compacted';
/** A key of `meta` that only the probe of a store that cannot commit writes (see WriteHealth). */
const PROBE = 'probe';
const COMPACT_BATCH = 1000;
/** Set once the object counts are kept (a store written before them is counted once at open). */
const COUNTED = 'counted';

/** markKey is the `meta` key recording that a one-time pass called `name` is done (Storage.mark). */
const markKey = (name: string) => `done:${name}`;

/** countKey is the `meta` key of how many objects a resource holds in all namespaces, or in one. */
export function countKey(resource: string, namespace?: string): string {
  return `count:${JSON.stringify(namespace === undefined ? [resource] : [resource, namespace])}`;
}

// countKeysOf are the counts an object is in: its resource's and its namespace's.
const countKeysOf = (k: Key) => [countKey(k[0]), countKey(k[0], k[1])];

/** LmdbStorageOptions configures the backend. */
export interface LmdbStorageOptions {
  /** Directory of the lmdb environment (created if missing). */
  path: string;
  /** How many recent change events are kept for watches and older list snapshots (default 100000). */
  historyEvents?: number;
  /** How long (ms) change events are kept (default 15 min). */
  historyAgeMs?: number;
  /** How often (ms) compaction runs (default 5 s); 0 disables the timer (tests call compact()). */
  compactionIntervalMs?: number;
  /** Told when writes stop committing (a disk fault) and when they commit again. */
  onWritableChange?: (writable: boolean, cause?: Error) => void;
  /** Address space reserved for the map of data.mdb, in bytes (default DEFAULT_MAP_SIZE; see openLayout). */
  mapSize?: number;
}

/**
 * DEFAULT_MAP_SIZE (16 GiB) is the address space reserved for data.mdb up front: about 8 million objects at 2 KB.
 * Reserving costs nothing on Linux without writemap (the file is not grown, no page is touched); growing from
 * lmdb-js's small default instead remaps about ten times on the way to a million objects, and each old mapping stays
 * alive (open read transactions may point into it), so resident memory counted every file page several times.
 */
export const DEFAULT_MAP_SIZE = 16 * 2 ** 30;

type Key = [string, string, string];

/** LogEntry is one persisted change. For DELETED, `o` is the last state with its own resourceVersion. */
export interface LogEntry {
  t: 'A' | 'M' | 'D';
  k: Key;
  o: KubeObject;
  p?: KubeObject;
  /** Commit time (ms since epoch), for the age bound. */
  ts: number;
  /** A DELETED of an object whose data did not decode (deleteUnreadable): why; `o` holds only name and namespace. */
  u?: string;
}

const TYPE_CODE = { ADDED: 'A', MODIFIED: 'M', DELETED: 'D' } as const;

/** The Decide of each deleteUnreadable: #decideAndPut deletes for it an object that does not decode. */
const unreadableDeletes = new WeakSet<Decide>();

/** Decide is what a write does with the current object: a change to commit, or NONE. */
type Decide = (current: KubeObject | undefined) =>
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: KubeObject; prev?: KubeObject }
  | { type: 'NONE'; object: KubeObject }
  /** The same object in another stored form (Storage.rewrite): written as it is, no revision, no event. */
  | { type: 'REWRITE'; object: KubeObject };

/** Outcome is what a write's transaction did: nothing (NONE), or a change with its history entry. */
type Outcome = { type: 'NONE'; object: KubeObject } | { type: 'CHANGED'; event: ChangeEvent; entry: LogEntry };

/** LmdbLayout is the environment and its named databases, as the server, backup and restore open them. */
export interface LmdbLayout {
  root: RootDatabase;
  objects: Database<KubeObject, Key>;
  /** The same database read as bytes: the stored JSON text, for lists that are only sent on. */
  objectsText: Database<Uint8Array, Key>;
  events: Database<LogEntry, number>;
  meta: Database<number, string>;
}

/** META_KEYS are the keys of `meta`: the last committed revision and the highest one dropped from `events`. */
export const META_KEYS = { revision: REVISION, compacted: COMPACTED } as const;

/**
 * openLayout opens the environment in `path` (a directory) with the databases of this module. readOnly is for
 * another process reading a live store (storage/lmdb-backup): lmdb supports readers in several processes.
 */
export function openLayout(path: string, readOnly = false, mapSize = DEFAULT_MAP_SIZE): LmdbLayout {
  // Durability is lmdb's default (synced commits); never noSync.
  // noSubdir must be explicit: lmdb-js guesses it from the path, and a directory name with a dot in it
  // (`/var/lib/website.data`, a `mktemp -d` name) would be opened as the database file and fail.
  // Past mapSize lmdb-js still grows the map by itself (doubling it), so the size is no limit on the data.
  const root = open({ path, maxDbs: 8, noSubdir: false, mapSize, ...(readOnly ? { readOnly: true } : {}) });
  // Values over 1000 bytes (nearly all) are LZ4-compressed, objects and history alike; older uncompressed values
  // stay readable (lmdb marks the compressed ones), but compression can never be turned off again.
  // Objects were plain JSON once, for 10-25% more get, list and patch throughput (an A/B, three rounds each), but
  // that cost 4.2 KB of disk per object: a 4 KB leaf page fits two ~1.45 KB objects, and page splits under inserts
  // appended in many namespaces at once left one per page (mdb_stat: 19,900 leaf pages for 20,000 objects); 8 KB
  // pages did no better in a trial. Compressed (~600 bytes) they pack about 4 a page: 1 KB per object, and the
  // resident file pages of a full list shrink as much.
  const compressed = { compression: true } as const;
  return {
    root,
    objects: root.openDB<KubeObject, Key>('objects', { encoding: 'json', ...compressed }),
    objectsText: root.openDB<Uint8Array, Key>('objects', { encoding: 'binary', ...compressed }),
    events: root.openDB<LogEntry, number>('events', { encoding: 'json', ...compressed }),
    meta: root.openDB<number, string>('meta', { encoding: 'json' }),
  };
}

/** LmdbStorage implements Storage on lmdb. */
export class LmdbStorage implements Storage {
  readonly #root: RootDatabase;
  /** The environment's directory (for messages). */
  readonly #path: string;
  readonly #objects: Database<KubeObject, Key>;
  /** The same database read as bytes: the stored JSON text, for lists that are only sent on. */
  readonly #objectsText: Database<Uint8Array, Key>;
  readonly #events: Database<LogEntry, number>;
  readonly #meta: Database<number, string>;
  readonly #feed: ChangeFeed;
  readonly #historyEvents: number;
  readonly #historyAgeMs: number;
  readonly #timer: NodeJS.Timeout | undefined;
  #compacting: Promise<number> | undefined;
  #closed = false;
  #readFault: string | undefined;
  readonly #health: WriteHealth;
  /** How many writes are begun and not yet finished: close() waits for them (#whenIdle). */
  #writes = 0;
  #whenIdle: (() => void) | undefined;

  constructor(opts: LmdbStorageOptions) {
    mkdirSync(opts.path, { recursive: true });
    this.#path = opts.path;
    // A damaged file is refused before lmdb maps it (a page past its end is SIGBUS, a bad meta page SIGSEGV).
    checkDataFile(opts.path);
    ({
      root: this.#root,
      objects: this.#objects,
      objectsText: this.#objectsText,
      events: this.#events,
      meta: this.#meta,
    } = openLayout(opts.path, false, opts.mapSize));
    this.#historyEvents = opts.historyEvents ?? 100_000;
    this.#historyAgeMs = opts.historyAgeMs ?? 15 * 60_000;
    this.#health = new WriteHealth({
      probe: () => this.#transact(() => this.#meta.put(PROBE, Date.now())),
      broken: () => {
        try {
          this.#root.resetReadTxn();
          this.#meta.get(REVISION);
          return false;
        } catch (e) {
          return isFatal(e);
        }
      },
      ...(opts.onWritableChange ? { onChange: opts.onWritableChange } : {}),
    });
    try {
      const newestEvent = drain(this.#events.getKeys({ reverse: true, limit: 1 }))[0];
      checkHistory(opts.path, { revision: this.currentRevision(), compacted: this.#meta.get(COMPACTED) ?? 0, newestEvent });
    } catch (e) {
      void this.#root.close().catch(() => undefined);
      throw e;
    }
    // A database written before the event log existed has history for nothing it holds.
    if (this.#meta.get(COMPACTED) === undefined) this.#meta.putSync(COMPACTED, this.currentRevision());
    if (this.#meta.get(COUNTED) === undefined) this.#countAll();
    const history: History = {
      compacted: () => this.compactedRevision(),
      range: (after, upTo, limit) => readScope(this.#root, (scope) => drain(this.#eventRange(scope, after, upTo, limit))),
    };
    this.#feed = new ChangeFeed(this.currentRevision(), history);
    const every = opts.compactionIntervalMs ?? 5000;
    if (every > 0) {
      this.#timer = setInterval(() => void this.compact().catch(() => undefined), every);
      this.#timer.unref();
      // Apply the bounds at once: the process may have been down longer than the age bound.
      void this.compact().catch(() => undefined);
    }
  }

  /** writable is false while writes cannot commit (a disk fault), until one commits again: the readiness check. */
  writable(): boolean {
    return this.#health.writable;
  }

  /** needsRestart is true once the environment is fatal (MDB_PANIC): nothing can be read or written until a restart. */
  needsRestart(): boolean {
    return this.#health.fatal;
  }

  /** writeFault describes the fault while not writable. */
  writeFault(): string | undefined {
    const cause = this.#health.cause;
    return cause && describeFault(cause);
  }

  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    return this.#feed.waitForRevision(revision, timeoutMs);
  }

  currentRevision(): number {
    return this.#meta.get(REVISION) ?? 0;
  }

  marked(name: string): boolean {
    return this.#meta.get(markKey(name)) !== undefined;
  }

  async mark(name: string): Promise<void> {
    await this.#transact(() => this.#meta.put(markKey(name), Date.now()));
  }

  async seal(resource: string, minRevision: number): Promise<number> {
    if (this.#closed) throw new Error('storage is closed');
    // In the write queue like any write: writes queued before take lower revisions, later ones higher.
    const { from, to } = await this.#transact(() => {
      const current = this.#meta.get(REVISION) ?? 0;
      const revision = Math.max(current, minRevision);
      this.#meta.put(REVISION, revision);
      this.#meta.put(sealKey(resource), revision);
      return { from: current, to: revision };
    });
    // No event carries the revisions jumped over: the feed goes on past them once the lower ones are delivered.
    this.#feed.skip(from + 1, to);
    return to;
  }

  sealedAt(resource: string): number {
    return (this.#meta.get(sealKey(resource)) as number | undefined) ?? 0;
  }

  compactedRevision(): number {
    return this.#meta.get(COMPACTED) ?? 0;
  }

  /** historySize is the number of retained events (for tests of compaction). */
  historySize(): number {
    return this.#events.getKeysCount();
  }

  async get(key: ObjectKey): Promise<KubeObject | undefined> {
    return this.#current(keyTuple(key), key);
  }

  // #current reads one object: undefined when absent, CorruptObjectError when its data does not decode (lmdb-js's
  // JSON.parse throws, or it is not an object), StorageError('Damaged') when lmdb finds the file damaged.
  #current(k: Key, key: ObjectKey, txn?: ReadScope['txn']): KubeObject | undefined {
    let value: unknown;
    try {
      value = this.#objects.get(k, txn ? { transaction: txn } : undefined);
    } catch (e) {
      throw this.#readFailure(e, key);
    }
    return value === undefined ? undefined : checkDecoded(value, key);
  }

  // #readFailure is the error a failed read of `key` answers: the file's damage, or the value's.
  #readFailure(e: unknown, key?: ObjectKey): unknown {
    if (isDamage(e)) return damaged(e as Error, `${this.#path}/data.mdb`);
    if (isCorruptObject(e) || e instanceof StorageError || !key) return e;
    return new CorruptObjectError('read', [{ key, reason: corruptReason(e) }]);
  }

  async list(prefix: KeyPrefix, req?: ListRequest): Promise<ListResult> {
    checkSealed(this.sealedAt(prefix.resource), req?.revision);
    // One read scope for the counter, the scan and the history, so the snapshot is exact: the whole read is
    // synchronous (no await inside the scope), the promise only carries the result. The scope closes every cursor
    // a page leaves undrained (lmdb-read says why that matters).
    try {
      return readScope(this.#root, (scope) => this.#readList(scope, prefix, req));
    } catch (e) {
      throw this.#readFailure(e);
    }
  }

  #readList(scope: ReadScope, prefix: KeyPrefix, req: ListRequest | undefined): ListResult {
    const { txn } = scope;
    // Unfiltered, the snapshot code never looks inside an item: current objects can stay the stored bytes
    // (older states rebuilt from the history are objects, encoded below).
    const text = req?.encoded === true && !req.filter;
    // Filtered with a prefilter, objects are read as bytes too, and only those that pass it are decoded.
    // Objects whose data does not decode are passed over by the scan and fail the whole list once it is read
    // (storage/corrupt-object.ts), or, for a walk's list (skipUnreadable), are named in the result and left out;
    // bytes a prefilter let through are decoded by the filter, knowing their key (a failure there ends the read,
    // so such a list fails even when skipping: walks have no filter).
    const keyOf = new WeakMap<Uint8Array, ObjectKey>();
    const prefiltered = req?.filter && req.prefilter ? prefilteredRequest(req, req.filter, req.prefilter, keyOf) : undefined;
    const unreadable = new UnreadableCollector(req?.skipUnreadable === true && !prefiltered);
    const view: SnapshotView = {
      revision: this.#meta.get(REVISION, { transaction: txn }) ?? 0,
      compacted: this.#meta.get(COMPACTED, { transaction: txn }) ?? 0,
      scan: (p, after) => (text || prefiltered ? this.#scanText(scope, p, after, unreadable, prefiltered && keyOf) : this.#scan(scope, p, after, unreadable)),
      count: (p, after) => {
        const { start, end } = range(p, after);
        const n = this.#objects.getKeysCount({ start, end, transaction: txn });
        return after && this.#objectsText.get(keyTuple(after), { transaction: txn }) !== undefined ? n - 1 : n;
      },
      total: (p) => this.#meta.get(countKey(p.resource, p.namespace), { transaction: txn }) ?? 0,
      events: (after, upTo) => this.#eventRange(scope, after, upTo, Infinity),
    };
    let result: ListResult | undefined;
    try {
      result = readList(view, prefix, prefiltered?.req ?? req);
    } catch (e) {
      if (!isCorruptObject(e) || e.kind !== 'read') throw e;
      // An item the prefilter let through did not decode: the list fails with it and those met before it.
      for (const o of e.objects) unreadable.add(o);
    }
    unreadable.check();
    if (result === undefined) throw new Error('lmdb list read nothing');
    const skipped = unreadable.skipped();
    if (skipped) result = { ...result, unreadable: skipped };
    if (prefiltered) {
      if (req?.encoded !== true) return { ...result, items: result.items.map(prefiltered.decoded) };
      // The kept items that are stored bytes go out as they are: no stringify of what was parsed only to test it.
      const encoded = encodeItems(result.items);
      return { ...result, items: [], encoded };
    }
    if (!text) return result;
    const encoded = encodeItems(result.items);
    return { ...result, items: [], encoded };
  }

  /** readers is the use of lmdb's reader slots (a leaked read transaction shows here first). */
  readers(): ReaderSlots {
    return readerSlots(this.#root);
  }

  /** pages is how data.mdb's pages are used (free pages that stay free while it grows mean a pinned snapshot). */
  pages(): PageStats {
    return pageStats(this.#root, [this.#objects, this.#events, this.#meta] as unknown as Database<unknown, LmdbKey>[]);
  }

  /**
   * readable tells whether a read can be served now: a real read in a fresh read scope, which fails as requests do
   * when no reader slot is left (MDB_READERS_FULL) or the environment is fatal. The readiness check.
   */
  readable(): boolean {
    try {
      readScope(this.#root, ({ txn }) => this.#meta.get(REVISION, { transaction: txn }));
      return true;
    } catch (e) {
      this.#readFault = e instanceof Error ? e.message : String(e);
      return false;
    }
  }

  /** readFault is the last failure of readable(), for the log. */
  get readFault(): string | undefined {
    return this.#readFault;
  }

  async create(key: ObjectKey, obj: KubeObject): Promise<KubeObject> {
    return this.#write(key, (current) => {
      if (current !== undefined) throw new StorageError('KeyExists', `key exists: ${keyString(key)}`, key);
      return { type: 'ADDED', object: obj };
    });
  }

  async update(key: ObjectKey, tryUpdate: UpdateFn): Promise<KubeObject> {
    return this.#write(key, (current) => {
      if (current === undefined) throw new StorageError('KeyNotFound', `key not found: ${keyString(key)}`, key);
      const next = tryUpdate(cloneJson(current));
      return next === null ? { type: 'NONE', object: current } : { type: 'MODIFIED', object: next, prev: current };
    });
  }

  /**
   * rewrite stores an equivalent form of the object (Storage.rewrite): its resourceVersion is kept, the revision
   * counter does not move and no event is written, so a storage version migration adds no history (an event holds
   * the object twice: a migration of every object that way would triple the store) and sends watchers nothing.
   */
  async rewrite(key: ObjectKey, fn: UpdateFn): Promise<boolean> {
    let rewrote = false;
    await this.#write(key, (current) => {
      if (current === undefined) throw new StorageError('KeyNotFound', `key not found: ${keyString(key)}`, key);
      const next = fn(cloneJson(current));
      rewrote = next !== null;
      if (next === null) return { type: 'NONE', object: current };
      return { type: 'REWRITE', object: { ...next, metadata: { ...next.metadata, resourceVersion: current.metadata.resourceVersion } } };
    });
    return rewrote;
  }

  async delete(key: ObjectKey, check?: DeleteCheck): Promise<KubeObject> {
    return this.#write(key, (current) => {
      if (current === undefined) throw new StorageError('KeyNotFound', `key not found: ${keyString(key)}`, key);
      check?.(cloneJson(current));
      return { type: 'DELETED', object: current, prev: current };
    });
  }

  /**
   * deleteUnreadable removes an object whose data does not decode (Storage.deleteUnreadable): decided in the write
   * transaction, so an object that decodes by then (rewritten meanwhile) is refused, not deleted. The deletion is an
   * ordinary change (a revision, the counts, an event marked `u` that watchers get as the end of their watch).
   */
  async deleteUnreadable(key: ObjectKey): Promise<void> {
    const decide: Decide = (current) => {
      if (current === undefined) throw new StorageError('KeyNotFound', `key not found: ${keyString(key)}`, key);
      throw new StorageError('InvalidObject', 'unsafe deletion is not allowed because the object is decodable from storage', key);
    };
    unreadableDeletes.add(decide);
    await this.#write(key, decide);
  }

  // #putUnreadableDelete is the write of deleteUnreadable once the object proved undecodable: the object goes, the
  // event keeps only its name and namespace and why it could not be read.
  #putUnreadableDelete(k: Key, key: ObjectKey, e: CorruptObjectError): Outcome {
    const revision = (this.#meta.get(REVISION) ?? 0) + 1;
    const stub = { metadata: { name: key.name, ...(key.namespace ? { namespace: key.namespace } : {}) } } as KubeObject;
    const reason = (e.objects[0]?.reason ?? '').replace(/revision=\d+/, `revision=${revision}`);
    const entry: LogEntry = { t: 'D', k, o: stub, ts: Date.now(), u: reason };
    this.#root.childTransaction(() => {
      this.#objects.remove(k);
      this.#events.put(revision, entry);
      this.#meta.put(REVISION, revision);
      for (const c of countKeysOf(k)) this.#meta.put(c, Math.max(0, (this.#meta.get(c) ?? 0) - 1));
    });
    return { type: 'CHANGED', event: toEvent(revision, entry), entry };
  }

  watch(prefix: KeyPrefix, fromRevision: number, sink: WatchSink): WatchHandle {
    checkSealed(this.sealedAt(prefix.resource), fromRevision);
    return this.#feed.subscribe(prefix, fromRevision, sink);
  }

  /**
   * compact drops history beyond the count and age bounds (never what a running replay still needs) and resolves
   * with the new compacted revision. Runs one batch transaction at a time; concurrent calls share one run.
   */
  compact(now = Date.now()): Promise<number> {
    this.#compacting ??= this.#compact(now).finally(() => (this.#compacting = undefined));
    return this.#compacting;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    // Writes already begun commit and get their answer before the environment goes (Storage.close's contract):
    // a graceful shutdown closes the store while the last requests may still be writing.
    if (this.#writes > 0) await new Promise<void>((resolve) => (this.#whenIdle = resolve));
    await this.#compacting?.catch(() => undefined);
    this.#feed.closeAll();
    this.#health.close();
    if (this.#health.writable) await this.#health.flushed(this.#root.flushed);
    // After a failed commit lmdb's close waits for that batch's flush, which never comes; what committed is on disk.
    const closing = this.#root.close();
    if (this.#health.writable) await closing;
    else await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  }

  async #compact(now: number): Promise<number> {
    const delivered = this.#feed.lastDelivered;
    let target = Math.max(this.compactedRevision(), delivered - this.#historyEvents);
    const cutoff = now - this.#historyAgeMs;
    target = Math.max(target, this.#lastOlderThan(cutoff, delivered));
    target = Math.min(target, delivered, this.#replayFloor(delivered));
    while (!this.#closed && this.compactedRevision() < target) {
      let progressed = false;
      await this.#transact(() => {
        // Decided inside the write transaction: a replay may have started since this run began.
        const from = this.#meta.get(COMPACTED) ?? 0;
        const end = Math.min(target, this.#replayFloor(this.#feed.lastDelivered));
        if (end <= from) return;
        const keys = drain(this.#events.getKeys({ start: from + 1, end: end + 1, limit: COMPACT_BATCH }));
        const upTo = keys.length < COMPACT_BATCH ? end : (keys[keys.length - 1] as number);
        // All or nothing: events dropped without `compacted` moving would be a gap a replay cannot see.
        this.#root.childTransaction(() => {
          for (const k of keys) this.#events.remove(k);
          this.#meta.put(COMPACTED, upTo);
        });
        progressed = true;
      });
      // A replay holding the target back ends this run; the next one continues.
      if (!progressed) break;
    }
    return this.compactedRevision();
  }

  // #countAll counts the objects of a store written before the counts were kept, once, in one transaction with the
  // marker (a crash halfway leaves neither, and the next open counts again).
  #countAll(): void {
    this.#root.transactionSync(() => {
      const counts = new Map<string, number>();
      // Inside the write transaction: its cursor ends with it, however this loop ends.
      for (const k of this.#objects.getKeys()) {
        for (const c of countKeysOf(k)) counts.set(c, (counts.get(c) ?? 0) + 1);
      }
      for (const [k, n] of counts) this.#meta.put(k, n);
      this.#meta.put(COUNTED, 1);
    });
  }

  // #replayFloor is how far compaction may go with the running replays: not past the slowest one, unless that one
  // lags by more than twice the count bound.
  #replayFloor(delivered: number): number {
    return Math.max(Math.min(this.#feed.minReplayCursor(), delivered), delivered - 2 * this.#historyEvents);
  }

  // #lastOlderThan finds the newest event committed before `cutoff`, decoding one entry per batch of keys and
  // then only the batch where the cutoff falls (a long downtime leaves a whole window to drop at start).
  #lastOlderThan(cutoff: number, upTo: number): number {
    let found = 0;
    let start = this.compactedRevision() + 1;
    for (;;) {
      const keys = drain(this.#events.getKeys({ start, end: upTo + 1, limit: COMPACT_BATCH }));
      const last = keys[keys.length - 1];
      if (last === undefined) return found;
      if ((this.#events.get(last)?.ts ?? Infinity) < cutoff) {
        found = last;
        start = last + 1;
        continue;
      }
      for (const k of keys) {
        if ((this.#events.get(k)?.ts ?? Infinity) >= cutoff) return found;
        found = k;
      }
      return found;
    }
  }

  // #scan yields the objects under a prefix after `after`, decoded by lmdb-js (faster than bytes and JSON.parse of
  // our own, by a fifth). A value that does not decode throws inside the cursor's next(), which does not tell its
  // key: that is the first key after the last one yielded, read from the keys alone; it goes to `unreadable` and the
  // scan goes on after it in a new cursor (the read scope closes every one).
  *#scan(scope: ReadScope, prefix: KeyPrefix, after: ObjectKey | undefined, unreadable: UnreadableCollector): Iterable<{ key: ObjectKey; object: KubeObject }> {
    let from = after;
    // After an undecodable value the scan resumes strictly after its key (reading it again would throw again).
    let exclusiveStart = false;
    for (;;) {
      const { start, end } = range(prefix, from);
      const skip = from ? keyString(from) : undefined;
      let last: Key | undefined;
      try {
        for (const { key, value } of scope.range(this.#objects, { start, end, ...(exclusiveStart ? { exclusiveStart } : {}) })) {
          last = key;
          const k = { resource: key[0], namespace: key[1], name: key[2] };
          if (skip !== undefined && keyString(k) === skip) continue;
          let object: KubeObject;
          try {
            object = checkDecoded(value, k);
          } catch (e) {
            if (!isCorruptObject(e)) throw e;
            unreadable.add(e.objects[0] as { key: ObjectKey; reason: string });
            continue;
          }
          yield { key: k, object };
        }
        return;
      } catch (e) {
        if (isDamage(e) || isCorruptObject(e) || e instanceof StorageError) throw e;
        const bad = this.#keyAfter(scope, last ?? start, end, last !== undefined || exclusiveStart);
        if (!bad) throw e;
        unreadable.add({ key: bad, reason: corruptReason(e) });
        from = bad;
        exclusiveStart = true;
      }
    }
  }

  // #keyAfter is the first key in [start, end), or the first one after `start` when `exclusive`.
  #keyAfter(scope: ReadScope, start: Key, end: Key, exclusive: boolean): ObjectKey | undefined {
    for (const key of scope.keys(this.#objects, { start, end, limit: 2 })) {
      if (exclusive && key[0] === start[0] && key[1] === start[1] && key[2] === start[2]) continue;
      return { resource: key[0], namespace: key[1], name: key[2] };
    }
    return undefined;
  }

  // #scanText is #scan yielding each object's stored JSON bytes in place of the object (see list); bytes not framed
  // as a JSON object go to `unreadable`. `keyOf` learns each item's key when a filter decodes them later.
  #scanText(
    scope: ReadScope,
    prefix: KeyPrefix,
    after: ObjectKey | undefined,
    unreadable: UnreadableCollector,
    keyOf?: WeakMap<Uint8Array, ObjectKey>,
  ): Iterable<{ key: ObjectKey; object: KubeObject }> {
    const { start, end } = range(prefix, after);
    const skip = after ? keyString(after) : undefined;
    return scope
      .range(this.#objectsText, { start, end })
      .map(({ key, value }) => ({ key: { resource: key[0], namespace: key[1], name: key[2] }, object: value as unknown as KubeObject }))
      .filter(({ key, object }) => {
        if (skip !== undefined && keyString(key) === skip) return false;
        const bytes = object as unknown as Uint8Array;
        if (!framedAsObject(bytes)) {
          unreadable.add({ key, reason: framingReason(bytes) });
          return false;
        }
        keyOf?.set(bytes, key);
        return true;
      });
  }

  #eventRange(scope: ReadScope, after: number, upTo: number, limit: number): Iterable<ChangeEvent> {
    const opts = { start: after + 1, end: upTo + 1, ...(Number.isFinite(limit) ? { limit } : {}) };
    return scope.range(this.#events, opts).map(({ key, value }) => toEvent(key, value));
  }

  // #transact queues an lmdb write transaction and keeps the health up to date with its commit.
  #transact<T>(cb: () => T): Promise<T> {
    const p = this.#health.transaction(() => {
      const queued = this.#root.transaction(cb);
      guardBatchStart(this.#root);
      return queued;
    });
    return p.then(
      (v) => {
        this.#health.succeeded();
        return v;
      },
      (e: unknown) => {
        if (isCommitFault(e)) void faultCause(e).then((c) => this.#health.failed(c));
        throw e;
      },
    );
  }

  // #landed tells whether the event of a write whose commit reported a failure is stored all the same (only the
  // fsync after a visible commit failed). A fresh read transaction: the cached one may predate that commit.
  #landed(revision: number, entry: LogEntry): boolean {
    try {
      this.#root.resetReadTxn();
    } catch {
      // No read transaction to renew: the next read opens a fresh one anyway.
    }
    try {
      const stored = this.#events.get(revision);
      return stored !== undefined && JSON.stringify(stored) === JSON.stringify(entry);
    } catch {
      // Unreadable: the environment is fatal (MDB_PANIC), which a failed meta page write causes, before the commit
      // became visible.
      return false;
    }
  }

  // #write runs decide() inside a write transaction on the current object, applies its decision with a new
  // revision and its history entry, waits for the flush and publishes the change event. It is counted among the
  // writes close() waits for. One async function awaiting one promise (WriteHealth.commit says why).
  async #write(key: ObjectKey, decide: Decide): Promise<KubeObject> {
    if (this.#closed) throw new Error('storage is closed');
    this.#writes++;
    const k = keyTuple(key);
    let outcome: Outcome | undefined;
    try {
      try {
        await this.#health.commit(
          () => {
            const queued = this.#root.transaction(() => {
              outcome = this.#decideAndPut(k, key, decide);
            });
            guardBatchStart(this.#root);
            return queued;
          },
          () => this.#root.flushed,
        );
      } catch (e) {
        throw await this.#failedWrite(e, key, outcome);
      }
      if (outcome === undefined) throw new Error('lmdb transaction finished without a decision');
      if (outcome.type === 'NONE') return outcome.object;
      const { event } = outcome;
      this.#feed.publish(event);
      // Between timer runs the count bound may be exceeded by a little slack; past that, compact now.
      if (event.revision - this.compactedRevision() > this.#historyEvents + Math.min(COMPACT_BATCH, Math.ceil(this.#historyEvents / 10))) {
        void this.compact().catch(() => undefined);
      }
      return cloneJson(event.object);
    } finally {
      if (--this.#writes === 0) this.#whenIdle?.();
    }
  }

  // #decideAndPut is a write's part inside the transaction: decide on the current object, then put the object, its
  // history entry and the revision counter.
  #decideAndPut(k: Key, key: ObjectKey, decide: Decide): Outcome {
    let current: KubeObject | undefined;
    try {
      current = this.#current(k, key);
    } catch (e) {
      if (isCorruptObject(e) && unreadableDeletes.has(decide)) return this.#putUnreadableDelete(k, key, e);
      throw e;
    }
    const d = decide(current);
    if (d.type === 'NONE') return d;
    if (d.type === 'REWRITE') {
      this.#objects.put(k, d.object);
      return { type: 'NONE', object: d.object };
    }
    const revision = (this.#meta.get(REVISION) ?? 0) + 1;
    const object = withRevision(d.object, revision);
    const entry: LogEntry = { t: TYPE_CODE[d.type], k, o: d.type === 'DELETED' ? d.object : object, ts: Date.now() };
    if (d.type === 'MODIFIED' && d.prev) entry.p = d.prev;
    // A child transaction: a fault raised by one of these puts undoes the others (the batch may still commit).
    this.#root.childTransaction(() => {
      if (d.type === 'DELETED') this.#objects.remove(k);
      else this.#objects.put(k, object);
      this.#events.put(revision, entry);
      this.#meta.put(REVISION, revision);
      const delta = d.type === 'ADDED' ? 1 : d.type === 'DELETED' ? -1 : 0;
      if (delta !== 0) {
        for (const c of countKeysOf(k)) this.#meta.put(c, (this.#meta.get(c) ?? 0) + delta);
      }
    });
    const event: ChangeEvent =
      d.type === 'ADDED' ? { type: d.type, key, revision, object } : { type: d.type, key, revision, object, prevObject: d.prev as KubeObject };
    return { type: 'CHANGED', event, entry };
  }

  // #failedWrite is the error a write answers when its transaction, commit or flush failed.
  async #failedWrite(e: unknown, key: ObjectKey, outcome: Outcome | undefined): Promise<unknown> {
    const fault = isCommitFault(e);
    // Decided before any await: a later batch may reuse the revision of a commit that failed.
    const landed = outcome?.type === 'CHANGED' && this.#landed(outcome.event.revision, outcome.entry);
    // A commit that landed but whose flush failed is in the history a replay reads, so live watchers get it too
    // (in order). One that did not land frees its revision for the next write: nothing to publish.
    if (landed) this.#feed.publish(outcome.event);
    if (!fault) return e;
    const cause = await faultCause(e);
    this.#health.failed(cause);
    if (landed) return new Error(`the write was committed, but flushing it to disk failed (${describeFault(cause)}): it may not survive a crash`, { cause });
    return new StorageError('Unavailable', `storage cannot commit writes, the request was not applied: ${describeFault(cause)}`, key, { cause });
  }
}

// encodeItems is a list's items as JSON text: stored bytes as they are, objects (rebuilt from history) stringified.
function encodeItems(items: readonly unknown[]): Uint8Array[] {
  return items.map((o) => (o instanceof Uint8Array ? o : Buffer.from(JSON.stringify(o))));
}

// prefilteredRequest is a filtered request whose items may be stored bytes: bytes that fail the prefilter are
// rejected undecoded, the others decoded once (decoded() gives the object of an item the filter kept).
function prefilteredRequest(
  req: ListRequest,
  filter: (o: KubeObject) => boolean,
  prefilter: (json: Uint8Array) => boolean,
  keyOf: WeakMap<Uint8Array, ObjectKey>,
): {
  req: ListRequest;
  decoded: (item: KubeObject) => KubeObject;
} {
  const objects = new WeakMap<Uint8Array, KubeObject>();
  const decoded = (item: KubeObject): KubeObject => {
    if (!(item instanceof Uint8Array)) return item;
    let o = objects.get(item);
    if (!o) {
      const key = keyOf.get(item);
      o = key ? decodeStored(item, key) : (JSON.parse(Buffer.from(item.buffer, item.byteOffset, item.byteLength).toString('utf8')) as KubeObject);
      objects.set(item, o);
    }
    return o;
  };
  return {
    req: { ...req, filter: (item) => (item instanceof Uint8Array && !prefilter(item) ? false : filter(decoded(item))) },
    decoded,
  };
}

// range is the lmdb key range of a prefix, starting at `after` (inclusive; callers skip it) when given.
function range(prefix: KeyPrefix, after: ObjectKey | undefined): { start: Key; end: Key } {
  const base: unknown[] = prefix.namespace === undefined ? [prefix.resource] : [prefix.resource, prefix.namespace];
  const start = after ? keyTuple(after) : base;
  return { start: start as Key, end: [...base, MAXIMUM_KEY] as unknown as Key };
}

function toEvent(revision: number, e: LogEntry): ChangeEvent {
  const key: ObjectKey = { resource: e.k[0], namespace: e.k[1], name: e.k[2] };
  switch (e.t) {
    case 'A':
      return { type: 'ADDED', key, revision, object: e.o };
    case 'M':
      return { type: 'MODIFIED', key, revision, object: e.o, prevObject: e.p as KubeObject };
    case 'D':
      if (e.u !== undefined) return { type: 'DELETED', key, revision, object: withRevision(e.o, revision), unreadable: e.u };
      return { type: 'DELETED', key, revision, object: withRevision(e.o, revision), prevObject: e.o };
  }
}

/** withRevision returns a copy of obj with metadata.resourceVersion set to the revision. */
export function withRevision(obj: KubeObject, revision: number): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } };
}
