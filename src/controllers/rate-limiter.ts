/**
 * @module controllers/rate-limiter
 * Per-key retry delays for the work queue. `ItemExponentialFailureRateLimiter` mirrors client-go's
 * `workqueue.NewTypedItemExponentialFailureRateLimiter`, with controller-runtime's defaults (5 ms base, 1000 s cap).
 */

/** RateLimiter decides how long a key waits before its next retry. */
export interface RateLimiter {
  /** when returns the delay (ms) for the next retry of `key` and records one more failure. */
  when(key: string): number;
  /** forget drops the failure history of `key`: its next delay starts from the base again. */
  forget(key: string): void;
  /** numRequeues is how many failures of `key` were recorded since the last forget. */
  numRequeues(key: string): number;
}

/** DEFAULT_BASE_DELAY_MS is the first retry delay, same as controller-runtime's default controller rate limiter. */
export const DEFAULT_BASE_DELAY_MS = 5;
/** DEFAULT_MAX_DELAY_MS caps the delay (1000 s), same as controller-runtime's default controller rate limiter. */
export const DEFAULT_MAX_DELAY_MS = 1000 * 1000;

/**
 * ItemExponentialFailureRateLimiter waits `base * 2^failures` ms for a key, capped at `max`:
 * 5, 10, 20, 40, … ms, reaching the 1000 s cap at the 19th consecutive failure.
 */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  readonly #failures = new Map<string, number>();

  constructor(
    private readonly baseDelayMs = DEFAULT_BASE_DELAY_MS,
    private readonly maxDelayMs = DEFAULT_MAX_DELAY_MS,
  ) {}

  when(key: string): number {
    const exp = this.#failures.get(key) ?? 0;
    this.#failures.set(key, exp + 1);
    // 2 ** exp becomes Infinity for huge exponents; Math.min then still yields the cap, as client-go's overflow check does.
    return Math.min(this.baseDelayMs * 2 ** exp, this.maxDelayMs);
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}
