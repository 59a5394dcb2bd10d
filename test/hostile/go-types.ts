/**
 * A checker mirroring how a Go client decodes JSON into typed structs (sigs.k8s.io/json, the case-sensitive
 * encoding/json fork client-go uses): `null` is the zero value of any type, unknown members are ignored, a string
 * never decodes into a number or a map, an int64 takes only an integer literal in range, and metav1.Time is an
 * RFC 3339 string (k8s.io/apimachinery/pkg/apis/meta/v1/time.go UnmarshalJSON). The types below are
 * metav1.ObjectMeta, OwnerReference, ManagedFieldsEntry, ListMeta and PartialObjectMetadataList
 * (k8s.io/apimachinery/pkg/apis/meta/v1/types.go), and the Website's spec and status as a typed Go client declares
 * them (int32 replicas, metav1.Condition). One stored object failing here stalls every informer of that type.
 */

/** GoType is the shape of a Go type as encoding/json sees it. */
export type GoType = 'string' | 'bool' | 'int32' | 'int64' | 'time' | 'raw' | { map: GoType } | { slice: GoType } | { struct: Record<string, GoType> };

const ownerReference: GoType = {
  struct: { apiVersion: 'string', kind: 'string', name: 'string', uid: 'string', controller: 'bool', blockOwnerDeletion: 'bool' },
};

// ManagedFieldsEntry.fieldsV1 is metav1.FieldsV1, whose UnmarshalJSON keeps any raw JSON.
const managedFieldsEntry: GoType = {
  struct: { manager: 'string', operation: 'string', apiVersion: 'string', time: 'time', fieldsType: 'string', fieldsV1: 'raw', subresource: 'string' },
};

/** objectMeta is metav1.ObjectMeta. */
export const objectMeta: GoType = {
  struct: {
    name: 'string',
    generateName: 'string',
    namespace: 'string',
    selfLink: 'string',
    uid: 'string',
    resourceVersion: 'string',
    generation: 'int64',
    creationTimestamp: 'time',
    deletionTimestamp: 'time',
    deletionGracePeriodSeconds: 'int64',
    labels: { map: 'string' },
    annotations: { map: 'string' },
    ownerReferences: { slice: ownerReference },
    finalizers: { slice: 'string' },
    managedFields: { slice: managedFieldsEntry },
  },
};

const listMeta: GoType = { struct: { selfLink: 'string', resourceVersion: 'string', continue: 'string', remainingItemCount: 'int64' } };

/** partialObjectMetadataList is metav1.PartialObjectMetadataList, what client-go's metadata informers decode. */
export const partialObjectMetadataList: GoType = {
  struct: {
    apiVersion: 'string',
    kind: 'string',
    metadata: listMeta,
    items: { slice: { struct: { apiVersion: 'string', kind: 'string', metadata: objectMeta } } },
  },
};

const condition: GoType = {
  struct: { type: 'string', status: 'string', observedGeneration: 'int64', lastTransitionTime: 'time', reason: 'string', message: 'string' },
};

/** websiteList is a typed Go client's WebsiteList. */
export const websiteList: GoType = {
  struct: {
    apiVersion: 'string',
    kind: 'string',
    metadata: listMeta,
    items: {
      slice: {
        struct: {
          apiVersion: 'string',
          kind: 'string',
          metadata: objectMeta,
          spec: {
            struct: {
              gitRepo: 'string',
              branch: 'string',
              replicas: 'int32',
              syncIntervalSeconds: 'int32',
              serviceType: 'string',
              secretRef: { struct: { name: 'string' } },
            },
          },
          status: {
            struct: {
              observedGeneration: 'int64',
              replicas: 'int32',
              readyReplicas: 'int32',
              selector: 'string',
              deployment: 'string',
              service: 'string',
              nodePort: 'int32',
              conditions: { slice: condition },
            },
          },
        },
      },
    },
  },
};

// time.Parse(time.RFC3339, s): date, 'T', time, optional fraction, 'Z' or a ±hh:mm offset, each field in range.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
function isRfc3339(s: string): boolean {
  const m = RFC3339.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, se] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  const daysIn = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn || h > 23 || mi > 59 || se > 59) return false;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  return true;
}

const INT64 = 2n ** 63n;
function isIntIn(v: unknown, bits: 32 | 64): boolean {
  // JSON.stringify prints integers below 1e21 without an exponent, so Go sees an integer literal exactly then.
  if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) >= 1e21) return false;
  const n = BigInt(v);
  return bits === 64 ? n >= -INT64 && n < INT64 : n >= -(2n ** 31n) && n < 2n ** 31n;
}

const describe = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** goDecodeErrors lists every place where `value` would not decode into `type` (empty: it decodes). */
export function goDecodeErrors(value: unknown, type: GoType, path = ''): string[] {
  if (value === null) return [];
  const bad = (want: string) => [`${path || '.'}: cannot unmarshal ${describe(value)} ${JSON.stringify(value)?.slice(0, 60)} into ${want}`];
  if (type === 'raw') return [];
  if (type === 'string') return typeof value === 'string' ? [] : bad('string');
  if (type === 'bool') return typeof value === 'boolean' ? [] : bad('bool');
  if (type === 'int32') return isIntIn(value, 32) ? [] : bad('int32');
  if (type === 'int64') return isIntIn(value, 64) ? [] : bad('int64');
  if (type === 'time') return typeof value === 'string' && isRfc3339(value) ? [] : bad('metav1.Time (RFC 3339 string)');
  if ('map' in type) {
    if (typeof value !== 'object' || Array.isArray(value)) return bad('map');
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => goDecodeErrors(v, type.map, `${path}[${JSON.stringify(k)}]`));
  }
  if ('slice' in type) {
    if (!Array.isArray(value)) return bad('slice');
    return value.flatMap((v, i) => goDecodeErrors(v, type.slice, `${path}[${i}]`));
  }
  if (typeof value !== 'object' || Array.isArray(value)) return bad('struct');
  const obj = value as Record<string, unknown>;
  return Object.entries(type.struct).flatMap(([k, t]) => (k in obj ? goDecodeErrors(obj[k], t, `${path}.${k}`) : []));
}
