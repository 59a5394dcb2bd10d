/**
 * @module storage/lmdb-read
 * The one way this code reads lmdb over more than a key: a read scope that owns a read transaction and every cursor
 * opened in it, and closes them all when the read ends, however it ends.
 *
 * ## Why (lmdb-js 3.5.6, read.js)
 * A range iterator holds its transaction (refCount) until it runs to its end or its `return()` is called. Stopping
 * early without `return()` (a full page, a filter that throws, a `next()` that throws on a value it cannot decode)
 * leaves the cursor open. Once lmdb-js renews its shared read transaction (every macrotask), the old one is orphaned
 * with refCount > 0 and is never aborted: it keeps one of the environment's 126 reader slots and pins every page
 * freed after its snapshot. Under paginated lists with concurrent writes that is MDB_READERS_FULL for every request
 * after a few hundred pages, and a file that grows without bound. `txn.done()` alone does not help:
 * it only decrements the count the open cursor still holds.
 */
import type { Database, Key, RangeIterable, RangeOptions, RootDatabase } from 'lmdb';

/** ReadTxn is lmdb-js's read transaction as useReadTransaction returns it. */
export type ReadTxn = ReturnType<RootDatabase['useReadTransaction']>;

/** ReadScope is one read transaction and the ranges read in it. */
export interface ReadScope {
  readonly txn: ReadTxn;
  /** range is db.getRange in this transaction; its cursor is closed when the scope ends, even if not drained. */
  range<V, K extends Key>(db: Database<V, K>, opts: RangeOptions): RangeIterable<{ key: K; value: V }>;
  /** keys is db.getKeys in this transaction, closed the same way. */
  keys<V, K extends Key>(db: Database<V, K>, opts: RangeOptions): RangeIterable<K>;
}

type Closable = { return?(value?: unknown): unknown };

/**
 * readScope opens a read transaction on `root`, runs `read` in it and, when `read` returns or throws, closes every
 * cursor it opened and ends the transaction. `read` is synchronous: a read transaction held across an await would
 * pin the pages freed meanwhile (see asyncReadScope for the one reader that must).
 */
export function readScope<T>(root: RootDatabase, read: (scope: ReadScope) => T): T {
  const { scope, close } = openScope(root);
  try {
    return read(scope);
  } finally {
    close();
  }
}

/**
 * asyncReadScope is readScope for a read that must see one snapshot across awaits (a backup streaming the whole
 * store): it pins pages for its whole run, so only what needs a consistent copy of everything uses it.
 */
export async function asyncReadScope<T>(root: RootDatabase, read: (scope: ReadScope) => Promise<T>): Promise<T> {
  const { scope, close } = openScope(root);
  try {
    return await read(scope);
  } finally {
    close();
  }
}

function openScope(root: RootDatabase): { scope: ReadScope; close(): void } {
  const txn = root.useReadTransaction();
  const open: Closable[] = [];
  // Each iteration opens its own cursor: all are tracked, not just the first. The cursor's own iterator is the one
  // kept (what .map and .filter chain on top holds nothing), so the range keeps lmdb-js's chaining.
  const tracked = <T>(source: RangeIterable<T>): RangeIterable<T> => {
    const iterate = source[Symbol.iterator].bind(source) as (...a: unknown[]) => Iterator<T>;
    Object.defineProperty(source, Symbol.iterator, {
      value: (...a: unknown[]) => {
        const it = iterate(...a);
        open.push(it);
        return it;
      },
    });
    return source;
  };
  const scope: ReadScope = {
    txn,
    range: (db, opts) => tracked(db.getRange({ ...opts, transaction: txn })),
    keys: (db, opts) => tracked(db.getKeys({ ...opts, transaction: txn })),
  };
  const close = () => {
    let failure: unknown;
    // Cursors first: aborting a transaction with an open cursor is unsafe. return() on a drained one is a no-op.
    for (const it of open.splice(0)) {
      try {
        it.return?.();
      } catch (e) {
        failure ??= e;
      }
    }
    txn.done();
    if (failure !== undefined) throw failure;
  };
  return { scope, close };
}

/** drain reads an iterable to an array, closing its iterator even when reading it throws. */
export function drain<T>(source: Iterable<T>): T[] {
  const it = source[Symbol.iterator]();
  const out: T[] = [];
  try {
    for (let r = it.next(); !r.done; r = it.next()) out.push(r.value);
    return out;
  } finally {
    (it as Closable).return?.();
  }
}

/** ReaderSlots is the use of the environment's reader table (all processes that have it open). */
export interface ReaderSlots {
  /** Slots held: a leak shows as this climbing towards max while no request runs. */
  held: number;
  /** Held slots that pin a snapshot (the others are kept for reuse and pin nothing). */
  active: number;
  max: number;
  /** How many write transactions the oldest pinned snapshot is behind: pages freed since then cannot be reused. */
  oldestLag: number;
}

/** readerSlots reads lmdb's reader table. */
export function readerSlots(root: RootDatabase): ReaderSlots {
  // mdb_reader_list prints a header and one line per held slot: pid, thread, and the snapshot's txnid ('-' when
  // the slot is kept for reuse but holds no snapshot).
  const lines = root
    .readerList()
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
    .filter(Boolean);
  const txnids = lines
    .map((l) => l.split(/\s+/)[2])
    .filter((t): t is string => t !== undefined && t !== '-')
    .map(Number);
  const stats = root.getStats() as { maxReaders?: number; lastTxnId?: number };
  const last = stats.lastTxnId ?? 0;
  const oldestLag = txnids.length ? Math.max(0, last - Math.min(...txnids)) : 0;
  return { held: lines.length, active: txnids.length, max: stats.maxReaders ?? 126, oldestLag };
}

/** PageStats is how the pages of data.mdb are used, in pages of `pageSize` bytes. */
export interface PageStats {
  pageSize: number;
  /** Pages the map can hold before lmdb-js grows it. */
  map: number;
  /** Pages of the file in use so far (its high-water mark): the file's size once synced. */
  file: number;
  /** Pages in the trees of the latest snapshot. */
  used: number;
  /** The rest of the file: free pages, reusable once no reader's snapshot still needs them. */
  free: number;
}

/** pageStats reads the page use of an environment and its named databases (all of them, or the stats are wrong). */
export function pageStats(root: RootDatabase, dbs: readonly Database<unknown, Key>[]): PageStats {
  type Tree = { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number };
  const pages = (t: Tree) => t.treeBranchPageCount + t.treeLeafPageCount + t.overflowPages;
  const env = root.getStats() as Tree & { pageSize: number; mapSize: number; lastPageNumber: number; free: Tree; root: Tree };
  // The two meta pages, the main tree (which names the databases), the free list's own tree and each database's.
  const used = 2 + pages(env.root) + pages(env.free) + dbs.reduce((n, db) => n + pages(db.getStats() as Tree), 0);
  const file = env.lastPageNumber + 1;
  return { pageSize: env.pageSize, map: Math.floor(env.mapSize / env.pageSize), file, used, free: Math.max(0, file - used) };
}
