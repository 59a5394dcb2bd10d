/**
 * @module storage/change-feed
 * ChangeFeed: the in-process fan-out of committed changes that every backend shares. Live events are handed to
 * subscribers as they commit; a subscription from an older revision first replays the backend's History.
 *
 * ## Guarantees
 * - `publish` may be called out of order (commits resolve in batches); subscribers still see revisions ascending,
 *   each once, because events are held until every lower revision has been published. A write that fails before
 *   committing does not consume its revision (the next write reuses it), so there are no holes to wait on.
 * - A subscription from revision N replays retained events > N from the History in batches paced by
 *   `sink.ready()`, reading on past changes committed meanwhile, and turns live in the same turn it catches up with
 *   the last delivered revision. Nothing is held in memory for it, and no event is missed or repeated at the switch.
 * - A replay slower than the writes keeps reading history; it ends with Expired only if compaction passes it
 *   (the backend decides how long history is kept for a lagging replay).
 * - The DELETED event of an object whose data did not decode (ChangeEvent.unreadable) is never delivered: a
 *   subscriber it concerns ends with a CorruptObjectError, as kube's etcd3 watcher ends a watch that cannot decode
 *   the previous value of a DELETED event (its client re-lists).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CorruptObjectError } from './corrupt-object.js';
import { StorageError } from './errors.js';
import { RevisionWaiters } from './revision-waiters.js';
import type { History } from './history.js';
import type { ChangeEvent, KeyPrefix, WatchHandle, WatchSink } from './interface.js';
import { inPrefix } from './keys.js';

const REPLAY_BATCH = 500;

interface Subscriber {
  prefix: KeyPrefix;
  /** Events at or below this revision are not delivered live (replayed, or already seen through a list). */
  after: number;
  sink: WatchSink;
  /** True while history is replayed: live delivery skips the subscriber, the replay reads those events later. */
  replaying: boolean;
  /** The replay position (for compaction: history above it must stay). */
  cursor: number;
  stopped: boolean;
}

/** ChangeFeed orders, replays and fans out change events. */
export class ChangeFeed {
  readonly #history: History;
  readonly #pending = new Map<number, ChangeEvent>();
  // Revisions no event will carry (a seal moved the counter on): first of the run → last of it.
  readonly #skips = new Map<number, number>();
  readonly #subscribers = new Set<Subscriber>();
  // Readers waiting for a revision to be delivered (a list or watch at a resourceVersion not yet committed).
  readonly #waiting = new RevisionWaiters();
  #lastDelivered: number;

  /** @param startRevision the revision already committed when the feed starts. */
  constructor(startRevision: number, history: History) {
    this.#lastDelivered = startRevision;
    this.#history = history;
  }

  /** lastDelivered is the highest revision handed to subscribers. */
  get lastDelivered(): number {
    return this.#lastDelivered;
  }

  /** subscriberCount is the number of open subscriptions (for leak tests). */
  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /** minReplayCursor is the lowest revision a running replay still needs (Infinity when none runs). */
  minReplayCursor(): number {
    let min = Infinity;
    for (const s of this.#subscribers) if (s.replaying && s.cursor < min) min = s.cursor;
    return min;
  }

  /**
   * publishOrdered hands over an event from a source that already delivers in order but whose revisions may skip
   * (etcd's revision counter is shared by keys outside the watched prefix): it is delivered at once.
   */
  publishOrdered(e: ChangeEvent): void {
    if (e.revision <= this.#lastDelivered) return;
    this.#lastDelivered = e.revision - 1;
    this.publish(e);
  }

  /** advance moves the delivered position to `revision` when nothing is pending (etcd's progress notifications). */
  advance(revision: number): void {
    if (revision <= this.#lastDelivered || this.#pending.size > 0) return;
    this.#lastDelivered = revision;
    this.#waiting.reached(revision);
  }

  /**
   * skip says no event will carry the revisions `first`..`last` (a seal moved the counter past them): delivery goes on
   * past them once every lower revision is delivered, and readers waiting for them are woken.
   */
  skip(first: number, last: number): void {
    if (last < first) return;
    this.#skips.set(first, last);
    this.#drain();
  }

  /** publish hands over a committed event; delivery waits for lower revisions. */
  publish(e: ChangeEvent): void {
    this.#pending.set(e.revision, e);
    this.#drain();
  }

  /** subscribe streams changes after `fromRevision`: retained history first, then live ones. */
  subscribe(prefix: KeyPrefix, fromRevision: number, sink: WatchSink): WatchHandle {
    const compacted = this.#history.compacted();
    if (fromRevision < compacted) {
      throw new StorageError('Expired', `too old resource version: ${fromRevision} (${compacted + 1})`);
    }
    const replaying = fromRevision < this.#lastDelivered;
    const sub: Subscriber = { prefix, after: Math.max(fromRevision, this.#lastDelivered), sink, replaying, cursor: fromRevision, stopped: false };
    this.#subscribers.add(sub);
    if (replaying) void this.#replay(sub, fromRevision);
    return {
      position: () => (sub.replaying ? sub.cursor : Math.max(sub.after, this.#lastDelivered)),
      stop: () => {
        sub.stopped = true;
        this.#subscribers.delete(sub);
      },
    };
  }

  /** closeAll drops every subscriber (shutdown); waiting readers are told their revision will not come. */
  closeAll(): void {
    for (const s of this.#subscribers) s.stopped = true;
    this.#subscribers.clear();
    this.#waiting.closeAll();
  }

  /**
   * waitForRevision resolves true once `revision` has been delivered (it is committed and every event up to it
   * published), or false after `timeoutMs`. Woken by the delivery itself: nothing polls.
   */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    return this.#waiting.wait(revision, this.#lastDelivered, timeoutMs);
  }

  async #replay(sub: Subscriber, from: number): Promise<void> {
    try {
      for (;;) {
        if (sub.stopped) return;
        const upTo = this.#lastDelivered;
        if (sub.cursor >= upTo) {
          // Caught up: from here on live delivery has every later event. No await between the check and the switch.
          sub.after = upTo;
          sub.replaying = false;
          return;
        }
        if (sub.cursor < this.#history.compacted()) {
          throw new StorageError('Expired', `too old resource version: ${from} (${this.#history.compacted() + 1})`);
        }
        const batch = this.#history.range(sub.cursor, upTo, REPLAY_BATCH);
        for (const e of batch) {
          if (!inPrefix(e.key, sub.prefix)) continue;
          if (e.unreadable !== undefined) throw unreadableDeleted(e);
          sub.sink.onEvent(e);
        }
        sub.cursor = batch.length < REPLAY_BATCH ? upTo : (batch[batch.length - 1] as ChangeEvent).revision;
        // Let the sink drain (a slow client paces its own replay) and let writes and other watchers run.
        if (sub.sink.ready) await sub.sink.ready();
        await nextTurn();
      }
    } catch (e) {
      this.#fail(sub, e as Error);
    }
  }

  #fail(sub: Subscriber, err: Error): void {
    sub.stopped = true;
    this.#subscribers.delete(sub);
    try {
      sub.sink.onError(err);
    } catch {
      // The sink's own failure while ending is not ours to handle.
    }
  }

  #drain(): void {
    for (;;) {
      const next = this.#lastDelivered + 1;
      const skipTo = this.#skips.get(next);
      if (skipTo !== undefined) {
        this.#skips.delete(next);
        this.#lastDelivered = skipTo;
        this.#waiting.reached(skipTo);
        continue;
      }
      if (!this.#pending.has(next)) break;
      const e = this.#pending.get(next) as ChangeEvent;
      this.#pending.delete(next);
      this.#lastDelivered = next;
      for (const s of this.#subscribers) {
        if (e.revision <= s.after || !inPrefix(e.key, s.prefix)) continue;
        if (s.replaying) continue;
        if (e.unreadable !== undefined) {
          this.#fail(s, unreadableDeleted(e));
          continue;
        }
        try {
          s.sink.onEvent(e);
        } catch {
          // A subscriber's failure must not stop delivery to the others; it handles its own errors.
        }
      }
    }
    this.#waiting.reached(this.#lastDelivered);
  }
}

// unreadableDeleted is how a watch ends at the DELETED event of an object whose data did not decode.
const unreadableDeleted = (e: ChangeEvent) => new CorruptObjectError('deleted', [{ key: e.key, reason: e.unreadable ?? '' }]);
