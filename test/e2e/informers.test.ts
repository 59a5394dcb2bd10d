/**
 * client-go informers through kube-apiserver (issue 4 acceptance): a dynamic informer and a metadata informer
 * (client-go v0.35.8, watch-list on) sync, see add/update/delete of 100 websites exactly once each, and keep their
 * caches exact across a SIGTERM and a SIGKILL restart of our server. A third informer with watch-list switched off
 * (classic LIST + WATCH) runs alongside, so both reflector paths are covered.
 *
 * Watch-list proof: our server does not log or count watch requests (they are hijacked before fastify's
 * onResponse), so the probe is pointed at a small recording proxy in front of kube-apiserver instead. It shows the
 * exact requests client-go made (one watch with sendInitialEvents=true and no LIST) and that the stream carried the
 * initial-events-end BOOKMARK; the same probe with the WatchListClient gate off is the control that lists.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { kubectlOk, waitFor } from './harness/kubectl.js';
import { waitForDiscovery } from './harness/reconcilers.js';
import { e2e, readPid } from './harness/state.js';
import { alive, startWebsiteServer, stopWebsiteServer } from './harness/website-server.js';
import { count, judge, once, Probe, recordingProxy, rvOf, type ProbeEvent, type RecordingProxy } from './helpers-informers.js';

const env = e2e();
const admin = env.kubeconfig.admin;
const NS = `informers-e2e-${randomBytes(3).toString('hex')}`;
const RESOURCE = 'websites.v1alpha1.extensions.example.com';
const DYNAMIC = '*unstructured.Unstructured';
const METADATA = '*v1.PartialObjectMetadata';
const PROBE = join(env.binDir, 'informer-probe');
const log = (msg: string) => console.log(`[informers] ${msg}`);

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(3, '0')}`);
const chunks = <T>(xs: T[], k: number): T[][] => Array.from({ length: k }, (_, i) => xs.filter((_, j) => j % k === i)).filter((c) => c.length > 0);

function websiteDoc(name: string): string {
  return YAML.stringify({
    apiVersion: 'extensions.example.com/v1alpha1',
    kind: 'Website',
    metadata: { name, namespace: NS, labels: { app: 'informers-e2e' } },
    spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git' },
  });
}

/** createWebsites creates with `parallel` concurrent kubectl processes and returns name → uid. */
async function createWebsites(list: string[], parallel = 4): Promise<Map<string, string>> {
  const uids = new Map<string, string>();
  await Promise.all(
    chunks(list, parallel).map(async (c) => {
      // One object per line: kubectl prints several objects with -o json back to back, not as a List.
      const out = await kubectlOk(admin, ['create', '-f', '-', '-o', 'jsonpath={.metadata.name}{" "}{.metadata.uid}{"\\n"}'], {
        input: c.map(websiteDoc).join('---\n'),
      });
      for (const line of out.split('\n').filter(Boolean)) {
        const [name, uid] = line.split(' ');
        uids.set(name ?? '', uid ?? '');
      }
    }),
  );
  expect([...uids.keys()].sort()).toEqual([...list].sort());
  for (const u of uids.values()) expect(u).toMatch(/^[0-9a-f-]{36}$/);
  return uids;
}

async function patchWebsites(list: string[], parallel = 4): Promise<void> {
  await Promise.all(
    chunks(list, parallel).map((c) =>
      kubectlOk(admin, ['patch', 'websites', '-n', NS, ...c, '--type', 'merge', '-p', '{"spec":{"git":{"branch":"informer-update"}}}']),
    ),
  );
}

async function deleteWebsites(list: string[], parallel = 4): Promise<void> {
  await Promise.all(chunks(list, parallel).map((c) => kubectlOk(admin, ['delete', 'websites', '-n', NS, ...c, '--wait=false'])));
}

/** serving waits until kube-apiserver says the APIService is Available and a list in our namespace goes through. */
async function serving(timeoutMs = 90_000): Promise<void> {
  await waitFor(
    'APIService Available=True',
    async () => {
      // The informers here list and watch v1alpha1: its APIService is the one that must be Available.
      const o = JSON.parse(await kubectlOk(admin, ['get', 'apiservice', 'v1alpha1.extensions.example.com', '-o', 'json'])) as {
        status?: { conditions?: { type: string; status: string }[] };
      };
      const c = o.status?.conditions?.find((x) => x.type === 'Available');
      // Thrown (not returned) so that a timeout reports the last condition seen.
      if (c?.status !== 'True') throw new Error(`Available: ${JSON.stringify(c)}`);
      return true;
    },
    timeoutMs,
    250,
  );
  await waitFor(
    'websites reachable through kube-apiserver',
    async () => {
      await kubectlOk(admin, ['get', 'websites', '-n', NS, '-o', 'name'], { timeoutMs: 10_000 });
      return true;
    },
    timeoutMs,
    250,
  );
  await waitForDiscovery(env);
}

const serverSpec = () => ({ args: env.website.args, logFile: env.website.logFile, pidFile: env.website.pidFile, url: env.website.url });

/** restart stops our server with `signal`, starts it again and waits until it serves through kube-apiserver. */
async function restart(signal: NodeJS.Signals): Promise<void> {
  const oldPid = readPid(env.website.pidFile);
  const t0 = Date.now();
  await stopWebsiteServer(env.website.pidFile, signal);
  const t1 = Date.now();
  const pid = await startWebsiteServer(serverSpec());
  const t2 = Date.now();
  expect(pid).not.toBe(oldPid);
  await serving();
  log(`${signal} restart: stop ${t1 - t0} ms, start to /readyz ${t2 - t1} ms, then Available + reachable ${Date.now() - t2} ms`);
}

/** startProbe runs informer-probe; watchList undefined leaves the gate at client-go's default. */
function startProbe(label: string, kubeconfig: string, mode: 'dynamic' | 'metadata', namespace: string, watchList: 'true' | 'false' | undefined): Probe {
  const base = { ...process.env };
  delete base['KUBE_FEATURE_WatchListClient'];
  return new Probe(
    label,
    PROBE,
    ['-kubeconfig', kubeconfig, '-resource', RESOURCE, '-mode', mode, '-namespace', namespace],
    watchList === undefined ? base : { ...base, KUBE_FEATURE_WatchListClient: watchList },
  );
}

const synced = (p: Probe) => p.until('SYNCED', (ev) => ev.some((e) => e.type === 'SYNCED'), 60_000);

/** addedBeforeSync is what the probe's handlers got for our namespace before it reported the cache synced. */
const addedBeforeSync = (p: Probe) => {
  const i = p.events.findIndex((e) => e.type === 'SYNCED');
  return p.events.slice(0, i).filter((e) => e.namespace === NS);
};

interface Watched {
  probe: Probe;
  goType: string;
}

describe('client-go informers through kube-apiserver', () => {
  let probes: Watched[] = [];
  const uids = new Map<string, string>();
  const pre = names('pre', 10);
  const tmp = mkdtempSync(join(tmpdir(), 'informers-e2e-'));
  /** settle makes one more change (a sentinel create) and waits until every probe saw it: a watch is ordered,
   *  so everything changed before it has been delivered, and a duplicate would already be in the events. */
  const settle = async (tag: string) => {
    const name = `sentinel-${tag}`;
    for (const [n, u] of await createWebsites([name], 1)) uids.set(n, u);
    await Promise.all(
      probes.map((p) => p.probe.until(`sentinel ${name}`, (ev) => ev.some((e) => e.type === 'ADDED' && e.namespace === NS && e.name === name))),
    );
    return name;
  };
  const marks = () => probes.map((p) => p.probe.events.length);

  beforeAll(async () => {
    const t0 = Date.now();
    await kubectlOk(admin, ['create', 'namespace', NS]);
    for (const [n, u] of await createWebsites(pre)) uids.set(n, u);
    const t1 = Date.now();
    probes = [
      // watch-list switched on explicitly, all namespaces
      { probe: startProbe('dynamic/all-namespaces/watch-list=true', admin, 'dynamic', '', 'true'), goType: DYNAMIC },
      // client-go's default (no variable set), which is watch-list in v0.35
      { probe: startProbe(`metadata/${NS}/watch-list=default`, admin, 'metadata', NS, undefined), goType: METADATA },
      // classic LIST + WATCH
      { probe: startProbe(`dynamic/${NS}/watch-list=false`, admin, 'dynamic', NS, 'false'), goType: DYNAMIC },
    ];
    await Promise.all(probes.map((p) => synced(p.probe)));
    log(`namespace + 10 websites ${t1 - t0} ms; three probes synced in ${Date.now() - t1} ms`);
  });

  afterAll(async () => {
    await Promise.all(probes.map((p) => p.probe.stop()));
    for (const p of probes) if (p.probe.stderr.trim()) log(`${p.probe.label} stderr:\n${p.probe.stderr}`);
    // Later files need the server up and serving.
    let pid = 0;
    try {
      pid = readPid(env.website.pidFile);
    } catch {
      // no pid file: start below
    }
    if (!pid || !alive(pid)) await startWebsiteServer(serverSpec());
    // One more restart if it does not serve (a failed test above already reported why).
    await serving(30_000).catch(async (e: Error) => {
      log(`not serving after the tests (${e.message}); restarting it once more`);
      await stopWebsiteServer(env.website.pidFile);
      await startWebsiteServer(serverSpec());
      await serving();
    });
    await kubectlOk(admin, ['delete', 'namespace', NS, '--wait=false', '--ignore-not-found']);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('sync: the pre-existing websites arrive as ADDED before SYNCED, with the right Go types', () => {
    for (const { probe, goType } of probes) {
      const before = addedBeforeSync(probe);
      expect(before.map((e) => `${e.type} ${e.name}`).sort(), probe.label).toEqual(pre.map((n) => `ADDED ${n}`));
      for (const e of before) {
        expect(e.uid, `${probe.label} ${e.name}`).toBe(uids.get(e.name ?? ''));
        expect(e.goType, probe.label).toBe(goType);
      }
      expect(probe.watchErrors(), probe.label).toEqual([]);
    }
  });

  it('watch-list is really used: one watch with sendInitialEvents and the initial-events-end bookmark, no LIST', async () => {
    const proxies: RecordingProxy[] = [];
    const side: Probe[] = [];
    try {
      const through = async (label: string, mode: 'dynamic' | 'metadata', watchList: 'true' | 'false' | undefined) => {
        const px = await recordingProxy(env.server, env.caFile, env.tokens.admin);
        proxies.push(px);
        const kc = join(tmp, `${label.replace(/\W+/g, '-')}.kubeconfig`);
        writeFileSync(
          kc,
          YAML.stringify({
            apiVersion: 'v1',
            kind: 'Config',
            clusters: [{ name: 'proxy', cluster: { server: px.url } }],
            users: [{ name: 'proxy', user: {} }],
            contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'proxy' } }],
            'current-context': 'proxy',
          }),
          { mode: 0o600 },
        );
        const p = startProbe(label, kc, mode, NS, watchList);
        side.push(p);
        return { px, p };
      };
      const runs = [
        { ...(await through('dynamic/watch-list=default', 'dynamic', undefined)), watchList: true },
        { ...(await through('metadata/watch-list=true', 'metadata', 'true')), watchList: true },
        { ...(await through('dynamic/watch-list=false', 'dynamic', 'false')), watchList: false },
      ];
      await Promise.all(
        runs.map((r) =>
          synced(r.p).catch((e: Error) => {
            throw new Error(`${e.message}\nproxy saw: ${JSON.stringify(r.px.requests)}`);
          }),
        ),
      );
      const isWatch = (url: string) => /[?&]watch=(true|1)(&|$)/.test(url);
      for (const { px, p, watchList } of runs) {
        expect(
          addedBeforeSync(p)
            .map((e) => e.name)
            .sort(),
          p.label,
        ).toEqual(pre);
        const reqs = px.requests.filter((r) => r.url.includes('/websites'));
        log(
          `${p.label} requested:\n    ${reqs.map((r) => `${r.method} ${r.url} → ${r.status}${r.initialEventsEnd ? ' (initial-events-end bookmark)' : ''}`).join('\n    ')}`,
        );
        if (watchList) {
          // Exactly one request: the watch-list stream, answered with the initial objects and the end-marking bookmark.
          expect(reqs.length, p.label).toBe(1);
          const [w] = reqs;
          expect(w?.url.startsWith(`/apis/extensions.example.com/v1alpha1/namespaces/${NS}/websites?`), p.label).toBe(true);
          const q = new URL(w?.url ?? '', 'http://x').searchParams;
          expect(
            {
              watch: q.get('watch'),
              sendInitialEvents: q.get('sendInitialEvents'),
              allowWatchBookmarks: q.get('allowWatchBookmarks'),
              resourceVersionMatch: q.get('resourceVersionMatch'),
            },
            p.label,
          ).toEqual({ watch: 'true', sendInitialEvents: 'true', allowWatchBookmarks: 'true', resourceVersionMatch: 'NotOlderThan' });
          expect(w?.status, p.label).toBe(200);
          expect(w?.initialEventsEnd, p.label).toBe(true);
        } else {
          // The control: the same program with the gate off lists first, then watches from the list's version.
          expect(isWatch(reqs[0]?.url ?? ''), p.label).toBe(false);
          expect(
            reqs.slice(1).some((r) => isWatch(r.url) && !/sendInitialEvents/.test(r.url)),
            p.label,
          ).toBe(true);
          expect(
            reqs.some((r) => /sendInitialEvents=true/.test(r.url)),
            p.label,
          ).toBe(false);
        }
      }
    } finally {
      await Promise.all(side.map((p) => p.stop()));
      await Promise.all(proxies.map((px) => px.close()));
    }
  });

  it('add, update and delete of 100 websites: each probe sees each change exactly once, in resourceVersion order', async () => {
    const bulk = names('bulk', 100);
    const from = marks();
    const t0 = Date.now();
    for (const [n, u] of await createWebsites(bulk)) uids.set(n, u);
    const t1 = Date.now();
    await patchWebsites(bulk);
    const t2 = Date.now();
    await deleteWebsites(bulk);
    const t3 = Date.now();
    const gone = (ev: ProbeEvent[]) =>
      new Set(ev.filter((e) => e.type === 'DELETED' && e.namespace === NS && e.name?.startsWith('bulk-')).map((e) => e.name)).size === bulk.length;
    await Promise.all(probes.map((p) => p.probe.until('100 DELETED', gone)));
    const t4 = Date.now();
    const sentinel = await settle('bulk');
    log(
      `100 websites (4 kubectl processes at a time): create ${t1 - t0} ms, patch ${t2 - t1} ms, delete ${t3 - t2} ms; last DELETED seen by all probes ${t4 - t3} ms after`,
    );

    for (const [i, { probe, goType }] of probes.entries()) {
      const j = judge(probe.events, NS, goType, from[i] ?? 0);
      expect(j.problems, probe.label).toEqual([]);
      expect(count(j.added), probe.label).toEqual(once([...bulk, sentinel]));
      expect(count(j.modified), probe.label).toEqual(once(bulk));
      expect(count(j.deleted), probe.label).toEqual(once(bulk));
      expect(j.echoes, probe.label).toEqual([]);
      // Same object throughout (the uid kubectl create returned), and ADDED < MODIFIED < DELETED.
      for (const n of bulk) {
        const evs = probe.events.slice(from[i]).filter((e) => e.namespace === NS && e.name === n);
        expect(
          evs.map((e) => e.type),
          `${probe.label} ${n}`,
        ).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
        expect(new Set(evs.map((e) => e.uid)), `${probe.label} ${n}`).toEqual(new Set([uids.get(n)]));
        const rvs = evs.map(rvOf);
        expect(rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!, `${probe.label} ${n} rvs ${rvs.join(',')}`).toBe(true);
      }
      expect(probe.watchErrors(from[i]), probe.label).toEqual([]);
    }
  });

  /** changesAfterRestart makes 5 creates, 2 updates and 2 deletes and checks that every probe got exactly those. */
  async function changesAfterRestart(tag: string, from: number[], updates: string[], deletes: string[]): Promise<void> {
    const created = names(tag, 5);
    const t0 = Date.now();
    for (const [n, u] of await createWebsites(created, 2)) uids.set(n, u);
    // Seeing the creates proves each reflector is watching again (resumed or re-listed), so what follows must
    // arrive as plain watch events.
    await Promise.all(
      probes.map((p) => p.probe.until(`${tag} ADDED`, (ev) => created.every((n) => ev.some((e) => e.type === 'ADDED' && e.namespace === NS && e.name === n)))),
    );
    const t1 = Date.now();
    await patchWebsites(updates, 1);
    await deleteWebsites(deletes, 1);
    const sentinel = await settle(tag);
    log(`after the ${tag} restart: creates seen by all probes in ${t1 - t0} ms; all changes + sentinel in ${Date.now() - t0} ms`);

    for (const [i, { probe, goType }] of probes.entries()) {
      const errs = probe.watchErrors(from[i]);
      log(`${probe.label}: ${errs.length} WATCH_ERROR during the restart${errs.length ? `:\n    ${errs.join('\n    ')}` : ''}`);
      const j = judge(probe.events, NS, goType, from[i] ?? 0);
      if (j.echoes.length) log(`${probe.label}: re-listed; ${j.echoes.length} unchanged objects re-delivered as updates at the same resourceVersion`);
      expect(j.problems, probe.label).toEqual([]);
      expect(count(j.added), probe.label).toEqual(once([...created, sentinel]));
      expect(count(j.modified), probe.label).toEqual(once(updates));
      expect(count(j.deleted), probe.label).toEqual(once(deletes));
      // resourceVersions keep growing across the restart (nothing handed out twice, history not rewound).
      expect(j.minRvInside! > j.maxRvBefore, `${probe.label}: first new rv ${j.minRvInside} vs last before ${j.maxRvBefore}`).toBe(true);
      for (const n of created) {
        expect(probe.events.slice(from[i]).find((e) => e.type === 'ADDED' && e.name === n && e.namespace === NS)?.uid, `${probe.label} ${n}`).toBe(uids.get(n));
      }
    }
  }

  /** live is what a list in our namespace must return at a quiet point. */
  const live = new Set<string>();
  const listed = async () =>
    (await kubectlOk(admin, ['get', 'websites', '-n', NS, '-o', 'name']))
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => l.replace(/^.*\//, ''))
      .sort();

  it('SIGTERM restart: the informers reconnect and get exactly the later changes', async () => {
    for (const n of [...pre, 'sentinel-bulk']) live.add(n);
    expect(await listed()).toEqual([...live].sort());
    const from = marks();
    await restart('SIGTERM');
    await changesAfterRestart('term', from, ['pre-000', 'term-000'], ['pre-001', 'term-001']);
    for (const n of [...names('term', 5), 'sentinel-term']) live.add(n);
    for (const n of ['pre-001', 'term-001']) live.delete(n);
  });

  it('SIGKILL restart: nothing committed is lost and the informers get exactly the later changes', async () => {
    expect(await listed()).toEqual([...live].sort());
    const from = marks();
    await restart('SIGKILL');
    expect(await listed()).toEqual([...live].sort());
    await changesAfterRestart('kill', from, ['pre-002', 'kill-000'], ['pre-003', 'kill-001']);
    for (const { probe } of probes) expect(probe.exited, probe.label).toBe(false);
  });
});
