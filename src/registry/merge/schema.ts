/**
 * @module registry/merge/schema
 * The merge schema of a kind, as kube builds it from a CRD's structural schema (kube-openapi's schemaconv): lists are
 * atomic unless `x-kubernetes-list-type` says `set` or `map` (with `x-kubernetes-list-map-keys`); objects are
 * granular unless `x-kubernetes-map-type: atomic`; unknown fields kept by `x-kubernetes-preserve-unknown-fields` and
 * int-or-string values are "deduced" (maps granular, lists atomic). `metadata` is always ObjectMeta's: labels and
 * annotations granular, finalizers a set, ownerReferences a map keyed by uid of atomic items.
 */
import type { JSONSchema } from '../../apis/meta/json-schema.js';

export type MergeType = ScalarType | ListType | MapType | DeducedType;

export interface ScalarType {
  kind: 'scalar';
}
export interface DeducedType {
  kind: 'deduced';
}
export interface ListType {
  kind: 'list';
  atomic: boolean;
  /** Keys of a list map; empty for a set. */
  keys: readonly string[];
  element: MergeType;
}
export interface MapType {
  kind: 'map';
  atomic: boolean;
  fields: ReadonlyMap<string, FieldType>;
  /** The type of keys not among fields (additionalProperties, or deduced); none: undeclared keys are an error. */
  element?: MergeType | undefined;
}
export interface FieldType {
  type: MergeType;
  default?: unknown;
}

export const SCALAR: ScalarType = { kind: 'scalar' };
export const DEDUCED: DeducedType = { kind: 'deduced' };

/** resolve gives the type a value has under `t`: a deduced type takes the value's own shape. */
export function resolve(t: MergeType, v: unknown): ScalarType | ListType | MapType {
  if (t.kind !== 'deduced') return t;
  if (Array.isArray(v)) return DEDUCED_LIST;
  if (typeof v === 'object' && v !== null) return DEDUCED_MAP;
  return SCALAR;
}
const DEDUCED_LIST: ListType = { kind: 'list', atomic: true, keys: [], element: DEDUCED };
const DEDUCED_MAP: MapType = { kind: 'map', atomic: false, fields: new Map(), element: DEDUCED };

const map = (fields: Record<string, MergeType>, opts: Partial<MapType> = {}): MapType => ({
  kind: 'map',
  atomic: false,
  fields: new Map(Object.entries(fields).map(([k, type]) => [k, { type }])),
  ...opts,
});
const STRING_MAP = map({}, { element: SCALAR });

// ObjectMeta (k8s.io/apimachinery/pkg/apis/meta/v1/types.go) with its list and struct markers.
const OBJECT_META: MapType = map({
  name: SCALAR,
  generateName: SCALAR,
  namespace: SCALAR,
  selfLink: SCALAR,
  uid: SCALAR,
  resourceVersion: SCALAR,
  generation: SCALAR,
  creationTimestamp: SCALAR,
  deletionTimestamp: SCALAR,
  deletionGracePeriodSeconds: SCALAR,
  labels: STRING_MAP,
  annotations: STRING_MAP,
  // +structType=atomic items, +listType=map +listMapKey=uid
  ownerReferences: {
    kind: 'list',
    atomic: false,
    keys: ['uid'],
    element: map({ apiVersion: SCALAR, kind: SCALAR, name: SCALAR, uid: SCALAR, controller: SCALAR, blockOwnerDeletion: SCALAR }, { atomic: true }),
  },
  finalizers: { kind: 'list', atomic: false, keys: [], element: SCALAR },
  managedFields: { kind: 'list', atomic: true, keys: [], element: DEDUCED },
});

/** fromJSONSchema converts a structural schema; at the root, `metadata` is ObjectMeta whatever the schema says. */
export function fromJSONSchema(schema: JSONSchema): MapType {
  const root = convert(schema);
  const fields = new Map(root.kind === 'map' ? root.fields : []);
  fields.set('metadata', { type: OBJECT_META });
  for (const k of ['apiVersion', 'kind']) if (!fields.has(k)) fields.set(k, { type: SCALAR });
  return { kind: 'map', atomic: false, fields, element: root.kind === 'map' ? root.element : undefined };
}

function convert(s: JSONSchema): MergeType {
  if (s['x-kubernetes-int-or-string']) return DEDUCED;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  if (s.type === 'array') {
    const listType = s['x-kubernetes-list-type'];
    const element = s.items ? convert(s.items) : DEDUCED;
    if (listType === 'set') return { kind: 'list', atomic: false, keys: [], element };
    if (listType === 'map') return { kind: 'list', atomic: false, keys: [...(s['x-kubernetes-list-map-keys'] ?? [])], element };
    return { kind: 'list', atomic: true, keys: [], element };
  }
  if (s.type === 'object' || s.properties || s.additionalProperties !== undefined) {
    const fields = new Map<string, FieldType>();
    for (const [k, p] of Object.entries(s.properties ?? {})) fields.set(k, { type: convert(p), ...(p.default !== undefined ? { default: p.default } : {}) });
    // An embedded resource always has its type and object metadata (the structural schema adds them).
    if (s['x-kubernetes-embedded-resource']) {
      for (const k of ['apiVersion', 'kind']) if (!fields.has(k)) fields.set(k, { type: SCALAR });
      if (!fields.has('metadata')) fields.set('metadata', { type: DEDUCED_MAP });
    }
    let element: MergeType | undefined;
    if (typeof s.additionalProperties === 'object') element = convert(s.additionalProperties);
    else if (s.additionalProperties === true || preserve) element = DEDUCED;
    return { kind: 'map', atomic: s['x-kubernetes-map-type'] === 'atomic', fields, element };
  }
  if (s.type === undefined && preserve) return DEDUCED;
  return SCALAR;
}

const cache = new WeakMap<JSONSchema, MapType>();

/** mergeTypeOf is fromJSONSchema, once per schema object. */
export function mergeTypeOf(schema: JSONSchema): MapType {
  let t = cache.get(schema);
  if (!t) cache.set(schema, (t = fromJSONSchema(schema)));
  return t;
}
