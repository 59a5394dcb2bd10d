/**
 * The deployment manifests against the real kube-apiserver: every object of the committed bundle (plus a freshly
 * rendered serving certificate) and of a bundle rendered for another namespace passes a server-side dry run (schema,
 * defaulting, admission including Pod Security); the certificate our server presents verifies against the
 * APIService caBundle for the Service name; the ServiceAccount gets what it needs and no more; the aggregated
 * ClusterRoles give admin/edit/view users exactly the intended website verbs; and a bundle rendered with a CRD file
 * (`--crd`) passes the same dry run, its ConfigMap holding the file as kube stores it.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type PeerCertificate } from 'node:tls';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kubectl, kubectlOk, waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { suffix } from './helpers-access.js';
import {
  APISERVICE_NAME,
  CRD_FILE,
  CRD_MOUNT_DIR,
  DEFAULT_NAMESPACE,
  SERVICE_NAME,
  SERVING_CERTIFICATE_FILE,
  generateServingCertificate,
  renderManifests,
  type K8sObject,
} from '../../src/manifests/render.js';
import { CRD_CORPUS } from '../helpers/crd-corpus.mjs';

const env = e2e();
const admin = env.kubeconfig.admin;
const REPO = resolve(import.meta.dirname, '../..');
const tag = suffix();
const tmp = mkdtempSync(join(tmpdir(), 'website-e2e-manifests-'));
/** namespaces this file creates for real, deleted at the end */
const created: string[] = [];

afterAll(async () => {
  if (created.length) await kubectl(admin, ['delete', 'namespace', ...created, '--wait=false']);
  rmSync(tmp, { recursive: true, force: true });
});

/** objectsIn parses every YAML file of a directory, in the (name) order kubectl applies them. */
function objectsIn(dir: string): K8sObject[] {
  const out: K8sObject[] = [];
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith('.yaml'))
    .sort()) {
    for (const d of parseAllDocuments(readFileSync(join(dir, f), 'utf8'))) {
      if (d.errors.length) throw new Error(`${f}: ${d.errors[0]?.message}`);
      const o = d.toJS() as K8sObject | null;
      if (o) out.push(o);
    }
  }
  return out;
}

/** kubectl's printed name of an object: lower-case kind, then the group for non-core APIs. */
function printedName(o: K8sObject): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return `${o.kind.toLowerCase()}${group ? `.${group}` : ''}/${o.metadata.name}`;
}

/** dryRunAll applies a directory with --dry-run=server and checks one success line per object, in order. */
async function dryRunAll(dir: string): Promise<Map<string, string>> {
  const objects = objectsIn(dir);
  expect(objects.length).toBeGreaterThan(10);
  const r = await kubectl(admin, ['apply', '--dry-run=server', '-f', dir]);
  expect(r.stderr, 'kubectl apply --dry-run=server printed errors or warnings').toBe('');
  expect(r.code).toBe(0);
  const lines = r.stdout.trim().split('\n');
  const results = new Map<string, string>();
  for (const line of lines) {
    const m = /^(\S+) (created|configured|unchanged) \(server dry run\)$/.exec(line);
    expect(m, `unexpected line: ${line}`).not.toBeNull();
    results.set(m![1]!, m![2]!);
  }
  expect(lines.map((l) => l.split(' ')[0])).toEqual(objects.map(printedName));
  return results;
}

describe('kubectl apply --dry-run=server', () => {
  it('accepts every object of the committed manifests/ plus a freshly rendered serving certificate', async () => {
    const dir = join(tmp, 'committed');
    const committed = readdirSync(join(REPO, 'manifests')).filter((n) => n.endsWith('.yaml') && n !== SERVING_CERTIFICATE_FILE);
    expect(committed.sort()).toEqual(['00-namespace.yaml', '10-rbac.yaml', '20-apiserver.yaml']);
    // Same layout as the repository folder after `npm run manifests`, without touching the repository.
    mkdirSync(dir);
    for (const f of committed) copyFileSync(join(REPO, 'manifests', f), join(dir, f));
    const cert = renderManifests({ namespace: DEFAULT_NAMESPACE, servingCert: generateServingCertificate(DEFAULT_NAMESPACE) }).find(
      (f) => f.name === SERVING_CERTIFICATE_FILE,
    );
    expect(cert).toBeDefined();
    writeFileSync(join(dir, SERVING_CERTIFICATE_FILE), cert!.text, { mode: 0o600 });

    const results = await dryRunAll(dir);
    // The harness runs no pod, so the StatefulSet is new; a new CA changes the applied Secret and caBundle.
    expect(results.get(`statefulset.apps/${SERVICE_NAME}`)).toBe('created');
    expect(results.get(`apiservice.apiregistration.k8s.io/${APISERVICE_NAME}`)).toBe('configured');
    expect(results.get(`secret/${SERVICE_NAME}-serving-cert`)).toBe('configured');
    // A dry run changes nothing: the registered APIService keeps the caBundle our running server needs.
    const live = JSON.parse(await kubectlOk(admin, ['get', 'apiservice', APISERVICE_NAME, '-o', 'json'])) as { spec: { caBundle: string } };
    expect(Buffer.from(live.spec.caBundle, 'base64').toString()).toBe(readFileSync(env.website.servingCAFile, 'utf8'));
  });

  it('accepts a bundle rendered for another namespace by `npm run manifests -- --namespace NS --out DIR`', async () => {
    const ns = `manifests-${tag}`;
    const dir = join(tmp, 'other');
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((res) => {
      execFile('npm', ['run', '-s', 'manifests', '--', '--namespace', ns, '--out', dir], { cwd: REPO, timeout: 120_000 }, (err, stdout, stderr) =>
        res({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(out.code, out.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['00-namespace.yaml', '10-rbac.yaml', '20-apiserver.yaml', SERVING_CERTIFICATE_FILE]);

    const objects = objectsIn(dir);
    // Every namespaced object lives in NS and every reference points there (SA subjects, the APIService's Service);
    // only the kube-system RoleBinding (the authentication-config reader) lives elsewhere, by design.
    const text = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    expect(text).not.toContain(DEFAULT_NAMESPACE);
    for (const o of objects) {
      if (o.metadata.namespace !== undefined && o.metadata.namespace !== 'kube-system') expect(o.metadata.namespace, printedName(o)).toBe(ns);
    }
    const apiService = objects.find((o) => o.kind === 'APIService') as { spec: { service: { namespace: string }; caBundle: string } } | undefined;
    expect(apiService?.spec.service.namespace).toBe(ns);

    // The rendered certificate is for this namespace's Service name and chains to the caBundle.
    const secret = objects.find((o) => o.kind === 'Secret') as { data: Record<string, string> } | undefined;
    const leaf = new X509Certificate(Buffer.from(secret?.data['tls.crt'] ?? '', 'base64'));
    const ca = new X509Certificate(Buffer.from(apiService?.spec.caBundle ?? '', 'base64'));
    expect(leaf.checkHost(`${SERVICE_NAME}.${ns}.svc`)).toBe(`${SERVICE_NAME}.${ns}.svc`);
    expect(leaf.checkHost(`${SERVICE_NAME}.${DEFAULT_NAMESPACE}.svc`)).toBeUndefined();
    expect(leaf.verify(ca.publicKey)).toBe(true);

    // Namespaced objects can only be dry-run into a namespace that exists; create it from the bundle itself
    // (so its Pod Security labels are what the StatefulSet is checked against).
    await kubectlOk(admin, ['apply', '-f', join(dir, '00-namespace.yaml')]);
    created.push(ns);
    const results = await dryRunAll(dir);
    expect(results.get(`namespace/${ns}`)).toBe('unchanged');
    expect(results.get(`serviceaccount/${SERVICE_NAME}`)).toBe('created');
    expect(results.get(`statefulset.apps/${SERVICE_NAME}`)).toBe('created');
    expect(results.get(`apiservice.apiregistration.k8s.io/${APISERVICE_NAME}`)).toBe('configured');
    const live = JSON.parse(await kubectlOk(admin, ['get', 'apiservice', APISERVICE_NAME, '-o', 'json'])) as { spec: { service: { namespace: string } } };
    expect(live.spec.service.namespace).toBe(DEFAULT_NAMESPACE);
  });

  it('accepts a bundle rendered with a CRD file by `npm run manifests -- --crd PATH`, the ConfigMap holding the file as kube stores it', async () => {
    const ns = `manifests-crd-${tag}`;
    const dir = join(tmp, 'crd');
    const crdFile = join(CRD_CORPUS, 'seeds', 'stable.example.com_crontabs.yaml');
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((res) => {
      execFile(
        'npm',
        ['run', '-s', 'manifests', '--', '--namespace', ns, '--out', dir, '--crd', crdFile],
        { cwd: REPO, timeout: 120_000 },
        (err, stdout, stderr) => res({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(out.code, out.stderr).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['00-namespace.yaml', '10-rbac.yaml', CRD_FILE, '20-apiserver.yaml', SERVING_CERTIFICATE_FILE]);
    const objects = objectsIn(dir);
    const sts = objects.find((o) => o.kind === 'StatefulSet') as { spec: { template: { spec: { containers: { args: string[] }[] } } } } | undefined;
    expect(sts?.spec.template.spec.containers[0]?.args).toContain(`--crd=${CRD_MOUNT_DIR}`);
    expect(objects.filter((o) => o.kind === 'APIService').map((o) => o.metadata.name)).toContain('v1.stable.example.com');

    await kubectlOk(admin, ['apply', '-f', join(dir, '00-namespace.yaml')]);
    created.push(ns);
    // Schema, defaulting and admission (Pod Security "restricted" with the projected ConfigMap volume) for every object.
    const results = await dryRunAll(dir);
    expect(results.get(`configmap/${SERVICE_NAME}-crds`)).toBe('created');
    expect(results.get(`statefulset.apps/${SERVICE_NAME}`)).toBe('created');
    expect(results.has('apiservice.apiregistration.k8s.io/v1.stable.example.com')).toBe(true);
    // What kube would store: the file's bytes, under the key the server's directory scan reads.
    const stored = JSON.parse(await kubectlOk(admin, ['create', '--dry-run=server', '-o', 'json', '-f', join(dir, CRD_FILE)])) as {
      data: Record<string, string>;
    };
    expect(stored.data).toEqual({ 'stable.example.com_crontabs.yaml': readFileSync(crdFile, 'utf8') });
  });
});

describe('the serving certificate on our port', () => {
  /** handshake dials our port as kube-aggregator does (ServerName = the Service DNS name) trusting `ca`. */
  function handshake(ca: string): Promise<{ authorized: boolean; error?: string; peer?: PeerCertificate }> {
    return new Promise((res) => {
      const s = connect({ host: '127.0.0.1', port: env.website.port, servername: `${SERVICE_NAME}.${DEFAULT_NAMESPACE}.svc`, ca, rejectUnauthorized: true });
      s.once('secureConnect', () => {
        res({ authorized: s.authorized, peer: s.getPeerCertificate() });
        s.destroy();
      });
      s.once('error', (e: NodeJS.ErrnoException) => res({ authorized: false, error: e.code ?? e.message }));
    });
  }

  it('has SAN website-apiserver.website-system.svc and verifies against the APIService caBundle', async () => {
    const o = JSON.parse(await kubectlOk(admin, ['get', 'apiservice', APISERVICE_NAME, '-o', 'json'])) as {
      spec: { caBundle: string; insecureSkipTLSVerify?: boolean };
    };
    expect(o.spec.insecureSkipTLSVerify ?? false).toBe(false);
    const caBundle = Buffer.from(o.spec.caBundle, 'base64').toString();
    const ok = await handshake(caBundle);
    expect(ok.error).toBeUndefined();
    expect(ok.authorized).toBe(true);
    expect(ok.peer?.subjectaltname?.split(', ')).toContain(`DNS:${SERVICE_NAME}.${DEFAULT_NAMESPACE}.svc`);
    // The same check fails against a CA that did not sign it (the cluster CA).
    const wrong = await handshake(readFileSync(env.caFile, 'utf8'));
    expect(wrong.authorized).toBe(false);
    expect(wrong.error).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER/);
  });
});

describe('RBAC', () => {
  const SA = `system:serviceaccount:${DEFAULT_NAMESPACE}:${SERVICE_NAME}`;

  /** canI runs `kubectl auth can-i` as admin impersonating `as`; exit 0 is yes and exit 1 is no. */
  async function canI(as: string[], args: string[]): Promise<boolean> {
    const r = await kubectl(admin, ['auth', 'can-i', ...args, ...as]);
    const answer = r.stdout.trim();
    if (!((answer === 'yes' && r.code === 0) || (answer === 'no' && r.code === 1))) {
      throw new Error(`kubectl auth can-i ${args.join(' ')}: exit ${r.code}, ${r.stdout}${r.stderr}`);
    }
    return answer === 'yes';
  }

  it('the ServiceAccount has what delegation and the reconciler need', async () => {
    const as = ['--as', SA];
    const must: string[][] = [
      ['create', 'tokenreviews.authentication.k8s.io'],
      ['create', 'subjectaccessreviews.authorization.k8s.io'],
      ['get', 'configmap/extension-apiserver-authentication', '-n', 'kube-system'],
      ['list', 'namespaces'],
      ['watch', 'namespaces'],
      ['create', 'deployments.apps', '-n', 'default'],
      ['patch', 'deployments.apps', '-n', 'default'],
      ['create', 'services', '-n', 'default'],
      ['create', 'events', '-n', 'default'],
      ['create', 'leases.coordination.k8s.io', '-n', DEFAULT_NAMESPACE],
    ];
    const answers = await Promise.all(must.map((a) => canI(as, a)));
    expect(Object.fromEntries(must.map((a, i) => [a.join(' '), answers[i]]))).toEqual(Object.fromEntries(must.map((a) => [a.join(' '), true])));
  });

  it('the ServiceAccount has nothing more', async () => {
    const as = ['--as', SA];
    const mustNot: string[][] = [
      ['get', 'secrets', '-n', 'default'],
      ['get', 'secrets', '-n', DEFAULT_NAMESPACE],
      ['list', 'secrets', '--all-namespaces'],
      ['get', 'configmap/some-other-configmap', '-n', 'kube-system'],
      ['create', 'configmaps', '-n', 'kube-system'],
      ['update', 'configmap/extension-apiserver-authentication', '-n', 'kube-system'],
      ['delete', 'namespaces'],
      ['create', 'namespaces'],
      ['*', '*'],
      ['*', '*', '--all-namespaces'],
      ['create', 'clusterrolebindings.rbac.authorization.k8s.io'],
      ['create', 'leases.coordination.k8s.io', '-n', 'default'],
      ['impersonate', 'users'],
    ];
    const answers = await Promise.all(mustNot.map((a) => canI(as, a)));
    expect(Object.fromEntries(mustNot.map((a, i) => [a.join(' '), answers[i]]))).toEqual(Object.fromEntries(mustNot.map((a) => [a.join(' '), false])));
  });

  it('users bound to admin, edit and view get exactly the intended website verbs', async () => {
    const ns = `manifests-rbac-${tag}`;
    await kubectlOk(admin, ['create', 'namespace', ns]);
    created.push(ns);
    const roles = ['admin', 'edit', 'view'] as const;
    const user = (role: string) => `manifests-${role}-${tag}`;
    for (const role of roles) await kubectlOk(admin, ['create', 'rolebinding', `${role}-binding`, '--clusterrole', role, '--user', user(role), '-n', ns]);
    const READ = ['get', 'list', 'watch'];
    const WRITE = ['create', 'update', 'patch', 'delete', 'deletecollection'];
    const VERBS = [...READ, ...WRITE];
    const SUBRESOURCES = ['', 'status', 'scale'];
    // Writers change websites and /scale; nobody but our server writes /status.
    const intended = (role: string, verb: string, sub: string) =>
      READ.includes(verb) || (role !== 'view' && (sub === '' || (sub === 'scale' && ['update', 'patch'].includes(verb))));

    const cases = roles.flatMap((role) => SUBRESOURCES.flatMap((sub) => VERBS.map((verb) => ({ role, sub, verb }))));
    const ask = (c: { role: string; sub: string; verb: string }) =>
      canI(['--as', user(c.role)], [c.verb, 'websites.extensions.example.com', '-n', ns, ...(c.sub ? [`--subresource=${c.sub}`] : [])]);
    const key = (c: { role: string; sub: string; verb: string }) => `${c.role} ${c.verb} websites${c.sub ? `/${c.sub}` : ''}`;
    const want = Object.fromEntries(cases.map((c) => [key(c), intended(c.role, c.verb, c.sub)]));
    // The bindings reach the authorizer through an informer: poll until the answers settle on what we want
    // (at most 20 s), then report the full table once.
    let got: Record<string, boolean> = {};
    await waitFor(
      'RBAC answers',
      async () => {
        got = {};
        for (let i = 0; i < cases.length; i += 12) {
          const batch = cases.slice(i, i + 12);
          const answers = await Promise.all(batch.map(ask));
          batch.forEach((c, j) => {
            got[key(c)] = answers[j]!;
          });
        }
        return JSON.stringify(got) === JSON.stringify(want);
      },
      20_000,
      500,
    ).catch(() => undefined);
    expect(got).toEqual(want);
  });
});
