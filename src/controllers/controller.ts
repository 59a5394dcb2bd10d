/**
 * @module controllers/controller
 * The controller loop of controller-runtime (`pkg/internal/controller`): `maxConcurrentReconciles` workers take keys
 * from a WorkQueue and call a level-based `reconcile(key)`. Entry point: `startController(options)`.
 *
 * ## Guarantees
 * - The same key is never reconciled twice at once (the queue hands a key to one worker until `done`).
 * - At most `maxConcurrentReconciles` reconciles run at once (one per worker).
 * - Success → `forget(key)` (backoff reset). `{ requeueAfter: ms }` → `forget(key)` then `addAfter(key, ms)`.
 *   A thrown error → `addRateLimited(key)` (5 ms doubling to 1000 s) and an error log. A `TerminalError` → no retry,
 *   logged and counted (as controller-runtime's `reconcile.TerminalError`).
 * - `stop()` shuts the queue down, aborts `ctx.signal`, and resolves once every running reconcile has returned.
 * ## Caveats
 * - The reconciler does not learn why it runs (event, resync, retry): it must read the current state and be idempotent.
 */
import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import type { Clock } from './clock.js';
import { queueMetrics, reconcileMetrics, type ControllerMetrics, type ReconcileResultLabel } from './metrics.js';
import { startResync, type Resync } from './resync.js';
import { WorkQueue } from './work-queue.js';

/** DEFAULT_MAX_CONCURRENT_RECONCILES is the worker count when none is given (the `--max-concurrent-reconciles` default). */
export const DEFAULT_MAX_CONCURRENT_RECONCILES = 2;

/** ReconcileResult asks for another run after `requeueAfter` ms (level-based: no reason, no `requeue: true`). */
export interface ReconcileResult {
  requeueAfter?: number;
}

/** ReconcileContext is handed to each reconcile call. */
export interface ReconcileContext {
  /** reconcileId is unique per call, also bound into `logger`, to tie log lines of one run together. */
  readonly reconcileId: string;
  /** logger is a child logger with `controller`, `key` and `reconcileId`. */
  readonly logger: Logger;
  /** signal is aborted when the controller stops; long calls should pass it on and give up early. */
  readonly signal: AbortSignal;
}

/** Reconciler brings the world in line with the desired state of `key`; it throws to get a rate-limited retry. */
// biome-ignore lint/suspicious/noConfusingVoidType: a reconciler that never requeues is a plain async function returning nothing
export type Reconciler = (key: string, ctx: ReconcileContext) => Promise<ReconcileResult | void>;

/** TerminalError marks a reconcile failure that retrying cannot fix: it is logged and counted but not requeued. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/** ControllerOptions configures startController. */
export interface ControllerOptions {
  /** name labels metrics and logs, and names the queue created when `queue` is not given. */
  name: string;
  /** queue to take keys from; default a new WorkQueue on `clock`. The controller shuts it down on stop. */
  queue?: WorkQueue;
  reconcile: Reconciler;
  /** maxConcurrentReconciles is the number of workers; default 2. */
  maxConcurrentReconciles?: number;
  clock: Clock;
  /** logger; default silent. */
  logger?: Logger;
  /** metrics registered with `controllerMetrics(registry)`; none are recorded when absent. */
  metrics?: ControllerMetrics;
}

/** Controller is a running controller. */
export interface Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  /** enqueue asks for a reconcile of `key` (deduplicated; ignored after stop). */
  enqueue(key: string): void;
  /** resync enqueues every key of `listKeys()` each `everyMs` ms until the controller stops; returns a cancel function. */
  resync(everyMs: number, listKeys: () => Iterable<string> | Promise<Iterable<string>>): () => void;
  /** running is the number of reconciles in progress. */
  running(): number;
  /** stop shuts the queue down and resolves when every running reconcile has returned; calling it again is harmless. */
  stop(): Promise<void>;
}

/** startController starts the workers of a controller and returns its handle. */
export function startController(options: ControllerOptions): Controller {
  const { name, clock, reconcile } = options;
  const workers = options.maxConcurrentReconciles ?? DEFAULT_MAX_CONCURRENT_RECONCILES;
  if (!Number.isInteger(workers) || workers < 1) throw new RangeError(`maxConcurrentReconciles must be a positive integer, got ${workers}`);
  const logger = (options.logger ?? pino({ level: 'silent' })).child({ controller: name });
  const queue = options.queue ?? new WorkQueue({ clock, metrics: options.metrics && queueMetrics(options.metrics, name) });
  const metrics = options.metrics && reconcileMetrics(options.metrics, name, workers);
  const abort = new AbortController();
  const resyncs = new Set<Resync>();
  let active = 0;
  let stopping: Promise<void> | undefined;

  // One reconcile of `key` with controller-runtime's result handling; never throws.
  const reconcileOne = async (key: string): Promise<void> => {
    const reconcileId = randomUUID();
    const log = logger.child({ key, reconcileId });
    const started = clock.now();
    let outcome: ReconcileResultLabel = 'error';
    let terminal = false;
    active++;
    metrics?.activeWorkers(active);
    try {
      const result = await reconcile(key, { reconcileId, logger: log, signal: abort.signal });
      queue.forget(key);
      const after = result?.requeueAfter;
      if (after !== undefined && after > 0) {
        queue.addAfter(key, after);
        outcome = 'requeue_after';
      } else {
        outcome = 'success';
      }
    } catch (err) {
      terminal = err instanceof TerminalError;
      if (!terminal) queue.addRateLimited(key);
      log.error({ err, terminal, requeues: queue.numRequeues(key) }, 'reconciler error');
    } finally {
      active--;
      metrics?.activeWorkers(active);
      metrics?.reconciled(outcome, clock.now() - started, terminal);
      // One line per run with its span: enough to show from the log that runs of one key never overlap.
      log.debug({ result: outcome, startedAt: started, ms: clock.now() - started }, 'reconcile done');
    }
  };

  const worker = async (): Promise<void> => {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      try {
        await reconcileOne(key);
      } finally {
        queue.done(key);
      }
    }
  };

  const loops = Array.from({ length: workers }, () => worker());
  logger.debug({ workers }, 'controller started');

  return {
    name,
    queue,
    enqueue: (key) => queue.add(key),
    resync(everyMs, listKeys) {
      const r = startResync({ clock, everyMs, listKeys, enqueue: (key) => queue.add(key), logger });
      resyncs.add(r);
      if (stopping) r.stop();
      return () => {
        r.stop();
        resyncs.delete(r);
      };
    },
    running: () => active,
    stop() {
      stopping ??= (async () => {
        for (const r of resyncs) r.stop();
        queue.shutDown();
        abort.abort(new Error(`controller ${name} stopped`));
        await Promise.all(loops);
        logger.debug('controller stopped');
      })();
      return stopping;
    },
  };
}
