/**
 * The Helm chart (deploy/helm/website-apiserver) and the kustomize base and ha component (deploy/kustomize) with the
 * real tools against the e2e control plane: `helm lint` (default and HA values) reports no error or warning; `helm
 * template` in each TLS mode (helm, certManager, secret), with CRD files, with the ServiceMonitor and with the HA values,
 * and `kubectl kustomize` of the base and of base + ha, each passes `kubectl apply --dry-run=server` object by object
 * (schema, defaulting, admission with Pod Security "restricted" enforced), and what they render is checked: the
 * APIService caBundle verifies the serving certificate (or cert-manager injects it), nothing skips TLS verification,
 * and the HA form has its replicas, required anti-affinity, budget and priority class.
 *
 * cert-manager and prometheus-operator are not part of the plane: their kinds (Issuer, Certificate, ServiceMonitor) get
 * stand-in CRDs with open schemas for the dry runs, created here and deleted at the end. `helm install`/`upgrade` on a
 * real node are not tested here.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { kubectl, kubectlOk } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { suffix } from './helpers-access.js';
import { APISERVICE_NAMES, SERVICE_NAME, generateServingCertificate, type K8sObject } from '../../src/manifests/render.js';
import { CHART_DIR, HA_VALUES_FILE, KUSTOMIZE_DIR } from '../../src/manifests/deploy-files.js';
import { CRD_CORPUS } from '../helpers/crd-corpus.mjs';

const env = e2e();
const admin = env.kubeconfig.admin;
const REPO = resolve(import.meta.dirname, '../..');
const CHART = join(REPO, CHART_DIR);
const tag = suffix();
const tmp = mkdtempSync(join(tmpdir(), 'website-e2e-install-forms-'));
const ns = `helm-${tag}`;
const created: string[] = [];

/** run executes a tool (helm, kubectl) found on the PATH the global setup put the e2e binaries first on. */
function run(cmd: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const child = execFile(cmd, args, { cwd: REPO, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      res({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

function objectsOf(text: string): K8sObject[] {
  return parseAllDocuments(text).flatMap((d) => {
    if (d.errors.length) throw new Error(d.errors[0]!.message);
    const o = d.toJS() as K8sObject | null;
    return o ? [o] : [];
  });
}

function printedName(o: K8sObject): string {
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : '';
  return `${o.kind.toLowerCase()}${group ? `.${group}` : ''}/${o.metadata.name}`;
}

/** dryRun applies YAML with --dry-run=server and checks one success line per object, in order, and no warning. */
async function dryRun(yaml: string, namespace?: string): Promise<K8sObject[]> {
  const objects = objectsOf(yaml);
  const r = await kubectl(admin, ['apply', '--dry-run=server', ...(namespace ? ['-n', namespace] : []), '-f', '-'], { input: yaml });
  expect(r.stderr, 'kubectl apply --dry-run=server printed errors or warnings').toBe('');
  expect(r.code).toBe(0);
  const lines = r.stdout.trim().split('\n');
  for (const line of lines) expect(line).toMatch(/^\S+ (created|configured|unchanged) \(server dry run\)$/);
  expect(lines.map((l) => l.split(' ')[0])).toEqual(objects.map(printedName));
  return objects;
}

async function helmTemplate(...args: string[]): Promise<string> {
  const r = await run('helm', ['template', SERVICE_NAME, CHART, '--namespace', ns, ...args]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).not.toMatch(/insecureSkipTLSVerify|insecureSkipVerify/);
  return r.stdout;
}

const kindsOf = (objects: K8sObject[]) => objects.map((o) => `${o.kind}/${o.metadata.name}`);
const one = (objects: K8sObject[], kind: string): K8sObject & Record<string, any> => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]! as K8sObject & Record<string, any>;
};

// Stand-ins for the kinds of cert-manager and prometheus-operator: names and scope as theirs, any content accepted.
function standInCrd(group: string, kind: string, plural: string): object {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}
const STAND_INS = [
  standInCrd('cert-manager.io', 'Issuer', 'issuers'),
  standInCrd('cert-manager.io', 'Certificate', 'certificates'),
  standInCrd('monitoring.coreos.com', 'ServiceMonitor', 'servicemonitors'),
];
const standInNames = STAND_INS.map((c) => (c as { metadata: { name: string } }).metadata.name);

beforeAll(async () => {
  // Like the namespace an operator makes for the release (helm install --create-namespace), with the restricted
  // Pod Security level the manifests' Namespace enforces.
  await kubectlOk(admin, ['create', 'namespace', ns]);
  created.push(ns);
  await kubectlOk(admin, ['label', 'namespace', ns, 'pod-security.kubernetes.io/enforce=restricted', 'pod-security.kubernetes.io/warn=restricted']);
  await kubectlOk(admin, ['apply', '-f', '-'], { input: STAND_INS.map((c) => JSON.stringify(c)).join('\n') });
  await kubectlOk(admin, ['wait', '--for=condition=Established', '--timeout=60s', ...standInNames.map((n) => `crd/${n}`)]);
});

afterAll(async () => {
  await kubectl(admin, ['delete', 'crd', ...standInNames, '--wait=false', '--ignore-not-found']);
  if (created.length) await kubectl(admin, ['delete', 'namespace', ...created, '--wait=false']);
  rmSync(tmp, { recursive: true, force: true });
});

describe('helm lint', () => {
  for (const [name, args] of [
    ['default values', []],
    ['the HA values file', ['-f', HA_VALUES_FILE]],
  ] as const) {
    it(`passes with ${name}, no error or warning`, async () => {
      const r = await run('helm', ['lint', '--strict', CHART, ...args]);
      expect(r.stdout + r.stderr).not.toMatch(/\[(ERROR|WARNING)\]/);
      expect(r.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
      expect(r.code).toBe(0);
    });
  }

  it('refuses values the server cannot run with (helm template; lint reports a template fail only as INFO)', async () => {
    const twoLmdb = await run('helm', ['template', CHART, '--set', 'replicas=2']);
    expect(twoLmdb.code).not.toBe(0);
    expect(twoLmdb.stdout + twoLmdb.stderr).toContain('replicas > 1 needs storage.backend etcd');
    const noCa = await run('helm', ['template', CHART, '--set', 'tls.mode=secret', '--set', 'tls.secret.name=x']);
    expect(noCa.code).not.toBe(0);
    expect(noCa.stderr).toContain('tls.secret.caCert');
  });
});

describe('helm template | kubectl apply --dry-run=server', () => {
  it('tls.mode=helm (default): a generated CA whose caBundle verifies the serving certificate for the Service name', async () => {
    const objects = await dryRun(await helmTemplate());
    expect(kindsOf(objects)).toEqual(
      expect.arrayContaining([
        `ServiceAccount/${SERVICE_NAME}`,
        `Service/${SERVICE_NAME}`,
        `StatefulSet/${SERVICE_NAME}`,
        `PodDisruptionBudget/${SERVICE_NAME}`,
        `Secret/${SERVICE_NAME}-serving-cert`,
        ...APISERVICE_NAMES.map((n) => `APIService/${n}`),
      ]),
    );
    expect(objects.some((o) => o.kind === 'Namespace' || o.kind === 'Certificate' || o.kind === 'ServiceMonitor' || o.kind === 'ConfigMap')).toBe(false);
    const secret = one(objects, 'Secret');
    const pem = (k: string) => Buffer.from(secret.data[k] as string, 'base64').toString();
    const ca = new X509Certificate(pem('ca.crt'));
    const leaf = new X509Certificate(pem('tls.crt'));
    expect(leaf.checkIssued(ca) && leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkHost(`${SERVICE_NAME}.${ns}.svc`)).toBe(`${SERVICE_NAME}.${ns}.svc`);
    for (const a of objects.filter((o) => o.kind === 'APIService') as Array<Record<string, any>>) {
      expect(Buffer.from(a.spec.caBundle, 'base64').toString()).toBe(pem('ca.crt'));
      expect(a.spec.service).toEqual({ namespace: ns, name: SERVICE_NAME, port: 443 });
    }
    const sts = one(objects, 'StatefulSet');
    expect(sts.metadata.namespace).toBe(ns);
    expect(sts.spec.replicas).toBe(1);
    expect(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe('1Gi');
    expect(sts.spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution).toHaveLength(1);
    expect(sts.spec.template.spec.containers[0].image).toBe(`website-apiserver:${JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version}`);
    expect(sts.spec.template.spec.containers[0].args).toContain(`--leader-elect-namespace=${ns}`);
    expect(one(objects, 'PodDisruptionBudget').spec.maxUnavailable).toBe(1);
  });

  it('tls.mode=helm keeps the CA and certificate of the Secret in the cluster (lookup, as on upgrade), renews with tls.helm.renew', async () => {
    const sc = generateServingCertificate(ns);
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: `${SERVICE_NAME}-serving-cert`, namespace: ns },
      data: { 'tls.crt': b64(sc.cert), 'tls.key': b64(sc.key), 'ca.crt': b64(sc.caCert) },
    };
    await kubectlOk(admin, ['apply', '-f', '-'], { input: JSON.stringify(secret) });
    try {
      // --dry-run=server lets helm template's lookup read the cluster, as install and upgrade do.
      const kept = objectsOf(await helmTemplate('--dry-run=server', '--kubeconfig', admin));
      expect((one(kept, 'Secret') as Record<string, any>).data).toEqual(secret.data);
      for (const a of kept.filter((o) => o.kind === 'APIService') as Array<Record<string, any>>) expect(a.spec.caBundle).toBe(b64(sc.caCert));
      const renewed = objectsOf(await helmTemplate('--dry-run=server', '--kubeconfig', admin, '--set', 'tls.helm.renew=true'));
      expect((one(renewed, 'Secret') as Record<string, any>).data['ca.crt']).not.toBe(b64(sc.caCert));
    } finally {
      await kubectlOk(admin, ['-n', ns, 'delete', 'secret', `${SERVICE_NAME}-serving-cert`]);
    }
  });

  it('tls.mode=certManager: Issuers and Certificates, APIServices annotated for cainjector, no Secret of ours', async () => {
    const objects = await dryRun(await helmTemplate('--set', 'tls.mode=certManager'));
    expect(objects.filter((o) => o.kind === 'Secret')).toEqual([]);
    // helm orders kinds it does not know by name: Certificates, then Issuers (cert-manager waits for the issuer).
    expect(kindsOf(objects.filter((o) => o.kind === 'Issuer' || o.kind === 'Certificate')).sort()).toEqual([
      `Certificate/${SERVICE_NAME}-ca`,
      `Certificate/${SERVICE_NAME}-serving-cert`,
      `Issuer/${SERVICE_NAME}-ca`,
      `Issuer/${SERVICE_NAME}-selfsigned`,
    ]);
    const cert = objects.find((o) => o.kind === 'Certificate' && o.metadata.name === `${SERVICE_NAME}-serving-cert`) as Record<string, any>;
    expect(cert.spec.secretName).toBe(`${SERVICE_NAME}-serving-cert`);
    expect(cert.spec.dnsNames).toContain(`${SERVICE_NAME}.${ns}.svc`);
    const apiServices = objects.filter((o) => o.kind === 'APIService') as Array<Record<string, any>>;
    expect(apiServices.length).toBe(APISERVICE_NAMES.length);
    for (const a of apiServices) {
      expect(a.metadata.annotations['cert-manager.io/inject-ca-from']).toBe(`${ns}/${SERVICE_NAME}-serving-cert`);
      expect(a.spec.caBundle).toBeUndefined();
    }
    // An issuer of one's own replaces the chart's self-signed CA.
    const own = objectsOf(
      await helmTemplate(
        '--set',
        'tls.mode=certManager',
        '--set',
        'tls.certManager.issuerRef.name=corp',
        '--set',
        'tls.certManager.issuerRef.kind=ClusterIssuer',
      ),
    );
    expect(own.filter((o) => o.kind === 'Issuer')).toEqual([]);
    expect((one(own, 'Certificate') as Record<string, any>).spec.issuerRef).toEqual({ name: 'corp', kind: 'ClusterIssuer', group: 'cert-manager.io' });
  });

  it('tls.mode=secret: the pods mount the given Secret, the APIServices carry the given CA', async () => {
    const sc = generateServingCertificate(ns);
    const caFile = join(tmp, 'ca.crt');
    writeFileSync(caFile, sc.caCert);
    const objects = await dryRun(
      await helmTemplate('--set', 'tls.mode=secret', '--set', 'tls.secret.name=my-tls', '--set-file', `tls.secret.caCert=${caFile}`),
    );
    expect(objects.filter((o) => o.kind === 'Secret' || o.kind === 'Certificate')).toEqual([]);
    const volumes = one(objects, 'StatefulSet').spec.template.spec.volumes as Array<Record<string, any>>;
    expect(volumes.find((v) => v['name'] === 'serving-cert')?.['secret'].secretName).toBe('my-tls');
    for (const a of objects.filter((o) => o.kind === 'APIService') as Array<Record<string, any>>) {
      expect(Buffer.from(a.spec.caBundle, 'base64').toString()).toBe(sc.caCert);
    }
  });

  it('the HA values: etcd with client TLS, 3 replicas, required anti-affinity, minAvailable 1, system-cluster-critical', async () => {
    const objects = await dryRun(await helmTemplate('-f', HA_VALUES_FILE));
    const sts = one(objects, 'StatefulSet');
    expect(sts.spec.replicas).toBe(3);
    expect(sts.spec.volumeClaimTemplates).toBeUndefined();
    const pod = sts.spec.template.spec;
    expect(pod.priorityClassName).toBe('system-cluster-critical');
    expect(pod.affinity.podAntiAffinity).toEqual({
      requiredDuringSchedulingIgnoredDuringExecution: [
        { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'app.kubernetes.io/name': SERVICE_NAME } } },
      ],
    });
    expect(pod.containers[0].args).toEqual(
      expect.arrayContaining([
        '--storage-backend=etcd',
        '--etcd-servers=https://etcd.etcd.svc:2379',
        '--etcd-cafile=/etc/website-apiserver/etcd/ca.crt',
        '--shutdown-delay-duration=5s',
      ]),
    );
    expect(pod.volumes.find((v: Record<string, any>) => v['name'] === 'etcd-client').secret.secretName).toBe('website-apiserver-etcd-client');
    expect(one(objects, 'PodDisruptionBudget').spec).toEqual({ minAvailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': SERVICE_NAME } } });
  });

  it('crds, extraArgs, resources and the ServiceMonitor: the ConfigMap, --crd, one APIService per served version, the roles', async () => {
    const crdFile = join(CRD_CORPUS, 'seeds', 'stable.example.com_crontabs.yaml');
    const objects = await dryRun(
      await helmTemplate(
        '--set-file',
        `crds.crontabs\\.yaml=${crdFile}`,
        '--set',
        'extraArgs={--v=2}',
        '--set',
        'resources.limits.memory=3Gi',
        '--set',
        'serviceMonitor.enabled=true',
      ),
    );
    expect(one(objects, 'ConfigMap').data).toEqual({ 'crontabs.yaml': readFileSync(crdFile, 'utf8') });
    const c = one(objects, 'StatefulSet').spec.template.spec.containers[0];
    expect(c.args.slice(-2)).toEqual(['--crd=/etc/website-apiserver/crds', '--v=2']);
    expect(c.resources.limits.memory).toBe('3Gi');
    expect(c.volumeMounts).toContainEqual({ name: 'crds', mountPath: '/etc/website-apiserver/crds', readOnly: true });
    expect(one(objects, 'StatefulSet').spec.template.metadata.annotations['checksum/crds']).toMatch(/^[0-9a-f]{64}$/);
    const api = objects.find((o) => o.kind === 'APIService' && o.metadata.name === 'v1.stable.example.com') as Record<string, any> | undefined;
    expect(api?.spec).toMatchObject({ group: 'stable.example.com', version: 'v1', service: { namespace: ns, name: SERVICE_NAME } });
    expect(api?.spec.caBundle).toBe(
      (objects.find((o) => o.kind === 'APIService' && o.metadata.name === APISERVICE_NAMES[0]) as Record<string, any>).spec.caBundle,
    );
    const view = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === `${SERVICE_NAME}:aggregate-to-view`) as Record<string, any>;
    expect(view.rules).toContainEqual({
      apiGroups: ['stable.example.com'],
      resources: ['crontabs', 'crontabs/status', 'crontabs/scale'],
      verbs: ['get', 'list', 'watch'],
    });
    const sm = one(objects, 'ServiceMonitor');
    expect(sm.spec.endpoints[0]).toMatchObject({ port: 'https', scheme: 'https', path: '/metrics', tlsConfig: { serverName: `${SERVICE_NAME}.${ns}.svc` } });
    expect(objects.some((o) => o.kind === 'ClusterRole' && o.metadata.name === `${SERVICE_NAME}:metrics-reader`)).toBe(true);
  });

  it('crds with two CRDs of one group (Gateway API: gatewayclasses and gateways, each served in v1 and v1beta1): one APIService per group/version, shared', async () => {
    const files = ['gateway.networking.k8s.io_gatewayclasses.yaml', 'gateway.networking.k8s.io_gateways.yaml'];
    const served = (f: string) =>
      (parseYaml(readFileSync(join(CRD_CORPUS, f), 'utf8')) as { spec: { versions: { name: string; served: boolean }[] } }).spec.versions
        .filter((v) => v.served)
        .map((v) => v.name);
    // The premise: both CRDs serve the same versions, so one APIService per version is right for both.
    expect(served(files[1] as string)).toEqual(served(files[0] as string));
    const objects = await dryRun(await helmTemplate(...files.flatMap((f) => ['--set-file', `crds.${f.replaceAll('.', '\\.')}=${join(CRD_CORPUS, f)}`])));
    expect(Object.keys(one(objects, 'ConfigMap').data).sort()).toEqual(files);
    const apis = (objects as (K8sObject & Record<string, any>)[]).filter((o) => o.kind === 'APIService' && o.spec.group === 'gateway.networking.k8s.io');
    expect(apis.map((o) => o.metadata.name)).toEqual(served(files[0] as string).map((v) => `${v}.gateway.networking.k8s.io`));
    // versionPriority 100 each, as kube-apiserver registers a CRD's versions: the aggregator orders them kube-like.
    expect(apis.map((o) => o.spec.versionPriority)).toEqual(apis.map(() => 100));
    const names = objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('crdAPIServices=false (a CRD still in the cluster, for website-apiserver migrate): the CRD file served, no APIService for it', async () => {
    const crdFile = join(CRD_CORPUS, 'seeds', 'stable.example.com_crontabs.yaml');
    const objects = await dryRun(await helmTemplate('--set-file', `crds.crontabs\\.yaml=${crdFile}`, '--set', 'crdAPIServices=false'));
    expect(one(objects, 'StatefulSet').spec.template.spec.containers[0].args).toContain('--crd=/etc/website-apiserver/crds');
    expect(objects.filter((o) => o.kind === 'APIService').map((o) => o.metadata.name)).toEqual([...APISERVICE_NAMES]);
  });
});

describe('kubectl kustomize | kubectl apply --dry-run=server', () => {
  const base = join(REPO, KUSTOMIZE_DIR, 'base');

  it('the base: the lmdb single replica of manifests/, TLS from cert-manager', async () => {
    const r = await run('kubectl', ['kustomize', base]);
    expect(r.code, r.stderr).toBe(0);
    const objects = await dryRun(r.stdout);
    const committed = ['00-namespace.yaml', '10-rbac.yaml', '20-apiserver.yaml'].flatMap((f) => objectsOf(readFileSync(join(REPO, 'manifests', f), 'utf8')));
    // Every object of manifests/ is in the base as it is there.
    for (const o of committed) expect(objects.find((b) => printedName(b) === printedName(o))).toEqual(o);
    const sts = one(objects, 'StatefulSet');
    expect(sts.spec.replicas).toBe(1);
    expect(sts.spec.volumeClaimTemplates).toHaveLength(1);
    expect(objects.filter((o) => o.kind === 'Certificate').map((o) => o.metadata.name)).toEqual([`${SERVICE_NAME}-ca`, `${SERVICE_NAME}-serving-cert`]);
    for (const a of objects.filter((o) => o.kind === 'APIService') as Array<Record<string, any>>) {
      expect(a.metadata.annotations['cert-manager.io/inject-ca-from']).toBe(`website-system/${SERVICE_NAME}-serving-cert`);
      expect(a.spec.insecureSkipTLSVerify).toBeUndefined();
    }
  });

  it('base + the ha component: etcd, 3 replicas, required anti-affinity, minAvailable 1, system-cluster-critical', async () => {
    const overlay = mkdtempSync(join(tmp, 'overlay-'));
    writeFileSync(
      join(overlay, 'kustomization.yaml'),
      `resources: [${relative(overlay, base)}]\ncomponents: [${relative(overlay, join(REPO, KUSTOMIZE_DIR, 'components', 'ha'))}]\n`,
    );
    const r = await run('kubectl', ['kustomize', overlay]);
    expect(r.code, r.stderr).toBe(0);
    const objects = await dryRun(r.stdout);
    const sts = one(objects, 'StatefulSet');
    expect(sts.spec.replicas).toBe(3);
    expect(sts.spec.volumeClaimTemplates).toBeUndefined();
    const pod = sts.spec.template.spec;
    expect(pod.priorityClassName).toBe('system-cluster-critical');
    expect(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey).toBe('kubernetes.io/hostname');
    expect(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
    expect(pod.containers[0].args).toEqual(expect.arrayContaining(['--storage-backend=etcd', '--etcd-keyfile=/etc/website-apiserver/etcd/tls.key']));
    expect(pod.containers[0].args.some((a: string) => a.startsWith('--data-dir'))).toBe(false);
    expect(pod.containers[0].volumeMounts.some((m: Record<string, any>) => m['name'] === 'data')).toBe(false);
    expect(one(objects, 'PodDisruptionBudget').spec).toEqual({ minAvailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': SERVICE_NAME } } });
  });
});
