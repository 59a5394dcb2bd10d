#!/usr/bin/env node
/**
 * @module e2e/node/sandbox
 * The inside of the real-node sandbox: runs as PID 1 of `unshare --mount --net --pid --fork --mount-proc
 * --propagation private` (started by real-node.mjs), so every process, mount, network interface and iptables rule
 * it makes dies with it. In order:
 *   mounts (a tmpfs on /run, /var/log from the work folder, the machine-wide sysctls the kubelet would write)
 *   → network (lo up, the node address on lo, a route to the Service range) → a cgroup root for the kubelet
 *   → etcd, kube-apiserver, kube-controller-manager (plane.mjs, with the controllers a node needs)
 *   → containerd (+ runc, bridge CNI) with the offline images imported → kube-scheduler, kubelet, kube-proxy
 *   → git daemon and the basic-auth git HTTP server on the node address → Node Ready.
 * Then it prints one JSON line (RealNodeState) on stdout and runs until its stdin closes or it gets SIGTERM.
 * See ../../../../shared/REAL-NODE.md for why each odd setting is there.
 *
 *   node sandbox.mjs CONFIG.json
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import YAML from 'yaml';
import { freePorts, launch, startControlPlane, terminate } from '../plane.mjs';

/**
 * @typedef {object} SandboxConfig
 * @property {string} dir work folder (on the host's file system, visible inside)
 * @property {string} binDir Kubernetes and etcd binaries (build-binaries.sh)
 * @property {string} nodeName
 * @property {string} nodeIp the node's address, put on lo
 * @property {string} podSubnet the bridge's subnet
 * @property {string} serviceCidr kube-apiserver's --service-cluster-ip-range
 * @property {string} cgroupRoot the kubelet's cgroupRoot, created here in every v1 hierarchy
 * @property {{ref: string, archive: string, tags?: string[]}[]} images OCI archives to import; `tags` are more names
 *   for the same image (a "new" image tag for an upgrade, with nothing to pull), stored as the kubelet will ask for them
 * @property {string} pauseImage
 * @property {string} repoRoot folder of bare repositories served by git daemon and the git HTTP server
 * @property {{user: string, passwordFile: string, root: string}} gitHttp
 * @property {string[]} [apiserverArgs] extra kube-apiserver flags (e.g. --enable-aggregator-routing=true)
 * @property {number} [storageEtcdMembers] start an etcd cluster of this many members on the node address, for
 *   website-apiserver pods on the etcd backend (the plane's own etcd listens on 127.0.0.1, which pods cannot reach)
 */

const cfgPath = process.argv[2];
if (!cfgPath) throw new Error('usage: sandbox.mjs CONFIG.json');
/** @type {SandboxConfig} */
const cfg = JSON.parse(readFileSync(cfgPath, 'utf8'));
const dir = resolve(cfg.dir);
/** @param {...string} parts */
const p = (...parts) => join(dir, ...parts);
const t0 = Date.now();
/** @param {string} msg */
const log = (msg) => process.stderr.write(`[sandbox +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);
/** @param {string} cmd @param {string[]} args */
const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
/** @param {string} path @param {string} text */
const write = (path, text) => {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
};

/** @type {import('../plane.mjs').Running[]} */
const running = [];
/** @type {Awaited<ReturnType<typeof startControlPlane>> | undefined} */
let plane;
let stopping = false;
async function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const r of running.splice(0).reverse()) await terminate(r, 3000).catch(() => undefined);
  await plane?.stop().catch(() => undefined);
  // PID 1 exiting takes every remaining process of the namespace (containers, shims) with it.
  process.exit(code);
}
process.on('SIGTERM', () => void stop(0));
process.on('SIGINT', () => void stop(0));

/**
 * waitUntil polls check until it is truthy.
 * @template T
 * @param {string} what
 * @param {() => Promise<T> | T} check
 * @param {number} [timeoutMs]
 * @returns {Promise<T>}
 */
async function waitUntil(what, check, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = String(/** @type {Error} */ (e).message ?? e).slice(0, 500);
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ''}`);
    await sleep(250);
  }
}

/** @param {import('../plane.mjs').Running} r @param {string} name */
function watchExit(r, name) {
  void r.exited.then(() => {
    if (!stopping) log(`${name} exited (code ${r.proc.exitCode}, signal ${r.proc.signalCode}); see ${p('logs')}`);
  });
  running.push(r);
  return r;
}

// ---------------------------------------------------------------------------------------------------------
// Mounts, network, cgroups

function mounts() {
  run('mount', ['-t', 'tmpfs', '-o', 'mode=755', 'tmpfs', '/run']);
  mkdirSync(p('var-log'), { recursive: true });
  // The kubelet's /var/log/pods and /var/log/containers are fixed paths.
  run('mount', ['--bind', p('var-log'), '/var/log']);
  // The kubelet sets these machine-wide kernel settings unless they hold its values already; files holding exactly
  // those values, bound over them here, leave the machine's own untouched.
  const tunables = {
    'vm/overcommit_memory': '1',
    'vm/panic_on_oom': '0',
    'kernel/panic': '10',
    'kernel/panic_on_oops': '1',
    'kernel/keys/root_maxkeys': '1000000',
    'kernel/keys/root_maxbytes': '25000000',
  };
  for (const [key, value] of Object.entries(tunables)) {
    const path = `/proc/sys/${key}`;
    if (!existsSync(path) || readFileSync(path, 'utf8').trim() === value) continue;
    const file = p('sysctl', key.replaceAll('/', '.'));
    write(file, `${value}\n`);
    run('mount', ['--bind', file, path]);
  }
}

function network() {
  run('ip', ['link', 'set', 'lo', 'up']);
  // The kernel here has no dummy interfaces: the node's address lives on lo.
  run('ip', ['addr', 'add', `${cfg.nodeIp}/32`, 'dev', 'lo']);
  // kube-apiserver reaches the APIService through its Service's cluster IP; kube-proxy's OUTPUT rules rewrite it to
  // the pod, but the first route lookup needs a route to exist. There is no default route: nothing leaves.
  run('ip', ['route', 'add', cfg.serviceCidr, 'dev', 'lo', 'src', cfg.nodeIp]);
}

/** cgroups creates the kubelet's cgroupRoot in every cgroup v1 hierarchy (the machine is cgroup v1). */
function cgroups() {
  const base = '/sys/fs/cgroup';
  for (const h of readdirSync(base)) {
    const hierarchy = join(base, h);
    if (h === 'unified' || !existsSync(join(hierarchy, 'cgroup.procs'))) continue;
    const target = join(hierarchy, cfg.cgroupRoot);
    mkdirSync(target, { recursive: true });
    // A new cpuset cgroup has no CPUs or memory nodes until given its parent's.
    if (existsSync(join(target, 'cpuset.cpus'))) {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(target, f), readFileSync(join(hierarchy, f), 'utf8'));
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Components

const CONTAINERD_SOCKET = '/run/containerd/containerd.sock';

async function containerd() {
  const cniConf = p('cni', 'net.d');
  write(
    join(cniConf, '10-e2e-bridge.conflist'),
    JSON.stringify(
      {
        cniVersion: '0.4.0',
        name: 'e2e',
        plugins: [
          {
            type: 'bridge',
            bridge: 'cni0',
            isGateway: true,
            ipMasq: false,
            hairpinMode: false,
            ipam: { type: 'host-local', dataDir: p('cni', 'ipam'), ranges: [[{ subnet: cfg.podSubnet }]], routes: [{ dst: '0.0.0.0/0' }] },
          },
          { type: 'portmap', capabilities: { portMappings: true } },
        ],
      },
      null,
      2,
    ),
  );
  const config = p('containerd', 'config.toml');
  write(
    config,
    `version = 2
root = "${p('containerd', 'root')}"
state = "/run/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "${CONTAINERD_SOCKET}"
[plugins."io.containerd.internal.v1.opt"]
  path = "${p('containerd', 'opt')}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${cfg.pauseImage}"
  # root lacks CAP_SYS_RESOURCE here, so the kubelet's oom_score_adj of -998 cannot be applied.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cniConf}"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
`,
  );
  watchExit(launch('containerd', ['--config', config], p('logs', 'containerd.log')), 'containerd');
  await waitUntil('containerd', () => run('ctr', ['--address', CONTAINERD_SOCKET, 'version']).includes('Server'), 30_000);
  for (const image of cfg.images) {
    run('ctr', ['--address', CONTAINERD_SOCKET, '-n', 'k8s.io', 'images', 'import', '--no-unpack', image.archive]);
    for (const tag of image.tags ?? []) run('ctr', ['--address', CONTAINERD_SOCKET, '-n', 'k8s.io', 'images', 'tag', '--force', image.ref, kubeletRef(tag)]);
  }
  const listed = run('ctr', ['--address', CONTAINERD_SOCKET, '-n', 'k8s.io', 'images', 'ls', '-q']);
  const missing = cfg.images.flatMap((i) => [i.ref, ...(i.tags ?? [])]).filter((ref) => !listed.split('\n').some((l) => l === ref || l === kubeletRef(ref)));
  if (missing.length) throw new Error(`containerd lists no ${missing.join(', ')} after import:\n${listed}`);
}

/**
 * kubeletRef is the name the kubelet asks containerd for when a pod names `ref`: ctr stores names as given, while the
 * kubelet completes a name without a registry to Docker Hub's (`nginx:1` is `docker.io/library/nginx:1`).
 * @param {string} ref
 */
function kubeletRef(ref) {
  const first = ref.split('/')[0] ?? '';
  const registry = ref.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  return registry ? ref : `docker.io/${ref.includes('/') ? '' : 'library/'}${ref}`;
}

/** @param {string} kubeconfig */
async function kubelet(kubeconfig) {
  const [healthz = 0] = await freePorts(1);
  const config = p('kubelet', 'config.yaml');
  write(p('kubelet', 'resolv.conf'), 'nameserver 127.0.0.1\n');
  write(
    config,
    YAML.stringify({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      // cgroup v1 machine: allowed explicitly since 1.35; cgroupfs driver (no systemd) under our own root.
      failCgroupV1: false,
      cgroupDriver: 'cgroupfs',
      cgroupRoot: cfg.cgroupRoot,
      containerRuntimeEndpoint: `unix://${CONTAINERD_SOCKET}`,
      address: cfg.nodeIp,
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: healthz,
      // Reachable only inside the sandbox; kube-apiserver uses it for logs and exec.
      authentication: { anonymous: { enabled: true }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
      resolvConf: p('kubelet', 'resolv.conf'),
      clusterDomain: 'cluster.local',
      failSwapOn: false,
      podLogsDir: '/var/log/pods',
      // The machine's disk is shared with everything else: never evict test pods for it.
      evictionHard: { 'memory.available': '1Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      serializeImagePulls: false,
      // Quicker status updates make readiness visible sooner.
      nodeStatusUpdateFrequency: '4s',
      syncFrequency: '10s',
      fileCheckFrequency: '10s',
      rotateCertificates: false,
    }),
  );
  watchExit(
    launch(
      join(cfg.binDir, 'kubelet'),
      [
        `--config=${config}`,
        `--kubeconfig=${kubeconfig}`,
        `--root-dir=${p('kubelet', 'root')}`,
        `--hostname-override=${cfg.nodeName}`,
        `--node-ip=${cfg.nodeIp}`,
        '--v=1',
      ],
      p('logs', 'kubelet.log'),
    ),
    'kubelet',
  );
}

/** @param {string} kubeconfig */
async function kubeProxy(kubeconfig) {
  const [healthz = 0, metrics = 0] = await freePorts(2);
  const config = p('kube-proxy', 'config.yaml');
  write(
    config,
    YAML.stringify({
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig },
      hostnameOverride: cfg.nodeName,
      mode: 'iptables',
      // NodePorts answer on 127.0.0.1 too (route_localnet, set in this network namespace only).
      iptables: { localhostNodePorts: true },
      // Zero: leave the machine-wide nf_conntrack sysctls alone.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      clusterCIDR: cfg.podSubnet,
      metricsBindAddress: `127.0.0.1:${metrics}`,
      healthzBindAddress: `127.0.0.1:${healthz}`,
    }),
  );
  const r = watchExit(launch(join(cfg.binDir, 'kube-proxy'), [`--config=${config}`, '--v=1'], p('logs', 'kube-proxy.log')), 'kube-proxy');
  // Healthy once it has programmed the rules at least once.
  await waitUntil(
    'kube-proxy healthz',
    async () => {
      if (r.proc.exitCode !== null) throw new Error(`kube-proxy exited (${r.proc.exitCode}): see ${p('logs', 'kube-proxy.log')}`);
      return (await fetch(`http://127.0.0.1:${healthz}/healthz`)).status === 200;
    },
    60_000,
  );
}

/** @param {string} kubeconfig */
async function scheduler(kubeconfig) {
  const [port = 0] = await freePorts(1);
  watchExit(
    launch(
      join(cfg.binDir, 'kube-scheduler'),
      [`--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${port}`, '--v=1'],
      p('logs', 'kube-scheduler.log'),
    ),
    'kube-scheduler',
  );
}

/**
 * storageEtcd starts `members` etcd members on the node address (ports 23790 + 2i for clients, +1 for peers) and
 * waits until each answers /health; returns their client URLs. fsync off: disposable test data.
 * @param {number} members
 * @returns {Promise<string[]>}
 */
async function storageEtcd(members) {
  const names = Array.from({ length: members }, (_, i) => `s${i}`);
  const client = (/** @type {number} */ i) => `http://${cfg.nodeIp}:${23790 + 2 * i}`;
  const peer = (/** @type {number} */ i) => `http://${cfg.nodeIp}:${23791 + 2 * i}`;
  const initialCluster = names.map((n, i) => `${n}=${peer(i)}`).join(',');
  names.forEach((name, i) => {
    watchExit(
      launch(
        join(cfg.binDir, 'etcd'),
        [
          `--name=${name}`,
          `--data-dir=${p('storage-etcd', name)}`,
          `--listen-client-urls=${client(i)}`,
          `--advertise-client-urls=${client(i)}`,
          `--listen-peer-urls=${peer(i)}`,
          `--initial-advertise-peer-urls=${peer(i)}`,
          `--initial-cluster=${initialCluster}`,
          '--initial-cluster-state=new',
          '--initial-cluster-token=real-node-storage',
          '--unsafe-no-fsync=true',
          '--log-level=warn',
        ],
        p('logs', `storage-etcd-${name}.log`),
      ),
      `storage etcd ${name}`,
    );
  });
  const urls = names.map((_, i) => client(i));
  for (const url of urls) {
    await waitUntil(
      `storage etcd at ${url}`,
      async () => {
        const r = await fetch(`${url}/health`);
        return r.ok && /** @type {{health?: string}} */ (await r.json()).health === 'true';
      },
      60_000,
    );
  }
  return urls;
}

async function gitServers() {
  watchExit(
    launch(
      'git',
      ['daemon', '--reuseaddr', `--listen=${cfg.nodeIp}`, '--port=9418', `--base-path=${cfg.repoRoot}`, '--export-all', cfg.repoRoot],
      p('logs', 'git-daemon.log'),
    ),
    'git daemon',
  );
  const http = spawn(
    process.execPath,
    [
      join(import.meta.dirname, 'git-http.mjs'),
      '--listen',
      `${cfg.nodeIp}:8080`,
      '--root',
      cfg.gitHttp.root,
      '--user',
      cfg.gitHttp.user,
      '--password-file',
      cfg.gitHttp.passwordFile,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  running.push({ proc: http, exited: new Promise((r) => http.once('exit', () => r(undefined))) });
  await waitUntil('git http server', () => new Promise((res) => http.stdout.once('data', () => res(true))), 10_000);
}

// ---------------------------------------------------------------------------------------------------------

async function main() {
  mounts();
  network();
  cgroups();
  log('mounts, network and cgroups set up');
  plane = await startControlPlane({
    binDir: cfg.binDir,
    dir: p('plane'),
    log,
    controllers: [
      'namespace-controller',
      'garbage-collector-controller',
      'clusterrole-aggregation-controller',
      // What a node and its workloads need: the not-ready taint lifted, Deployments and StatefulSets rolled out,
      // Service endpoints, service accounts and their CA, volumes bound, disruption budgets tracked.
      'node-lifecycle-controller',
      'deployment-controller',
      'replicaset-controller',
      'statefulset-controller',
      'endpointslice-controller',
      'endpoints-controller',
      'serviceaccount-controller',
      'root-ca-certificate-publisher-controller',
      'persistentvolume-binder-controller',
      'disruption-controller',
      'pod-garbage-collector-controller',
    ],
    apiserverArgs: [
      // Pods reach kube-apiserver through the `kubernetes` Service, whose endpoint is the node address.
      '--bind-address=0.0.0.0',
      `--advertise-address=${cfg.nodeIp}`,
      '--endpoint-reconciler-type=lease',
      `--service-cluster-ip-range=${cfg.serviceCidr}`,
      '--kubelet-preferred-address-types=InternalIP',
      '--allow-privileged=true',
      ...(cfg.apiserverArgs ?? []),
    ],
    controllerManagerArgs: [`--root-ca-file=${p('plane', 'pki', 'ca.crt')}`, '--node-monitor-period=2s'],
  });
  const kubeconfig = plane.kubeconfig;
  await containerd();
  log('containerd up, images imported');
  await scheduler(kubeconfig);
  await kubelet(kubeconfig);
  await kubeProxy(kubeconfig);
  await gitServers();
  const storageEtcdUrls = cfg.storageEtcdMembers ? await storageEtcd(cfg.storageEtcdMembers) : [];
  const kubectl = (/** @type {string[]} */ ...args) => run(join(cfg.binDir, 'kubectl'), ['--kubeconfig', kubeconfig, ...args]);
  await waitUntil(
    'the node to be Ready',
    () => {
      const node = JSON.parse(kubectl('get', 'node', cfg.nodeName, '-o', 'json'));
      const ready = node.status?.conditions?.find((/** @type {{type: string}} */ c) => c.type === 'Ready');
      return ready?.status === 'True' && !(node.spec?.taints ?? []).some((/** @type {{key: string}} */ t) => t.key === 'node.kubernetes.io/not-ready');
    },
    120_000,
  );
  await waitUntil('the default service account', () => kubectl('get', 'serviceaccount', 'default', '-n', 'default', '-o', 'name').trim() !== '', 60_000);
  log('node Ready');
  process.stdout.write(
    `${JSON.stringify({
      ready: true,
      kubeconfig,
      server: plane.server,
      caFile: plane.caFile,
      etcdUrl: plane.etcdUrl,
      nodeName: cfg.nodeName,
      nodeIp: cfg.nodeIp,
      logsDir: p('logs'),
      pids: { ...plane.pids },
      storageEtcdUrls,
      seconds: (Date.now() - t0) / 1000,
    })}\n`,
  );
  // The host side ends the sandbox by closing stdin (or dying, which closes it too).
  process.stdin.resume();
  process.stdin.on('end', () => void stop(0));
  process.stdin.on('close', () => void stop(0));
}

main().catch((e) => {
  log(`failed: ${/** @type {Error} */ (e).stack ?? e}`);
  void stop(1);
});
