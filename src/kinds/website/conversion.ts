/**
 * @module kinds/website/conversion
 * v1alpha1 ⇄ v1, in code. Both ways are lossless: v1alpha1 fields move into `spec.git` and `spec.service`, and v1's
 * `spec.service.nodePort`, which v1alpha1 has no field for, travels in v1alpha1 as the annotation
 * NODE_PORT_ANNOTATION (as kube keeps a newer version's fields in an older one). managedFields paths move the same
 * way, so field ownership recorded in one version holds in the other.
 */
import type { ObjectMeta } from '../../apis/meta/types.js';
import type { VersionConversion } from '../../registry/resource.js';
import type { Website as V1 } from './v1.js';
import { NODE_PORT_ANNOTATION, nodePortAnnotation, type Website as V1alpha1 } from './v1alpha1.js';

// defined drops members whose value is undefined, so a converted object has exactly the members it holds.
function defined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

// withAnnotation returns metadata with one annotation set (value) or removed (undefined); the rest is shared.
function withAnnotation(meta: ObjectMeta, key: string, value: string | undefined): ObjectMeta {
  const { annotations, ...rest } = meta;
  const next: Record<string, string> = { ...annotations };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return Object.keys(next).length > 0 ? { ...rest, annotations: next } : rest;
}

// A spec that is not an object (an invalid request not yet refused by validation) is carried over as it is.
const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);

// ordered puts the members in the order every object is written (apiVersion, kind, metadata, spec, status, the rest).
function ordered<T extends object>(
  apiVersion: string,
  o: { kind?: string | undefined; metadata: ObjectMeta; spec: unknown; status?: unknown },
  rest: object,
): T {
  const { apiVersion: _a, kind: _k, metadata: _m, spec: _s, status: _st, ...others } = rest as Record<string, unknown>;
  return defined({ apiVersion, kind: o.kind, metadata: o.metadata, spec: o.spec, status: o.status, ...others }) as T;
}

/** toV1 converts a v1alpha1 Website to v1 (the storage version). */
export function toV1(w: V1alpha1): V1 {
  const { spec } = w;
  const apiVersion = 'extensions.example.com/v1';
  if (!isObject(spec)) return ordered<V1>(apiVersion, w, w);
  const port = nodePortAnnotation(w.metadata?.annotations?.[NODE_PORT_ANNOTATION]);
  const metadata = port === undefined ? w.metadata : withAnnotation(w.metadata, NODE_PORT_ANNOTATION, undefined);
  return ordered<V1>(
    apiVersion,
    {
      kind: w.kind,
      metadata,
      status: w['status'],
      spec: defined({
        replicas: spec.replicas,
        git: defined({ repository: spec.gitRepo, branch: spec.branch, syncIntervalSeconds: spec.syncIntervalSeconds, secretRef: spec.secretRef }),
        service: defined({ type: spec.serviceType, nodePort: port }),
      }),
    },
    w,
  );
}

/** toV1alpha1 converts a v1 Website to v1alpha1. */
export function toV1alpha1(w: V1): V1alpha1 {
  const { spec } = w;
  const apiVersion = 'extensions.example.com/v1alpha1';
  if (!isObject(spec)) return ordered<V1alpha1>(apiVersion, w, w);
  const port = spec.service?.nodePort;
  const metadata = port === undefined ? w.metadata : withAnnotation(w.metadata, NODE_PORT_ANNOTATION, String(port));
  return ordered<V1alpha1>(
    apiVersion,
    {
      kind: w.kind,
      metadata,
      status: w['status'],
      spec: defined({
        gitRepo: spec.git?.repository,
        branch: spec.git?.branch,
        replicas: spec.replicas,
        syncIntervalSeconds: spec.git?.syncIntervalSeconds,
        serviceType: spec.service?.type,
        secretRef: spec.git?.secretRef,
      }) as V1alpha1['spec'],
    },
    w,
  );
}

// Where each v1alpha1 field is in v1 (the rest of a path, below the field, follows unchanged).
const V1ALPHA1_TO_V1: readonly [readonly string[], readonly string[]][] = [
  [
    ['spec', 'gitRepo'],
    ['spec', 'git', 'repository'],
  ],
  [
    ['spec', 'branch'],
    ['spec', 'git', 'branch'],
  ],
  [
    ['spec', 'syncIntervalSeconds'],
    ['spec', 'git', 'syncIntervalSeconds'],
  ],
  [
    ['spec', 'secretRef'],
    ['spec', 'git', 'secretRef'],
  ],
  [
    ['spec', 'serviceType'],
    ['spec', 'service', 'type'],
  ],
  [
    ['metadata', 'annotations', NODE_PORT_ANNOTATION],
    ['spec', 'service', 'nodePort'],
  ],
];

const startsWith = (p: readonly string[], prefix: readonly string[]) => prefix.length <= p.length && prefix.every((s, i) => p[i] === s);

// movePath maps a path through the table (from column `from` to column `to`); the parents v1 adds (spec.git,
// spec.service) have no v1alpha1 counterpart.
function movePath(p: readonly string[], from: 0 | 1, to: 0 | 1): string[] | undefined {
  for (const row of V1ALPHA1_TO_V1) {
    if (startsWith(p, row[from])) return [...row[to], ...p.slice(row[from].length)];
  }
  if (from === 1 && (startsWith(['spec', 'git'], p) || startsWith(['spec', 'service'], p)) && p.length === 2) return undefined;
  return [...p];
}

/** v1alpha1Conversion is v1alpha1's way to and from the storage version. */
export const v1alpha1Conversion: VersionConversion<V1alpha1, V1> = {
  toStorage: toV1,
  fromStorage: toV1alpha1,
  fieldToStorage: (p) => movePath(p, 0, 1),
  fieldFromStorage: (p) => movePath(p, 1, 0),
};
