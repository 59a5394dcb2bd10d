/**
 * @module kinds/website/common
 * What every version of Website shares: its names, its status (the same in v1alpha1 and v1), the schema of the
 * members every object has, the STATUS column and the checks of a git URL, branch and secret name.
 */
import { conditionsSchema, type Condition } from '../../apis/meta/conditions.js';
import { invalid, type FieldError, type FieldPath } from '../../apis/meta/field-path.js';
import { isDNS1123Subdomain } from '../../apis/meta/validation.js';
import type { JSONSchema } from '../../apis/meta/json-schema.js';
import type { KubeObject } from '../../apis/meta/types.js';
import type { PrinterColumn, ScaleMapping } from '../../registry/resource.js';

/** GROUP is Website's API group. */
export const GROUP = 'extensions.example.com';

/** names are Website's names, the same in every version. */
export const names = {
  group: GROUP,
  kind: 'Website',
  listKind: 'WebsiteList',
  plural: 'websites',
  singular: 'website',
  shortNames: ['ws'],
  categories: ['all'],
  namespaced: true,
} as const;

/** WebsiteCondition is a metav1.Condition: Ready, Progressing or Degraded. */
export type WebsiteCondition = Condition;

/** WebsiteStatus is written only through the status subresource. */
export interface WebsiteStatus {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  selector?: string;
  deployment?: string;
  service?: string;
  nodePort?: number;
  conditions?: WebsiteCondition[];
}

/** WebsiteObject is what every version's Website is: an object with a status. */
export interface WebsiteObject extends KubeObject {
  status?: WebsiteStatus;
}

/** typeMetaProperties are apiVersion, kind and metadata as every object has them. */
export const typeMetaProperties: Record<string, JSONSchema> = {
  apiVersion: {
    type: 'string',
    description:
      'APIVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
  },
  kind: {
    type: 'string',
    description:
      'Kind is a string value representing the REST resource this object represents. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
  },
  metadata: { type: 'object', description: "Standard object's metadata.", 'x-kubernetes-preserve-unknown-fields': true },
};

/** statusSchema is WebsiteStatus' schema. */
export const statusSchema: JSONSchema = {
  type: 'object',
  description: 'WebsiteStatus is the observed state of a Website, written by the reconciler through the status subresource.',
  properties: {
    observedGeneration: { type: 'integer', minimum: 0, description: 'The .metadata.generation the reconciler last acted on.' },
    replicas: { type: 'integer', minimum: 0, description: 'Number of pods that exist for this website.' },
    readyReplicas: { type: 'integer', minimum: 0, description: 'Number of pods that are ready.' },
    selector: { type: 'string', description: 'Label selector of the pods, in string form (for the scale subresource).' },
    deployment: { type: 'string', description: 'Name of the Deployment serving the site.' },
    service: { type: 'string', description: 'Name of the Service exposing the site.' },
    nodePort: { type: 'integer', minimum: 0, maximum: 65535, description: 'Node port of the Service, when it has one.' },
    conditions: conditionsSchema(['Ready', 'Progressing', 'Degraded']),
  },
};

/** DESCRIPTION describes the kind (OpenAPI, kubectl explain). */
export const DESCRIPTION = 'Website is a static website served by nginx from a git repository that a git-sync sidecar keeps up to date.';

/** SERVICE_TYPES are the Service types a Website may ask for. */
export const SERVICE_TYPES = ['NodePort', 'ClusterIP', 'LoadBalancer'] as const;

/** NODE_PORT_RANGE is kube-apiserver's default --service-node-port-range. */
export const NODE_PORT_RANGE = { min: 30000, max: 32767 } as const;

const condition = (w: WebsiteObject, type: string) => w.status?.conditions?.find((c) => c.type === type);

/** phase is the STATUS column: Ready when the Ready condition is True, otherwise the most telling reason there is. */
export function phase(w: WebsiteObject): string {
  const ready = condition(w, 'Ready');
  if (w.metadata.deletionTimestamp) return 'Terminating';
  if (ready?.status === 'True') return 'Ready';
  if (condition(w, 'Degraded')?.status === 'True') return condition(w, 'Degraded')?.reason ?? 'Degraded';
  if (ready?.reason) return ready.reason;
  return 'Pending';
}

/** WithReplicas is a Website of any version: each keeps the replica count at spec.replicas. */
export interface WithReplicas extends WebsiteObject {
  spec: { replicas: number };
}

/** scale maps /scale onto spec.replicas, the same path in every version. */
export const scale: ScaleMapping<WithReplicas> = {
  specReplicas: (w) => w.spec.replicas,
  setSpecReplicas: (w, n) => {
    w.spec.replicas = n;
  },
  statusReplicas: (w) => w.status?.replicas ?? 0,
  selector: (w) => podSelector(w),
};

/**
 * printerColumns are the `kubectl get` columns: the same in every version, but the repository, the Service type
 * and the branch, which each version reads where it keeps them.
 */
export function printerColumns<T extends WithReplicas>(fields: { repo(w: T): string; type(w: T): string; branch(w: T): string }): PrinterColumn<T>[] {
  return [
    { name: 'Git-Repo', type: 'string', description: 'Git repository the site is served from.', priority: 0, cell: (w) => fields.repo(w) },
    {
      name: 'Ready',
      type: 'string',
      description: 'Ready pods / desired pods.',
      priority: 0,
      cell: (w) => `${w.status?.readyReplicas ?? 0}/${w.spec?.replicas ?? 0}`,
    },
    { name: 'Type', type: 'string', description: 'Service type.', priority: 0, cell: (w) => fields.type(w) },
    {
      name: 'Port',
      type: 'string',
      description: 'Node port of the Service, or <none>.',
      priority: 0,
      cell: (w) => (w.status?.nodePort ? String(w.status.nodePort) : '<none>'),
    },
    { name: 'Status', type: 'string', description: 'Ready, Pending, Terminating or the reason it is not ready.', priority: 0, cell: phase },
    { name: 'Branch', type: 'string', description: "Branch checked out (empty: the remote's HEAD).", priority: 1, cell: (w) => fields.branch(w) },
    { name: 'Deployment', type: 'string', description: 'Deployment serving the site.', priority: 1, cell: (w) => w.status?.deployment ?? '' },
  ];
}

/** podSelector is the selector of a Website's pods before the reconciler reports one (the scale subresource's). */
export function podSelector(w: WebsiteObject): string {
  return w.status?.selector ?? `app.kubernetes.io/instance=${w.metadata.name},app.kubernetes.io/name=website`;
}

// http(s)://, ssh://, git:// URLs or scp-like git@host:path, as git itself accepts them.
const GIT_URL = /^(?:(?:https?|ssh|git):\/\/[^\s/]+(?:\/\S*)?|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:\S+)$/;

/** GitSource is where a version keeps the git fields, and their paths for error messages. */
export interface GitSource {
  repo: { value: string | undefined; at: FieldPath };
  branch: { value: string | undefined; at: FieldPath };
  secretRef: { value: { name?: string } | undefined; at: FieldPath };
}

/** validateGit checks the repository URL, the branch name and the secret reference, wherever a version keeps them. */
export function validateGit(g: GitSource): FieldError[] {
  const errs: FieldError[] = [];
  const repo = g.repo.value;
  if (typeof repo === 'string' && repo !== '' && !GIT_URL.test(repo)) {
    errs.push(invalid(g.repo.at, repo, 'must be an http(s)://, ssh:// or git:// URL, or user@host:path'));
  }
  const secret = g.secretRef.value?.name;
  if (typeof secret === 'string' && secret !== '') {
    for (const msg of isDNS1123Subdomain(secret)) errs.push(invalid(g.secretRef.at.child('name'), secret, msg));
    if (typeof repo === 'string' && repo.startsWith('git://')) {
      errs.push(invalid(g.secretRef.at, g.secretRef.value, `git:// URLs have no authentication: use an http(s):// or ssh URL for a private repository`));
    }
  }
  const branch = g.branch.value;
  if (typeof branch === 'string' && branch !== '' && (/[\s~^:?*[\\]|\.\.|@\{/.test(branch) || branch.startsWith('-'))) {
    errs.push(invalid(g.branch.at, branch, 'must be a valid git branch name'));
  }
  return errs;
}
