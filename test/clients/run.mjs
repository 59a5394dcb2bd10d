#!/usr/bin/env node
/**
 * @module clients/run
 * The multi-language client suites (issue 13): the official Python client, in its current and its classic
 * generation, and fabric8 (Java), each a program that drives the Website resource and prints one JSON line per
 * check. This module prepares their environments once and runs them:
 * - Python: a venv per requirements file in $WEBSITE_CLIENTS_CACHE_DIR (default
 *   ~/.cache/website-apiserver/clients)/python-<hash>, keyed by the pinned requirements and the interpreter's
 *   version, so a clean clone reuses it and a pin bump makes a new one;
 * - Java: the shaded jar of test/clients/java built by `mvn -q -B package` into .../java-<hash>, keyed by the pom,
 *   the sources and the JDK's version (Maven's own ~/.m2 caches the dependencies).
 * A missing python3 (or `python3 -m venv`), java or mvn skips that suite with one printed line; a failed install
 * or build is an error.
 *
 * CLI:
 *   node test/clients/run.mjs prepare                              build what is missing, print the suites as JSON
 *   node test/clients/run.mjs run --kubeconfig K --namespace N [--suite ID]
 *   node test/clients/run.mjs crd [--suite ID]                     the same suites against kube-apiserver serving the
 *                                                                  Website as a CRD (the e2e binaries must be built):
 *                                                                  what the checks expect is what kube answers
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const REPO = resolve(HERE, '../..');

/** The checks every suite reports, in order (the programs define them; a wrapper asserts none went missing). */
export const COMMON_CHECKS = [
  'create',
  'create-conflict',
  'create-invalid',
  'get',
  'get-missing',
  'list-label-selector',
  'list-pagination',
  'update',
  'watch-resume',
  'informer',
  'patch-merge',
  'patch-json',
  'patch-json-test',
  'patch-apply',
  'patch-apply-create',
  'patch-strategic-refused',
  'status-replace',
  'status-patch',
  'status-apply',
  'scale-read',
  'scale-patch',
  'scale-apply',
  'delete',
];

/**
 * @typedef {object} SuiteDef
 * @property {string} id
 * @property {string} label
 * @property {'python' | 'java'} kind
 * @property {string[]} checks
 * @property {string} [requirements] Python: the requirements file under python/
 */

/** @type {SuiteDef[]} */
export const SUITES = [
  {
    id: 'python',
    label: 'Python kubernetes 37 (current client)',
    kind: 'python',
    requirements: 'requirements.txt',
    checks: [...COMMON_CHECKS, 'dynamic-discovery'],
  },
  {
    id: 'python-classic',
    label: 'Python kubernetes 36 (classic client)',
    kind: 'python',
    requirements: 'requirements-classic.txt',
    checks: [...COMMON_CHECKS, 'dynamic-discovery'],
  },
  {
    id: 'fabric8',
    label: 'Java fabric8 kubernetes-client 7',
    kind: 'java',
    checks: [...COMMON_CHECKS.slice(0, 9), 'watch-websocket', ...COMMON_CHECKS.slice(9)],
  },
];

/**
 * @typedef {object} PreparedSuite
 * @property {SuiteDef} def
 * @property {string} [command] what to run (absent when skipped)
 * @property {string[]} [args]
 * @property {string} [skip] why it cannot run on this machine
 */

/** cacheDir is where prepared environments live, outside the clone. */
export function cacheDir() {
  return process.env['WEBSITE_CLIENTS_CACHE_DIR'] ?? join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'website-apiserver', 'clients');
}

/**
 * sh runs a command to completion and returns its status and output (never throws).
 * @param {string} cmd @param {string[]} args @param {{ cwd?: string, timeoutMs?: number, env?: Record<string, string> }} [o]
 */
function sh(cmd, args, o = {}) {
  const r = spawnSync(cmd, args, { cwd: o.cwd, env: { ...process.env, ...o.env }, encoding: 'utf8', timeout: o.timeoutMs ?? 600_000, maxBuffer: 64 << 20 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  return { ok: r.status === 0, status: r.status, out: r.error ? `${r.error.message}\n${out}` : out };
}

/** @param {string[]} parts */
const hash = (parts) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 12);
};

/** @param {string} dir @returns {string[]} every file under dir, sorted, relative paths */
function filesUnder(dir) {
  /** @type {string[]} */
  const out = [];
  const walk = (/** @type {string} */ d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'target') walk(p);
      } else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * publish moves a finished build into place; when another run got there first, its copy is kept.
 * @param {string} tmp @param {string} final
 */
function publish(tmp, final) {
  writeFileSync(join(tmp, '.complete'), `${new Date().toISOString()}\n`);
  try {
    renameSync(tmp, final);
  } catch (e) {
    if (!existsSync(join(final, '.complete'))) throw e;
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * preparePython makes (or reuses) the venv of one requirements file.
 * @param {SuiteDef} def @param {(m: string) => void} log @returns {PreparedSuite}
 */
export function preparePython(def, log) {
  const script = join(HERE, 'python', 'website_suite.py');
  const version = sh('python3', ['--version']);
  if (!version.ok) return { def, skip: `python3 is not on the PATH (${version.out.split('\n')[0]})` };
  const reqFile = join(HERE, 'python', def.requirements ?? 'requirements.txt');
  const req = readFileSync(reqFile, 'utf8');
  const kubeVersion = /^kubernetes==(\S+)/m.exec(req)?.[1] ?? 'unpinned';
  const final = join(cacheDir(), `python-${kubeVersion}-${hash([req, version.out])}`);
  const python = join(final, 'bin', 'python');
  if (existsSync(join(final, '.complete'))) return { def, command: python, args: [script] };
  mkdirSync(cacheDir(), { recursive: true });
  const tmp = mkdtempSync(`${final}.tmp-`);
  const t0 = Date.now();
  try {
    // A venv's bin/python finds its packages through pyvenv.cfg beside bin/, so the folder may be renamed after.
    const venv = sh('python3', ['-m', 'venv', tmp]);
    if (!venv.ok) return { def, skip: `python3 -m venv failed (on Debian: apt-get install python3-venv): ${venv.out.split('\n').slice(-2).join(' ')}` };
    const pip = sh(join(tmp, 'bin', 'python'), ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '-q', '-r', reqFile]);
    if (!pip.ok) throw new Error(`pip install -r ${reqFile} failed:\n${pip.out}`);
    publish(tmp, final);
    log(`prepared the Python venv (kubernetes ${kubeVersion}) in ${Date.now() - t0} ms: ${final}`);
    return { def, command: python, args: [script] };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * prepareJava builds (or reuses) the fabric8 suite's jar.
 * @param {SuiteDef} def @param {(m: string) => void} log @returns {PreparedSuite}
 */
export function prepareJava(def, log) {
  const java = sh('java', ['-version']);
  if (!java.ok) return { def, skip: `java is not on the PATH (${java.out.split('\n')[0]})` };
  const mvn = sh('mvn', ['-v']);
  if (!mvn.ok) return { def, skip: `mvn is not on the PATH (${mvn.out.split('\n')[0]})` };
  const src = join(HERE, 'java');
  const files = filesUnder(src);
  const final = join(cacheDir(), `java-${hash([java.out, ...files.flatMap((f) => [f, readFileSync(join(src, f), 'utf8')])])}`);
  const jar = join(final, 'website-client-suite.jar');
  const run = { def, command: 'java', args: ['-jar', jar] };
  if (existsSync(join(final, '.complete'))) return run;
  mkdirSync(cacheDir(), { recursive: true });
  const tmp = mkdtempSync(`${final}.tmp-`);
  const t0 = Date.now();
  try {
    // Built in a copy, so the clone gets no target/ folder.
    const build = join(tmp, 'build');
    cpSync(src, build, { recursive: true, filter: (p) => !p.split('/').includes('target') });
    const r = sh('mvn', ['-q', '-B', '-Dstyle.color=never', 'package'], { cwd: build });
    if (!r.ok) throw new Error(`mvn package failed in ${build}:\n${r.out}`);
    cpSync(join(build, 'target', 'website-client-suite.jar'), join(tmp, 'website-client-suite.jar'));
    rmSync(build, { recursive: true, force: true });
    publish(tmp, final);
    log(`built the fabric8 suite in ${Date.now() - t0} ms: ${jar}`);
    return run;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * prepareSuites prepares every suite (or those named), printing one line for each that must be skipped.
 * @param {{ only?: string[], log?: (m: string) => void }} [o] @returns {PreparedSuite[]}
 */
export function prepareSuites(o = {}) {
  const log = o.log ?? ((m) => process.stderr.write(`[clients] ${m}\n`));
  const out = [];
  for (const def of SUITES) {
    if (o.only?.length && !o.only.includes(def.id)) continue;
    const p = def.kind === 'python' ? preparePython(def, log) : prepareJava(def, log);
    if (p.skip) log(`SKIPPED ${def.label}: ${p.skip}`);
    out.push(p);
  }
  return out;
}

/**
 * @typedef {object} CheckResult
 * @property {string} check
 * @property {boolean} ok
 * @property {number} ms
 * @property {string} detail
 */

/**
 * @typedef {object} SuiteRun
 * @property {Map<string, CheckResult>} checks
 * @property {number | null} exitCode
 * @property {string} stdout
 * @property {string} stderr
 * @property {number} ms
 */

/**
 * runSuite runs one prepared suite against a kubeconfig and namespace; a run that outlives timeoutMs is killed.
 * @param {PreparedSuite} s @param {{ kubeconfig: string, namespace: string, timeoutMs?: number, env?: Record<string, string> }} o
 * @returns {Promise<SuiteRun>}
 */
export function runSuite(s, o) {
  if (!s.command) return Promise.reject(new Error(`${s.def.id} is not prepared: ${s.skip}`));
  const t0 = Date.now();
  const child = spawn(s.command, [...(s.args ?? []), '--kubeconfig', o.kubeconfig, '--namespace', o.namespace], {
    env: { ...process.env, ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b.toString()));
  child.stderr.on('data', (b) => (stderr += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 170_000);
  return new Promise((res, rej) => {
    child.on('error', rej);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      /** @type {Map<string, CheckResult>} */
      const checks = new Map();
      for (const line of stdout.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          const j = JSON.parse(line);
          if (typeof j.check === 'string') checks.set(j.check, { check: j.check, ok: j.ok === true, ms: Number(j.ms), detail: String(j.detail) });
        } catch {
          // not a result line
        }
      }
      if (signal) stderr += `\n[killed by ${signal} after ${Date.now() - t0} ms]`;
      res({ checks, exitCode: code, stdout, stderr, ms: Date.now() - t0 });
    });
  });
}

/** @param {string[]} argv @param {string} name */
const flag = (argv, name) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};

/**
 * runAll runs the prepared suites one after another, printing their lines, and returns how many checks failed.
 * @param {PreparedSuite[]} suites @param {string} kubeconfig @param {(id: string) => Promise<string>} namespaceFor
 */
async function runAll(suites, kubeconfig, namespaceFor) {
  let failed = 0;
  for (const s of suites) {
    if (!s.command) continue;
    const r = await runSuite(s, { kubeconfig, namespace: await namespaceFor(s.def.id) });
    process.stdout.write(r.stdout);
    if (r.exitCode !== 0) process.stderr.write(`${r.stderr.split('\n').slice(-20).join('\n')}\n`);
    const bad = [...r.checks.values()].filter((c) => !c.ok).length + s.def.checks.filter((c) => !r.checks.has(c)).length;
    process.stderr.write(`[clients] ${s.def.label}: ${r.checks.size - bad} of ${s.def.checks.length} passed in ${r.ms} ms (exit ${r.exitCode})\n`);
    failed += bad;
  }
  return failed;
}

/** crd starts kube-apiserver serving the Website CRD (test/bench's CRD target) and runs the suites against it. */
async function crd(/** @type {PreparedSuite[]} */ suites) {
  const bin = sh('bash', [join(REPO, 'test/e2e/scripts/build-binaries.sh')], { timeoutMs: 30_000, env: { E2E_BUILD_CHECK_ONLY: '1' } });
  const binDir = bin.out.split('\n').pop() ?? '';
  if (!bin.ok || !existsSync(join(binDir, 'kube-apiserver'))) throw new Error(`the e2e binaries are not built:\n${bin.out}`);
  const { startCrd } = await import('../bench/targets.mjs');
  const dir = mkdtempSync(join(tmpdir(), 'clients-crd-'));
  const target = await startCrd(dir, binDir, (m) => process.stderr.write(`[crd] ${m}\n`));
  try {
    const kubeconfig = join(dir, 'kubeconfig');
    const b64 = (/** @type {string} */ s) => Buffer.from(s).toString('base64');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'crd',
        clusters: [{ name: 'crd', cluster: { server: target.url, 'certificate-authority-data': b64(target.tls.ca) } }],
        users: [{ name: 'crd', user: { 'client-certificate-data': b64(target.tls.cert), 'client-key-data': b64(target.tls.key) } }],
        contexts: [{ name: 'crd', context: { cluster: 'crd', user: 'crd' } }],
      }),
      { mode: 0o600 },
    );
    // The checks expect kube's answer where we deliberately differ from it (a forced apply of /scale: kube's 500).
    process.env['WEBSITE_SUITE_TARGET'] = 'crd';
    return await runAll(suites, kubeconfig, async (id) => {
      const ns = `clients-${id}-${randomBytes(3).toString('hex')}`;
      await target.prepare([ns]);
      return ns;
    });
  } finally {
    await target.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const [cmd, ...argv] = process.argv.slice(2);
  const only = flag(argv, '--suite')?.split(',');
  if (cmd === 'prepare') {
    const s = prepareSuites({ only });
    process.stdout.write(
      `${JSON.stringify(
        s.map((p) => ({ id: p.def.id, command: p.command, args: p.args, skip: p.skip })),
        null,
        2,
      )}\n`,
    );
    return 0;
  }
  if (cmd === 'run') {
    const kubeconfig = flag(argv, '--kubeconfig') ?? process.env['KUBECONFIG'];
    const namespace = flag(argv, '--namespace') ?? 'default';
    if (!kubeconfig) throw new Error('--kubeconfig is required');
    return (await runAll(prepareSuites({ only }), kubeconfig, async () => namespace)) ? 1 : 0;
  }
  if (cmd === 'crd') return (await crd(prepareSuites({ only }))) ? 1 : 0;
  process.stderr.write('usage: node test/clients/run.mjs prepare | run --kubeconfig K --namespace N | crd   [--suite python,python-classic,fabric8]\n');
  return 2;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`${e instanceof Error ? e.stack : e}\n`);
      process.exit(1);
    },
  );
}
