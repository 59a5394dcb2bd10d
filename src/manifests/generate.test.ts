/**
 * @module manifests/generate.test
 * writeManifests and the `manifests` command (dist/cmd/manifests.js): keeping the serving certificate across
 * runs, rotating it with --force, and the flag rules.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { writeManifests } from './generate.js';
import { SERVING_CERTIFICATE_FILE } from './render.js';

const DAY_MS = 86_400_000;
const CLI = path.resolve(import.meta.dirname, '../../dist/cmd/manifests.js');

const tempDirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'manifests-'));
  tempDirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
});

const readCert = (dir: string) => fs.readFileSync(path.join(dir, SERVING_CERTIFICATE_FILE), 'utf8');
function caBundle(dir: string): string {
  const api = parseAllDocuments(readCert(dir)).map((d) => d.toJS()).find((o) => o.kind === 'APIService');
  return api.spec.caBundle as string;
}

describe('writeManifests', () => {
  it('keeps a valid certificate on re-run, replaces it with force, for another namespace, or near expiry', () => {
    const dir = tempDir();
    const first = writeManifests({ outDir: dir });
    expect(first.certificate).toEqual({ action: 'generated', reason: expect.stringMatching(/missing/) });
    expect(first.files.map((f) => path.basename(f.path))).toEqual([
      '00-namespace.yaml',
      '10-rbac.yaml',
      '20-apiserver.yaml',
      SERVING_CERTIFICATE_FILE,
    ]);
    expect(first.files.every((f) => f.changed)).toBe(true);
    // The private key is readable by the owner only.
    expect(fs.statSync(path.join(dir, SERVING_CERTIFICATE_FILE)).mode & 0o777).toBe(0o600);
    const text1 = readCert(dir);

    const second = writeManifests({ outDir: dir });
    expect(second.certificate).toEqual({ action: 'kept' });
    expect(second.files.some((f) => f.changed)).toBe(false);
    expect(readCert(dir)).toBe(text1);

    const forced = writeManifests({ outDir: dir, force: true });
    expect(forced.certificate).toEqual({ action: 'generated', reason: 'forced' });
    expect(caBundle(dir)).not.toBe(Buffer.from(first.servingCert.caCert).toString('base64'));
    expect(caBundle(dir)).toBe(Buffer.from(forced.servingCert.caCert).toString('base64'));
    expect(forced.files.filter((f) => f.changed).map((f) => path.basename(f.path))).toEqual([SERVING_CERTIFICATE_FILE]);

    // A certificate for website-system is not reused for another namespace in the same directory.
    const moved = writeManifests({ outDir: dir, namespace: 'team-a' });
    expect(moved.certificate).toEqual({ action: 'generated', reason: expect.stringMatching(/namespace team-a/) });
    expect(readCert(dir)).toContain('namespace: team-a');

    // 340 days on, the 365-day leaf is within the 30-day renewal window.
    const later = writeManifests({ outDir: dir, namespace: 'team-a', now: new Date(Date.now() + 340 * DAY_MS) });
    expect(later.certificate).toEqual({ action: 'generated', reason: expect.stringMatching(/expires/) });
  });

  it('replaces an unreadable serving-certificate file', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, SERVING_CERTIFICATE_FILE), 'a: [\n');
    expect(writeManifests({ outDir: dir }).certificate).toEqual({ action: 'generated', reason: expect.stringMatching(/not valid YAML/) });
    fs.writeFileSync(path.join(dir, SERVING_CERTIFICATE_FILE), '');
    expect(writeManifests({ outDir: dir }).certificate).toEqual({ action: 'generated', reason: expect.stringMatching(/no serving-certificate Secret/) });
  });
});

describe('manifests command', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, INIT_CWD: '' } });

  it('requires --out for a namespace other than website-system, and a valid namespace', () => {
    const r = run(['--namespace', 'team-a']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--namespace team-a needs --out DIR/);
    const bad = run(['--namespace', 'Team_A', '--out', tempDir()]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/invalid namespace/);
    expect(run(['--bogus']).status).toBe(2);
  });

  it('renders every file for the namespace, keeps the certificate on re-run and rotates it with --force', () => {
    const dir = tempDir();
    const first = run(['--namespace', 'team-a', '--out', dir, '--image', 'example.test/ws:1']);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/serving certificate: generated/);
    expect(fs.readdirSync(dir).sort()).toEqual(['00-namespace.yaml', '10-rbac.yaml', '20-apiserver.yaml', SERVING_CERTIFICATE_FILE]);
    expect(fs.readFileSync(path.join(dir, '20-apiserver.yaml'), 'utf8')).toContain('image: example.test/ws:1');
    const all = fs.readdirSync(dir).map((n) => fs.readFileSync(path.join(dir, n), 'utf8')).join('');
    expect(all).toContain('namespace: team-a');
    expect(all).not.toContain('website-system');
    const bundle = caBundle(dir);

    const again = run(['--namespace', 'team-a', '--out', dir, '--image', 'example.test/ws:1']);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/kept the existing one/);
    expect(caBundle(dir)).toBe(bundle);

    const forced = run(['--namespace', 'team-a', '--out', dir, '--force']);
    expect(forced.status, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/generated \(forced\)/);
    expect(caBundle(dir)).not.toBe(bundle);
  });
});
