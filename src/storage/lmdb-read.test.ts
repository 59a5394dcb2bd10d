// Issue 24, part 1: a list page that stops before the end of its range left its cursor, and with it an lmdb read
// transaction, open; once lmdb-js renewed its shared read transaction (every macrotask) the old one was orphaned
// and kept a reader slot until V8 collected it. With writes between pages, MDB_READERS_FULL came after ~150 pages.
// Every kind of read that can stop early is driven here across macrotasks, with writes between, well past the 126
// slots; then the reader table must be back to idle.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../apis/meta/types.js';
import type { KeyPrefix, ListRequest, ObjectKey, WatchSink } from './interface.js';
import { LmdbStorage } from './lmdb-storage.js';

const R = 'extensions.example.com/websites';
const NS: KeyPrefix = { resource: R, namespace: 'a' };
const key = (name: string): ObjectKey => ({ resource: R, namespace: 'a', name });
const obj = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name, namespace: 'a', labels } });
const macrotask = () => new Promise((r) => setTimeout(r, 0));
// More rounds than lmdb has reader slots (126): one leaked transaction per round fails well before the end.
const ROUNDS = 300;

const dirs: string[] = [];
const stores: LmdbStorage[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function filled(n = 40): Promise<LmdbStorage> {
  const d = mkdtempSync(join(tmpdir(), 'lmdb-read-'));
  dirs.push(d);
  const s = new LmdbStorage({ path: d, compactionIntervalMs: 0 });
  stores.push(s);
  for (let i = 0; i < n; i++) await s.create(key(`o${String(i).padStart(3, '0')}`), obj(`o${i}`, { tier: i % 2 ? 'odd' : 'even' }));
  return s;
}

// rounds runs `read` then a write, each round in its own macrotask, and returns the reader table after it all.
async function rounds(s: LmdbStorage, read: (round: number) => Promise<unknown>): Promise<ReturnType<LmdbStorage['readers']>> {
  for (let i = 0; i < ROUNDS; i++) {
    await read(i);
    await s.update(key('o000'), (o) => ({ ...o, spec: { round: i } }));
    await macrotask();
  }
  await macrotask();
  return s.readers();
}

const idle = { held: 1, active: 0 };

describe('lmdb reads close their read transactions', () => {
  const pageKinds: [string, ListRequest][] = [
    ['a first page', { limit: 5 }],
    ['a page as stored JSON (Table, metadata and plain lists)', { limit: 5, encoded: true }],
    [
      'a page with a label filter and its prefilter',
      { limit: 3, filter: (o) => o.metadata.labels?.tier === 'odd', prefilter: (b) => Buffer.from(b).includes('"odd"'), encoded: true },
    ],
    ['a page with a filter only', { limit: 3, filter: (o) => o.metadata.labels?.tier === 'even' }],
  ];
  for (const [what, req] of pageKinds) {
    it(`${what}, under writes, never exhausts the reader slots`, async () => {
      const s = await filled();
      const readers = await rounds(s, () => s.list(NS, req));
      expect(readers).toMatchObject(idle);
      expect(s.readable()).toBe(true);
    });
  }

  it('later pages (continue) and pages at an older revision (history undone) close theirs', async () => {
    const s = await filled();
    const first = await s.list(NS, { limit: 5 });
    const readers = await rounds(s, async (i) => {
      // Each page read at the first page's revision: the history since then is read and undone each time.
      const page = await s.list(NS, { limit: 5, revision: first.revision, after: { namespace: 'a', name: `o${String(i % 30).padStart(3, '0')}` } });
      expect(page.items).toHaveLength(5);
    });
    expect(readers).toMatchObject(idle);
  });

  it('a read that throws halfway (a filter that fails) closes its cursor', async () => {
    const s = await filled();
    const readers = await rounds(s, async () => {
      let seen = 0;
      const failing = (): boolean => {
        if (++seen === 3) throw new Error('filter failed');
        return true;
      };
      await expect(s.list(NS, { limit: 10, filter: failing })).rejects.toThrow('filter failed');
    });
    expect(readers).toMatchObject(idle);
  });

  it('watch replays from old revisions close theirs', async () => {
    const s = await filled();
    const from = 0;
    const readers = await rounds(s, async () => {
      const got: number[] = [];
      // A replay paced by a slow sink: stopped after its first event, the rest of its batch never read.
      const h = await new Promise<{ stop(): void }>((resolve, reject) => {
        const sink: WatchSink = {
          onEvent: (e) => got.push(e.revision),
          onError: reject,
          ready: () => macrotask().then(() => undefined),
        };
        const handle = s.watch(NS, from, sink);
        void macrotask().then(() => resolve(handle));
      });
      h.stop();
      expect(got[0]).toBe(from + 1);
    });
    expect(readers).toMatchObject(idle);
  });

  it('tells how data.mdb pages are used', async () => {
    const s = await filled(200);
    const p = s.pages();
    expect(p.pageSize).toBe(4096);
    expect(p.used).toBeGreaterThan(2);
    expect(p.used + p.free).toBeGreaterThanOrEqual(p.used);
    expect(p.map).toBeGreaterThan(p.used + p.free);
  });
});
