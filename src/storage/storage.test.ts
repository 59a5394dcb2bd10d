// LmdbStorage beyond the shared contract (conformance.test.ts): persistence across a reopen and values written
// before compression was on, and one mapping of the data file.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../apis/meta/types.js';
import { isStorageError } from './errors.js';
import type { ObjectKey } from './interface.js';
import { LmdbStorage } from './lmdb-storage.js';

const R = 'extensions.example.com/websites';
const key = (namespace: string, name: string): ObjectKey => ({ resource: R, namespace, name });
const obj = (name: string, extra: Record<string, unknown> = {}): KubeObject => ({ metadata: { name }, ...extra });

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** fillIncompressible creates 4,000 objects in namespace ns with 1 KB of random text each (compression cannot shrink it). */
async function fillIncompressible(s: LmdbStorage): Promise<void> {
  for (let b = 0; b < 4; b++) {
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) => s.create(key('ns', `o${b}-${i}`), obj(`o${b}-${i}`, { spec: { filler: randomBytes(750).toString('base64') } }))),
    );
  }
}

describe('lmdb map', () => {
  // Each growth of lmdb-js's map leaves the old mapping alive; a reserved map size keeps it to one mapping.
  it.skipIf(process.platform !== 'linux')('maps data.mdb once as it grows, without preallocating the file', async () => {
    const d = mkdtempSync(join(tmpdir(), 'lmdb-'));
    dirs.push(d);
    const s = new LmdbStorage({ path: d, mapSize: 2 ** 30, compactionIntervalMs: 0 });
    await fillIncompressible(s);
    const mappings = readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .filter((l) => l.endsWith(join(d, 'data.mdb')));
    expect(mappings).toHaveLength(1);
    // Several MB written: lmdb-js alone (a 128 KB start, doubling) would have remapped several times.
    const size = statSync(join(d, 'data.mdb')).size;
    expect(size).toBeGreaterThan(4 * 2 ** 20);
    expect(size).toBeLessThan(2 ** 30 / 4);
    await s.close();
  });
});

describe('lmdb map size', () => {
  // The flags reference (docs/reference.md) and openLayout say --lmdb-map-size is no limit on the data: past it lmdb-js grows the map itself.
  it('keeps accepting writes past a map size smaller than the data', async () => {
    const d = mkdtempSync(join(tmpdir(), 'lmdb-'));
    dirs.push(d);
    const s = new LmdbStorage({ path: d, mapSize: 2 ** 20, compactionIntervalMs: 0 });
    await fillIncompressible(s);
    expect(statSync(join(d, 'data.mdb')).size).toBeGreaterThan(4 * 2 ** 20);
    expect((await s.list({ resource: R, namespace: 'ns' })).items).toHaveLength(4000);
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
    expect((await s2.list({ resource: R })).items).toHaveLength(50);
    const next = await s2.create(key('ns', 'after'), obj('after'));
    expect(next.metadata.resourceVersion).toBe('51');
    // The history is persisted too: a watch from before the reopen replays what followed.
    const replayed: number[] = [];
    const h = s2.watch({ resource: R }, 10, {
      onEvent: (e) => replayed.push(e.revision),
      onError: (e) => {
        throw e;
      },
    });
    await vi.waitFor(() => expect(replayed).toEqual(Array.from({ length: 41 }, (_, i) => i + 11)));
    h.stop();
    await s2.close();
  });
});

describe('lmdb storage, a sealed resource', () => {
  const OTHER = 'extensions.example.com/others';
  const expired = (s: LmdbStorage, resource: string, from: number) => {
    try {
      s.watch({ resource }, from, { onEvent: () => undefined, onError: () => undefined }).stop();
      return false;
    } catch (e) {
      return isStorageError(e, 'Expired');
    }
  };

  it('keeps its seal and counter across a reopen', async () => {
    const d = mkdtempSync(join(tmpdir(), 'lmdb-'));
    dirs.push(d);
    const s1 = new LmdbStorage({ path: d });
    await s1.create(key('ns', 'a'), obj('a'));
    const sealed = await s1.seal(R, 1_000_000);
    await s1.close();
    const s2 = new LmdbStorage({ path: d });
    expect([s2.currentRevision(), s2.sealedAt(R)]).toEqual([sealed, 1_000_000]);
    expect(expired(s2, R, 1)).toBe(true);
    const next = await s2.create(key('ns', 'b'), obj('b'));
    expect(next.metadata.resourceVersion).toBe('1000001');
    await s2.close();
  });

  // What docs/migration.md says of a move here: the jump is counted as history by the count bound, so the next
  // compaction drops the other resources' history from before the seal too (their clients re-list once).
  it("compacts the other resources' history from before a seal past the history bound", async () => {
    const d = mkdtempSync(join(tmpdir(), 'lmdb-'));
    dirs.push(d);
    const s = new LmdbStorage({ path: d, historyEvents: 100, compactionIntervalMs: 0 });
    for (let i = 0; i < 10; i++) await s.create({ resource: OTHER, namespace: 'ns', name: `o${i}` }, obj(`o${i}`));
    expect(expired(s, OTHER, 5)).toBe(false);
    await s.seal(R, 1_000_000);
    await s.create({ resource: OTHER, namespace: 'ns', name: 'after' }, obj('after'));
    await s.compact();
    expect(expired(s, OTHER, 5)).toBe(true);
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
    expect(await s.get(key('ns', 'old'))).toEqual(stored);
    expect(((await s.get(key('ns', 'new')))?.['spec'] as { text: string } | undefined)?.text).toBe(`new:`.padEnd(3000, 'x'));
    const plain = await s.list({ resource: R, namespace: 'ns' });
    const text = await s.list({ resource: R, namespace: 'ns' }, { encoded: true });
    expect((text.encoded ?? []).map((b) => JSON.parse(Buffer.from(b).toString('utf8')))).toEqual(plain.items);
    expect(plain.items.map((o) => o.metadata.name)).toEqual(['new', 'old']);
    // The history from before and after replays in order.
    const seen: string[] = [];
    const w = s.watch({ resource: R }, 0, { onEvent: (e) => seen.push(`${e.type} ${e.key.name} ${e.revision}`), onError: () => undefined });
    await vi.waitFor(() => expect(seen).toEqual(['ADDED old 1', 'ADDED new 2']));
    w.stop();
    await s.close();
    // The new object is stored compressed, the old one as it was.
    const env = open({ path: d, maxDbs: 8, noSubdir: false });
    const raw = env.openDB<Uint8Array, [string, string, string]>('objects', { encoding: 'binary' });
    expect(Buffer.from(raw.get([R, 'ns', 'new']) as Uint8Array).length).toBeLessThan(1000);
    expect(JSON.parse(Buffer.from(raw.get([R, 'ns', 'old']) as Uint8Array).toString('utf8'))).toEqual(stored);
    await env.close();
  });
});
