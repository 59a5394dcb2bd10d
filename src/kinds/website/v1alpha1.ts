/**
 * @module kinds/website/v1alpha1
 * Website in extensions.example.com/v1alpha1, the first version: types, structural schema, printer columns and
 * semantic validation. Served beside v1 (the storage version) and converted to and from it by `conversion.ts`.
 * v1's `spec.service.nodePort` has no field here: v1alpha1 carries it in the annotation NODE_PORT_ANNOTATION.
 */
import { invalid, path, type FieldError } from '../../apis/meta/field-path.js';
import type { KubeObject } from '../../apis/meta/types.js';
import type { JSONSchema, ResourceDefinition } from '../../registry/resource.js';
import {
  DESCRIPTION,
  names,
  NODE_PORT_RANGE,
  printerColumns,
  scale,
  SERVICE_TYPES,
  statusSchema,
  typeMetaProperties,
  validateGit,
  type WebsiteStatus,
} from './common.js';

export type { WebsiteCondition, WebsiteStatus } from './common.js';

/** NODE_PORT_ANNOTATION holds v1's spec.service.nodePort on a v1alpha1 object (kube keeps newer fields so). */
export const NODE_PORT_ANNOTATION = 'extensions.example.com/node-port';

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

/** Website is a v1alpha1 Website. */
export interface Website extends KubeObject {
  spec: WebsiteSpec;
  status?: WebsiteStatus;
}

/** websiteSchema is the structural schema: one source for validation, pruning, defaults, OpenAPI and explain. */
export const websiteSchema: JSONSchema = {
  type: 'object',
  description: DESCRIPTION,
  required: ['spec'],
  properties: {
    ...typeMetaProperties,
    spec: {
      type: 'object',
      description: 'WebsiteSpec is the desired state of a Website.',
      required: ['gitRepo'],
      properties: {
        gitRepo: {
          type: 'string',
          minLength: 1,
          maxLength: 2048,
          description:
            'GitRepo is the URL of the git repository holding the site: an http(s)://, ssh:// or git:// URL, or user@host:path. It is cloned into the web root and pulled every syncIntervalSeconds.',
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
          enum: [...SERVICE_TYPES],
          default: 'NodePort',
          description: 'ServiceType is the type of the Service exposing the site: NodePort (default), ClusterIP or LoadBalancer.',
        },
        secretRef: {
          type: 'object',
          description:
            "SecretRef names a Secret in the Website's namespace holding the credentials for a private gitRepo, mounted into git-sync (the server never reads it). For an http(s) URL: keys username and password (a password or token; type kubernetes.io/basic-auth). For an ssh URL: keys ssh-privatekey and known_hosts (type kubernetes.io/ssh-auth). Not allowed with git:// URLs, which have no authentication.",
          required: ['name'],
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 253, description: "Name of the Secret, in the Website's namespace." },
          },
        },
      },
    },
    status: statusSchema,
  },
};

/**
 * nodePortAnnotation reads NODE_PORT_ANNOTATION as v1's nodePort: a decimal port in the node port range, else
 * undefined (an annotation an earlier release stored may hold anything; it is then kept as an annotation).
 */
export function nodePortAnnotation(value: string | undefined): number | undefined {
  if (value === undefined || !/^[1-9][0-9]{0,4}$/.test(value)) return undefined;
  const n = Number(value);
  return n >= NODE_PORT_RANGE.min && n <= NODE_PORT_RANGE.max ? n : undefined;
}

/** websiteDefinition is Website v1alpha1 as the machinery serves it. */
export const websiteDefinition: ResourceDefinition<Website> = {
  ...names,
  shortNames: [...names.shortNames],
  categories: [...names.categories],
  version: 'v1alpha1',
  schema: websiteSchema,
  description: DESCRIPTION,
  printerColumns: printerColumns<Website>({ repo: (w) => w.spec?.gitRepo ?? '', type: (w) => w.spec?.serviceType ?? '', branch: (w) => w.spec?.branch ?? '' }),
  subresources: { status: true, scale },
  validate(w, old): FieldError[] {
    const errs = validateGit({
      repo: { value: w.spec?.gitRepo, at: path('spec', 'gitRepo') },
      branch: { value: w.spec?.branch, at: path('spec', 'branch') },
      secretRef: { value: w.spec?.secretRef, at: path('spec', 'secretRef') },
    });
    // The annotation stands for v1's nodePort, so it is checked as that field is; a value an earlier release stored
    // may stay as it is (validation ratchets), it is then an annotation like any other.
    const port = w.metadata.annotations?.[NODE_PORT_ANNOTATION];
    if (port !== undefined && nodePortAnnotation(port) === undefined && port !== old?.metadata.annotations?.[NODE_PORT_ANNOTATION]) {
      errs.push(
        invalid(
          `metadata.annotations[${NODE_PORT_ANNOTATION}]`,
          port,
          `must be a node port, ${NODE_PORT_RANGE.min} to ${NODE_PORT_RANGE.max} (it is spec.service.nodePort in extensions.example.com/v1)`,
        ),
      );
    }
    if (port !== undefined && w.spec?.serviceType === 'ClusterIP' && nodePortAnnotation(port) !== undefined) {
      errs.push(invalid(`metadata.annotations[${NODE_PORT_ANNOTATION}]`, port, 'may only be set when spec.serviceType is NodePort or LoadBalancer'));
    }
    return errs;
  },
};
