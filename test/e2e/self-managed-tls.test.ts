/**
 * The one-file install's TLS (deploy/install.yaml, `--self-managed-tls`) on the e2e control plane: our server runs as
 * the other suites run it (a process outside the cluster, as the install's ServiceAccount, behind an ExternalName
 * Service), with the RBAC and the APIServices of deploy/install.yaml applied (the APIServices pointed at it as
 * global-setup points its own, and with no caBundle). It must make the Secret with a certificate for the Service, set
 * the APIServices' caBundle to its CA so they turn Available and `kubectl get websites -A` works through
 * kube-apiserver; a second instance takes the same Secret; a caBundle overwritten by hand is put back; and the whole
 * file passes `kubectl apply --dry-run=server`.
 *
 * The APIServices are the cluster's only ones for the group, shared with every suite: they are saved first and put
 * back (and Available again through the shared server) at the end.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:tls';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kubectl, kubectlOk, waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { suffix } from './helpers-access.js';
import { freePorts } from './plane.mjs';
import { cleanupTempDirs, startServer, type ServerProcess } from '../helpers/server-process.js';
import { APISERVICE_NAMES, SELF_MANAGED_TLS_ROLE, SELF_MANAGED_TLS_SECRET_NAME, SERVICE_NAME, type K8sObject } from '../../src/manifests/render.js';
import { INSTALL_FILE } from '../../src/manifests/deploy-files.js';

const env = e2e();
const admin = env.kubeconfig.admin;
const REPO = resolve(import.meta.dirname, '../..');
const INSTALL = join(REPO, INSTALL_FILE);
const objects = parseAllDocuments(readFileSync(INSTALL, 'utf8')).map((d) => d.toJS() as K8sObject);
const SECRET_NS = 'website-system';
const tag = suffix();
// The Service the APIServices point at here: an ExternalName to loopback in a namespace of this test's own.
const svcNs = `selftls-${tag}`;
const SERVICE_HOST = `${SERVICE_NAME}.${svcNs}.svc`;
const servers: ServerProcess[] = [];
let saved: string[] = [];
let port = 0;

type Secret = { type: string; data: Record<string, string>; metadata: { resourceVersion: string } };
const decode = (s: string) => Buffer.from(s, 'base64').toString('utf8');
const readSecret = async (): Promise<Secret> =>
  JSON.parse(await kubectlOk(admin, ['get', 'secret', '-n', SECRET_NS, SELF_MANAGED_TLS_SECRET_NAME, '-o', 'json']));
const apiService = async (name: string) => JSON.parse(await kubectlOk(admin, ['get', 'apiservice', name, '-o', 'json']));

/** servedCert is the certificate a server presents to a client that asks for the Service's name (as the aggregator). */
function servedCert(p: number): Promise<Buffer> {
  return new Promise((res, rej) => {
    const s = connect({ host: '127.0.0.1', port: p, servername: SERVICE_HOST, rejectUnauthorized: false }, () => {
      res(s.getPeerCertificate().raw);
      s.end();
    });
    s.on('error', rej);
  });
}

function serve(p: number): Promise<ServerProcess> {
  return startServer({
    port: p,
    args: [
      '--bind-address',
      '127.0.0.1',
      '--kubeconfig',
      env.kubeconfig.websiteServer,
      '--enable-reconcilers=false',
      `--self-managed-tls=${SELF_MANAGED_TLS_SECRET_NAME}`,
      '--self-managed-tls-check-interval=2s',
    ],
    // As the downward API sets it in the install's pod.
    env: { POD_NAMESPACE: SECRET_NS },
  });
}

const available = async (names: readonly string[]) => {
  for (const n of names) {
    const o = await apiService(n);
    if (!o.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Available' && c.status === 'True')) return false;
  }
  return true;
};

beforeAll(async () => {
  saved = await Promise.all(APISERVICE_NAMES.map(async (n) => kubectlOk(admin, ['get', 'apiservice', n, '-o', 'json'])));
  [port] = await freePorts(1);
  await kubectlOk(admin, ['create', 'namespace', svcNs]);
  await kubectlOk(admin, ['apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: SERVICE_NAME, namespace: svcNs },
      spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'https', port, protocol: 'TCP' }] },
    }),
  });
  await kubectl(admin, ['delete', 'secret', '-n', SECRET_NS, SELF_MANAGED_TLS_SECRET_NAME, '--ignore-not-found']);
  // The install's ServiceAccount and RBAC, as `kubectl apply -f deploy/install.yaml` applies them: our server runs as that
  // ServiceAccount (the harness's kubeconfig for it), so this RBAC is all it has for the Secret and the APIServices.
  const rbac = objects.filter((o) => ['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'].includes(o.kind));
  await kubectlOk(admin, ['apply', '-f', '-'], { input: rbac.map((o) => JSON.stringify(o)).join('\n') });
  // The install's APIServices, pointed at this test's Service (global-setup points its own at an ExternalName too).
  const apiServices = objects
    .filter((o) => o.kind === 'APIService')
    .map((o) => ({ ...o, spec: { ...(o['spec'] as object), service: { namespace: svcNs, name: SERVICE_NAME, port } } }));
  expect(apiServices.map((a) => a.metadata.name)).toEqual([...APISERVICE_NAMES]);
  for (const a of apiServices) expect(a.spec).not.toHaveProperty('caBundle');
  await kubectlOk(admin, ['apply', '-f', '-'], { input: apiServices.map((o) => JSON.stringify(o)).join('\n') });
  servers.push(await serve(port));
}, 180_000);

afterAll(async () => {
  for (const s of servers) await s.stop().catch(() => undefined);
  cleanupTempDirs();
  // The shared APIServices as they were (pointing at the shared server, with its caBundle), Available again.
  for (const text of saved) {
    const o = JSON.parse(text);
    for (const k of ['resourceVersion', 'uid', 'creationTimestamp', 'managedFields', 'generation']) delete o.metadata[k];
    delete o.status;
    await kubectlOk(admin, ['replace', '-f', '-'], { input: JSON.stringify(o) });
  }
  await waitFor('the shared APIServices Available again', () => available(APISERVICE_NAMES), 90_000, 500);
  await kubectl(admin, ['delete', 'namespace', svcNs, '--wait=false']);
  await kubectl(admin, ['delete', 'secret', '-n', SECRET_NS, SELF_MANAGED_TLS_SECRET_NAME, '--ignore-not-found']);
  await kubectl(admin, ['delete', 'rolebinding,role', '-n', SECRET_NS, SELF_MANAGED_TLS_ROLE, '--ignore-not-found']);
  await kubectl(admin, ['delete', 'clusterrolebinding,clusterrole', SELF_MANAGED_TLS_ROLE, '--ignore-not-found']);
}, 180_000);

describe('--self-managed-tls with the one-file install', () => {
  it('makes the Secret with a CA, its key and a certificate for <service>.<namespace>.svc, and serves that certificate', async () => {
    const s = await readSecret();
    expect(s.type).toBe('kubernetes.io/tls');
    expect(Object.keys(s.data).sort()).toEqual(['ca.crt', 'ca.key', 'tls.crt', 'tls.key']);
    const leaf = new X509Certificate(decode(s.data['tls.crt']!));
    const ca = new X509Certificate(decode(s.data['ca.crt']!));
    expect(leaf.subjectAltName?.split(', ')).toContain(`DNS:${SERVICE_HOST}`);
    expect(leaf.checkIssued(ca) && leaf.verify(ca.publicKey)).toBe(true);
    expect(ca.ca).toBe(true);
    expect((await servedCert(port)).equals(leaf.raw)).toBe(true);
  });

  it("sets each APIService's caBundle to the Secret's ca.crt; they turn Available and kubectl works through kube-apiserver", async () => {
    const s = await readSecret();
    await waitFor(
      'caBundles set',
      async () => {
        for (const n of APISERVICE_NAMES) if ((await apiService(n)).spec.caBundle !== s.data['ca.crt']) return false;
        return true;
      },
      30_000,
      250,
    );
    for (const n of APISERVICE_NAMES) expect((await apiService(n)).spec.insecureSkipTLSVerify ?? false).toBe(false);
    await waitFor('APIServices Available', () => available(APISERVICE_NAMES), 90_000, 500);
    const website = {
      apiVersion: 'extensions.example.com/v1',
      kind: 'Website',
      metadata: { name: 'selftls', namespace: svcNs },
      spec: { git: { repository: 'https://github.com/luksa/kubia-website-example.git' } },
    };
    await waitFor(
      'a Website created through kube-apiserver',
      async () => (await kubectl(admin, ['create', '-f', '-'], { input: JSON.stringify(website) })).code === 0,
      60_000,
      500,
    );
    const r = await kubectl(admin, ['get', 'websites', '-A']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^${svcNs}\\s+selftls\\s`, 'm'));
  });

  it('a second instance on the same Secret takes it as it is: the same certificate, no write', async () => {
    const before = await readSecret();
    const [second] = await freePorts(1);
    const b = await serve(second!);
    servers.push(b);
    expect((await servedCert(second!)).equals(new X509Certificate(decode(before.data['tls.crt']!)).raw)).toBe(true);
    expect((await readSecret()).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(b.logs()).not.toMatch(/serving certificate Secret (created|updated)/);
  });

  it('puts back a caBundle someone else overwrote', async () => {
    const s = await readSecret();
    const name = APISERVICE_NAMES[0]!;
    const other = readFileSync(env.website.servingCAFile).toString('base64');
    expect(other).not.toBe(s.data['ca.crt']);
    await kubectlOk(admin, ['patch', 'apiservice', name, '--type', 'merge', '-p', JSON.stringify({ spec: { caBundle: other } })]);
    await waitFor('the caBundle put back', async () => (await apiService(name)).spec.caBundle === s.data['ca.crt'], 30_000, 250);
    await waitFor('APIServices Available', () => available(APISERVICE_NAMES), 90_000, 500);
    expect((await kubectl(admin, ['get', 'websites', '-A'])).code).toBe(0);
  });

  it('a deleted Secret (rotation): both running instances converge on one new Secret, serve it, and the caBundle follows', async () => {
    const old = await readSecret();
    await kubectlOk(admin, ['delete', 'secret', '-n', SECRET_NS, SELF_MANAGED_TLS_SECRET_NAME]);
    const fresh = await waitFor(
      'a new Secret',
      async () => {
        const r = await kubectl(admin, ['get', 'secret', '-n', SECRET_NS, SELF_MANAGED_TLS_SECRET_NAME, '-o', 'json']);
        return r.code === 0 && (JSON.parse(r.stdout) as Secret);
      },
      30_000,
      250,
    );
    expect(fresh.data['ca.crt']).not.toBe(old.data['ca.crt']);
    const leaf = new X509Certificate(decode(fresh.data['tls.crt']!)).raw;
    // Both servers swap to it without a restart (new connections get it).
    await waitFor(
      'both servers serving the new certificate',
      async () => {
        for (const s of servers) if (!(await servedCert(s.port)).equals(leaf)) return false;
        return true;
      },
      30_000,
      250,
    );
    await waitFor(
      'caBundles on the new CA',
      async () => {
        for (const n of APISERVICE_NAMES) if ((await apiService(n)).spec.caBundle !== fresh.data['ca.crt']) return false;
        return true;
      },
      30_000,
      250,
    );
    // One Secret, written once: a few more checks later it is still the same object and content.
    await new Promise((r) => setTimeout(r, 5000));
    const later = await readSecret();
    expect(later.metadata.resourceVersion).toBe(fresh.metadata.resourceVersion);
    await waitFor('APIServices Available', () => available(APISERVICE_NAMES), 90_000, 500);
    expect((await kubectl(admin, ['get', 'websites', '-A'])).code).toBe(0);
  });

  it('kubectl apply --dry-run=server -f deploy/install.yaml passes on the plane', async () => {
    const r = await kubectl(admin, ['apply', '--dry-run=server', '-f', INSTALL]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(objects.length);
    for (const line of lines) expect(line).toMatch(/^\S+ (created|configured|unchanged) \(server dry run\)$/);
  });
});
