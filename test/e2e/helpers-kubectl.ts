/**
 * @module e2e/helpers-kubectl
 * Small helpers shared by kubectl.test.ts and controllers.test.ts: a Website manifest, kubectl's table parsed into
 * rows, a kubectl left running in the background (get -w, wait, delete that blocks), and raw requests to
 * kube-apiserver with a bearer token for comparing Status bodies of built-in and aggregated resources.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { kubectl, type KubectlResult } from './harness/kubectl.js';

export const GROUP = 'extensions.example.com';
export const API_VERSION = `${GROUP}/v1alpha1`;
/** GR is how kubectl names our objects in its messages: `website.extensions.example.com/x created`. */
export const GR = `website.${GROUP}`;
export const REPO = 'https://github.com/luksa/kubia-website-example.git';

/** websiteManifest is a Website as a user would write it. */
export function websiteManifest(name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
  return { apiVersion: API_VERSION, kind: 'Website', metadata: { name, ...metadata }, spec: { gitRepo: REPO, ...spec } };
}

/** Kubectl runs kubectl with one kubeconfig and a discovery cache of its own (the shared ~/.kube/cache is keyed by port only). */
export interface Kubectl {
  (args: string[], opts?: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<KubectlResult>;
  /** background starts kubectl and lets the test look at it while it runs. */
  background(args: string[], env?: NodeJS.ProcessEnv): Background;
  /** dispose removes the cache dir. */
  dispose(): void;
}

/** Background is a running kubectl: output so far, whether it has exited, and its result once it has. */
export interface Background {
  stdout(): string;
  stderr(): string;
  settled(): boolean;
  result: Promise<KubectlResult>;
  /** stop sends SIGTERM (if still running) and resolves with what it printed. */
  stop(): Promise<KubectlResult>;
}

export function kubectlAs(kubeconfig: string): Kubectl {
  const cache = mkdtempSync(join(tmpdir(), 'e2e-kubectl-cache-'));
  const base = { KUBECACHEDIR: cache };
  const run = ((args, opts = {}) => kubectl(kubeconfig, args, { ...opts, env: { ...base, ...opts.env } })) as Kubectl;
  run.background = (args, env) => {
    const proc = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], { env: { ...process.env, ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let done = false;
    proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    // Safety net only: every test ends its background kubectl itself.
    const timer = setTimeout(() => proc.kill('SIGKILL'), 120_000);
    const result = new Promise<KubectlResult>((res) => {
      proc.on('close', (code, signal) => {
        clearTimeout(timer);
        done = true;
        res({ code: code ?? (signal ? -1 : 0), stdout, stderr });
      });
    });
    return {
      stdout: () => stdout,
      stderr: () => stderr,
      settled: () => done,
      result,
      stop: () => {
        if (!done) proc.kill('SIGTERM');
        return result;
      },
    };
  };
  run.dispose = () => rmSync(cache, { recursive: true, force: true });
  return run;
}

export { table } from '../helpers/kubectl-table.js';

/** ApiClient sends raw requests to kube-apiserver with a bearer token and returns status and parsed body. */
export interface ApiClient {
  (method: string, path: string, body?: unknown, contentType?: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export function apiClient(server: string, caFile: string, token: string): ApiClient {
  const agent = new Agent({ connect: { ca: readFileSync(caFile) } });
  const call = (async (method, path, body, contentType = 'application/json') => {
    const r = await request(`${server}${path}`, {
      method: method as 'GET',
      dispatcher: agent,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': contentType }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await r.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text for the assertion message
    }
    return { status: r.statusCode, body: parsed };
  }) as ApiClient;
  call.close = () => agent.close();
  return call;
}
