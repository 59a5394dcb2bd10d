/**
 * @module manifests/render
 * renderManifests: the Kubernetes objects that run website-apiserver in a cluster and register it with
 * kube-aggregator, grouped into the files `kubectl apply -f manifests/` applies in name order. Pure: the
 * same options give the same bytes, which is what lets a test pin the committed files to this code.
 *
 * Files: 00-namespace.yaml (Namespace), 10-rbac.yaml (ServiceAccount and RBAC), 15-crds.yaml (only with `crds`: the
 * CRD files as ConfigMaps), 20-apiserver.yaml (Service, StatefulSet, PodDisruptionBudget), 30-serving-certificate.yaml
 * (TLS Secret and an APIService per served version; only with a servingCert, since it holds a private key and a caBundle
 * that differ per install).
 *
 * Two shapes: the default, lmdb (one replica, its store on a PersistentVolumeClaim; the committed manifests/), and
 * etcd (`storage: { backend: 'etcd', ... }`: no claim, any number of replicas sharing the etcd cluster, spread over
 * nodes and zones, with the etcd client certificate from a Secret the operator creates).
 */
import { stringify } from 'yaml';
import { groupVersions } from '../discovery/discovery.js';
import { kinds } from '../kinds/index.js';
import type { Kind } from '../registry/kind-controller.js';
import { servedDefinitions, servedVersions, type KindDefinition } from '../registry/resource.js';
import { SERVICE_NAME, generateServingCertificate, servingCertificateSans, type ServingCertificate } from './serving-cert.js';
import { CRD_CHECKSUM_ANNOTATION, CRD_MOUNT_DIR, crdChecksum, crdKeys, packCrdConfigMaps, type CrdConfigMap, type CrdFile } from './crd-configmaps.js';
import { DEFAULT_ETCD_PREFIX } from '../storage/etcd-defaults.js';

// Re-exported so callers (the e2e suite imports dist/manifests/render.js) need one module.
export { SERVICE_NAME, generateServingCertificate, servingCertificateSans, type ServingCertificate };
export { servingCertificateProblem } from './serving-cert.js';

/** DEFAULT_NAMESPACE is where the committed manifests install the server. */
export const DEFAULT_NAMESPACE = 'website-system';
/** DEFAULT_IMAGE is the container image the committed manifests run (none is published yet). */
export const DEFAULT_IMAGE = 'website-apiserver:0.1.0';
/** SERVING_SECRET_NAME is the kubernetes.io/tls Secret mounted as the serving certificate. */
export const SERVING_SECRET_NAME = 'website-apiserver-serving-cert';
/**
 * groupVersionsOf lists the group/versions the kinds serve, each group's preferred version first (kube's version
 * priority, as discovery orders them): one APIService each.
 */
export function groupVersionsOf(list: readonly KindDefinition[]): { group: string; version: string }[] {
  return groupVersions(servedDefinitions(list)).map(({ group, version }) => ({ group, version }));
}
/** DEFAULT_ETCD_PREFIX is the --etcd-prefix the etcd bundle passes unless told otherwise: the server's default. */
export { DEFAULT_ETCD_PREFIX };
/** DEFAULT_ETCD_CLIENT_SECRET_NAME is the Secret (ca.crt, tls.crt, tls.key) the etcd bundle mounts with `tls: true`. */
export const DEFAULT_ETCD_CLIENT_SECRET_NAME = 'website-apiserver-etcd-client';
/** ETCD_CLIENT_SECRET_KEYS are the keys that Secret must hold: etcd's CA, then the client certificate and its key. */
export const ETCD_CLIENT_SECRET_KEYS = ['ca.crt', 'tls.crt', 'tls.key'] as const;
/** APISERVICE_NAMES are the APIServices of the served kinds, `<version>.<group>` (the only name kube-aggregator accepts). */
export const APISERVICE_NAMES: readonly string[] = groupVersionsOf(kinds).map((gv) => `${gv.version}.${gv.group}`);
/** APISERVICE_NAME is the preferred version's APIService (v1.extensions.example.com). */
export const APISERVICE_NAME = APISERVICE_NAMES[0] ?? '';
/** CONTAINER_PORT is the HTTPS port the server listens on inside the pod. */
export const CONTAINER_PORT = 8443;
/**
 * SERVER_RESOURCES are the server container's requests and limits. The benchmark's scale mode
 * (`npm run bench -- --scale N`) runs the server in a memory cgroup with this memory limit by default.
 * Memory, from that mode at 1,000,000 objects (test/bench/results/scale-1m-cgroup-*.md): the cgroup counts the page
 * cache of data.mdb (1,103 MiB at 1M, a little more than the default 1Gi volume holds) with the anonymous memory, which
 * peaked at 76–97 MiB. At 512Mi nothing was OOM-killed, but the file thrashed in the 440 MiB left (lmdb's map is read
 * ahead on every page fault): get p99 94 ms. At 1536Mi the whole file stays resident beside the anonymous memory
 * (peak 1,254 MiB): get p99 4.6 ms. The request is about twice the anonymous peak plus the b-tree's branch pages;
 * with the map opened without read-ahead (a scratch build) 512Mi held get p99 at 8.6 ms, so the limit can come down
 * once that lands.
 */
export const SERVER_RESOURCES = {
  requests: { cpu: '100m', memory: '256Mi' },
  limits: { cpu: '1', memory: '1536Mi' },
} as const;
/** DEFAULT_SERVICE_PORT is the Service port the APIService points at (the APIService default too). */
export const DEFAULT_SERVICE_PORT = 443;
/** SERVING_CERTIFICATE_FILE is the generated file; it holds a private key and is git-ignored. */
export const SERVING_CERTIFICATE_FILE = '30-serving-certificate.yaml';
/** CRD_FILE holds the ConfigMaps of the CRD files; applied before the StatefulSet whose pods mount them. */
export const CRD_FILE = '15-crds.yaml';
/** CRD_CONFIGMAP_NAME is the (first) ConfigMap of the CRD files; more are `<it>-2`, `<it>-3`… */
export const CRD_CONFIGMAP_NAME = `${SERVICE_NAME}-crds`;
export { CRD_CHECKSUM_ANNOTATION, CRD_MOUNT_DIR, type CrdFile };

/** K8sObject is a Kubernetes object as plain JSON. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [k: string]: unknown };
  [field: string]: unknown;
}

/** ManifestFile is one file of the bundle: its objects and their YAML (documents separated by `---`). */
export interface ManifestFile {
  name: string;
  objects: K8sObject[];
  text: string;
  /** serverSideApply: an object is too large for client-side `kubectl apply` (a CRD ConfigMap over 256 KiB). */
  serverSideApply?: true;
}

/**
 * StorageOptions choose the server's store. lmdb (the default) is one node's file: one replica, on a PersistentVolumeClaim.
 * etcd is shared by every replica: `servers` are its client URLs (http:// or https://, as the server's --etcd-servers),
 * `prefix` its key prefix (default DEFAULT_ETCD_PREFIX), `tls` mounts the client certificate from the Secret
 * `clientSecretName` (default DEFAULT_ETCD_CLIENT_SECRET_NAME; keys ETCD_CLIENT_SECRET_KEYS), which is not rendered.
 */
export type StorageOptions = { backend: 'lmdb' } | { backend: 'etcd'; servers: readonly string[]; prefix?: string; tls?: boolean; clientSecretName?: string };

/** RenderOptions configures renderManifests. */
export interface RenderOptions {
  /** namespace to install into (a DNS-1123 label); default DEFAULT_NAMESPACE. */
  namespace?: string;
  /** image of the server container; default DEFAULT_IMAGE. */
  image?: string;
  /**
   * servingCert fills the Secret and the APIService caBundle. Without it the serving-certificate file is
   * left out (that is how the committed, non-secret files are rendered).
   */
  servingCert?: ServingCertificate;
  /** servicePort is the Service port and the APIService's service.port; default 443. */
  servicePort?: number;
  /** kindFlags are values of the kinds' controller flags (`nginx-image`...), passed to the server as `--name=value`. */
  kindFlags?: Readonly<Record<string, string>>;
  /** imagePullPolicy of the server container; default IfNotPresent. */
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  /** storageClassName of the lmdb data volume claim; default unset (the cluster's default class). lmdb only. */
  storageClassName?: string;
  /** dataVolumeSize is the lmdb data volume claim's request; default 1Gi. lmdb only. */
  dataVolumeSize?: string;
  /** storage is the server's store; default `{ backend: 'lmdb' }`. */
  storage?: StorageOptions;
  /** replicas of the StatefulSet; default 1. More than one needs the etcd backend. */
  replicas?: number;
  /** The kinds served (their APIServices and the roles that extend view/edit/admin to them); default: src/kinds. */
  kinds?: readonly Kind[];
  /**
   * crds: the `--crd` files (names and texts, read and checked by the command: manifests/crd-files.ts) and the kinds
   * they define. The files go into ConfigMaps mounted for the server's `--crd`; the kinds get APIServices and roles
   * beside `kinds`, and no controller (they have none).
   */
  crds?: { files: readonly CrdFile[]; kinds: readonly Kind[] };
  /**
   * crdAPIServices false renders no APIService for the kinds of `crds` (the chart's value of the same name): for CRDs
   * still in the cluster, whose APIServices are kube-aggregator's own until `website-apiserver migrate` points them
   * here. Their RBAC stays, so --self-managed-tls can keep those APIServices' caBundle once they are ours. Default true.
   */
  crdAPIServices?: boolean;
  /**
   * selfManagedTls: the server keeps its serving certificate in this Secret and the APIServices' caBundle current
   * (`--self-managed-tls`, cluster/self-managed-tls.ts): no Secret is mounted, the pod learns its namespace from the
   * downward API, RBAC for exactly that Secret and those APIServices is added, and the APIServices are rendered into
   * APISERVICES_FILE without a caBundle. Excludes servingCert. The one-file install (deploy/install.yaml) is this.
   */
  selfManagedTls?: { secretName: string };
}

/** APISERVICES_FILE holds the APIServices without a caBundle, with selfManagedTls. */
export const APISERVICES_FILE = '30-apiservices.yaml';
/** SELF_MANAGED_TLS_SECRET_NAME is the Secret the one-file install's server keeps its certificate in. */
export const SELF_MANAGED_TLS_SECRET_NAME = `${SERVICE_NAME}-tls`;
/** SELF_MANAGED_TLS_ROLE is the Role (Secret) and ClusterRole (APIServices) --self-managed-tls needs. */
export const SELF_MANAGED_TLS_ROLE = `${SERVICE_NAME}:self-managed-tls`;

/** ServerPod is what the StatefulSet's pod is rendered from. */
interface ServerPod {
  image: string;
  imagePullPolicy: string;
  /** The kinds' controller flags. */
  args: string[];
  replicas: number;
  /** The ConfigMaps of the CRD files, all mounted in CRD_MOUNT_DIR, and the checksum of their content. */
  crds?: { configMaps: readonly string[]; checksum: string };
  /** The --self-managed-tls Secret, instead of the mounted serving certificate. */
  selfManagedTlsSecret?: string;
  store:
    | { backend: 'lmdb'; storageClassName?: string; dataVolumeSize: string }
    | { backend: 'etcd'; servers: readonly string[]; prefix: string; clientSecretName?: string };
}

const NAME_LABEL = 'app.kubernetes.io/name';
const LABELS: Readonly<Record<string, string>> = { [NAME_LABEL]: SERVICE_NAME };
const TLS_DIR = '/etc/website-apiserver/tls';
const CERT_DIR = '/var/run/website-apiserver';
const DATA_DIR = '/data';
/**
 * LMDB_CERT_DIR: with lmdb the server's own CA, admin certificate and kubeconfig live on the data claim, so a restarted
 * or upgraded pod reuses them instead of making them again: about 0.8 s of the start measured in a pod (two RSA keys
 * and forge's signatures), time the API is unavailable when its one replica is replaced. The claim holds the store
 * itself, so it needs no more protection for holding them. etcd replicas have no claim: an emptyDir.
 */
const LMDB_CERT_DIR = `${DATA_DIR}/certs`;
const ETCD_TLS_DIR = '/etc/website-apiserver/etcd';
/**
 * ETCD_SHUTDOWN_DELAY is the etcd bundle's --shutdown-delay-duration: a pod's deletion reaches its EndpointSlice
 * (ready: false) and kube-apiserver's endpoint informer in well under a second; 5 s leaves room for a busy control
 * plane, and with the server's own drain it stays far inside terminationGracePeriodSeconds (30).
 */
const ETCD_SHUTDOWN_DELAY = '5s';
// A fixed non-root UID/GID: runAsNonRoot alone fails for images whose USER is root or a name.
const RUN_AS = 65532;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** validateNamespace returns why `ns` is not a usable namespace name, or undefined. */
export function validateNamespace(ns: string): string | undefined {
  return DNS_LABEL.test(ns) ? undefined : `invalid namespace ${JSON.stringify(ns)}: must be a DNS-1123 label (a-z, 0-9, '-', at most 63)`;
}

// The server's own check of --etcd-servers (src/cmd/options.ts): a URL naming a server, nothing after the host.
const ETCD_SERVER_URL = /^https?:\/\/[^/\s]+\/?$/;
// A Secret's name: a DNS-1123 subdomain.
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * storageProblem returns why the storage and replica options cannot be rendered, or undefined: more than one replica
 * on lmdb, etcd without servers or with a URL the server would refuse, TLS toward an http:// server, a bad prefix or
 * Secret name.
 */
export function storageProblem(storage: StorageOptions = { backend: 'lmdb' }, replicas = 1): string | undefined {
  if (!Number.isInteger(replicas) || replicas < 1) return `invalid replicas ${replicas}: must be a positive integer`;
  if (storage.backend === 'lmdb') {
    return replicas > 1
      ? `${replicas} replicas need the etcd storage backend: lmdb is one node's file, so a second replica would be a separate database behind the same Service`
      : undefined;
  }
  if ((storage.backend as string) !== 'etcd') return `invalid storage backend ${JSON.stringify(storage.backend)}: lmdb or etcd`;
  if (storage.servers.length === 0) return 'the etcd storage backend needs at least one etcd server URL';
  for (const url of storage.servers) {
    if (!ETCD_SERVER_URL.test(url))
      return `invalid etcd server ${JSON.stringify(url)}: must be an http:// or https:// URL of a server (scheme, host and port only)`;
  }
  const schemes = new Set(storage.servers.map((u) => u.slice(0, u.indexOf(':'))));
  // The client dials every server alike (TLS or not), so a mix cannot work.
  if (schemes.size > 1) return 'the etcd servers mix http:// and https://: use one scheme for all';
  if (storage.tls === true && schemes.has('http')) return 'etcd TLS needs https:// server URLs';
  if (storage.prefix !== undefined && !/^\/\S*$/.test(storage.prefix))
    return `invalid etcd prefix ${JSON.stringify(storage.prefix)}: must start with / and hold no whitespace`;
  if (storage.clientSecretName !== undefined) {
    if (storage.tls !== true) return 'an etcd client Secret is only mounted with tls: true';
    if (!DNS_SUBDOMAIN.test(storage.clientSecretName))
      return `invalid etcd client Secret name ${JSON.stringify(storage.clientSecretName)}: must be a DNS-1123 subdomain`;
  }
  return undefined;
}

/** renderManifests returns the files of the bundle in apply order. Throws on invalid options. */
export function renderManifests(opts: RenderOptions = {}): ManifestFile[] {
  const ns = opts.namespace ?? DEFAULT_NAMESPACE;
  const image = opts.image ?? DEFAULT_IMAGE;
  const servicePort = opts.servicePort ?? DEFAULT_SERVICE_PORT;
  const nsProblem = validateNamespace(ns);
  if (nsProblem !== undefined) throw new Error(nsProblem);
  if (image === '' || /\s/.test(image)) throw new Error(`invalid image ${JSON.stringify(image)}`);
  if (!Number.isInteger(servicePort) || servicePort < 1 || servicePort > 65535) {
    throw new Error(`invalid servicePort ${servicePort}: must be 1..65535`);
  }
  const crdFiles = opts.crds?.files ?? [];
  if (crdFiles.length === 0 && (opts.crds?.kinds.length ?? 0) > 0) throw new Error('crds.kinds without crds.files: the server could not serve them');
  const list = [...(opts.kinds ?? kinds), ...(opts.crds?.kinds ?? [])];
  if (opts.crdAPIServices === false && opts.crds === undefined)
    throw new Error('crdAPIServices false without crds: it leaves out the APIServices of CRD files, and there are none');
  const withAPIServices = opts.crdAPIServices === false ? (opts.kinds ?? kinds) : list;
  const known = new Set(list.flatMap((k) => k.controllers?.flags ?? []).map((f) => f.name));
  for (const [flag, v] of Object.entries(opts.kindFlags ?? {})) {
    if (!known.has(flag)) throw new Error(`unknown flag --${flag}: the kinds' controllers take ${[...known].map((f) => `--${f}`).join(', ') || 'none'}`);
    if (v === '' || /\s/.test(v)) throw new Error(`invalid --${flag} ${JSON.stringify(v)}`);
  }
  if (opts.storageClassName !== undefined && !/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(opts.storageClassName)) {
    throw new Error(`invalid storageClassName ${JSON.stringify(opts.storageClassName)}`);
  }
  const dataVolumeSize = opts.dataVolumeSize ?? '1Gi';
  if (!/^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/.test(dataVolumeSize)) throw new Error(`invalid dataVolumeSize ${JSON.stringify(dataVolumeSize)}`);
  const storage = opts.storage ?? { backend: 'lmdb' };
  const replicas = opts.replicas ?? 1;
  const storeProblem = storageProblem(storage, replicas);
  if (storeProblem !== undefined) throw new Error(storeProblem);
  if (storage.backend === 'etcd' && (opts.storageClassName !== undefined || opts.dataVolumeSize !== undefined)) {
    throw new Error('storageClassName and dataVolumeSize shape the lmdb data volume: the etcd bundle has none');
  }
  const smt = opts.selfManagedTls;
  if (smt !== undefined) {
    if (opts.servingCert !== undefined) throw new Error('selfManagedTls and servingCert exclude each other: the server makes its own certificate');
    if (!DNS_SUBDOMAIN.test(smt.secretName)) throw new Error(`invalid selfManagedTls Secret name ${JSON.stringify(smt.secretName)}`);
  }
  const crdConfigMaps: CrdConfigMap[] = packCrdConfigMaps(CRD_CONFIGMAP_NAME, crdFiles, (cm) => configMapObject(ns, cm));
  const pod: ServerPod = {
    image,
    imagePullPolicy: opts.imagePullPolicy ?? 'IfNotPresent',
    args: Object.entries(opts.kindFlags ?? {}).map(([flag, v]) => `--${flag}=${v}`),
    replicas,
    ...(smt !== undefined ? { selfManagedTlsSecret: smt.secretName } : {}),
    ...(crdConfigMaps.length ? { crds: { configMaps: crdConfigMaps.map((c) => c.name), checksum: crdChecksum(crdFiles) } } : {}),
    store:
      storage.backend === 'etcd'
        ? {
            backend: 'etcd',
            servers: storage.servers,
            prefix: storage.prefix ?? DEFAULT_ETCD_PREFIX,
            ...(storage.tls === true ? { clientSecretName: storage.clientSecretName ?? DEFAULT_ETCD_CLIENT_SECRET_NAME } : {}),
          }
        : { backend: 'lmdb', ...(opts.storageClassName !== undefined ? { storageClassName: opts.storageClassName } : {}), dataVolumeSize },
  };
  // The etcd client Secret is the operator's (it comes from their etcd's CA): the file that needs it says so.
  const notes: Record<string, string[]> =
    pod.store.backend === 'etcd' && pod.store.clientSecretName !== undefined ? { '20-apiserver.yaml': etcdSecretNote(ns, pod.store.clientSecretName) } : {};
  if (crdConfigMaps.length) notes[CRD_FILE] = crdNote(crdFiles, crdConfigMaps);

  const files: Array<[string, K8sObject[]]> = [
    ['00-namespace.yaml', [namespaceObject(ns)]],
    ['10-rbac.yaml', [...rbacObjects(ns, list), ...(smt !== undefined ? selfManagedTlsRbac(ns, smt.secretName, list) : [])]],
    ...(crdConfigMaps.length ? [[CRD_FILE, crdConfigMaps.map((c) => configMapObject(ns, c))] as [string, K8sObject[]]] : []),
    ['20-apiserver.yaml', [serviceObject(ns, servicePort), statefulSetObject(ns, pod), podDisruptionBudgetObject(ns)]],
  ];
  if (opts.servingCert !== undefined) {
    files.push([SERVING_CERTIFICATE_FILE, [secretObject(ns, opts.servingCert), ...apiServiceObjects(ns, servicePort, opts.servingCert, withAPIServices)]]);
  }
  if (smt !== undefined) files.push([APISERVICES_FILE, apiServiceObjects(ns, servicePort, undefined, withAPIServices)]);
  const serverSide = crdConfigMaps.some((c) => c.serverSideOnly);
  return files.map(([name, objects]) => ({
    name,
    objects,
    text: toYaml(name, objects, notes[name] ?? []),
    ...(name === CRD_FILE && serverSide ? { serverSideApply: true as const } : {}),
  }));
}

/** etcdSecretNote is the header that tells the operator which Secret the etcd bundle mounts, and what it holds. */
function etcdSecretNote(ns: string, secretName: string): string[] {
  const [ca, crt, key] = ETCD_CLIENT_SECRET_KEYS;
  return [
    `Needs the Secret ${secretName} in namespace ${ns} (not rendered here), the etcd client certificate:`,
    `${ca} (the CA of etcd's serving certificate), ${crt} and ${key} (a client certificate etcd accepts), e.g.`,
    `  kubectl -n ${ns} create secret generic ${secretName} --type=kubernetes.io/tls \\`,
    `    --from-file=${ca}=etcd-ca.crt --from-file=${crt}=etcd-client.crt --from-file=${key}=etcd-client.key`,
  ];
}

/**
 * crdNote is the header of the CRD file: where its content comes from, and which ConfigMaps only server-side apply
 * can take (client-side apply would copy them into an annotation over kube's limit).
 */
function crdNote(files: readonly CrdFile[], configMaps: readonly CrdConfigMap[]): string[] {
  const large = configMaps.filter((c) => c.serverSideOnly);
  return [
    // The keys, not the names: a key cannot hold a line break that would end this comment.
    `The CRD files given with --crd (${crdKeys(files).join(', ')}), as they are: change them and re-run, not this file.`,
    ...(large.length
      ? [
          `${large.map((c) => `ConfigMap ${c.name}`).join(', ')} ${large.length > 1 ? 'are' : 'is'} too large for client-side \`kubectl apply\` (its`,
          `last-applied-configuration annotation would pass kube's 262144-byte limit): kubectl apply --server-side -f ${CRD_FILE}`,
        ]
      : []),
  ];
}

/** toYaml renders objects as one multi-document YAML file with a header naming the generator (and any notes). */
function toYaml(name: string, objects: K8sObject[], notes: readonly string[] = []): string {
  const header =
    (name === SERVING_CERTIFICATE_FILE
      ? '# Generated by `npm run manifests`. Holds a private key: do not commit it.\n'
      : '# Generated by `npm run manifests` (src/manifests/render.ts); edit that code, not this file.\n') + notes.map((l) => `# ${l}\n`).join('');
  // lineWidth 0: never fold long strings (base64 caBundle and Secret data stay on one line).
  const docs = objects.map((o) => stringify(o, { lineWidth: 0 }));
  return header + docs.map((d) => `---\n${d}`).join('');
}

// ---------------------------------------------------------------------------------------------------
// 00: namespace

function namespaceObject(ns: string): K8sObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: ns,
      labels: {
        ...LABELS,
        // The pod meets the "restricted" Pod Security Standard; enforcing it keeps it that way.
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/warn': 'restricted',
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// 10: ServiceAccount and RBAC

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

// Copies, so that no two rules share an array (YAML would print anchors and aliases for a shared one).
const rule = (apiGroups: readonly string[], resources: readonly string[], verbs: readonly string[]): PolicyRule => ({
  apiGroups: [...apiGroups],
  resources: [...resources],
  verbs: [...verbs],
});
const READ = ['get', 'list', 'watch'];

function meta(name: string, ns?: string, extraLabels: Record<string, string> = {}): K8sObject['metadata'] {
  return { name, ...(ns !== undefined ? { namespace: ns } : {}), labels: { ...LABELS, ...extraLabels } };
}

function serviceAccountSubject(ns: string) {
  return [{ kind: 'ServiceAccount', name: SERVICE_NAME, namespace: ns }];
}

function binding(
  kind: 'ClusterRoleBinding' | 'RoleBinding',
  name: string,
  ns: string | undefined,
  roleKind: 'ClusterRole' | 'Role',
  roleName: string,
  saNamespace: string,
): K8sObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: meta(name, ns),
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
    subjects: serviceAccountSubject(saNamespace),
  };
}

/** CLUSTER_ROLE_NAME is the server's own ClusterRole (what it and its reconcilers read and write). */
export const CLUSTER_ROLE_NAME = SERVICE_NAME;
/** AGGREGATE_VIEW_ROLE and AGGREGATE_EDIT_ROLE extend the built-in view/edit/admin roles to websites. */
export const AGGREGATE_VIEW_ROLE = `${SERVICE_NAME}:aggregate-to-view`;
export const AGGREGATE_EDIT_ROLE = `${SERVICE_NAME}:aggregate-to-edit`;

// kindRules are the rules that extend the built-in roles to the served kinds, one rule per group and verb set,
// split as the bootstrap policy splits deployments: view reads (objects, /status, /scale), edit writes (objects,
// /scale). /status stays with the server's controllers, as deployments/status is read-only for edit.
function kindRules(list: readonly KindDefinition[]): { view: PolicyRule[]; edit: PolicyRule[] } {
  const view: PolicyRule[] = [];
  const edit: PolicyRule[] = [];
  for (const group of new Set(list.map((k) => k.storage.group))) {
    // A CRD's versions may differ in subresources; a role names resources, not versions, so any served version's count.
    const defs = list
      .filter((k) => k.storage.group === group)
      .map((k) => {
        const served = servedVersions(k).map((v) => v.definition);
        return { plural: k.storage.plural, status: served.some((d) => d.subresources.status), scale: served.some((d) => d.subresources.scale !== undefined) };
      });
    const readable = defs.flatMap((d) => [d.plural, ...(d.status ? [`${d.plural}/status`] : []), ...(d.scale ? [`${d.plural}/scale`] : [])]);
    view.push(rule([group], readable, READ));
    edit.push(
      rule(
        [group],
        defs.map((d) => d.plural),
        ['create', 'update', 'patch', 'delete', 'deletecollection'],
      ),
    );
    const scalable = defs.filter((d) => d.scale).map((d) => `${d.plural}/scale`);
    if (scalable.length) edit.push(rule([group], scalable, ['update', 'patch']));
  }
  return { view, edit };
}

function rbacObjects(ns: string, list: readonly Kind[]): K8sObject[] {
  const { view, edit } = kindRules(list);
  const aggregate = (to: 'admin' | 'edit' | 'view') => ({ [`rbac.authorization.k8s.io/aggregate-to-${to}`]: 'true' });
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(SERVICE_NAME, ns) },

    // Delegated authentication and authorization: TokenReview and SubjectAccessReview.
    binding('ClusterRoleBinding', `${SERVICE_NAME}:system:auth-delegator`, undefined, 'ClusterRole', 'system:auth-delegator', ns),
    // The front-proxy CA, allowed names and client CA, published by kube-apiserver in kube-system; the
    // Role exists there already (bootstrap policy), so only the binding is ours.
    binding('RoleBinding', `${SERVICE_NAME}:extension-apiserver-authentication-reader`, 'kube-system', 'Role', 'extension-apiserver-authentication-reader', ns),

    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(CLUSTER_ROLE_NAME),
      rules: [
        // Namespace lifecycle: an informer on namespaces (404 for missing, 403 for terminating).
        rule([''], ['namespaces'], READ),
        // What each kind's controllers declare they need (Website's: its Deployments, Services, pods and events).
        ...list.flatMap((k) => (k.controllers?.clusterRules ?? []).map((r) => rule(r.apiGroups, r.resources, r.verbs))),
      ],
    },
    binding('ClusterRoleBinding', CLUSTER_ROLE_NAME, undefined, 'ClusterRole', CLUSTER_ROLE_NAME, ns),

    // Leader election, in our own namespace only.
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(`${SERVICE_NAME}:leader-election`, ns),
      rules: [rule(['coordination.k8s.io'], ['leases'], [...READ, 'create', 'update'])],
    },
    binding('RoleBinding', `${SERVICE_NAME}:leader-election`, ns, 'Role', `${SERVICE_NAME}:leader-election`, ns),

    // Users: kube-apiserver authorizes websites requests before proxying them, so the built-in roles must
    // name them. Split as the bootstrap policy splits deployments: system:aggregate-to-view reads
    // (deployments, /status, /scale), system:aggregate-to-edit writes (deployments, /scale). The built-in
    // view role aggregates into edit and edit into admin; the extra labels here grant the same rules
    // directly, so a binding works without waiting for that cascade.
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(AGGREGATE_VIEW_ROLE, undefined, { ...aggregate('admin'), ...aggregate('edit'), ...aggregate('view') }),
      rules: view,
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(AGGREGATE_EDIT_ROLE, undefined, { ...aggregate('admin'), ...aggregate('edit') }),
      // /scale is written by `kubectl scale` and autoscalers; /status stays with the server's controllers.
      rules: edit,
    },
  ];
}

/**
 * selfManagedTlsRbac is what --self-managed-tls needs and nothing more: in its own namespace get, update and patch of
 * the one Secret, and create of Secrets (RBAC cannot limit create by name: the name is not known before the object
 * exists, so resourceNames would never match); get, update and patch of its own APIServices, by name.
 */
function selfManagedTlsRbac(ns: string, secretName: string, list: readonly KindDefinition[]): K8sObject[] {
  const named = (apiGroups: string[], resources: string[], verbs: string[], resourceNames: string[]) => ({ apiGroups, resources, verbs, resourceNames });
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: meta(SELF_MANAGED_TLS_ROLE, ns),
      rules: [
        named([''], ['secrets'], ['get', 'update', 'patch'], [secretName]),
        // create cannot be limited to a name (RBAC sees no name before the object exists): any Secret in this namespace.
        rule([''], ['secrets'], ['create']),
      ],
    },
    binding('RoleBinding', SELF_MANAGED_TLS_ROLE, ns, 'Role', SELF_MANAGED_TLS_ROLE, ns),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: meta(SELF_MANAGED_TLS_ROLE),
      rules: [
        named(
          ['apiregistration.k8s.io'],
          ['apiservices'],
          ['get', 'update', 'patch'],
          groupVersionsOf(list).map((gv) => `${gv.version}.${gv.group}`),
        ),
      ],
    },
    binding('ClusterRoleBinding', SELF_MANAGED_TLS_ROLE, undefined, 'ClusterRole', SELF_MANAGED_TLS_ROLE, ns),
  ];
}

// ---------------------------------------------------------------------------------------------------
// 15: the CRD files

function configMapObject(ns: string, cm: Pick<CrdConfigMap, 'name' | 'data' | 'binaryData'>): K8sObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(cm.name, ns),
    ...(Object.keys(cm.data).length ? { data: cm.data } : {}),
    ...(Object.keys(cm.binaryData).length ? { binaryData: cm.binaryData } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------
// 20: Service and StatefulSet

function serviceObject(ns: string, port: number): K8sObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(SERVICE_NAME, ns),
    spec: {
      type: 'ClusterIP',
      selector: { ...LABELS },
      // kube-aggregator's availability check wants an EndpointSlice port named like the Service port.
      ports: [{ name: 'https', port, targetPort: 'https', protocol: 'TCP' }],
    },
  };
}

function statefulSetObject(ns: string, pod: ServerPod): K8sObject {
  const { store } = pod;
  const etcdClientSecret = store.backend === 'etcd' ? store.clientSecretName : undefined;
  // lmdb: a full disk fails /readyz's storage check, but reads, lists and watches still work and writes answer 503 with
  // Retry-After: keep the pod behind its Service then, or the whole group would be unavailable for one replica.
  // etcd: the same check fails while etcd does not answer, and such a replica can serve nothing; its peers that reach
  // etcd can, so it leaves the Service until it reaches etcd again.
  const READY_PATH = store.backend === 'etcd' ? '/readyz' : '/readyz?exclude=storage-readiness';
  const storageArgs =
    store.backend === 'etcd'
      ? [
          '--storage-backend=etcd',
          `--etcd-servers=${store.servers.join(',')}`,
          `--etcd-prefix=${store.prefix}`,
          ...(etcdClientSecret !== undefined
            ? [`--etcd-cafile=${ETCD_TLS_DIR}/ca.crt`, `--etcd-certfile=${ETCD_TLS_DIR}/tls.crt`, `--etcd-keyfile=${ETCD_TLS_DIR}/tls.key`]
            : []),
        ]
      : [`--data-dir=${DATA_DIR}`];
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: 'https', scheme: 'HTTPS' }, // health paths need no client certificate
    periodSeconds,
    timeoutSeconds: 5,
    failureThreshold,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: meta(SERVICE_NAME, ns),
    spec: {
      // lmdb: one replica, a single-node store (more would be separate databases behind one Service). etcd: any number.
      replicas: pod.replicas,
      serviceName: SERVICE_NAME,
      selector: { matchLabels: { ...LABELS } },
      // Parallel: replicas share nothing but the Lease, so none waits for another to be ready (matters once an
      // etcd backend allows several). Rolling updates still replace one pod at a time.
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate' },
      template: {
        // A new CRD content changes the annotation, hence the template, hence a rolling update: the server reads the
        // files only at start.
        metadata: { labels: { ...LABELS }, ...(pod.crds !== undefined ? { annotations: { [CRD_CHECKSUM_ANNOTATION]: pod.crds.checksum } } : {}) },
        spec: {
          serviceAccountName: SERVICE_NAME,
          // SIGTERM ends watches, stops accepting and flushes lmdb; the server gives itself 5 s, then exits 1.
          terminationGracePeriodSeconds: 30,
          // etcd, where replicas share the store (and `kubectl scale` may add some): rather not two on one node, and
          // spread over zones too, so one node or zone going down leaves replicas serving. Preferences only: a small
          // cluster still runs them all.
          ...(store.backend === 'etcd'
            ? {
                affinity: {
                  podAntiAffinity: {
                    preferredDuringSchedulingIgnoredDuringExecution: [
                      { weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { ...LABELS } } } },
                    ],
                  },
                },
              }
            : {}),
          // Ready for more replicas: spread them over nodes when the scheduler can, never refuse to schedule.
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { ...LABELS } } },
            ...(store.backend === 'etcd'
              ? [{ maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { ...LABELS } } }]
              : []),
          ],
          // Service links would set WEBSITE_APISERVER_PORT=tcp://… for our own Service, the environment
          // variable of our --port flag.
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUN_AS,
            runAsGroup: RUN_AS,
            fsGroup: RUN_AS, // makes the data volume and the Secret files readable and writable for us
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'apiserver',
              image: pod.image,
              imagePullPolicy: pod.imagePullPolicy,
              args: [
                '--bind-address=0.0.0.0',
                `--port=${CONTAINER_PORT}`,
                // lmdb: --data-dir on the claim. etcd: its flags (--data-dir is unused then, so there is no data volume).
                ...storageArgs,
                `--cert-dir=${store.backend === 'lmdb' ? LMDB_CERT_DIR : CERT_DIR}`,
                ...(pod.selfManagedTlsSecret !== undefined
                  ? [`--self-managed-tls=${pod.selfManagedTlsSecret}`]
                  : [`--tls-cert-file=${TLS_DIR}/tls.crt`, `--tls-private-key-file=${TLS_DIR}/tls.key`]),
                ...(pod.crds !== undefined ? [`--crd=${CRD_MOUNT_DIR}`] : []),
                // Only the holder of the Lease reconciles, so a second replica (or a rolling restart) never races.
                '--leader-elect=true',
                `--leader-elect-namespace=${ns}`,
                // etcd: other replicas can take the traffic, so a stopping one keeps serving (with /readyz failing)
                // while its endpoint turns not-ready and kube-apiserver's aggregator stops picking it; only then do its
                // listener close and its watches end. lmdb: the only replica, there is nowhere to move to.
                ...(store.backend === 'etcd' ? [`--shutdown-delay-duration=${ETCD_SHUTDOWN_DELAY}`] : []),
                ...pod.args,
              ],
              // --self-managed-tls's Secret lives in the pod's own namespace.
              ...(pod.selfManagedTlsSecret !== undefined
                ? { env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }] }
                : {}),
              ports: [{ name: 'https', containerPort: CONTAINER_PORT, protocol: 'TCP' }],
              // Opening a large lmdb store (or reaching etcd) and the first informer syncs take time: liveness starts
              // counting only once this passes (up to 5 minutes). Probed every second, as kubeadm probes
              // kube-apiserver: a restarted pod is Ready within about a second of its /readyz, not up to 7 s later
              // (for one lmdb replica that is time the API is unavailable).
              startupProbe: probe(READY_PATH, 1, 300),
              livenessProbe: probe('/livez', 10, 3),
              // Readiness gates the EndpointSlice, which gates the APIService's Available condition.
              readinessProbe: probe(READY_PATH, 1, 3),
              resources: { requests: { ...SERVER_RESOURCES.requests }, limits: { ...SERVER_RESOURCES.limits } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [
                ...(store.backend === 'lmdb' ? [{ name: 'data', mountPath: DATA_DIR }] : []),
                ...(pod.selfManagedTlsSecret === undefined ? [{ name: 'serving-cert', mountPath: TLS_DIR, readOnly: true }] : []),
                ...(etcdClientSecret !== undefined ? [{ name: 'etcd-client', mountPath: ETCD_TLS_DIR, readOnly: true }] : []),
                ...(pod.crds !== undefined ? [{ name: 'crds', mountPath: CRD_MOUNT_DIR, readOnly: true }] : []),
                ...(store.backend === 'lmdb' ? [] : [{ name: 'cert-dir', mountPath: CERT_DIR }]),
                { name: 'tmp', mountPath: '/tmp' }, // the root filesystem is read-only
              ],
            },
          ],
          volumes: [
            // 0440: readable by the fsGroup, since we do not run as the files' owner (root).
            ...(pod.selfManagedTlsSecret === undefined ? [{ name: 'serving-cert', secret: { secretName: SERVING_SECRET_NAME, defaultMode: 0o440 } }] : []),
            // The operator's Secret (see the file's header): only its three keys, so another key cannot shadow a path.
            ...(etcdClientSecret !== undefined
              ? [
                  {
                    name: 'etcd-client',
                    secret: { secretName: etcdClientSecret, defaultMode: 0o440, items: ETCD_CLIENT_SECRET_KEYS.map((k) => ({ key: k, path: k })) },
                  },
                ]
              : []),
            // Every CRD ConfigMap in one directory, the one --crd names (their keys are unique across them).
            ...(pod.crds !== undefined ? [{ name: 'crds', projected: { sources: pod.crds.configMaps.map((name) => ({ configMap: { name } })) } }] : []),
            // The server still writes its own CA, admin client certificate and kubeconfig there (lmdb: on the claim).
            ...(store.backend === 'lmdb' ? [] : [{ name: 'cert-dir', emptyDir: {} }]),
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
      // lmdb only: the store's file, one claim per pod, kept across restarts and rescheduling.
      ...(store.backend === 'lmdb'
        ? {
            volumeClaimTemplates: [
              {
                metadata: { name: 'data', labels: { ...LABELS } },
                spec: {
                  accessModes: ['ReadWriteOnce'],
                  ...(store.storageClassName !== undefined ? { storageClassName: store.storageClassName } : {}),
                  resources: { requests: { storage: store.dataVolumeSize } },
                },
              },
            ],
          }
        : {}),
    },
  };
}

/**
 * podDisruptionBudgetObject: at most one server pod voluntarily down at a time. With one replica a drain still
 * proceeds (minAvailable 1 would block it forever) at the cost of a short APIService outage; with several replicas
 * (etcd) it keeps the others serving. maxUnavailable rather than minAvailable N-1: it stays right when the
 * StatefulSet is scaled without re-rendering.
 */
function podDisruptionBudgetObject(ns: string): K8sObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(SERVICE_NAME, ns),
    spec: { maxUnavailable: 1, selector: { matchLabels: { ...LABELS } } },
  };
}

// ---------------------------------------------------------------------------------------------------
// 30: serving certificate Secret and APIService

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

function secretObject(ns: string, sc: ServingCertificate): K8sObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: meta(SERVING_SECRET_NAME, ns),
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(sc.cert), 'tls.key': b64(sc.key), 'ca.crt': b64(sc.caCert) },
  };
}

// One APIService per served group/version, all pointing at the one Service. kube-aggregator orders a group's
// versions by versionPriority (higher first): the preferred version gets the highest, 5 apart, the last 15.
function apiServiceObjects(ns: string, port: number, sc: ServingCertificate | undefined, list: readonly KindDefinition[]): K8sObject[] {
  const gvs = groupVersionsOf(list);
  return gvs.map(({ group, version }) => {
    const inGroup = gvs.filter((gv) => gv.group === group);
    const rank = inGroup.findIndex((gv) => gv.version === version);
    return {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: meta(`${version}.${group}`),
      spec: {
        group,
        version,
        groupPriorityMinimum: 1000,
        versionPriority: 15 + 5 * (inGroup.length - 1 - rank),
        service: { namespace: ns, name: SERVICE_NAME, port },
        // The aggregator verifies our certificate against this CA for ServerName website-apiserver.<ns>.svc. Without
        // one (--self-managed-tls) the server sets it to the CA of the certificate it made.
        ...(sc !== undefined ? { caBundle: b64(sc.caCert) } : {}),
      },
    };
  });
}

/** servingCertificateFromObjects finds the serving-certificate Secret in parsed objects and decodes it. */
export function servingCertificateFromObjects(objects: unknown[], namespace: string): ServingCertificate | undefined {
  for (const o of objects) {
    if (typeof o !== 'object' || o === null) continue;
    const s = o as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown }; data?: Record<string, unknown> };
    if (s.kind !== 'Secret' || s.metadata?.name !== SERVING_SECRET_NAME || s.metadata.namespace !== namespace) continue;
    const field = (k: string): string | undefined => {
      const v = s.data?.[k];
      return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : undefined;
    };
    const cert = field('tls.crt');
    const key = field('tls.key');
    const caCert = field('ca.crt');
    if (cert !== undefined && key !== undefined && caCert !== undefined) return { cert, key, caCert };
  }
  return undefined;
}
