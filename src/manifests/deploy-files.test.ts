/**
 * @module manifests/deploy-files.test
 * The committed Helm chart and kustomize files (deploy/) are what src/manifests/chart.ts and kustomize.ts generate
 * (`npm run manifests` rewrites them), and they keep the invariants of the install: no APIService skips TLS
 * verification, the chart's version and appVersion, the ha component's choices.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CHART_DIR, HA_VALUES_FILE, INSTALL_FILE, KUSTOMIZE_DIR, deployFiles, packageVersion } from './deploy-files.js';
import { APISERVICE_NAMES, SELF_MANAGED_TLS_ROLE, SELF_MANAGED_TLS_SECRET_NAME } from './render.js';
import { CHART_VERSION } from './chart.js';
import { jsonPatch } from './kustomize.js';

const ROOT = resolve(import.meta.dirname, '../..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [relative(ROOT, p)];
  });
}

describe('deploy/ (Helm chart and kustomize)', () => {
  const generated = deployFiles(packageVersion(ROOT));

  it('the committed files equal the generator output, and nothing else is there', () => {
    const committed = [...filesUnder(join(ROOT, CHART_DIR)), HA_VALUES_FILE, ...filesUnder(join(ROOT, KUSTOMIZE_DIR)), INSTALL_FILE].sort();
    expect(committed).toEqual(generated.map((f) => f.path).sort());
    for (const f of generated) expect(readFileSync(join(ROOT, f.path), 'utf8'), `${f.path} differs: run npm run manifests`).toBe(f.text);
  });

  it('Chart.yaml: version 0.1.0, appVersion from package.json', () => {
    const chart = parse(generated.find((f) => f.path === `${CHART_DIR}/Chart.yaml`)!.text) as { version: string; appVersion: string; apiVersion: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', version: CHART_VERSION, appVersion: packageVersion(ROOT) });
    expect(CHART_VERSION).toBe('0.1.0');
  });

  it('never skips TLS verification', () => {
    for (const f of generated) expect(f.text, f.path).not.toMatch(/insecureSkipTLSVerify|insecureSkipVerify/);
  });

  it('the kustomize base registers APIServices whose CA cert-manager injects, with no caBundle of their own', () => {
    const tls = generated.find((f) => f.path === `${KUSTOMIZE_DIR}/base/tls.yaml`)!.text;
    const apiServices = parseAllDocuments(tls)
      .map((d) => d.toJS())
      .filter((o) => o.kind === 'APIService');
    expect(apiServices.length).toBeGreaterThan(0);
    for (const a of apiServices) {
      expect(a.metadata.annotations['cert-manager.io/inject-ca-from']).toBe('website-system/website-apiserver-serving-cert');
      expect(a.spec.caBundle).toBeUndefined();
    }
  });
});

describe('deploy/install.yaml (the one-file install)', () => {
  const text = deployFiles(packageVersion(ROOT)).find((f) => f.path === INSTALL_FILE)!.text;
  const objects = parseAllDocuments(text).map((d) => d.toJS());
  const find = (kind: string, name?: string) => objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));

  it('holds the namespace, RBAC, Service, StatefulSet, budget and APIServices, and no Secret', () => {
    expect(objects.map((o) => o.kind)).toEqual(
      expect.arrayContaining(['Namespace', 'ServiceAccount', 'ClusterRole', 'Role', 'Service', 'StatefulSet', 'PodDisruptionBudget', 'APIService']),
    );
    expect(find('Secret')).toEqual([]);
    expect(text).not.toMatch(/PRIVATE KEY|insecureSkipTLSVerify/);
  });

  it('registers every served version with no caBundle: the server sets it', () => {
    const apiServices = find('APIService');
    expect(apiServices.map((a) => a.metadata.name)).toEqual([...APISERVICE_NAMES]);
    for (const a of apiServices) {
      expect(a.spec.caBundle).toBeUndefined();
      expect(a.spec.service).toEqual({ namespace: 'website-system', name: 'website-apiserver', port: 443 });
    }
  });

  it('runs one lmdb replica with --self-managed-tls, its namespace from the downward API and no mounted certificate', () => {
    const [sts] = find('StatefulSet');
    expect(sts.spec.replicas).toBe(1);
    expect(sts.spec.volumeClaimTemplates).toHaveLength(1);
    const pod = sts.spec.template.spec;
    const c = pod.containers[0];
    expect(c.args).toContain(`--self-managed-tls=${SELF_MANAGED_TLS_SECRET_NAME}`);
    expect(c.args.filter((a: string) => a.startsWith('--tls-'))).toEqual([]);
    expect(c.env).toEqual([{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }]);
    expect(pod.volumes.filter((v: { secret?: unknown }) => v.secret)).toEqual([]);
    expect(find('PodDisruptionBudget')).toHaveLength(1);
  });

  it('grants the certificate exactly the one Secret (create by any name, which RBAC cannot narrow) and its own APIServices', () => {
    const [role] = find('Role', SELF_MANAGED_TLS_ROLE);
    expect(role.metadata.namespace).toBe('website-system');
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'update', 'patch'], resourceNames: [SELF_MANAGED_TLS_SECRET_NAME] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    ]);
    const [clusterRole] = find('ClusterRole', SELF_MANAGED_TLS_ROLE);
    expect(clusterRole.rules).toEqual([
      { apiGroups: ['apiregistration.k8s.io'], resources: ['apiservices'], verbs: ['get', 'update', 'patch'], resourceNames: [...APISERVICE_NAMES] },
    ]);
    for (const kind of ['RoleBinding', 'ClusterRoleBinding']) {
      const [b] = find(kind, SELF_MANAGED_TLS_ROLE);
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: 'website-apiserver', namespace: 'website-system' }]);
    }
    // Nothing else in the install reads or writes Secrets or APIServices.
    const others = [...find('Role'), ...find('ClusterRole')].filter((r) => r.metadata.name !== SELF_MANAGED_TLS_ROLE);
    for (const r of others) for (const rule of r.rules) expect(rule.resources, r.metadata.name).not.toEqual(expect.arrayContaining(['secrets']));
    for (const r of others) for (const rule of r.rules) expect(rule.resources, r.metadata.name).not.toEqual(expect.arrayContaining(['apiservices']));
  });
});

describe('jsonPatch', () => {
  it('adds, removes and replaces, arrays whole, escaping ~ and / in keys', () => {
    expect(jsonPatch({ a: 1, b: { c: [1, 2], 'x/y': 1 }, d: 1 }, { a: 1, b: { c: [1, 3], 'x/y': 2, 'e~': 0 } })).toEqual([
      { op: 'remove', path: '/d' },
      { op: 'replace', path: '/b/c', value: [1, 3] },
      { op: 'replace', path: '/b/x~1y', value: 2 },
      { op: 'add', path: '/b/e~0', value: 0 },
    ]);
  });
});
