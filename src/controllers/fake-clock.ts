/**
 * @module controllers/fake-clock
 * A manual `Clock` for tests: time moves only when the test calls `advance` / `advanceAsync`.
 *
 * ## Guarantees
 * - Timers fire in due-time order; timers due at the same instant fire in the order they were created.
 * - While a timer runs, `now()` equals its due time, so code that re-arms itself sees the time it expects.
 * - A timer created by another timer during an advance fires in the same advance if it falls due inside the window.
 * ## Caveats
 * - `advance` is synchronous: promise continuations started by a timer run only after it returns. Use `advanceAsync`
 *   when the code under test awaits between timers (it lets queued microtasks settle before each timer and at the end).
 */
import type { Clock, Timer } from './clock.js';

interface FakeTimer {
  readonly id: number;
  readonly due: number;
  readonly fn: () => void;
}

/** flushPromises resolves after every microtask queued so far (and those they queue) has run. */
export function flushPromises(): Promise<void> {
  // setImmediate runs only after the microtask queue is drained completely.
  return new Promise((resolve) => setImmediate(resolve));
}

/** FakeClock is a deterministic Clock; its time starts at `start` (ms since the epoch). */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers = new Map<number, FakeTimer>();

  constructor(start = Date.UTC(2025, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const timer: FakeTimer = { id: this.#nextId++, due: this.#now + Math.max(0, ms), fn };
    this.#timers.set(timer.id, timer);
    return timer;
  }

  clearTimeout(timer: Timer): void {
    this.#timers.delete((timer as FakeTimer).id);
  }

  /** pending is the number of timers not yet fired or cleared. */
  pending(): number {
    return this.#timers.size;
  }

  /** nextDue is the due time of the earliest pending timer, or undefined when none is pending. */
  nextDue(): number | undefined {
    return this.#earliest()?.due;
  }

  /** advance moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (let t = this.#takeDue(target); t; t = this.#takeDue(target)) t.fn();
    this.#now = target;
  }

  /** advanceAsync is `advance` that lets promise chains settle before each timer and after the last one. */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flushPromises();
    for (let t = this.#takeDue(target); t; t = this.#takeDue(target)) {
      t.fn();
      await flushPromises();
    }
    this.#now = target;
    await flushPromises();
  }

  #earliest(): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const t of this.#timers.values()) if (!best || t.due < best.due || (t.due === best.due && t.id < best.id)) best = t;
    return best;
  }

  // Removes and returns the earliest timer due at or before `target`, moving time to its due time.
  #takeDue(target: number): FakeTimer | undefined {
    const t = this.#earliest();
    if (!t || t.due > target) return undefined;
    this.#timers.delete(t.id);
    this.#now = Math.max(this.#now, t.due);
    return t;
  }
}
