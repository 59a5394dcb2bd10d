// Retained change history: MemoryHistory's window, and LmdbStorage's persisted event log with its compaction by
// count and age, its respect for running replays, and its survival across a close and reopen.
import { open as openLmdb } from 'lmdb';
import { describe, expect, it, vi } from 'vitest';
import { ALL, key, lmdb, obj, R, range, Recorder, tempDir } from '../../test/helpers/storage-fixtures.js';
import type { KubeObject } from '../apis/meta/types.js';
import { isStorageError } from './errors.js';
import { MemoryHistory } from './history.js';
import type { ChangeEvent } from './interface.js';
import type { LmdbStorage } from './lmdb-storage.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MINUTE = 60_000;

async function writeSequentially(s: LmdbStorage, n: number, prefix = 'o'): Promise<void> {
  for (let i = 0; i < n; i++) await s.create(key('ns', `${prefix}${i}`), obj('ns', `${prefix}${i}`));
}
async function writeConcurrently(s: LmdbStorage, n: number, prefix = 'o'): Promise<void> {
  for (let i = 0; i < n; i += 250) {
    await Promise.all(range(i, Math.min(n, i + 250) - 1).map((j) => s.create(key('ns', `${prefix}${j}`), obj('ns', `${prefix}${j}`))));
  }
}
async function expectListExpired(p: Promise<unknown>): Promise<void> {
  await expect(p).rejects.toSatisfy((e) => isStorageError(e, 'Expired'));
}
function expectExpired(f: () => unknown): void {
  let thrown: unknown;
  try {
    f();
  } catch (e) {
    thrown = e;
  }
  expect(isStorageError(thrown, 'Expired'), String(thrown)).toBe(true);
}

describe('MemoryHistory', () => {
  const ev = (revision: number): ChangeEvent => ({ type: 'ADDED', key: key('ns', `o${revision}`), revision, object: { metadata: { name: `o${revision}` } } });

  it('keeps the most recent events up to its capacity and reports the highest dropped revision', () => {
    const h = new MemoryHistory(0, 3);
    expect(h.compacted()).toBe(0);
    for (let r = 1; r <= 3; r++) h.append(ev(r));
    expect(h.compacted()).toBe(0);
    expect(h.range(0, 3, 100).map((e) => e.revision)).toEqual([1, 2, 3]);
    h.append(ev(4));
    h.append(ev(5));
    expect(h.compacted()).toBe(2);
    expect(h.range(2, 5, 100).map((e) => e.revision)).toEqual([3, 4, 5]);
  });

  it('starts with the given revision as compacted', () => {
    const h = new MemoryHistory(42, 10);
    expect(h.compacted()).toBe(42);
    expect(h.range(42, 50, 10)).toEqual([]);
  });

  it('returns events with after < revision <= upTo, ascending, at most limit, across gaps in the revisions', () => {
    const h = new MemoryHistory(0, 100);
    for (const r of [1, 2, 4, 7, 8, 12]) h.append(ev(r));
    const revs = (after: number, upTo: number, limit = 100) => h.range(after, upTo, limit).map((e) => e.revision);
    expect(revs(0, 12)).toEqual([1, 2, 4, 7, 8, 12]);
    expect(revs(2, 7)).toEqual([4, 7]);
    expect(revs(3, 6)).toEqual([4]);
    expect(revs(4, 6)).toEqual([]);
    expect(revs(8, 11)).toEqual([]);
    expect(revs(12, 20)).toEqual([]);
    expect(revs(0, 12, 2)).toEqual([1, 2]);
    expect(revs(2, 12, 3)).toEqual([4, 7, 8]);
  });
});

describe('LmdbStorage history compaction', () => {
  it('starts a fresh database with nothing compacted', async () => {
    const s = lmdb();
    expect(s.compactedRevision()).toBe(0);
    expect(s.currentRevision()).toBe(0);
    expect(await s.list(ALL, { revision: 0 })).toEqual({ items: [], revision: 0, more: false });
    await s.create(key('ns', 'a'), obj('ns', 'a'));
    const sink = new Recorder();
    s.watch(ALL, 0, sink);
    await vi.waitFor(() => expect(sink.revisions).toEqual([1]));
    expect(s.historySize()).toBe(1);
  });

  it('keeps the last historyEvents changes when compacted, and expires watches and lists from before them', async () => {
    const s = lmdb({ historyEvents: 10 });
    const lists = new Map<number, unknown>();
    for (let i = 0; i < 30; i++) {
      await s.create(key('ns', `o${i}`), obj('ns', `o${i}`));
      lists.set(s.currentRevision(), await s.list(ALL));
    }
    await s.compact();
    expect(await s.compact()).toBe(20);
    expect(s.compactedRevision()).toBe(20);
    expect(s.historySize()).toBe(10);
    await expectListExpired(s.list(ALL, { revision: 19 }));
    expectExpired(() => s.watch(ALL, 19, new Recorder()));
    for (let r = 20; r <= 30; r++) expect(await s.list(ALL, { revision: r })).toEqual(lists.get(r));
    const sink = new Recorder();
    s.watch(ALL, 20, sink);
    await vi.waitFor(() => expect(sink.revisions).toEqual(range(21, 30)));
    expect(sink.errors).toEqual([]);
  });

  it('compacts from the write path once the count bound is passed, with the timer disabled', async () => {
    const s = lmdb({ historyEvents: 10 });
    for (let i = 0; i < 40; i++) {
      await s.create(key('ns', `o${i}`), obj('ns', `o${i}`));
      // Never more than the count bound is dropped.
      expect(s.compactedRevision()).toBeLessThanOrEqual(Math.max(0, s.currentRevision() - 10));
    }
    await vi.waitFor(() => expect(s.compactedRevision()).toBeGreaterThan(0));
    expect(s.compactedRevision()).toBeLessThanOrEqual(30);
    expect(s.historySize()).toBe(40 - s.compactedRevision());
  });

  it('does not compact within the bounds', async () => {
    const s = lmdb({ historyEvents: 50 });
    await writeSequentially(s, 20);
    expect(await s.compact()).toBe(0);
    expect(s.historySize()).toBe(20);
  });

  it('drops changes older than historyAgeMs, judged at the time given to compact()', async () => {
    const s = lmdb({ historyAgeMs: 10 * MINUTE });
    await writeSequentially(s, 3, 'old');
    await sleep(15);
    const mid = Date.now();
    await sleep(15);
    await writeSequentially(s, 2, 'new');
    const list5 = await s.list(ALL);
    // Ten minutes after `mid`, the first three are too old; the last two are not.
    expect(await s.compact(mid + 10 * MINUTE)).toBe(3);
    expect(s.historySize()).toBe(2);
    await expectListExpired(s.list(ALL, { revision: 2 }));
    expect((await s.list(ALL, { revision: 3 })).items.map((o) => o.metadata.name)).toEqual(['old0', 'old1', 'old2']);
    // Much later every change is too old: only the current revision can still be read or watched from.
    expect(await s.compact(Date.now() + 10 * MINUTE + 1000)).toBe(5);
    expect(s.historySize()).toBe(0);
    expect(await s.list(ALL, { revision: 5 })).toEqual(list5);
    await expectListExpired(s.list(ALL, { revision: 4 }));
    expectExpired(() => s.watch(ALL, 4, new Recorder()));
    const sink = new Recorder();
    s.watch(ALL, 5, sink);
    await s.create(key('ns', 'after'), obj('ns', 'after'));
    await vi.waitFor(() => expect(sink.revisions).toEqual([6]));
  });

  it('finds the age cut when it falls inside a later batch of a long history', async () => {
    const s = lmdb({ historyAgeMs: MINUTE });
    await writeConcurrently(s, 1200, 'old');
    await sleep(15);
    const mid = Date.now();
    await sleep(15);
    await writeConcurrently(s, 900, 'new');
    expect(await s.compact(mid + MINUTE)).toBe(1200);
    expect(s.historySize()).toBe(900);
    const sink = new Recorder();
    s.watch(ALL, 1200, sink);
    await vi.waitFor(() => expect(sink.revisions).toEqual(range(1201, 2100)));
    expect(await s.compact(Date.now() + 2 * MINUTE)).toBe(2100);
  });

  it('uses 15 minutes as the default age bound', async () => {
    const s = lmdb();
    await writeSequentially(s, 4);
    expect(await s.compact(Date.now() + 14 * MINUTE)).toBe(0);
    expect(await s.compact(Date.now() + 15 * MINUTE + 1000)).toBe(4);
  });

  it('never drops history a paused replay still needs, and compacts it once the replay has passed', async () => {
    const s = lmdb({ historyAgeMs: MINUTE });
    await writeConcurrently(s, 1200);
    const later = () => Date.now() + 2 * MINUTE;
    const sink = new Recorder(true);
    const h = s.watch(ALL, 0, sink);
    await vi.waitFor(() => expect(sink.waiting).toBe(true));
    expect(sink.revisions).toEqual(range(1, 500));
    // Everything is past the age bound, but the replay is at 500.
    expect(await s.compact(later())).toBe(500);
    await s.update(key('ns', 'o3'), (c) => ({ ...c, spec: { v: 1 } })); // 1201, read from history by the replay later
    expect(await s.compact(later())).toBe(500);
    sink.open();
    await vi.waitFor(() => expect(sink.revisions).toHaveLength(1000));
    await vi.waitFor(() => expect(sink.waiting).toBe(true));
    expect(await s.compact(later())).toBe(1000);
    sink.ungate();
    await vi.waitFor(() => expect(sink.revisions).toEqual(range(1, 1201)));
    expect(sink.errors).toEqual([]);
    expect(h.position()).toBe(1201);
    // Live now: nothing holds the history back.
    expect(await s.compact(later())).toBe(1201);
    await s.create(key('ns', 'last'), obj('ns', 'last'));
    await vi.waitFor(() => expect(sink.revisions.at(-1)).toBe(1202));
    h.stop();
  });

  it('passes a replay that lags by more than twice the count bound, which then ends with Expired', async () => {
    const s = lmdb({ historyEvents: 100 });
    await writeSequentially(s, 100);
    const stalled = new Recorder(true);
    s.watch(ALL, 0, stalled);
    await vi.waitFor(() => expect(stalled.waiting).toBe(true));
    expect(stalled.revisions).toEqual(range(1, 100));
    await writeConcurrently(s, 400, 'p'); // revisions 101..500 while the replay waits at 100
    const near = new Recorder(true);
    s.watch(ALL, 350, near);
    await vi.waitFor(() => expect(near.waiting).toBe(true));
    // The stalled replay (at 100) may hold history only down to 500 - 2 × 100; the one at 500 holds nothing back.
    await s.compact(); // may join a run the writes started with an older target
    expect(await s.compact()).toBe(300);
    stalled.ungate();
    await vi.waitFor(() => expect(stalled.errors).toHaveLength(1));
    expect(isStorageError(stalled.errors[0], 'Expired')).toBe(true);
    expect(stalled.revisions).toEqual(range(1, 100));
    near.ungate();
    await vi.waitFor(() => expect(near.revisions).toEqual(range(351, 500)));
    expect(near.errors).toEqual([]);
  });

  // Regression: #compact once clamped its target by minReplayCursor() only when a run started, so a replay that
  // subscribed during a multi-batch run had its history dropped under it; each batch now re-reads the cursor.
  it('never drops history a replay needs that subscribed while a compaction run was already in progress', async () => {
    const s = lmdb({ historyAgeMs: MINUTE });
    await writeConcurrently(s, 2500);
    const run = s.compact(Date.now() + 2 * MINUTE);
    expect(s.compactedRevision()).toBe(0);
    const sink = new Recorder(true);
    s.watch(ALL, 1200, sink);
    await vi.waitFor(() => expect(sink.waiting).toBe(true));
    await run;
    sink.ungate();
    await vi.waitFor(() => expect(sink.revisions.length === 1300 || sink.errors.length > 0).toBe(true));
    expect(sink.errors).toEqual([]);
    expect(sink.revisions).toEqual(range(1201, 2500));
  });

  it('keeps the history and the compacted revision across close and reopen', async () => {
    const path = tempDir();
    const s1 = lmdb({ path, historyEvents: 20 });
    const lists = new Map<number, unknown>();
    for (let i = 0; i < 30; i++) {
      if (i % 3 === 2) await s1.delete(key('ns', `o${i - 1}`));
      else await s1.create(key('ns', `o${i}`), obj('ns', `o${i}`));
      lists.set(s1.currentRevision(), await s1.list(ALL));
    }
    await s1.compact();
    await s1.compact();
    expect(s1.compactedRevision()).toBe(10);
    const replayBefore = new Recorder();
    s1.watch(ALL, 10, replayBefore);
    await vi.waitFor(() => expect(replayBefore.revisions).toEqual(range(11, 30)));
    await s1.close();

    const s2 = lmdb({ path, historyEvents: 20 });
    expect(s2.currentRevision()).toBe(30);
    expect(s2.compactedRevision()).toBe(10);
    expect(s2.historySize()).toBe(20);
    for (let r = 10; r <= 30; r++) expect(await s2.list(ALL, { revision: r })).toEqual(lists.get(r));
    await expectListExpired(s2.list(ALL, { revision: 9 }));
    expectExpired(() => s2.watch(ALL, 9, new Recorder()));
    const replayAfter = new Recorder();
    s2.watch(ALL, 10, replayAfter);
    await s2.create(key('ns', 'new'), obj('ns', 'new'));
    await vi.waitFor(() => expect(replayAfter.revisions).toEqual(range(11, 31)));
    // The replay after the reopen is the same sequence of changes the first process delivered.
    expect(replayAfter.events.slice(0, 20)).toEqual(replayBefore.events);
  });

  it('applies the bounds at startup when the timer is enabled', async () => {
    const path = tempDir();
    const s1 = lmdb({ path });
    await writeSequentially(s1, 12);
    await s1.close();
    const s2 = lmdb({ path, historyEvents: 5, compactionIntervalMs: 60 * MINUTE });
    await vi.waitFor(() => expect(s2.compactedRevision()).toBe(7));
    expect(s2.historySize()).toBe(5);
  });

  it('treats a database written before the event log existed as compacted at its revision', async () => {
    const path = tempDir();
    const root = openLmdb({ path, maxDbs: 8, noSubdir: false });
    const objects = root.openDB<KubeObject, [string, string, string]>('objects', { encoding: 'json' });
    const meta = root.openDB<number, string>('meta', { encoding: 'json' });
    await root.transaction(() => {
      objects.put([R, 'ns', 'a'], { ...obj('ns', 'a'), metadata: { namespace: 'ns', name: 'a', resourceVersion: '2' } });
      objects.put([R, 'ns', 'b'], { ...obj('ns', 'b'), metadata: { namespace: 'ns', name: 'b', resourceVersion: '3' } });
      meta.put('revision', 3);
    });
    await root.close();

    const s = lmdb({ path });
    expect(s.currentRevision()).toBe(3);
    expect(s.compactedRevision()).toBe(3);
    expect((await s.list(ALL, { revision: 3 })).items.map((o) => o.metadata.name)).toEqual(['a', 'b']);
    await expectListExpired(s.list(ALL, { revision: 2 }));
    expectExpired(() => s.watch(ALL, 2, new Recorder()));
    const sink = new Recorder();
    s.watch(ALL, 3, sink);
    const c = await s.create(key('ns', 'c'), obj('ns', 'c'));
    expect(c.metadata.resourceVersion).toBe('4');
    await vi.waitFor(() => expect(sink.revisions).toEqual([4]));
    expect((await s.list(ALL, { revision: 3 })).items.map((o) => o.metadata.name)).toEqual(['a', 'b']);
  });
});
