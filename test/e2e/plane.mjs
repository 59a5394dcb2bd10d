// @ts-check
/**
 * @module test/e2e/plane
 * A real Kubernetes control plane for the e2e suite: etcd, kube-apiserver and kube-controller-manager
 * (garbage collector, namespace deletion, ClusterRole aggregation) on free loopback ports, with
 * certificates and tokens of its own, all under one directory.
 *
 * Plain ESM with JSDoc types so that `node` runs it directly (`node test/e2e/plane.mjs up`) and vitest's
 * globalSetup imports it without a compile step; test/tsconfig.json type-checks it (checkJs).
 *
 * Layout of `dir`: pki/ (CAs, serving and front-proxy certs, service-account keys), tokens.csv,
 * *.kubeconfig, etcd-data/, kube-apiserver/ (its --cert-dir), logs/*.log, plane.json (what `up` started).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import forge from 'node-forge';
import YAML from 'yaml';

const pki = forge.pki;
const HERE = dirname(fileURLToPath(import.meta.url));
/** BUILD_SCRIPT builds (once, cached) the four e2e binaries and prints their folder as its last line. */
export const BUILD_SCRIPT = join(HERE, 'scripts', 'build-binaries.sh');

/**
 * DEFAULT_CONTROLLERS run in kube-controller-manager. The aggregation controller is there because
 * ClusterRoles labelled `rbac.authorization.k8s.io/aggregate-to-view` etc. only reach `view`/`edit`/`admin`
 * through it; without it a user bound to `view` would never see websites.
 */
export const DEFAULT_CONTROLLERS = Object.freeze(['namespace-controller', 'garbage-collector-controller', 'clusterrole-aggregation-controller']);

/** FRONT_PROXY_CLIENT_NAME is the CN of the front-proxy client cert and kube-apiserver's only allowed name. */
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';

/** REQUEST_HEADERS are the header names kube-apiserver publishes (and uses when proxying to us). */
export const REQUEST_HEADERS = Object.freeze({
  username: 'X-Remote-User',
  group: 'X-Remote-Group',
  extraPrefix: 'X-Remote-Extra-',
  uid: 'X-Remote-Uid',
});

/**
 * @typedef {object} PlaneOptions
 * @property {string} binDir folder with etcd, kube-apiserver and kube-controller-manager (see buildBinaries)
 * @property {string} [dir] working directory (created if missing); a new temp dir when omitted
 * @property {(msg: string) => void} [log] progress messages
 * @property {readonly string[]} [controllers] kube-controller-manager --controllers (default DEFAULT_CONTROLLERS)
 * @property {string[]} [apiserverArgs] extra kube-apiserver flags, appended last (so they win)
 * @property {string[]} [controllerManagerArgs] extra kube-controller-manager flags, appended last
 * @property {number} [timeoutMs] per-component start timeout (default 120 s; a cold start on 2 cores is ~10 s)
 * @property {boolean} [etcdFsync] fsync etcd's commits as a production member does (default false: test data is
 *   disposable); the benchmark turns it on so the CRD baseline is as durable as our lmdb store
 * @property {boolean} [controllerManager] start kube-controller-manager (default true)
 */

/**
 * @typedef {object} TokenUser
 * @property {string} user user name in tokens.csv
 * @property {string} token bearer token
 * @property {string[]} groups groups in tokens.csv (kube-apiserver adds system:authenticated)
 * @property {string} kubeconfig kubeconfig using this token against `server`
 */

/**
 * @typedef {object} FrontProxy
 * @property {string} caFile --requestheader-client-ca-file
 * @property {string} certFile client cert (CN front-proxy-client, clientAuth) kube-apiserver uses to reach us
 * @property {string} keyFile its key
 * @property {string[]} allowedNames --requestheader-allowed-names
 * @property {typeof REQUEST_HEADERS} headers the request-header names
 */

/**
 * @typedef {object} Ports
 * @property {number} etcdClient
 * @property {number} etcdPeer
 * @property {number} apiserver
 * @property {number} controllerManager
 */

/**
 * @typedef {object} Timings milliseconds; each component from its spawn until ready
 * @property {number} certs
 * @property {number} etcd
 * @property {number} apiserver
 * @property {number} controllerManager
 * @property {number} total
 */

/**
 * @typedef {object} ControlPlane
 * @property {string} dir
 * @property {string} binDir
 * @property {string} server kube-apiserver URL, https://127.0.0.1:<port>
 * @property {string} etcdUrl
 * @property {string} caFile CA that signed kube-apiserver's serving cert (also its --client-ca-file)
 * @property {string} caKeyFile key of caFile, to sign client certs kube-apiserver accepts
 * @property {string} clientCAFile --client-ca-file (same CA as caFile)
 * @property {string} kubeconfig admin kubeconfig (token of user admin in system:masters)
 * @property {{admin: TokenUser, viewer: TokenUser, nobody: TokenUser}} tokens
 * @property {FrontProxy} frontProxy
 * @property {{publicKeyFile: string, privateKeyFile: string}} serviceAccount
 * @property {Ports} ports
 * @property {{etcd: string, apiserver: string, controllerManager: string}} logs
 * @property {{etcd: number, apiserver: number, controllerManager: number}} pids
 * @property {Timings} timings
 * @property {() => {etcd?: number, apiserver?: number, controllerManager?: number}} rssMiB resident memory now (Linux)
 * @property {(opts?: {remove?: boolean}) => Promise<void>} stop SIGTERM (SIGKILL after 5 s); remove deletes dir
 * @property {() => Promise<number>} restartApiserver stops kube-apiserver (SIGTERM) and starts it again with the
 *   same flags and port; resolves with the milliseconds from the new spawn until /readyz answers 200
 */

/**
 * buildBinaries runs test/e2e/scripts/build-binaries.sh (a no-op when cached) and returns the folder holding
 * the binaries. Build output goes to stderr.
 * @returns {string}
 */
export function buildBinaries() {
  const out = execFileSync('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const lines = out.trim().split('\n');
  const binDir = lines[lines.length - 1] ?? '';
  for (const b of ['etcd', 'kube-apiserver', 'kube-controller-manager']) {
    if (!existsSync(join(binDir, b))) throw new Error(`${BUILD_SCRIPT} printed ${binDir}, which has no ${b}`);
  }
  return binDir;
}

// ---------------------------------------------------------------------------------------------------------
// Certificates

/**
 * @typedef {object} Issued
 * @property {import('node-forge').pki.Certificate} cert
 * @property {import('node-forge').pki.rsa.PrivateKey} key
 * @property {string} certPem
 * @property {string} keyPem
 */

/**
 * @typedef {object} CertSpec
 * @property {string} cn
 * @property {string[]} [orgs]
 * @property {Issued} [issuer] absent: self-signed CA
 * @property {'serverAuth' | 'clientAuth'} [usage] leaves only
 * @property {string[]} [sans] DNS names or IPv4 addresses
 */

/**
 * issue creates an RSA key and a certificate for it: a self-signed CA without `issuer`, else a leaf.
 * forge's synchronous keygen uses Node's native RSA, so this takes ~100 ms.
 * @param {CertSpec} spec
 * @returns {Issued}
 */
function issue(spec) {
  const keys = pki.rsa.generateKeyPair({ bits: 2048 });
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  // A leading 0x01 keeps the DER integer positive, which Go's x509 parser insists on.
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  // Backdated so a clock that is a little behind still accepts a certificate made a moment ago.
  cert.validity.notBefore = new Date(Date.now() - 5 * 60_000);
  cert.validity.notAfter = new Date(Date.now() + (spec.issuer ? 365 : 3650) * 86_400_000);
  const subject = [...(spec.orgs ?? []).map((value) => ({ shortName: 'O', value })), { shortName: 'CN', value: spec.cn }];
  cert.setSubject(subject);
  cert.setIssuer(spec.issuer ? spec.issuer.cert.subject.attributes : subject);
  /** @type {any[]} */
  const extensions = [];
  if (!spec.issuer) {
    extensions.push(
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    );
  } else {
    extensions.push(
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', [spec.usage ?? 'clientAuth']: true },
      { name: 'authorityKeyIdentifier', keyIdentifier: spec.issuer.cert.generateSubjectKeyIdentifier().getBytes() },
    );
    if (spec.sans?.length) {
      extensions.push({
        name: 'subjectAltName',
        altNames: spec.sans.map((s) => (net.isIPv4(s) ? { type: 7, ip: s } : { type: 2, value: s })),
      });
    }
  }
  cert.setExtensions(extensions);
  cert.sign(spec.issuer ? spec.issuer.key : keys.privateKey, forge.md.sha256.create());
  return { cert, key: keys.privateKey, certPem: lf(pki.certificateToPem(cert)), keyPem: lf(pki.privateKeyToPem(keys.privateKey)) };
}

/**
 * lf turns forge's CRLF PEM into the LF form every other tool writes (and kube-apiserver republishes).
 * @param {string} pem
 */
const lf = (pem) => pem.replace(/\r\n/g, '\n');

/**
 * @param {string} path
 * @param {string} content
 * @param {number} [mode]
 */
function write(path, content, mode = 0o644) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content, { mode });
}

/**
 * kubeconfigFor renders a kubeconfig that trusts `caPem` and authenticates with a bearer token.
 * @param {string} server
 * @param {string} caPem
 * @param {string} user
 * @param {string} token
 * @returns {string}
 */
function kubeconfigFor(server, caPem, user, token) {
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'e2e', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: user, context: { cluster: 'e2e', user, namespace: 'default' } }],
    'current-context': user,
  });
}

// ---------------------------------------------------------------------------------------------------------
// Ports, processes, readiness

/**
 * freePorts reserves n distinct loopback ports by listening on port 0, holding them all until every one is
 * known so the same port is not handed out twice, then releases them for the components to bind.
 * @param {number} n
 * @returns {Promise<number[]>}
 */
export async function freePorts(n) {
  /** @type {net.Server[]} */
  const servers = [];
  try {
    for (let i = 0; i < n; i++) {
      const s = net.createServer();
      servers.push(s);
      await new Promise((res, rej) => {
        s.once('error', rej);
        s.listen(0, '127.0.0.1', () => res(undefined));
      });
    }
    return servers.map((s) => /** @type {net.AddressInfo} */ (s.address()).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((res) => s.close(() => res(undefined)))));
  }
}

/** @param {number} ms */
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

/**
 * tail returns the last lines of a log file (for error messages).
 * @param {string} path
 * @param {number} [lines]
 */
function tail(path, lines = 40) {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * get does one GET and resolves with status and body; errors (refused, TLS, timeout) reject.
 * @param {string} url
 * @param {{ca?: string, token?: string}} [o]
 * @returns {Promise<{status: number, body: string}>}
 */
function get(url, o = {}) {
  return new Promise((res, rej) => {
    const mod = url.startsWith('https:') ? https : http;
    /** @type {https.RequestOptions} */
    const opts = { method: 'GET', timeout: 5000, headers: {} };
    if (o.ca) opts.ca = o.ca;
    if (o.token) opts.headers = { Authorization: `Bearer ${o.token}` };
    const req = mod.request(url, opts, (r) => {
      let body = '';
      r.setEncoding('utf8');
      r.on('data', (c) => (body += c));
      r.on('end', () => res({ status: r.statusCode ?? 0, body }));
      r.on('error', rej);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', rej);
    req.end();
  });
}

/**
 * @typedef {object} Running
 * @property {import('node:child_process').ChildProcess} proc
 * @property {Promise<void>} exited resolves when the process is gone
 */

/**
 * launch spawns a binary with stdout and stderr appended to logPath (exported for the benchmark's servers).
 * @param {string} bin
 * @param {string[]} args
 * @param {string} logPath
 * @returns {Running}
 */
export function launch(bin, args, logPath) {
  mkdirSync(dirname(logPath), { recursive: true });
  const fd = openSync(logPath, 'a');
  writeFileSync(fd, `\n=== ${new Date().toISOString()} ${bin} ${args.join(' ')}\n`);
  try {
    const proc = spawn(bin, args, { stdio: ['ignore', fd, fd] });
    const exited = new Promise((res) => {
      if (proc.exitCode !== null || proc.signalCode !== null) res(undefined);
      proc.once('exit', () => res(undefined));
      // A spawn failure (ENOENT, EACCES) emits 'error' and never 'exit'.
      proc.once('error', () => res(undefined));
    });
    return { proc, exited: exited.then(() => undefined) };
  } finally {
    closeSync(fd); // the child has its own copy
  }
}

/**
 * terminate sends SIGTERM, then SIGKILL if the process is still there after graceMs.
 * @param {Running} r
 * @param {number} [graceMs]
 */
export async function terminate(r, graceMs = 5000) {
  if (r.proc.exitCode !== null || r.proc.signalCode !== null || r.proc.pid === undefined) return;
  r.proc.kill('SIGTERM');
  const killed = await Promise.race([r.exited.then(() => false), sleep(graceMs).then(() => true)]);
  if (killed) {
    r.proc.kill('SIGKILL');
    await r.exited;
  }
}

/**
 * @typedef {object} ComponentSpec
 * @property {string} name for messages
 * @property {string} bin
 * @property {number} portCount how many free ports args needs
 * @property {(ports: number[]) => string[]} args
 * @property {string} logPath
 * @property {(ports: number[]) => Promise<boolean>} ready one readiness probe; true when ready
 * @property {number} timeoutMs
 */

/**
 * startComponent launches a component and polls `ready` until it says yes, the process exits, or time runs
 * out. When the log says a port was taken (another process grabbed it between our probe and the bind), it
 * tries once more with new ports. Failures throw with the tail of the log.
 * @param {ComponentSpec} c
 * @returns {Promise<{running: Running, ports: number[], ms: number}>}
 */
async function startComponent(c) {
  for (let attempt = 1; ; attempt++) {
    const ports = await freePorts(c.portCount);
    const started = Date.now();
    const running = launch(c.bin, c.args(ports), c.logPath);
    let gone = false;
    void running.exited.then(() => (gone = true));
    /** @type {string} */
    let why;
    for (;;) {
      let ok = false;
      try {
        ok = await c.ready(ports);
      } catch {
        ok = false; // not listening yet
      }
      if (ok) return { running, ports, ms: Date.now() - started };
      if (gone) {
        why = `exited (code ${running.proc.exitCode}, signal ${running.proc.signalCode})`;
        break;
      }
      if (Date.now() - started > c.timeoutMs) {
        why = `not ready after ${c.timeoutMs} ms`;
        break;
      }
      await sleep(150);
    }
    await terminate(running, 2000);
    const log = tail(c.logPath);
    if (attempt === 1 && /address already in use/i.test(log)) continue;
    throw new Error(`${c.name} failed to start: ${why}\n--- last lines of ${c.logPath} ---\n${log}`);
  }
}

/**
 * @typedef {object} ProcessMemory MiB, from /proc/<pid>/status
 * @property {number} rss VmRSS
 * @property {number} anon RssAnon (heap, stacks)
 * @property {number} file RssFile (mapped files: database pages, the binary)
 */

/**
 * processMemory reads a process's resident memory (undefined off Linux or when it is gone).
 * @param {number | undefined} pid
 * @returns {ProcessMemory | undefined}
 */
export function processMemory(pid) {
  if (!pid) return undefined;
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    /** @param {string} k */
    const mib = (k) => Math.round((Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) / 1024) * 10) / 10;
    return { rss: mib('VmRSS'), anon: mib('RssAnon'), file: mib('RssFile') };
  } catch {
    return undefined;
  }
}

// USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 1/100 s on Linux.
const TICK_MS = 10;

/**
 * processCpuMs is the CPU time (user + system, every thread) a process has used so far, in ms (NaN off Linux or
 * when it is gone).
 * @param {number | undefined} pid
 */
export function processCpuMs(pid) {
  if (!pid) return NaN;
  try {
    // Fields after the command name (which may hold spaces, hence the last ')'): utime and stime are the 12th and 13th.
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').pop()?.split(' ') ?? [];
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return NaN;
  }
}

/**
 * rssMiB is a process's resident set size in whole MiB.
 * @param {number | undefined} pid
 */
const rssMiB = (pid) => {
  const m = processMemory(pid);
  return m && !Number.isNaN(m.rss) ? Math.round(m.rss) : undefined;
};

// ---------------------------------------------------------------------------------------------------------
// The plane

/**
 * startControlPlane writes certificates, tokens and kubeconfigs under `dir`, then starts etcd,
 * kube-apiserver (ready: /readyz 200 and namespace `default` exists) and kube-controller-manager (ready:
 * every named controller started and the garbage collector synced). If a component fails, the ones
 * already running are stopped and the error carries the tail of the failing component's log.
 * @param {PlaneOptions} o
 * @returns {Promise<ControlPlane>}
 */
export async function startControlPlane(o) {
  const t0 = Date.now();
  const log = o.log ?? (() => {});
  const dir = resolve(o.dir ?? mkdtempSync(join(tmpdir(), 'website-e2e-plane-')));
  const binDir = resolve(o.binDir);
  const timeoutMs = o.timeoutMs ?? 120_000;
  /** @param {...string} parts */
  const p = (...parts) => join(dir, ...parts);
  mkdirSync(dir, { recursive: true });

  // Certificates. The cluster CA both signs kube-apiserver's serving cert and verifies client certs.
  const ca = issue({ cn: 'e2e-cluster-ca' });
  const serving = issue({
    cn: 'kube-apiserver',
    issuer: ca,
    usage: 'serverAuth',
    sans: ['127.0.0.1', 'localhost', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', '10.0.0.1'],
  });
  const proxyCa = issue({ cn: 'e2e-front-proxy-ca' });
  const proxyClient = issue({ cn: FRONT_PROXY_CLIENT_NAME, issuer: proxyCa, usage: 'clientAuth' });
  const sa = pki.rsa.generateKeyPair({ bits: 2048 });
  const files = {
    ca: p('pki', 'ca.crt'),
    caKey: p('pki', 'ca.key'),
    serving: p('pki', 'kube-apiserver.crt'),
    servingKey: p('pki', 'kube-apiserver.key'),
    proxyCa: p('pki', 'front-proxy-ca.crt'),
    proxyCaKey: p('pki', 'front-proxy-ca.key'),
    proxyClient: p('pki', 'front-proxy-client.crt'),
    proxyClientKey: p('pki', 'front-proxy-client.key'),
    saPub: p('pki', 'sa.pub'),
    saKey: p('pki', 'sa.key'),
    tokens: p('tokens.csv'),
  };
  write(files.ca, ca.certPem);
  write(files.caKey, ca.keyPem, 0o600);
  write(files.serving, serving.certPem);
  write(files.servingKey, serving.keyPem, 0o600);
  write(files.proxyCa, proxyCa.certPem);
  write(files.proxyCaKey, proxyCa.keyPem, 0o600);
  write(files.proxyClient, proxyClient.certPem);
  write(files.proxyClientKey, proxyClient.keyPem, 0o600);
  write(files.saPub, lf(pki.publicKeyToPem(sa.publicKey)));
  write(files.saKey, lf(pki.privateKeyToPem(sa.privateKey)), 0o600);

  // Token users: admin is cluster-admin through system:masters; viewer and nobody have no groups, so any
  // permission they get comes from bindings the tests create.
  /** @type {Record<'admin' | 'viewer' | 'nobody', string[]>} */
  const userGroups = { admin: ['system:masters'], viewer: [], nobody: [] };
  /** @type {Record<string, string>} */
  const tokenOf = {};
  const csv = Object.entries(userGroups).map(([user, groups]) => {
    tokenOf[user] = randomBytes(24).toString('hex');
    return `${tokenOf[user]},${user},${user}-uid${groups.length ? `,"${groups.join(',')}"` : ''}`;
  });
  write(files.tokens, `${csv.join('\n')}\n`, 0o600);
  const timings = { certs: Date.now() - t0, etcd: 0, apiserver: 0, controllerManager: 0, total: 0 };
  log(`certificates and tokens written to ${dir} in ${timings.certs} ms`);

  const logs = {
    etcd: p('logs', 'etcd.log'),
    apiserver: p('logs', 'kube-apiserver.log'),
    controllerManager: p('logs', 'kube-controller-manager.log'),
  };
  /** @type {Running[]} */
  const started = [];
  const stopAll = async () => {
    // Reverse order: clients before etcd, so they do not spend their grace period retrying it.
    for (const r of started.splice(0).reverse()) await terminate(r);
  };

  try {
    // etcd: one member on loopback, no fsync (test data is disposable).
    const etcd = await startComponent({
      name: 'etcd',
      bin: join(binDir, 'etcd'),
      portCount: 2,
      args: ([client, peer]) => [
        '--name=e2e',
        `--data-dir=${p('etcd-data')}`,
        `--listen-client-urls=http://127.0.0.1:${client}`,
        `--advertise-client-urls=http://127.0.0.1:${client}`,
        `--listen-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${peer}`,
        `--initial-cluster=e2e=http://127.0.0.1:${peer}`,
        ...(o.etcdFsync ? [] : ['--unsafe-no-fsync=true']),
        '--log-level=warn',
      ],
      logPath: logs.etcd,
      ready: async ([client]) => {
        const r = await get(`http://127.0.0.1:${client}/health`);
        return r.status === 200 && JSON.parse(r.body).health === 'true';
      },
      timeoutMs,
    });
    started.push(etcd.running);
    timings.etcd = etcd.ms;
    const [etcdClient = 0, etcdPeer = 0] = etcd.ports;
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    log(`etcd ready at ${etcdUrl} in ${etcd.ms} ms`);

    /** @type {ComponentSpec} */
    const kasSpec = {
      name: 'kube-apiserver',
      bin: join(binDir, 'kube-apiserver'),
      portCount: 1,
      args: ([port]) => [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        // Without it kube-apiserver looks for a default route and dies in a sandbox that has none; with a
        // loopback address the Endpoints reconciler would be rejected, hence endpoint-reconciler-type=none.
        '--advertise-address=127.0.0.1',
        '--endpoint-reconciler-type=none',
        `--secure-port=${port}`,
        `--cert-dir=${p('kube-apiserver')}`,
        `--tls-cert-file=${files.serving}`,
        `--tls-private-key-file=${files.servingKey}`,
        `--client-ca-file=${files.ca}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--service-account-issuer=https://kubernetes.default.svc',
        `--service-account-key-file=${files.saPub}`,
        `--service-account-signing-key-file=${files.saKey}`,
        `--token-auth-file=${files.tokens}`,
        '--authorization-mode=RBAC',
        `--requestheader-client-ca-file=${files.proxyCa}`,
        `--requestheader-allowed-names=${FRONT_PROXY_CLIENT_NAME}`,
        // kube-apiserver has no defaults for these (aggregated servers do), so they must be spelled out.
        `--requestheader-username-headers=${REQUEST_HEADERS.username}`,
        `--requestheader-group-headers=${REQUEST_HEADERS.group}`,
        `--requestheader-extra-headers-prefix=${REQUEST_HEADERS.extraPrefix}`,
        `--requestheader-uid-headers=${REQUEST_HEADERS.uid}`,
        `--proxy-client-cert-file=${files.proxyClient}`,
        `--proxy-client-key-file=${files.proxyClientKey}`,
        // Route to the APIService's Service (an ExternalName to localhost works), not to Endpoints, which
        // cannot hold loopback addresses.
        '--enable-aggregator-routing=false',
        '--v=1',
        ...(o.apiserverArgs ?? []),
      ],
      logPath: logs.apiserver,
      ready: async ([port]) => {
        const base = `https://127.0.0.1:${port}`;
        const auth = { ca: ca.certPem, token: tokenOf.admin };
        if ((await get(`${base}/readyz`, auth)).status !== 200) return false;
        // testserver.go waits for this too: the system namespaces are created by a post-start hook that
        // can lag behind /readyz.
        return (await get(`${base}/api/v1/namespaces/default`, auth)).status === 200;
      },
      timeoutMs,
    };
    const kas = await startComponent(kasSpec);
    started.push(kas.running);
    timings.apiserver = kas.ms;
    const [apiserverPort = 0] = kas.ports;
    const server = `https://127.0.0.1:${apiserverPort}`;
    log(`kube-apiserver ready at ${server} in ${kas.ms} ms`);

    /** @type {(user: 'admin' | 'viewer' | 'nobody') => TokenUser} */
    const tokenUser = (user) => {
      const kubeconfig = p(`${user}.kubeconfig`);
      write(kubeconfig, kubeconfigFor(server, ca.certPem, user, tokenOf[user] ?? ''), 0o600);
      return { user, token: tokenOf[user] ?? '', groups: userGroups[user], kubeconfig };
    };
    const tokens = { admin: tokenUser('admin'), viewer: tokenUser('viewer'), nobody: tokenUser('nobody') };

    // kube-controller-manager: all controllers act as admin (no --use-service-account-credentials). Its
    // secure port only serves /healthz and /metrics; it must be free, as 0 would disable it.
    const controllers = o.controllers ?? DEFAULT_CONTROLLERS;
    const named = controllers.filter((c) => c !== '*' && !c.startsWith('-'));
    const withGc =
      (controllers.includes('*') || controllers.includes('garbage-collector-controller')) && !controllers.includes('-garbage-collector-controller');
    const logLengthBefore = existsSync(logs.controllerManager) ? readFileSync(logs.controllerManager).length : 0;
    const kcm =
      o.controllerManager === false
        ? undefined
        : await startComponent({
            name: 'kube-controller-manager',
            bin: join(binDir, 'kube-controller-manager'),
            portCount: 1,
            args: ([port]) => [
              `--kubeconfig=${tokens.admin.kubeconfig}`,
              '--leader-elect=false',
              `--controllers=${controllers.join(',')}`,
              '--bind-address=127.0.0.1',
              `--secure-port=${port}`,
              `--cert-dir=${p('kube-controller-manager')}`,
              '--v=1',
              ...(o.controllerManagerArgs ?? []),
            ],
            logPath: logs.controllerManager,
            ready: async () => {
              // Only this run's part of the log counts (the file is appended to across runs in the same dir).
              const text = readFileSync(logs.controllerManager, 'utf8').slice(logLengthBefore);
              if (!named.every((c) => text.includes(`"Controller starting..." controller="${c}"`))) return false;
              if (!withGc || text.includes('all resource monitors have synced')) return true;
              // The GC gives up waiting after a timeout and runs anyway; usable, but worth a line.
              if (text.includes('not all resource monitors could be synced')) {
                log('kube-controller-manager: garbage collector proceeded without syncing every monitor');
                return true;
              }
              return false;
            },
            timeoutMs,
          });
    if (kcm) started.push(kcm.running);
    timings.controllerManager = kcm?.ms ?? 0;
    timings.total = Date.now() - t0;
    log(kcm ? `kube-controller-manager ready in ${kcm.ms} ms (plane up in ${timings.total} ms)` : `plane up in ${timings.total} ms`);

    const running = { etcd: etcd.running, apiserver: kas.running, controllerManager: kcm?.running };
    /** @type {ControlPlane} */
    const plane = {
      dir,
      binDir,
      server,
      etcdUrl,
      caFile: files.ca,
      caKeyFile: files.caKey,
      clientCAFile: files.ca,
      kubeconfig: tokens.admin.kubeconfig,
      tokens,
      frontProxy: {
        caFile: files.proxyCa,
        certFile: files.proxyClient,
        keyFile: files.proxyClientKey,
        allowedNames: [FRONT_PROXY_CLIENT_NAME],
        headers: REQUEST_HEADERS,
      },
      serviceAccount: { publicKeyFile: files.saPub, privateKeyFile: files.saKey },
      ports: { etcdClient, etcdPeer, apiserver: apiserverPort, controllerManager: kcm?.ports[0] ?? 0 },
      logs,
      pids: {
        etcd: running.etcd.proc.pid ?? 0,
        apiserver: running.apiserver.proc.pid ?? 0,
        controllerManager: running.controllerManager?.proc.pid ?? 0,
      },
      timings,
      rssMiB: () => ({
        etcd: rssMiB(running.etcd.proc.pid),
        apiserver: rssMiB(running.apiserver.proc.pid),
        controllerManager: rssMiB(running.controllerManager?.proc.pid),
      }),
      restartApiserver: async () => {
        const i = started.indexOf(running.apiserver);
        await terminate(running.apiserver);
        const t = Date.now();
        running.apiserver = launch(kasSpec.bin, kasSpec.args(kas.ports), kasSpec.logPath);
        started.splice(i, 1, running.apiserver);
        plane.pids.apiserver = running.apiserver.proc.pid ?? 0;
        // Polled finely (not startComponent's 150 ms): the benchmark reports this figure.
        for (;;) {
          const r = await get(`${server}/readyz`, { ca: ca.certPem, token: tokenOf.admin }).catch(() => undefined);
          if (r?.status === 200) return Date.now() - t;
          if (running.apiserver.proc.exitCode !== null) throw new Error(`kube-apiserver exited on restart\n${tail(logs.apiserver)}`);
          if (Date.now() - t > timeoutMs) throw new Error(`kube-apiserver not ready ${timeoutMs} ms after restart`);
          await sleep(10);
        }
      },
      stop: async (opts = {}) => {
        await stopAll();
        if (opts.remove) rmSync(dir, { recursive: true, force: true });
      },
    };
    // For tools that attach to a plane started elsewhere (e.g. by `npm run e2e:plane`).
    const { rssMiB: _r, stop: _s, restartApiserver: _ra, ...described } = plane;
    write(p('plane.json'), `${JSON.stringify(described, null, 2)}\n`, 0o600); // holds the tokens
    return plane;
  } catch (err) {
    await stopAll();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------
// CLI: node test/e2e/plane.mjs up [--dir D] [--bin-dir B] [--rm]

/** @param {string[]} argv */
async function main(argv) {
  const [cmd, ...rest] = argv;
  if (cmd !== 'up') {
    process.stderr.write('usage: node test/e2e/plane.mjs up [--dir DIR] [--bin-dir DIR] [--rm]\n');
    process.exit(2);
  }
  /** @type {{dir?: string, binDir?: string, rm: boolean}} */
  const flags = { rm: false };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i] ?? '';
    const [name, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = () => inline ?? rest[++i] ?? '';
    if (name === '--dir') flags.dir = value();
    else if (name === '--bin-dir') flags.binDir = value();
    else if (name === '--rm') flags.rm = true;
    else {
      process.stderr.write(`unknown flag ${a}\n`);
      process.exit(2);
    }
  }
  const say = (/** @type {string} */ m) => process.stderr.write(`[plane] ${m}\n`);
  const binDir = flags.binDir ?? buildBinaries();
  const plane = await startControlPlane({ binDir, dir: flags.dir, log: say });
  const rss = plane.rssMiB();
  say(`server ${plane.server}`);
  say(`viewer kubeconfig ${plane.tokens.viewer.kubeconfig}, nobody kubeconfig ${plane.tokens.nobody.kubeconfig}`);
  say(`RSS MiB: etcd ${rss.etcd}, kube-apiserver ${rss.apiserver}, kube-controller-manager ${rss.controllerManager}`);
  say(`logs in ${dirname(plane.logs.etcd)}; Ctrl-C stops the plane`);
  process.stdout.write(`${plane.kubeconfig}\n`);

  let stopping = false;
  /** @param {NodeJS.Signals} sig */
  const onSignal = (sig) => {
    if (stopping) return;
    stopping = true;
    say(`${sig}: stopping`);
    plane.stop({ remove: flags.rm }).then(
      () => process.exit(0),
      (e) => {
        say(String(e));
        process.exit(1);
      },
    );
  };
  for (const sig of /** @type {NodeJS.Signals[]} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) process.on(sig, onSignal);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((e) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
