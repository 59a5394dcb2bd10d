/**
 * @module storage/conformance
 * The Storage contract (storage/interface) as one vitest suite, the role of k8s.io/apiserver's pkg/storage/testing:
 * every backend runs it from its own test file, `storageConformance('lmdb', makeLmdb, { … })`, and passes or is not
 * a Storage. It uses nothing but the interface (no backend internals, no compaction call): what a backend must do to
 * shorten its history for the Expired cases is a hook of its own (`shortHistory`).
 *
 * Revisions are never assumed to start at 1 or to be dense: every expectation is stated with the revisions the writes
 * answered, so a remote engine whose revision counter other keys share passes as well. Each test makes its own stores
 * and the suite closes them after it.
 *
 * Test-only code: it imports vitest, so tsconfig.json leaves it out of the build (test/tsconfig.json checks it).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../apis/meta/types.js';
import { isStorageError } from './errors.js';
import type { ChangeEvent, KeyPrefix, ListRequest, ListResult, ObjectKey, Storage, WatchHandle, WatchSink } from './interface.js';

/** ConformanceOptions says what the backend offers beyond the required contract. */
export interface ConformanceOptions {
  /** The backend answers `encoded` lists with each item's JSON text (lmdb); otherwise it must ignore the flag. */
  supportsEncoded: boolean;
  /**
   * shortHistory makes a store whose history keeps only the last `keep` changes, and `trim` applies that bound as of
   * now: afterwards compactedRevision() is the revision of the write `keep` writes before the last one. The Expired
   * cases run only with it.
   */
  shortHistory?: {
    make(keep: number): Storage | Promise<Storage>;
    trim(s: Storage): Promise<void>;
  };
}

const R = 'extensions.example.com/websites';
const OTHER = 'extensions.example.com/others';
const ALL: KeyPrefix = { resource: R };
const NAMESPACES = ['a', 'b', 'c'] as const;
const NAMES = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5'] as const;

const key = (namespace: string, name: string, resource = R): ObjectKey => ({ resource, namespace, name });
const obj = (namespace: string, name: string, labels: Record<string, string> = {}, spec: Record<string, unknown> = {}): KubeObject => ({
  metadata: { namespace, name, labels },
  spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', ...spec },
});
const rv = (o: KubeObject) => Number(o.metadata.resourceVersion);
const names = (r: ListResult) => r.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
const positionOf = (o: KubeObject) => ({ namespace: o.metadata.namespace as string, name: o.metadata.name as string });
const isExpired = (e: unknown) => isStorageError(e, 'Expired');
const nextTurn = () => new Promise((r) => setImmediate(r));

/** Recorder is a WatchSink that records a subscription; when gated, each ready() waits until open() (or ungate()). */
export class Recorder implements WatchSink {
  readonly events: ChangeEvent[] = [];
  readonly errors: Error[] = [];
  readyCalls = 0;
  #waiting: (() => void)[] = [];
  #gated: boolean;

  constructor(gated = false) {
    this.#gated = gated;
  }
  onEvent(e: ChangeEvent): void {
    this.events.push(e);
  }
  onError(err: Error): void {
    this.errors.push(err);
  }
  ready(): Promise<void> {
    this.readyCalls++;
    if (!this.#gated) return Promise.resolve();
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }
  get revisions(): number[] {
    return this.events.map((e) => e.revision);
  }
  /** waiting: the replay is paused in ready(). */
  get waiting(): boolean {
    return this.#waiting.length > 0;
  }
  /** open lets every paused ready() resolve; the next one pauses again. */
  open(): void {
    for (const r of this.#waiting.splice(0)) r();
  }
  /** ungate turns pacing off for the rest of the replay. */
  ungate(): void {
    this.#gated = false;
    this.open();
  }
}

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

// mutate makes one random change: create (or re-create) a missing name, update, no-op update or delete an existing
// one, sometimes in another resource (which no list of R may show).
let counter = 0;
async function mutate(s: Storage, rand: () => number): Promise<void> {
  const k = key(pick(rand, NAMESPACES), pick(rand, NAMES), rand() < 0.1 ? OTHER : R);
  const tier = rand() < 0.5 ? 'web' : 'db';
  if (!(await s.get(k))) {
    await s.create(k, obj(k.namespace, k.name, { tier }, { n: ++counter }));
    return;
  }
  const r = rand();
  if (r < 0.45) await s.update(k, (cur) => ({ ...cur, metadata: { ...cur.metadata, labels: { tier } }, spec: { ...(cur['spec'] as object), n: ++counter } }));
  else if (r < 0.55) await s.update(k, () => null);
  else await s.delete(k);
}

// createMany creates n objects, 200 at a time (concurrent writes may share a commit), and answers their revisions.
async function createMany(s: Storage, n: number, ns = 'ns', prefix = 'o', resource = R): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i += 200) {
    const batch = Array.from({ length: Math.min(n, i + 200) - i }, (_, j) => `${prefix}${i + j}`);
    out.push(...(await Promise.all(batch.map((name) => s.create(key(ns, name, resource), obj(ns, name))))).map(rv));
  }
  return out.sort((a, b) => a - b);
}

// pages lists a prefix page by page at the revision of the first page, running `between` before every later page.
async function pages(s: Storage, prefix: KeyPrefix, req: Omit<ListRequest, 'revision' | 'after'>, between: () => Promise<void>): Promise<ListResult[]> {
  const out: ListResult[] = [await s.list(prefix, req)];
  for (let last = out[0] as ListResult; last.more; ) {
    expect(last.items.length).toBeGreaterThan(0);
    const tail = last.items[last.items.length - 1] as KubeObject;
    expect(last.last).toEqual(key(tail.metadata.namespace as string, tail.metadata.name as string, prefix.resource));
    await between();
    // The position a page tells goes with the next one, as a continue token carries it.
    const position = last.position === undefined ? {} : { position: last.position };
    last = await s.list(prefix, {
      ...req,
      revision: (out[0] as ListResult).revision,
      after: positionOf(last.items[last.items.length - 1] as KubeObject),
      ...position,
    });
    out.push(last);
    expect(out.length).toBeLessThan(200);
  }
  return out;
}

// expectWatchExpired opens a watch that must be Expired, in either form the contract allows: thrown by watch(), or
// reported through onError before any event.
async function expectWatchExpired(s: Storage, prefix: KeyPrefix, from: number): Promise<void> {
  const sink = new Recorder();
  let handle: WatchHandle;
  try {
    handle = s.watch(prefix, from, sink);
  } catch (e) {
    expect(isExpired(e), String(e)).toBe(true);
    return;
  }
  await vi.waitFor(() => expect(sink.errors).toHaveLength(1));
  expect(isExpired(sink.errors[0]), String(sink.errors[0])).toBe(true);
  expect(sink.events).toEqual([]);
  handle.stop();
}

/** storageConformance defines the contract's tests for one backend; `make` gives a fresh, empty store each call. */
export function storageConformance(name: string, make: () => Storage | Promise<Storage>, opts: ConformanceOptions): void {
  describe(`${name} storage: conformance`, () => {
    const open = new Set<Storage>();
    const track = (s: Storage) => {
      open.add(s);
      return s;
    };
    const fresh = async () => track(await make());
    afterEach(async () => {
      for (const s of [...open]) await s.close();
      open.clear();
    });

    describe('marks', () => {
      it('keeps the marks it was given and no other (a backend without marks has neither method)', async () => {
        const s = await fresh();
        if (!s.mark || !s.marked) {
          expect([s.mark, s.marked]).toEqual([undefined, undefined]);
          return;
        }
        expect(s.marked('metadata-repaired/x')).toBe(false);
        const before = s.currentRevision();
        await s.mark('metadata-repaired/x');
        expect(s.marked('metadata-repaired/x')).toBe(true);
        expect(s.marked('metadata-repaired/y')).toBe(false);
        // A mark is no write of an object: no revision, no event.
        expect(s.currentRevision()).toBe(before);
      });
    });

    describe('seal', () => {
      it('moves the counter on, expires the sealed resource from before the seal only, and delivers on past the gap', async () => {
        const s = await fresh();
        if (!s.seal || !s.sealedAt) {
          expect([s.seal, s.sealedAt]).toEqual([undefined, undefined]);
          return;
        }
        const before = rv(await s.create(key('a', 'n0'), obj('a', 'n0')));
        const other = rv(await s.create(key('a', 'n0', OTHER), obj('a', 'n0')));
        expect(s.sealedAt(R)).toBe(0);
        const sealed = await s.seal(R, other + 1000);
        expect(sealed).toBeGreaterThanOrEqual(other + 1000);
        expect([s.currentRevision(), s.sealedAt(R), s.sealedAt(OTHER)]).toEqual([sealed, sealed, 0]);
        // A seal below the counter does not move it back.
        expect(await s.seal(R, 1)).toBe(sealed);
        // The sealed resource's past is gone for watches and snapshot lists; another resource's is not.
        await expectWatchExpired(s, ALL, before);
        await expect(s.list(ALL, { revision: before })).rejects.toSatisfy(isExpired);
        expect(names(await s.list(ALL))).toEqual(['a/n0']);
        expect(names(await s.list({ resource: OTHER }, { revision: other }))).toEqual(['a/n0']);
        // Delivery goes on past the revisions no event carries: a watch from the seal gets the next write.
        expect(await s.waitForRevision(sealed, 1000)).toBe(true);
        const sink = new Recorder();
        const h1 = s.watch(ALL, sealed, sink);
        const otherSink = new Recorder();
        const h2 = s.watch({ resource: OTHER }, other, otherSink);
        const next = await s.create(key('b', 'n1'), obj('b', 'n1'));
        expect(rv(next)).toBeGreaterThan(sealed);
        await vi.waitFor(() => expect(sink.events.map((e) => e.revision)).toEqual([rv(next)]));
        const third = await s.create(key('b', 'n1', OTHER), obj('b', 'n1'));
        await vi.waitFor(() => expect(otherSink.events.map((e) => e.revision)).toEqual([rv(third)]));
        h1.stop();
        h2.stop();
      });
    });

    describe('writes', () => {
      it('gives every write a revision greater than every earlier one, and currentRevision follows the writes', async () => {
        const s = await fresh();
        const base = s.currentRevision();
        const a = await s.create(key('ns', 'a'), obj('ns', 'a'));
        const b = await s.create(key('ns', 'b'), obj('ns', 'b'));
        const a2 = await s.update(key('ns', 'a'), (cur) => ({ ...cur, spec: { x: 1 } }));
        const other = await s.create(key('ns', 'a', OTHER), obj('ns', 'a'));
        const gone = await s.delete(key('ns', 'b'));
        const rvs = [a, b, a2, other, gone].map(rv);
        expect(rvs[0]).toBeGreaterThan(base);
        for (let i = 1; i < rvs.length; i++) expect(rvs[i]).toBeGreaterThan(rvs[i - 1] as number);
        expect(s.currentRevision()).toBe(rvs.at(-1));
        // The delete answers the last state at the deletion's revision; the object is gone.
        expect(gone.metadata.name).toBe('b');
        expect(await s.get(key('ns', 'b'))).toBeUndefined();
        expect(await s.get(key('ns', 'a'))).toEqual(a2);
        expect(await s.get(key('ns', 'a', OTHER))).toEqual(other);
        // Refused and empty writes use no revision.
        await expect(s.create(key('ns', 'a'), obj('ns', 'a'))).rejects.toSatisfy((e) => isStorageError(e, 'KeyExists'));
        await s.update(key('ns', 'a'), () => null);
        expect(s.currentRevision()).toBe(rvs.at(-1));
        const later = await s.create(key('ns', 'c'), obj('ns', 'c'));
        expect(rv(later)).toBeGreaterThan(rvs.at(-1) as number);
      });

      it('refuses a create of a taken key with KeyExists, an update or delete of a missing key with KeyNotFound', async () => {
        const s = await fresh();
        const a = await s.create(key('ns', 'a'), obj('ns', 'a'));
        await expect(s.create(key('ns', 'a'), obj('ns', 'a'))).rejects.toSatisfy((e) => isStorageError(e, 'KeyExists'));
        await expect(s.update(key('ns', 'x'), (c) => c)).rejects.toSatisfy((e) => isStorageError(e, 'KeyNotFound'));
        await expect(s.delete(key('ns', 'x'))).rejects.toSatisfy((e) => isStorageError(e, 'KeyNotFound'));
        // The same name in another namespace or resource is another key.
        await s.create(key('other', 'a'), obj('other', 'a'));
        await s.create(key('ns', 'a', OTHER), obj('ns', 'a'));
        await expect(s.update(key('ns', 'a', 'extensions.example.com/nothing'), (c) => c)).rejects.toSatisfy((e) => isStorageError(e, 'KeyNotFound'));
        expect(await s.get(key('ns', 'a'))).toEqual(a);
      });

      it('writes nothing when tryUpdate throws or returns null, or a delete check throws', async () => {
        const s = await fresh();
        const a = await s.create(key('ns', 'a'), obj('ns', 'a'));
        const sink = new Recorder();
        const h = s.watch(ALL, rv(a), sink);
        await expect(
          s.update(key('ns', 'a'), () => {
            throw new Error('no');
          }),
        ).rejects.toThrow('no');
        await expect(
          s.delete(key('ns', 'a'), () => {
            throw new Error('precondition');
          }),
        ).rejects.toThrow('precondition');
        const same = await s.update(key('ns', 'a'), () => null);
        expect(same).toEqual(a);
        expect(s.currentRevision()).toBe(rv(a));
        expect(await s.get(key('ns', 'a'))).toEqual(a);
        // The check saw the current object; the next write is the first change anyone is told of.
        const seen: KubeObject[] = [];
        const gone = await s.delete(key('ns', 'a'), (cur) => void seen.push(cur));
        expect(seen).toEqual([a]);
        await vi.waitFor(() => expect(sink.revisions).toEqual([rv(gone)]));
        h.stop();
      });

      it('lets exactly one of concurrent creates of one name succeed', async () => {
        const s = await fresh();
        const results = await Promise.allSettled(Array.from({ length: 20 }, () => s.create(key('ns', 'same'), obj('ns', 'same'))));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(isStorageError(r.reason, 'KeyExists')).toBe(true);
      });
    });

    describe('lists', () => {
      it('lists one namespace or all, ordered by namespace then name, at the revision of the snapshot', async () => {
        const s = await fresh();
        await s.create(key('b', 'y'), obj('b', 'y'));
        await s.create(key('a', 'z'), obj('a', 'z'));
        const x = await s.create(key('a', 'x'), obj('a', 'x'));
        const q = await s.create(key('a', 'q', OTHER), obj('a', 'q'));
        const one = await s.list({ resource: R, namespace: 'a' });
        expect(names(one)).toEqual(['a/x', 'a/z']);
        expect(one).toMatchObject({ revision: rv(q), more: false, last: key('a', 'z') });
        const all = await s.list(ALL);
        expect(names(all)).toEqual(['a/x', 'a/z', 'b/y']);
        expect(all.items[0]).toEqual(x);
        expect(all).toMatchObject({ revision: rv(q), more: false, last: key('b', 'y') });
        expect(all).not.toHaveProperty('remaining');
        expect(await s.list({ resource: R, namespace: 'none' })).toEqual({ items: [], revision: rv(q), more: false });
      });

      it('returns, for every earlier revision, exactly what a list returned at that moment', async () => {
        const s = await fresh();
        const rand = rng(7);
        const seen: { all: ListResult; b: ListResult }[] = [];
        const record = async () => seen.push({ all: await s.list(ALL), b: await s.list({ resource: R, namespace: 'b' }) });
        await record();
        for (let i = 0; i < 160; i++) {
          await mutate(s, rand);
          await record();
        }
        expect(new Set(seen.map((x) => x.all.revision)).size).toBeGreaterThan(120);
        for (const snap of seen) {
          expect(snap.b.revision).toBe(snap.all.revision);
          expect(await s.list(ALL, { revision: snap.all.revision })).toEqual(snap.all);
          expect(await s.list({ resource: R, namespace: 'b' }, { revision: snap.all.revision })).toEqual(snap.b);
        }
      });

      it('shows a name deleted and re-created since in the state it had at the revision asked for', async () => {
        const s = await fresh();
        const base = s.currentRevision();
        const k = key('ns', 'site');
        const r1 = rv(await s.create(k, obj('ns', 'site', {}, { v: 1 })));
        const r2 = rv(await s.update(k, (c) => ({ ...c, spec: { v: 2 } })));
        const r3 = rv(await s.delete(k));
        const r4 = rv(await s.create(key('ns', 'other'), obj('ns', 'other')));
        const r5 = rv(await s.create(k, obj('ns', 'site', {}, { v: 5 })));
        const r6 = rv(await s.update(k, (c) => ({ ...c, spec: { v: 6 } })));
        const at = async (revision: number) => (await s.list(ALL, { revision })).items.map((o) => [o.metadata.name, rv(o), (o['spec'] as { v?: number }).v]);
        expect(await at(base)).toEqual([]);
        expect(await at(r1)).toEqual([['site', r1, 1]]);
        expect(await at(r2)).toEqual([['site', r2, 2]]);
        expect(await at(r3)).toEqual([]);
        expect(await at(r4)).toEqual([['other', r4, undefined]]);
        expect(await at(r5)).toEqual([
          ['other', r4, undefined],
          ['site', r5, 5],
        ]);
        expect(await at(r6)).toEqual([
          ['other', r4, undefined],
          ['site', r6, 6],
        ]);
        expect((await s.list(ALL, { revision: r3 })).revision).toBe(r3);
      });

      it('rejects a revision newer than the current one with TooLarge', async () => {
        const s = await fresh();
        const a = await s.create(key('ns', 'a'), obj('ns', 'a'));
        const tooLarge = (e: unknown) => isStorageError(e, 'TooLarge');
        await expect(s.list(ALL, { revision: rv(a) + 1 })).rejects.toSatisfy(tooLarge);
        await expect(s.list(ALL, { revision: rv(a) + 1, limit: 1 })).rejects.toSatisfy(tooLarge);
        await expect(s.list({ resource: R, namespace: 'ns' }, { revision: rv(a) + 1000 })).rejects.toSatisfy(tooLarge);
        expect((await s.list(ALL, { revision: rv(a) })).items).toHaveLength(1);
      });
    });

    describe('pagination', () => {
      async function seed(s: Storage): Promise<void> {
        for (const ns of NAMESPACES) {
          for (const n of NAMES) await s.create(key(ns, n), obj(ns, n, { tier: n < 'n3' ? 'web' : 'db' }));
        }
        await s.create(key('a', 'n0', OTHER), obj('a', 'n0'));
      }

      it('composes pages read at one revision into exactly that snapshot while objects change between pages', async () => {
        for (const limit of [1, 2, 4, 5, 17, 18, 100]) {
          const s = await fresh();
          await seed(s);
          const snapshot = await s.list(ALL);
          const rand = rng(limit);
          const got = await pages(s, ALL, { limit }, async () => {
            for (let i = 0; i < 3; i++) await mutate(s, rand);
          });
          expect(
            got.flatMap((p) => p.items),
            `limit ${limit}`,
          ).toEqual(snapshot.items);
          got.forEach((p, i) => {
            expect(p.revision).toBe(snapshot.revision);
            expect(p.items.length).toBe(i < got.length - 1 ? limit : snapshot.items.length - limit * (got.length - 1));
            expect(p.more).toBe(i < got.length - 1);
            if (p.more) expect(p.remaining).toBe(snapshot.items.length - limit * (i + 1));
            else expect(p).not.toHaveProperty('remaining');
            // A backend that tells positions counts the snapshot objects up to the page's end.
            if (p.position !== undefined) expect(p.position).toBe(limit * (i + 1));
          });
          expect((got.at(-1) as ListResult).last).toEqual(key('c', 'n5'));
        }
      });

      it('reports remaining as the count of snapshot objects after the page, whatever changed since', async () => {
        const s = await fresh();
        await seed(s); // 18 websites: a/n0..a/n5, b/n0..b/n5, c/n0..c/n5
        const first = await s.list(ALL, { limit: 5 });
        expect(names(first)).toEqual(['a/n0', 'a/n1', 'a/n2', 'a/n3', 'a/n4']);
        expect(first).toMatchObject({ more: true, remaining: 13, last: key('a', 'n4') });
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
        const second = await s.list(ALL, { revision: first.revision, after: positionOf(first.items[4] as KubeObject), limit: 5 });
        expect(names(second)).toEqual(['a/n5', 'b/n0', 'b/n1', 'b/n2', 'b/n3']);
        expect(second.items[1]?.['spec']).not.toHaveProperty('changed');
        expect(second).toMatchObject({ revision: first.revision, more: true, remaining: 8, last: key('b', 'n3') });
        const third = await s.list(ALL, { revision: first.revision, after: positionOf(second.items[4] as KubeObject), limit: 7 });
        expect(names(third)).toEqual(['b/n4', 'b/n5', 'c/n0', 'c/n1', 'c/n2', 'c/n3', 'c/n4']);
        expect(third.items[2]?.['spec']).not.toHaveProperty('recreated');
        expect(third).toMatchObject({ more: true, remaining: 1 });
        const last = await s.list(ALL, { revision: first.revision, after: positionOf(third.items[6] as KubeObject), limit: 7 });
        expect(names(last)).toEqual(['c/n5']);
        expect(last.more).toBe(false);
        expect(last).not.toHaveProperty('remaining');
        // Carrying each page's position gives the same pages and counts, without counting what follows.
        if (first.position !== undefined) {
          expect(first.position).toBe(5);
          const viaPosition = await s.list(ALL, {
            revision: first.revision,
            after: positionOf(first.items[4] as KubeObject),
            position: first.position,
            limit: 5,
          });
          expect(viaPosition).toMatchObject({ ...second, position: 10 });
          const thirdViaPosition = await s.list(ALL, { revision: first.revision, after: positionOf(second.items[4] as KubeObject), position: 10, limit: 7 });
          expect(thirdViaPosition).toMatchObject({ ...third, position: 17 });
        }
        // The current list sees the changes.
        const now = await s.list(ALL, { limit: 3 });
        expect(names(now)).toEqual(['a/m', 'a/n0', 'a/n2']);
        expect(now.remaining).toBe(19 - 3);
      });

      it('reports remaining on a page of the current revision, and none when the page reaches the end exactly', async () => {
        const s = await fresh();
        await seed(s);
        expect(await s.list(ALL, { limit: 17 })).toMatchObject({ more: true, remaining: 1, last: key('c', 'n4') });
        const exact = await s.list(ALL, { limit: 18 });
        expect(exact.items).toHaveLength(18);
        expect(exact.more).toBe(false);
        expect(exact).not.toHaveProperty('remaining');
        const whole = await s.list(ALL, { limit: 0 });
        expect(whole.items).toHaveLength(18);
        expect(whole.more).toBe(false);
      });

      it('applies a filter before the limit and gives no remaining count with a filter', async () => {
        const s = await fresh();
        await seed(s);
        const isWeb = (o: KubeObject) => o.metadata.labels?.['tier'] === 'web';
        const snapshot = await s.list(ALL, { filter: isWeb });
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
        // A position counts every snapshot object up to the page's end, matching or not.
        if (got[1]?.position !== undefined) {
          expect(names(got[1])).toEqual(['a/n2', 'b/n0']);
          expect(got[1].position).toBe(7);
        }
        expect((got[got.length - 1] as ListResult).more).toBe(false);
        // A filter that matches nothing: one empty page, nothing more.
        expect(await s.list(ALL, { limit: 3, filter: () => false })).toMatchObject({ items: [], more: false });
      });

      it('gives the same pages with a prefilter on the JSON text as with the filter alone, while objects change', async () => {
        const s = await fresh();
        await seed(s);
        const isWeb = (o: KubeObject) => o.metadata.labels?.['tier'] === 'web';
        const needle = Buffer.from('"tier":"web"');
        let prefiltered = 0;
        const prefilter = (json: Uint8Array) => {
          prefiltered++;
          return Buffer.from(json.buffer, json.byteOffset, json.byteLength).includes(needle);
        };
        const snapshot = await s.list(ALL, { filter: isWeb });
        const rand = rng(11);
        const plain = await pages(s, ALL, { limit: 2, filter: isWeb }, async () => undefined);
        const got = await pages(s, ALL, { limit: 2, filter: isWeb, prefilter }, async () => {
          for (let i = 0; i < 4; i++) await mutate(s, rand);
        });
        expect(got.flatMap((p) => p.items)).toEqual(snapshot.items);
        expect(got.map((p) => [names(p), p.more, p.position])).toEqual(plain.map((p) => [names(p), p.more, p.position]));
        for (const p of got) expect(p).not.toHaveProperty('remaining');
        // A backend may use the prefilter or not; one that does sees text, never more objects than the snapshot holds.
        expect(prefiltered).toBeLessThanOrEqual(18 * got.length);
      });

      it('pages one namespace without leaking other namespaces, and places a position from another namespace', async () => {
        const s = await fresh();
        await seed(s);
        const b: KeyPrefix = { resource: R, namespace: 'b' };
        const snapshot = await s.list(b);
        expect(names(snapshot)).toEqual(NAMES.map((n) => `b/${n}`));
        const rand = rng(5);
        const got = await pages(s, b, { limit: 4 }, async () => {
          for (let i = 0; i < 4; i++) await mutate(s, rand);
        });
        expect(got.map(names)).toEqual([
          ['b/n0', 'b/n1', 'b/n2', 'b/n3'],
          ['b/n4', 'b/n5'],
        ]);
        expect(got[0]).toMatchObject({ more: true, remaining: 2 });
        // Positions count within the prefix: the namespace's objects, not those of namespaces before it.
        if (got[0]?.position !== undefined) expect(got[0].position).toBe(4);
        expect(got[1]?.more).toBe(false);
        const revision = snapshot.revision;
        // A position before the namespace starts it from its first object; one after it leaves nothing.
        expect(names(await s.list(b, { revision, after: { namespace: 'a', name: 'zzz' }, limit: 2 }))).toEqual(['b/n0', 'b/n1']);
        expect(await s.list(b, { revision, after: { namespace: 'c', name: 'a' }, limit: 2 })).toMatchObject({ items: [], more: false });
        // Across all namespaces a position runs into the next namespace; the other resource never shows.
        expect(names(await s.list(ALL, { revision, after: { namespace: 'b', name: 'n5' }, limit: 2 }))).toEqual(['c/n0', 'c/n1']);
        expect(names(await s.list(ALL, { revision, after: { namespace: 'c', name: 'n5' } }))).toEqual([]);
        expect(names(await s.list({ resource: OTHER }, { revision }))).toEqual(['a/n0']);
      });

      it('answers later pages at their revision whether the collection changed since or only others did', async () => {
        const s = await fresh();
        await seed(s);
        const b: KeyPrefix = { resource: R, namespace: 'b' };
        const spec = (o: KubeObject | undefined) => (o?.spec as { v?: string } | undefined)?.v;
        // A change in the collection before the revision the pages are read at.
        await s.update(key('b', 'n4'), (o) => ({ ...o, spec: { ...(o.spec as object), v: 'at the revision' } }));
        const first = await s.list(b, { limit: 2 });
        const all = await s.list(ALL);
        expect(all.revision).toBe(first.revision);
        const revision = first.revision;
        // Changes elsewhere only: other namespaces and the other resource.
        await s.update(key('a', 'n1'), (o) => ({ ...o, spec: { ...(o.spec as object), v: 'later' } }));
        await s.create(key('c', 'n9'), obj('c', 'n9'));
        await s.delete(key('a', 'n0', OTHER));
        const second = await s.list(b, { revision, after: { namespace: 'b', name: 'n1' }, limit: 2 });
        expect(names(second)).toEqual(['b/n2', 'b/n3']);
        expect(second).toMatchObject({ revision, more: true, remaining: 2 });
        // Now the collection itself changes: later pages still show it as it was at the revision.
        await s.delete(key('b', 'n5'));
        await s.update(key('b', 'n4'), (o) => ({ ...o, spec: { ...(o.spec as object), v: 'later' } }));
        await s.create(key('b', 'n45'), obj('b', 'n45'));
        const third = await s.list(b, { revision, after: { namespace: 'b', name: 'n3' }, limit: 2 });
        expect(names(third)).toEqual(['b/n4', 'b/n5']);
        expect(spec(third.items[0])).toBe('at the revision');
        expect(third).toMatchObject({ revision, more: false });
        // The whole resource at that revision, whole and from a position, and the current state, which has every change.
        expect((await s.list(ALL, { revision })).items).toEqual(all.items);
        const tail = await s.list(ALL, { revision, after: { namespace: 'b', name: 'n3' }, limit: 4 });
        expect(names(tail)).toEqual(['b/n4', 'b/n5', 'c/n0', 'c/n1']);
        expect(tail).toMatchObject({ revision, more: true, remaining: 4 });
        const now = await s.list(b);
        expect(names(now)).toEqual(['b/n0', 'b/n1', 'b/n2', 'b/n3', 'b/n4', 'b/n45']);
        expect(spec(now.items.find((o) => o.metadata.name === 'n4'))).toBe('later');
      });

      it('may leave remaining out when the caller has no use for it, and pages the same', async () => {
        const s = await fresh();
        await seed(s);
        const counted = await s.list(ALL, { after: { namespace: 'a', name: 'n2' }, limit: 2 });
        const walk = await s.list(ALL, { after: { namespace: 'a', name: 'n2' }, limit: 2, noRemaining: true });
        expect(names(walk)).toEqual(names(counted));
        expect(walk.more).toBe(true);
        if (walk.remaining !== undefined) expect(walk.remaining).toBe(counted.remaining);
      });

      it('starts a page after a position whose object no longer exists', async () => {
        const s = await fresh();
        await seed(s);
        await s.delete(key('a', 'n2'));
        const page = await s.list(ALL, { after: { namespace: 'a', name: 'n2' }, limit: 2 });
        expect(names(page)).toEqual(['a/n3', 'a/n4']);
        expect(page.remaining).toBe(13);
      });

      it(`answers an encoded list with the same objects, pages and positions as a decoded one${opts.supportsEncoded ? ' (as JSON text)' : ' (it ignores the flag)'}`, async () => {
        const s = await fresh();
        for (const n of ['a', 'b', 'c', 'd']) await s.create(key('ns', n), obj('ns', n, {}, { text: `é ${n} "quoted"` }));
        await s.create(key('other', 'x'), obj('other', 'x'));
        const old = s.currentRevision();
        await s.update(key('ns', 'b'), (cur) => ({ ...cur, spec: { text: 'changed' } }));
        await s.delete(key('ns', 'c'));
        await s.create(key('ns', 'e'), obj('ns', 'e'));
        const objectsOf = (r: ListResult) => (r.encoded ? r.encoded.map((b) => JSON.parse(Buffer.from(b).toString('utf8')) as KubeObject) : r.items);
        const ns: KeyPrefix = { resource: R, namespace: 'ns' };
        for (const req of [{}, { limit: 2 }, { revision: old }, { revision: old, limit: 2, after: { namespace: 'ns', name: 'a' } }]) {
          const plain = await s.list(ns, req);
          const text = await s.list(ns, { ...req, encoded: true });
          if (opts.supportsEncoded) {
            expect(text.encoded).toBeDefined();
            expect(text.items).toEqual([]);
          } else {
            expect(text.encoded).toBeUndefined();
          }
          expect(objectsOf(text)).toEqual(plain.items);
          expect({ ...text, items: [], encoded: undefined }).toEqual({ ...plain, items: [], encoded: undefined });
        }
        // At the older revision, b is its earlier state and c still exists.
        expect(objectsOf(await s.list(ns, { revision: old, encoded: true })).map((o) => [o.metadata.name, (o['spec'] as { text: string }).text])).toEqual([
          ['a', 'é a "quoted"'],
          ['b', 'é b "quoted"'],
          ['c', 'é c "quoted"'],
          ['d', 'é d "quoted"'],
        ]);
        // With a filter (and a prefilter on the text), encoded or not, the same objects.
        const filter = (o: KubeObject) => o.metadata.name !== 'x';
        const notX = Buffer.from('"name":"x"');
        const prefilter = (json: Uint8Array) => !Buffer.from(json.buffer, json.byteOffset, json.byteLength).includes(notX);
        for (const req of [{ filter }, { filter, prefilter }, { filter, prefilter, revision: old }]) {
          const decoded = await s.list(ALL, req);
          const text = await s.list(ALL, { ...req, encoded: true });
          expect(objectsOf(text)).toEqual(decoded.items);
          expect(objectsOf(text).map((o) => o.metadata.name)).toEqual(req.revision ? ['a', 'b', 'c', 'd'] : ['a', 'b', 'd', 'e']);
        }
      });
    });

    describe('watches', () => {
      it('delivers, from any retained revision, every later change exactly once and in order, then live ones', async () => {
        const s = await fresh();
        const base = s.currentRevision();
        // A watcher that sees everything live is the reference for what a replay must reproduce.
        const reference = new Recorder();
        const refHandle = s.watch(ALL, base, reference);
        const o = await Promise.all([0, 1, 2, 3, 4].map((i) => s.create(key('ns', `o${i}`), obj('ns', `o${i}`))));
        const m1 = await s.update(key('ns', 'o1'), (c) => ({ ...c, spec: { v: 2 } }));
        const d2 = await s.delete(key('ns', 'o2'));
        const written = [
          ...o,
          m1,
          d2,
          await s.create(key('ns', 'o2'), obj('ns', 'o2', {}, { again: true })),
          await s.create(key('other', 'x'), obj('other', 'x')),
          await s.create(key('ns', 'elsewhere', OTHER), obj('ns', 'elsewhere')),
        ].map(rv);
        // A watcher from the start, from every revision written so far (one outside the prefix too), from the current one.
        const watchers = [base, ...written].map((from) => {
          const r = new Recorder();
          return { from, r, h: s.watch(ALL, from, r) };
        });
        const nsOnly = new Recorder();
        const nsHandle = s.watch({ resource: R, namespace: 'ns' }, base, nsOnly);
        // Concurrent writes: delivered in the order of their revisions, whatever order they answer in.
        const last = await Promise.all([
          s.update(key('other', 'x'), (c) => ({ ...c, spec: { v: 10 } })),
          s.delete(key('ns', 'o0')),
          s.create(key('ns', 'o5'), obj('ns', 'o5')),
        ]);
        const end = Math.max(...last.map(rv));
        await vi.waitFor(() => expect(reference.revisions.at(-1)).toBe(end));
        const all = reference.events;
        const revs = all.map((e) => e.revision);
        expect(revs).toEqual([...revs].sort((a, b) => a - b));
        expect(new Set(revs).size).toBe(12);
        expect(
          all
            .slice(0, 9)
            .map((e) => [e.type, e.key.namespace, e.key.name])
            .sort(),
        ).toEqual([
          ['ADDED', 'ns', 'o0'],
          ['ADDED', 'ns', 'o1'],
          ['ADDED', 'ns', 'o2'],
          ['ADDED', 'ns', 'o2'],
          ['ADDED', 'ns', 'o3'],
          ['ADDED', 'ns', 'o4'],
          ['ADDED', 'other', 'x'],
          ['DELETED', 'ns', 'o2'],
          ['MODIFIED', 'ns', 'o1'],
        ]);
        expect(all.slice(5, 9).map((e) => [e.type, e.key.name])).toEqual([
          ['MODIFIED', 'o1'],
          ['DELETED', 'o2'],
          ['ADDED', 'o2'],
          ['ADDED', 'x'],
        ]);
        expect(
          all
            .slice(9)
            .map((e) => `${e.type} ${e.key.name} ${e.revision}`)
            .sort(),
        ).toEqual(last.map((x, i) => `${['MODIFIED', 'DELETED', 'ADDED'][i]} ${x.metadata.name} ${rv(x)}`).sort());
        // Events carry the objects as stored: MODIFIED and DELETED the state before, DELETED the deletion's revision.
        const modified = all[5] as ChangeEvent;
        expect(modified.object).toEqual(m1);
        expect(modified.prevObject).toEqual(o[1]);
        const deleted = all[6] as ChangeEvent;
        expect(deleted.revision).toBe(rv(d2));
        expect(deleted.object.metadata.resourceVersion).toBe(String(rv(d2)));
        expect(deleted.prevObject).toEqual(o[2]);
        for (const { from, r } of watchers) {
          await vi.waitFor(() => expect(r.revisions.at(-1)).toBe(end));
          expect(r.events, `from ${from}`).toEqual(all.filter((e) => e.revision > from));
          expect(r.errors).toEqual([]);
        }
        await vi.waitFor(() => expect(nsOnly.revisions).toEqual(all.filter((e) => e.key.namespace === 'ns').map((e) => e.revision)));
        for (const { h } of watchers) h.stop();
        nsHandle.stop();
        refHandle.stop();
      });

      it('replays history paced by the sink while writes go on, and turns live with no change missing or repeated', async () => {
        const s = await fresh();
        const written: { revision: number; resource: string }[] = [];
        const note = (o: KubeObject, resource = R) => written.push({ revision: rv(o), resource });
        for (const r of await createMany(s, 1300)) written.push({ revision: r, resource: R });
        const from = (written[99] as { revision: number }).revision;
        const expected = () =>
          written
            .filter((w) => w.resource === R && w.revision > from)
            .map((w) => w.revision)
            .sort((a, b) => a - b);
        const sink = new Recorder(true);
        const h = s.watch(ALL, from, sink);
        // Whatever has been delivered, the position never claims a change the sink was not given.
        const checkPosition = () => {
          const p = h.position();
          expect(p).toBeGreaterThanOrEqual(from);
          expect(sink.revisions.filter((r) => r <= p)).toEqual(expected().filter((r) => r <= p));
        };
        for (let round = 0; round < 6; round++) {
          checkPosition();
          note(await s.update(key('ns', `o${round}`), (c) => ({ ...c, spec: { round } })));
          note(await s.create(key('ns', `x${round}`, OTHER), obj('ns', `x${round}`)), OTHER);
          note(await s.delete(key('ns', `o${1200 + round}`)));
          checkPosition();
          sink.open();
          await nextTurn();
        }
        sink.ungate();
        await vi.waitFor(() => expect(sink.revisions).toEqual(expected()));
        checkPosition();
        // Live now: further changes arrive directly.
        note(await s.create(key('ns', 'late'), obj('ns', 'late')));
        await vi.waitFor(() => expect(sink.revisions).toEqual(expected()));
        await vi.waitFor(() => expect(h.position()).toBeGreaterThanOrEqual(expected().at(-1) as number));
        expect(sink.events.slice(-4).map((e) => [e.type, e.key.name])).toEqual([
          ['DELETED', 'o1204'],
          ['MODIFIED', 'o5'],
          ['DELETED', 'o1205'],
          ['ADDED', 'late'],
        ]);
        expect(sink.errors).toEqual([]);
        h.stop();
      });

      it('stops delivering to a stopped subscription only', async () => {
        const s = await fresh();
        const base = s.currentRevision();
        const a = new Recorder();
        const b = new Recorder();
        const ha = s.watch(ALL, base, a);
        const hb = s.watch(ALL, base, b);
        const one = rv(await s.create(key('ns', 'one'), obj('ns', 'one')));
        await vi.waitFor(() => expect(a.revisions).toEqual([one]));
        await vi.waitFor(() => expect(b.revisions).toEqual([one]));
        ha.stop();
        const two = rv(await s.create(key('ns', 'two'), obj('ns', 'two')));
        await vi.waitFor(() => expect(b.revisions).toEqual([one, two]));
        await nextTurn();
        expect(a.revisions).toEqual([one]);
        hb.stop();
      });
    });

    describe('waitForRevision', () => {
      it('wakes a reader when its revision commits and answers false at the timeout', async () => {
        const s = await fresh();
        const first = await s.create(key('ns', 'first'), obj('ns', 'first'));
        // Already committed: answered at once.
        expect(await s.waitForRevision(rv(first), 10)).toBe(true);
        let woke: boolean | undefined;
        const waiting = s.waitForRevision(s.currentRevision() + 1, 5_000).then((r) => (woke = r));
        await new Promise((r) => setTimeout(r, 20));
        expect(woke).toBeUndefined();
        const started = Date.now();
        await s.create(key('ns', 'second'), obj('ns', 'second'));
        expect(await waiting).toBe(true);
        // Woken by the write, not by a poll or the 5 s timeout.
        expect(Date.now() - started).toBeLessThan(1_000);
        expect(await s.waitForRevision(s.currentRevision() + 100, 30)).toBe(false);
      });

      it('tells a reader still waiting at close that its revision will not come', async () => {
        const s = await fresh();
        const waiting = s.waitForRevision(s.currentRevision() + 50, 10_000);
        open.delete(s);
        await s.close();
        expect(await waiting).toBe(false);
      });
    });

    describe.skipIf(!opts.shortHistory)('with a short history', () => {
      const short = opts.shortHistory as NonNullable<ConformanceOptions['shortHistory']>;
      const shortStore = async (keep: number) => track(await short.make(keep));

      it('rejects a list older than the compacted revision with Expired and still serves the compacted one exactly', async () => {
        const s = await shortStore(4);
        const rand = rng(11);
        const first = await s.list(ALL);
        const seen = new Map<number, ListResult>([[first.revision, first]]);
        for (let i = 0; i < 30; i++) {
          await mutate(s, rand);
          const l = await s.list(ALL);
          seen.set(l.revision, l);
        }
        await short.trim(s);
        const revisions = [...seen.keys()].sort((a, b) => a - b);
        const compacted = s.compactedRevision();
        expect(compacted).toBe(revisions[revisions.length - 1 - 4]);
        await expect(s.list(ALL, { revision: compacted - 1 })).rejects.toSatisfy(isExpired);
        await expect(s.list(ALL, { revision: first.revision, limit: 2 })).rejects.toSatisfy(isExpired);
        await expect(s.list({ resource: R, namespace: 'a' }, { revision: first.revision })).rejects.toSatisfy(isExpired);
        for (const r of revisions) if (r >= compacted) expect(await s.list(ALL, { revision: r })).toEqual(seen.get(r));
      });

      it('expires a watch from below the compacted revision (thrown or through onError) and replays from the compacted one', async () => {
        const s = await shortStore(5);
        const base = s.currentRevision();
        const revs = await createMany(s, 12);
        await short.trim(s);
        const compacted = s.compactedRevision();
        expect(compacted).toBe(revs[12 - 1 - 5]);
        await expectWatchExpired(s, ALL, revs[5] as number);
        await expectWatchExpired(s, ALL, base);
        await expectWatchExpired(s, { resource: R, namespace: 'ns' }, compacted - 1);
        const sink = new Recorder();
        const h = s.watch(ALL, compacted, sink);
        await vi.waitFor(() => expect(sink.revisions).toEqual(revs.slice(7)));
        const live = rv(await s.create(key('ns', 'live'), obj('ns', 'live')));
        await vi.waitFor(() => expect(sink.revisions).toEqual([...revs.slice(7), live]));
        expect(sink.errors).toEqual([]);
        h.stop();
      });
    });
  });
}
