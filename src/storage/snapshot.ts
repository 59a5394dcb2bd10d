/**
 * @module storage/snapshot
 * readList: one list page at any retained revision, shared by every backend. The backend supplies a consistent
 * read view (current objects and the change history, read at one instant); an older snapshot is the current one
 * with every change after it undone, which is exact because each event carries the state before it.
 *
 * ## Guarantees
 * - Items are ordered by namespace then name; a page starts strictly after `after`, so pages never overlap.
 * - Pages read at the same revision compose into exactly the list at that revision, whatever was written between them.
 */
import type { KubeObject } from '../apis/meta/types.js';
import { CorruptObjectError } from './corrupt-object.js';
import { StorageError } from './errors.js';
import type { ChangeEvent, KeyPrefix, ListRequest, ListResult, ObjectKey } from './interface.js';
import { compareKeys, inPrefix, keyString } from './keys.js';

/** SnapshotView is a backend's consistent read view. */
export interface SnapshotView {
  /** The latest committed revision in this view. */
  revision: number;
  /** The highest revision no longer in the history. */
  compacted: number;
  /** scan yields current objects under the prefix with keys strictly after `after`, ascending. */
  scan(prefix: KeyPrefix, after: ObjectKey | undefined): Iterable<{ key: ObjectKey; object: KubeObject }>;
  /** count is how many current objects under the prefix have keys strictly after `after`. */
  count(prefix: KeyPrefix, after: ObjectKey | undefined): number;
  /**
   * total is how many current objects are under the prefix, for a backend that keeps counts (O(1)): then a page
   * given its position tells `remaining` and the next position without counting (see ListRequest.position).
   */
  total?(prefix: KeyPrefix): number;
  /** events yields retained events with after < revision ≤ upTo, ascending. */
  events(after: number, upTo: number): Iterable<ChangeEvent>;
}

interface Override {
  key: ObjectKey;
  /** The object at the snapshot revision, or null when it did not exist then. */
  atSnapshot: KubeObject | null;
  existsNow: boolean;
}

/** readList reads one page (or everything) of a prefix at the requested revision. */
export function readList(view: SnapshotView, prefix: KeyPrefix, req: ListRequest = {}): ListResult {
  const current = view.revision;
  const revision = req.revision ?? current;
  if (revision > current) throw new StorageError('TooLarge', `resource version ${revision} is newer than the current ${current}`);
  if (revision < view.compacted) throw new StorageError('Expired', `too old resource version: ${revision} (${view.compacted + 1})`);
  let after: ObjectKey | undefined = req.after && { resource: prefix.resource, namespace: req.after.namespace, name: req.after.name };
  // How many snapshot objects precede the page: 0 from the start, else what the request carries (if anything).
  let before: number | undefined = after ? req.position : 0;
  // A position outside a one-namespace prefix either precedes it (start from the beginning) or follows it (nothing).
  if (after && prefix.namespace !== undefined && after.namespace !== prefix.namespace) {
    if (after.namespace > prefix.namespace) return { items: [], revision, more: false };
    after = undefined;
    before = 0;
  }

  // Keys changed after the snapshot: their first later event tells their state at the snapshot.
  const overrides = new Map<string, Override>();
  if (revision < current) {
    for (const e of view.events(revision, current)) {
      if (!inPrefix(e.key, prefix)) continue;
      const k = keyString(e.key);
      const o = overrides.get(k);
      if (o) o.existsNow = e.type !== 'DELETED';
      // The object at the snapshot is one whose data did not decode (removed since by an unsafe delete): the list
      // fails, as a list of the current state holding it does.
      else if (e.unreadable !== undefined) throw new CorruptObjectError('list', [{ key: e.key, reason: e.unreadable }]);
      else overrides.set(k, { key: e.key, atSnapshot: e.type === 'ADDED' ? null : (e.prevObject ?? null), existsNow: e.type !== 'DELETED' });
    }
  }
  const changed = [...overrides.values()].filter((o) => !after || compareKeys(o.key, after) > 0).sort((a, b) => compareKeys(a.key, b.key));

  const limit = req.limit && req.limit > 0 ? req.limit : Infinity;
  const items: KubeObject[] = [];
  let lastKey: ObjectKey | undefined;
  let more = false;
  // Snapshot objects passed (filtered out or not), and how many of them sort at or before lastKey.
  let seen = 0;
  let seenAtLast = 0;
  const it = view.scan(prefix, after)[Symbol.iterator]();
  // A page stops before the scan's end: the iterator is closed here, whatever ends the loop (a backend's cursor
  // may hold a read transaction until then, see lmdb-read).
  try {
    let cur = it.next();
    let i = 0;
    for (;;) {
      let key: ObjectKey;
      let obj: KubeObject | null;
      const next = changed[i];
      if (!cur.done && (!next || compareKeys(cur.value.key, next.key) < 0)) {
        ({ key, object: obj } = cur.value);
        cur = it.next();
      } else if (next) {
        if (!cur.done && compareKeys(cur.value.key, next.key) === 0) cur = it.next();
        key = next.key;
        obj = next.atSnapshot;
        i++;
      } else {
        break;
      }
      if (obj === null) continue;
      if (items.length >= limit) {
        more = true;
        break;
      }
      seen++;
      if (req.filter && !req.filter(obj)) continue;
      items.push(obj);
      lastKey = key;
      seenAtLast = seen;
    }
  } finally {
    it.return?.();
  }

  const result: ListResult = { items, revision, more, ...(lastKey ? { last: lastKey } : {}) };
  if (!more || !lastKey) return result;
  // The snapshot's size under the prefix: today's count with every change since undone.
  let total: number | undefined;
  if (view.total) {
    total = view.total(prefix);
    for (const o of overrides.values()) total += (o.atSnapshot ? 1 : 0) - (o.existsNow ? 1 : 0);
  }
  if (total !== undefined && before !== undefined) {
    result.position = before + seenAtLast;
    // Never below 0, even for a token whose count was tampered with.
    if (!req.filter) result.remaining = Math.max(0, total - result.position);
  } else if (!req.filter && !req.noRemaining) {
    // No position to go on (a token of an older server, or no counts): count what follows, O(rest of the list).
    let remaining = view.count(prefix, lastKey);
    for (const o of overrides.values()) {
      if (compareKeys(o.key, lastKey) <= 0) continue;
      remaining += (o.atSnapshot ? 1 : 0) - (o.existsNow ? 1 : 0);
    }
    result.remaining = remaining;
    if (total !== undefined) result.position = total - remaining;
  }
  return result;
}
