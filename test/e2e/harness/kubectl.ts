/**
 * @module e2e/harness/kubectl
 * Runs the real kubectl against kube-apiserver (never our port: everything in the suite goes through aggregation).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl runs one command with the given kubeconfig; it never throws on a non-zero exit. */
export function kubectl(
  kubeconfig: string,
  args: string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, ...args],
      {
        env: { ...process.env, ...opts.env },
        timeout: opts.timeoutMs ?? 60_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** kubectlOk runs kubectl and throws with its output unless it exits 0. */
export async function kubectlOk(
  kubeconfig: string,
  args: string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  const r = await kubectl(kubeconfig, args, opts);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** kubectlStream starts a long-running kubectl (get -w) and collects its stdout lines. */
export function kubectlStream(kubeconfig: string, args: string[]): { proc: ChildProcess; lines: string[]; stderr: () => string } {
  const proc = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let buf = '';
  let err = '';
  proc.stdout?.on('data', (b: Buffer) => {
    buf += b.toString();
    const parts = buf.split('\n');
    buf = parts.pop() ?? '';
    lines.push(...parts);
  });
  proc.stderr?.on('data', (b: Buffer) => (err += b.toString()));
  return { proc, lines, stderr: () => err };
}

/** waitFor polls `check` until it returns a truthy value or the time runs out. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 60_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
