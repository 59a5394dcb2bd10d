/**
 * @module migration/crd-info
 * What a migration needs to know of one CRD, read from kube-apiserver: its group, names, scope, served and storage
 * versions, and the migration's own record on it (an annotation, so that a stopped migration can be resumed and
 * rolled back from any machine).
 */
import type { Rest } from './rest.js';

/** STATE_ANNOTATION holds the migration's record on the CRD (MoveState as JSON). */
const STATE_ANNOTATION = 'migration.website-apiserver.example.com/state';

/** MoveState is the record: where the objects are served from and what the CRD's versions served before. */
export interface MoveState {
  /** `here`: served by this server (kube's storage retired); `kube`: by kube-apiserver again (or never moved). */
  servedBy: 'here' | 'kube';
  /** The phase last completed, for the log. */
  phase: string;
  /** The CRD's versions' `served` flags before the move (restored by a rollback). */
  served: Record<string, boolean>;
  /** The service the APIServices were pointed at. */
  service?: { namespace: string; name: string; port: number };
  updated: string;
}

/** CrdInfo is one CRD as a migration sees it. */
export interface CrdInfo {
  name: string;
  group: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  storageVersion: string;
  /** Every version with its `served` flag, in the CRD's order. */
  versions: { name: string; served: boolean }[];
  conversion: string;
  state: MoveState | undefined;
  /** The CRD object as read (for patches by index). */
  raw: CrdObject;
}

/** CrdObject is the part of a CustomResourceDefinition read here. */
export interface CrdObject {
  metadata: { name: string; annotations?: Record<string, string>; resourceVersion?: string };
  spec: {
    group: string;
    names: { plural: string; kind: string };
    scope: 'Namespaced' | 'Cluster';
    versions: { name: string; served: boolean; storage: boolean }[];
    conversion?: { strategy?: string };
  };
}

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** readCrd reads the CRD `name`, or throws a one-line reason. */
export async function readCrd(kube: Rest, name: string): Promise<CrdInfo> {
  const a = await kube.call<CrdObject>('GET', `${CRD_PATH}/${encodeURIComponent(name)}`);
  if (a.status === 404) throw new Error(`CustomResourceDefinition ${name} not found`);
  if (a.status !== 200) throw new Error(`reading CustomResourceDefinition ${name}: ${a.status} ${JSON.stringify(a.body)}`);
  const crd = a.body;
  const storage = crd.spec.versions.find((v) => v.storage);
  if (!storage) throw new Error(`CustomResourceDefinition ${name} has no storage version`);
  const stateText = crd.metadata.annotations?.[STATE_ANNOTATION];
  return {
    name,
    group: crd.spec.group,
    plural: crd.spec.names.plural,
    kind: crd.spec.names.kind,
    namespaced: crd.spec.scope === 'Namespaced',
    storageVersion: storage.name,
    versions: crd.spec.versions.map((v) => ({ name: v.name, served: v.served })),
    conversion: crd.spec.conversion?.strategy ?? 'None',
    state: stateText ? (JSON.parse(stateText) as MoveState) : undefined,
    raw: crd,
  };
}

/** writeState records the migration's state on the CRD (a merge patch of the one annotation). */
export async function writeState(kube: Rest, crd: CrdInfo, state: Omit<MoveState, 'updated'>): Promise<void> {
  const full: MoveState = { ...state, updated: new Date().toISOString() };
  await kube.ok(
    'PATCH',
    `${CRD_PATH}/${encodeURIComponent(crd.name)}`,
    { metadata: { annotations: { [STATE_ANNOTATION]: JSON.stringify(full) } } },
    'application/merge-patch+json',
  );
  crd.state = full;
}

/**
 * setServed sets the CRD's versions' `served` flags (a JSON patch by index, guarded by a test of each version's name,
 * so a CRD changed meanwhile fails the patch instead of flipping the wrong version).
 */
export async function setServed(kube: Rest, crd: CrdInfo, served: (version: string) => boolean): Promise<void> {
  const ops = crd.raw.spec.versions.flatMap((v, i) => [
    { op: 'test', path: `/spec/versions/${i}/name`, value: v.name },
    { op: 'replace', path: `/spec/versions/${i}/served`, value: served(v.name) },
  ]);
  await kube.ok('PATCH', `${CRD_PATH}/${encodeURIComponent(crd.name)}`, ops, 'application/json-patch+json');
}

/** collectionPath is the CRD's objects across all namespaces in `version` (default: the storage version). */
export const collectionPath = (crd: CrdInfo, version = crd.storageVersion) => `/apis/${crd.group}/${version}/${crd.plural}`;

/** objectPath is one object's path in `version`. */
export function objectPath(crd: CrdInfo, namespace: string | undefined, name: string, version = crd.storageVersion): string {
  const ns = crd.namespaced ? `/namespaces/${encodeURIComponent(namespace ?? '')}` : '';
  return `/apis/${crd.group}/${version}${ns}/${crd.plural}/${encodeURIComponent(name)}`;
}

/** keyOf is an object's key in maps: namespace/name. */
export function keyOf(o: { metadata?: { namespace?: string; name?: string } }): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}
