/**
 * @module bench/targets
 * The servers the benchmark measures, each started fresh in its own directory and reached directly on its own
 * port with a client certificate:
 * - ours: `node dist/main.js`, standalone (lmdb in a temp dir, its own CA and admin certificate);
 * - crd: kube-apiserver + etcd (fsync on, as in production) from the e2e plane, serving an equivalent CRD to a
 *   system:masters client certificate (so neither authorization nor priority-and-fairness queues apply);
 * - ceiling: raw fastify + lmdb doing only the I/O every server must do (ceiling-server.mjs);
 * - the aggregated pair, both reached at one kube-apiserver's URL (startAggregatedPlane): ours-aggregated, our
 *   server delegated behind an APIService as users reach it, and crd-aggregated, the same CRD under another group.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import forge from 'node-forge';
import { request, Agent } from 'undici';
import { certs, manifests } from './dist.mjs';
import { freePorts, launch, processMemory, startControlPlane, terminate } from '../e2e/plane.mjs';
import { websiteCrd } from './crd.mjs';
import { wrapInCgroup } from './cgroup.mjs';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const sleep = (/** @type {number} */ ms) => new Promise((r) => setTimeout(r, ms));

/**
 * @typedef {object} Target
 * @property {string} id
 * @property {string} label
 * @property {string} url
 * @property {string} [group] the API group the kind is served under, when not ours (the CRD twin)
 * @property {import('./client.mjs').Tls} tls
 * @property {() => Record<string, import('../e2e/plane.mjs').ProcessMemory | undefined>} memory resident memory of each server process
 * @property {() => number} diskMiB space its data directory takes on disk (allocated blocks, as du counts)
 * @property {(namespaces: string[]) => Promise<void>} prepare makes the namespaces usable
 * @property {() => Promise<number>} restart stops the server gracefully and starts it again; ms from spawn to /readyz 200
 * @property {() => Promise<void>} stop
 * @property {() => number | undefined} [pid] the server's process, for targets that are one Node.js process
 * @property {() => Record<string, number | undefined>} [pids] the server's processes by name (CPU time is read from them)
 * @property {{url: string, tls: import('./client.mjs').Tls}} [direct] our own port behind the aggregator, with our CA's admin
 * @property {string} [dataDir] its data directory
 * @property {import('./cgroup.mjs').MemoryCgroup} [cgroup] the memory cgroup the server runs in (the scale mode's --memory-limit)
 */

/**
 * diskMiB is the space a directory tree takes on disk (allocated blocks, as `du` counts them).
 * @param {string} dir
 */
export function diskMiB(dir) {
  let bytes = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) bytes += statSync(join(e.parentPath, e.name)).blocks * 512;
  }
  return Math.round((bytes / 2 ** 20) * 10) / 10;
}

/**
 * waitReady polls GET /readyz every 10 ms until 200; resolves with the ms since `since`.
 * @param {string} url
 * @param {import('./client.mjs').Tls} tls
 * @param {number} since Date.now() at spawn
 * @param {() => boolean} alive
 * @param {string} what
 * @param {string} [servername] a name the serving certificate holds
 */
async function waitReady(url, tls, since, alive, what, servername = 'localhost') {
  const agent = new Agent({ connect: { ca: tls.ca, cert: tls.cert, key: tls.key, servername } });
  try {
    for (;;) {
      try {
        const r = await request(`${url}/readyz`, { dispatcher: agent });
        await r.body.text();
        if (r.statusCode === 200) return Date.now() - since;
      } catch {
        // not listening yet
      }
      if (!alive()) throw new Error(`${what} exited before it was ready`);
      if (Date.now() - since > 300_000) throw new Error(`${what} not ready after 300 s`);
      await sleep(10);
    }
  } finally {
    await agent.close();
  }
}

/**
 * spawnNode starts a Node.js script with its output appended to logFile, inside `cgroup` when given. BENCH_NODE_OPTIONS
 * adds flags to the server (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it).
 * @param {string[]} args
 * @param {string} logFile
 * @param {import('./cgroup.mjs').MemoryCgroup} [cgroup]
 */
function spawnNode(args, logFile, cgroup) {
  const extra = (process.env.BENCH_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  return cgroup ? launch(...wrapInCgroup(cgroup, process.execPath, [...extra, ...args]), logFile) : launch(process.execPath, [...extra, ...args], logFile);
}

/** @typedef {ReturnType<typeof launch>} NodeServer */

// A server flushing 100k objects' worth of lmdb may take a while to stop; only then is it killed.
const stopNode = (/** @type {NodeServer} */ s) => terminate(s, 20_000);

/**
 * startOurs starts our server standalone in dir/ (data, certs, log); with `variant.cgroup`, in that memory cgroup
 * (restarts too).
 * @param {string} dir
 * @param {{id: string, label: string, args: string[], dataDir: string, cgroup?: import('./cgroup.mjs').MemoryCgroup}} [variant]
 * @returns {Promise<Target>}
 */
export async function startOurs(dir, variant = { id: 'ours', label: 'website-apiserver (lmdb)', args: [], dataDir: '' }) {
  mkdirSync(dir, { recursive: true });
  const [port] = await freePorts(1);
  const url = `https://127.0.0.1:${port}`;
  const certDir = join(dir, 'certs');
  const args = [
    // BENCH_OURS_MAIN runs another build (an A/B comparison of a change) in the same harness.
    process.env.BENCH_OURS_MAIN ?? join(REPO, 'dist', 'main.js'),
    `--port=${port}`,
    `--data-dir=${join(dir, 'data')}`,
    `--cert-dir=${certDir}`,
    '--log-level=warn',
    ...variant.args,
  ];
  const logFile = join(dir, 'server.log');
  const server = spawnNode(args, logFile, variant.cgroup);
  // The first start generates the CA and certificates; the kubeconfig is written last.
  for (const t = Date.now(); !existsSync(join(certDir, 'kubeconfig')); await sleep(20)) {
    if (server.proc.exitCode !== null || Date.now() - t > 60_000) throw new Error(`our server wrote no certificates; see ${logFile}`);
  }
  const tls = {
    ca: readFileSync(join(certDir, 'ca.crt'), 'utf8'),
    cert: readFileSync(join(certDir, 'admin.crt'), 'utf8'),
    key: readFileSync(join(certDir, 'admin.key'), 'utf8'),
  };
  // Standalone: no namespace objects to create.
  return nodeTarget(
    { id: variant.id, label: variant.label, url, tls, args, logFile, dataDir: variant.dataDir || join(dir, 'data'), cgroup: variant.cgroup },
    server,
  );
}

/**
 * startOursEtcd starts an etcd of its own (one member, fsync on: the CRD baseline's durability) and our server on it
 * (`--storage-backend=etcd`): the like-for-like comparison with the CRD, whose objects live in etcd too.
 * @param {string} dir
 * @param {string} binDir the e2e build's binaries (etcd)
 * @param {string[]} [extraArgs] more flags for our server
 * @returns {Promise<Target>}
 */
export async function startOursEtcd(dir, binDir, extraArgs = []) {
  mkdirSync(dir, { recursive: true });
  const [client = 0, peer = 0] = await freePorts(2);
  const etcdData = join(dir, 'etcd-data');
  const etcd = launch(
    join(binDir, 'etcd'),
    [
      '--name=bench',
      `--data-dir=${etcdData}`,
      `--listen-client-urls=http://127.0.0.1:${client}`,
      `--advertise-client-urls=http://127.0.0.1:${client}`,
      `--listen-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
      `--initial-cluster=bench=http://127.0.0.1:${peer}`,
      '--log-level=warn',
    ],
    join(dir, 'etcd.log'),
  );
  try {
    for (let t = Date.now(); ; await sleep(100)) {
      const ok = await fetch(`http://127.0.0.1:${client}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() - t > 30_000) throw new Error(`etcd did not start; see ${join(dir, 'etcd.log')}`);
    }
    const ours = await startOurs(join(dir, 'ours'), {
      id: 'ours-etcd',
      label: 'website-apiserver on etcd (one member, fsync on)',
      args: ['--storage-backend=etcd', `--etcd-servers=http://127.0.0.1:${client}`, ...extraArgs],
      dataDir: etcdData,
    });
    return {
      ...ours,
      memory: () => ({ ...ours.memory(), etcd: processMemory(etcd.proc.pid) }),
      pids: () => ({ server: ours.pid?.(), etcd: etcd.proc.pid }),
      stop: async () => {
        await ours.stop();
        await terminate(etcd);
      },
    };
  } catch (e) {
    await terminate(etcd);
    throw e;
  }
}

/**
 * nodeTarget is a Target for a Node.js server already spawned with `args`: ready once /readyz answers, restarted
 * with the same arguments (and in the same memory cgroup, if any).
 * @param {{id: string, label: string, url: string, tls: import('./client.mjs').Tls, args: string[], logFile: string, dataDir: string, servername?: string, cgroup?: import('./cgroup.mjs').MemoryCgroup}} o
 * @param {NodeServer} first
 * @returns {Promise<Target>}
 */
async function nodeTarget(o, first) {
  let server = first;
  const alive = () => server.proc.exitCode === null;
  await waitReady(o.url, o.tls, Date.now(), alive, o.id, o.servername);
  return {
    id: o.id,
    label: o.label,
    url: o.url,
    tls: o.tls,
    memory: () => ({ server: processMemory(server.proc.pid) }),
    pid: () => server.proc.pid,
    pids: () => ({ server: server.proc.pid }),
    dataDir: o.dataDir,
    ...(o.cgroup ? { cgroup: o.cgroup } : {}),
    diskMiB: () => diskMiB(o.dataDir),
    prepare: async () => {},
    restart: async () => {
      await stopNode(server);
      const t = Date.now();
      server = spawnNode(o.args, o.logFile, o.cgroup);
      return waitReady(o.url, o.tls, t, alive, o.id, o.servername);
    },
    stop: () => stopNode(server),
  };
}

/**
 * issueTls makes a CA, a serving certificate for 127.0.0.1/localhost and a client certificate.
 * @param {string} clientCn
 */
function issueTls(clientCn) {
  const now = new Date();
  const year = new Date(now.getTime() + 365 * 86_400_000);
  const ca = certs.createCa(now, 'bench-ca', 365);
  const serving = certs.createLeaf(ca.signer, now, year, {
    subject: [{ shortName: 'CN', value: 'localhost' }],
    extKeyUsage: { serverAuth: true },
    sans: [
      { type: 'DNS', value: 'localhost' },
      { type: 'IP', value: '127.0.0.1' },
    ],
  });
  const client = certs.createLeaf(ca.signer, now, year, { subject: [{ shortName: 'CN', value: clientCn }], extKeyUsage: { clientAuth: true } });
  return { ca, serving, client };
}

/**
 * startCeiling starts the raw fastify + lmdb server in dir/.
 * @param {string} dir
 * @returns {Promise<Target>}
 */
export async function startCeiling(dir) {
  mkdirSync(dir, { recursive: true });
  const { ca, serving, client } = issueTls('bench');
  const f = (/** @type {string} */ n) => join(dir, n);
  writeFileSync(f('ca.crt'), ca.certPem);
  writeFileSync(f('tls.crt'), serving.certPem);
  writeFileSync(f('tls.key'), serving.keyPem, { mode: 0o600 });
  const [port] = await freePorts(1);
  const url = `https://127.0.0.1:${port}`;
  const args = [
    join(REPO, 'test', 'bench', 'ceiling-server.mjs'),
    `--port=${port}`,
    `--data-dir=${f('data')}`,
    `--tls-cert=${f('tls.crt')}`,
    `--tls-key=${f('tls.key')}`,
    `--client-ca=${f('ca.crt')}`,
  ];
  const logFile = f('server.log');
  const tls = { ca: ca.certPem, cert: client.certPem, key: client.keyPem };
  return nodeTarget({ id: 'ceiling', label: 'raw fastify + lmdb', url, tls, args, logFile, dataDir: f('data') }, spawnNode(args, logFile));
}

/**
 * mastersClient issues a system:masters client certificate from the plane's CA (so neither authorization nor
 * priority-and-fairness queues apply) and returns it with a small JSON caller for setup requests.
 * @param {import('../e2e/plane.mjs').ControlPlane} plane
 */
function mastersClient(plane) {
  const caPem = readFileSync(plane.caFile, 'utf8');
  const signer = { cert: forge.pki.certificateFromPem(caPem), key: forge.pki.privateKeyFromPem(readFileSync(plane.caKeyFile, 'utf8')) };
  const now = new Date();
  const client = certs.createLeaf(signer, now, new Date(now.getTime() + 86_400_000), {
    subject: [
      { shortName: 'CN', value: 'bench-admin' },
      { shortName: 'O', value: 'system:masters' },
    ],
    extKeyUsage: { clientAuth: true },
  });
  const tls = { ca: caPem, cert: client.certPem, key: client.keyPem };
  const agent = new Agent({ connect: { ca: tls.ca, cert: tls.cert, key: tls.key } });
  /** @param {'GET' | 'POST' | 'DELETE'} method @param {string} path @param {unknown} [body] */
  const call = async (method, path, body) => {
    const r = await request(`${plane.server}${path}`, {
      method,
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.statusCode, body: await r.body.text() };
  };
  /** @param {string[]} namespaces */
  const createNamespaces = async (namespaces) => {
    for (const name of namespaces) {
      const r = await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      if (r.status !== 201 && r.status !== 409) throw new Error(`creating namespace ${name}: HTTP ${r.status} ${r.body}`);
    }
  };
  return { tls, call, createNamespaces, close: () => agent.close() };
}

/**
 * installCrd creates a CRD (by default the Website CRD in `group`) and waits until kube-apiserver serves it.
 * @param {ReturnType<typeof mastersClient>} admin
 * @param {string} [group]
 * @param {Record<string, any>} [crd]
 */
async function installCrd(admin, group, crd = websiteCrd(group)) {
  const created = await admin.call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  if (created.status !== 201) throw new Error(`creating the CRD ${crd.metadata?.name}: HTTP ${created.status} ${created.body.slice(0, 500)}`);
  const version = crd.spec.versions.find((/** @type {any} */ v) => v.served)?.name;
  for (let i = 0; ; i++) {
    const r = await admin.call('GET', `/apis/${crd.spec.group}/${version}/${crd.spec.names.plural}?limit=1`);
    if (r.status === 200) break;
    if (i > 600) throw new Error(`the CRD ${crd.metadata?.name} is not served: HTTP ${r.status} ${r.body}`);
    await sleep(50);
  }
}

/**
 * startCrd starts etcd and kube-apiserver (no controller manager) in dir/, installs the Website CRD (or the CRDs
 * given) and waits until they are served.
 * @param {string} dir
 * @param {string} binDir
 * @param {(m: string) => void} log
 * @param {{id: string, label: string, crds: Record<string, any>[]}} [serving] other CRDs than Website, and the
 * target's id and label (the label follows the version)
 * @returns {Promise<Target>}
 */
export async function startCrd(dir, binDir, log, serving) {
  const plane = await startControlPlane({ binDir, dir, log, etcdFsync: true, controllerManager: false });
  try {
    const admin = mastersClient(plane);
    for (const crd of serving?.crds ?? [websiteCrd()]) await installCrd(admin, undefined, crd);
    return {
      id: serving?.id ?? 'crd',
      label: `kube-apiserver ${readVersion(binDir)} + etcd, ${serving?.label ?? 'Website CRD'}`,
      url: plane.server,
      tls: admin.tls,
      memory: () => ({ 'kube-apiserver': processMemory(plane.pids.apiserver), etcd: processMemory(plane.pids.etcd) }),
      pids: () => ({ 'kube-apiserver': plane.pids.apiserver, etcd: plane.pids.etcd }),
      diskMiB: () => diskMiB(join(plane.dir, 'etcd-data')),
      prepare: admin.createNamespaces,
      restart: () => plane.restartApiserver(),
      stop: async () => {
        await admin.close();
        await plane.stop();
      },
    };
  } catch (e) {
    await plane.stop();
    throw e;
  }
}

/** The group of the CRD twin served beside our APIService, which owns extensions.example.com on that kube-apiserver. */
export const TWIN_GROUP = 'crd.example.com';

/**
 * @typedef {object} AggregatedPlane one kube-apiserver + etcd (fsync on, no controller manager) shared by the
 * aggregated pair, so their ratio compares the same front door
 * @property {import('../e2e/plane.mjs').ControlPlane} plane
 * @property {ReturnType<typeof mastersClient>} admin
 * @property {string} binDir
 * @property {string} dir
 * @property {(m: string) => void} log
 * @property {() => Promise<void>} stop
 */

/**
 * startAggregatedPlane starts the control plane the aggregated targets share.
 * @param {string} dir
 * @param {string} binDir
 * @param {(m: string) => void} log
 * @returns {Promise<AggregatedPlane>}
 */
export async function startAggregatedPlane(dir, binDir, log) {
  const plane = await startControlPlane({ binDir, dir: join(dir, 'plane'), log, etcdFsync: true, controllerManager: false });
  const admin = mastersClient(plane);
  return {
    plane,
    admin,
    binDir,
    dir,
    log,
    stop: async () => {
      await admin.close();
      await plane.stop();
    },
  };
}

/**
 * startOursAggregated runs our server (lmdb) delegated to the shared kube-apiserver as the e2e harness does: the
 * rendered namespace, ServiceAccount and RBAC applied for real, the server running with that ServiceAccount's token,
 * an ExternalName Service to loopback (no kube-proxy here) and the rendered APIService with its caBundle, Available.
 * The benchmark reaches it at kube-apiserver's URL; stopping it unregisters the APIService.
 * @param {AggregatedPlane} shared
 * @returns {Promise<Target>}
 */
export async function startOursAggregated(shared) {
  const { plane, admin } = shared;
  const dir = join(shared.dir, 'ours-aggregated');
  mkdirSync(dir, { recursive: true });
  const kubectl = (/** @type {string[]} */ args, /** @type {string | undefined} */ input = undefined) =>
    execFileSync(join(shared.binDir, 'kubectl'), ['--kubeconfig', plane.kubeconfig, ...args], { input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  const namespace = manifests.DEFAULT_NAMESPACE;
  const [port = 0] = await freePorts(1);
  const serving = manifests.generateServingCertificate(namespace);
  const files = manifests.renderManifests({ namespace, servingCert: serving, servicePort: port });
  const file = (/** @type {string} */ prefix) => {
    const f = files.find((x) => x.name.startsWith(prefix));
    if (!f) throw new Error(`no rendered manifest ${prefix}*`);
    const path = join(dir, f.name);
    writeFileSync(path, f.text);
    return path;
  };
  // Namespace, then ServiceAccount and RBAC; no pod runs here, so the Service is an ExternalName to loopback.
  kubectl(['apply', '-f', file('00')]);
  kubectl(['apply', '-f', file('10')]);
  kubectl(
    ['apply', '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: manifests.SERVICE_NAME, namespace },
      spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'https', port, protocol: 'TCP' }] },
    }),
  );
  const token = kubectl(['create', 'token', manifests.SERVICE_NAME, '-n', namespace, '--duration', '24h']).trim();
  const kubeconfig = join(dir, 'server.kubeconfig');
  const user = `system:serviceaccount:${namespace}:${manifests.SERVICE_NAME}`;
  writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'bench',
      clusters: [{ name: 'bench', cluster: { server: plane.server, 'certificate-authority': plane.caFile } }],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: 'bench', context: { cluster: 'bench', user } }],
    }),
    { mode: 0o600 },
  );
  writeFileSync(join(dir, 'tls.crt'), serving.cert);
  writeFileSync(join(dir, 'tls.key'), serving.key, { mode: 0o600 });
  const certDir = join(dir, 'certs');
  const dataDir = join(dir, 'data');
  const args = [
    process.env.BENCH_OURS_MAIN ?? join(REPO, 'dist', 'main.js'),
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--kubeconfig=${kubeconfig}`,
    `--tls-cert-file=${join(dir, 'tls.crt')}`,
    `--tls-private-key-file=${join(dir, 'tls.key')}`,
    `--data-dir=${dataDir}`,
    `--cert-dir=${certDir}`,
    '--log-level=warn',
    // The CRD twin has no controller either: the API alone is compared.
    '--enable-reconcilers=false',
  ];
  const logFile = join(dir, 'server.log');
  const server = spawnNode(args, logFile);
  for (const t = Date.now(); !existsSync(join(certDir, 'kubeconfig')); await sleep(20)) {
    if (server.proc.exitCode !== null || Date.now() - t > 60_000) throw new Error(`our server wrote no certificates; see ${logFile}`);
  }
  // Readiness and restarts are checked on our own port, with the admin certificate of our own CA.
  const ownTls = {
    // The rendered certificate names only the Service (what the aggregator verifies).
    servername: manifests.servingCertificateSans(namespace)[0],
    ca: serving.caCert,
    cert: readFileSync(join(certDir, 'admin.crt'), 'utf8'),
    key: readFileSync(join(certDir, 'admin.key'), 'utf8'),
  };
  const direct = await nodeTarget(
    { id: 'ours-aggregated', label: '', url: `https://127.0.0.1:${port}`, tls: ownTls, args, logFile, dataDir, servername: ownTls.servername },
    server,
  );
  try {
    kubectl(['apply', '-f', file('30')]);
    for (const t = Date.now(); ; await sleep(250)) {
      const list = JSON.parse(kubectl(['get', 'apiservice', ...manifests.APISERVICE_NAMES, '-o', 'json']));
      /** @param {any} o */
      const available = (o) => o.status?.conditions?.some((/** @type {any} */ c) => c.type === 'Available' && c.status === 'True');
      if (list.items.length === manifests.APISERVICE_NAMES.length && list.items.every(available)) break;
      if (Date.now() - t > 90_000) throw new Error(`the APIServices are not Available after 90 s; see ${logFile}`);
    }
    for (let i = 0; ; i++) {
      const r = await admin.call('GET', '/apis/extensions.example.com/v1/websites?limit=1');
      if (r.status === 200) break;
      if (i > 600) throw new Error(`kube-apiserver does not proxy to our server: HTTP ${r.status} ${r.body}`);
      await sleep(50);
    }
  } catch (e) {
    await direct.stop();
    throw e;
  }
  return {
    ...direct,
    label: `website-apiserver (lmdb) behind kube-apiserver ${readVersion(shared.binDir)} (APIService)`,
    url: plane.server,
    direct: { url: direct.url, tls: direct.tls },
    tls: admin.tls,
    memory: () => ({ ...direct.memory(), 'kube-apiserver': processMemory(plane.pids.apiserver) }),
    // Our server, like kube-apiserver, refuses objects in namespaces the cluster does not have.
    prepare: admin.createNamespaces,
    stop: async () => {
      await direct.stop();
      for (const name of manifests.APISERVICE_NAMES) {
        await admin.call('DELETE', `/apis/apiregistration.k8s.io/v1/apiservices/${name}`).catch(() => undefined);
      }
    },
  };
}

/**
 * startCrdTwin installs the Website CRD under TWIN_GROUP on the shared kube-apiserver.
 * @param {AggregatedPlane} shared
 * @returns {Promise<Target>}
 */
export async function startCrdTwin(shared) {
  const { plane, admin } = shared;
  await installCrd(admin, TWIN_GROUP);
  return {
    id: 'crd-aggregated',
    label: `kube-apiserver ${readVersion(shared.binDir)} + etcd, the Website CRD as ${TWIN_GROUP} on the same kube-apiserver`,
    url: plane.server,
    group: TWIN_GROUP,
    tls: admin.tls,
    memory: () => ({ 'kube-apiserver': processMemory(plane.pids.apiserver), etcd: processMemory(plane.pids.etcd) }),
    diskMiB: () => diskMiB(join(plane.dir, 'etcd-data')),
    prepare: admin.createNamespaces,
    restart: () => plane.restartApiserver(),
    // The plane is the shared one's to stop.
    stop: async () => {},
  };
}

/** @param {string} binDir */
export function readVersion(binDir) {
  try {
    return readFileSync(join(binDir, 'kubernetes-version'), 'utf8').trim();
  } catch {
    return 'kube-apiserver';
  }
}
