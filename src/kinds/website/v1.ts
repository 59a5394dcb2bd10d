/**
 * @module kinds/website/v1
 * Website in extensions.example.com/v1, the storage version and the preferred one. It graduates v1alpha1 (the
 * "The Website resource" in docs/reference.md lists each change and why): the git fields are grouped under `spec.git` (`gitRepo` is
 * `git.repository`), the Service's under `spec.service` (`serviceType` is `service.type`), and `service.nodePort`
 * is new. The reconcilers work on this form.
 */
import { forbidden, path, type FieldError } from '../../apis/meta/field-path.js';
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
import { NODE_PORT_ANNOTATION } from './v1alpha1.js';

export type { WebsiteCondition, WebsiteStatus } from './common.js';

/** GitSource is the repository the site is served from and how git-sync follows it. */
export interface GitSource {
  repository: string;
  branch?: string;
  syncIntervalSeconds: number;
  secretRef?: SecretReference;
}

/** SecretReference names a Secret in the Website's namespace. */
export interface SecretReference {
  name: string;
}

/** ServiceSpec is the Service exposing the site. */
export interface ServiceSpec {
  type: 'NodePort' | 'ClusterIP' | 'LoadBalancer';
  nodePort?: number;
}

/** WebsiteSpec is what the user asks for. */
export interface WebsiteSpec {
  replicas: number;
  git: GitSource;
  service: ServiceSpec;
}

/** Website is a v1 Website: the stored form, and the one the reconcilers read. */
export interface Website extends KubeObject {
  spec: WebsiteSpec;
  status?: WebsiteStatus;
}

/** websiteSchema is v1's structural schema. */
export const websiteSchema: JSONSchema = {
  type: 'object',
  description: DESCRIPTION,
  required: ['spec'],
  properties: {
    ...typeMetaProperties,
    spec: {
      type: 'object',
      description: 'WebsiteSpec is the desired state of a Website.',
      required: ['git'],
      properties: {
        replicas: {
          type: 'integer',
          minimum: 0,
          maximum: 100,
          default: 1,
          description: 'Replicas is the number of nginx pods serving the site, 0 to 100. The scale subresource maps here.',
        },
        git: {
          type: 'object',
          description: 'Git is the repository the site is served from: cloned into the web root and kept up to date by a git-sync sidecar.',
          required: ['repository'],
          properties: {
            repository: {
              type: 'string',
              minLength: 1,
              maxLength: 2048,
              description: 'Repository is the URL of the git repository holding the site: an http(s)://, ssh:// or git:// URL, or user@host:path.',
            },
            branch: {
              type: 'string',
              maxLength: 255,
              description: "Branch to check out. Empty means the remote's default branch (HEAD).",
            },
            syncIntervalSeconds: {
              type: 'integer',
              minimum: 5,
              maximum: 86400,
              default: 60,
              description: 'SyncIntervalSeconds is how often git-sync pulls the repository, 5 to 86400 seconds.',
            },
            secretRef: {
              type: 'object',
              description:
                "SecretRef names a Secret in the Website's namespace holding the credentials for a private repository, mounted into git-sync (the server never reads it). For an http(s) URL: keys username and password (a password or token; type kubernetes.io/basic-auth). For an ssh URL: keys ssh-privatekey and known_hosts (type kubernetes.io/ssh-auth). Not allowed with git:// URLs, which have no authentication.",
              required: ['name'],
              properties: {
                name: { type: 'string', minLength: 1, maxLength: 253, description: "Name of the Secret, in the Website's namespace." },
              },
            },
          },
        },
        service: {
          type: 'object',
          default: {},
          description: 'Service is the Service exposing the site on port 80.',
          properties: {
            type: {
              type: 'string',
              enum: [...SERVICE_TYPES],
              default: 'NodePort',
              description: 'Type of the Service: NodePort (default), ClusterIP or LoadBalancer.',
            },
            nodePort: {
              type: 'integer',
              minimum: NODE_PORT_RANGE.min,
              maximum: NODE_PORT_RANGE.max,
              description: `NodePort asks for this node port (${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max}) for a NodePort or LoadBalancer Service; empty lets the cluster choose one.`,
            },
          },
        },
      },
    },
    status: statusSchema,
  },
};

/** websiteDefinition is Website v1 as the machinery serves it. */
export const websiteDefinition: ResourceDefinition<Website> = {
  ...names,
  shortNames: [...names.shortNames],
  categories: [...names.categories],
  version: 'v1',
  schema: websiteSchema,
  description: DESCRIPTION,
  printerColumns: printerColumns<Website>({
    repo: (w) => w.spec?.git?.repository ?? '',
    type: (w) => w.spec?.service?.type ?? '',
    branch: (w) => w.spec?.git?.branch ?? '',
  }),
  subresources: { status: true, scale },
  validate(w, old): FieldError[] {
    const git = w.spec?.git;
    const errs = validateGit({
      repo: { value: git?.repository, at: path('spec', 'git', 'repository') },
      branch: { value: git?.branch, at: path('spec', 'git', 'branch') },
      secretRef: { value: git?.secretRef, at: path('spec', 'git', 'secretRef') },
    });
    if (w.spec?.service?.nodePort !== undefined && w.spec.service.type === 'ClusterIP') {
      errs.push(forbidden(path('spec', 'service', 'nodePort'), 'may only be set when type is NodePort or LoadBalancer'));
    }
    // v1alpha1 clients carry nodePort in this annotation; in v1 it would shadow the field on a round trip.
    const reserved = w.metadata.annotations?.[NODE_PORT_ANNOTATION];
    if (reserved !== undefined && (reserved !== old?.metadata.annotations?.[NODE_PORT_ANNOTATION] || w.spec?.service?.nodePort !== undefined)) {
      errs.push(
        forbidden(`metadata.annotations[${NODE_PORT_ANNOTATION}]`, 'is reserved for extensions.example.com/v1alpha1 clients: set spec.service.nodePort'),
      );
    }
    return errs;
  },
};
