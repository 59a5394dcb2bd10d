/**
 * @module manifests/render.test
 * The committed manifests against the renderer, the shape of every object that matters to the cluster
 * (RBAC, StatefulSet, Service, APIService), the etcd bundle with several replicas, namespace moves, and the serving
 * certificate in a real TLS handshake.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { airport } from '../../test/kinds/airport.js';
import { flightTicket } from '../../test/kinds/flight-ticket.js';
import {
  APISERVICE_NAME,
  APISERVICE_NAMES,
  DEFAULT_IMAGE,
  DEFAULT_NAMESPACE,
  SERVING_CERTIFICATE_FILE,
  generateServingCertificate,
  renderManifests,
  servingCertificateProblem,
  storageProblem,
  type K8sObject,
  type ManifestFile,
  type RenderOptions,
  type ServingCertificate,
} from './render.js';
import { parseOptions } from '../cmd/options.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const REPO_MANIFESTS = path.resolve(import.meta.dirname, '../../manifests');
const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const DAY_MS = 86_400_000;

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const all = (files: ManifestFile[]): K8sObject[] => files.flatMap((f) => f.objects);
function find(files: ManifestFile[], kind: string, name: string): K8sObject {
  const o = all(files).find((x) => x.kind === kind && x.metadata.name === name);
  if (o === undefined) throw new Error(`no ${kind} ${name}`);
  return o;
}
const rulesOf = (o: K8sObject): Rule[] => o.rules as Rule[];
/** allows says whether any rule grants verb on group/resource (exact names: the rules hold no wildcards). */
const allows = (rules: Rule[], group: string, resource: string, verb: string): boolean =>
  rules.some((r) => r.apiGroups?.includes(group) && r.resources?.includes(resource) && r.verbs.includes(verb));

// One certificate per namespace for the whole file: RSA keygen and signing cost ~150 ms each.
let sc: ServingCertificate;
let scOther: ServingCertificate;
beforeAll(() => {
  sc = generateServingCertificate(DEFAULT_NAMESPACE);
  scOther = generateServingCertificate('team-a');
});

describe('committed manifests', () => {
  it('are exactly what renderManifests produces for the default namespace and image', () => {
    const rendered = renderManifests({ namespace: DEFAULT_NAMESPACE, image: DEFAULT_IMAGE });
    expect(rendered.map((f) => f.name)).toEqual(['00-namespace.yaml', '10-rbac.yaml', '20-apiserver.yaml']);
    for (const f of rendered) {
      expect(fs.readFileSync(path.join(REPO_MANIFESTS, f.name), 'utf8'), `${f.name} drifted: run npm run manifests`).toBe(f.text);
    }
    // No stale committed YAML beside them (the serving-certificate file is generated and git-ignored).
    const yamls = fs.readdirSync(REPO_MANIFESTS).filter((n) => n.endsWith('.yaml') && n !== SERVING_CERTIFICATE_FILE);
    expect(yamls.sort()).toEqual(rendered.map((f) => f.name));
  });

  it('git-ignores the serving-certificate file', () => {
    const ignore = fs.readFileSync(path.resolve(REPO_MANIFESTS, '../.gitignore'), 'utf8').split('\n');
    expect(ignore).toContain(`/manifests/${SERVING_CERTIFICATE_FILE}`);
  });

  it('parse back into the same objects, one YAML document each', () => {
    for (const f of renderManifests({ servingCert: sc })) {
      const docs = parseAllDocuments(f.text);
      expect(docs.every((d) => d.errors.length === 0)).toBe(true);
      expect(docs.map((d) => d.toJS())).toEqual(f.objects);
    }
  });
});

describe('RBAC', () => {
  const files = renderManifests({ servingCert: undefined });
  const roles = all(files).filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role');

  it('holds no wildcard verb, resource, group or URL', () => {
    expect(roles.length).toBeGreaterThanOrEqual(4);
    for (const r of roles) {
      for (const rule of rulesOf(r)) {
        for (const v of [...rule.verbs, ...(rule.resources ?? []), ...(rule.apiGroups ?? []), ...(rule.nonResourceURLs ?? [])]) {
          expect(v, `${r.kind} ${r.metadata.name}`).not.toContain('*');
        }
      }
    }
  });

  it('binds the ServiceAccount to auth-delegator and, in kube-system, to the authentication reader', () => {
    const crb = all(files).filter((o) => o.kind === 'ClusterRoleBinding');
    expect(crb.map((b) => (b.roleRef as { name: string }).name).sort()).toEqual(['system:auth-delegator', 'website-apiserver']);
    const reader = find(files, 'RoleBinding', 'website-apiserver:extension-apiserver-authentication-reader');
    expect(reader.metadata.namespace).toBe('kube-system');
    expect(reader.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'extension-apiserver-authentication-reader' });
    for (const b of all(files).filter((o) => o.kind.endsWith('Binding'))) {
      expect(b.subjects).toEqual([{ kind: 'ServiceAccount', name: 'website-apiserver', namespace: DEFAULT_NAMESPACE }]);
    }
    expect(find(files, 'ServiceAccount', 'website-apiserver').metadata.namespace).toBe(DEFAULT_NAMESPACE);
  });

  it('gives the server exactly what it and its reconcilers need', () => {
    const own = rulesOf(find(files, 'ClusterRole', 'website-apiserver'));
    const granted = own.flatMap((r) => r.apiGroups!.flatMap((g) => r.resources!.flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`))));
    const rw = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
    expect(granted.sort()).toEqual(
      [
        ...['get', 'list', 'watch'].map((v) => `/namespaces:${v}`),
        ...rw.map((v) => `apps/deployments:${v}`),
        ...rw.map((v) => `/services:${v}`),
        // Pods only read: git-sync failures are reported from their container statuses.
        ...['get', 'list', 'watch'].map((v) => `/pods:${v}`),
        ...['create', 'patch', 'update'].flatMap((v) => [`/events:${v}`, `events.k8s.io/events:${v}`]),
      ].sort(),
    );
    // No secrets (a Website's credentials are only mounted into its pods by name), configmaps or pod writes, and no
    // deletecollection anywhere in the server's own roles.
    expect(granted.some((g) => /secrets|configmaps|pods\/|pods:(create|update|patch|delete)|deletecollection/.test(g))).toBe(false);

    const lease = find(files, 'Role', 'website-apiserver:leader-election');
    expect(lease.metadata.namespace).toBe(DEFAULT_NAMESPACE);
    expect(rulesOf(lease)).toEqual([{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'list', 'watch', 'create', 'update'] }]);
    const leaseBinding = find(files, 'RoleBinding', 'website-apiserver:leader-election');
    expect(leaseBinding.metadata.namespace).toBe(DEFAULT_NAMESPACE);
    expect(leaseBinding.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'website-apiserver:leader-election' });
  });

  it('extends the built-in admin, edit and view roles to websites as they are for deployments', () => {
    // What each built-in role ends up with: the rules of every ClusterRole carrying its aggregation label.
    const aggregated = (to: string): Rule[] =>
      roles.filter((r) => r.kind === 'ClusterRole' && r.metadata.labels?.[`rbac.authorization.k8s.io/aggregate-to-${to}`] === 'true').flatMap(rulesOf);
    const G = 'extensions.example.com';
    const view = aggregated('view');
    for (const res of ['websites', 'websites/status', 'websites/scale']) {
      for (const v of ['get', 'list', 'watch']) expect(allows(view, G, res, v), `view ${v} ${res}`).toBe(true);
    }
    for (const v of ['create', 'update', 'patch', 'delete', 'deletecollection']) {
      expect(allows(view, G, 'websites', v), `view must not ${v}`).toBe(false);
    }
    for (const to of ['edit', 'admin']) {
      const rules = aggregated(to);
      for (const v of ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection']) {
        expect(allows(rules, G, 'websites', v), `${to} ${v} websites`).toBe(true);
      }
      for (const v of ['get', 'update', 'patch']) expect(allows(rules, G, 'websites/scale', v), `${to} ${v} scale`).toBe(true);
      // /status belongs to the server (the reconciler), as deployments/status is read-only for edit.
      expect(allows(rules, G, 'websites/status', 'update')).toBe(false);
      expect(allows(rules, G, 'websites/status', 'patch')).toBe(false);
    }
    // Only websites: the aggregated roles must not widen the built-in roles beyond our group.
    for (const to of ['admin', 'edit', 'view']) expect(aggregated(to).every((r) => r.apiGroups!.join() === G)).toBe(true);
  });

  it('generates those roles and the APIServices from the kinds list: test-only kinds get theirs, by their subresources', () => {
    const files = renderManifests({ servingCert: sc, kinds: [{ storage: flightTicket }, { storage: airport }] });
    const rbac = files.find((f) => f.name === '10-rbac.yaml')!.objects;
    const aggregated = (to: string): Rule[] =>
      rbac.filter((r) => r.kind === 'ClusterRole' && r.metadata.labels?.[`rbac.authorization.k8s.io/aggregate-to-${to}`] === 'true').flatMap(rulesOf);
    const T = 'testing.example.com';
    expect(aggregated('view')).toEqual([{ apiGroups: [T], resources: ['flighttickets', 'flighttickets/status', 'airports'], verbs: ['get', 'list', 'watch'] }]);
    for (const to of ['edit', 'admin']) {
      expect(allows(aggregated(to), T, 'airports', 'create')).toBe(true);
      expect(allows(aggregated(to), T, 'flighttickets', 'deletecollection')).toBe(true);
      // No kind has /scale, so no rule names one.
      expect(aggregated(to).some((r) => r.resources!.some((x) => x.endsWith('/scale')))).toBe(false);
    }
    expect(aggregated('view').some((r) => r.apiGroups!.includes('extensions.example.com'))).toBe(false);
    const services = files.at(-1)!.objects.filter((o) => o.kind === 'APIService');
    expect(services.map((o) => [o.metadata.name, (o as any).spec.versionPriority])).toEqual([['v1.testing.example.com', 15]]);
  });
});

describe('apiserver workload', () => {
  const files = renderManifests({ image: 'registry.example/website-apiserver:dev' });
  const sts = find(files, 'StatefulSet', 'website-apiserver') as K8sObject & { spec: any };
  const pod = sts.spec.template.spec;
  const c = pod.containers[0];

  it('runs one replica of the image with the flags of the in-cluster server', () => {
    expect(sts.spec.replicas).toBe(1);
    expect(sts.spec.serviceName).toBe('website-apiserver');
    expect(sts.spec.selector.matchLabels).toEqual(sts.spec.template.metadata.labels);
    expect(pod.serviceAccountName).toBe('website-apiserver');
    expect(pod.enableServiceLinks).toBe(false);
    expect(c.image).toBe('registry.example/website-apiserver:dev');
    expect(c.args).toEqual([
      '--bind-address=0.0.0.0',
      '--port=8443',
      '--data-dir=/data',
      // On the claim: a restarted pod reuses its CA and admin certificate instead of making them again.
      '--cert-dir=/data/certs',
      '--tls-cert-file=/etc/website-apiserver/tls/tls.crt',
      '--tls-private-key-file=/etc/website-apiserver/tls/tls.key',
      '--leader-elect=true',
      `--leader-elect-namespace=${sts.metadata.namespace}`,
    ]);
    expect(c.args.some((a: string) => a.startsWith('--kubeconfig'))).toBe(false);
    expect(c.ports).toEqual([{ name: 'https', containerPort: 8443, protocol: 'TCP' }]);
  });

  it('keeps /data on a 1Gi ReadWriteOnce claim and mounts the serving Secret read-only', () => {
    expect(sts.spec.volumeClaimTemplates).toHaveLength(1);
    const claim = sts.spec.volumeClaimTemplates[0];
    expect(claim.metadata.name).toBe('data');
    expect(claim.spec).toEqual({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } });
    const mount = (p: string) => c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === p);
    expect(mount('/data').name).toBe('data');
    expect(mount('/etc/website-apiserver/tls')).toEqual({ name: 'serving-cert', mountPath: '/etc/website-apiserver/tls', readOnly: true });
    const vol = (n: string) => pod.volumes.find((v: { name: string }) => v.name === n);
    expect(vol('serving-cert').secret.secretName).toBe('website-apiserver-serving-cert');
    // No emptyDir for the cert dir: it is /data/certs, on the claim.
    expect(mount('/var/run/website-apiserver')).toBeUndefined();
    expect(pod.volumes.some((v: { name: string }) => v.name === 'cert-dir')).toBe(false);
    // Every mount has a volume (the claim template provides `data`).
    for (const m of c.volumeMounts) expect(m.name === 'data' || vol(m.name) !== undefined, m.name).toBe(true);
  });

  it('probes /livez and /readyz over HTTPS and is locked down', () => {
    expect(c.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'https', scheme: 'HTTPS' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz?exclude=storage-readiness', port: 'https', scheme: 'HTTPS' });
    expect(c.resources.requests.cpu).toBeDefined();
    expect(c.resources.requests.memory).toBeDefined();
    expect(c.resources.limits.memory).toBeDefined();
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(pod.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    expect(c.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('starts with a startup probe so liveness never kills a slow cold start, and drains within its grace period', () => {
    expect(c.startupProbe.httpGet).toEqual({ path: '/readyz?exclude=storage-readiness', port: 'https', scheme: 'HTTPS' });
    expect(c.startupProbe.periodSeconds * c.startupProbe.failureThreshold).toBeGreaterThanOrEqual(120);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(5); // the server's own shutdown bound
  });

  it('is ready for more replicas: spread over nodes when possible, updated one pod at a time, with a disruption budget that lets a drain proceed', () => {
    expect(pod.topologySpreadConstraints).toEqual([
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: sts.spec.selector.matchLabels } },
    ]);
    expect(sts.spec.updateStrategy).toEqual({ type: 'RollingUpdate' });
    const pdb = find(files, 'PodDisruptionBudget', 'website-apiserver') as K8sObject & { spec: any };
    expect(pdb.apiVersion).toBe('policy/v1');
    expect(pdb.metadata.namespace).toBe(sts.metadata.namespace);
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: sts.spec.selector.matchLabels } });
  });

  it("passes the Website pods' images, pull policy and volume options through only when given", () => {
    const custom = renderManifests({
      image: 'r.example/ws:1',
      kindFlags: { 'nginx-image': 'r.example/nginx:1', 'git-sync-image': 'r.example/git-sync:4' },
      imagePullPolicy: 'Always',
      storageClassName: 'fast-ssd',
      dataVolumeSize: '20Gi',
    });
    const s2 = find(custom, 'StatefulSet', 'website-apiserver') as K8sObject & { spec: any };
    const c2 = s2.spec.template.spec.containers[0];
    expect(c2.args.slice(-2)).toEqual(['--nginx-image=r.example/nginx:1', '--git-sync-image=r.example/git-sync:4']);
    expect(c2.imagePullPolicy).toBe('Always');
    expect(s2.spec.volumeClaimTemplates[0].spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'fast-ssd',
      resources: { requests: { storage: '20Gi' } },
    });
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(c.args.some((a: string) => /^--(nginx|git-sync)-image/.test(a))).toBe(false);
    expect(() => renderManifests({ kindFlags: { 'nginx-image': 'a b' } })).toThrow(/--nginx-image/);
    // Only the kinds' own flags: anything else would be refused by the server at start.
    expect(() => renderManifests({ kindFlags: { port: '1' } })).toThrow(/unknown flag --port: the kinds' controllers take --nginx-image, --git-sync-image/);
    expect(() => renderManifests({ dataVolumeSize: 'lots' })).toThrow(/dataVolumeSize/);
    expect(() => renderManifests({ storageClassName: 'Fast_SSD' })).toThrow(/storageClassName/);
  });

  it('exposes port 443 named https to the pod through a ClusterIP Service', () => {
    const svc = find(files, 'Service', 'website-apiserver') as K8sObject & { spec: any };
    expect(svc.spec.type).toBe('ClusterIP');
    expect(svc.spec.ports).toEqual([{ name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' }]);
    expect(svc.spec.selector).toEqual(sts.spec.template.metadata.labels);
  });
});

describe('etcd backend and several replicas', () => {
  const ETCD = ['https://etcd-0.etcd.example:2379', 'https://etcd-1.etcd.example:2379', 'https://etcd-2.etcd.example:2379'];
  const render = (o: RenderOptions) => {
    const files = renderManifests(o);
    const sts = find(files, 'StatefulSet', 'website-apiserver') as K8sObject & { spec: any };
    return { files, sts, pod: sts.spec.template.spec, c: sts.spec.template.spec.containers[0] };
  };
  const lmdb = render({});
  const ha = render({ namespace: 'team-a', storage: { backend: 'etcd', servers: ETCD, tls: true }, replicas: 3 });
  const plain = render({ storage: { backend: 'etcd', servers: ['http://etcd.example:2379'], prefix: '/websites' } });
  const mountAt = (c: any, p: string) => c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === p);
  const volume = (pod: any, n: string) => pod.volumes.find((v: { name: string }) => v.name === n);

  it('passes the etcd flags instead of --data-dir, and keeps leader election', () => {
    expect(ha.c.args).toEqual([
      '--bind-address=0.0.0.0',
      '--port=8443',
      '--storage-backend=etcd',
      `--etcd-servers=${ETCD.join(',')}`,
      '--etcd-prefix=/registry/website-apiserver',
      '--etcd-cafile=/etc/website-apiserver/etcd/ca.crt',
      '--etcd-certfile=/etc/website-apiserver/etcd/tls.crt',
      '--etcd-keyfile=/etc/website-apiserver/etcd/tls.key',
      '--cert-dir=/var/run/website-apiserver',
      '--tls-cert-file=/etc/website-apiserver/tls/tls.crt',
      '--tls-private-key-file=/etc/website-apiserver/tls/tls.key',
      '--leader-elect=true',
      '--leader-elect-namespace=team-a',
      '--shutdown-delay-duration=5s',
    ]);
    // Without TLS: no certificate flags, the prefix as given.
    expect(plain.c.args.filter((a: string) => a.startsWith('--etcd') || a.startsWith('--storage') || a.startsWith('--data'))).toEqual([
      '--storage-backend=etcd',
      '--etcd-servers=http://etcd.example:2379',
      '--etcd-prefix=/websites',
    ]);
  });

  it('the server accepts those args (its own flag parser, with the in-cluster defaults)', () => {
    for (const { c } of [ha, plain, lmdb]) {
      const parsed = parseOptions(c.args, {});
      expect(parsed.kind, JSON.stringify(parsed)).toBe('ok');
    }
    const o = parseOptions(ha.c.args, {});
    if (o.kind !== 'ok') throw new Error('unreachable');
    expect(o.options).toMatchObject({
      storageBackend: 'etcd',
      etcdServers: ETCD,
      etcdPrefix: '/registry/website-apiserver',
      leaderElect: true,
      etcdCaFile: '/etc/website-apiserver/etcd/ca.crt',
      etcdCertFile: '/etc/website-apiserver/etcd/tls.crt',
      etcdKeyFile: '/etc/website-apiserver/etcd/tls.key',
    });
    // A stopping replica keeps serving while the aggregator moves to its peers, well inside the grace period;
    // the single lmdb replica has no peers to move to.
    expect(o.options.shutdownDelayMs).toBe(5_000);
    expect(o.options.shutdownDelayMs).toBeLessThan((ha.pod.terminationGracePeriodSeconds * 1000) / 2);
    const single = parseOptions(lmdb.c.args, {});
    expect(single.kind === 'ok' && single.options.shutdownDelayMs).toBe(0);
  });

  it('has no lmdb claim or data volume', () => {
    for (const { sts, pod, c, files } of [ha, plain]) {
      expect(sts.spec.volumeClaimTemplates).toBeUndefined();
      expect(c.volumeMounts.some((m: { name: string; mountPath: string }) => m.name === 'data' || m.mountPath === '/data')).toBe(false);
      expect(c.args.some((a: string) => a.startsWith('--data-dir'))).toBe(false);
      // Every mount has a volume in the pod (no claim template provides one now).
      for (const m of c.volumeMounts) expect(volume(pod, m.name), m.name).toBeDefined();
      expect(all(files).some((o) => o.kind === 'PersistentVolumeClaim')).toBe(false);
      expect(files.map((f) => f.text).join('')).not.toContain('volumeClaimTemplates');
    }
    expect(lmdb.sts.spec.volumeClaimTemplates).toHaveLength(1);
  });

  it('mounts the etcd client Secret read-only where the TLS flags point, and names it in the file header', () => {
    expect(mountAt(ha.c, '/etc/website-apiserver/etcd')).toEqual({ name: 'etcd-client', mountPath: '/etc/website-apiserver/etcd', readOnly: true });
    expect(volume(ha.pod, 'etcd-client').secret).toEqual({
      secretName: 'website-apiserver-etcd-client',
      defaultMode: 0o440,
      items: [
        { key: 'ca.crt', path: 'ca.crt' },
        { key: 'tls.crt', path: 'tls.crt' },
        { key: 'tls.key', path: 'tls.key' },
      ],
    });
    for (const flag of ['cafile', 'certfile', 'keyfile']) {
      const file = ha.c.args.find((a: string) => a.startsWith(`--etcd-${flag}=`)).split('=')[1] as string;
      const m = mountAt(ha.c, path.posix.dirname(file));
      expect(m?.name, flag).toBe('etcd-client');
      expect(volume(ha.pod, 'etcd-client').secret.items.map((i: { path: string }) => i.path)).toContain(path.posix.basename(file));
    }
    // The Secret is the operator's: not rendered, but described where it is used.
    expect(all(ha.files).filter((o) => o.kind === 'Secret')).toEqual([]);
    const text = ha.files.find((f) => f.name === '20-apiserver.yaml')!.text;
    expect(text.split('\n---\n')[0]).toMatch(
      /^# Generated by .*\n# Needs the Secret website-apiserver-etcd-client in namespace team-a[\s\S]*ca\.crt[\s\S]*tls\.crt[\s\S]*tls\.key/,
    );
    expect(parseAllDocuments(text).map((d) => d.toJS())).toEqual(ha.files.find((f) => f.name === '20-apiserver.yaml')!.objects);

    const named = render({ storage: { backend: 'etcd', servers: ETCD, tls: true, clientSecretName: 'etcd-client-cert' } });
    expect(volume(named.pod, 'etcd-client').secret.secretName).toBe('etcd-client-cert');
    // No TLS: no Secret, no note.
    expect(volume(plain.pod, 'etcd-client')).toBeUndefined();
    expect(mountAt(plain.c, '/etc/website-apiserver/etcd')).toBeUndefined();
    expect(plain.files.map((f) => f.text).join('')).not.toContain('Needs the Secret');
  });

  it('runs 3 replicas spread over nodes and zones, at most one voluntarily down', () => {
    const spec = ha.sts.spec;
    const labels = { matchLabels: spec.selector.matchLabels };
    expect(spec.replicas).toBe(3);
    expect(spec.podManagementPolicy).toBe('Parallel');
    expect(spec.updateStrategy).toEqual({ type: 'RollingUpdate' });
    expect(ha.pod.affinity).toEqual({
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: labels } }],
      },
    });
    expect(ha.pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
    expect(ha.pod.topologySpreadConstraints).toEqual([
      { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: labels },
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: labels },
    ]);
    const pdb = find(ha.files, 'PodDisruptionBudget', 'website-apiserver') as K8sObject & { spec: any };
    expect(pdb.metadata.namespace).toBe('team-a');
    expect(pdb.spec).toEqual({ maxUnavailable: 1, selector: labels });
    // An etcd bundle of one replica is ready to be scaled: the same spreading.
    expect(plain.sts.spec.replicas).toBe(1);
    expect(plain.pod.affinity).toEqual(ha.pod.affinity);
    expect(plain.pod.topologySpreadConstraints).toEqual(ha.pod.topologySpreadConstraints);
    // The lmdb bundle keeps its own: one replica, spread over nodes only, no anti-affinity.
    expect(lmdb.sts.spec.replicas).toBe(1);
    expect(lmdb.pod.affinity).toBeUndefined();
    expect(lmdb.pod.topologySpreadConstraints.map((t: { topologyKey: string }) => t.topologyKey)).toEqual(['kubernetes.io/hostname']);
  });

  it('takes a replica that cannot reach etcd out of the Service (plain /readyz); lmdb keeps serving reads on a full disk', () => {
    for (const { c } of [ha, plain]) {
      expect(c.readinessProbe.httpGet.path).toBe('/readyz');
      expect(c.startupProbe.httpGet.path).toBe('/readyz');
      expect(c.livenessProbe.httpGet.path).toBe('/livez');
    }
    expect(lmdb.c.readinessProbe.httpGet.path).toBe('/readyz?exclude=storage-readiness');
    expect(lmdb.c.startupProbe.httpGet.path).toBe('/readyz?exclude=storage-readiness');
  });

  it('leaves everything but the StatefulSet and that file header as the lmdb bundle renders it', () => {
    const etcdDefault = render({ storage: { backend: 'etcd', servers: ETCD, tls: true }, replicas: 3 });
    const withoutSts = (files: ManifestFile[]) => all(files).filter((o) => o.kind !== 'StatefulSet');
    expect(withoutSts(etcdDefault.files)).toEqual(withoutSts(lmdb.files));
    for (const name of ['00-namespace.yaml', '10-rbac.yaml']) {
      expect(etcdDefault.files.find((f) => f.name === name)!.text).toBe(lmdb.files.find((f) => f.name === name)!.text);
    }
    // Explicit defaults render the committed bundle byte for byte.
    const explicit = renderManifests({ storage: { backend: 'lmdb' }, replicas: 1 });
    for (const f of explicit) expect(fs.readFileSync(path.join(REPO_MANIFESTS, f.name), 'utf8'), f.name).toBe(f.text);
  });

  it('refuses several lmdb replicas, etcd without servers or with a URL the server would refuse, and lmdb-only options', () => {
    expect(() => renderManifests({ replicas: 3 })).toThrow(/3 replicas need the etcd storage backend: lmdb is one node's file/);
    expect(() => renderManifests({ storage: { backend: 'lmdb' }, replicas: 2 })).toThrow(/etcd storage backend/);
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => renderManifests({ replicas: bad }), String(bad)).toThrow(/invalid replicas/);
    expect(() => renderManifests({ storage: { backend: 'etcd', servers: [] }, replicas: 3 })).toThrow(/at least one etcd server/);
    for (const url of ['etcd:2379', 'https://etcd:2379/v3', 'ftp://etcd:2379', 'https://', 'https://et cd:2379', '']) {
      expect(() => renderManifests({ storage: { backend: 'etcd', servers: [url] } }), url).toThrow(/invalid etcd server/);
    }
    expect(() => renderManifests({ storage: { backend: 'etcd', servers: ['http://a:2379', 'https://b:2379'] } })).toThrow(/mix http:\/\/ and https:\/\//);
    expect(() => renderManifests({ storage: { backend: 'etcd', servers: ['http://a:2379'], tls: true } })).toThrow(/TLS needs https:\/\//);
    expect(() => renderManifests({ storage: { backend: 'etcd', servers: ETCD, prefix: 'registry' } })).toThrow(/invalid etcd prefix/);
    expect(() => renderManifests({ storage: { backend: 'etcd', servers: ETCD, clientSecretName: 'x' } })).toThrow(/only mounted with tls: true/);
    expect(() => renderManifests({ storage: { backend: 'etcd', servers: ETCD, tls: true, clientSecretName: 'Etcd_Client' } })).toThrow(
      /invalid etcd client Secret name/,
    );
    expect(() => renderManifests({ storage: { backend: 'etcd', servers: ETCD }, dataVolumeSize: '5Gi' })).toThrow(/lmdb data volume/);
    expect(() => renderManifests({ storage: { backend: 'etcd', servers: ETCD }, storageClassName: 'fast' })).toThrow(/lmdb data volume/);
    expect(() => renderManifests({ storage: { backend: 'sqlite' } as never })).toThrow(/invalid storage backend/);
  });

  it('accepts exactly the server URLs the server accepts', () => {
    const urls = [
      'http://etcd:2379',
      'https://10.0.0.1:2379/',
      'https://[fd00::1]:2379',
      'https://etcd',
      'etcd:2379',
      'https://etcd:2379/v3',
      'unix:///run/etcd.sock',
      'https://e tcd',
    ];
    for (const url of urls) {
      const server = parseOptions(['--storage-backend=etcd', `--etcd-servers=${url}`], {}).kind === 'ok';
      expect(storageProblem({ backend: 'etcd', servers: [url] }) === undefined, url).toBe(server);
    }
  });
});

describe('serving certificate and APIService', () => {
  it('registers v1.extensions.example.com and v1alpha1.extensions.example.com (v1 preferred) with the CA as caBundle', () => {
    const files = renderManifests({ servingCert: sc });
    expect(files.at(-1)!.name).toBe(SERVING_CERTIFICATE_FILE);
    expect(APISERVICE_NAMES).toEqual(['v1.extensions.example.com', 'v1alpha1.extensions.example.com']);
    expect(APISERVICE_NAME).toBe('v1.extensions.example.com');
    const alpha = find(files, 'APIService', 'v1alpha1.extensions.example.com') as K8sObject & { spec: any };
    expect(alpha.spec).toMatchObject({ group: 'extensions.example.com', version: 'v1alpha1', groupPriorityMinimum: 1000, versionPriority: 15 });
    expect(alpha.spec.caBundle).toBe(b64(sc.caCert));
    const api = find(files, 'APIService', APISERVICE_NAME) as K8sObject & { spec: any };
    expect(api.apiVersion).toBe('apiregistration.k8s.io/v1');
    expect(api.spec).toMatchObject({
      group: 'extensions.example.com',
      version: 'v1',
      groupPriorityMinimum: 1000,
      versionPriority: 20,
      service: { namespace: DEFAULT_NAMESPACE, name: 'website-apiserver', port: 443 },
    });
    expect(api.spec.insecureSkipTLSVerify).toBeUndefined();
    expect(files.at(-1)!.text).not.toContain('insecureSkipTLSVerify');
    expect(Buffer.from(api.spec.caBundle, 'base64').toString('utf8')).toBe(sc.caCert);
    expect(new X509Certificate(Buffer.from(api.spec.caBundle, 'base64')).ca).toBe(true);

    const secret = find(files, 'Secret', 'website-apiserver-serving-cert') as K8sObject & { data: Record<string, string> };
    expect(secret.type).toBe('kubernetes.io/tls');
    expect(secret.metadata.namespace).toBe(DEFAULT_NAMESPACE);
    const decoded = Object.fromEntries(Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    expect(decoded).toEqual({ 'tls.crt': sc.cert, 'tls.key': sc.key, 'ca.crt': sc.caCert });
  });

  it('uses servicePort for the Service and the APIService', () => {
    const files = renderManifests({ servingCert: sc, servicePort: 18443 });
    expect((find(files, 'APIService', APISERVICE_NAME) as any).spec.service.port).toBe(18443);
    expect((find(files, 'Service', 'website-apiserver') as any).spec.ports[0].port).toBe(18443);
    expect(() => renderManifests({ servicePort: 0 })).toThrow(/servicePort/);
  });

  it('is a serverAuth certificate signed by the CA, with the Service names as SANs', () => {
    const leaf = new X509Certificate(sc.cert);
    const ca = new X509Certificate(sc.caCert);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.checkIssued(ca)).toBe(true);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.verify(new X509Certificate(scOther.caCert).publicKey)).toBe(false);
    expect(leaf.keyUsage).toEqual([OID_SERVER_AUTH]);
    expect(leaf.subjectAltName!.split(', ').sort()).toEqual(
      [
        'DNS:website-apiserver.website-system.svc',
        'DNS:website-apiserver.website-system.svc.cluster.local',
        'DNS:website-apiserver.website-system',
        'DNS:website-apiserver',
      ].sort(),
    );
    expect(sc.cert).not.toContain('\r');
    expect(servingCertificateProblem(sc, DEFAULT_NAMESPACE)).toBeUndefined();
  });

  it('passes a TLS handshake verified against the caBundle for ServerName <svc>.<ns>.svc, as the aggregator dials', async () => {
    const server = https.createServer({ cert: sc.cert, key: sc.key }, (_req, res) => res.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    const get = (servername: string, ca: string) =>
      new Promise<string>((resolve, reject) => {
        const req = https.get({ host: '127.0.0.1', port, servername, ca, path: '/', agent: false }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve(body));
        });
        req.on('error', reject);
      });
    try {
      expect(await get('website-apiserver.website-system.svc', sc.caCert)).toBe('ok');
      // Another namespace's name, or another install's CA, must fail verification.
      await expect(get('website-apiserver.team-a.svc', sc.caCert)).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
      await expect(get('website-apiserver.website-system.svc', scOther.caCert)).rejects.toThrow();
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('says why a certificate cannot be kept', () => {
    expect(servingCertificateProblem(sc, 'team-a')).toMatch(/lacks SAN website-apiserver\.team-a\.svc/);
    expect(servingCertificateProblem({ ...sc, key: scOther.key }, DEFAULT_NAMESPACE)).toMatch(/does not match/);
    expect(servingCertificateProblem({ ...sc, caCert: scOther.caCert }, DEFAULT_NAMESPACE)).toMatch(/not signed by ca\.crt/);
    expect(servingCertificateProblem({ ...sc, cert: 'garbage' }, DEFAULT_NAMESPACE)).toMatch(/cannot parse/);
    // The leaf lives 365 days; within the last 30 it is due.
    expect(servingCertificateProblem(sc, DEFAULT_NAMESPACE, { now: new Date(Date.now() + 300 * DAY_MS) })).toBeUndefined();
    expect(servingCertificateProblem(sc, DEFAULT_NAMESPACE, { now: new Date(Date.now() + 340 * DAY_MS) })).toMatch(/tls\.crt expires/);
  });
});

describe('another namespace', () => {
  it('moves every namespace reference except the authentication reader binding in kube-system', () => {
    const files = renderManifests({ namespace: 'team-a', servingCert: scOther });
    const objs = all(files);
    expect(files.map((f) => f.text).join('')).not.toContain(DEFAULT_NAMESPACE);
    expect(find(files, 'Namespace', 'team-a')).toBeDefined();

    // Collect every namespace-valued field, wherever it sits.
    const refs: Array<{ where: string; ns: unknown }> = [];
    const walk = (v: unknown, where: string): void => {
      if (Array.isArray(v))
        v.forEach((x, i) => {
          walk(x, `${where}[${i}]`);
        });
      else if (typeof v === 'object' && v !== null) {
        for (const [k, x] of Object.entries(v)) {
          if (k === 'namespace') refs.push({ where: `${where}.${k}`, ns: x });
          walk(x, `${where}.${k}`);
        }
      }
    };
    for (const o of objs) walk(o, `${o.kind}/${o.metadata.name}`);
    const elsewhere = refs.filter((r) => r.ns !== 'team-a');
    expect(elsewhere).toEqual([{ where: 'RoleBinding/website-apiserver:extension-apiserver-authentication-reader.metadata.namespace', ns: 'kube-system' }]);
    // Namespaced kinds all carry a namespace; cluster-scoped ones none.
    const clusterScoped = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'APIService']);
    for (const o of objs) expect(o.metadata.namespace === undefined, `${o.kind} ${o.metadata.name}`).toBe(clusterScoped.has(o.kind));
    expect((find(files, 'APIService', APISERVICE_NAME) as any).spec.service.namespace).toBe('team-a');
    expect(new X509Certificate(scOther.cert).subjectAltName).toContain('DNS:website-apiserver.team-a.svc');
  });

  it('rejects names that are not DNS labels', () => {
    for (const bad of ['', 'Team-A', 'a.b', '-a', 'a'.repeat(64)]) {
      expect(() => renderManifests({ namespace: bad }), bad).toThrow(/invalid namespace/);
    }
  });
});
