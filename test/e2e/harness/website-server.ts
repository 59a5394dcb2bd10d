/**
 * @module e2e/harness/website-server
 * Our server as the e2e suite runs it: a detached process (so a test file may restart it and the global teardown
 * still finds it through the pid file), logging to a file, ready when /readyz answers 200.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { request } from 'undici';
import { Agent } from 'undici';
import { readPid, writePid } from './state.js';

export interface WebsiteServerSpec {
  args: string[];
  logFile: string;
  pidFile: string;
  url: string;
}

/**
 * withFlags is a copy of a server's command line (the suite's own, `env.website.args`) with the values of the named
 * flags replaced, then `extra` appended: a second server delegated as the first, on its own port, files and store.
 */
export function withFlags(args: readonly string[], values: Record<string, string>, extra: readonly string[] = []): string[] {
  const out = [...args];
  for (const [flag, value] of Object.entries(values)) {
    const i = out.indexOf(flag);
    if (i < 0 || i + 1 >= out.length) throw new Error(`the command line has no ${flag} VALUE to replace`);
    out[i + 1] = value;
  }
  return [...out, ...extra];
}

/** startWebsiteServer spawns `node dist/main.js <args>` and waits for /readyz. */
export async function startWebsiteServer(s: WebsiteServerSpec, timeoutMs = 60_000): Promise<number> {
  const fd = openSync(s.logFile, 'a');
  const child = spawn(process.execPath, s.args, { detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  child.unref();
  if (!child.pid) throw new Error('could not spawn the website server');
  writePid(s.pidFile, child.pid);
  await waitReady(s.url, child.pid, s.logFile, timeoutMs);
  return child.pid;
}

/** alive tells whether a process with this pid exists (signal 0 checks without signalling). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitReady(url: string, pid: number, logFile: string, timeoutMs: number): Promise<void> {
  const agent = new Agent({ connect: { rejectUnauthorized: false } });
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      if (!alive(pid)) throw new Error(`website server exited during start; see ${logFile}`);
      try {
        const r = await request(`${url}/readyz`, { dispatcher: agent });
        await r.body.text();
        if (r.statusCode === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`website server not ready in ${timeoutMs} ms; see ${logFile}`);
  } finally {
    await agent.close();
  }
}

/** stopWebsiteServer sends a signal to the recorded pid and waits until the process is gone. */
export async function stopWebsiteServer(pidFile: string, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 15_000): Promise<void> {
  let pid: number;
  try {
    pid = readPid(pidFile);
  } catch {
    return;
  }
  if (!pid || !alive(pid)) return;
  process.kill(pid, signal);
  const deadline = Date.now() + timeoutMs;
  while (alive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
