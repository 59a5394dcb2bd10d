/**
 * `website-apiserver migrate` on a real node, the operator's way: this server runs as a pod of the Helm chart
 * (lmdb, one replica, chart-made TLS, from the offline image), serving a CRD file given as the chart's `crds` with
 * `crdAPIServices: false` (the CRD is still kube-apiserver's when the chart is installed); migrate reaches the pod
 * through `kubectl port-forward` to its Service (through the real kubelet) and takes --service and --ca-file from
 * APIService v1.extensions.example.com, which the chart made.
 *
 * The same CRD, objects, informer and kubectl loop as migration.test.ts (helpers-migration.ts): migrate → back (with
 * the node plane's etcd as --kube-etcd-servers) → migrate again, each checked as a client sees it; garbage collection
 * after the first move, namespace deletion after the last. MIGRATION_OBJECTS objects (default 2,000).
 *
 * The sandbox's network is private: kube-apiserver and its etcd are forwarded to 127.0.0.1 of the host
 * (node/forward.mjs), so kubectl, the informer, the migrate command and this file run on the host as an operator's do.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { DEFAULT_NAMESPACE, SERVICE_NAME } from '../../src/manifests/render.js';
import { Rest } from '../../src/migration/rest.js';
import { suffix } from './helpers-access.js';
import { listAll, MigrationRig, runMigrate } from './helpers-migration.js';
import { kubectlOk, waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { toHost } from './node/forward.mjs';
import { startRealNode, type RealNode } from './node/real-node.mjs';
import { chartValues, dataVolume, endNode, installChart, nodeImages, suiteUnavailable } from './node/suite.js';

const unavailable = suiteUnavailable('real-node migration');
const COUNT = Number(process.env['MIGRATION_OBJECTS'] ?? 2000);
const log = (m: string) => process.stderr.write(`[real-node migration] ${m}\n`);

describe.skipIf(!!unavailable)('migrate a live CRD to the chart-installed server on a real node, back, and again', () => {
  let node: RealNode | undefined;
  let dir = '';
  let forwards: { ports: Record<string, number>; close: () => void } | undefined;
  let portForward: ChildProcess | undefined;
  let kube: Rest | undefined;
  let rig: MigrationRig;
  let kubeconfig = '';
  let server = '';
  let etcdUrl = '';
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    const t0 = Date.now();
    const env = e2e();
    dir = mkdtempSync(join(tmpdir(), 'website-real-node-migration-'));
    const images = await nodeImages(log);
    node = await startRealNode({
      binDir: env.binDir,
      images: [images.pause, images.nginx, images.gitSync, images.websiteApiserver],
      pauseImage: images.pause.ref,
      dir: join(dir, 'node'),
      log,
    });
    timings['node'] = Date.now() - t0;
    forwards = await toHost(node, dir, [
      { name: 'api', host: '127.0.0.1', port: Number(new URL(node.state.server).port) },
      { name: 'etcd', host: '127.0.0.1', port: Number(new URL(node.state.etcdUrl).port) },
    ]);
    etcdUrl = `http://127.0.0.1:${forwards.ports['etcd']}`;
    const kc = YAML.parse(readFileSync(node.state.kubeconfig, 'utf8'));
    for (const c of kc.clusters) c.cluster.server = `https://127.0.0.1:${forwards.ports['api']}`;
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, YAML.stringify(kc), { mode: 0o600 });
    kube = new Rest(kc.clusters[0].cluster.server, {
      ca: Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64'),
      headers: { authorization: `Bearer ${kc.users[0].user.token}` },
    });
    rig = new MigrationRig({ suffix: suffix(), count: COUNT, kubeconfig, kube, etcdUrl, probeBin: join(env.binDir, 'informer-probe') });

    // The CRD and its objects first, as in a cluster that has them; then the chart, told to serve the same file.
    const crdFile = await rig.setUp(dir);
    timings['objects'] = Date.now() - t0 - timings['node'];
    await dataVolume(node, dir);
    await installChart(node, dir, SERVICE_NAME, DEFAULT_NAMESPACE, {
      values: { ...chartValues(images), crds: { 'widgets.yaml': readFileSync(crdFile, 'utf8') }, crdAPIServices: false },
    });
    await kubectlOk(kubeconfig, ['wait', '--for=condition=Available', 'apiservice/v1.extensions.example.com', '--timeout=120s']);
    // The chart made no APIService for the CRD: kube-apiserver still serves it (its own, automanaged).
    const own = JSON.parse(await kubectlOk(kubeconfig, ['get', 'apiservice', `v1.${rig.group}`, '-o', 'json'])) as { spec: { service?: unknown } };
    expect(own.spec.service).toBeUndefined();

    // As the migrate command's help says: kubectl port-forward to the Service (the kubelet streams it to the pod).
    portForward = spawn('kubectl', ['--kubeconfig', kubeconfig, 'port-forward', '-n', DEFAULT_NAMESPACE, `svc/${SERVICE_NAME}`, ':443'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let said = '';
    portForward.stderr?.on('data', (b: Buffer) => log(`[port-forward] ${b.toString().trim()}`));
    portForward.stdout?.on('data', (b: Buffer) => {
      said += b.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(said);
      if (m && !server) server = `https://127.0.0.1:${m[1]}`;
    });
    await waitFor('kubectl port-forward to listen', async () => server || undefined, 30_000, 100);
    await rig.startProbe();
    timings['server'] = Date.now() - t0 - timings['node'] - timings['objects'];
    log(`setup: ${JSON.stringify(timings)} ms, ${COUNT} objects, this server at ${server}`);
  }, 900_000);

  afterAll(async () => {
    rig?.probe?.stop();
    portForward?.kill('SIGTERM');
    forwards?.close();
    await kube?.close();
    await endNode(node, dir, log);
  }, 120_000);

  it('keeps every object, the informer in step and every kubectl command working, across migrate, --back and migrate', async () => {
    const migrate = (extra: string[]) => () => runMigrate(rig.crdName, ['--server', server, '--kubeconfig', kubeconfig, ...extra], log);
    const figures: { move: string; seconds: number; pausedSeconds: number; loopCommands: number }[] = [];
    const moves = [
      { name: 'here', run: migrate([]), given: () => rig.listKubeEtcd() },
      { name: 'back', run: migrate(['--back', '--kube-etcd-servers', etcdUrl]), given: () => listHere() },
      { name: 'here again', run: migrate([]), given: () => rig.listKubeEtcd() },
    ];
    for (const move of moves) {
      const r = await rig.checkMove(move);
      figures.push({ move: move.name, seconds: r.ms / 1000, pausedSeconds: r.pausedSeconds, loopCommands: r.loopCommands });
      if (move.name === 'here') await rig.garbageCollectionStillWorks();
    }
    await rig.namespaceDeletionStillWorks();
    log(`${COUNT} objects: ${JSON.stringify(figures)}`);
  }, 1_800_000);

  // listHere reads this server's objects through the port-forward, checked against the chart's CA as migrate checks it.
  async function listHere() {
    const own = JSON.parse(await kubectlOk(kubeconfig, ['get', 'apiservice', 'v1.extensions.example.com', '-o', 'json'])) as { spec: { caBundle: string } };
    const here = new Rest(server, {
      ca: Buffer.from(own.spec.caBundle, 'base64'),
      headers: { authorization: `Bearer ${YAML.parse(readFileSync(kubeconfig, 'utf8')).users[0].user.token}` },
      servername: `${SERVICE_NAME}.${DEFAULT_NAMESPACE}.svc`,
    });
    try {
      return await listAll(here, `/apis/${rig.group}/v1/${rig.plural}`, rig.group);
    } finally {
      await here.close();
    }
  }
});
