/**
 * @module controllers/clock
 * The time source of the controller runtime (work queue delays, backoff, resync, leases). Production code uses
 * `realClock`; tests inject `FakeClock` (./fake-clock.ts) so timing is deterministic and needs no real sleeps.
 */

/** Timer is an opaque handle returned by `Clock.setTimeout`, only good for passing back to `Clock.clearTimeout`. */
export type Timer = object;

/** Clock is the minimal time API the controllers depend on. `now()` is in milliseconds since the epoch. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): Timer;
  clearTimeout(timer: Timer): void;
}

/** realClock is the process clock: `Date.now()` and the Node.js timers. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, Math.max(0, ms)),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

/** sleep resolves after `ms` on the given clock (a fake clock resolves it when advanced past the deadline). */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimeout(resolve, ms);
  });
}
