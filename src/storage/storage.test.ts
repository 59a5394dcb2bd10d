import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../apis/meta/types.js';
import { isStorageError } from './errors.js';
import type { ChangeEvent, ObjectKey, Storage } from './interface.js';
import { LmdbStorage } from './lmdb-storage.js';
import { MemoryStorage } from './memory-storage.js';

const R = 'extensions.example.com/websites';
const key = (namespace: string, name: string): ObjectKey => ({ resource: R, namespace, name });
const obj = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({ metadata: { name }, ...extra });

const dirs: string[] = [];
const backends: [string, () => Storage][] = [
  ['memory', () => new MemoryStorage()],
  ['lmdb', () => {
    const d = mkdtempSync(join(tmpdir(), 'lmdb-'));
    dirs.push(d);
    return new LmdbStorage({ path: d });
  }],
];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe.each(backends)('%s storage', (_name, make) => {
  it('assigns increasing resourceVersions across creates, updates and deletes', async () => {
    const s = make();
    const a = await s.create(key('ns', 'a'), obj('a'));
    const b = await s.create(key('ns', 'b'), obj('b'));
    const a2 = await s.update(key('ns', 'a'), (cur) => ({ ...cur, spec: { x: 1 } }));
    const gone = await s.delete(key('ns', 'b'));
    const rvs = [a, b, a2, gone].map((o) => Number(o.metadata.resourceVersion));
    expect(rvs).toEqual([1, 2, 3, 4]);
    expect(s.currentRevision()).toBe(4);
    expect(s.get(key('ns', 'b'))).toBeUndefined();
    await s.close();
  });

  it('refuses a duplicate create with KeyExists and an update of a missing key with KeyNotFound', async () => {
    const s = make();
    await s.create(key('ns', 'a'), obj('a'));
    await expect(s.create(key('ns', 'a'), obj('a'))).rejects.toSatisfy((e) => isStorageError(e, 'KeyExists'));
    await expect(s.update(key('ns', 'x'), (c) => c)).rejects.toSatisfy((e) => isStorageError(e, 'KeyNotFound'));
    await expect(s.delete(key('ns', 'x'))).rejects.toSatisfy((e) => isStorageError(e, 'KeyNotFound'));
    expect(s.currentRevision()).toBe(1);
    await s.close();
  });

  it('writes nothing when tryUpdate or a delete check throws, and nothing when tryUpdate returns null', async () => {
    const s = make();
    await s.create(key('ns', 'a'), obj('a'));
    await expect(s.update(key('ns', 'a'), () => { throw new Error('no'); })).rejects.toThrow('no');
    await expect(s.delete(key('ns', 'a'), () => { throw new Error('precondition'); })).rejects.toThrow('precondition');
    const same = await s.update(key('ns', 'a'), () => null);
    expect(same.metadata.resourceVersion).toBe('1');
    expect(s.currentRevision()).toBe(1);
    expect(s.get(key('ns', 'a'))).toBeDefined();
    await s.close();
  });

  it('lists one namespace or all, ordered, at the revision of the snapshot', async () => {
    const s = make();
    await s.create(key('b', 'y'), obj('y'));
    await s.create(key('a', 'z'), obj('z'));
    await s.create(key('a', 'x'), obj('x'));
    await s.create({ resource: 'other/things', namespace: 'a', name: 'q' }, obj('q'));
    expect(s.list({ resource: R, namespace: 'a' }).items.map((o) => o.metadata.name)).toEqual(['x', 'z']);
    const all = s.list({ resource: R });
    expect(all.items.map((o) => o.metadata.name)).toEqual(['x', 'z', 'y']);
    expect(all.revision).toBe(4);
    await s.close();
  });

  it('delivers changes to a watch in revision order, replaying recent history first', async () => {
    const s = make();
    await s.create(key('ns', 'a'), obj('a'));
    await s.create(key('ns', 'b'), obj('b'));
    const seen: ChangeEvent[] = [];
    const h = s.watch({ resource: R, namespace: 'ns' }, 1, { onEvent: (e) => seen.push(e), onError: (e) => { throw e; } });
    await Promise.all([
      s.update(key('ns', 'a'), (c) => ({ ...c, spec: { v: 1 } })),
      s.create(key('other', 'c'), obj('c')),
      s.delete(key('ns', 'b')),
    ]);
    await vi.waitFor(() => expect(seen).toHaveLength(3));
    h.stop();
    await s.create(key('ns', 'late'), obj('late'));
    expect(seen.map((e) => [e.type, e.key.name, e.revision])).toEqual([
      ['ADDED', 'b', 2],
      ['MODIFIED', 'a', 3],
      ['DELETED', 'b', 5],
    ]);
    expect(seen[2]?.object.metadata.resourceVersion).toBe('5');
    await s.close();
  });

  it('rejects concurrent creates of one name except the first, under load', async () => {
    const s = make();
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => s.create(key('ns', 'same'), obj('same'))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    await s.close();
  });
});

describe('lmdb storage persistence', () => {
  it('keeps objects and the revision counter across a reopen', async () => {
    const d = mkdtempSync(join(tmpdir(), 'lmdb-'));
    dirs.push(d);
    const s1 = new LmdbStorage({ path: d });
    await Promise.all(Array.from({ length: 50 }, (_, i) => s1.create(key('ns', `o${i}`), obj(`o${i}`))));
    await s1.close();
    const s2 = new LmdbStorage({ path: d });
    expect(s2.currentRevision()).toBe(50);
    expect(s2.list({ resource: R }).items).toHaveLength(50);
    const next = await s2.create(key('ns', 'after'), obj('after'));
    expect(next.metadata.resourceVersion).toBe('51');
    // The history is persisted too: a watch from before the reopen replays what followed.
    const replayed: number[] = [];
    const h = s2.watch({ resource: R }, 10, { onEvent: (e) => replayed.push(e.revision), onError: (e) => { throw e; } });
    await vi.waitFor(() => expect(replayed).toEqual(Array.from({ length: 41 }, (_, i) => i + 11)));
    h.stop();
    await s2.close();
  });
});

describe('lmdb storage, lists asked for as JSON text', () => {
  it('gives the same items, pages and continuation keys as decoded lists, at the current and an older revision', async () => {
    const d = mkdtempSync(join(tmpdir(), 'lmdb-'));
    dirs.push(d);
    const s = new LmdbStorage({ path: d });
    for (const n of ['a', 'b', 'c', 'd']) await s.create(key('ns', n), obj(n, { spec: { text: `é ${n} "quoted"` } }));
    await s.create(key('other', 'x'), obj('x'));
    const old = s.currentRevision();
    await s.update(key('ns', 'b'), (cur) => ({ ...cur, spec: { text: 'changed' } }));
    await s.delete(key('ns', 'c'));
    await s.create(key('ns', 'e'), obj('e'));
    const asText = (r: ReturnType<Storage['list']>) => (r.encoded ?? []).map((b) => JSON.parse(Buffer.from(b).toString('utf8')));
    for (const req of [{}, { limit: 2 }, { revision: old }, { revision: old, limit: 2, after: { namespace: 'ns', name: 'a' } }]) {
      const plain = s.list({ resource: R, namespace: 'ns' }, req);
      const text = s.list({ resource: R, namespace: 'ns' }, { ...req, encoded: true });
      expect(text.items).toEqual([]);
      expect(asText(text)).toEqual(plain.items);
      expect({ ...text, items: [], encoded: undefined }).toEqual({ ...plain, items: [], encoded: undefined });
    }
    // At the older revision, b is its earlier state and c still exists: both come from the history.
    expect(asText(s.list({ resource: R, namespace: 'ns' }, { revision: old, encoded: true })).map((o) => [o.metadata.name, o.spec.text]))
      .toEqual([['a', 'é a "quoted"'], ['b', 'é b "quoted"'], ['c', 'é c "quoted"'], ['d', 'é d "quoted"']]);
    // A filter needs the objects: the request is served decoded.
    const filtered = s.list({ resource: R }, { encoded: true, filter: (o) => o.metadata.name !== 'x' });
    expect(filtered.encoded).toBeUndefined();
    expect(filtered.items.map((o) => o.metadata.name)).toEqual(['a', 'b', 'd', 'e']);
    await s.close();
  });
});

describe('lmdb storage, compressed values', () => {
  it('reads objects and history written before compression was on, and keeps big objects intact both ways', async () => {
    const d = mkdtempSync(join(tmpdir(), 'lmdb-'));
    dirs.push(d);
    const big = (n: string) => obj(n, { spec: { text: `${n}:`.padEnd(3000, 'x') } });
    // An environment as an earlier version wrote it: plain JSON values.
    const { open } = await import('lmdb');
    const old = open({ path: d, maxDbs: 8, noSubdir: false });
    const objects = old.openDB<KubeObject, [string, string, string]>('objects', { encoding: 'json' });
    const events = old.openDB<unknown, number>('events', { encoding: 'json' });
    const meta = old.openDB<number, string>('meta', { encoding: 'json' });
    const stored = { ...big('old'), metadata: { name: 'old', resourceVersion: '1' } };
    await old.transaction(() => {
      objects.put([R, 'ns', 'old'], stored);
      events.put(1, { t: 'A', k: [R, 'ns', 'old'], o: stored, ts: Date.now() });
      meta.put('revision', 1);
      meta.put('compacted', 0);
    });
    await old.close();

    const s = new LmdbStorage({ path: d, compactionIntervalMs: 0 });
    await s.create(key('ns', 'new'), big('new'));
    expect(s.get(key('ns', 'old'))).toEqual(stored);
    expect((s.get(key('ns', 'new'))?.['spec'] as { text: string }).text).toBe(`new:`.padEnd(3000, 'x'));
    const plain = s.list({ resource: R, namespace: 'ns' });
    const text = s.list({ resource: R, namespace: 'ns' }, { encoded: true });
    expect((text.encoded ?? []).map((b) => JSON.parse(Buffer.from(b).toString('utf8')))).toEqual(plain.items);
    expect(plain.items.map((o) => o.metadata.name)).toEqual(['new', 'old']);
    // The history from before and after replays in order.
    const seen: string[] = [];
    const w = s.watch({ resource: R }, 0, { onEvent: (e) => seen.push(`${e.type} ${e.key.name} ${e.revision}`), onError: () => undefined });
    await vi.waitFor(() => expect(seen).toEqual(['ADDED old 1', 'ADDED new 2']));
    w.stop();
    await s.close();
  });
});
