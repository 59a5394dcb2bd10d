/**
 * @module controllers/work-queue
 * A rate-limited, delaying work queue of string keys with the semantics of client-go's `workqueue`
 * (`Typed` + `delayingType` + `rateLimitingType`). Entry point: `new WorkQueue({ clock })`; workers loop
 * `key = await q.get()` → reconcile → `q.done(key)` until `get()` resolves `undefined`.
 *
 * ## Guarantees
 * - Deduplication: a key that is waiting is queued once, however often it is added.
 * - No key is handed out twice at once: a key added while it is being processed is only marked dirty and goes back
 *   to the queue when `done(key)` is called.
 * - Keys are handed out in the order they became ready (FIFO).
 * - `addAfter` keeps one pending deadline per key: the earliest one wins, a later deadline is ignored.
 * ## Caveats
 * - A pending `addAfter` is not cancelled by an immediate `add` of the same key: the key runs now and again at the
 *   deadline (as in client-go; reconciles are level-based, an extra run is harmless).
 * - After `shutDown()` every `get()` resolves `undefined`, even if keys were still queued; adds are ignored.
 */
import { realClock, type Clock, type Timer } from './clock.js';
import { ItemExponentialFailureRateLimiter, type RateLimiter } from './rate-limiter.js';

/** WorkQueueMetrics receives the queue's measurements (see metrics.ts for the Prometheus implementation). */
export interface WorkQueueMetrics {
  /** added is called once per key that enters the queue; deduplicated adds are not counted (as client-go). */
  added(): void;
  /** depth reports how many keys wait to be processed (queued, or dirty while being processed). */
  depth(n: number): void;
  /** retried is called for every delayed add (`addAfter`, `addRateLimited`), as client-go counts retries. */
  retried(): void;
}

/** WorkQueueOptions configures a WorkQueue; every field has a default. */
export interface WorkQueueOptions {
  /** clock drives `addAfter` delays; default `realClock`. */
  clock?: Clock;
  /** rateLimiter computes `addRateLimited` delays; default 5 ms doubling to 1000 s (controller-runtime's default). */
  rateLimiter?: RateLimiter;
  metrics?: WorkQueueMetrics;
}

interface Delayed {
  readonly due: number;
  readonly timer: Timer;
}

/** WorkQueue is a deduplicating, delaying, rate-limited queue of keys (see the module doc for its guarantees). */
export class WorkQueue {
  readonly #clock: Clock;
  readonly #rateLimiter: RateLimiter;
  readonly #metrics: WorkQueueMetrics | undefined;
  // Ready keys in FIFO order; `#head` avoids O(n) Array.shift on long queues.
  #queue: string[] = [];
  #head = 0;
  // Keys that need processing: queued ones, and ones re-added while being processed.
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #delayed = new Map<string, Delayed>();
  #waiters: Array<(key: string | undefined) => void> = [];
  #wakeScheduled = false;
  #shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#clock = options.clock ?? realClock;
    this.#rateLimiter = options.rateLimiter ?? new ItemExponentialFailureRateLimiter();
    this.#metrics = options.metrics;
  }

  /** add marks `key` as needing processing; a no-op if it already waits or the queue is shut down. */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    this.#metrics?.added();
    this.#reportDepth();
    // A key being processed goes back to the queue in done(), never to a second worker now.
    if (this.#processing.has(key)) return;
    this.#push(key);
  }

  /** addAfter adds `key` once `ms` have passed (at once when `ms <= 0`); an earlier pending deadline for it wins. */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    this.#metrics?.retried();
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const due = this.#clock.now() + ms;
    const pending = this.#delayed.get(key);
    if (pending && pending.due <= due) return;
    if (pending) this.#clock.clearTimeout(pending.timer);
    const timer = this.#clock.setTimeout(() => {
      this.#delayed.delete(key);
      this.add(key);
    }, ms);
    this.#delayed.set(key, { due, timer });
  }

  /** addRateLimited adds `key` after its backoff delay and counts one more failure for it. */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) return;
    this.addAfter(key, this.#rateLimiter.when(key));
  }

  /** forget resets the backoff of `key` (call it when the key was processed successfully). */
  forget(key: string): void {
    this.#rateLimiter.forget(key);
  }

  /** numRequeues is the number of rate-limited adds of `key` since it was last forgotten. */
  numRequeues(key: string): number {
    return this.#rateLimiter.numRequeues(key);
  }

  /**
   * get resolves the next ready key, waiting for one if needed, and marks it as being processed: the caller must
   * call `done(key)` afterwards. Resolves `undefined` once the queue is shut down.
   */
  get(): Promise<string | undefined> {
    if (this.#shuttingDown) return Promise.resolve(undefined);
    if (this.len() > 0) return Promise.resolve(this.#take());
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** done ends the processing of `key`; if it was added meanwhile, it is queued again now. */
  done(key: string): void {
    if (!this.#processing.delete(key)) return;
    if (this.#dirty.has(key)) this.#push(key);
  }

  /** len is the number of keys ready to be handed out by `get()`. */
  len(): number {
    return this.#queue.length - this.#head;
  }

  /** shuttingDown tells whether `shutDown()` was called. */
  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** shutDown stops the queue: pending and future `get()` calls resolve `undefined`; pending delays are dropped. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) this.#clock.clearTimeout(timer);
    this.#delayed.clear();
    this.#queue = [];
    this.#head = 0;
    this.#dirty.clear();
    this.#reportDepth();
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve(undefined);
  }

  #push(key: string): void {
    this.#queue.push(key);
    // Wake waiting workers in a microtask rather than now, like client-go's cond.Signal: adds of the same key in
    // the current tick then still coalesce into one run instead of marking the just-taken key dirty.
    if (this.#waiters.length > 0 && !this.#wakeScheduled) {
      this.#wakeScheduled = true;
      queueMicrotask(() => this.#wake());
    }
  }

  // Hands ready keys to waiting workers; #take marks each as processing in the same step, so no other get() can
  // receive it in between.
  #wake(): void {
    this.#wakeScheduled = false;
    while (this.#waiters.length > 0 && this.len() > 0) this.#waiters.shift()!(this.#take());
  }

  #take(): string {
    const key = this.#queue[this.#head++]!;
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    this.#processing.add(key);
    this.#dirty.delete(key);
    this.#reportDepth();
    return key;
  }

  #reportDepth(): void {
    this.#metrics?.depth(this.#dirty.size);
  }
}
