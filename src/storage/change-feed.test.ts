// ChangeFeed: ordering of out-of-order commits, replay of history in batches paced by the sink, the switch from
// replay to live with no gap and no duplicate, position(), and a slow replay chasing the writes without holding them
// in memory. The watch contract every backend owes is in conformance.ts; here are the feed's own batches and
// positions through both backends that use it, and its edge cases with a MemoryHistory directly.
import { describe, expect, it, vi } from 'vitest';
import { ALL, backends, key, memory, obj, R, range, Recorder } from '../../test/helpers/storage-fixtures.js';
import { ChangeFeed } from './change-feed.js';
import { isStorageError } from './errors.js';
import { MemoryHistory } from './history.js';
import type { ChangeEvent, Storage } from './interface.js';

async function createMany(s: Storage, n: number, ns = 'ns', prefix = 'o'): Promise<void> {
  // Concurrent creates share lmdb commits; the revisions are still dense.
  for (let i = 0; i < n; i += 200) {
    await Promise.all(range(i, Math.min(n, i + 200) - 1).map((j) => s.create(key(ns, `${prefix}${j}`), obj(ns, `${prefix}${j}`))));
  }
}

describe.each(backends)("%s storage: the change feed's replay batches and positions", (_name, make) => {
  it('reads changes committed during a paced replay from the history and turns live once caught up, with nothing missing or repeated', async () => {
    const s = make();
    await createMany(s, 1300);
    const sink = new Recorder(true);
    const h = s.watch(ALL, 100, sink);
    // The first batch is read at once; the next waits for the sink.
    await vi.waitFor(() => expect(sink.waiting).toBe(true));
    expect(sink.revisions).toEqual(range(101, 600));
    expect(h.position()).toBe(600);
    // Live changes while the replay is paused: before and after the replay's end revision, in and out of the prefix.
    await s.update(key('ns', 'o5'), (c) => ({ ...c, spec: { v: 1 } })); // 1301
    await s.delete(key('ns', 'o1200')); // 1302
    await s.create(key('elsewhere', 'x'), obj('elsewhere', 'x')); // 1303
    expect(sink.revisions).toHaveLength(500);
    expect(h.position()).toBe(600);
    sink.open();
    await vi.waitFor(() => expect(sink.revisions).toHaveLength(1000));
    await vi.waitFor(() => expect(sink.waiting).toBe(true));
    expect(sink.revisions).toEqual(range(101, 1100));
    expect(h.position()).toBe(1100);
    await s.update(key('ns', 'o7'), (c) => ({ ...c, spec: { v: 1 } })); // 1304
    sink.open();
    await vi.waitFor(() => expect(sink.readyCalls).toBe(3));
    // The replay reads on past where it started: changes committed meanwhile come from the history, in order.
    expect(sink.revisions).toEqual(range(101, 1304));
    expect(h.position()).toBe(1304);
    await s.delete(key('ns', 'o8')); // 1305, committed while the replay waits: not delivered live
    expect(sink.revisions.at(-1)).toBe(1304);
    sink.ungate();
    await vi.waitFor(() => expect(sink.revisions).toEqual(range(101, 1305)));
    expect(sink.events.slice(-5).map((e) => [e.type, e.key.name])).toEqual([
      ['MODIFIED', 'o5'],
      ['DELETED', 'o1200'],
      ['ADDED', 'x'],
      ['MODIFIED', 'o7'],
      ['DELETED', 'o8'],
    ]);
    expect(h.position()).toBe(1305);
    // Live now: further changes arrive directly.
    await s.create(key('ns', 'late'), obj('ns', 'late'));
    await vi.waitFor(() => expect(sink.revisions.at(-1)).toBe(1306));
    expect(new Set(sink.revisions).size).toBe(sink.revisions.length);
    expect(sink.errors).toEqual([]);
    expect(sink.readyCalls).toBe(4);
    h.stop();
  });

  it('reports position() as the revision every change up to which was given to the sink', async () => {
    const s = make();
    await createMany(s, 3);
    const sink = new Recorder();
    const h = s.watch({ resource: R, namespace: 'ns' }, 3, sink);
    expect(h.position()).toBe(3);
    await s.create(key('ns', 'a'), obj('ns', 'a'));
    await vi.waitFor(() => expect(h.position()).toBe(4));
    // A change outside the watched prefix still moves the position: nothing up to it was withheld.
    await s.create(key('other', 'b'), obj('other', 'b'));
    await vi.waitFor(() => expect(h.position()).toBe(5));
    expect(sink.revisions).toEqual([4]);
    h.stop();
    // A replay starts at its fromRevision and never runs ahead of what it delivered.
    const replay = new Recorder();
    const h2 = s.watch(ALL, 1, replay);
    expect(h2.position()).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 20; i++) {
      const p = h2.position();
      expect(replay.revisions.filter((r) => r <= p)).toEqual(range(2, p));
      await new Promise((r) => setImmediate(r));
    }
    await vi.waitFor(() => expect(replay.revisions).toEqual([2, 3, 4, 5]));
    expect(h2.position()).toBe(5);
    h2.stop();
  });
});

describe('memory storage: a replay whose history is dropped under it', () => {
  it('ends with Expired instead of skipping the dropped events', async () => {
    const s = memory(700);
    await createMany(s, 700);
    const sink = new Recorder(true);
    s.watch(ALL, 0, sink);
    await vi.waitFor(() => expect(sink.waiting).toBe(true));
    expect(sink.revisions).toEqual(range(1, 500));
    // 600 more writes push the history's start past the replay's position (500).
    await createMany(s, 600, 'ns', 'p');
    expect(s.compactedRevision()).toBe(600);
    sink.ungate();
    await vi.waitFor(() => expect(sink.errors).toHaveLength(1));
    expect(isStorageError(sink.errors[0], 'Expired')).toBe(true);
    expect(sink.revisions).toEqual(range(1, 500));
  });
});

// feedWith builds a ChangeFeed over a MemoryHistory the way a backend does: each event goes into the history, then
// to the feed.
function feedWith(opts: { capacity?: number } = {}) {
  const history = new MemoryHistory(0, opts.capacity ?? 100_000);
  const feed = new ChangeFeed(0, history);
  const event = (revision: number, ns = 'ns'): ChangeEvent => ({
    type: 'ADDED',
    key: key(ns, `o${revision}`),
    revision,
    object: { metadata: { namespace: ns, name: `o${revision}`, resourceVersion: String(revision) } },
  });
  const commit = (revision: number, ns = 'ns') => {
    const e = event(revision, ns);
    history.append(e);
    feed.publish(e);
  };
  return { history, feed, event, commit };
}

describe('ChangeFeed ordering', () => {
  it('delivers events published out of order in ascending revision order', () => {
    const { feed, event, history } = feedWith();
    const sink = new Recorder();
    feed.subscribe(ALL, 0, sink);
    const publish = (r: number) => {
      const e = event(r);
      history.append(e);
      feed.publish(e);
    };
    publish(3);
    publish(2);
    expect(sink.revisions).toEqual([]);
    expect(feed.lastDelivered).toBe(0);
    publish(1);
    expect(sink.revisions).toEqual([1, 2, 3]);
    publish(5);
    publish(4);
    expect(sink.revisions).toEqual([1, 2, 3, 4, 5]);
    expect(feed.lastDelivered).toBe(5);
  });

  it('never delivers a revision twice, even when it is published again', () => {
    const { feed, event } = feedWith();
    const sink = new Recorder();
    feed.subscribe(ALL, 0, sink);
    feed.publish(event(1));
    feed.publish(event(2));
    feed.publish(event(1));
    feed.publish(event(3));
    expect(sink.revisions).toEqual([1, 2, 3]);
  });

  it('keeps delivering to the other subscribers when one sink throws', () => {
    const { feed, commit } = feedWith();
    const good = new Recorder();
    feed.subscribe(ALL, 0, {
      onEvent: () => {
        throw new Error('broken client');
      },
      onError: () => undefined,
    });
    feed.subscribe(ALL, 0, good);
    commit(1);
    commit(2);
    expect(good.revisions).toEqual([1, 2]);
    expect(feed.subscriberCount).toBe(2);
  });

  it('filters by prefix and drops every subscriber on closeAll', () => {
    const { feed, commit } = feedWith();
    const ns = new Recorder();
    const all = new Recorder();
    feed.subscribe({ resource: R, namespace: 'a' }, 0, ns);
    feed.subscribe(ALL, 0, all);
    commit(1, 'a');
    commit(2, 'b');
    commit(3, 'a');
    expect(ns.revisions).toEqual([1, 3]);
    expect(all.revisions).toEqual([1, 2, 3]);
    feed.closeAll();
    expect(feed.subscriberCount).toBe(0);
    commit(4, 'a');
    expect(ns.revisions).toEqual([1, 3]);
    expect(all.revisions).toEqual([1, 2, 3]);
  });
});

describe('ChangeFeed replay', () => {
  it('keeps a slow replay going while 1400 changes are committed, never more than one batch between ready() calls', async () => {
    const { feed, commit } = feedWith();
    for (let r = 1; r <= 600; r++) commit(r);
    const slow = new Recorder(true);
    const live = new Recorder();
    const h = feed.subscribe(ALL, 0, slow);
    feed.subscribe(ALL, 600, live);
    expect(slow.revisions).toEqual(range(1, 500));
    // Far more changes than a watcher's send queue (1000 lines) arrive while the replay waits for its client.
    for (let r = 601; r <= 2000; r++) commit(r, r % 3 ? 'ns' : 'other');
    expect(slow.revisions).toHaveLength(500);
    expect(live.revisions).toEqual(range(601, 2000));
    let delivered = slow.revisions.length;
    while (slow.revisions.length < 2000) {
      slow.open();
      await vi.waitFor(() => expect(slow.waiting || slow.revisions.length === 2000).toBe(true));
      expect(slow.revisions.length - delivered).toBeLessThanOrEqual(500);
      delivered = slow.revisions.length;
    }
    expect(slow.revisions).toEqual(range(1, 2000));
    expect(slow.errors).toEqual([]);
    slow.ungate();
    await vi.waitFor(() => expect(feed.minReplayCursor()).toBe(Infinity));
    // Live now: the next change arrives directly, once.
    commit(2001);
    expect(slow.revisions.slice(-2)).toEqual([2000, 2001]);
    expect(h.position()).toBe(2001);
  });

  it('replays only its prefix, including changes committed during the replay', async () => {
    const { feed, commit } = feedWith();
    for (let r = 1; r <= 600; r++) commit(r, r % 2 ? 'a' : 'b');
    const slow = new Recorder(true);
    const h = feed.subscribe({ resource: R, namespace: 'a' }, 0, slow);
    expect(slow.revisions).toEqual(range(1, 500).filter((r) => r % 2));
    commit(601, 'a');
    for (let r = 602; r <= 620; r++) commit(r, 'b');
    commit(621, 'a');
    commit(622, 'a');
    expect(h.position()).toBe(500);
    slow.ungate();
    await vi.waitFor(() => expect(slow.revisions.at(-1)).toBe(622));
    expect(slow.revisions).toEqual([...range(1, 600).filter((r) => r % 2), 601, 621, 622]);
    expect(slow.errors).toEqual([]);
    expect(h.position()).toBe(622);
    expect(feed.minReplayCursor()).toBe(Infinity);
  });

  it('throws Expired synchronously for a revision below the history, and accepts the compacted revision itself', async () => {
    const { feed, commit, history } = feedWith({ capacity: 10 });
    for (let r = 1; r <= 25; r++) commit(r);
    expect(history.compacted()).toBe(15);
    const sink = new Recorder();
    expect(() => feed.subscribe(ALL, 14, sink)).toThrow(expect.objectContaining({ code: 'Expired' }));
    expect(feed.subscriberCount).toBe(0);
    feed.subscribe(ALL, 15, sink);
    await vi.waitFor(() => expect(sink.revisions).toEqual(range(16, 25)));
  });

  it('does not replay for a subscription at or beyond the delivered revision', () => {
    const { feed, commit } = feedWith();
    for (let r = 1; r <= 5; r++) commit(r);
    const at = new Recorder(true);
    const ahead = new Recorder();
    const hAt = feed.subscribe(ALL, 5, at);
    const hAhead = feed.subscribe(ALL, 7, ahead);
    expect(feed.minReplayCursor()).toBe(Infinity);
    expect(hAt.position()).toBe(5);
    commit(6);
    commit(7);
    commit(8);
    expect(at.revisions).toEqual([6, 7, 8]);
    expect(at.readyCalls).toBe(0);
    // A subscription from a revision not yet reached skips changes up to it.
    expect(ahead.revisions).toEqual([8]);
    expect(hAhead.position()).toBe(8);
  });

  it('stops a paused replay on stop(): nothing more is delivered, changes committed meanwhile included', async () => {
    const { feed, commit } = feedWith();
    for (let r = 1; r <= 700; r++) commit(r);
    const slow = new Recorder(true);
    const h = feed.subscribe(ALL, 0, slow);
    commit(701);
    h.stop();
    expect(feed.subscriberCount).toBe(0);
    expect(feed.minReplayCursor()).toBe(Infinity);
    slow.ungate();
    await new Promise((r) => setTimeout(r, 20));
    expect(slow.revisions).toEqual(range(1, 500));
    expect(slow.errors).toEqual([]);
  });
});
