/**
 * The real @kubernetes/client-node informer (ListWatch) against the real server process over HTTPS, as a controller
 * would run it: caches that follow concurrent writers exactly, resuming a watch across a server restart (SIGTERM and
 * kill -9) from the last resourceVersion without a re-list, re-listing after 410 Expired once the resourceVersion has
 * left the retained history, and periodic BOOKMARKs on a quiet watch that asked for them.
 *
 * client-node's ListWatch stops on any error other than 410 or its own inactivity timeout (connection refused, a
 * stream cut by a dying server) and must be started again by the application; `stop()` itself reports an AbortError
 * to the error callbacks. TrackedInformer does what a controller does: restart after a delay, unless it is stopping.
 */
import * as k8s from '@kubernetes/client-node';
import type { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAgent, API, call, cleanupTempDirs, startServer, website, type ServerProcess } from './helpers/server-process.js';

const GROUP = 'extensions.example.com';
const VERSION = 'v1alpha1';
const MERGE = { 'content-type': 'application/merge-patch+json' };

interface Website extends k8s.KubernetesObject {
  spec: { gitRepo: string; replicas?: number };
}

/** Seen is one informer callback: which kind, which object, at which resourceVersion. */
interface Seen {
  type: 'add' | 'update' | 'delete';
  key: string;
  rv: string;
}

const keyOf = (o: k8s.KubernetesObject) => `${o.metadata?.namespace}/${o.metadata?.name}`;
/** snapshot renders objects as sorted `ns/name@rv` lines, for comparing a cache with a list. */
const snapshot = (items: readonly k8s.KubernetesObject[]) => items.map((o) => `${keyOf(o)}@${o.metadata?.resourceVersion}`).sort();

/** until polls `cond` every 50 ms; it throws with `what` after `ms`. */
async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * TrackedInformer wraps makeInformer: it counts list calls, records every callback, and restarts the informer
 * `restartDelayMs` after an error (as client-node requires), but only once `release()` allows it, so a test can make
 * changes while the informer is certainly disconnected.
 */
class TrackedInformer {
  readonly informer: k8s.ListWatch<Website>;
  lists = 0;
  connects = 0;
  readonly seen: Seen[] = [];
  readonly errors: unknown[] = [];
  /** Errors reported while stopping (client-node reports its own abort as an error). */
  aborts = 0;
  stopping = false;
  #restartPending = false;
  #gate: Promise<void> = Promise.resolve();
  #open: () => void = () => undefined;

  constructor(
    kc: k8s.KubeConfig,
    namespace?: string,
    readonly restartDelayMs = 1000,
  ) {
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const listFn = async (): Promise<k8s.KubernetesListObject<Website>> => {
      this.lists++;
      const list = namespace
        ? await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'websites' })
        : await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: 'websites' });
      return list as k8s.KubernetesListObject<Website>;
    };
    const path = namespace ? `${API}/namespaces/${namespace}/websites` : `${API}/websites`;
    // makeInformer(kc, path, listFn) builds exactly this; the class also exposes latestResourceVersion().
    this.informer = new k8s.ListWatch<Website>(path, new k8s.Watch(kc), listFn, false);
    const record = (type: Seen['type']) => (o: Website) => this.seen.push({ type, key: keyOf(o), rv: String(o.metadata?.resourceVersion) });
    this.informer.on('add', record('add'));
    this.informer.on('update', record('update'));
    this.informer.on('delete', record('delete'));
    this.informer.on('connect', () => this.connects++);
    this.informer.on('error', (err) => {
      if (this.stopping) {
        this.aborts++;
        return;
      }
      this.errors.push(err);
      if (this.#restartPending) return;
      this.#restartPending = true;
      setTimeout(() => {
        void this.#gate.then(() => {
          this.#restartPending = false;
          if (!this.stopping) void this.informer.start();
        });
      }, this.restartDelayMs);
    });
  }

  /** hold makes the next error-triggered restart wait for release(). */
  hold(): void {
    this.#gate = new Promise((r) => (this.#open = r));
  }

  release(): void {
    this.#open();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.release();
    await this.informer.stop();
  }

  /** events of one kind for one object key, in order. */
  of(type: Seen['type'], key: string): string[] {
    return this.seen.filter((s) => s.type === type && s.key === key).map((s) => s.rv);
  }
}

/** Server is one server process plus what the tests need to talk to it, restartable on the same port and data. */
class Server {
  proc!: ServerProcess;
  agent!: Agent;
  kc!: k8s.KubeConfig;
  readonly informers: TrackedInformer[] = [];

  constructor(readonly args: string[]) {}

  async start(): Promise<void> {
    this.proc = await startServer({ args: this.args });
    this.agent = adminAgent(this.proc.certDir);
    this.kc = new k8s.KubeConfig();
    this.kc.loadFromFile(this.proc.kubeconfig);
  }

  /** restart stops the process with `signal` and starts it again on the same port, data and certificates. */
  async restart(signal: NodeJS.Signals, afterExit: () => Promise<void> = async () => undefined): Promise<void> {
    const { dataDir, certDir, port } = this.proc;
    await this.proc.stop(signal);
    await this.agent.close().catch(() => undefined);
    await afterExit();
    this.proc = await startServer({ args: this.args, dataDir, certDir, port });
    this.agent = adminAgent(certDir);
  }

  informer(namespace?: string): TrackedInformer {
    const t = new TrackedInformer(this.kc, namespace);
    this.informers.push(t);
    return t;
  }

  url(namespace?: string): string {
    return `${this.proc.url}${API}${namespace ? `/namespaces/${namespace}` : ''}/websites`;
  }

  /** list is a fresh list from the server (all namespaces, or one). */
  async list(namespace?: string): Promise<{ resourceVersion: string; items: Website[] }> {
    const r = await call(this.agent, this.url(namespace));
    expect(r.status).toBe(200);
    return { resourceVersion: r.body.metadata.resourceVersion, items: r.body.items };
  }

  async create(ns: string, name: string, spec: Record<string, unknown> = {}): Promise<string> {
    const r = await call(this.agent, this.url(ns), 'POST', website(name, spec));
    expect(r.status, r.text).toBe(201);
    return r.body.metadata.resourceVersion;
  }

  async patch(ns: string, name: string, body: unknown): Promise<string> {
    const r = await call(this.agent, `${this.url(ns)}/${name}`, 'PATCH', body, MERGE);
    expect(r.status, r.text).toBe(200);
    return r.body.metadata.resourceVersion;
  }

  async remove(ns: string, name: string): Promise<void> {
    const r = await call(this.agent, `${this.url(ns)}/${name}`, 'DELETE');
    expect(r.status, r.text).toBe(200);
  }

  async close(): Promise<void> {
    for (const t of this.informers) await t.stop();
    await this.agent?.close().catch(() => undefined);
    await this.proc?.stop();
  }
}

/** converged waits until the informer's cache equals a fresh list (names and resourceVersions). */
async function converged(s: Server, t: TrackedInformer, namespace?: string, ms?: number): Promise<void> {
  let last: string[] = [];
  try {
    await until(
      'the informer cache to equal a fresh list',
      async () => {
        last = snapshot((await s.list(namespace)).items);
        return JSON.stringify(snapshot(t.informer.list())) === JSON.stringify(last);
      },
      ms,
    );
  } catch {
    // Show the difference rather than a bare timeout.
    expect(snapshot(t.informer.list())).toEqual(last);
  }
}

afterAll(() => cleanupTempDirs());

describe('informers on a server with 1 s bookmarks', () => {
  const s = new Server(['--watch-bookmark-interval', '1s']);
  beforeAll(() => s.start());
  afterAll(() => s.close());

  it('keeps a cluster-wide and a namespaced cache exact under 4 concurrent writers (200 objects)', async () => {
    const namespaces = ['inf-a', 'inf-b', 'inf-c', 'inf-d'];
    const all = s.informer();
    const one = s.informer('inf-b');
    await all.informer.start();
    await one.informer.start();

    // What each object went through, from the writers' side: every resourceVersion they were handed.
    interface Written {
      adds: string[];
      updates: string[];
      deleted: boolean;
    }
    const written = new Map<string, Written>();
    const writer = async (w: number) => {
      const mine: [string, string][] = [];
      for (let i = 0; i < 50; i++) {
        const ns = namespaces[(w + i) % namespaces.length] as string;
        const name = `w${w}-site-${i}`;
        const rec: Written = { adds: [await s.create(ns, name)], updates: [], deleted: false };
        written.set(`${ns}/${name}`, rec);
        rec.updates.push(await s.patch(ns, name, { spec: { replicas: 2 } }));
        mine.push([ns, name]);
      }
      for (const [i, [ns, name]] of mine.entries()) {
        const rec = written.get(`${ns}/${name}`) as Written;
        if (i % 2 === 0) rec.updates.push(await s.patch(ns, name, { metadata: { labels: { pass: 'two' } }, spec: { replicas: 3 } }));
        if (i % 5 === 0) {
          await s.remove(ns, name);
          rec.deleted = true;
        }
      }
    };
    await Promise.all([0, 1, 2, 3].map(writer));
    expect(written.size).toBe(200);

    const expectedCount = (inScope: (key: string) => boolean) => {
      let n = 0;
      for (const [key, w] of written) if (inScope(key)) n += w.adds.length + w.updates.length + (w.deleted ? 1 : 0);
      return n;
    };
    const inB = (key: string) => key.startsWith('inf-b/');
    await until('every change to reach both informers', () => all.seen.length >= expectedCount(() => true) && one.seen.length >= expectedCount(inB));
    await converged(s, all);
    await converged(s, one, 'inf-b');
    expect(all.informer.list()).toHaveLength(160);
    expect(one.informer.list().every((o) => o.metadata?.namespace === 'inf-b')).toBe(true);

    // Each informer saw every change in its scope exactly once, at the resourceVersion the writer was given.
    for (const [t, inScope] of [
      [all, () => true],
      [one, inB],
    ] as const) {
      for (const [key, w] of written) {
        if (!inScope(key)) {
          expect(t.seen.some((e) => e.key === key)).toBe(false);
          continue;
        }
        expect(t.of('add', key), key).toEqual(w.adds);
        expect(t.of('update', key), key).toEqual(w.updates);
        const deletes = t.of('delete', key);
        expect(deletes, key).toHaveLength(w.deleted ? 1 : 0);
        // A DELETED event carries the revision of the deletion, after the object's last write.
        if (w.deleted) expect(Number(deletes[0]), key).toBeGreaterThan(Number(w.updates.at(-1)));
      }
      expect(t.seen).toHaveLength(expectedCount(inScope));
      expect(t.lists).toBe(1);
      expect(t.errors).toEqual([]);
    }
    await all.stop();
    await one.stop();
  });

  // Changes made while the informer is disconnected (after the new process is up, before the informer's restart)
  // must reach it through a watch resumed from its last resourceVersion: history survives the restart in lmdb.
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`resumes across a ${signal} restart from its last resourceVersion, without a re-list`, async () => {
      const ns = `restart-${signal.toLowerCase()}`;
      await s.create(ns, 'keep');
      await s.create(ns, 'change');
      await s.create(ns, 'drop');
      const t = s.informer();
      await t.informer.start();
      await converged(s, t);
      const before = t.seen.length;
      const rvBefore = Number(t.informer.latestResourceVersion());
      expect(rvBefore).toBeGreaterThan(0);

      t.hold();
      await s.restart(signal, () => until('the informer to report the lost connection', () => t.errors.length > 0, 10_000));
      const created = await s.create(ns, 'new');
      const changed = await s.patch(ns, 'change', { spec: { replicas: 5 } });
      await s.remove(ns, 'drop');
      expect(Number(created)).toBeGreaterThan(rvBefore);
      t.release();

      await until('the informer to see the changes made while it was away', () => t.seen.length >= before + 3);
      await converged(s, t);
      expect(t.lists).toBe(1);
      expect(t.connects).toBeGreaterThanOrEqual(2);
      expect(t.seen.slice(before)).toEqual(
        expect.arrayContaining([
          { type: 'add', key: `${ns}/new`, rv: created },
          { type: 'update', key: `${ns}/change`, rv: changed },
          expect.objectContaining({ type: 'delete', key: `${ns}/drop` }),
        ]),
      );
      expect(t.seen).toHaveLength(before + 3);
      expect(t.informer.get('drop', ns)).toBeUndefined();
      expect(t.informer.get('change', ns)?.spec.replicas).toBe(5);
      await t.stop();
    });
  }

  it('sends BOOKMARKs with the current resourceVersion to a quiet watch that allows them, and only to it', async () => {
    const { resourceVersion: listed } = await s.list('quiet');
    const watch = new k8s.Watch(s.kc);
    const withBookmarks: { type: string; object: any }[] = [];
    const without: { type: string; object: any }[] = [];
    const ended: unknown[] = [];
    const path = `${API}/namespaces/quiet/websites`;
    const a = await watch.watch(
      path,
      { resourceVersion: listed, allowWatchBookmarks: true },
      (type, object) => withBookmarks.push({ type, object }),
      (e) => ended.push(e),
    );
    const b = await watch.watch(
      path,
      { resourceVersion: listed },
      (type, object) => without.push({ type, object }),
      (e) => ended.push(e),
    );
    const bookmarkAt = (rv: string) => withBookmarks.some((e) => e.object?.metadata?.resourceVersion === rv);
    try {
      await until(`a BOOKMARK at the listed resourceVersion ${listed}`, () => bookmarkAt(listed), 10_000);
      // A change elsewhere moves the current resourceVersion; the quiet watch gets no event for it, only a bookmark.
      const elsewhere = await s.create('not-quiet', 'x');
      const { resourceVersion: current } = await s.list();
      expect(current).toBe(elsewhere);
      await until(`a BOOKMARK at the new current resourceVersion ${current}`, () => bookmarkAt(current), 10_000);
      expect(new Set(withBookmarks.map((e) => e.type))).toEqual(new Set(['BOOKMARK']));
      for (const { object } of withBookmarks) {
        expect(object).toMatchObject({ kind: 'Website', apiVersion: `${GROUP}/${VERSION}` });
        expect(Object.keys(object.metadata)).toEqual(['resourceVersion']);
      }
      const rvs = withBookmarks.map((e) => Number(e.object.metadata.resourceVersion));
      expect([...rvs].sort((x, y) => x - y)).toEqual(rvs);
      // The watch that did not ask for bookmarks got nothing at all in the same time.
      expect(without).toEqual([]);
      expect(ended).toEqual([]);
    } finally {
      a.abort();
      b.abort();
    }
  });
});

describe('informers on a server that keeps only 20 events of history', () => {
  const s = new Server(['--watch-history-events', '20']);
  beforeAll(() => s.start());
  afterAll(() => s.close());

  it('re-lists after 410 Expired when its resourceVersion has been compacted away, and converges', async () => {
    const ns = 'expired';
    const t = s.informer();
    await t.informer.start();
    for (let i = 0; i < 5; i++) await s.create(ns, `old-${i}`);
    await until('the informer to see the first objects', () => t.informer.list().length === 5);
    expect(t.lists).toBe(1);

    await t.stop();
    await until('the AbortError of stop()', () => t.aborts > 0, 2000).catch(() => undefined);
    const stale = t.informer.latestResourceVersion();

    // 40 changes while it is stopped: 10 creates, 25 updates, 5 deletes.
    for (let i = 0; i < 10; i++) await s.create(ns, `new-${i}`);
    for (let round = 1; round <= 5; round++) for (let i = 0; i < 5; i++) await s.patch(ns, i < 3 ? `old-${i}` : `new-${i}`, { spec: { replicas: round + 1 } });
    for (const name of ['old-3', 'old-4', 'new-7', 'new-8', 'new-9']) await s.remove(ns, name);
    await until('the server to compact the stale resourceVersion away', async () => {
      const r = await call(s.agent, `${s.url()}?resourceVersion=${stale}&resourceVersionMatch=Exact`);
      return r.status === 410;
    });

    // A plain watch from the stale resourceVersion shows what the informer will get: ERROR 410 Expired, then the end.
    const events: { type: string; object: any }[] = [];
    await new Promise<void>((resolve, reject) => {
      void new k8s.Watch(s.kc)
        .watch(
          `${API}/websites`,
          { resourceVersion: stale },
          (type, object) => events.push({ type, object }),
          (e) => (e ? reject(e) : resolve()),
        )
        .catch(reject);
    });
    expect(events).toEqual([{ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired' }) }]);

    const before = t.seen.length;
    t.stopping = false;
    await t.informer.start();
    await until('the informer to re-list', () => t.lists === 2);
    await converged(s, t);
    expect(t.lists).toBe(2);
    expect(t.errors).toEqual([]);
    expect(snapshot(t.informer.list()).map((l) => l.split('@')[0])).toEqual(
      ['old-0', 'old-1', 'old-2', 'new-0', 'new-1', 'new-2', 'new-3', 'new-4', 'new-5', 'new-6'].map((n) => `${ns}/${n}`).sort(),
    );
    // The re-list told the application what it missed: deletes for the gone objects, adds for the new ones.
    const after = t.seen.slice(before);
    expect(
      after
        .filter((e) => e.type === 'delete')
        .map((e) => e.key)
        .sort(),
    ).toEqual([`${ns}/old-3`, `${ns}/old-4`]);
    expect(
      after
        .filter((e) => e.type === 'add')
        .map((e) => e.key)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `${ns}/new-${i}`).sort());
    expect(
      after
        .filter((e) => e.type === 'update')
        .map((e) => e.key)
        .sort(),
    ).toEqual([0, 1, 2].map((i) => `${ns}/old-${i}`));

    // And it is live again from the re-listed resourceVersion.
    const rv = await s.create(ns, 'after-relist');
    await until('the informer to see a change after the re-list', () => t.of('add', `${ns}/after-relist`).length === 1);
    expect(t.of('add', `${ns}/after-relist`)).toEqual([rv]);
    expect(t.lists).toBe(2);
  });
});
