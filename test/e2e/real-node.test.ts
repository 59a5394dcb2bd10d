/**
 * The product on a real node: website-apiserver runs as a pod from the offline image, behind its Service, and
 * Websites are served by real nginx + git-sync pods from a git repository, through a real NodePort.
 *
 * Its own cluster, in a sandbox of its own (node/real-node.mjs → node/sandbox.mjs): etcd, kube-apiserver and
 * kube-controller-manager with the controllers a node needs, kube-scheduler, kubelet, kube-proxy, containerd + runc +
 * bridge CNI, a git daemon and a basic-auth git HTTP server, all in private network, mount and PID namespaces. The
 * shared e2e plane is not used here: it runs no node, and its tests write Deployment status by hand.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { DEFAULT_IMAGES } from '../../src/kinds/website/controllers/children.js';
import { INSTALL_FILE } from '../../src/manifests/deploy-files.js';
import { APISERVICE_NAME, APISERVICE_NAMES, DEFAULT_NAMESPACE, SERVICE_NAME } from '../../src/manifests/render.js';
import { waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { startRealNode, type RealNode } from './node/real-node.mjs';
import {
  argsOf,
  CHART,
  chartValues,
  dataVolume,
  endNode,
  helm,
  installChart,
  type NodeImages,
  nodeImages,
  suiteUnavailable,
  upgradeTag,
} from './node/suite.js';

const unavailable = suiteUnavailable('real-node');

/** The one-file install, and the image it names (its StatefulSet's one container). */
const INSTALL_PATH = resolve(import.meta.dirname, '../..', INSTALL_FILE);
const INSTALL_IMAGE = (() => {
  const docs = YAML.parseAllDocuments(readFileSync(INSTALL_PATH, 'utf8')).map(
    (d) => d.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: { image: string }[] } } } },
  );
  const image = docs.find((d) => d.kind === 'StatefulSet')?.spec?.template?.spec?.containers?.[0]?.image;
  if (!image) throw new Error(`${INSTALL_FILE} has no StatefulSet with a container image`);
  return image;
})();

const NS = 'sites';
const SYNC_SECONDS = 5;
const log = (m: string) => process.stderr.write(`[real-node] ${m}\n`);

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface WebsiteJson {
  metadata: { name: string; uid: string; generation: number };
  spec: { replicas: number; gitRepo: string; branch?: string };
  status?: { readyReplicas?: number; replicas?: number; nodePort?: number; observedGeneration?: number; conditions?: Condition[] };
}
interface PodJson {
  metadata: { name: string; uid: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: { containers: { name: string; image: string }[]; nodeName?: string };
  status: { phase: string; podIP?: string; conditions?: Condition[]; containerStatuses?: { name: string; ready: boolean; restartCount: number }[] };
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.invalid', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** publish writes index.html in a working copy and pushes it to the bare repository it was cloned from. */
function publish(work: string, branch: string, html: string, message: string) {
  git(work, 'checkout', '-q', '-B', branch);
  writeFileSync(join(work, 'index.html'), html);
  git(work, 'add', 'index.html');
  git(work, 'commit', '-q', '-m', message);
  git(work, 'push', '-q', '--force', 'origin', branch);
}

/** bareRepo makes a bare repository under root and a working copy of it, with index.html on main. */
function bareRepo(root: string, name: string, work: string, html: string) {
  const bare = join(root, name);
  mkdirSync(bare, { recursive: true });
  git(bare, 'init', '-q', '--bare');
  git(root, 'clone', '-q', bare, work);
  publish(work, 'main', html, 'first page');
  // The remote's HEAD names main, so a Website without spec.branch gets main.
  git(bare, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  return bare;
}

describe.skipIf(!!unavailable)('on a real node (kubelet, containerd, kube-proxy): the server as a pod, websites really served', () => {
  let node: RealNode;
  let dir: string;
  let work: string;
  let privateWork: string;
  let images: NodeImages;
  const timings: Record<string, number> = {};

  const k = async (args: string[], input?: string) => {
    const r = await node.kubectl(args, { input, timeoutMs: 60_000 });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const json = async <T>(args: string[]): Promise<T> => JSON.parse(await k([...args, '-o', 'json'])) as T;
  const apiService = (name: string) =>
    json<{ spec: { service?: { name: string; namespace: string } }; status?: { conditions?: Condition[] } }>(['get', 'apiservice', name]);
  const available = (o: { status?: { conditions?: Condition[] } }) => o.status?.conditions?.find((c) => c.type === 'Available' && c.status === 'True');
  const allAvailable = async () => {
    for (const name of APISERVICE_NAMES) if (!available(await apiService(name))) return false;
    return true;
  };
  const serverPods = async () =>
    (await json<{ items: PodJson[] }>(['get', 'pods', '-n', DEFAULT_NAMESPACE, '-l', 'app.kubernetes.io/name=website-apiserver'])).items.filter(
      (p) => !p.metadata.deletionTimestamp,
    );
  const website = (name: string) => json<WebsiteJson>(['get', 'website', name, '-n', NS]);
  const cond = (w: WebsiteJson, type: string) => w.status?.conditions?.find((c) => c.type === type);
  const podsOf = async (name: string) =>
    (await json<{ items: PodJson[] }>(['get', 'pods', '-n', NS, '-l', `app.kubernetes.io/instance=${name}`])).items.filter(
      (p) => !p.metadata.deletionTimestamp,
    );
  /** curl fetches a page inside the sandbox; undefined when the request fails. */
  const curl = async (url: string) => {
    const r = await node.exec('curl', ['-sS', '--max-time', '3', '-o', '-', '-w', '\n%{http_code}', url]);
    if (r.code !== 0) return undefined;
    const i = r.stdout.lastIndexOf('\n');
    return { status: Number(r.stdout.slice(i + 1)), body: r.stdout.slice(0, i) };
  };
  const page = async (w: WebsiteJson) => curl(`http://${node.state.nodeIp}:${w.status?.nodePort ?? 0}/`);
  // kube-proxy programs a new Service's NodePort a moment after its endpoints exist (its sync runs at most once a
  // second), so the first answer of a new Website is waited for, as a user would retry.
  const firstPage = (w: WebsiteJson) => waitFor(`an answer on NodePort ${w.status?.nodePort}`, () => page(w), 20_000, 250);
  const applyWebsite = (name: string, spec: Record<string, unknown>) =>
    k(
      ['apply', '-f', '-'],
      YAML.stringify({
        apiVersion: 'extensions.example.com/v1alpha1',
        kind: 'Website',
        metadata: { name, namespace: NS },
        spec,
      }),
    );
  const readyWebsite = (name: string, timeoutMs = 90_000) =>
    waitFor(
      `Website ${name} Ready=True with every replica ready`,
      async () => {
        const w = await website(name);
        const ready =
          cond(w, 'Ready')?.status === 'True' && w.status?.readyReplicas === w.spec.replicas && w.status?.observedGeneration === w.metadata.generation;
        return ready && w.status?.nodePort ? w : undefined;
      },
      timeoutMs,
      500,
    );
  const repoUrl = (name: string) => `git://${node.state.nodeIp}/${name}`;

  beforeAll(async () => {
    const t0 = Date.now();
    const env = e2e();
    dir = mkdtempSync(join(tmpdir(), 'website-real-node-'));
    images = await nodeImages(log);
    timings['images'] = Date.now() - t0;
    // More names for the offline images, as a registry mirror would serve them, so that deploy/install.yaml is applied
    // exactly as committed: the server image by the name that file gives it (and by the upgrade's tag), nginx and
    // git-sync by the server's default --nginx-image and --git-sync-image, which that file does not set.
    const all = [
      images.pause,
      { ...images.nginx, tags: [DEFAULT_IMAGES.nginx] },
      { ...images.gitSync, tags: [DEFAULT_IMAGES.gitSync] },
      { ...images.websiteApiserver, tags: [upgradeTag(images), INSTALL_IMAGE] },
    ];
    node = await startRealNode({ binDir: env.binDir, images: all, pauseImage: images.pause.ref, dir: join(dir, 'node'), log });
    timings['node'] = Date.now() - t0 - timings['images'];

    // The repositories: a public one over git://, a private one over HTTP with basic auth.
    work = join(dir, 'work');
    bareRepo(node.repoRoot, 'site.git', work, '<h1>version 1</h1>\n');
    privateWork = join(dir, 'private-work');
    bareRepo(join(node.dir, 'private-repos'), 'private.git', privateWork, '<h1>private site</h1>\n');

    await dataVolume(node, dir);
    // The chart as an operator installs it (its defaults: lmdb, one replica, TLS made by the chart), with the offline images.
    await installChart(node, dir, SERVICE_NAME, DEFAULT_NAMESPACE, { values: chartValues(images) });
    await waitFor('every APIService Available=True', allAvailable, 120_000, 500);
    timings['server'] = Date.now() - t0 - timings['images'] - timings['node'];
    await k(['create', 'namespace', NS]);
    // Started now so its ~30 s of failed syncs overlap the other tests.
    await applyWebsite('broken', { gitRepo: repoUrl('nope.git'), syncIntervalSeconds: SYNC_SECONDS });
    log(`setup: ${JSON.stringify(timings)} ms`);
  }, 600_000);

  afterAll(() => endNode(node, dir, log), 120_000);

  it('helm install of the chart runs website-apiserver as a pod from the offline image, behind its Service, and the APIServices are Available through it', async () => {
    const status = JSON.parse((await helm(node, dir, ['status', SERVICE_NAME, '-n', DEFAULT_NAMESPACE, '-o', 'json'])).stdout) as { info: { status: string } };
    expect(status.info.status).toBe('deployed');
    const [pod] = (await json<{ items: PodJson[] }>(['get', 'pods', '-n', DEFAULT_NAMESPACE, '-l', 'app.kubernetes.io/name=website-apiserver'])).items;
    expect(pod?.status.phase).toBe('Running');
    expect(pod?.spec.nodeName).toBe(node.state.nodeName);
    expect(pod?.spec.containers[0]?.image).toMatch(/^e2e\.local\/website-apiserver:/);
    const pvc = await json<{ status: { phase: string } }>(['get', 'pvc', '-n', DEFAULT_NAMESPACE, `data-${SERVICE_NAME}-0`]);
    expect(pvc.status.phase).toBe('Bound');
    const svc = await json<{ spec: { type: string; clusterIP: string } }>(['get', 'service', '-n', DEFAULT_NAMESPACE, SERVICE_NAME]);
    expect(svc.spec.type).toBe('ClusterIP');
    const slices = await json<{ items: { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }[] }>([
      'get',
      'endpointslices',
      '-n',
      DEFAULT_NAMESPACE,
      '-l',
      `kubernetes.io/service-name=${SERVICE_NAME}`,
    ]);
    const addresses = slices.items.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready).flatMap((e) => e.addresses));
    expect(addresses).toEqual([pod?.status.podIP]);
    for (const name of APISERVICE_NAMES) {
      const o = await apiService(name);
      expect(o.spec.service, name).toMatchObject({ name: SERVICE_NAME, namespace: DEFAULT_NAMESPACE });
      expect(available(o), name).toMatchObject({ status: 'True', reason: 'Passed' });
    }
    const list = await node.kubectl(['get', 'websites', '-A']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^NAMESPACE\s+NAME\s+GIT-REPO\s+READY/);
  });

  it("a Website turns Ready with every replica ready, and its NodePort serves the repository's index.html", async () => {
    const t = Date.now();
    await applyWebsite('kubia', { gitRepo: repoUrl('site.git'), syncIntervalSeconds: SYNC_SECONDS });
    const w = await readyWebsite('kubia');
    timings['firstReady'] = Date.now() - t;
    expect(w.status?.readyReplicas).toBe(1);
    expect(cond(w, 'Degraded')?.status).toBe('False');
    expect(await firstPage(w)).toEqual({ status: 200, body: '<h1>version 1</h1>\n' });
    const pods = await podsOf('kubia');
    expect(pods.map((p) => p.status.phase)).toEqual(['Running']);
    expect(pods[0]?.spec.containers.map((c) => c.name).sort()).toEqual(['git-sync', 'nginx']);
  });

  it('serves a newly pushed commit within syncIntervalSeconds plus a few seconds', async () => {
    const w = await website('kubia');
    publish(work, 'main', '<h1>version 2</h1>\n', 'second page');
    const t = Date.now();
    await waitFor('version 2 to be served', async () => (await page(w))?.body.includes('version 2'), (SYNC_SECONDS + 10) * 1000, 250);
    timings['pushToServed'] = Date.now() - t;
    expect(timings['pushToServed']).toBeLessThan((SYNC_SECONDS + 10) * 1000);
  });

  it('kubectl scale ws --replicas=2 gives two ready pods behind the NodePort', async () => {
    await k(['scale', 'ws', 'kubia', '-n', NS, '--replicas=2']);
    const w = await readyWebsite('kubia');
    expect(w.status?.readyReplicas).toBe(2);
    const pods = await podsOf('kubia');
    expect(pods).toHaveLength(2);
    for (const p of pods) expect(p.status.conditions?.find((c) => c.type === 'Ready')?.status, p.metadata.name).toBe('True');
    expect((await page(w))?.body).toContain('version 2');
  });

  it('changing spec.branch serves that branch', async () => {
    publish(work, 'feature', '<h1>feature branch</h1>\n', 'feature page');
    await k(['patch', 'ws', 'kubia', '-n', NS, '--type', 'merge', '-p', '{"spec":{"git":{"branch":"feature"}}}']);
    const w = await readyWebsite('kubia');
    await waitFor('the feature branch to be served', async () => (await page(w))?.body.includes('feature branch'), 60_000, 500);
  });

  it('a private repository over HTTP with basic auth is served with credentials from a Secret that the Website references', async () => {
    // The server refuses anonymous clones: the credential is what makes it work.
    const anonymous = await curl(`${node.gitHttp.url('private.git')}/info/refs?service=git-upload-pack`);
    expect(anonymous?.status).toBe(401);
    await k([
      'create',
      'secret',
      'generic',
      'site-creds',
      '-n',
      NS,
      '--type=kubernetes.io/basic-auth',
      `--from-literal=username=${node.gitHttp.user}`,
      `--from-literal=password=${node.gitHttp.password}`,
    ]);
    await applyWebsite('private', { gitRepo: node.gitHttp.url('private.git'), syncIntervalSeconds: SYNC_SECONDS, secretRef: { name: 'site-creds' } });
    const w = await readyWebsite('private');
    expect(await firstPage(w)).toEqual({ status: 200, body: '<h1>private site</h1>\n' });
  });

  it("a repository that does not exist: Degraded=True with git-sync's reason while the pod keeps running; fixing spec.gitRepo recovers", async () => {
    const degraded = await waitFor(
      'Degraded=True on the broken Website',
      async () => {
        const c = cond(await website('broken'), 'Degraded');
        return c?.status === 'True' ? c : undefined;
      },
      120_000,
      1000,
    );
    expect(degraded.reason).toBe('GitSyncFailed');
    log(`Degraded message: ${degraded.message}`);
    expect(degraded.message).toMatch(/nope\.git/);
    const w = await website('broken');
    expect(cond(w, 'Ready')?.status).toBe('False');
    const pods = await podsOf('broken');
    expect(pods).toHaveLength(1);
    expect(pods[0]?.status.phase).toBe('Running');
    expect(pods[0]?.status.containerStatuses?.find((c) => c.name === 'nginx')?.restartCount).toBe(0);

    await k(['patch', 'ws', 'broken', '-n', NS, '--type', 'merge', '-p', JSON.stringify({ spec: { git: { repository: repoUrl('site.git') } } })]);
    const fixed = await readyWebsite('broken', 120_000);
    expect(cond(fixed, 'Degraded')?.status).toBe('False');
    expect((await firstPage(fixed))?.body).toContain('version 2');
  });

  it("deleting the server's pod: the StatefulSet brings it back on the same volume, every Website is still there, and the reconciler resumes without duplicate children", async () => {
    const before = (await json<{ items: PodJson[] }>(['get', 'pods', '-n', DEFAULT_NAMESPACE, '-l', 'app.kubernetes.io/name=website-apiserver'])).items[0];
    const names = (await json<{ items: WebsiteJson[] }>(['get', 'websites', '-n', NS])).items.map((w) => `${w.metadata.name}/${w.metadata.uid}`).sort();
    expect(names).toHaveLength(3);
    const t = Date.now();
    await k(['delete', 'pod', '-n', DEFAULT_NAMESPACE, before?.metadata.name ?? '', '--wait=false']);
    await waitFor(
      'a new server pod, Ready',
      async () => {
        const p = (await json<{ items: PodJson[] }>(['get', 'pods', '-n', DEFAULT_NAMESPACE, '-l', 'app.kubernetes.io/name=website-apiserver'])).items[0];
        return p && p.metadata.uid !== before?.metadata.uid && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      },
      120_000,
      500,
    );
    await waitFor('websites to be listed again', async () => (await node.kubectl(['get', 'websites', '-n', NS, '-o', 'name'])).code === 0, 60_000, 500);
    timings['serverPodBack'] = Date.now() - t;
    const after = (await json<{ items: WebsiteJson[] }>(['get', 'websites', '-n', NS])).items.map((w) => `${w.metadata.name}/${w.metadata.uid}`).sort();
    expect(after).toEqual(names);
    // The reconciler works again: a spec change is rolled out by the new pod.
    await k(['scale', 'ws', 'kubia', '-n', NS, '--replicas=1']);
    const w = await readyWebsite('kubia', 120_000);
    expect(w.status?.readyReplicas).toBe(1);
    await waitFor('one kubia pod', async () => (await podsOf('kubia')).length === 1, 60_000, 500);
    const deployments = await json<{ items: { metadata: { name: string } }[] }>([
      'get',
      'deployments',
      '-n',
      NS,
      '-l',
      'app.kubernetes.io/managed-by=website-apiserver',
    ]);
    const services = await json<{ items: { metadata: { name: string } }[] }>([
      'get',
      'services',
      '-n',
      NS,
      '-l',
      'app.kubernetes.io/managed-by=website-apiserver',
    ]);
    const expected = ['broken-website', 'kubia-website', 'private-website'];
    expect(deployments.items.map((d) => d.metadata.name).sort()).toEqual(expected);
    expect(services.items.map((s) => s.metadata.name).sort()).toEqual(expected);
  });

  it('helm upgrade to a new image tag and a changed flag: the one lmdb replica is replaced on its volume, the APIServices turn Available again with every Website kept, the new pod runs the new image and flag, and what clients saw meanwhile is only the aggregator answering unavailable', async () => {
    const [before] = await serverPods();
    const pvcUid = (await json<{ metadata: { uid: string } }>(['get', 'pvc', '-n', DEFAULT_NAMESPACE, `data-${SERVICE_NAME}-0`])).metadata.uid;
    const names = (await json<{ items: WebsiteJson[] }>(['get', 'websites', '-n', NS])).items.map((w) => `${w.metadata.name}/${w.metadata.uid}`).sort();
    const image = upgradeTag(images);
    const flag = '--max-concurrent-reconciles=3';
    const caBundles = async () =>
      Promise.all(APISERVICE_NAMES.map(async (n) => (await json<{ spec: { caBundle?: string } }>(['get', 'apiservice', n])).spec.caBundle));
    const caBefore = await caBundles();
    // Sampled throughout, as a user would see it: the APIService's Available condition, and kubectl get with an
    // empty discovery cache each time (so discovery goes through the aggregator too). Every sample is kept.
    const samples: { t: number; available: string; kubectl: string }[] = [];
    const cacheRoot = mkdtempSync(join(dir, 'kubectl-cache-'));
    let stop = false;
    const poll = (async () => {
      for (let i = 0; !stop; i++) {
        const a = await node.kubectl([
          'get',
          'apiservice',
          APISERVICE_NAME,
          '-o',
          'jsonpath={.status.conditions[?(@.type=="Available")].status}/{.status.conditions[?(@.type=="Available")].reason}',
        ]);
        const cache = join(cacheRoot, String(i));
        const g = await node.kubectl(['--cache-dir', cache, 'get', 'websites', '-n', NS, '-o', 'name'], { timeoutMs: 60_000 });
        rmSync(cache, { recursive: true, force: true });
        samples.push({
          t: Date.now(),
          available: a.code === 0 ? a.stdout : `kubectl failed: ${a.stderr.trim()}`,
          kubectl: g.code === 0 && g.stdout.includes('website') ? 'ok' : (g.stderr.trim().split('\n').pop() ?? `exit ${g.code}`),
        });
      }
    })();
    let ms = 0;
    let t = 0;
    try {
      await waitFor('a sample before the upgrade', () => samples.length >= 1, 30_000, 100);
      t = Date.now();
      // From the release helm install made in the set-up (the previous revision), as an operator upgrades it.
      const r = await helm(node, dir, ['upgrade', SERVICE_NAME, CHART, '-n', DEFAULT_NAMESPACE], {
        name: 'upgrade',
        values: chartValues(images, { ref: image, moreArgs: [flag] }),
      });
      expect(r.code, r.stderr).toBe(0);
      await waitFor(
        'the new server pod Ready, every APIService Available and kubectl get websites answering',
        async () => {
          const [p] = await serverPods();
          if (!p || p.metadata.uid === before?.metadata.uid || !p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return false;
          if (!(await allAvailable())) return false;
          const last = samples.at(-1);
          return last !== undefined && last.t > Date.now() - 5_000 && last.kubectl === 'ok' && last.available.startsWith('True/');
        },
        180_000,
        250,
      );
      ms = Date.now() - t;
    } finally {
      stop = true;
      await poll;
    }
    const during = samples.filter((x) => x.t >= t);
    const failed = during.filter((x) => x.kubectl !== 'ok');
    const unavailable = during.filter((x) => !x.available.startsWith('True/'));
    // One lmdb replica is one process on one volume: while it is replaced the API is down (the aggregator answers 503,
    // or discovery leaves the group out). Nothing else may show, nothing of ours.
    for (const x of failed) expect(x.kubectl).toMatch(/the server is currently unable to handle the request|doesn't have a resource type "websites"|\b503\b/);
    const [after] = await serverPods();
    // Where the outage went, from the new pod's own timestamps (whole seconds): the old pod gone and this one created,
    // its container started, Ready.
    const stamps = await json<{
      metadata: { creationTimestamp: string };
      status: { conditions?: { type: string; lastTransitionTime: string }[]; containerStatuses?: { state: { running?: { startedAt: string } } }[] };
    }>(['get', 'pod', '-n', DEFAULT_NAMESPACE, after?.metadata.name ?? '']);
    const sinceUpgrade = (iso?: string) => (iso ? Math.round((Date.parse(iso) - t) / 100) / 10 : undefined);
    const phases = {
      created: sinceUpgrade(stamps.metadata.creationTimestamp),
      started: sinceUpgrade(stamps.status.containerStatuses?.[0]?.state.running?.startedAt),
      ready: sinceUpgrade(stamps.status.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime),
    };
    expect(after?.spec.containers[0]?.image).toBe(image);
    expect(argsOf(after?.metadata.name ?? '')).toContain(flag);
    // The new process kept its own CA and admin certificate from the claim (--cert-dir /data/certs) instead of making
    // them again, and says how long it took from its start to listening.
    const serverLog = (await k(['logs', '-n', DEFAULT_NAMESPACE, after?.metadata.name ?? ''])).split('\n').flatMap((line) => {
      try {
        return [JSON.parse(line) as { msg?: string; generated?: string[]; startupMs?: number }];
      } catch {
        return [];
      }
    });
    expect(serverLog.filter((l) => l.msg === 'certificates written').flatMap((l) => l.generated ?? [])).not.toContain('ca');
    const startupMs = serverLog.find((l) => l.msg === 'serving')?.startupMs;
    expect(startupMs).toBeGreaterThan(0);
    expect((await json<{ metadata: { uid: string } }>(['get', 'pvc', '-n', DEFAULT_NAMESPACE, `data-${SERVICE_NAME}-0`])).metadata.uid).toBe(pvcUid);
    const kept = (await json<{ items: WebsiteJson[] }>(['get', 'websites', '-n', NS])).items.map((w) => `${w.metadata.name}/${w.metadata.uid}`).sort();
    expect(kept).toEqual(names);
    // The chart read its CA and serving certificate back from the cluster instead of making new ones.
    expect(caBefore.every((b) => b && b.length > 0)).toBe(true);
    expect(await caBundles()).toEqual(caBefore);
    const history = JSON.parse((await helm(node, dir, ['history', SERVICE_NAME, '-n', DEFAULT_NAMESPACE, '-o', 'json'])).stdout) as {
      revision: number;
      status: string;
    }[];
    expect(history.map((h) => `${h.revision} ${h.status}`)).toEqual(['1 superseded', '2 deployed']);
    const span = (xs: { t: number }[]) => (xs.length ? (xs.at(-1)?.t ?? 0) - (xs[0]?.t ?? 0) : 0);
    timings['helmUpgrade'] = ms;
    log(
      `helm upgrade (lmdb, 1 replica) in ${ms} ms (new pod, s after the upgrade began: ${JSON.stringify(phases)}; its process listening ${startupMs} ms after it started): ${during.length} samples; kubectl get failed in ${failed.length} (first to last failure ${span(failed)} ms), APIService not Available in ${unavailable.length} (${span(unavailable)} ms); kubectl errors ${JSON.stringify([...new Set(failed.map((x) => x.kubectl))])}; Available values ${JSON.stringify([...new Set(during.map((x) => x.available))])}`,
    );
  });

  it('kubectl delete ws removes the pods, the Deployment and the Service', async () => {
    const r = await node.kubectl(['delete', 'ws', 'kubia', '-n', NS, '--timeout=90s']);
    expect(r.code, r.stderr).toBe(0);
    await waitFor("kubia's pods to be gone", async () => (await podsOf('kubia')).length === 0, 90_000, 500);
    expect((await node.kubectl(['get', 'deployment', 'kubia-website', '-n', NS])).stderr).toMatch(/NotFound|not found/);
    expect((await node.kubectl(['get', 'service', 'kubia-website', '-n', NS])).stderr).toMatch(/NotFound|not found/);
  });

  it("helm uninstall, then kubectl apply -f deploy/install.yaml as committed: the server makes its own serving certificate in a Secret and sets its APIServices' caBundle to it, the APIServices turn Available, the Websites on the claim are all there, and the reconciler serves a new one", async () => {
    const pvcUid = (await json<{ metadata: { uid: string } }>(['get', 'pvc', '-n', DEFAULT_NAMESPACE, `data-${SERVICE_NAME}-0`])).metadata.uid;
    const names = (await json<{ items: WebsiteJson[] }>(['get', 'websites', '-n', NS])).items.map((w) => `${w.metadata.name}/${w.metadata.uid}`).sort();
    expect(names.length).toBeGreaterThan(0);
    const t = Date.now();
    const u = await helm(node, dir, ['uninstall', SERVICE_NAME, '-n', DEFAULT_NAMESPACE, '--wait', '--timeout', '120s']);
    expect(u.code, u.stderr).toBe(0);
    await waitFor("the chart's pod to be gone", async () => (await serverPods()).length === 0, 120_000, 500);
    for (const name of APISERVICE_NAMES) expect((await node.kubectl(['get', 'apiservice', name])).stderr).toMatch(/NotFound|not found/);
    timings['uninstall'] = Date.now() - t;

    const t1 = Date.now();
    const a = await node.kubectl(['apply', '-f', INSTALL_PATH], { timeoutMs: 60_000 });
    expect(a.code, a.stderr).toBe(0);
    await waitFor('every APIService of the one-file install Available=True', allAvailable, 180_000, 500);
    timings['installYamlAvailable'] = Date.now() - t1;

    const [pod] = await serverPods();
    expect(pod?.spec.containers[0]?.image).toBe(INSTALL_IMAGE);
    expect(argsOf(pod?.metadata.name ?? '')).toContain('--self-managed-tls=website-apiserver-tls');
    // Real TLS: the Secret the server made, whose CA is every APIService's caBundle, and never insecureSkipTLSVerify.
    const secret = await json<{ type: string; data: Record<string, string> }>(['get', 'secret', '-n', DEFAULT_NAMESPACE, 'website-apiserver-tls']);
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(Object.keys(secret.data).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    for (const name of APISERVICE_NAMES) {
      const o = await json<{ spec: { caBundle?: string; insecureSkipTLSVerify?: boolean; service?: { name: string } } }>(['get', 'apiservice', name]);
      expect(o.spec.caBundle, name).toBe(secret.data['ca.crt']);
      expect(o.spec.insecureSkipTLSVerify ?? false, name).toBe(false);
      expect(o.spec.service?.name, name).toBe(SERVICE_NAME);
    }
    // The same claim, so the same store: every Website with its uid.
    expect((await json<{ metadata: { uid: string } }>(['get', 'pvc', '-n', DEFAULT_NAMESPACE, `data-${SERVICE_NAME}-0`])).metadata.uid).toBe(pvcUid);
    const after = (await json<{ items: WebsiteJson[] }>(['get', 'websites', '-n', NS])).items.map((w) => `${w.metadata.name}/${w.metadata.uid}`).sort();
    expect(after).toEqual(names);
    // The reconciler of this install serves a new Website from the repository.
    await applyWebsite('again', { gitRepo: repoUrl('site.git'), syncIntervalSeconds: SYNC_SECONDS });
    const w = await readyWebsite('again', 120_000).catch(async (e: unknown) => {
      // What the server and the Website said, to tell a reconciler that never ran from one that failed.
      const [p] = await serverPods();
      log(`server log tail: ${(await node.kubectl(['logs', '-n', DEFAULT_NAMESPACE, p?.metadata.name ?? '', '--tail=40'])).stdout}`);
      log(`Website again: ${(await node.kubectl(['get', 'website', 'again', '-n', NS, '-o', 'yaml'])).stdout}`);
      throw e;
    });
    const served = await firstPage(w);
    expect(served?.status).toBe(200);
    expect(served?.body).toMatch(/<h1>version/);
    timings['installYamlWebsiteServed'] = Date.now() - t1;
    log(
      `deploy/install.yaml after helm uninstall: uninstall ${timings['uninstall']} ms, APIServices Available ${timings['installYamlAvailable']} ms after kubectl apply, a new Website served ${timings['installYamlWebsiteServed']} ms after it`,
    );
    log(`timings (ms): ${JSON.stringify(timings)}`);
  });
});
