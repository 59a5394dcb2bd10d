/**
 * @module e2e/node/real-node
 * The host side of the real-node sandbox (sandbox.mjs is the inside): checks that this machine can run it, starts
 * it in namespaces of its own, runs commands in its network namespace (kubectl, curl) and tears it down, removing
 * the cgroups the kubelet made. Nothing else on the host changes: no interface, route, iptables rule, mount or
 * sysctl of the machine's own.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, readdirSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const HERE = import.meta.dirname;

/** REQUIRED lists what the sandbox runs, by command name or path, and the Debian package that has it. */
const REQUIRED = [
  ['unshare', 'util-linux'],
  ['nsenter', 'util-linux'],
  ['ip', 'iproute2'],
  ['iptables', 'iptables'],
  ['containerd', 'containerd'],
  ['ctr', 'containerd'],
  ['runc', 'runc'],
  ['conntrack', 'conntrack'],
  ['/usr/lib/cni/bridge', 'containernetworking-plugins'],
  ['/usr/lib/cni/host-local', 'containernetworking-plugins'],
  ['/usr/lib/cni/loopback', 'containernetworking-plugins'],
  ['/usr/lib/cni/portmap', 'containernetworking-plugins'],
  ['git', 'git'],
  ['curl', 'curl'],
  ['gcc', 'gcc'],
];

/** @param {string} cmd */
function have(cmd) {
  if (cmd.startsWith('/')) return existsSync(cmd);
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * realNodeUnavailable says why the real-node sandbox cannot run here, or undefined when it can.
 * @returns {string | undefined}
 */
export function realNodeUnavailable() {
  if (process.platform !== 'linux') return `needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'needs root (namespaces, mounts, cgroups)';
  const missing = REQUIRED.filter(([cmd]) => !have(cmd ?? ''));
  if (missing.length) {
    const pkgs = [...new Set(missing.map(([, pkg]) => pkg))].join(' ');
    return `missing ${missing.map(([c]) => c).join(', ')} (apt-get install --no-install-recommends ${pkgs})`;
  }
  if (!existsSync('/sys/fs/cgroup/cpu/cgroup.procs') && !existsSync('/sys/fs/cgroup/cgroup.controllers')) return 'no cgroup hierarchy mounted';
  try {
    execFileSync('unshare', ['--mount', '--net', '--pid', '--fork', '--mount-proc', '--propagation', 'private', 'true'], { stdio: 'ignore', timeout: 10_000 });
  } catch (e) {
    return `cannot create namespaces: ${/** @type {Error} */ (e).message}`;
  }
  return undefined;
}

/**
 * @typedef {object} RealNodeState what sandbox.mjs prints once the node is Ready
 * @property {string} kubeconfig admin kubeconfig (server on 127.0.0.1 inside the sandbox)
 * @property {string} server
 * @property {string} caFile
 * @property {string} etcdUrl kube-apiserver's etcd (on 127.0.0.1 inside the sandbox)
 * @property {string} nodeName
 * @property {string} nodeIp
 * @property {string} logsDir
 * @property {number} seconds time from the sandbox's start to Ready
 * @property {Record<string, number>} pids
 * @property {string[]} storageEtcdUrls client URLs of the storage etcd cluster on the node address (empty unless asked)
 */

/**
 * @typedef {object} ExecResult
 * @property {number} code
 * @property {string} stdout
 * @property {string} stderr
 */

/**
 * @typedef {object} RealNode
 * @property {RealNodeState} state
 * @property {number} pid the sandbox's PID 1, as the host sees it
 * @property {string} dir
 * @property {string} repoRoot bare repositories served at git://<nodeIp>/<name>
 * @property {{user: string, password: string, url: (repo: string) => string}} gitHttp the basic-auth git server
 * @property {(cmd: string, args: string[], opts?: {input?: string, timeoutMs?: number}) => Promise<ExecResult>} exec
 *   runs a command in the sandbox's network namespace
 * @property {(cmd: string, args: string[], env?: NodeJS.ProcessEnv) => import('node:child_process').ChildProcess} spawn
 *   starts a long-running command in the sandbox's network namespace (a host process: the caller stops it)
 * @property {(args: string[], opts?: {input?: string, timeoutMs?: number}) => Promise<ExecResult>} kubectl the pinned kubectl, as admin
 * @property {() => Record<string, number | undefined>} rssMiB resident memory of the sandbox's processes by name
 * @property {() => Promise<void>} stop
 */

/**
 * startRealNode starts the sandbox and resolves once its node is Ready.
 * @param {{binDir: string, images: {ref: string, archive: string, tags?: string[]}[], pauseImage: string, dir: string, log?: (m: string) => void,
 *   timeoutMs?: number, apiserverArgs?: string[], storageEtcdMembers?: number}} o
 * @returns {Promise<RealNode>}
 */
export async function startRealNode(o) {
  const dir = resolve(o.dir);
  const log = o.log ?? (() => {});
  mkdirSync(dir, { recursive: true });
  const repoRoot = join(dir, 'repos');
  const httpRoot = join(dir, 'private-repos');
  mkdirSync(repoRoot, { recursive: true });
  mkdirSync(httpRoot, { recursive: true });
  const password = Math.random().toString(36).slice(2) + Math.random().toString(36).slice(2);
  writeFileSync(join(dir, 'git-http-password'), password, { mode: 0o600 });
  const cgroupRoot = `website-e2e-node-${process.pid}`;
  removeStaleCgroups(log);
  const config = {
    dir,
    binDir: resolve(o.binDir),
    nodeName: 'e2e-node',
    // Addresses of the sandbox's own network namespace; nothing routes there from the host.
    nodeIp: '10.201.0.1',
    podSubnet: '10.244.0.0/24',
    serviceCidr: '10.0.0.0/24',
    cgroupRoot,
    images: o.images,
    pauseImage: o.pauseImage,
    repoRoot,
    gitHttp: { user: 'e2e', passwordFile: join(dir, 'git-http-password'), root: httpRoot },
    apiserverArgs: o.apiserverArgs ?? [],
    storageEtcdMembers: o.storageEtcdMembers ?? 0,
  };
  const cfgPath = join(dir, 'sandbox.json');
  writeFileSync(cfgPath, JSON.stringify(config, null, 2));
  const logFd = openSync(join(dir, 'sandbox.log'), 'a');
  const child = spawn(
    'unshare',
    ['--mount', '--net', '--pid', '--fork', '--mount-proc', '--propagation', 'private', process.execPath, join(HERE, 'sandbox.mjs'), cfgPath],
    { stdio: ['pipe', 'pipe', logFd] },
  );
  closeSync(logFd);
  const exited = new Promise((res) => child.once('exit', () => res(undefined)));

  const removeCgroups = async () => {
    for (let i = 0; i < 50; i++) {
      let left = 0;
      for (const h of existsSync('/sys/fs/cgroup') ? readdirSync('/sys/fs/cgroup') : []) {
        const root = join('/sys/fs/cgroup', h, cgroupRoot);
        if (existsSync(root)) left += rmCgroupTree(root);
      }
      if (left === 0) return;
      await sleep(100); // processes leave their cgroups a moment after they die
    }
    log(`cgroups under ${cgroupRoot} could not all be removed`);
  };

  /** @type {RealNodeState} */
  let state;
  try {
    state = await new Promise((res, rej) => {
      let out = '';
      const timer = setTimeout(() => rej(new Error(`the sandbox was not ready in ${(o.timeoutMs ?? 240_000) / 1000} s`)), o.timeoutMs ?? 240_000);
      child.stdout?.on('data', (b) => {
        out += b.toString();
        const nl = out.indexOf('\n');
        if (nl < 0) return;
        clearTimeout(timer);
        try {
          res(JSON.parse(out.slice(0, nl)));
        } catch (e) {
          rej(e);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        rej(new Error(`the sandbox exited (${code}) before it was ready`));
      });
    });
  } catch (e) {
    child.kill('SIGKILL');
    await exited;
    await removeCgroups();
    const tail = readFileSync(join(dir, 'sandbox.log'), 'utf8').trimEnd().split('\n').slice(-30).join('\n');
    throw new Error(`${/** @type {Error} */ (e).message}\n--- ${join(dir, 'sandbox.log')} ---\n${tail}`);
  }
  // unshare --fork: its one child is the sandbox's PID 1.
  const pid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
  log(`sandbox ready in ${state.seconds} s (pid ${pid}, logs in ${state.logsDir})`);

  /** @type {RealNode['exec']} */
  const exec = (cmd, args, opts = {}) =>
    new Promise((res) => {
      const p = spawn('nsenter', ['--target', String(pid), '--net', '--', cmd, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (b) => (stdout += b));
      p.stderr.on('data', (b) => (stderr += b));
      const timer = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
      p.on('close', (code) => {
        clearTimeout(timer);
        res({ code: code ?? 1, stdout, stderr });
      });
      p.stdin.end(opts.input ?? '');
    });
  const kubectlBin = join(config.binDir, 'kubectl');
  return {
    state,
    pid,
    dir,
    repoRoot,
    gitHttp: { user: config.gitHttp.user, password, url: (repo) => `http://${state.nodeIp}:8080/${repo}` },
    exec,
    spawn: (cmd, args, env) =>
      spawn('nsenter', ['--target', String(pid), '--net', '--', cmd, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env }),
    kubectl: (args, opts) => exec(kubectlBin, ['--kubeconfig', state.kubeconfig, ...args], opts),
    rssMiB: () => descendantsRss(pid),
    stop: async () => {
      child.stdin?.end();
      const done = await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)]);
      if (!done) {
        // Killing PID 1 of the namespace kills everything in it.
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
        await exited;
      }
      await removeCgroups();
    },
  };
}

/**
 * removeStaleCgroups removes the cgroup trees of earlier sandboxes whose host process is gone (a run that was
 * killed before its teardown); their processes died with their sandbox, so the trees are empty.
 * @param {(m: string) => void} log
 */
export function removeStaleCgroups(log) {
  for (const h of existsSync('/sys/fs/cgroup') ? readdirSync('/sys/fs/cgroup') : []) {
    let entries = [];
    try {
      entries = readdirSync(join('/sys/fs/cgroup', h)).filter((e) => e.startsWith('website-e2e-node-'));
    } catch {
      continue;
    }
    for (const e of entries) {
      const owner = Number(e.slice('website-e2e-node-'.length));
      if (existsSync(`/proc/${owner}`)) continue;
      if (rmCgroupTree(join('/sys/fs/cgroup', h, e)) > 0) log(`could not remove the stale cgroup ${join(h, e)}`);
    }
  }
}

/**
 * rmCgroupTree removes a cgroup directory tree, deepest first; returns how many could not be removed yet.
 * @param {string} path
 * @returns {number}
 */
function rmCgroupTree(path) {
  let left = 0;
  for (const e of readdirSync(path)) {
    const child = join(path, e);
    if (statSync(child).isDirectory()) left += rmCgroupTree(child);
  }
  try {
    rmdirSync(path);
  } catch {
    left++;
  }
  return left;
}

/**
 * descendantsRss sums VmRSS (MiB) per command name over a process and all its descendants.
 * @param {number} root
 * @returns {Record<string, number>}
 */
function descendantsRss(root) {
  /** @type {Record<string, number>} */
  const out = {};
  const visit = (/** @type {number} */ pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const name = /^Name:\s+(.*)$/m.exec(status)?.[1] ?? '?';
      const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      out[name] = Math.round(((out[name] ?? 0) + kb / 1024) * 10) / 10;
      for (const t of readdirSync(`/proc/${pid}/task`)) {
        for (const c of readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)) visit(Number(c));
      }
    } catch {
      /* exited meanwhile */
    }
  };
  visit(root);
  return out;
}
