/**
 * Several replicas behind the APIService, on a real node: the chart's HA form (`helm install -f values-ha.yaml`:
 * `replicas: 3`, etcd) installed with the real helm, its pods run by the kubelet from the offline image,
 * kube-apiserver started with `--enable-aggregator-routing=true` so the aggregator picks among the ready replicas'
 * endpoints. The replicas share a 3-member etcd of their own on the node address (node/sandbox.mjs
 * `storageEtcdMembers`).
 *
 * Every client runs inside the sandbox's network namespace and goes through kube-apiserver, as a user's would: a
 * writer (node/api-writer.mjs: creates, then merge patches bumping a counter annotation, each retried until
 * answered), a client-go informer (go/probe) and kubectl. Three faults: every replica killed with SIGKILL in turn
 * under that load, `kubectl rollout restart` of the StatefulSet, and `helm upgrade` of the release to a new image
 * tag and a changed flag. After each: no acknowledged write lost, only errors a client retries, the informer's cache
 * exactly the server's list with no re-list, and (in the rolling restart and the upgrade) no kubectl command failed
 * and the APIServices never left Available.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLeaf } from '../../src/certs/issue.js';
import { HA_VALUES_FILE } from '../../src/manifests/deploy-files.js';
import { APISERVICE_NAMES, DEFAULT_NAMESPACE, SERVICE_NAME } from '../../src/manifests/render.js';
import { judge, Probe, type ProbeEvent } from './helpers-informers.js';
import { waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { startRealNode, type RealNode } from './node/real-node.mjs';
import {
  argsOf,
  CHART,
  chartValues,
  type EarlierChart,
  endNode,
  helm,
  hostPidOf,
  installChart,
  type NodeImages,
  nodeImages,
  previousChart,
  suiteUnavailable,
  upgradeTag,
} from './node/suite.js';

const ROOT = resolve(import.meta.dirname, '../..');
const unavailable = suiteUnavailable('real-node HA');

const NS = 'ha';
const REPLICAS = 3;
const SEQ = 'e2e.example.com/seq';
const GO_TYPE = '*unstructured.Unstructured';
const SERVER_LABEL = 'app.kubernetes.io/name=website-apiserver';
const log = (m: string) => process.stderr.write(`[real-node-ha] ${m}\n`);

interface Condition {
  type: string;
  status: string;
}
interface PodJson {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status: { podIP?: string; conditions?: Condition[]; containerStatuses?: { restartCount: number; ready: boolean }[] };
}
interface WebsiteJson {
  metadata: { name: string; uid: string; resourceVersion: string; annotations?: Record<string, string> };
}
/** WriterLine is one answer the writer got (node/api-writer.mjs). */
interface WriterLine {
  op: 'create' | 'patch';
  name: string;
  status: number;
  tries: number;
  seq: number;
  uid?: string;
  rv?: string;
  error?: string;
  t: number;
}

/** Writer is a running node/api-writer.mjs and the answers it printed so far. */
class Writer {
  readonly lines: WriterLine[] = [];
  private buf = '';
  stderr = '';
  private readonly done: Promise<void>;
  constructor(private readonly proc: ChildProcess) {
    proc.stdout?.on('data', (b: Buffer) => {
      this.buf += b.toString();
      const parts = this.buf.split('\n');
      this.buf = parts.pop() ?? '';
      for (const p of parts) if (p.trim()) this.lines.push(JSON.parse(p) as WriterLine);
    });
    proc.stderr?.on('data', (b: Buffer) => (this.stderr += b.toString()));
    this.done = new Promise((r) => proc.once('exit', () => r()));
  }
  get acked(): number {
    return this.lines.filter((l) => l.status >= 200 && l.status < 300).length;
  }
  /** stop closes stdin: the writer finishes the writes in flight (retrying until answered) and exits. */
  async stop(): Promise<void> {
    this.proc.stdin?.end();
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 60_000);
    await this.done;
    clearTimeout(t);
    expect(this.proc.exitCode, this.stderr).toBe(0);
  }
}

/** cacheOf replays an informer's events into what its store holds: name → resourceVersion. */
function cacheOf(events: ProbeEvent[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of events) {
    if (e.namespace !== NS || !e.name) continue;
    if (e.type === 'ADDED' || e.type === 'MODIFIED') m.set(e.name, e.resourceVersion ?? '');
    else if (e.type === 'DELETED') m.delete(e.name);
  }
  return m;
}

/** RETRIABLE: what a client retries (client-go's rest client, kubectl): transport failures, 429, 503, 504. */
const RETRIABLE = new Set([0, 429, 503, 504]);

describe.skipIf(!!unavailable)(`${REPLICAS} replicas on etcd behind the APIService with aggregator routing, on a real node`, () => {
  let node: RealNode;
  let previous: EarlierChart;
  let dir: string;
  let images: NodeImages;
  const timings: Record<string, number> = {};

  const k = async (args: string[], input?: string) => {
    const r = await node.kubectl(args, { input, timeoutMs: 120_000 });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const json = async <T>(args: string[]): Promise<T> => JSON.parse(await k([...args, '-o', 'json'])) as T;
  const serverPods = async () =>
    (await json<{ items: PodJson[] }>(['get', 'pods', '-n', DEFAULT_NAMESPACE, '-l', SERVER_LABEL])).items.filter((p) => !p.metadata.deletionTimestamp);
  const isReady = (p: PodJson) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
  const readyEndpoints = async () => {
    const slices = await json<{ items: { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }[] }>([
      'get',
      'endpointslices',
      '-n',
      DEFAULT_NAMESPACE,
      '-l',
      `kubernetes.io/service-name=${SERVICE_NAME}`,
    ]);
    return slices.items.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready).flatMap((e) => e.addresses)).sort();
  };
  /** allServing waits for REPLICAS ready pods, each an endpoint, and every APIService Available. */
  const allServing = (timeoutMs = 180_000) =>
    waitFor(
      `${REPLICAS} ready replicas behind the Service and the APIServices Available`,
      async () => {
        const pods = await serverPods();
        if (pods.length !== REPLICAS || !pods.every(isReady)) return undefined;
        const ips = pods.map((p) => p.status.podIP ?? '').sort();
        if (JSON.stringify(await readyEndpoints()) !== JSON.stringify(ips)) return undefined;
        for (const name of APISERVICE_NAMES) {
          const o = await json<{ status?: { conditions?: Condition[] } }>(['get', 'apiservice', name]);
          if (!o.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True')) return undefined;
        }
        return pods;
      },
      timeoutMs,
      500,
    );
  /** haValues: the HA form's values for this node (its etcd; soft anti-affinity, as there is one node). */
  const haValues = () => ({
    storage: { backend: 'etcd', etcd: { servers: node.state.storageEtcdUrls, prefix: '/website-ha', clientSecret: '' } },
    podAntiAffinity: 'soft',
  });
  const websites = async () => (await json<{ items: WebsiteJson[] }>(['get', 'websites.v1.extensions.example.com', '-n', NS])).items;

  /**
   * direct asks one replica at its pod IP (inside the sandbox), as a cluster admin: a client certificate from the
   * cluster's client CA, which every replica trusts through kube-apiserver's extension-apiserver-authentication.
   */
  const direct = async (p: PodJson, path: string) => {
    const r = await node.exec('curl', [
      '-sk',
      '--max-time',
      '5',
      '--cert',
      join(dir, 'admin.crt'),
      '--key',
      join(dir, 'admin.key'),
      `https://${p.status.podIP}:8443${path}`,
    ]);
    if (r.code !== 0) throw new Error(`curl ${p.metadata.name}${path}: ${r.stderr}`);
    return r.stdout;
  };
  /** watchersByPod is each replica's open watch streams (its apiserver_registered_watchers), for failure messages. */
  const watchersByPod = async () => {
    const out: Record<string, string> = {};
    for (const p of await serverPods()) {
      out[p.metadata.name] = await direct(p, '/metrics').then(
        (m) => /^apiserver_registered_watchers (\S+)/m.exec(m)?.[1] ?? '?',
        (e: Error) => e.message,
      );
    }
    return out;
  };

  const startWriter = (prefix: string, workers: number, max: number) =>
    new Writer(node.spawn(process.execPath, [join(ROOT, 'test/e2e/node/api-writer.mjs'), node.state.kubeconfig, NS, prefix, String(workers), String(max)]));
  const startProbe = (label: string) =>
    new Probe(
      label,
      'nsenter',
      [
        '--target',
        String(node.pid),
        '--net',
        '--',
        join(e2e().binDir, 'informer-probe'),
        '-kubeconfig',
        node.state.kubeconfig,
        '-resource',
        'websites.v1.extensions.example.com',
        '-mode',
        'dynamic',
        '-namespace',
        NS,
      ],
      process.env,
    );

  /**
   * checkWrites compares what the writer was told with what the API holds now: every acknowledged create is there
   * (with the uid it was acknowledged with), every object's counter is the last acknowledged one, and every error
   * was one a client retries. Returns the figures for the log.
   */
  const checkWrites = async (w: Writer, prefix: string) => {
    const stored = new Map((await websites()).filter((o) => o.metadata.name.startsWith(`${prefix}-`)).map((o) => [o.metadata.name, o]));
    const created = new Map<string, string | undefined>();
    const lastSeq = new Map<string, number>();
    const errors: WriterLine[] = [];
    for (const l of w.lines) {
      const ok = l.status >= 200 && l.status < 300;
      // A create retried after a failure that had in fact been applied: 409 AlreadyExists, the object is there.
      const appliedEarlier = l.op === 'create' && l.status === 409 && l.tries > 1;
      if (l.op === 'create' && (ok || appliedEarlier)) created.set(l.name, ok ? l.uid : undefined);
      if (ok || appliedEarlier) lastSeq.set(l.name, Math.max(lastSeq.get(l.name) ?? 0, l.seq));
      else errors.push(l);
    }
    expect(created.size).toBeGreaterThan(0);
    for (const [name, uid] of created) {
      const o = stored.get(name);
      expect(o, `acknowledged create of ${name}`).toBeDefined();
      if (uid !== undefined) expect(o?.metadata.uid, name).toBe(uid);
    }
    const lost = [...lastSeq].filter(([name, seq]) => stored.get(name)?.metadata.annotations?.[SEQ] !== String(seq));
    expect(lost, 'objects whose counter is not the last acknowledged value').toEqual([]);
    const notRetriable = errors.filter((e) => !RETRIABLE.has(e.status));
    expect(notRetriable, 'errors a client would not retry').toEqual([]);
    const byStatus: Record<string, number> = {};
    for (const e of errors) byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
    return {
      acknowledged: w.acked,
      creates: created.size,
      patchedObjects: lastSeq.size,
      errors: errors.length,
      byStatus,
      lost: lost.length,
      sample: errors.slice(0, 3).map((e) => `${e.status} ${e.error}`),
    };
  };

  /**
   * checkInformer waits for the probe's cache to equal the server's list, then judges every event it got. A re-list
   * (Replace hands every cached object to OnUpdate again at an unchanged resourceVersion) is a failure, except where
   * client-go's rules demand one: `relistCause` names the watch errors that may cause one (the reflector re-lists
   * after any watch request error but a refused connection or 429), and every such error must be one of them.
   */
  const checkInformer = async (p: Probe, relistCause?: RegExp) => {
    // The list is read afresh each time: the reconciler (on whichever replica leads now) may still be writing
    // statuses after the writer stopped, and the informer must follow those too.
    let want = new Map<string, string>();
    const same = () => {
      const got = cacheOf(p.events);
      return got.size === want.size && [...want].every(([n, rv]) => got.get(n) === rv);
    };
    for (const deadline = Date.now() + 60_000; ; ) {
      want = new Map((await websites()).map((o) => [o.metadata.name, o.metadata.resourceVersion]));
      // The informer may be a moment behind the list just read.
      const settle = Date.now() + 2_000;
      while (!same() && Date.now() < settle) await new Promise((r) => setTimeout(r, 100));
      if (same()) break;
      if (p.exited || Date.now() > deadline) {
        const got = cacheOf(p.events);
        const behind = [...want]
          .filter(([n, rv]) => got.get(n) !== rv)
          .slice(0, 5)
          .map(([n, rv]) => `${n}: list ${rv}, informer ${got.get(n)}`);
        throw new Error(
          `the informer's cache never equalled the list\nbehind: ${JSON.stringify(behind)}\nwatchers by replica: ${JSON.stringify(await watchersByPod())}\ninformer log: ${p.stderr.slice(-3000)}`,
        );
      }
    }
    const j = judge(p.events, NS, GO_TYPE, 0);
    // client-go logs why a watch ended (klog on stderr), including the ends that lead to a re-list.
    const watchErrors = [...p.watchErrors(), ...p.stderr.split('\n').filter((l) => /watch ended with error|watch of .* (ended|closed) with/i.test(l))];
    expect(j.problems).toEqual([]);
    if (relistCause) {
      for (const e of watchErrors) expect(e, 'a watch error that made the informer re-list').toMatch(relistCause);
      // A re-list delivers every cached object once again, so echoes come in whole sets, one per watch error at most.
      expect(j.echoes.length, `objects delivered again by a re-list; the informer's log:\n${p.stderr.slice(-4000)}`).toBeLessThanOrEqual(
        watchErrors.length * want.size,
      );
    } else {
      expect(watchErrors).toEqual([]);
      expect(j.echoes, 'objects delivered again by a re-list').toEqual([]);
    }
    return { objects: want.size, events: p.events.length, relistedObjects: j.echoes.length, watchErrors };
  };

  beforeAll(async () => {
    const t0 = Date.now();
    const env = e2e();
    dir = mkdtempSync(join(tmpdir(), 'website-real-node-ha-'));
    images = await nodeImages(log);
    node = await startRealNode({
      binDir: env.binDir,
      images: [images.pause, images.nginx, images.gitSync, { ...images.websiteApiserver, tags: [upgradeTag(images)] }],
      pauseImage: images.pause.ref,
      dir: join(dir, 'node'),
      log,
      apiserverArgs: ['--enable-aggregator-routing=true'],
      storageEtcdMembers: 3,
    });
    timings['node'] = Date.now() - t0;
    // The chart's HA form as an operator installs it (helm install -f deploy/helm/values-ha.yaml), with this node's
    // etcd (plain http, so no client Secret) and the offline images. One node: the required anti-affinity of
    // values-ha.yaml would leave two replicas Pending, so it is soft here. The chart's previous version (from git), so
    // that the upgrade below crosses its newest change as an operator's upgrade from their release would.
    // A clone without history (a shallow one) has no previous version: the suite then says so, once, and installs
    // this chart, so the upgrade below changes the image and a flag only.
    try {
      previous = previousChart(dir);
      log(`installing the chart's previous version, from ${previous.commit}`);
    } catch (e) {
      previous = { chart: CHART, haValues: join(ROOT, HA_VALUES_FILE), commit: `this checkout (no previous version: ${(e as Error).message})` };
      log(`NOTE: upgrading from this chart, not its previous version: ${(e as Error).message}`);
    }
    await installChart(
      node,
      dir,
      SERVICE_NAME,
      DEFAULT_NAMESPACE,
      { valueFiles: [previous.haValues], values: { ...haValues(), ...chartValues(images) } },
      previous.chart,
    );
    await allServing();
    timings['server'] = Date.now() - t0 - (timings['node'] ?? 0);
    await k(['create', 'namespace', NS]);
    const pki = join(node.dir, 'plane', 'pki');
    const ca = {
      cert: forge.pki.certificateFromPem(readFileSync(join(pki, 'ca.crt'), 'utf8')),
      key: forge.pki.privateKeyFromPem(readFileSync(join(pki, 'ca.key'), 'utf8')),
    };
    const now = new Date();
    const admin = createLeaf(ca, now, new Date(now.getTime() + 3_600_000), {
      subject: [
        { shortName: 'CN', value: 'ha-admin' },
        { shortName: 'O', value: 'system:masters' },
      ],
      extKeyUsage: { clientAuth: true },
    });
    writeFileSync(join(dir, 'admin.crt'), admin.certPem);
    writeFileSync(join(dir, 'admin.key'), admin.keyPem, { mode: 0o600 });
    log(`setup: ${JSON.stringify(timings)} ms`);
  }, 600_000);

  afterAll(() => endNode(node, dir, log), 120_000);

  it('every replica is an endpoint of the Service, each answers, and they serve the same data', async () => {
    const pods = await serverPods();
    expect(pods).toHaveLength(REPLICAS);
    expect(await readyEndpoints()).toEqual(pods.map((p) => p.status.podIP).sort());
    await k(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'extensions.example.com/v1',
        kind: 'Website',
        metadata: { name: 'shared', namespace: NS },
        spec: { replicas: 0, git: { repository: 'https://example.com/site.git' }, service: { type: 'ClusterIP' } },
      }),
    );
    // Each replica directly (pod IP, inside the sandbox), as a cluster admin. The reconciler (on the leader) writes
    // the new object's status meanwhile, so the replicas and kube-apiserver are compared once that has settled.
    await waitFor(
      'every replica and kube-apiserver to answer with the same object',
      async () => {
        const via = await json<WebsiteJson>(['get', 'website', 'shared', '-n', NS]);
        for (const p of pods) {
          const o = JSON.parse(await direct(p, `/apis/extensions.example.com/v1/namespaces/${NS}/websites/shared`)) as WebsiteJson;
          if (o.metadata.uid !== via.metadata.uid || o.metadata.resourceVersion !== via.metadata.resourceVersion) return false;
        }
        return true;
      },
      30_000,
      500,
    );
  });

  it('kill -9 of each replica in turn under a write load through kube-apiserver: no acknowledged write lost, only retriable errors, and a client-go informer keeps an exact cache (re-listing only where client-go must)', async () => {
    const probe = startProbe('kill');
    try {
      await probe.until('SYNCED', (ev) => ev.some((e) => e.type === 'SYNCED'), 60_000);
      const writer = startWriter('kill', 4, 80);
      await waitFor('writes acknowledged before the first kill', () => writer.acked >= 40, 120_000, 200);
      const recovery: number[] = [];
      for (const pod of await serverPods()) {
        const restarts = pod.status.containerStatuses?.[0]?.restartCount ?? 0;
        const pid = hostPidOf(pod.metadata.name);
        const before = writer.acked;
        const t = Date.now();
        process.kill(pid, 'SIGKILL');
        // The kubelet restarts the container in place; the pod is an endpoint again once /readyz passes.
        await waitFor(
          `${pod.metadata.name} restarted and ready`,
          async () => {
            const p = (await serverPods()).find((q) => q.metadata.name === pod.metadata.name);
            return p && (p.status.containerStatuses?.[0]?.restartCount ?? 0) > restarts && isReady(p);
          },
          120_000,
          250,
        );
        await allServing();
        recovery.push(Date.now() - t);
        // The other replicas kept taking writes meanwhile.
        expect(writer.acked, 'writes acknowledged while a replica was down').toBeGreaterThan(before);
        await waitFor('more writes after the replica is back', () => writer.acked >= before + 40, 60_000, 200);
      }
      await writer.stop();
      const writes = await checkWrites(writer, 'kill');
      // kube-aggregator proxies a watch with Go's ReverseProxy, which aborts the client's stream (HTTP/2 RST_STREAM
      // INTERNAL_ERROR) when the backend's connection dies mid-body; client-go's watch decoder reports that as an error,
      // not as the end of the stream, and the reflector re-lists: kube's rules require that re-list. A watch request
      // routed to the dead replica before its endpoint turns not-ready gets the aggregator's 503, also a re-list.
      // No watch may fail for anything of ours (410 Expired, a decode error of our output).
      const informer = await checkInformer(
        probe,
        /stream error: stream ID \d+; INTERNAL_ERROR|\b503\b|service unavailable|the server is currently unable to handle the request/i,
      );
      log(
        `kill -9 of ${REPLICAS} replicas in turn: kill → ready again (ms) ${JSON.stringify(recovery)}; writes ${JSON.stringify(writes)}; informer ${JSON.stringify(informer)}`,
      );
    } finally {
      await probe.stop();
    }
  });

  /**
   * replaceUnderLoad runs `replace` (something that replaces every replica, then waits for its rollout) while
   * kubectl, a writer and an informer run through kube-apiserver, and checks what they saw: no kubectl command
   * failed or printed a discovery error, the APIServices never left Available, every pod is new, only retriable write
   * errors and no acknowledged write lost, the informer exact without a re-list. Returns the figures for the log.
   */
  const replaceUnderLoad = async (label: string, prefix: string, replace: () => Promise<void>) => {
    const probe = startProbe(label);
    const cacheRoot = mkdtempSync(join(dir, 'kubectl-cache-'));
    let stop = false;
    const kubectlRuns: { ok: boolean; discoveryError: boolean; out: string }[] = [];
    try {
      await probe.until('SYNCED', (ev) => ev.some((e) => e.type === 'SYNCED'), 60_000);
      const writer = startWriter(prefix, 3, 45);
      // The namespace may be empty when this test runs alone: kubectl starts once there is something to list.
      await waitFor('a first write acknowledged', () => writer.acked >= 1, 60_000, 100);
      // kubectl as a user runs it, each time with an empty discovery cache so discovery goes through the
      // aggregator too: a list of the group's resource, and the group's discovery.
      const loop = (async () => {
        for (let i = 0; !stop; i++) {
          const cache = join(cacheRoot, String(i));
          const r =
            i % 2 === 0
              ? await node.kubectl(['--cache-dir', cache, 'get', 'websites', '-n', NS, '-o', 'name'], { timeoutMs: 60_000 })
              : await node.kubectl(['--cache-dir', cache, 'api-resources', '--api-group=extensions.example.com', '-o', 'name'], { timeoutMs: 60_000 });
          const discoveryError = /couldn't get resource list|unable to retrieve the complete list|the server is currently unable/i.test(r.stderr);
          kubectlRuns.push({
            ok: r.code === 0 && r.stdout.includes('website'),
            discoveryError,
            out: `${new Date().toISOString()} kubectl ${i % 2 === 0 ? 'get' : 'api-resources'} exit ${r.code}: ${r.stderr.slice(0, 300)} stdout: ${r.stdout.slice(0, 200)}`,
          });
          rmSync(cache, { recursive: true, force: true });
        }
      })();
      // What the aggregator saw meanwhile: every APIService's Available condition, sampled, and the ready endpoints
      // (the changes are kept for a failure's message).
      const timeline: string[] = [];
      const available = { samples: 0, notAvailable: [] as string[] };
      const watchTimeline = (async () => {
        let last = '';
        while (!stop) {
          const a = await node.kubectl([
            'get',
            'apiservices',
            '-o',
            'jsonpath={range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Available")].status}/{.status.conditions[?(@.type=="Available")].reason} {end}',
          ]);
          const ours = a.stdout.split(' ').filter((x) => x.includes('extensions.example.com'));
          if (a.code === 0) {
            available.samples++;
            for (const x of ours) if (!x.includes('=True/')) available.notAvailable.push(`${new Date().toISOString()} ${x}`);
          }
          const now = `${ours.join(' ')} endpoints=${(await readyEndpoints().catch(() => [])).length}`;
          if (now !== last) timeline.push(`${new Date().toISOString()} ${now}`);
          last = now;
          await new Promise((r) => setTimeout(r, 200));
        }
      })();
      await waitFor(`writes acknowledged before the ${label}`, () => writer.acked >= 30, 120_000, 200);
      const uids = (await serverPods()).map((p) => p.metadata.uid);
      const t = Date.now();
      const kubectlBefore = kubectlRuns.length;
      await replace();
      const pods = await allServing();
      const ms = Date.now() - t;
      const during = { kubectl: kubectlRuns.length - kubectlBefore, writes: writer.lines.filter((l) => l.t >= t && l.t <= t + ms && l.status < 300).length };
      // Every pod is new.
      expect(pods.filter((p) => uids.includes(p.metadata.uid))).toEqual([]);
      const before = writer.acked;
      await waitFor(`writes after the ${label}`, () => writer.acked >= before + 20, 60_000, 200);
      stop = true;
      await loop;
      await watchTimeline;
      await writer.stop();
      const failed = kubectlRuns.filter((r) => !r.ok || r.discoveryError);
      expect(kubectlRuns.length).toBeGreaterThan(10);
      expect(
        failed.map((r) => r.out),
        `kubectl commands that failed or printed discovery errors; meanwhile:\n${timeline.join('\n')}`,
      ).toEqual([]);
      expect(available.samples).toBeGreaterThan(0);
      expect(available.notAvailable, `APIServices not Available; meanwhile:\n${timeline.join('\n')}`).toEqual([]);
      const writes = await checkWrites(writer, prefix);
      const informer = await checkInformer(probe);
      return {
        pods,
        figures: `${label} in ${ms} ms: ${during.kubectl} kubectl commands and ${during.writes} acknowledged writes during it; kubectl ${kubectlRuns.length} commands in all, ${failed.length} failed; APIService samples ${available.samples}, not Available ${available.notAvailable.length}; writes ${JSON.stringify(writes)}; informer ${JSON.stringify(informer)}`,
      };
    } finally {
      stop = true;
      await probe.stop();
    }
  };

  it('a rolling restart of every replica while kubectl, a writer and an informer run: no kubectl command fails, no discovery error, the APIServices stay Available, only retriable write errors, the informer exact without a re-list', async () => {
    const { figures } = await replaceUnderLoad('rolling restart', 'roll', async () => {
      await k(['rollout', 'restart', `statefulset/${SERVICE_NAME}`, '-n', DEFAULT_NAMESPACE]);
      await k(['rollout', 'status', `statefulset/${SERVICE_NAME}`, '-n', DEFAULT_NAMESPACE, '--timeout=300s']);
    });
    log(figures);
  });

  it("helm upgrade of the HA release from the chart's previous version to this one, a new image tag and a changed flag, under the same load: no kubectl command fails, no discovery error, the APIServices stay Available, and every replica runs the new image and flag", async () => {
    const image = upgradeTag(images);
    const flag = '--max-concurrent-reconciles=3';
    const { pods, figures } = await replaceUnderLoad('helm upgrade', 'upgrade', async () => {
      // From the release helm install made in the set-up with the chart's previous version, to this one, as an
      // operator upgrades it (with this version's values file).
      const r = await helm(node, dir, ['upgrade', SERVICE_NAME, CHART, '-n', DEFAULT_NAMESPACE], {
        name: 'upgrade',
        valueFiles: [join(ROOT, HA_VALUES_FILE)],
        values: { ...haValues(), ...chartValues(images, { ref: image, moreArgs: [flag] }) },
      });
      expect(r.code, r.stderr).toBe(0);
      await k(['rollout', 'status', `statefulset/${SERVICE_NAME}`, '-n', DEFAULT_NAMESPACE, '--timeout=300s']);
    });
    for (const p of pods) {
      const spec = await json<{ spec: { containers: { image: string; args: string[] }[] } }>(['get', 'pod', '-n', DEFAULT_NAMESPACE, p.metadata.name]);
      expect(spec.spec.containers[0]?.image, p.metadata.name).toBe(image);
      expect(argsOf(p.metadata.name), p.metadata.name).toContain(flag);
    }
    const history = JSON.parse((await helm(node, dir, ['history', SERVICE_NAME, '-n', DEFAULT_NAMESPACE, '-o', 'json'])).stdout) as {
      revision: number;
      status: string;
    }[];
    expect(history.map((h) => `${h.revision} ${h.status}`)).toEqual(['1 superseded', '2 deployed']);
    log(`upgraded from the chart of ${previous.commit}`);
    log(figures);
  });
});
