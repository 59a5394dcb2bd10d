/**
 * @module controllers/resync
 * Periodic resync: every `everyMs`, list all keys and enqueue each one, so a level-based reconciler revisits every
 * object even when no event arrives (the informer resync period of client-go / controller-runtime's SyncPeriod).
 *
 * ## Guarantees
 * - The first pass runs `everyMs` after start (the initial list already enqueues everything).
 * - Passes never overlap: the next one is scheduled when the current listing has finished.
 * ## Errors
 * - A failing `listKeys` is logged and retried at the next period; it never stops the resync.
 */
import type { Logger } from 'pino';
import type { Clock, Timer } from './clock.js';

/** ResyncOptions configures startResync. */
export interface ResyncOptions {
  clock: Clock;
  everyMs: number;
  /** listKeys returns every key the controller owns (for example from an informer's cache). */
  listKeys: () => Iterable<string> | Promise<Iterable<string>>;
  enqueue: (key: string) => void;
  logger?: Logger;
}

/** Resync is a running periodic resync. */
export interface Resync {
  /** stop cancels future passes; a listing in progress still enqueues its keys unless the queue is shut down. */
  stop(): void;
}

/** startResync starts enqueueing every key of `listKeys()` each `everyMs` milliseconds. */
export function startResync(options: ResyncOptions): Resync {
  const { clock, everyMs, listKeys, enqueue, logger } = options;
  if (!(everyMs > 0)) throw new RangeError(`resync period must be positive, got ${everyMs}`);
  let timer: Timer | undefined;
  let stopped = false;

  const pass = async (): Promise<void> => {
    timer = undefined;
    try {
      const keys = await listKeys();
      if (!stopped) for (const key of keys) enqueue(key);
    } catch (err) {
      logger?.error({ err }, 'resync failed to list keys');
    }
    arm();
  };
  const arm = (): void => {
    if (!stopped) timer = clock.setTimeout(() => void pass(), everyMs);
  };

  arm();
  return {
    stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
    },
  };
}
