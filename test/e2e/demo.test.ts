/**
 * `npm run demo -- up` / `down` (demo.mjs) as a user runs them: up prints a URL on 127.0.0.1 that serves the kubia
 * Website's page to this process on the host, and kubectl with the printed kubeconfig sees the Website Ready; down
 * leaves no process of the demo (none in the sandbox's PID namespace, none naming its folder), no cgroup, no
 * listening URL and no folder behind. Runs where the real-node suites run (same gating).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeUnavailable } from './node/clone.mjs';

const unavailable = nodeUnavailable();
if (unavailable) process.stderr.write(`[e2e] demo suite SKIPPED: ${unavailable}\n`);

const DEMO = resolve(import.meta.dirname, 'demo.mjs');
const log = (m: string) => process.stderr.write(`[demo-test] ${m}\n`);

function demo(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [DEMO, ...args], { timeout: 900_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      res({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** processes lists the processes (pid and command line) in the given PID namespace or whose command line names dir. */
function processes(pidNamespace: string, dir: string): string[] {
  const found: string[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmdline = readFileSync(`/proc/${e}/cmdline`, 'utf8');
      if (readlinkSync(`/proc/${e}/ns/pid`) === pidNamespace || cmdline.includes(dir)) found.push(`${e} ${cmdline.replaceAll('\0', ' ').slice(0, 200)}`);
    } catch {
      /* exited meanwhile */
    }
  }
  return found;
}

const cgroupsOf = (keeperPid: number) => readdirSync('/sys/fs/cgroup').filter((h) => existsSync(join('/sys/fs/cgroup', h, `website-e2e-node-${keeperPid}`)));

describe.skipIf(!!unavailable)('npm run demo -- up / down', () => {
  const dir = mkdtempSync(join(tmpdir(), 'website-demo-'));

  afterAll(async () => {
    // Only when the test failed half-way: down is idempotent.
    if (existsSync(dir)) await demo(['down', '--state-dir', dir]);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('up prints a URL on 127.0.0.1 serving the kubia page and a working kubeconfig; down stops every process it started and removes its folder', async () => {
    const t0 = Date.now();
    const up = await demo(['up', '--state-dir', dir]);
    log(`up: ${((Date.now() - t0) / 1000).toFixed(1)} s, exit ${up.code}\n${up.stdout}${up.stderr}`);
    expect(up.code).toBe(0);
    // Progress lines come before the result.
    expect(up.stdout).toMatch(/\[demo \+[\d.]+s\] helm install website-apiserver --namespace website-system: deployed/);
    const url = /The kubia Website is served at (\S+)/.exec(up.stdout)?.[1] ?? '';
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);

    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1>Hello from kubia</h1>');

    const kubeconfig = /export KUBECONFIG=(\S+)/.exec(up.stdout)?.[1] ?? '';
    const kubectl = /^\s+(\S+\/kubectl) get websites -A$/m.exec(up.stdout)?.[1] ?? '';
    const website = await new Promise<{ spec: { git: { repository: string } }; status: { conditions: { type: string; status: string }[] } }>((res, rej) =>
      execFile(kubectl, ['--kubeconfig', kubeconfig, 'get', 'website', 'kubia', '-o', 'json'], (err, stdout, stderr) =>
        err ? rej(new Error(stderr)) : res(JSON.parse(stdout)),
      ),
    );
    expect(website.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(website.spec.git.repository).toMatch(/^git:\/\/[\d.]+\/kubia-website-example\.git$/);

    // A second up finds it running and prints the same URL.
    const again = await demo(['up', '--state-dir', dir]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`already up`);
    expect(again.stdout).toContain(url);

    const state = JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')) as { keeperPid: number; pidNamespace: string };
    const before = processes(state.pidNamespace, dir);
    log(`processes of the demo while up: ${before.length}`);
    expect(before.length).toBeGreaterThan(5); // etcd, kube-apiserver, kubelet, containerd, the pods, ...
    expect(cgroupsOf(state.keeperPid).length).toBeGreaterThan(0);

    const t1 = Date.now();
    const down = await demo(['down', '--state-dir', dir]);
    log(`down: ${((Date.now() - t1) / 1000).toFixed(1)} s, exit ${down.code}\n${down.stdout}${down.stderr}`);
    expect(down.code).toBe(0);
    expect(processes(state.pidNamespace, dir)).toEqual([]);
    expect(existsSync(`/proc/${state.keeperPid}`)).toBe(false);
    expect(cgroupsOf(state.keeperPid)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
    await expect(fetch(url)).rejects.toThrow();

    const twice = await demo(['down', '--state-dir', dir]);
    expect(twice.code).toBe(0);
    expect(twice.stdout).toContain('nothing to tear down');
  }, 900_000);
});
