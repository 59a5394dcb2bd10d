/**
 * @module storage/history
 * History: the retained change events a watch replays and an older list snapshot is rebuilt from. lmdb keeps it
 * on disk (see lmdb-storage); MemoryHistory is the in-process version for MemoryStorage.
 *
 * ## Guarantees
 * - Every event with a revision above `compacted()` is retained; nothing at or below it is.
 */
import type { ChangeEvent } from './interface.js';

/** History is a read view of retained events. */
export interface History {
  /** compacted is the highest revision no longer retained (0 when nothing was ever dropped). */
  compacted(): number;
  /** range returns retained events with after < revision ≤ upTo, ascending, at most `limit` of them. */
  range(after: number, upTo: number, limit: number): ChangeEvent[];
}

/** MemoryHistory keeps the most recent events in an array, bounded by count. */
export class MemoryHistory implements History {
  readonly #events: ChangeEvent[] = [];
  readonly #capacity: number;
  #compacted: number;

  constructor(startRevision: number, capacity: number) {
    this.#compacted = startRevision;
    this.#capacity = capacity;
  }

  compacted(): number {
    return this.#compacted;
  }

  append(e: ChangeEvent): void {
    this.#events.push(e);
    if (this.#events.length > this.#capacity) {
      const dropped = this.#events.splice(0, this.#events.length - this.#capacity);
      this.#compacted = dropped[dropped.length - 1]?.revision ?? this.#compacted;
    }
  }

  range(after: number, upTo: number, limit: number): ChangeEvent[] {
    // Revisions are dense but may skip (failed transactions): find the start by binary search.
    let lo = 0;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.#events[mid] as ChangeEvent).revision <= after) lo = mid + 1;
      else hi = mid;
    }
    const out: ChangeEvent[] = [];
    for (let i = lo; i < this.#events.length && out.length < limit; i++) {
      const e = this.#events[i] as ChangeEvent;
      if (e.revision > upTo) break;
      out.push(e);
    }
    return out;
  }
}
