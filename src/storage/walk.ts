/**
 * @module storage/walk
 * A walk over every current object under a prefix, page by page, for the passes that run beside serving (storage
 * version migration, metadata repair).
 */
import type { KubeObject } from '../apis/meta/types.js';
import type { UnreadableObject } from './corrupt-object.js';
import type { KeyPrefix, Storage } from './interface.js';
import { keyString } from './keys.js';

/**
 * currentPages yields the objects under `prefix` a page of `pageSize` at a time, each page read at the then current
 * revision (an object written during the walk may be seen in its new state or not at all if it moved before the
 * position), until the end or until `stopped()`. No page asks for `remaining`: counting what follows every page
 * would make the walk quadratic. A turn of the event loop passes between pages: an embedded store answers at once,
 * and the walk would otherwise hold off every request (and the server's listen) until it has read every object.
 *
 * With `onUnreadable`, an object whose stored data does not decode does not stop the walk (ListRequest.
 * skipUnreadable): it is passed over, and `onUnreadable` hears of it once however many pages met it. Without it such
 * an object fails the walk, as it fails a client's list. Any other error fails the walk either way.
 */
export async function* currentPages(
  storage: Storage,
  prefix: KeyPrefix,
  pageSize: number,
  stopped: () => boolean,
  onUnreadable?: (o: UnreadableObject) => void,
): AsyncGenerator<KubeObject[]> {
  let after: { namespace: string; name: string } | undefined;
  const told = new Set<string>();
  while (!stopped()) {
    const page = await storage.list(prefix, {
      limit: pageSize,
      noRemaining: true,
      ...(after ? { after } : {}),
      ...(onUnreadable ? { skipUnreadable: true } : {}),
    });
    for (const o of onUnreadable ? (page.unreadable ?? []) : []) {
      const k = keyString(o.key);
      if (told.has(k)) continue;
      told.add(k);
      onUnreadable?.(o);
    }
    yield page.items;
    if (!page.more || !page.last) return;
    after = { namespace: page.last.namespace, name: page.last.name };
    await new Promise((r) => setImmediate(r));
  }
}

/** WalkProgress is where a long walk stands, as its progress lines tell it. */
export interface WalkProgress {
  /** Objects read so far, of `total` when the walk began (objects created meanwhile may make it pass that). */
  checked: number;
  total: number;
  /** Objects the walk wrote. */
  changed: number;
  elapsedSeconds: number;
  /** Objects read per second so far. */
  perSecond: number;
  /** Seconds left at that rate (absent until there is a rate, and at the end). */
  etaSeconds?: number;
}

/** WalkPhase is which of a walk's progress lines `report` is told: the first, or one of those every few seconds. */
export type WalkPhase = 'start' | 'progress';

/**
 * progressReporter tells `report` where a walk stands at its start and at most every `everyMs` while it runs (a walk
 * of a million objects takes minutes, and an operator watching the log must see it move); `end()` gives the final
 * figures for the caller's own last line.
 */
export function progressReporter(
  total: number,
  report: (p: WalkProgress, phase: WalkPhase) => void,
  everyMs = 5000,
  now: () => number = () => performance.now(),
): {
  add(checked: number, changed: number): void;
  end(): WalkProgress;
} {
  const start = now();
  let last = start;
  let checked = 0;
  let changed = 0;
  const snapshot = (final: boolean): WalkProgress => {
    const elapsed = (now() - start) / 1000;
    const perSecond = elapsed > 0 ? Math.round(checked / elapsed) : 0;
    const p: WalkProgress = { checked, total, changed, elapsedSeconds: Math.round(elapsed * 10) / 10, perSecond };
    if (!final && perSecond > 0) p.etaSeconds = Math.max(0, Math.round((total - checked) / perSecond));
    return p;
  };
  report(snapshot(false), 'start');
  return {
    add(c, w) {
      checked += c;
      changed += w;
      if (now() - last >= everyMs) {
        last = now();
        report(snapshot(false), 'progress');
      }
    },
    end: () => snapshot(true),
  };
}

/**
 * countUnder is how many objects are under `prefix` now (one page of one: the backend's count, not a scan), those
 * whose data does not decode included (the page passes over them rather than fail).
 */
export async function countUnder(storage: Storage, prefix: KeyPrefix): Promise<number> {
  const first = await storage.list(prefix, { limit: 1, skipUnreadable: true });
  return first.items.length + (first.remaining ?? 0);
}
