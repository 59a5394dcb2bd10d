/**
 * @module storage/lmdb-faults
 * Faults of the disk under lmdb-js (3.5.6): how a commit that cannot be written shows up, and WriteHealth, which
 * LmdbStorage uses to say whether writes can commit now and to find out when they can again.
 *
 * ## What lmdb-js does (write.js, writer.cpp)
 * - Writes of one event-loop turn share one write transaction. When its commit fails (ENOSPC, or EIO when a
 *   pwrite comes back short on a full disk, or a failed fsync), every write of the batch rejects with
 *   `Error('Commit failed (see commitError for details)')`; `commitError` is a promise rejected with the real
 *   cause. Nothing of the batch is visible (lmdb aborts the transaction), except when only the fsync failed: the
 *   commit was then already visible. The environment stays usable: once space is freed, the next commit works.
 * - A write of that batch that nobody awaits (lmdb's own "batch start" instruction) rejects too: see
 *   `guardBatchStart`.
 * - `db.flushed` is the flush promise of the *latest* batch, and a failed batch's flush promise never settles: a
 *   write that committed and then awaits `flushed` while a later batch fails would wait forever
 *   (`WriteHealth.flushed` bounds that wait).
 * - The map grows by itself (mdb_page_alloc doubles it, an lmdb-js addition), so MDB_MAP_FULL only appears if
 *   the address space cannot be mapped: the first failure under normal growth is the disk's.
 * - A failed write of a meta page (an I/O error there) marks the environment fatal: every read and write after it
 *   fails with MDB_PANIC until the process reopens it, and writes queued then are never settled by lmdb-js (its
 *   writer returns before flagging them). WriteHealth settles those itself and reports that a restart is needed.
 */

import { InFlightList, type Linked } from '../util/in-flight-list.js';

const MDB_MAP_FULL = -30792;
const MDB_PANIC = -30795;

/**
 * FAULTS words the error codes a disk fault surfaces with (errno values as lmdb passes them on, and MDB_*), as Go's
 * syscall.Errno does: lmdb's own messages carry buffer addresses and page positions no client needs.
 */
const FAULTS: ReadonlyMap<number, string> = new Map([
  [5, 'input/output error (EIO)'],
  [27, 'file too large (EFBIG)'],
  [28, 'no space left on device (ENOSPC)'],
  [30, 'read-only file system (EROFS)'],
  [122, 'disk quota exceeded (EDQUOT)'],
  [MDB_MAP_FULL, 'environment mapsize limit reached (MDB_MAP_FULL)'],
  [MDB_PANIC, 'environment had a fatal error and must be reopened (MDB_PANIC)'],
]);

/** How long a failed write waits for lmdb to report the cause before answering without it. */
const CAUSE_WAIT_MS = 1000;
/** Probes of a store that cannot commit: first after this many ms, doubling up to PROBE_MAX_MS. */
const PROBE_FIRST_MS = 500;
const PROBE_MAX_MS = 5000;

type Thenable = PromiseLike<unknown>;

function commitErrorOf(e: unknown): Promise<unknown> | undefined {
  const c = (e as { commitError?: unknown } | null)?.commitError;
  return c && typeof (c as Thenable).then === 'function' ? (c as Promise<unknown>) : undefined;
}

// faultCode is the fault an lmdb error stands for: its code, or the MDB_* name in its message (a read of a fatal
// environment fails with EINVAL "Invalid argument: MDB_PANIC: ...").
function faultCode(e: unknown): number | undefined {
  if (!(e instanceof Error)) return undefined;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'number' && FAULTS.has(code)) return code;
  if (e.message.includes('MDB_PANIC')) return MDB_PANIC;
  if (e.message.includes('MDB_MAP_FULL')) return MDB_MAP_FULL;
  return undefined;
}

function nativeFault(e: unknown): e is Error {
  return faultCode(e) !== undefined;
}

/** isFatal tells whether a fault left the environment unusable until it is reopened (MDB_PANIC). */
export function isFatal(e: unknown): boolean {
  return faultCode(e) === MDB_PANIC;
}

/** fatalError is the error WriteHealth settles writes with once the environment is fatal. */
function fatalError(cause?: Error): Error {
  return Object.assign(new Error('MDB_PANIC: the environment had a fatal error', cause ? { cause } : {}), { code: MDB_PANIC });
}

/**
 * isCommitFault tells whether an error from an lmdb write means the store could not write (a failed commit, or a
 * disk fault raised inside the transaction), as opposed to the transaction callback's own error. It also marks
 * lmdb's `commitError` promise as handled, so that it cannot surface as an unhandled rejection.
 */
export function isCommitFault(e: unknown): boolean {
  const pending = commitErrorOf(e);
  if (pending) {
    pending.catch(() => undefined);
    return true;
  }
  return nativeFault(e);
}

/** faultCause resolves with the cause of a commit fault (lmdb reports it through `commitError`, normally at once). */
export async function faultCause(e: unknown): Promise<Error> {
  if (nativeFault(e)) return e;
  const pending = commitErrorOf(e);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, CAUSE_WAIT_MS, undefined);
  });
  const cause = pending
    ? await Promise.race([
        pending.then(
          () => undefined,
          (c: unknown) => c,
        ),
        late,
      ])
    : undefined;
  clearTimeout(timer);
  if (cause instanceof Error) return cause;
  return new Error(e instanceof Error ? e.message : String(e));
}

/** describeFault words a cause for a Status message: `no space left on device (ENOSPC)`. */
export function describeFault(cause: Error): string {
  const code = faultCode(cause);
  return (code !== undefined && FAULTS.get(code)) || 'the commit failed';
}

const guarded = new WeakSet<object>();

/**
 * guardBatchStart handles the rejection of lmdb's batch start. lmdb-js begins an event-turn batch with an
 * instruction of its own, queued with setImmediate at the turn's first write; when the commit promise of the turn
 * was reset meanwhile, that instruction gets a promise nobody holds, and a failed commit rejects it unhandled
 * (an exit under --unhandled-rejections=strict). Call this after queuing a write: in the next check phase, after
 * lmdb's immediate, `committed` is that promise (or one our writes already hold), and it gets a handler.
 */
export function guardBatchStart(root: { committed: PromiseLike<unknown> }): void {
  if (guarded.has(root)) return;
  guarded.add(root);
  setImmediate(() => {
    guarded.delete(root);
    // Both handlers: lmdb's `committed` calls the fulfilment handler unconditionally in one of its branches.
    root.committed.then(
      () => undefined,
      (e: unknown) => void isCommitFault(e),
    );
  });
}

/** Waiter is one write between queuing its transaction and its flush (see WriteHealth.commit). */
interface Waiter extends Linked<Waiter> {
  committed: boolean;
  /** Settles the write with the commit's value (a later batch failed while it waited for the flush). */
  release(): void;
  /** Rejects the write (the environment turned fatal). */
  fail(e: Error): void;
}

/** WriteHealthOptions wire WriteHealth to its store. */
export interface WriteHealthOptions {
  /** probe writes something tiny; it rejects while commits fail. */
  probe: () => Promise<unknown>;
  /**
   * broken tells whether the environment is fatal now (a read fails with MDB_PANIC). Asked after each fault: the
   * failed meta page write that makes it fatal reports only its own errno.
   */
  broken?: () => boolean;
  /** onChange is told when writes stop or start committing again. */
  onChange?: (writable: boolean, cause?: Error) => void;
}

/**
 * WriteHealth: whether the last commit succeeded. After a fault it probes with a tiny write (500 ms, doubling to
 * 5 s) until one commits, so readiness recovers without any client write; a client write that commits recovers
 * it at once.
 */
export class WriteHealth {
  readonly #opts: WriteHealthOptions;
  #cause: Error | undefined;
  #probeTimer: NodeJS.Timeout | undefined;
  #probeDelay = PROBE_FIRST_MS;
  #closed = false;
  /**
   * Writes between queuing and flush: released by a commit failure (a later batch that fails leaves lmdb's flush
   * promise pending forever) and failed by a fatal fault (lmdb-js never settles their transactions then).
   */
  readonly #waiters = new InFlightList<Waiter>();

  constructor(opts: WriteHealthOptions) {
    this.#opts = opts;
  }

  /** writable is false from a commit fault until a commit succeeds again. */
  get writable(): boolean {
    return this.#cause === undefined;
  }

  /** fatal is true once a fault left the environment unusable: reads and writes fail until a restart. */
  get fatal(): boolean {
    return this.#cause !== undefined && isFatal(this.#cause);
  }

  /** cause is the last fault while not writable. */
  get cause(): Error | undefined {
    return this.#cause;
  }

  /** succeeded records a commit that worked. */
  succeeded(): void {
    if (this.#cause === undefined || this.fatal) return;
    this.#cause = undefined;
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
    this.#probeDelay = PROBE_FIRST_MS;
    this.#opts.onChange?.(true);
  }

  /** failed records a commit fault (the cause may follow: see faultCause). */
  failed(cause: Error): void {
    for (const w of this.#waiters) if (w.committed) w.release();
    if (this.fatal) return;
    const was = this.#cause;
    this.#cause = !isFatal(cause) && this.#opts.broken?.() ? fatalError(cause) : cause;
    if (was === undefined || this.fatal) this.#opts.onChange?.(false, this.#cause);
    if (!this.fatal) {
      this.#scheduleProbe();
      return;
    }
    for (const w of this.#waiters) w.fail(fatalError());
  }

  /**
   * commit settles once the transaction `start` queues has committed and its batch is flushed to disk, with the
   * transaction's value; it rejects as the transaction does, or with MDB_PANIC when the environment turns fatal
   * first (lmdb-js would leave it pending forever). Once fatal, it rejects at once without queuing anything.
   *
   * `flushed` is asked right after queuing, so that it names this transaction's batch: lmdb's `flushed` is the
   * latest batch's flush, which after the commit may already be the next batch's (an fsync more to wait for).
   * After a commit, a failure of a later batch releases the wait: lmdb-js resolves a batch's writes only after
   * its commit returned, and with overlappingSync that return comes after the batch's own fsync
   * (mdb_txn_commit), so the commit is on disk either way.
   *
   * One promise per write, settled straight from lmdb's callbacks: every extra promise hop between lmdb's commit
   * and the answer let lmdb's next batch start without the follow-up writes of this one, so batches shrank and
   * write throughput fell (measured: 15-30% with a wrapper promise per stage).
   */
  commit<T>(start: () => Promise<T>, flushed: () => PromiseLike<unknown>): Promise<T> {
    if (this.fatal) return Promise.reject(fatalError());
    return new Promise<T>((resolve, reject) => {
      let value: T;
      let isFlushed = false;
      const done = () => this.#waiters.remove(waiter);
      const waiter: Waiter = {
        prev: undefined,
        next: undefined,
        committed: false,
        release: () => {
          done();
          resolve(value);
        },
        fail: (e) => {
          done();
          reject(e);
        },
      };
      let queued: Promise<T>;
      try {
        queued = start();
      } catch (e) {
        reject(e);
        return;
      }
      this.#waiters.add(waiter);
      const onFlushed = () => {
        isFlushed = true;
        if (waiter.committed) waiter.release();
      };
      flushed().then(onFlushed, (e: unknown) => {
        isCommitFault(e);
        onFlushed();
      });
      queued.then(
        (v) => {
          value = v;
          waiter.committed = true;
          this.succeeded();
          if (isFlushed) waiter.release();
        },
        (e: unknown) => waiter.fail(e as Error),
      );
    });
  }

  /**
   * transaction settles as the transaction `start` queues does (not waiting for its flush), or rejects with
   * MDB_PANIC when the environment turns fatal first. Once fatal, it rejects at once without queuing anything.
   */
  transaction<T>(start: () => Promise<T>): Promise<T> {
    return this.commit(start, () => Promise.resolve());
  }

  /** flushed waits for lmdb's `flushed` after a commit of ours succeeded, released by a later commit failure. */
  flushed(flush: PromiseLike<unknown>): Promise<void> {
    return this.commit(
      () => Promise.resolve(),
      () => flush,
    );
  }

  /** close stops probing. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#probeTimer);
    this.#probeTimer = undefined;
  }

  #scheduleProbe(): void {
    if (this.#closed || this.#probeTimer) return;
    this.#probeTimer = setTimeout(() => {
      if (this.fatal) return;
      this.#probeDelay = Math.min(this.#probeDelay * 2, PROBE_MAX_MS);
      this.#opts.probe().then(
        () => {
          this.#probeTimer = undefined;
          this.succeeded();
        },
        async (e: unknown) => {
          this.#probeTimer = undefined;
          if (this.#closed) return;
          if (isCommitFault(e)) this.failed(await faultCause(e));
          else this.#scheduleProbe();
        },
      );
    }, this.#probeDelay);
    this.#probeTimer.unref();
  }
}
