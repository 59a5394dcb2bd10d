/**
 * @module apis/meta/decode
 * The typed parts of a request decoded as kube-apiserver decodes them, so that nothing a Go client could not decode
 * into metav1.ObjectMeta (client-go's typed, dynamic and metadata clients, PartialObjectMetadata) is ever accepted:
 * - decodeObjectMeta: a custom resource's metadata, as apiextensions-apiserver's unstructuredSchemaCoercer.apply
 *   reads it (pkg/apiserver/schema/objectmeta/coerce.go GetObjectMetaWithOptions: json.Marshal of the map, then
 *   Unmarshal(Strict) into metav1.ObjectMeta) and writes it back (SetObjectMeta: ToUnstructured);
 * - repairObjectMeta: the same with DropMalformedFields, which is how kube-apiserver reads a custom resource whose
 *   stored metadata does not decode (the storage codec drops each malformed field);
 * - decodeDeleteOptionsBody: a DELETE body as handlers/delete.go decodes it (metav1.DeleteOptions, any version);
 * - decodeScaleBody: an autoscaling/v1 Scale (k8s.io/api autoscaling/v1 types.go).
 * Field names, Go types and `omitempty` are those of k8s.io/apimachinery pkg/apis/meta/v1/types.go.
 */
import { decodeGoJson, GoJsonSyntaxError } from './go-json.js';
import { fromGoJson, GoDecodeError, goDecodes, goUnmarshal, jsonKind, type GoField, type GoType } from './go-struct.js';
import type { ObjectMeta } from './types.js';

const str = (name = 'string'): GoType => ({ kind: 'string', name });
const f = (json: string, type: GoType, opts: { pointer?: boolean; omitEmpty?: boolean } = { omitEmpty: true }): GoField => ({ json, type, ...opts });
const TIME: GoType = { kind: 'time' };
const INT64: GoType = { kind: 'int', name: 'int64' };
const INT32: GoType = { kind: 'int', name: 'int32' };
const BOOL: GoType = { kind: 'bool' };

/** OWNER_REFERENCE is metav1.OwnerReference: the four identifying fields are always written, even empty. */
const OWNER_REFERENCE: GoType = {
  kind: 'struct',
  name: 'OwnerReference',
  qualified: 'v1.OwnerReference',
  fields: [
    f('apiVersion', str(), {}),
    f('kind', str(), {}),
    f('name', str(), {}),
    f('uid', str('types.UID'), {}),
    f('controller', BOOL, { pointer: true }),
    f('blockOwnerDeletion', BOOL, { pointer: true }),
  ],
};

/** MANAGED_FIELDS_ENTRY is metav1.ManagedFieldsEntry (fieldsV1 keeps any JSON, as FieldsV1.UnmarshalJSON does). */
const MANAGED_FIELDS_ENTRY: GoType = {
  kind: 'struct',
  name: 'ManagedFieldsEntry',
  qualified: 'v1.ManagedFieldsEntry',
  fields: [
    f('manager', str()),
    f('operation', str('v1.ManagedFieldsOperationType')),
    f('apiVersion', str()),
    f('time', TIME, { pointer: true }),
    f('fieldsType', str()),
    f('fieldsV1', { kind: 'raw' }, { pointer: true }),
    f('subresource', str()),
  ],
};

const STRING_MAP: GoType = { kind: 'map', name: 'map[string]string', elem: str() };

/** OBJECT_META is metav1.ObjectMeta, fields in struct order. */
export const OBJECT_META: GoType = {
  kind: 'struct',
  name: 'ObjectMeta',
  qualified: 'v1.ObjectMeta',
  fields: [
    f('name', str()),
    f('generateName', str()),
    f('namespace', str()),
    f('selfLink', str()),
    f('uid', str('types.UID')),
    f('resourceVersion', str()),
    f('generation', INT64),
    f('creationTimestamp', TIME),
    f('deletionTimestamp', TIME, { pointer: true }),
    f('deletionGracePeriodSeconds', INT64, { pointer: true }),
    f('labels', STRING_MAP),
    f('annotations', STRING_MAP),
    f('ownerReferences', { kind: 'slice', name: '[]v1.OwnerReference', elem: OWNER_REFERENCE }),
    f('finalizers', { kind: 'slice', name: '[]string', elem: str() }),
    f('managedFields', { kind: 'slice', name: '[]v1.ManagedFieldsEntry', elem: MANAGED_FIELDS_ENTRY }),
  ],
};

/** DecodedObjectMeta is metadata in the form kube-apiserver stores, and its unknown fields (`metadata.x`). */
export interface DecodedObjectMeta {
  meta: ObjectMeta;
  unknownFields: string[];
}

export { GoDecodeError } from './go-struct.js';

/**
 * decodeObjectMeta decodes a custom resource's `metadata` (GetObjectMetaWithOptions without DropMalformedFields):
 * the metadata in stored form, or GoDecodeError with Go's text (`json: cannot unmarshal bool into Go struct field
 * ObjectMeta.labels of type map[string]string`, `parsing time "x" as "2006-01-02T15:04:05Z07:00": ...`).
 * `null` is empty metadata, as it is for Go.
 */
export function decodeObjectMeta(metadata: unknown, prefix = 'metadata'): DecodedObjectMeta {
  const r = goUnmarshal(metadata, OBJECT_META, { sortKeys: true });
  return { meta: r.value as ObjectMeta, unknownFields: r.unknownFields.map((p) => `${prefix}.${p}`) };
}

/** objectMetaDecodes tells (cheaply) whether decodeObjectMeta would accept `metadata`. */
export const objectMetaDecodes = (metadata: unknown): boolean => goDecodes(metadata, OBJECT_META);

/**
 * repairObjectMeta is GetObjectMetaWithOptions with DropMalformedFields: every top-level field that does not decode
 * on its own is dropped; returns the repaired metadata and the names of the dropped fields (empty: nothing to do).
 */
export function repairObjectMeta(metadata: unknown): { meta: ObjectMeta; dropped: string[] } {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    // Not an object at all: kube's codec gives up on the metadata (and the object then has none).
    return { meta: {}, dropped: ['metadata'] };
  }
  const kept: Record<string, unknown> = {};
  const dropped: string[] = [];
  for (const [k, v] of Object.entries(metadata)) {
    try {
      goUnmarshal({ [k]: v }, OBJECT_META, { sortKeys: true });
      kept[k] = v;
    } catch (e) {
      if (!(e instanceof GoDecodeError)) throw e;
      dropped.push(k);
    }
  }
  return { meta: goUnmarshal(kept, OBJECT_META, { sortKeys: true }).value as ObjectMeta, dropped };
}

/**
 * literalNumbers re-reads a JSON body from its bytes so that its numbers keep their literal text (Go decodes a typed
 * body from the bytes: `"gracePeriodSeconds": 1e3` is not an int64 there). A body that is not JSON (YAML) or no
 * bytes at all: the parsed body as it is.
 */
function literalNumbers(body: unknown, raw: Uint8Array | undefined): unknown {
  if (!raw || raw.length === 0) return body;
  try {
    return fromGoJson(decodeGoJson(raw));
  } catch (e) {
    if (e instanceof GoJsonSyntaxError) return body;
    throw e;
  }
}

/** DELETE_OPTIONS is metav1.DeleteOptions (TypeMeta inline). */
const DELETE_OPTIONS: GoType = {
  kind: 'struct',
  name: 'DeleteOptions',
  qualified: 'v1.DeleteOptions',
  fields: [
    f('kind', str()),
    f('apiVersion', str()),
    f('gracePeriodSeconds', INT64, { pointer: true }),
    f(
      'preconditions',
      {
        kind: 'struct',
        name: 'Preconditions',
        qualified: 'v1.Preconditions',
        fields: [f('uid', str('types.UID'), { pointer: true }), f('resourceVersion', str(), { pointer: true })],
      },
      { pointer: true },
    ),
    f('orphanDependents', BOOL, { pointer: true }),
    f('propagationPolicy', str('v1.DeletionPropagation'), { pointer: true }),
    f('dryRun', { kind: 'slice', name: '[]string', elem: str() }),
    f('ignoreStoreReadErrorWithClusterBreakingPotential', BOOL, { pointer: true }),
  ],
};

/** DeleteOptionsBody is metav1.DeleteOptions as decoded (absent = nil pointer). */
export interface DeleteOptionsBody {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  orphanDependents?: boolean;
  propagationPolicy?: string;
  dryRun?: string[];
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

// The GVK sniffing of the JSON serializer (runtime/serializer/json meta.go SimpleMetaFactory.Interpret) decodes into
// this anonymous struct first; its errors read as Go prints that type.
const TYPE_META_STRUCT = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/**
 * interpretTypeMeta is SimpleMetaFactory.Interpret: apiVersion and kind as strings, or the
 * `couldn't get version/kind; json parse error: ...` text.
 */
export function interpretTypeMeta(body: unknown): { apiVersion: string; kind: string } {
  const fail = (m: string): never => {
    throw new GoDecodeError(`couldn't get version/kind; json parse error: ${m}`);
  };
  if (body === null) return { apiVersion: '', kind: '' };
  if (jsonKind(body) !== 'object') return fail(`json: cannot unmarshal ${jsonKind(body)} into Go value of type ${TYPE_META_STRUCT}`);
  const b = body as Record<string, unknown>;
  let apiVersion = '';
  let kind = '';
  let first: string | undefined;
  for (const k of Object.keys(b)) {
    if (k !== 'apiVersion' && k !== 'kind') continue;
    const v = b[k];
    if (typeof v === 'string') {
      if (k === 'kind') kind = v;
      else apiVersion = v;
    } else if (v !== null) {
      first ??= `json: cannot unmarshal ${jsonKind(v)} into Go struct field .${k} of type string`;
    }
  }
  if (first) fail(first);
  return { apiVersion, kind };
}

// Kinds of the meta scheme the DELETE body decoder knows: a body of one of these is decoded, then refused because
// it does not convert to DeleteOptions (apimachinery meta/internalversion register.go, meta/v1 register.go).
const OPTIONS_KINDS = new Set(['ListOptions', 'GetOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions']);
const META_V1_KINDS = new Set(['Table', 'TableOptions', 'PartialObjectMetadata', 'PartialObjectMetadataList', 'WatchEvent']);
const UNVERSIONED_V1_KINDS = new Set(['Status', 'APIVersions', 'APIGroupList', 'APIGroup', 'APIResourceList']);

// parseGroupVersion is schema.ParseGroupVersion: "" and "/" are empty, "v" is core, "g/v" grouped, more is an error.
function checkGroupVersion(apiVersion: string): string {
  if (apiVersion === '' || apiVersion === '/') return 'meta.k8s.io/v1';
  if (apiVersion.split('/').length > 2) throw new GoDecodeError(`unexpected GroupVersion string: ${apiVersion}`);
  return apiVersion;
}

/**
 * decodeDeleteOptionsBody decodes a DELETE body into metav1.DeleteOptions as handlers/delete.go does with the meta
 * internal-version codecs: any apiVersion with kind DeleteOptions (or none); another kind of the meta scheme is
 * `converting (v1.ListOptions) to (v1.DeleteOptions): unknown conversion`, any other `no kind "Pod" is registered
 * for version "v1" in scheme "pkg/runtime/scheme.go:111"`; then the fields with Go's type errors. Unknown fields
 * are ignored (the decoder is not strict). Throws GoDecodeError (the handler's 400).
 */
export function decodeDeleteOptionsBody(body: unknown, raw?: Uint8Array): DeleteOptionsBody {
  body = literalNumbers(body, raw);
  const tm = interpretTypeMeta(body);
  const gv = checkGroupVersion(tm.apiVersion);
  if (tm.kind !== '' && tm.kind !== 'DeleteOptions') {
    const known = OPTIONS_KINDS.has(tm.kind) || (gv === 'meta.k8s.io/v1' && META_V1_KINDS.has(tm.kind)) || (gv === 'v1' && UNVERSIONED_V1_KINDS.has(tm.kind));
    if (known) throw new GoDecodeError(`converting (v1.${tm.kind}) to (v1.DeleteOptions): unknown conversion`);
    throw new GoDecodeError(`no kind ${JSON.stringify(tm.kind)} is registered for version ${JSON.stringify(gv)} in scheme "pkg/runtime/scheme.go:111"`);
  }
  const o = goUnmarshal(body, DELETE_OPTIONS, { sortKeys: false }).value as DeleteOptionsBody & { kind?: string; apiVersion?: string };
  delete o.kind;
  delete o.apiVersion;
  return o;
}

/** SCALE is autoscaling/v1 Scale: ObjectMeta, spec.replicas (int32, omitempty), status.replicas and selector. */
const SCALE: GoType = {
  kind: 'struct',
  name: 'Scale',
  qualified: 'v1.Scale',
  fields: [
    f('kind', str()),
    f('apiVersion', str()),
    f('metadata', OBJECT_META, {}),
    f('spec', { kind: 'struct', name: 'ScaleSpec', qualified: 'v1.ScaleSpec', fields: [f('replicas', INT32)] }, {}),
    f(
      'status',
      {
        kind: 'struct',
        name: 'ScaleStatus',
        qualified: 'v1.ScaleStatus',
        fields: [f('replicas', INT32, {}), f('selector', str())],
      },
      {},
    ),
  ],
};

/** DecodedScale is an autoscaling/v1 Scale as decoded; a missing spec.replicas is 0, as it is for Go. */
export interface DecodedScale {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: { replicas: number };
  unknownFields: string[];
}

/**
 * decodeScaleBody decodes an autoscaling/v1 Scale body (document order: a typed body is decoded from its bytes).
 * Throws GoDecodeError.
 */
export function decodeScaleBody(body: unknown, raw?: Uint8Array): DecodedScale {
  const r = goUnmarshal(literalNumbers(body, raw), SCALE, { sortKeys: false });
  const s = r.value as { apiVersion?: string; kind?: string; metadata: ObjectMeta; spec: { replicas?: number } };
  return { apiVersion: s.apiVersion ?? '', kind: s.kind ?? '', metadata: s.metadata, spec: { replicas: s.spec.replicas ?? 0 }, unknownFields: r.unknownFields };
}
