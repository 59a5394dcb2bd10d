/**
 * @module manifests/generate.test
 * writeManifests and the `manifests` command (dist/cmd/manifests.js): keeping the serving certificate across
 * runs, rotating it with --force, the etcd bundle with several replicas, and the flag rules.
 */
import { describe, it, expect, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { kinds } from '../kinds/index.js';
import { readCrdFiles } from './crd-files.js';
import { writeManifests } from './generate.js';
import { CRD_FILE, CRD_MOUNT_DIR, SERVING_CERTIFICATE_FILE } from './render.js';
import { CRD_CORPUS } from '../../test/helpers/crd-corpus.mjs';

const DAY_MS = 86_400_000;
const CLI = path.resolve(import.meta.dirname, '../../dist/cmd/manifests.js');
const REPO_MANIFESTS = path.resolve(import.meta.dirname, '../../manifests');
const CRDS = CRD_CORPUS;
const CRONTABS = path.join(CRDS, 'seeds/stable.example.com_crontabs.yaml');

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
  const api = parseAllDocuments(readCert(dir))
    .map((d) => d.toJS())
    .find((o) => o.kind === 'APIService');
  return api.spec.caBundle as string;
}

describe('writeManifests', () => {
  it('keeps a valid certificate on re-run, replaces it with force, for another namespace, or near expiry', () => {
    const dir = tempDir();
    const first = writeManifests({ outDir: dir });
    expect(first.certificate).toEqual({ action: 'generated', reason: expect.stringMatching(/missing/) });
    expect(first.files.map((f) => path.basename(f.path))).toEqual(['00-namespace.yaml', '10-rbac.yaml', '20-apiserver.yaml', SERVING_CERTIFICATE_FILE]);
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

  it('writes the etcd bundle with several replicas, and refuses several lmdb replicas before writing anything', () => {
    const dir = tempDir();
    const r = writeManifests({ outDir: dir, storage: { backend: 'etcd', servers: ['https://etcd:2379'], tls: true }, replicas: 3 });
    expect(r.certificate.action).toBe('generated');
    const sts = parseAllDocuments(fs.readFileSync(path.join(dir, '20-apiserver.yaml'), 'utf8'))
      .map((d) => d.toJS())
      .find((o) => o.kind === 'StatefulSet');
    expect(sts.spec.replicas).toBe(3);
    expect(sts.spec.volumeClaimTemplates).toBeUndefined();
    expect(sts.spec.template.spec.containers[0].args).toContain('--etcd-servers=https://etcd:2379');

    const empty = tempDir();
    expect(() => writeManifests({ outDir: empty, replicas: 2 })).toThrow(/2 replicas need the etcd storage backend/);
    expect(() => writeManifests({ outDir: empty, storage: { backend: 'etcd', servers: ['etcd:2379'] } })).toThrow(/invalid etcd server/);
    expect(fs.readdirSync(empty)).toEqual([]);
  });

  it('writes the CRD file with --crd and removes it when a later run has none (it would still be applied)', () => {
    const dir = tempDir();
    const withCrd = writeManifests({ outDir: dir, crds: readCrdFiles([CRONTABS], kinds) });
    expect(withCrd.files.map((f) => path.basename(f.path))).toEqual([
      '00-namespace.yaml',
      '10-rbac.yaml',
      CRD_FILE,
      '20-apiserver.yaml',
      SERVING_CERTIFICATE_FILE,
    ]);
    expect(withCrd.removed).toEqual([]);
    expect(fs.readFileSync(path.join(dir, CRD_FILE), 'utf8')).toContain('name: crontabs.stable.example.com');
    const without = writeManifests({ outDir: dir });
    expect(without.removed).toEqual([path.join(dir, CRD_FILE)]);
    expect(fs.readdirSync(dir).sort()).toEqual(['00-namespace.yaml', '10-rbac.yaml', '20-apiserver.yaml', SERVING_CERTIFICATE_FILE]);
    // The StatefulSet, the roles and the APIServices changed back; the certificate was kept.
    expect(without.files.filter((f) => f.changed).map((f) => path.basename(f.path))).toEqual(['10-rbac.yaml', '20-apiserver.yaml', SERVING_CERTIFICATE_FILE]);
    expect(without.certificate).toEqual({ action: 'kept' });
    // What kubectl apply would leave in the cluster.
    expect(without.dropped).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'website-apiserver-crds', namespace: 'website-system' },
      { apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', name: 'v1.stable.example.com' },
    ]);
    expect(writeManifests({ outDir: dir }).dropped).toEqual([]);
  });

  it('with crdAPIServices false (a CRD still in the cluster, for website-apiserver migrate): the CRD served and its roles, no APIService for it, and none to delete', () => {
    const dir = tempDir();
    writeManifests({ outDir: dir, crds: readCrdFiles([CRONTABS], kinds) });
    const r = writeManifests({ outDir: dir, crds: readCrdFiles([CRONTABS], kinds), crdAPIServices: false });
    const all = fs
      .readdirSync(dir)
      .flatMap((f) => parseAllDocuments(fs.readFileSync(path.join(dir, f), 'utf8')).map((d) => d.toJS() as { kind: string; metadata: { name: string } }));
    // The built-in kinds keep theirs; the CRD's group has none (kube-aggregator's own, until migrate points them here).
    expect(all.filter((o) => o.kind === 'APIService').map((o) => o.metadata.name)).toEqual(['v1.extensions.example.com', 'v1alpha1.extensions.example.com']);
    const sts = all.find((o) => o.kind === 'StatefulSet') as unknown as { spec: { template: { spec: { containers: { args: string[] }[] } } } };
    expect(sts.spec.template.spec.containers[0]?.args).toContain(`--crd=${CRD_MOUNT_DIR}`);
    expect(JSON.stringify(all.filter((o) => o.kind === 'ClusterRole'))).toContain('"stable.example.com"');
    // The APIService the first run wrote is not ours to delete now: migrate switches kube's own.
    expect(r.dropped).toEqual([]);
    expect(() => writeManifests({ outDir: tempDir(), crdAPIServices: false })).toThrow(/crdAPIServices false without crds/);
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

  it("--no-crd-apiservices: with --crd, a bundle without the CRDs' APIServices; without --crd, refused", () => {
    const out = tempDir();
    const r = run(['--out', out, '--crd', CRONTABS, '--no-crd-apiservices']);
    expect(r.status, r.stderr).toBe(0);
    const cert = fs.readFileSync(path.join(out, SERVING_CERTIFICATE_FILE), 'utf8');
    expect(cert).toContain('name: v1.extensions.example.com');
    expect(cert).not.toContain('stable.example.com');
    expect(fs.readFileSync(path.join(out, CRD_FILE), 'utf8')).toContain('name: crontabs.stable.example.com');
    const bad = run(['--out', tempDir(), '--no-crd-apiservices']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^--no-crd-apiservices needs --crd/);
  });

  it('requires --out for an etcd or several-replica bundle, and refuses misused storage flags', () => {
    const committed = fs.readdirSync(REPO_MANIFESTS).map((n) => [n, fs.statSync(path.join(REPO_MANIFESTS, n)).mtimeMs]);
    const refusals: Array<[string[], RegExp]> = [
      [['--storage-backend', 'etcd', '--etcd-servers', 'https://etcd:2379'], /--storage-backend etcd needs --out DIR: manifests\/ holds the lmdb bundle/],
      [['--storage-backend', 'etcd', '--etcd-servers', 'https://etcd:2379', '--replicas', '3'], /--storage-backend etcd needs --out DIR/],
      [['--replicas', '3'], /3 replicas need the etcd storage backend: lmdb is one node's file/],
      [['--replicas', '3', '--out', tempDir()], /3 replicas need the etcd storage backend/],
      [['--replicas', '0', '--out', tempDir()], /invalid --replicas "0"/],
      [['--replicas', 'two', '--out', tempDir()], /invalid --replicas "two"/],
      [['--storage-backend', 'etcd', '--out', tempDir()], /--storage-backend etcd needs --etcd-servers/],
      [['--storage-backend', 'etcd', '--etcd-servers', '', '--out', tempDir()], /at least one etcd server/],
      [['--storage-backend', 'etcd', '--etcd-servers', 'https://etcd:2379,etcd-1:2379', '--out', tempDir()], /invalid etcd server "etcd-1:2379"/],
      [['--storage-backend', 'etcd', '--etcd-servers', 'http://etcd:2379', '--etcd-tls', '--out', tempDir()], /TLS needs https:\/\//],
      [
        ['--storage-backend', 'etcd', '--etcd-servers', 'https://etcd:2379', '--data-volume-size', '5Gi', '--out', tempDir()],
        /--data-volume-size shapes the lmdb data volume/,
      ],
      [['--storage-backend', 'sqlite', '--out', tempDir()], /invalid --storage-backend "sqlite"/],
      [['--etcd-servers', 'https://etcd:2379', '--out', tempDir()], /--etcd-servers needs --storage-backend etcd/],
      [['--etcd-client-secret', 'x', '--out', tempDir()], /--etcd-client-secret needs --storage-backend etcd/],
    ];
    for (const [args, message] of refusals) {
      const r = run(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
    // Nothing was written to the committed bundle meanwhile.
    expect(fs.readdirSync(REPO_MANIFESTS).map((n) => [n, fs.statSync(path.join(REPO_MANIFESTS, n)).mtimeMs])).toEqual(committed);
  });

  it('renders a 3-replica etcd bundle with the client certificate Secret', () => {
    const dir = tempDir();
    const r = run([
      '--namespace',
      'team-a',
      '--out',
      dir,
      '--storage-backend',
      'etcd',
      '--etcd-servers',
      'https://etcd-0:2379,https://etcd-1:2379',
      '--etcd-prefix',
      '/websites',
      '--etcd-client-secret',
      'etcd-client-cert',
      '--replicas',
      '3',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/create the Secret team-a\/etcd-client-cert with ca\.crt, tls\.crt, tls\.key/);
    const text = fs.readFileSync(path.join(dir, '20-apiserver.yaml'), 'utf8');
    expect(text).toContain('# Needs the Secret etcd-client-cert in namespace team-a');
    const sts = parseAllDocuments(text)
      .map((d) => d.toJS())
      .find((o) => o.kind === 'StatefulSet');
    expect(sts.spec.replicas).toBe(3);
    const c = sts.spec.template.spec.containers[0];
    expect(c.args).toEqual(
      expect.arrayContaining([
        '--storage-backend=etcd',
        '--etcd-servers=https://etcd-0:2379,https://etcd-1:2379',
        '--etcd-prefix=/websites',
        '--etcd-cafile=/etc/website-apiserver/etcd/ca.crt',
        '--etcd-certfile=/etc/website-apiserver/etcd/tls.crt',
        '--etcd-keyfile=/etc/website-apiserver/etcd/tls.key',
      ]),
    );
    expect(sts.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'etcd-client').secret.secretName).toBe('etcd-client-cert');
    expect(sts.spec.volumeClaimTemplates).toBeUndefined();

    // --etcd-tls: the default Secret name; without either, no certificate flags.
    const tls = tempDir();
    expect(run(['--out', tls, '--storage-backend', 'etcd', '--etcd-servers', 'https://etcd:2379', '--etcd-tls']).status).toBe(0);
    expect(fs.readFileSync(path.join(tls, '20-apiserver.yaml'), 'utf8')).toContain('secretName: website-apiserver-etcd-client');
    const plain = tempDir();
    expect(run(['--out', plain, '--storage-backend', 'etcd', '--etcd-servers', 'http://etcd:2379']).status).toBe(0);
    expect(fs.readFileSync(path.join(plain, '20-apiserver.yaml'), 'utf8')).not.toMatch(/etcd-cafile|etcd-client|claim/i);
  });

  it('--crd: needs --out, renders the CRD files (paths from where the command was typed), refuses a CRD kube refuses', () => {
    const needsOut = run(['--crd', CRONTABS]);
    expect(needsOut.status).toBe(2);
    expect(needsOut.stderr).toMatch(/--crd needs --out DIR: manifests\/ holds the bundle of Website alone/);

    const dir = tempDir();
    const r = spawnSync(
      process.execPath,
      [CLI, '--out', dir, '--crd', 'seeds/stable.example.com_crontabs.yaml', '--crd', 'cert-manager.io_certificates.yaml'],
      {
        encoding: 'utf8',
        env: { ...process.env, INIT_CWD: CRDS },
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote     ${path.join(dir, CRD_FILE)}`);
    expect(r.stdout).toContain(`Install: kubectl apply -f ${dir}`);
    const docs = (name: string) => parseAllDocuments(fs.readFileSync(path.join(dir, name), 'utf8')).map((d) => d.toJS());
    expect(docs(CRD_FILE)[0].data['cert-manager.io_certificates.yaml']).toBe(fs.readFileSync(path.join(CRDS, 'cert-manager.io_certificates.yaml'), 'utf8'));
    expect(docs('20-apiserver.yaml').find((o) => o.kind === 'StatefulSet').spec.template.spec.containers[0].args).toContain(`--crd=${CRD_MOUNT_DIR}`);
    expect(
      docs(SERVING_CERTIFICATE_FILE)
        .filter((o) => o.kind === 'APIService')
        .map((o) => o.metadata.name),
    ).toEqual(['v1.extensions.example.com', 'v1alpha1.extensions.example.com', 'v1.stable.example.com', 'v1.cert-manager.io']);

    // A file too large for client-side apply: the install line says --server-side.
    const large = spawnSync(process.execPath, [CLI, '--out', tempDir(), '--crd', path.join(CRDS, 'rabbitmq.com_rabbitmqclusters.yaml')], {
      encoding: 'utf8',
      env: { ...process.env, INIT_CWD: '' },
    });
    expect(large.status, large.stderr).toBe(0);
    expect(large.stdout).toMatch(/too large for client-side kubectl apply: install with --server-side\.\nInstall: kubectl apply --server-side -f /);

    // Without the CRDs again: what to delete by hand.
    const again = run(['--out', dir]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain(`removed   ${path.join(dir, CRD_FILE)} (no --crd this time)`);
    expect(again.stdout).toMatch(
      /kubectl apply leaves them in the cluster, so delete them:\n {2}kubectl delete configmap website-apiserver-crds -n website-system\n {2}kubectl delete apiservice\.apiregistration\.k8s\.io v1\.stable\.example\.com\n {2}kubectl delete apiservice\.apiregistration\.k8s\.io v1\.cert-manager\.io\n/,
    );

    const badDir = tempDir();
    const bad = run(['--out', badDir, '--crd', path.join(CRDS, 'seeds/flights.com_flighttickets.as-written.yaml')]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('is invalid: spec.scope: Unsupported value: "Namespced": supported values: "Cluster", "Namespaced"');
    expect(fs.readdirSync(badDir)).toEqual([]);
    const missing = run(['--out', badDir, '--crd', path.join(CRDS, 'no-such.yaml')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^manifests: .*no-such\.yaml/);
  });

  it('renders every file for the namespace, keeps the certificate on re-run and rotates it with --force', () => {
    const dir = tempDir();
    const first = run(['--namespace', 'team-a', '--out', dir, '--image', 'example.test/ws:1']);
    expect(first.status, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/serving certificate: generated/);
    expect(fs.readdirSync(dir).sort()).toEqual(['00-namespace.yaml', '10-rbac.yaml', '20-apiserver.yaml', SERVING_CERTIFICATE_FILE]);
    expect(fs.readFileSync(path.join(dir, '20-apiserver.yaml'), 'utf8')).toContain('image: example.test/ws:1');
    const all = fs
      .readdirSync(dir)
      .map((n) => fs.readFileSync(path.join(dir, n), 'utf8'))
      .join('');
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
