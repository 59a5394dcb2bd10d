/**
 * @module kinds/website/v1alpha1
 * The Website kind (extensions.example.com/v1alpha1): types, structural schema, printer columns, semantic validation.
 * The kind itself (this version plus what the server does for it) is `index.ts`; `src/kinds/index.ts` lists it.
 */
import { invalid, path, type FieldError } from '../../apis/meta/field-path.js';
import { isDNS1123Subdomain } from '../../apis/meta/validation.js';
import type { KubeObject } from '../../apis/meta/types.js';
import type { JSONSchema, ResourceDefinition } from '../../registry/resource.js';

/** WebsiteSpec is what the user asks for. */
export interface WebsiteSpec {
  gitRepo: string;
  branch?: string;
  replicas: number;
  syncIntervalSeconds: number;
  serviceType: 'NodePort' | 'ClusterIP' | 'LoadBalancer';
  secretRef?: SecretReference;
}

/** SecretReference names a Secret in the Website's namespace. */
export interface SecretReference {
  name: string;
}

/** WebsiteCondition mirrors metav1.Condition. */
export interface WebsiteCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}

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

/** Website is the stored object. */
export interface Website extends KubeObject {
  spec: WebsiteSpec;
  status?: WebsiteStatus;
}

const GROUP = 'extensions.example.com';
const VERSION = 'v1alpha1';

// http(s)://, ssh://, git:// URLs or scp-like git@host:path, as git itself accepts them.
const GIT_URL = /^(?:(?:https?|ssh|git):\/\/[^\s/]+(?:\/\S*)?|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:\S+)$/;

const conditionSchema: JSONSchema = {
  type: 'object',
  description: 'Condition is one aspect of the current state (metav1.Condition).',
  required: ['type', 'status'],
  properties: {
    type: { type: 'string', description: 'Type of condition: Ready, Progressing or Degraded.' },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'], description: 'Status of the condition: True, False or Unknown.' },
    reason: { type: 'string', description: "Machine-readable CamelCase reason for the condition's last transition." },
    message: { type: 'string', description: 'Human-readable details about the transition.' },
    lastTransitionTime: { type: 'string', format: 'date-time', description: 'Last time the condition changed status.' },
    observedGeneration: { type: 'integer', minimum: 0, description: 'The .metadata.generation the condition was set for.' },
  },
};

/** websiteSchema is the structural schema: one source for validation, pruning, defaults, OpenAPI and explain. */
export const websiteSchema: JSONSchema = {
  type: 'object',
  description: 'Website is a static website served by nginx from a git repository that a git-sync sidecar keeps up to date.',
  required: ['spec'],
  properties: {
    apiVersion: {
      type: 'string',
      description: 'APIVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
    },
    kind: {
      type: 'string',
      description: 'Kind is a string value representing the REST resource this object represents. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
    },
    metadata: { type: 'object', description: "Standard object's metadata.", 'x-kubernetes-preserve-unknown-fields': true },
    spec: {
      type: 'object',
      description: 'WebsiteSpec is the desired state of a Website.',
      required: ['gitRepo'],
      properties: {
        gitRepo: {
          type: 'string',
          minLength: 1,
          maxLength: 2048,
          description: 'GitRepo is the URL of the git repository holding the site: an http(s)://, ssh:// or git:// URL, or user@host:path. It is cloned into the web root and pulled every syncIntervalSeconds.',
        },
        branch: {
          type: 'string',
          maxLength: 255,
          description: "Branch to check out. Empty means the remote's default branch (HEAD).",
        },
        replicas: {
          type: 'integer',
          minimum: 0,
          maximum: 100,
          default: 1,
          description: 'Replicas is the number of nginx pods serving the site, 0 to 100. The scale subresource maps here.',
        },
        syncIntervalSeconds: {
          type: 'integer',
          minimum: 5,
          maximum: 86400,
          default: 60,
          description: 'SyncIntervalSeconds is how often git-sync pulls the repository, 5 to 86400 seconds.',
        },
        serviceType: {
          type: 'string',
          enum: ['NodePort', 'ClusterIP', 'LoadBalancer'],
          default: 'NodePort',
          description: 'ServiceType is the type of the Service exposing the site: NodePort (default), ClusterIP or LoadBalancer.',
        },
        secretRef: {
          type: 'object',
          description: 'SecretRef names a Secret in the Website\'s namespace holding the credentials for a private gitRepo, mounted into git-sync (the server never reads it). For an http(s) URL: keys username and password (a password or token; type kubernetes.io/basic-auth). For an ssh URL: keys ssh-privatekey and known_hosts (type kubernetes.io/ssh-auth). Not allowed with git:// URLs, which have no authentication.',
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 253, description: 'Name of the Secret, in the Website\'s namespace.' },
          },
        },
      },
    },
    status: {
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
        conditions: {
          type: 'array',
          description: 'Conditions: Ready, Progressing, Degraded.',
          items: conditionSchema,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
        },
      },
    },
  },
};

const condition = (w: Website, type: string) => w.status?.conditions?.find((c) => c.type === type);

// STATUS column: Ready when the Ready condition is True, otherwise the most telling reason we have.
function phase(w: Website): string {
  const ready = condition(w, 'Ready');
  if (w.metadata.deletionTimestamp) return 'Terminating';
  if (ready?.status === 'True') return 'Ready';
  if (condition(w, 'Degraded')?.status === 'True') return condition(w, 'Degraded')?.reason ?? 'Degraded';
  if (ready?.reason) return ready.reason;
  return 'Pending';
}

/** websiteDefinition registers Website with the generic machinery. */
export const websiteDefinition: ResourceDefinition<Website> = {
  group: GROUP,
  version: VERSION,
  kind: 'Website',
  listKind: 'WebsiteList',
  plural: 'websites',
  singular: 'website',
  shortNames: ['ws'],
  categories: ['all'],
  namespaced: true,
  schema: websiteSchema,
  description: websiteSchema.description ?? '',
  printerColumns: [
    { name: 'Git-Repo', type: 'string', description: 'Git repository the site is served from.', priority: 0, cell: (w) => w.spec?.gitRepo ?? '' },
    {
      name: 'Ready', type: 'string', description: 'Ready pods / desired pods.', priority: 0,
      cell: (w) => `${w.status?.readyReplicas ?? 0}/${w.spec?.replicas ?? 0}`,
    },
    { name: 'Type', type: 'string', description: 'Service type.', priority: 0, cell: (w) => w.spec?.serviceType ?? '' },
    {
      name: 'Port', type: 'string', description: 'Node port of the Service, or <none>.', priority: 0,
      cell: (w) => (w.status?.nodePort ? String(w.status.nodePort) : '<none>'),
    },
    { name: 'Status', type: 'string', description: 'Ready, Pending, Terminating or the reason it is not ready.', priority: 0, cell: phase },
    { name: 'Branch', type: 'string', description: "Branch checked out (empty: the remote's HEAD).", priority: 1, cell: (w) => w.spec?.branch ?? '' },
    { name: 'Deployment', type: 'string', description: 'Deployment serving the site.', priority: 1, cell: (w) => w.status?.deployment ?? '' },
  ],
  subresources: {
    status: true,
    scale: {
      specReplicas: (w) => w.spec.replicas,
      setSpecReplicas: (w, n) => {
        w.spec.replicas = n;
      },
      statusReplicas: (w) => w.status?.replicas ?? 0,
      selector: (w) => w.status?.selector ?? `app.kubernetes.io/instance=${w.metadata.name},app.kubernetes.io/name=website`,
    },
  },
  validate(w): FieldError[] {
    const errs: FieldError[] = [];
    const repo = w.spec?.gitRepo;
    if (typeof repo === 'string' && repo !== '' && !GIT_URL.test(repo)) {
      errs.push(invalid(path('spec', 'gitRepo'), repo, 'must be an http(s)://, ssh:// or git:// URL, or user@host:path'));
    }
    const secret = w.spec?.secretRef?.name;
    if (typeof secret === 'string' && secret !== '') {
      for (const msg of isDNS1123Subdomain(secret)) errs.push(invalid(path('spec', 'secretRef', 'name'), secret, msg));
      if (typeof repo === 'string' && repo.startsWith('git://')) {
        errs.push(invalid(path('spec', 'secretRef'), w.spec.secretRef, 'git:// URLs have no authentication: use an http(s):// or ssh URL for a private repository'));
      }
    }
    const branch = w.spec?.branch;
    if (typeof branch === 'string' && branch !== '' && (/[\s~^:?*[\\]|\.\.|@\{/.test(branch) || branch.startsWith('-'))) {
      errs.push(invalid(path('spec', 'branch'), branch, 'must be a valid git branch name'));
    }
    return errs;
  },
};
