// Older list snapshots and pagination (storage/snapshot readList) through both backends: what a client reads with
// resourceVersionMatch=Exact or a continue token must be exactly the list it would have read at that revision.
import { describe, expect, it } from 'vitest';
import { ALL, backends, key, R } from '../../test/helpers/storage-fixtures.js';
import type { KubeObject } from '../apis/meta/types.js';
import { isStorageError } from './errors.js';
import type { KeyPrefix, ListRequest, ListResult, Storage } from './interface.js';

const OTHER = 'extensions.example.com/others';
const obj = (namespace: string, name: string, labels: Record<string, string> = {}, spec: Record<string, unknown> = {}): KubeObject =>
  ({ metadata: { namespace, name, labels }, spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', ...spec } });
const names = (r: ListResult) => r.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
const positionOf = (o: KubeObject) => ({ namespace: o.metadata.namespace as string, name: o.metadata.name as string });

// mulberry32: a small deterministic PRNG so a failing sequence can be replayed.
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;

const NAMESPACES = ['a', 'b', 'c'] as const;
const NAMES = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5'] as const;
let counter = 0;

// mutate makes one random change: create (or re-create) a missing name, update, no-op update or delete an existing
// one, sometimes in another resource (which no list of R may show).
async function mutate(s: Storage, rand: () => number): Promise<void> {
  const k = key(pick(rand, NAMESPACES), pick(rand, NAMES), rand() < 0.1 ? OTHER : R);
  const tier = rand() < 0.5 ? 'web' : 'db';
  if (!s.get(k)) {
    await s.create(k, obj(k.namespace, k.name, { tier }, { n: ++counter }));
    return;
  }
  const r = rand();
  if (r < 0.45) await s.update(k, (cur) => ({ ...cur, metadata: { ...cur.metadata, labels: { tier } }, spec: { ...(cur['spec'] as object), n: ++counter } }));
  else if (r < 0.55) await s.update(k, () => null);
  else await s.delete(k);
}

// pages lists a prefix page by page at the revision of the first page, running `between` before every later page.
async function pages(s: Storage, prefix: KeyPrefix, req: Omit<ListRequest, 'revision' | 'after'>, between: () => Promise<void>): Promise<ListResult[]> {
  const out: ListResult[] = [s.list(prefix, req)];
  for (let last = out[0] as ListResult; last.more; ) {
    expect(last.items.length).toBeGreaterThan(0);
    await between();
    last = s.list(prefix, { ...req, revision: (out[0] as ListResult).revision, after: positionOf(last.items[last.items.length - 1] as KubeObject) });
    out.push(last);
    expect(out.length).toBeLessThan(200);
  }
  return out;
}

describe.each(backends)('%s storage: lists at an older revision', (_name, make, settle) => {
  it('returns, for every earlier revision, exactly what a list returned at that moment', async () => {
    const s = make();
    const rand = rng(7);
    const seen: { revision: number; all: ListResult; b: ListResult }[] = [];
    const record = () => seen.push({ revision: s.currentRevision(), all: s.list(ALL), b: s.list({ resource: R, namespace: 'b' }) });
    record();
    for (let i = 0; i < 160; i++) {
      await mutate(s, rand);
      record();
    }
    expect(s.currentRevision()).toBeGreaterThan(120);
    for (const snap of seen) {
      expect(s.list(ALL, { revision: snap.revision })).toEqual(snap.all);
      expect(s.list({ resource: R, namespace: 'b' }, { revision: snap.revision })).toEqual(snap.b);
    }
  });

  it('shows a name deleted and re-created since in the state it had at the revision asked for', async () => {
    const s = make();
    const k = key('ns', 'site');
    await s.create(k, obj('ns', 'site', {}, { v: 1 })); // 1
    await s.update(k, (c) => ({ ...c, spec: { v: 2 } })); // 2
    await s.delete(k); // 3
    await s.create(key('ns', 'other'), obj('ns', 'other')); // 4
    await s.create(k, obj('ns', 'site', {}, { v: 5 })); // 5
    await s.update(k, (c) => ({ ...c, spec: { v: 6 } })); // 6
    const at = (revision: number) => s.list(ALL, { revision }).items.map((o) => [o.metadata.name, o.metadata.resourceVersion, (o['spec'] as { v?: number }).v]);
    expect(at(0)).toEqual([]);
    expect(at(1)).toEqual([['site', '1', 1]]);
    expect(at(2)).toEqual([['site', '2', 2]]);
    expect(at(3)).toEqual([]);
    expect(at(4)).toEqual([['other', '4', undefined]]);
    expect(at(5)).toEqual([['other', '4', undefined], ['site', '5', 5]]);
    expect(at(6)).toEqual([['other', '4', undefined], ['site', '6', 6]]);
    expect(s.list(ALL, { revision: 3 }).revision).toBe(3);
  });

  it('refuses a revision newer than the current one with TooLarge', async () => {
    const s = make();
    await s.create(key('ns', 'a'), obj('ns', 'a'));
    expect(() => s.list(ALL, { revision: 2 })).toThrow(expect.objectContaining({ code: 'TooLarge' }));
    expect(() => s.list(ALL, { revision: 2, limit: 1 })).toThrow(expect.objectContaining({ code: 'TooLarge' }));
    expect(s.list(ALL, { revision: 1 }).items).toHaveLength(1);
  });

  it('refuses a revision older than the compacted one with Expired and still serves the compacted one exactly', async () => {
    const s = make(4);
    const rand = rng(11);
    const seen = new Map<number, ListResult>([[0, s.list(ALL)]]);
    for (let i = 0; i < 30; i++) {
      await mutate(s, rand);
      seen.set(s.currentRevision(), s.list(ALL));
    }
    await settle(s);
    const compacted = s.compactedRevision();
    const current = s.currentRevision();
    expect(compacted).toBe(current - 4);
    let thrown: unknown;
    try {
      s.list(ALL, { revision: compacted - 1 });
    } catch (e) {
      thrown = e;
    }
    expect(isStorageError(thrown, 'Expired')).toBe(true);
    expect(() => s.list(ALL, { revision: 0, limit: 2 })).toThrow(expect.objectContaining({ code: 'Expired' }));
    for (let r = compacted; r <= current; r++) {
      if (seen.has(r)) expect(s.list(ALL, { revision: r })).toEqual(seen.get(r));
    }
  });
});

describe.each(backends)('%s storage: pagination', (_name, make) => {
  async function seed(s: Storage): Promise<void> {
    for (const ns of NAMESPACES) {
      for (const n of NAMES) await s.create(key(ns, n), obj(ns, n, { tier: n < 'n3' ? 'web' : 'db' }));
    }
    await s.create(key('a', 'n0', OTHER), obj('a', 'n0'));
  }

  it('composes pages read at one revision into exactly that snapshot while objects change between pages', async () => {
    for (const limit of [1, 2, 4, 5, 17, 18, 100]) {
      const s = make();
      await seed(s);
      const snapshot = s.list(ALL);
      const rand = rng(limit);
      const got = await pages(s, ALL, { limit }, async () => {
        for (let i = 0; i < 3; i++) await mutate(s, rand);
      });
      expect(got.flatMap((p) => p.items), `limit ${limit}`).toEqual(snapshot.items);
      got.forEach((p, i) => {
        expect(p.revision).toBe(snapshot.revision);
        expect(p.items.length).toBe(i < got.length - 1 ? limit : snapshot.items.length - limit * (got.length - 1));
        expect(p.more).toBe(i < got.length - 1);
        if (p.more) expect(p.remaining).toBe(snapshot.items.length - limit * (i + 1));
        else expect(p).not.toHaveProperty('remaining');
      });
      await s.close();
    }
  });

  it('reports remaining as the count of snapshot objects after the page, whatever changed since', async () => {
    const s = make();
    await seed(s); // 18 websites: a/n0..a/n5, b/n0..b/n5, c/n0..c/n5
    const first = s.list(ALL, { limit: 5 });
    expect(names(first)).toEqual(['a/n0', 'a/n1', 'a/n2', 'a/n3', 'a/n4']);
    expect(first).toMatchObject({ more: true, remaining: 13 });
    // Before the boundary and after it: deletes, creates, updates and a delete + re-create.
    await s.delete(key('a', 'n1'));
    await s.delete(key('b', 'n2'));
    await s.delete(key('c', 'n5'));
    await s.create(key('a', 'm'), obj('a', 'm'));
    await s.create(key('b', 'n25'), obj('b', 'n25'));
    await s.create(key('d', 'x'), obj('d', 'x'));
    await s.create(key('d', 'y'), obj('d', 'y'));
    await s.update(key('b', 'n0'), (c) => ({ ...c, spec: { changed: true } }));
    await s.delete(key('c', 'n0'));
    await s.create(key('c', 'n0'), obj('c', 'n0', {}, { recreated: true }));
    const second = s.list(ALL, { revision: first.revision, after: positionOf(first.items[4] as KubeObject), limit: 5 });
    expect(names(second)).toEqual(['a/n5', 'b/n0', 'b/n1', 'b/n2', 'b/n3']);
    expect(second.items[1]?.['spec']).not.toHaveProperty('changed');
    expect(second).toMatchObject({ revision: first.revision, more: true, remaining: 8 });
    const third = s.list(ALL, { revision: first.revision, after: positionOf(second.items[4] as KubeObject), limit: 7 });
    expect(names(third)).toEqual(['b/n4', 'b/n5', 'c/n0', 'c/n1', 'c/n2', 'c/n3', 'c/n4']);
    expect(third.items[2]?.['spec']).not.toHaveProperty('recreated');
    expect(third).toMatchObject({ more: true, remaining: 1 });
    const last = s.list(ALL, { revision: first.revision, after: positionOf(third.items[6] as KubeObject), limit: 7 });
    expect(names(last)).toEqual(['c/n5']);
    expect(last.more).toBe(false);
    expect(last).not.toHaveProperty('remaining');
    // The current list sees the changes.
    const now = s.list(ALL, { limit: 3 });
    expect(names(now)).toEqual(['a/m', 'a/n0', 'a/n2']);
    expect(now.remaining).toBe(19 - 3);
  });

  it('reports remaining on a page of the current revision, and none when the page reaches the end exactly', async () => {
    const s = make();
    await seed(s);
    expect(s.list(ALL, { limit: 17 })).toMatchObject({ more: true, remaining: 1 });
    const exact = s.list(ALL, { limit: 18 });
    expect(exact.items).toHaveLength(18);
    expect(exact.more).toBe(false);
    expect(exact).not.toHaveProperty('remaining');
    const whole = s.list(ALL, { limit: 0 });
    expect(whole.items).toHaveLength(18);
    expect(whole.more).toBe(false);
  });

  it('applies a filter before the limit and gives no remaining count with a filter', async () => {
    const s = make();
    await seed(s);
    const isWeb = (o: KubeObject) => o.metadata.labels?.['tier'] === 'web';
    const snapshot = s.list(ALL, { filter: isWeb });
    expect(snapshot.items).toHaveLength(9);
    const rand = rng(3);
    const got = await pages(s, ALL, { limit: 2, filter: isWeb }, async () => {
      for (let i = 0; i < 4; i++) await mutate(s, rand);
    });
    expect(got.flatMap((p) => p.items)).toEqual(snapshot.items);
    for (const p of got) {
      expect(p.items.length).toBeLessThanOrEqual(2);
      expect(p.items.every(isWeb)).toBe(true);
      expect(p).not.toHaveProperty('remaining');
    }
    // Filtered-out objects do not use up the limit: the first page holds two matches.
    expect(names(got[0] as ListResult)).toEqual(['a/n0', 'a/n1']);
    expect((got[got.length - 1] as ListResult).more).toBe(false);
    // A filter that matches nothing: one empty page, nothing more.
    expect(s.list(ALL, { limit: 3, filter: () => false })).toMatchObject({ items: [], more: false });
  });

  it('pages one namespace without leaking other namespaces, and places a position from another namespace', async () => {
    const s = make();
    await seed(s);
    const b: KeyPrefix = { resource: R, namespace: 'b' };
    const snapshot = s.list(b);
    expect(names(snapshot)).toEqual(NAMES.map((n) => `b/${n}`));
    const rand = rng(5);
    const got = await pages(s, b, { limit: 4 }, async () => {
      for (let i = 0; i < 4; i++) await mutate(s, rand);
    });
    expect(got.map(names)).toEqual([['b/n0', 'b/n1', 'b/n2', 'b/n3'], ['b/n4', 'b/n5']]);
    expect(got[0]).toMatchObject({ more: true, remaining: 2 });
    expect(got[1]?.more).toBe(false);
    const revision = snapshot.revision;
    // A position before the namespace starts it from its first object; one after it leaves nothing.
    expect(names(s.list(b, { revision, after: { namespace: 'a', name: 'zzz' }, limit: 2 }))).toEqual(['b/n0', 'b/n1']);
    expect(s.list(b, { revision, after: { namespace: 'c', name: 'a' }, limit: 2 })).toMatchObject({ items: [], more: false });
    // Across all namespaces a position runs into the next namespace; the other resource never shows.
    expect(names(s.list(ALL, { revision, after: { namespace: 'b', name: 'n5' }, limit: 2 }))).toEqual(['c/n0', 'c/n1']);
    expect(names(s.list(ALL, { revision, after: { namespace: 'c', name: 'n5' } }))).toEqual([]);
    expect(names(s.list({ resource: OTHER }, { revision }))).toEqual(['a/n0']);
  });

  it('starts a page after a position whose object no longer exists', async () => {
    const s = make();
    await seed(s);
    await s.delete(key('a', 'n2'));
    const page = s.list(ALL, { after: { namespace: 'a', name: 'n2' }, limit: 2 });
    expect(names(page)).toEqual(['a/n3', 'a/n4']);
    expect(page.remaining).toBe(13);
  });
});
