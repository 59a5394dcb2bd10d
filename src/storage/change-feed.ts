/**
 * @module storage/change-feed
 * ChangeFeed: the in-process fan-out of committed changes that every backend shares. It keeps a bounded window
 * of recent events so a watch can start from a recent revision, and delivers events strictly in revision order.
 *
 * ## Guarantees
 * - `publish` may be called out of order (commits resolve in batches); subscribers still see revisions ascending,
 *   each once, because events are held until every lower revision has been published or skipped.
 * - A subscription started at revision N first replays retained events > N, then receives live ones, with no gap.
 * ## Caveats
 * - The window lives in memory: after a restart a watch from an older revision gets Expired (410) and re-lists.
 */
import { StorageError } from './errors.js';
import type { ChangeEvent, KeyPrefix, WatchHandle } from './interface.js';
import { inPrefix } from './keys.js';

interface Subscriber {
  prefix: KeyPrefix;
  /** Events at or below this revision were already seen by the caller (e.g. through a list read ahead of delivery). */
  after: number;
  onEvent: (e: ChangeEvent) => void;
}

/** ChangeFeed orders, retains and fans out change events. */
export class ChangeFeed {
  readonly #capacity: number;
  readonly #history: ChangeEvent[] = [];
  readonly #pending = new Map<number, ChangeEvent | null>();
  readonly #subscribers = new Set<Subscriber>();
  #lastDelivered: number;
  #oldestKnown: number;

  /** @param startRevision the revision already committed when the feed starts; nothing at or below it is replayable. */
  constructor(startRevision: number, capacity = 10_000) {
    this.#lastDelivered = startRevision;
    this.#oldestKnown = startRevision;
    this.#capacity = capacity;
  }

  /** lastDelivered is the highest revision handed to subscribers. */
  get lastDelivered(): number {
    return this.#lastDelivered;
  }

  /** subscriberCount is the number of open subscriptions (for metrics and leak tests). */
  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /** publish hands over a committed event; delivery waits for lower revisions. */
  publish(e: ChangeEvent): void {
    this.#pending.set(e.revision, e);
    this.#drain();
  }

  /** skip records that a revision will never be published (its transaction failed). */
  skip(revision: number): void {
    if (revision > this.#lastDelivered) this.#pending.set(revision, null);
    this.#drain();
  }

  /** resync drops pending state after a failed batch and continues from the store's committed revision. */
  resync(committedRevision: number): void {
    for (let r = this.#lastDelivered + 1; r <= committedRevision; r++) if (!this.#pending.has(r)) this.#pending.set(r, null);
    this.#drain();
  }

  /** subscribe replays retained events after `fromRevision`, then streams live ones. */
  subscribe(prefix: KeyPrefix, fromRevision: number, onEvent: (e: ChangeEvent) => void): WatchHandle {
    if (fromRevision < this.#oldestKnown) {
      throw new StorageError('Expired', `too old resource version: ${fromRevision} (${this.#oldestKnown + 1})`);
    }
    const sub: Subscriber = { prefix, after: fromRevision, onEvent };
    for (const e of this.#history) if (e.revision > fromRevision && inPrefix(e.key, prefix)) onEvent(e);
    this.#subscribers.add(sub);
    return { stop: () => void this.#subscribers.delete(sub) };
  }

  /** closeAll drops every subscriber (shutdown). */
  closeAll(): void {
    this.#subscribers.clear();
  }

  #drain(): void {
    for (;;) {
      const next = this.#lastDelivered + 1;
      if (!this.#pending.has(next)) return;
      const e = this.#pending.get(next);
      this.#pending.delete(next);
      this.#lastDelivered = next;
      if (!e) continue;
      this.#history.push(e);
      if (this.#history.length > this.#capacity) {
        const dropped = this.#history.shift();
        if (dropped) this.#oldestKnown = dropped.revision;
      }
      for (const s of this.#subscribers) {
        if (e.revision <= s.after || !inPrefix(e.key, s.prefix)) continue;
        try {
          s.onEvent(e);
        } catch {
          // A subscriber's failure must not stop delivery to the others; it handles its own errors.
        }
      }
    }
  }
}
