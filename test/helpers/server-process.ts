/**
 * Starts the real server (`node dist/main.js`, built by `npm test`'s pretest) as a child process on a free port
 * with its own data and cert directories, and gives tests an HTTPS client holding the admin certificate.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request, type Dispatcher } from 'undici';
import { afterAll, afterEach, beforeAll } from 'vitest';

const MAIN = resolve(import.meta.dirname, '../../dist/main.js');

/** ServerProcess is a running server child process. */
export interface ServerProcess {
  url: string;
  port: number;
  dataDir: string;
  certDir: string;
  kubeconfig: string;
  proc: ChildProcess;
  /** logs returns everything the process printed so far. */
  logs(): string;
  /** stop sends a signal (SIGTERM by default) and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** StartOptions choose directories (to restart on the same data) and extra flags. */
export interface StartOptions {
  dataDir?: string;
  certDir?: string;
  port?: number;
  args?: string[];
  env?: Record<string, string>;
}

/** tempDir makes a directory removed by cleanupTempDirs. */
const temps: string[] = [];
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
}
export function cleanupTempDirs(): void {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** startServer spawns the server and resolves once it logged "serving" (as a JSON line or, with --log-format text, a text one). */
export async function startServer(o: StartOptions = {}): Promise<ServerProcess> {
  const dataDir = o.dataDir ?? tempDir('ws-data-');
  const certDir = o.certDir ?? tempDir('ws-certs-');
  const args = [MAIN, '--port', String(o.port ?? 0), '--data-dir', dataDir, '--cert-dir', certDir, ...(o.args ?? [])];
  const proc = spawn(process.execPath, args, { env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  // 'close', not 'exit': the process's output is all read by then, so a test may check its last log lines.
  const exited = new Promise<number | null>((res) => proc.on('close', (code) => res(code)));
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`server did not start in 20 s:\n${out}`)), 20_000);
    const onData = (b: Buffer) => {
      out += b.toString();
      for (const line of out.split('\n')) {
        // --log-format text: `[time] INFO: serving {"url":…}`.
        const text = /: serving \{"url":"(https:\/\/[^"]+)"/.exec(line);
        if (text) {
          clearTimeout(timer);
          res(text[1] as string);
        }
        if (!line.startsWith('{')) continue;
        try {
          const j = JSON.parse(line) as { msg?: string; url?: string };
          if (j.msg === 'serving' && j.url) {
            clearTimeout(timer);
            res(j.url);
          }
        } catch {
          // partial line
        }
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', (b: Buffer) => (out += b.toString()));
    proc.on('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`server exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    port: Number(new URL(url).port),
    dataDir,
    certDir,
    kubeconfig: join(certDir, 'kubeconfig'),
    proc,
    logs: () => out,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill(signal);
      return exited;
    },
  };
}

/** adminAgent is an undici dispatcher presenting the admin client certificate and trusting our CA. */
export function adminAgent(certDir: string, withClientCert = true, connections?: number): Agent {
  const ca = readFileSync(join(certDir, 'ca.crt'), 'utf8');
  const connect = withClientCert
    ? { ca, cert: readFileSync(join(certDir, 'admin.crt'), 'utf8'), key: readFileSync(join(certDir, 'admin.key'), 'utf8') }
    : { ca };
  return new Agent({ connect, connections: connections ?? null });
}

/** Response is a decoded HTTP response. */
export interface JsonResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

/** call sends one request and decodes a JSON body when there is one. */
export async function call(
  dispatcher: Dispatcher,
  url: string,
  method: Dispatcher.HttpMethod = 'GET',
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const hasBody = body !== undefined;
  const res = await request(url, {
    dispatcher,
    method,
    headers: { ...(hasBody && typeof body !== 'string' ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(hasBody ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.body.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text };
}

/** website builds a Website manifest. */
export function website(name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
  return {
    apiVersion: 'extensions.example.com/v1alpha1',
    kind: 'Website',
    metadata: { name, ...metadata },
    spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', ...spec },
  };
}

/** API is the group-version prefix. */
export const API = '/apis/extensions.example.com/v1alpha1';

/**
 * useServer starts one server with an admin agent for the whole file (beforeAll) and stops both, and removes the
 * temp dirs, after it (afterAll). `ready` receives them.
 */
export function useServer(ready: (server: ServerProcess, agent: Agent) => void, o: StartOptions = {}): void {
  let server: ServerProcess | undefined;
  let agent: Agent | undefined;
  beforeAll(async () => {
    server = await startServer(o);
    agent = adminAgent(server.certDir);
    ready(server, agent);
  });
  afterAll(async () => {
    await agent?.close();
    await server?.stop();
    cleanupTempDirs();
  });
}

/**
 * serversPerTest returns a start function for tests that start (and restart) servers of their own: every server a
 * test started is killed after it (SIGKILL: these tests own their crash points), and the temp dirs go at the end.
 */
export function serversPerTest(): (o?: StartOptions) => Promise<{ srv: ServerProcess; agent: Agent }> {
  const running: ServerProcess[] = [];
  const agents: Agent[] = [];
  afterEach(async () => {
    for (const s of running.splice(0)) await s.stop('SIGKILL');
    for (const a of agents.splice(0)) await a.destroy().catch(() => undefined);
  });
  afterAll(() => cleanupTempDirs());
  return async (o = {}) => {
    const srv = await startServer(o);
    running.push(srv);
    const agent = adminAgent(srv.certDir);
    agents.push(agent);
    return { srv, agent };
  };
}
