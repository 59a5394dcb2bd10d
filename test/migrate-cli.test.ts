/**
 * The `migrate` subcommand's command line (cmd/migrate.ts), as a person meets it: --help prints the usage and exits
 * 0; a missing or malformed flag is one line naming it, a hint, and exit 2; --back without kube's etcd says why it
 * needs it; an unreachable cluster is one "failed:" line and exit 1. The moves themselves are proven on a real
 * control plane (test/e2e/migration.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const MAIN = resolve(import.meta.dirname, '../dist/main.js');
const dir = mkdtempSync(join(tmpdir(), 'migrate-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const migrate = (...args: string[]) => {
  const r = spawnSync(process.execPath, [MAIN, 'migrate', ...args], { encoding: 'utf8', env: { ...process.env, KUBECONFIG: '' }, timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe('website-apiserver migrate', () => {
  it('--help prints the usage', () => {
    const r = migrate('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: website-apiserver migrate --crd NAME --server URL [--back] [flags]');
    expect(r.stdout).toContain('--kube-etcd-servers URLS');
  });

  it('refuses a bad command line with one line and a hint, exit 2', () => {
    const cases: [string[], string][] = [
      [[], 'website-apiserver migrate: --crd is required'],
      [['--crd', 'a.b.c'], 'website-apiserver migrate: --server is required'],
      [['--crd', 'a.b.c', '--server', 'https://x', '--page-size', '0'], 'website-apiserver migrate: --page-size: must be a positive integer, got "0"'],
      [
        ['--crd', 'a.b.c', '--server', 'https://x', '--service', 'no-slash'],
        'website-apiserver migrate: --service: expected NAMESPACE/NAME[:PORT], got "no-slash"',
      ],
      [['--crd', 'a.b.c', '--server', 'https://x', '--bogus'], "website-apiserver migrate: Unknown option '--bogus'"],
    ];
    for (const [args, line] of cases) {
      const r = migrate(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.split('\n')[0], args.join(' ')).toContain(line);
      expect(r.stderr).toContain("Run 'website-apiserver migrate --help' for usage.");
    }
  });

  it('--back without kube-apiserver etcd says why it needs it', () => {
    const r = migrate('--crd', 'a.b.c', '--server', 'https://x', '--back');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--back needs --kube-etcd-servers: kube-apiserver gives every object it creates a new uid');
  });

  it('a cluster it cannot reach is one failed line and exit 1', () => {
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1', 'insecure-skip-tls-verify': true } }],
        users: [{ name: 'u', user: { token: 't' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    const r = migrate('--crd', 'a.b.c', '--server', 'https://127.0.0.1:1', '--kubeconfig', kubeconfig, '--service', 'ns/svc', '--ca-file', kubeconfig);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^\[preflight\] CustomResourceDefinition a\.b\.c\n\[preflight\] failed: .*ECONNREFUSED/);
  });
});
