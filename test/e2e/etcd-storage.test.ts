/**
 * The etcd backend (src/storage/etcd-storage.ts) against a real etcd from the e2e build: the object lifecycle with
 * etcd's revisions as resourceVersions, optimistic concurrency, paginated lists at one revision, watches from a
 * revision with the previous state, and compaction answered as Expired.
 */
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/apis/meta/types.js';
import { isStorageError } from '../../src/storage/errors.js';
import { EtcdStorage } from '../../src/storage/etcd-storage.js';
import type { ChangeEvent } from '../../src/storage/interface.js';
import { etcdConformance, startEtcd, type EtcdCluster } from './harness/etcd.js';
import { e2e } from './harness/state.js';

const R = 'extensions.example.com/websites';
const key = (namespace: string, name: string) => ({ resource: R, namespace, name });
const obj = (namespace: string, name: string, replicas = 1): KubeObject => ({
  apiVersion: 'extensions.example.com/v1',
  kind: 'Website',
  metadata: { name, namespace },
  spec: { replicas },
});

let cluster: EtcdCluster;
let storage: EtcdStorage;

beforeAll(async () => {
  cluster = await startEtcd(e2e().binDir, 1);
  storage = await EtcdStorage.open({ servers: cluster.clientUrls, prefix: '/registry-test' });
}, 60_000);

afterAll(async () => {
  await storage?.close();
  await cluster?.stop();
});

// The shared contract, as lmdb and memory pass it.
etcdConformance('etcd', () => cluster);

describe('EtcdStorage on a real etcd', () => {
  it('creates, reads, updates and deletes with etcd revisions as resourceVersions', async () => {
    const before = storage.currentRevision();
    const created = await storage.create(key('ns', 'a'), obj('ns', 'a'));
    expect(Number(created.metadata.resourceVersion)).toBeGreaterThan(before);
    expect(storage.currentRevision()).toBe(Number(created.metadata.resourceVersion));
    await expect(storage.create(key('ns', 'a'), obj('ns', 'a'))).rejects.toSatisfy((e: unknown) => isStorageError(e, 'KeyExists'));
    expect(await storage.get(key('ns', 'a'))).toEqual(created);
    const updated = await storage.update(key('ns', 'a'), (cur) => ({ ...cur, spec: { replicas: 2 } }));
    expect(Number(updated.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
    expect((await storage.update(key('ns', 'a'), () => null)).metadata.resourceVersion).toBe(updated.metadata.resourceVersion);
    await expect(storage.update(key('ns', 'zz'), (c) => c)).rejects.toSatisfy((e: unknown) => isStorageError(e, 'KeyNotFound'));
    await expect(
      storage.delete(key('ns', 'a'), () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const gone = await storage.delete(key('ns', 'a'));
    expect(gone.spec).toEqual({ replicas: 2 });
    expect(Number(gone.metadata.resourceVersion)).toBeGreaterThan(Number(updated.metadata.resourceVersion));
    expect(await storage.get(key('ns', 'a'))).toBeUndefined();
  });

  it('answers many concurrent gets (read together in batches) each with its own object, or none, as of after it was asked', async () => {
    const made = await Promise.all(Array.from({ length: 150 }, (_, i) => storage.create(key('many', `m${i}`), obj('many', `m${i}`, i))));
    const asked = Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? `m${i / 2}` : `missing${i}`));
    const got = await Promise.all(asked.map((n) => storage.get(key('many', n))));
    got.forEach((o, i) => {
      const n = asked[i] as string;
      if (n.startsWith('missing')) expect(o, n).toBeUndefined();
      else
        expect([o?.metadata.name, o?.spec, o?.metadata.resourceVersion]).toEqual([
          n,
          { replicas: Number(n.slice(1)) },
          made[Number(n.slice(1))]?.metadata.resourceVersion,
        ]);
    });
    // A get asked after a write was acknowledged sees it, even while other gets are in flight.
    const pending = Array.from({ length: 50 }, (_, i) => storage.get(key('many', `m${i}`)));
    const updated = await storage.update(key('many', 'm0'), (c) => ({ ...c, spec: { replicas: 1000 } }));
    const after = await storage.get(key('many', 'm0'));
    expect(after?.metadata.resourceVersion).toBe(updated.metadata.resourceVersion);
    expect(after?.spec).toEqual({ replicas: 1000 });
    expect((await Promise.all(pending)).every((o) => o !== undefined)).toBe(true);
  });

  it('a replica opened on a store of thousands serves at once, and its lists are exact while its mirror fills and after', async () => {
    const names = Array.from({ length: 3000 }, (_, i) => `b${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 100) await Promise.all(names.slice(i, i + 100).map((n) => storage.create(key('big', n), obj('big', n))));
    const truth = async () =>
      (await storage.list({ resource: R, namespace: 'big' }, { revision: storage.currentRevision() })).items.map(
        (o) => `${o.metadata.name}@${o.metadata.resourceVersion}`,
      );
    const replica = await EtcdStorage.open({ servers: cluster.clientUrls, prefix: '/registry-test', compactionIntervalMs: 0 });
    try {
      const seen = async () => (await replica.list({ resource: R, namespace: 'big' })).items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`);
      expect(await seen()).toEqual(await truth());
      // Changes while (and after) the mirror fills: each list after a write has acknowledged it, on the other store.
      for (let round = 0; round < 6; round++) {
        await storage.update(key('big', names[round] as string), (c) => ({ ...c, spec: { replicas: 10 + round } }));
        await storage.delete(key('big', names[100 + round] as string));
        await storage.create(key('big', `new${round}`), obj('big', `new${round}`));
        expect(await seen()).toEqual(await truth());
        await new Promise((r) => setTimeout(r, 300));
      }
      expect((await replica.get(key('big', names[5] as string)))?.spec).toEqual({ replicas: 15 });
    } finally {
      await replica.close();
    }
  });

  it('many watches opened at once on a new replica from before its memory (as clients move to it) each get every later change', async () => {
    const from = storage.currentRevision();
    for (let i = 0; i < 20; i++) await storage.create(key('moved', `e${i}`), obj('moved', `e${i}`));
    const replica = await EtcdStorage.open({ servers: cluster.clientUrls, prefix: '/registry-test', compactionIntervalMs: 0 });
    try {
      const got: ChangeEvent[][] = Array.from({ length: 12 }, () => []);
      const handles = got.map((events, i) =>
        replica.watch({ resource: R, namespace: i % 2 ? 'moved' : '' }, from + (i % 3), {
          onEvent: (e) => events.push(e),
          onError: (e) => {
            throw e;
          },
        }),
      );
      // Some stop at once, as a client that gives up would, while the others are being created.
      handles[5]?.stop();
      handles[7]?.stop();
      for (let i = 20; i < 40; i++) await storage.create(key('moved', `e${i}`), obj('moved', `e${i}`));
      const want = (i: number) => 40 - (i % 3);
      const deadline = Date.now() + 10_000;
      const live = [...got.keys()].filter((i) => i !== 5 && i !== 7);
      while (Date.now() < deadline && !live.every((i) => (got[i]?.filter((e) => e.key.namespace === 'moved').length ?? 0) >= want(i)))
        await new Promise((r) => setTimeout(r, 50));
      for (const i of live) {
        const names = (got[i] ?? []).filter((e) => e.key.namespace === 'moved').map((e) => e.key.name);
        expect(names, `watch ${i}`).toEqual(Array.from({ length: want(i) }, (_, j) => `e${j + (i % 3)}`));
      }
      for (const h of handles) h.stop();
    } finally {
      await replica.close();
    }
  });

  it('retries an update that lost a race on the state that won', async () => {
    await storage.create(key('race', 'r'), obj('race', 'r', 0));
    // 20 concurrent increments: each must land once, none lost.
    await Promise.all(
      Array.from({ length: 20 }, () =>
        storage.update(key('race', 'r'), (cur) => ({ ...cur, spec: { replicas: (cur.spec as { replicas: number }).replicas + 1 } })),
      ),
    );
    expect((await storage.get(key('race', 'r')))?.spec).toEqual({ replicas: 20 });
  });

  it('lists in pages at one revision, with the count of what follows, in one namespace or all', async () => {
    for (let i = 0; i < 7; i++) await storage.create(key('pages', `p${i}`), obj('pages', `p${i}`));
    const first = await storage.list({ resource: R, namespace: 'pages' }, { limit: 3 });
    expect(first.items.map((o) => o.metadata.name)).toEqual(['p0', 'p1', 'p2']);
    expect(first).toMatchObject({ more: true, remaining: 4, last: key('pages', 'p2') });
    // A write after the first page does not show in the later pages (same revision).
    await storage.create(key('pages', 'p9'), obj('pages', 'p9'));
    const second = await storage.list({ resource: R, namespace: 'pages' }, { limit: 3, revision: first.revision, after: { namespace: 'pages', name: 'p2' } });
    const third = await storage.list({ resource: R, namespace: 'pages' }, { limit: 3, revision: first.revision, after: { namespace: 'pages', name: 'p5' } });
    expect([...second.items, ...third.items].map((o) => o.metadata.name)).toEqual(['p3', 'p4', 'p5', 'p6']);
    expect(third.more).toBe(false);
    const filtered = await storage.list({ resource: R }, { filter: (o) => o.metadata.name === 'p9' || o.metadata.name === 'r' });
    expect(filtered.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['pages/p9', 'race/r']);
    await expect(storage.list({ resource: R }, { revision: storage.currentRevision() + 1000 })).rejects.toSatisfy((e: unknown) =>
      isStorageError(e, 'TooLarge'),
    );
  });

  it('watches from a revision: every later change once, in order, DELETED with the last state and the deletion revision', async () => {
    const from = storage.currentRevision();
    const events: ChangeEvent[] = [];
    const handle = storage.watch({ resource: R, namespace: 'watched' }, from, {
      onEvent: (e) => events.push(e),
      onError: (e) => {
        throw e;
      },
    });
    await storage.create(key('watched', 'w'), obj('watched', 'w'));
    await storage.update(key('watched', 'w'), (c) => ({ ...c, spec: { replicas: 5 } }));
    const gone = await storage.delete(key('watched', 'w'));
    await storage.create(key('other', 'x'), obj('other', 'x'));
    for (let i = 0; i < 100 && events.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    handle.stop();
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(events.map((e) => e.revision)).toEqual([...events.map((e) => e.revision)].sort((a, b) => a - b));
    expect(events[1]?.prevObject?.spec).toEqual({ replicas: 1 });
    expect(events[2]?.object.spec).toEqual({ replicas: 5 });
    expect(events[2]?.object.metadata.resourceVersion).toBe(gone.metadata.resourceVersion);
    expect(handle.position()).toBeGreaterThanOrEqual(events[2]?.revision ?? 0);
  });

  it("moves a watch's position (what a BOOKMARK carries) to etcd's revision while only keys outside the prefix change, and not past a change of its own it has not delivered", async () => {
    const events: ChangeEvent[] = [];
    const handle = storage.watch({ resource: R, namespace: 'quiet' }, storage.currentRevision(), {
      onEvent: (e) => events.push(e),
      onError: (e) => {
        throw e;
      },
    });
    // Someone else's writes on the same etcd (kube-apiserver's, another prefix): etcd's revision moves on.
    const other = new Etcd3({ hosts: cluster.clientUrls });
    let foreign = 0;
    for (let i = 0; i < 5; i++) foreign = Number((await other.put(`/someone-else/key-${i}`).value('x').exec()).header.revision);
    other.close();
    const deadline = Date.now() + 10_000;
    while (handle.position() < foreign && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(handle.position()).toBeGreaterThanOrEqual(foreign);
    expect(events).toEqual([]);
    // A change of ours after that is still delivered, at its own revision, above the position it moved to.
    const made = await storage.create(key('quiet', 'q'), obj('quiet', 'q'));
    for (let i = 0; i < 100 && events.length < 1; i++) await new Promise((r) => setTimeout(r, 20));
    handle.stop();
    expect(events.map((e) => [e.type, e.revision])).toEqual([['ADDED', Number(made.metadata.resourceVersion)]]);
    expect(Number(made.metadata.resourceVersion)).toBeGreaterThan(foreign);
  });

  it('answers Expired for a revision etcd has compacted: lists and watches', async () => {
    const old = storage.currentRevision();
    // Two writes: etcd keeps the compaction revision itself, so a watch from just before it is still whole.
    await storage.create(key('compact', 'c'), obj('compact', 'c'));
    await storage.update(key('compact', 'c'), (c) => ({ ...c, spec: { replicas: 3 } }));
    const now = storage.currentRevision();
    const admin = new Etcd3({ hosts: cluster.clientUrls });
    try {
      await admin.kv.compact({ revision: now, physical: true });
    } finally {
      admin.close();
    }
    await expect(storage.list({ resource: R }, { revision: old })).rejects.toSatisfy((e: unknown) => isStorageError(e, 'Expired'));
    // A replica that held those changes in memory still serves a watch from them (kube-apiserver's watch cache does
    // the same); one that did not (opened after the compaction) has only etcd, which answers Expired.
    const replayed: string[] = [];
    const h = storage.watch({ resource: R, namespace: 'compact' }, old, {
      onEvent: (e) => replayed.push(e.type),
      onError: (e) => {
        throw e;
      },
    });
    for (let i = 0; i < 100 && replayed.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    h.stop();
    expect(replayed).toEqual(['ADDED', 'MODIFIED']);
    const late = await EtcdStorage.open({ servers: cluster.clientUrls, prefix: '/registry-test' });
    const err = await new Promise<Error>((resolve) => {
      try {
        late.watch({ resource: R }, old, { onEvent: () => undefined, onError: resolve });
      } catch (e) {
        resolve(e as Error);
      }
    }).finally(() => late.close());
    expect(isStorageError(err, 'Expired')).toBe(true);
  });

  it('compacts on its own every interval, to the revision it saw one interval before', async () => {
    const own = await EtcdStorage.open({ servers: cluster.clientUrls, prefix: '/registry-compactor', compactionIntervalMs: 300 });
    try {
      const first = await own.create(key('c', 'one'), obj('c', 'one'));
      await own.update(key('c', 'one'), (c) => ({ ...c, spec: { replicas: 2 } }));
      for (let i = 0; i < 50 && own.compactedRevision() <= Number(first.metadata.resourceVersion); i++) await new Promise((r) => setTimeout(r, 100));
      expect(own.compactedRevision()).toBeGreaterThan(Number(first.metadata.resourceVersion));
      await expect(own.list({ resource: R }, { revision: Number(first.metadata.resourceVersion) })).rejects.toSatisfy((e: unknown) =>
        isStorageError(e, 'Expired'),
      );
    } finally {
      await own.close();
    }
  });

  it('a read etcd never answers fails (Unavailable) instead of holding every later get, and gets work again once etcd answers', async () => {
    await storage.create(key('paused', 'p'), obj('paused', 'p'));
    cluster.pauseMember(0);
    let results: PromiseSettledResult<KubeObject | undefined>[];
    try {
      // The first is read alone; the second waits for the next batch, which goes once the first has failed.
      results = await Promise.allSettled([storage.get(key('paused', 'p')), storage.get(key('paused', 'p'))]);
    } finally {
      cluster.resumeMember(0);
    }
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    for (const r of results) expect(isStorageError((r as PromiseRejectedResult).reason, 'Unavailable')).toBe(true);
    expect((await storage.get(key('paused', 'p')))?.metadata.name).toBe('p');
    // The health probe sees etcd again within its period (the next test starts from a healthy store).
    for (let i = 0; i < 100 && !storage.writable(); i++) await new Promise((r) => setTimeout(r, 100));
    expect(storage.writable()).toBe(true);
  }, 60_000);

  it('reports itself unwritable (/readyz storage check) while etcd does not answer, and writable again once it does', async () => {
    expect(storage.writable()).toBe(true);
    await cluster.stopMember(0);
    try {
      for (let i = 0; i < 100 && storage.writable(); i++) await new Promise((r) => setTimeout(r, 100));
      expect(storage.writable()).toBe(false);
    } finally {
      await cluster.startMember(0);
    }
    for (let i = 0; i < 100 && !storage.writable(); i++) await new Promise((r) => setTimeout(r, 100));
    expect(storage.writable()).toBe(true);
  });
});
