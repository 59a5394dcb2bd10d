/**
 * @module storage/revision-waiters
 * Readers waiting for a revision (a list or watch at a resourceVersion this process has not seen committed yet),
 * woken when the revision is reached, told false at their timeout or when the storage closes. Nothing polls.
 */

interface Waiter {
  revision: number;
  done(reached: boolean): void;
}

/** RevisionWaiters is the set of such readers of one storage. */
export class RevisionWaiters {
  readonly #waiting = new Set<Waiter>();

  /** wait resolves true once reached(revision) is called (at once if `current` has it), false after `timeoutMs`. */
  wait(revision: number, current: number, timeoutMs: number): Promise<boolean> {
    if (revision <= current) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w: Waiter = {
        revision,
        done: (reached) => {
          clearTimeout(timer);
          this.#waiting.delete(w);
          resolve(reached);
        },
      };
      const timer = setTimeout(() => w.done(false), timeoutMs);
      this.#waiting.add(w);
    });
  }

  /** reached wakes every reader waiting for `revision` or less. */
  reached(revision: number): void {
    for (const w of this.#waiting) if (w.revision <= revision) w.done(true);
  }

  /** closeAll tells every reader its revision will not come. */
  closeAll(): void {
    for (const w of [...this.#waiting]) w.done(false);
  }
}
