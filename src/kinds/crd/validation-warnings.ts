/**
 * @module kinds/crd/validation-warnings
 * The warnings kube's CRD strategy returns on create (WarningsOnCreate): `unrecognized format "x"` for each format
 * the apiserver's validator does not know at its compatibility version, then (sorted, once each) the
 * x-kubernetes-list-type: set warnings for object or array items.
 */
import { isObject, type Schema } from './structural.js';

// kube-openapi's string formats known at compatibility version 1.37 (apiserver/validation/formats.go), with the
// dashes removed as go-openapi normalizes names.
const STRING_FORMATS = new Set([
  'bsonobjectid',
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'cidr',
  'mac',
  'uuid',
  'uuid3',
  'uuid4',
  'uuid5',
  'isbn',
  'isbn10',
  'isbn13',
  'creditcard',
  'ssn',
  'hexcolor',
  'rgbcolor',
  'byte',
  'password',
  'date',
  'duration',
  'datetime',
  'k8sshortname',
  'k8slongname',
]);

function unrecognized(s: Schema): string | undefined {
  const format = typeof s.format === 'string' ? s.format : '';
  if (!format) return undefined;
  const type = typeof s.type === 'string' ? s.type : '';
  if (type === '' || type === 'string') return STRING_FORMATS.has(format.replaceAll('-', '')) ? undefined : format;
  if (type === 'integer') return format === 'int32' || format === 'int64' ? undefined : format;
  if (type === 'number') return format === 'float' || format === 'double' ? undefined : format;
  return format;
}

// SchemaHas's traversal order: the node, items, allOf, anyOf, oneOf, not, properties, additionalProperties, ...
function visit(s: Schema, fn: (x: Schema) => void): void {
  fn(s);
  const kids: unknown[] = [];
  if (isObject(s.items)) kids.push(s.items);
  else if (Array.isArray(s.items)) kids.push(...s.items);
  for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[k])) kids.push(...(s[k] as unknown[]));
  kids.push(s.not);
  for (const k of Object.keys(isObject(s.properties) ? s.properties : {}).sort()) kids.push((s.properties as Schema)[k]);
  if (isObject(s.additionalProperties)) kids.push(s.additionalProperties);
  for (const k of ['patternProperties', 'definitions', 'dependencies']) {
    if (isObject(s[k])) for (const key of Object.keys(s[k] as Schema).sort()) kids.push((s[k] as Schema)[key]);
  }
  if (isObject(s.additionalItems)) kids.push(s.additionalItems);
  for (const k of kids) if (isObject(k)) visit(k, fn);
}

/** crdWarnings returns kube's create warnings for the CRD's schemas (top-level first, then per version). */
export function crdWarnings(schemas: Schema[]): string[] {
  const formats: string[] = [];
  const sets = new Set<string>();
  for (const schema of schemas) {
    visit(schema, (s) => {
      const f = unrecognized(s);
      if (f !== undefined) formats.push(`unrecognized format ${JSON.stringify(f)}`);
      const items = isObject(s.items) ? s.items : undefined;
      if (s['x-kubernetes-list-type'] === 'set' && items && (items.type === 'object' || items.type === 'array')) {
        sets.add(`x-kubernetes-list-type: set for items of type ${JSON.stringify(items.type)} is not supported by server-side apply or CEL validation rules`);
      }
    });
  }
  return [...formats, ...[...sets].sort()];
}
