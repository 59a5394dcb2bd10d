/**
 * @module kinds/website/controllers/children
 * The objects a Website runs as (PRODUCT.md §4): a Deployment `<name>-website` with nginx serving an emptyDir that a
 * git-sync sidecar keeps filled from `spec.git`, and a Service `<name>-website` of `spec.service.type` on port 80
 * (on `spec.service.nodePort` when set).
 * Pure functions: the reconciler server-side-applies exactly these bodies, so whatever they leave out is not ours.
 */
import type { Website } from '../v1.js';

export const MANAGED_BY = 'website-apiserver';
export const FIELD_MANAGER = 'website-apiserver';

/** Images are the container images, from --nginx-image and --git-sync-image. */
export interface Images {
  nginx: string;
  gitSync: string;
}

export const DEFAULT_IMAGES: Images = {
  nginx: 'nginx:1.27-alpine',
  gitSync: 'registry.k8s.io/git-sync/git-sync:v4.4.0',
};

/** childName is the name of both children. */
export const childName = (w: Website) => `${w.metadata.name}-website`;

/** selectorLabels select the pods of one Website. */
export function selectorLabels(w: Website): Record<string, string> {
  return { 'app.kubernetes.io/name': 'website', 'app.kubernetes.io/instance': w.metadata.name ?? '' };
}

/** selectorString is the selector in the string form the scale subresource and status report. */
export const selectorString = (w: Website) =>
  Object.entries(selectorLabels(w))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

/** childLabels label everything the reconciler creates; managed-by is what its informers filter on. */
export function childLabels(w: Website): Record<string, string> {
  return { ...selectorLabels(w), 'app.kubernetes.io/managed-by': MANAGED_BY };
}

/** ownerReference makes the Website the controlling owner (the garbage collector and kubectl follow it). */
export function ownerReference(w: Website) {
  return {
    apiVersion: w.apiVersion ?? 'extensions.example.com/v1',
    kind: 'Website',
    name: w.metadata.name ?? '',
    uid: w.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

const CONTENT = 'content';
// git-sync publishes each checkout as a symlink `html` in its root; nginx mounts the same volume one level up, so
// its default document root /usr/share/nginx/html is that symlink and a sync swaps the site atomically.
const GIT_ROOT = '/git';
const NGINX_PARENT = '/usr/share/nginx';

/** The parts of core/v1 pod types the Deployment uses (typed here so both containers share one shape). */
interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
}
interface EnvVar {
  name: string;
  valueFrom: { secretKeyRef: { name: string; key: string } };
}
interface Volume {
  name: string;
  emptyDir?: Record<string, never>;
  secret?: { secretName: string; defaultMode: number };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: EnvVar[];
  ports?: { name: string; containerPort: number; protocol: string }[];
  volumeMounts: VolumeMount[];
  readinessProbe?: { httpGet: { path: string; port: string }; periodSeconds: number; failureThreshold: number };
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext?: { allowPrivilegeEscalation: boolean };
}

// git-sync's image runs as this uid/gid; the pod's fsGroup makes the mounted Secret readable to it.
const GIT_SYNC_GID = 65533;
const SECRET_VOLUME = 'git-secret';
const SECRET_DIR = '/etc/git-secret';

/**
 * maxFailures is git-sync's --max-failures: it exits after that many failed syncs in a row, about 30 s of them, so a
 * persistent failure ends up in the container's termination message (Degraded's reason) while a passing glitch
 * does not restart anything.
 */
export const maxFailures = (syncIntervalSeconds: number) => Math.max(3, Math.ceil(30 / syncIntervalSeconds));

/** isSSHRepo says whether git reaches the repository over SSH (ssh:// or scp-like user@host:path). */
export const isSSHRepo = (repo: string) => repo.startsWith('ssh://') || /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:/.test(repo);

/**
 * credentials configures git-sync for spec.secretRef, the way git-sync documents it: basic auth (username and
 * password file) for http(s), a key and known_hosts for SSH. The Secret is only mounted, never read by the server.
 */
function credentials(w: Website): { args: string[]; env: EnvVar[]; mounts: VolumeMount[]; volumes: Volume[] } {
  const secretName = w.spec.git.secretRef?.name;
  if (!secretName) return { args: [], env: [], mounts: [], volumes: [] };
  const ssh = isSSHRepo(w.spec.git.repository);
  return {
    args: ssh
      ? [`--ssh-key-file=${SECRET_DIR}/ssh-privatekey`, '--ssh-known-hosts=true', `--ssh-known-hosts-file=${SECRET_DIR}/known_hosts`]
      : [`--password-file=${SECRET_DIR}/password`],
    env: ssh ? [] : [{ name: 'GITSYNC_USERNAME', valueFrom: { secretKeyRef: { name: secretName, key: 'username' } } }],
    mounts: [{ name: SECRET_VOLUME, mountPath: SECRET_DIR, readOnly: true }],
    volumes: [{ name: SECRET_VOLUME, secret: { secretName, defaultMode: 0o440 } }],
  };
}

/** desiredDeployment is the apps/v1 Deployment body to apply. */
export function desiredDeployment(w: Website, images: Images) {
  const creds = credentials(w);
  const syncArgs = [
    `--repo=${w.spec.git.repository}`,
    `--root=${GIT_ROOT}`,
    '--link=html',
    `--period=${w.spec.git.syncIntervalSeconds}s`,
    '--depth=1',
    `--max-failures=${maxFailures(w.spec.git.syncIntervalSeconds)}`,
    ...(w.spec.git.branch ? [`--ref=${w.spec.git.branch}`] : []),
    ...creds.args,
  ];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: childName(w), namespace: w.metadata.namespace, labels: childLabels(w), ownerReferences: [ownerReference(w)] },
    spec: {
      replicas: w.spec.replicas,
      selector: { matchLabels: selectorLabels(w) },
      template: {
        metadata: { labels: childLabels(w) },
        spec: {
          ...(creds.volumes.length ? { securityContext: { fsGroup: GIT_SYNC_GID } } : {}),
          volumes: [{ name: CONTENT, emptyDir: {} }, ...creds.volumes] as Volume[],
          containers: [
            {
              name: 'nginx',
              image: images.nginx,
              ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
              volumeMounts: [{ name: CONTENT, mountPath: NGINX_PARENT, readOnly: true }],
              // Not ready until the first sync has published the site.
              readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 5, failureThreshold: 3 },
              resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '64Mi' } },
            },
            {
              name: 'git-sync',
              image: images.gitSync,
              args: syncArgs,
              ...(creds.env.length ? { env: creds.env } : {}),
              volumeMounts: [{ name: CONTENT, mountPath: GIT_ROOT }, ...creds.mounts],
              // git-sync's last log lines become the termination message the reconciler reports as Degraded.
              terminationMessagePolicy: 'FallbackToLogsOnError',
              resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '256Mi' } },
              securityContext: { allowPrivilegeEscalation: false },
            },
          ] as Container[],
        },
      },
    },
  };
}

/** desiredService is the v1 Service body to apply. */
export function desiredService(w: Website) {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: childName(w), namespace: w.metadata.namespace, labels: childLabels(w), ownerReferences: [ownerReference(w)] },
    spec: {
      type: w.spec.service.type,
      selector: selectorLabels(w),
      ports: [
        {
          name: 'http',
          port: 80,
          targetPort: 'http',
          protocol: 'TCP',
          ...(w.spec.service.nodePort !== undefined && w.spec.service.type !== 'ClusterIP' ? { nodePort: w.spec.service.nodePort } : {}),
        },
      ],
    },
  };
}
