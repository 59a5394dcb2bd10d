/**
 * The command line as a person meets it (`node dist/main.js`): --version and `version`, -h, a bad command line as its
 * errors and one hint (exit 2), the common start failures as one line on stderr (exit 1: the port in use, TLS files
 * that cannot be used, an invalid SAN or audit policy, a data dir in use), text logs with --log-format=text (all out at exit), the `export KUBECONFIG`
 * line after `serving`, /version's commit, and build-if-needed saying that it builds.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { adminAgent, call, cleanupTempDirs, startServer, tempDir, type ServerProcess } from './helpers/server-process.js';

const REPO = resolve(import.meta.dirname, '..');
const MAIN = join(REPO, 'dist/main.js');
const HINT = "Run 'website-apiserver --help' for usage.";
const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
const HEAD = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();

interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** main runs `node dist/main.js ARGS` to its end (or kills it after `ms`). */
function main(args: string[], o: { env?: Record<string, string>; ms?: number } = {}): Promise<Exited> {
  return new Promise((res, rej) => {
    const proc = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...o.env } });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      rej(new Error(`node dist/main.js ${args.join(' ')} still runs after ${o.ms ?? 20_000} ms:\n${stdout}${stderr}`));
    }, o.ms ?? 20_000);
    proc.on('close', (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr });
    });
  });
}

/** dirs are fresh --data-dir and --cert-dir flags. */
const dirs = () => ['--data-dir', tempDir('cli-data-'), '--cert-dir', tempDir('cli-certs-')];

const running: ServerProcess[] = [];
const holders: Server[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop('SIGKILL');
  for (const h of holders.splice(0)) await new Promise((r) => h.close(r));
});
afterAll(() => cleanupTempDirs());

describe('--version, version and -h', () => {
  it("print `website-apiserver <package.json's version> (commit <HEAD>)` and exit 0", async () => {
    const line = `website-apiserver ${VERSION} (commit ${HEAD.slice(0, 12)})\n`;
    for (const args of [['--version'], ['version'], [...dirs(), '--version']]) {
      const r = await main(args);
      expect(r, args.join(' ')).toEqual({ code: 0, stdout: line, stderr: '' });
    }
  });

  it('-h prints what --help prints and exits 0, for backup and restore too', async () => {
    const short = await main(['-h']);
    const long = await main(['--help']);
    expect(short.code).toBe(0);
    expect(short.stdout).toBe(long.stdout);
    expect(short.stdout).toMatch(/^Usage: website-apiserver \[flags\]\n/);
    expect(short.stdout).toContain('--log-format');
    expect(short.stdout).toContain('-h, --help');
    for (const command of ['backup', 'restore']) {
      const h = await main([command, '-h']);
      expect(h.code, command).toBe(0);
      expect(h.stdout).toBe((await main([command, '--help'])).stdout);
      expect(h.stdout).toMatch(new RegExp(`^Usage: website-apiserver ${command} `));
    }
  });
});

describe('a bad command line', () => {
  it('prints one line per problem and the hint, not the usage, and exits 2', async () => {
    const cases: [string[], string[]][] = [
      [['--bogus'], ['unknown flag: --bogus']],
      [['--prot', '8443'], ['unknown flag: --prot (did you mean --port?)']],
      [
        ['--port', 'abc', '--log-level', 'loud'],
        ['--port: must be an integer from 0 to 65535, got "abc"', '--log-level: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
      ],
      [['--log-format', 'yaml'], ['--log-format: must be one of text, json, got "yaml"']],
      [['--port'], ['flag needs a value: --port (--port VALUE or --port=VALUE)']],
      [['serve'], ['unexpected argument "serve": the server takes flags only (--name=value); its commands are backup, restore and version']],
    ];
    for (const [args, problems] of cases) {
      const r = await main([...dirs(), ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr.split('\n'), args.join(' ')).toEqual([...problems.map((p) => `website-apiserver: ${p}`), HINT, '']);
    }
    // A bad value in the environment likewise.
    const env = await main(dirs(), { env: { WEBSITE_APISERVER_LOG_FORMAT: 'xml' } });
    expect(env).toMatchObject({ code: 2, stderr: `website-apiserver: --log-format: must be one of text, json, got "xml"\n${HINT}\n` });
  });
});

describe('a start that fails for a reason of the operator', () => {
  /** oneLine expects exit 1 and exactly one line on stderr, returning it. */
  const oneLine = (r: Exited): string => {
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stderr.split('\n');
    expect(lines, r.stderr).toHaveLength(2);
    expect(lines[1]).toBe('');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    return lines[0] as string;
  };

  it('names the address and port in use and suggests --port', async () => {
    const holder = createServer();
    holders.push(holder);
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const port = (holder.address() as { port: number }).port;
    const line = oneLine(await main([...dirs(), '--port', String(port)]));
    expect(line).toMatch(new RegExp(`^website-apiserver: cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use .*--port`));
  });

  it('names a --tls-cert-file or --tls-private-key-file that cannot be used, and why', async () => {
    const dir = tempDir('cli-tls-');
    const srv = await startServer();
    running.push(srv);
    // A real pair to start from: the server's own serving certificate and key.
    const cert = join(srv.certDir, 'serving.crt');
    const key = join(srv.certDir, 'serving.key');
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, 'not a certificate\n');
    const locked = join(dir, 'locked.key');
    writeFileSync(locked, readFileSync(key));
    chmodSync(locked, 0o000);
    mkdirSync(join(dir, 'a-dir'));
    const cases: [string, string, RegExp][] = [
      [join(dir, 'missing.crt'), key, /^website-apiserver: --tls-cert-file \S+missing\.crt: cannot read it: no such file or directory \(ENOENT\)$/],
      [join(dir, 'a-dir'), key, /^website-apiserver: --tls-cert-file \S+a-dir: cannot read it: it is a directory, not a file \(EISDIR\)$/],
      [garbage, key, /^website-apiserver: --tls-cert-file \S+garbage\.pem: not a PEM certificate: /],
      [cert, garbage, /^website-apiserver: --tls-private-key-file \S+garbage\.pem: not a PEM private key: /],
      [
        cert,
        join(srv.certDir, 'admin.key'),
        /^website-apiserver: --tls-private-key-file \S+admin\.key is not the private key of --tls-cert-file \S+serving\.crt$/,
      ],
    ];
    // Root reads any file whatever its mode.
    if (process.getuid?.() !== 0)
      cases.push([cert, locked, /^website-apiserver: --tls-private-key-file \S+locked\.key: cannot read it: permission denied \(EACCES\)$/]);
    for (const [c, k, message] of cases) {
      expect(oneLine(await main([...dirs(), '--port', '0', '--tls-cert-file', c, '--tls-private-key-file', k])), `${c} ${k}`).toMatch(message);
    }
  });

  it("names a --tls-san that is no name and an --audit-policy-file that cannot be read, with kube's message", async () => {
    expect(oneLine(await main([...dirs(), '--port', '0', '--tls-san', 'bad!name']))).toBe(
      'website-apiserver: --tls-san: invalid SAN "bad!name": neither an IP address nor a DNS name',
    );
    const policy = join(tempDir('cli-audit-'), 'policy.yaml');
    expect(oneLine(await main([...dirs(), '--port', '0', '--audit-policy-file', policy]))).toBe(
      `website-apiserver: --audit-policy-file: loading audit policy file: failed to read file path "${policy}": open ${policy}: no such file or directory`,
    );
  });

  it('names the data dir in use', async () => {
    const srv = await startServer();
    running.push(srv);
    const line = oneLine(await main(['--port', '0', '--data-dir', srv.dataDir, '--cert-dir', tempDir('cli-certs-')]));
    expect(line).toContain(`data directory ${srv.dataDir} is in use by process ${srv.proc.pid}`);
  });
});

describe('what the start says', () => {
  it('logs JSON when stdout is not a terminal, and after `serving` the kubeconfig to export', async () => {
    const srv = await startServer();
    running.push(srv);
    const kubeconfig = resolve(srv.certDir, 'kubeconfig');
    const hinted = () =>
      srv
        .logs()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string; kubeconfig?: string });
    await expect.poll(() => hinted().some((l) => l.msg.startsWith('to use it: ')), { timeout: 5000 }).toBe(true);
    const lines = hinted();
    const serving = lines.findIndex((l) => l.msg === 'serving');
    const hint = lines.findIndex((l) => l.msg.startsWith('to use it: '));
    expect(serving).toBeGreaterThanOrEqual(0);
    expect(hint).toBeGreaterThan(serving);
    expect(lines[hint]).toMatchObject({ level: 30, msg: `to use it: export KUBECONFIG=${kubeconfig}`, kubeconfig });
  });

  it('logs text lines with --log-format=text, every one of them out when the process exits', async () => {
    const srv = await startServerText();
    running.push(srv);
    await expect.poll(() => srv.logs().includes('to use it: export KUBECONFIG='), { timeout: 5000 }).toBe(true);
    expect(await srv.stop('SIGTERM')).toBe(0);
    const lines = srv.logs().trimEnd().split('\n');
    for (const l of lines) expect(l, l).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN|DEBUG|ERROR)\s*: /);
    const at = (msg: string) => lines.findIndex((l) => l.includes(`: ${msg}`));
    expect(at('serving')).toBeGreaterThanOrEqual(0);
    expect(lines[at('serving')]).toContain(`"url":"${srv.url}"`);
    expect(at(`to use it: export KUBECONFIG=${resolve(srv.certDir, 'kubeconfig')}`)).toBeGreaterThan(at('serving'));
    // The last line, logged right before process.exit(0), is there.
    expect(lines.at(-1)).toMatch(/INFO\s*: shut down/);
  });

  it("answers /version with package.json's version and the commit, in kube's version.Info", async () => {
    const srv = await startServer();
    running.push(srv);
    const agent = adminAgent(srv.certDir);
    try {
      const res = await call(agent, `${srv.url}/version`);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual([
        'buildDate',
        'compiler',
        'gitCommit',
        'gitTreeState',
        'gitVersion',
        'goVersion',
        'major',
        'minor',
        'platform',
      ]);
      expect(res.body.gitVersion).toBe(`v${res.body.major}.${res.body.minor}.0-website-apiserver.${VERSION}`);
      expect(res.body.gitCommit).toBe(HEAD);
    } finally {
      await agent.destroy();
    }
  });
});

/** startServerText starts a server with text logs. */
function startServerText(): Promise<ServerProcess> {
  const [, dataDir, , certDir] = dirs() as [string, string, string, string];
  return startServer({ dataDir, certDir, args: ['--log-format', 'text'] });
}

describe('npm start', () => {
  it('says on stderr that it builds dist/, and nothing when dist/ is current', async () => {
    // A tree of its own: tsc and the bundle replaced by stand-ins that write dist/, so only the script's words are tested.
    const dir = tempDir('cli-build-');
    mkdirSync(join(dir, 'src'));
    mkdirSync(join(dir, 'scripts'));
    mkdirSync(join(dir, 'bin'));
    writeFileSync(join(dir, 'src/main.ts'), '');
    writeFileSync(join(dir, 'tsconfig.json'), '{}');
    writeFileSync(join(dir, 'package-lock.json'), '{}');
    writeFileSync(join(dir, 'scripts/build-if-needed.mjs'), readFileSync(join(REPO, 'scripts/build-if-needed.mjs')));
    writeFileSync(
      join(dir, 'scripts/bundle.mjs'),
      "import { mkdirSync, writeFileSync } from 'node:fs';\nmkdirSync('dist/bundle', { recursive: true });\nwriteFileSync('dist/bundle/main.js', '');\nwriteFileSync('dist/main.js', \"import './bundle/main.js';\\n\");\n",
    );
    writeFileSync(join(dir, 'bin/npx'), '#!/bin/sh\nexit 0\n');
    chmodSync(join(dir, 'bin/npx'), 0o755);
    const env = { ...process.env, PATH: `${join(dir, 'bin')}:${process.env['PATH'] ?? ''}` };
    const build = () => {
      const r = spawn(process.execPath, ['scripts/build-if-needed.mjs'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      return new Promise<Exited>((res) => {
        let stdout = '';
        let stderr = '';
        r.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
        r.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
        r.on('close', (code) => res({ code, stdout, stderr }));
      });
    };
    const first = await build();
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/^building dist\/ \(TypeScript, about 30 s the first time\)…\nbuilt dist\/ in \d+ s\n$/);
    const second = await build();
    expect(second).toEqual({ code: 0, stdout: '', stderr: '' });
  });
});
