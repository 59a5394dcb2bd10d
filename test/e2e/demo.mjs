#!/usr/bin/env node
/**
 * @module e2e/demo
 * See it work: a throwaway single-node cluster on this machine (the real-node sandbox of the e2e suites: control
 * plane, kubelet, containerd, kube-proxy, the offline images), website-apiserver installed in it with the Helm chart,
 * the README's kubia Website applied, and the URL of its page on 127.0.0.1.
 *
 *   npm run demo -- up   [--state-dir DIR]   start everything, print the URL (and fetch it once)
 *   npm run demo -- down [--state-dir DIR]   stop every process `up` started and remove DIR
 *
 * `up` starts a keeper (this file, `keep`) in a session of its own, which holds the sandbox and the forwards from the
 * host to it, and reports its progress over an IPC channel; `up` returns once the page has been served, the keeper
 * stays. `down` signals the keeper, which ends the sandbox (every process in it dies with its PID 1).
 * The sandbox's network namespace is private (nothing routes there from the host), so the keeper forwards
 * 127.0.0.1 ports of the host to the Website's NodePort and to kube-apiserver (node/forward.mjs: a helper inside the
 * sandbox's namespace listens on Unix sockets in DIR, which belong to no network namespace).
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readlinkSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import YAML from 'yaml';
import { buildBinaries } from './plane.mjs';
import { removeStaleCgroups, startRealNode } from './node/real-node.mjs';
import { chartValues, dataVolume, helmOnNode, nodeImages, nodeUnavailable } from './node/clone.mjs';
import { forward, startBridge } from './node/forward.mjs';

const ROOT = resolve(import.meta.dirname, '../..');
const SELF = import.meta.filename;
const CHART = join(ROOT, 'deploy', 'helm', 'website-apiserver');
const RELEASE = 'website-apiserver';
const NAMESPACE = 'website-system';
const REPO_NAME = 'kubia-website-example.git';
const PAGE = `<!DOCTYPE html>
<html>
<head><title>kubia</title></head>
<body>
<h1>Hello from kubia</h1>
<p>This page was cloned by git-sync from a git repository and is served by nginx, in pods that website-apiserver's
reconciler made for the Website "kubia".</p>
</body>
</html>
`;

/**
 * @typedef {object} DemoState what state.json in the state folder holds (the keeper's pid from its start)
 * @property {number} keeperPid
 * @property {number} [sandboxPid] the sandbox's PID 1 as the host sees it
 * @property {string} [pidNamespace] the sandbox's PID namespace (readlink of /proc/PID/ns/pid)
 * @property {number} [bridgePid] the forwards' helper inside the sandbox's network namespace
 * @property {string} [url] the Website's page on the host
 * @property {string} [kubeconfig] an admin kubeconfig for kube-apiserver through the host's forward
 * @property {string} [kubectl] the kubectl built for the node
 */

const defaultStateDir = () => join(process.env['XDG_CACHE_HOME'] || join(homedir(), '.cache'), 'website-apiserver', 'demo');
const statePath = (/** @type {string} */ dir) => join(dir, 'state.json');
const logPath = (/** @type {string} */ dir) => join(dir, 'demo.log');

/** @param {string} dir @returns {DemoState | undefined} */
function readState(dir) {
  try {
    return JSON.parse(readFileSync(statePath(dir), 'utf8'));
  } catch {
    return undefined;
  }
}

/** @param {string} dir @param {Partial<DemoState>} patch */
function writeState(dir, patch) {
  writeFileSync(statePath(dir), `${JSON.stringify({ ...readState(dir), ...patch }, null, 2)}\n`);
}

/** isKeeper: pid is alive and is this file's keeper for dir (a recycled pid is someone else's). */
function isKeeper(/** @type {number} */ pid, /** @type {string} */ dir) {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.includes(SELF) && argv.includes('keep') && argv.includes(dir);
  } catch {
    return false;
  }
}

const alive = (/** @type {number | undefined} */ pid) => pid !== undefined && existsSync(`/proc/${pid}`);

// ---------------------------------------------------------------------------------------------------------
// up

/** @param {string} dir */
async function up(dir) {
  const t0 = Date.now();
  const say = (/** @type {string} */ m) => process.stdout.write(`[demo +${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}\n`);
  const state = readState(dir);
  if (state && isKeeper(state.keeperPid, dir)) {
    if (state.url) {
      say(`already up (keeper pid ${state.keeperPid}): ${state.url}`);
      return 0;
    }
    say(`another \`up\` is still starting (keeper pid ${state.keeperPid}); \`npm run demo -- down\` stops it`);
    return 1;
  }
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    say(`removing what an earlier run left in ${dir}`);
    await down(dir, () => {});
  }
  const why = nodeUnavailable();
  if (why) {
    say(`cannot run a node on this machine: ${why}`);
    return 1;
  }
  mkdirSync(dir, { recursive: true });
  const logFd = openSync(logPath(dir), 'a');
  say(`starting the keeper (its log: ${logPath(dir)})`);
  const keeper = spawn(process.execPath, [SELF, 'keep', dir], { detached: true, stdio: ['ignore', logFd, logFd, 'ipc'], cwd: ROOT });
  closeSync(logFd);
  /** @type {{type: 'ready', url: string, kubeconfig: string, kubectl: string} | undefined} */
  const ready = await new Promise((res) => {
    keeper.on('message', (/** @type {any} */ m) => {
      if (m.type === 'progress') say(m.text);
      else if (m.type === 'ready') res(m);
      // On failure the keeper stops the node, then exits: its exit is awaited.
      else if (m.type === 'failed') say(`failed: ${m.error}`);
    });
    keeper.once('exit', () => res(undefined));
  });
  if (!ready) {
    const tail = readFileSync(logPath(dir), 'utf8').trimEnd().split('\n').slice(-20).join('\n');
    process.stdout.write(`--- the last lines of ${logPath(dir)} ---\n${tail}\n`);
    say(`nothing is left running; \`npm run demo -- down\` removes ${dir}`);
    return 1;
  }
  keeper.disconnect();
  keeper.unref();
  // The proof, from this process on the host, as a browser would ask.
  const res = await fetch(ready.url);
  const body = await res.text();
  say(`GET ${ready.url} → ${res.status}, ${body.length} bytes: ${/<h1>(.*?)<\/h1>/.exec(body)?.[1] ?? body.slice(0, 60)}`);
  if (res.status !== 200) return 1;
  process.stdout.write(
    [
      '',
      `The kubia Website is served at ${ready.url}`,
      '',
      'kubectl, as the cluster admin:',
      `  export KUBECONFIG=${ready.kubeconfig}`,
      `  ${ready.kubectl} get websites -A`,
      '',
      'Stop it all and remove its files: npm run demo -- down',
      '',
    ].join('\n'),
  );
  return 0;
}

// ---------------------------------------------------------------------------------------------------------
// keep (the detached keeper)

/** @param {string} dir */
async function keep(dir) {
  const t0 = Date.now();
  writeState(dir, { keeperPid: process.pid });
  const progress = (/** @type {string} */ text) => {
    process.stdout.write(`[keeper +${((Date.now() - t0) / 1000).toFixed(1)}s] ${text}\n`);
    if (process.connected) process.send?.({ type: 'progress', text });
  };
  /** @type {import('./node/real-node.mjs').RealNode | undefined} */
  let node;
  /** @type {import('node:net').Server[]} */
  const servers = [];
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let bridge;
  let reported = false;
  let stopping = false;
  const stop = async (/** @type {number} */ code) => {
    if (stopping) return;
    stopping = true;
    progress('stopping');
    for (const s of servers) s.close();
    bridge?.stdin?.end();
    await node?.stop();
    process.stdout.write(`[keeper] stopped\n`);
    process.exit(code);
  };
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));
  // `up` went away (Ctrl-C) before the page was served: nobody would know to run `down`.
  process.on('disconnect', () => {
    if (!reported) void stop(1);
  });

  try {
    progress('Kubernetes binaries (built once from Go modules and cached; the first build takes minutes)');
    const binDir = buildBinaries();
    progress(`binaries in ${binDir}`);
    const images = await nodeImages(progress);
    progress('starting the node: etcd, kube-apiserver, controllers, containerd, kubelet, kube-proxy (about 30 s)');
    node = await startRealNode({
      binDir,
      images: [images.pause, images.nginx, images.gitSync, images.websiteApiserver],
      pauseImage: images.pause.ref,
      dir: join(dir, 'node'),
      log: progress,
    });
    const n = node;
    writeState(dir, { sandboxPid: n.pid, pidNamespace: readlinkSync(`/proc/${n.pid}/ns/pid`) });
    /** @param {string[]} args @param {string} [input] */
    const kubectl = async (args, input) => {
      const r = await n.kubectl(args, { input, timeoutMs: 60_000 });
      if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
      return r.stdout;
    };
    const until = async (/** @type {string} */ what, /** @type {() => Promise<unknown>} */ check, timeoutMs = 180_000) => {
      const deadline = Date.now() + timeoutMs;
      let last = '';
      for (;;) {
        try {
          const v = await check();
          if (v) return v;
        } catch (e) {
          last = String(/** @type {Error} */ (e).message).slice(0, 300);
        }
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ''}`);
        await sleep(500);
      }
    };

    progress('installing website-apiserver with the Helm chart (deploy/helm/website-apiserver)');
    await dataVolume(n, dir);
    // The Websites' pods run the offline nginx and git-sync images too (nothing can be pulled here).
    const helm = await helmOnNode(n, binDir, dir, ['install', RELEASE, CHART, '--namespace', NAMESPACE, '--create-namespace'], {
      name: 'demo',
      values: chartValues(images),
    });
    if (helm.code !== 0) throw new Error(`helm install exited ${helm.code}: ${helm.stderr}${helm.stdout}`);
    progress(`helm install ${RELEASE} --namespace ${NAMESPACE}: ${/STATUS: (\S+)/.exec(helm.stdout)?.[1] ?? 'done'}`);
    await until('the APIServices Available', async () => {
      const list = JSON.parse(await kubectl(['get', 'apiservices', '-o', 'json'])).items.filter(
        (/** @type {any} */ a) => a.spec.service?.name === RELEASE && a.spec.service?.namespace === NAMESPACE,
      );
      return (
        list.length > 0 &&
        list.every((/** @type {any} */ a) => a.status?.conditions?.some((/** @type {any} */ c) => c.type === 'Available' && c.status === 'True'))
      );
    });
    progress('website-apiserver runs as a pod, and its APIServices are Available');

    // The README's kubia Website, with its repository as a local copy served by the node's git daemon: the
    // sandbox reaches nothing outside this machine.
    const bare = join(n.repoRoot, REPO_NAME);
    await publishSite(bare, join(dir, 'site'));
    const repository = `git://${n.state.nodeIp}/${REPO_NAME}`;
    await kubectl(
      ['apply', '-f', '-'],
      YAML.stringify({ apiVersion: 'extensions.example.com/v1', kind: 'Website', metadata: { name: 'kubia' }, spec: { git: { repository } } }),
    );
    progress(`applied the Website kubia (spec.git.repository ${repository})`);
    const nodePort = /** @type {number} */ (
      await until('the Website kubia Ready', async () => {
        const w = JSON.parse(await kubectl(['get', 'website', 'kubia', '-o', 'json']));
        const ok = w.status?.conditions?.some((/** @type {any} */ c) => c.type === 'Ready' && c.status === 'True');
        return ok && w.status?.nodePort;
      })
    );
    progress(`Website kubia Ready: nginx + git-sync serve it on NodePort ${nodePort}`);

    const apiPort = Number(new URL(n.state.server).port);
    const started = await startBridge(
      n,
      dir,
      [
        { name: 'web', host: n.state.nodeIp, port: nodePort },
        { name: 'api', host: '127.0.0.1', port: apiPort },
      ],
      (m) => process.stdout.write(m),
    );
    bridge = started.child;
    const targets = started.targets;
    writeState(dir, { bridgePid: bridge.pid });
    // The same port numbers on the host when they are free there, so the URL reads like the cluster's.
    const [webPort, hostApiPort] = [await forward(servers, nodePort, targets[0]?.socket ?? ''), await forward(servers, apiPort, targets[1]?.socket ?? '')];
    const url = `http://127.0.0.1:${webPort}/`;
    const kc = YAML.parse(readFileSync(n.state.kubeconfig, 'utf8'));
    for (const c of kc.clusters) c.cluster.server = `https://127.0.0.1:${hostApiPort}`;
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, YAML.stringify(kc), { mode: 0o600 });
    // kube-proxy programs a new NodePort a moment after the endpoints exist: the page is waited for as a user retries.
    await until(`the page at ${url}`, async () => {
      const r = await fetch(url, { signal: AbortSignal.timeout(3000) });
      return r.status === 200 && (await r.text()).includes('Hello from kubia');
    });
    writeState(dir, { url, kubeconfig, kubectl: join(binDir, 'kubectl') });
    progress(`the page is served on the host at ${url}; memory of the node's processes (MiB): ${JSON.stringify(n.rssMiB())}`);
    reported = true;
    process.send?.({ type: 'ready', url, kubeconfig, kubectl: join(binDir, 'kubectl') });
    process.disconnect?.();
  } catch (e) {
    const err = /** @type {Error} */ (e);
    process.stdout.write(`[keeper] failed: ${err.stack ?? err}\n`);
    if (process.connected) process.send?.({ type: 'failed', error: err.message.split('\n')[0] });
    await stop(1);
  }
}

/** publishSite makes the bare repository the Website clones, with the page on its main branch. */
async function publishSite(/** @type {string} */ bare, /** @type {string} */ work) {
  const git = (/** @type {string} */ cwd, /** @type {string[]} */ ...args) =>
    new Promise((res, rej) => {
      const p = spawn('git', ['-c', 'user.name=demo', '-c', 'user.email=demo@example.invalid', '-c', 'init.defaultBranch=main', ...args], {
        cwd,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      p.stderr.on('data', (b) => (err += b));
      p.on('close', (code) => (code === 0 ? res(undefined) : rej(new Error(`git ${args.join(' ')}: ${err}`))));
    });
  mkdirSync(bare, { recursive: true });
  mkdirSync(work, { recursive: true });
  await git(bare, 'init', '-q', '--bare');
  await git(bare, 'symbolic-ref', 'HEAD', 'refs/heads/main');
  await git(work, 'init', '-q');
  writeFileSync(join(work, 'index.html'), PAGE);
  await git(work, 'add', 'index.html');
  await git(work, 'commit', '-q', '-m', 'kubia page');
  await git(work, 'push', '-q', bare, 'HEAD:refs/heads/main');
}

// ---------------------------------------------------------------------------------------------------------
// down

/**
 * down stops the keeper (which ends the sandbox and everything in it), checks that nothing of it is left and
 * removes the state folder.
 * @param {string} dir
 * @param {(m: string) => void} say
 */
async function down(dir, say) {
  const state = readState(dir);
  if (!state && !existsSync(dir)) {
    say(`nothing to tear down (no ${dir})`);
    return 0;
  }
  if (state && isKeeper(state.keeperPid, dir)) {
    say(`stopping the keeper (pid ${state.keeperPid}) and the node`);
    process.kill(state.keeperPid, 'SIGTERM');
    for (let i = 0; i < 600 && alive(state.keeperPid); i++) await sleep(100);
    if (alive(state.keeperPid)) {
      say('the keeper did not stop in 60 s: killing it and the sandbox');
      if (alive(state.sandboxPid)) process.kill(/** @type {number} */ (state.sandboxPid), 'SIGKILL');
      process.kill(state.keeperPid, 'SIGKILL');
    }
  }
  // The sandbox's PID 1 ends when the keeper does (its stdin closes); the kernel then ends the rest of its namespace.
  for (let i = 0; i < 300 && leftInSandbox(state).length > 0; i++) await sleep(100);
  const left = leftInSandbox(state);
  if (left.length) {
    say(`processes of the sandbox still running: ${left.join(' ')}`);
    return 1;
  }
  removeStaleCgroups(say);
  rmSync(dir, { recursive: true, force: true });
  say(`down: nothing of the demo runs any more; removed ${dir}`);
  return 0;
}

/** leftInSandbox lists the pids still in the sandbox's PID namespace, and the keeper, the sandbox and the bridge. */
function leftInSandbox(/** @type {DemoState | undefined} */ state) {
  if (!state) return [];
  const left = [state.keeperPid, state.sandboxPid, state.bridgePid].filter((p) => p !== undefined && alive(p) && p !== process.pid);
  if (!state.pidNamespace) return left;
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readlinkSync(`/proc/${e}/ns/pid`) === state.pidNamespace) left.push(Number(e));
    } catch {
      /* exited meanwhile */
    }
  }
  return [...new Set(left)];
}

// ---------------------------------------------------------------------------------------------------------

const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'state-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
const [command, ...rest] = positionals;
const usage = 'usage: npm run demo -- up|down [--state-dir DIR]   (default DIR: ~/.cache/website-apiserver/demo)\n';
const dir = resolve(values['state-dir'] ?? defaultStateDir());
if (values.help) {
  process.stdout.write(usage);
} else if (command === 'up') {
  process.exitCode = await up(dir);
} else if (command === 'down') {
  process.exitCode = await down(dir, (m) => process.stdout.write(`[demo] ${m}\n`));
} else if (command === 'keep' && rest[0]) {
  await keep(resolve(rest[0]));
} else {
  process.stderr.write(usage);
  process.exitCode = 2;
}
