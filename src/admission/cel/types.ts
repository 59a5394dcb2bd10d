/**
 * @module admission/cel/types
 * The static types the rule checker works with, and the structural schema turned into them the way
 * apiserver/pkg/cel/common SchemaDeclType does: objects with known fields, maps, lists, int-or-string and
 * preserve-unknown as dyn, `format: date-time`/`duration`/`byte` as timestamp/duration/bytes. Each node also
 * carries kube's worst-case size (maxLength/maxItems/maxProperties, else what fits in a 3 MiB request), which the
 * cost estimator multiplies by.
 */
import type { JSONSchema } from '../../apis/meta/json-schema.js';

export type CelT =
  | { k: 'int' | 'uint' | 'double' | 'string' | 'bool' | 'bytes' | 'null' | 'dyn' | 'timestamp' | 'duration' | 'type'; size?: number }
  | { k: 'list'; elem: CelT; size?: number; pair?: [CelT, CelT] }
  | { k: 'map'; key: CelT; val: CelT; size?: number }
  | { k: 'object'; fields: Map<string, CelT>; size?: number }
  | { k: 'opt'; inner: CelT }
  | { k: 'opaque'; name: string };

export const T = {
  int: { k: 'int' } as CelT,
  uint: { k: 'uint' } as CelT,
  double: { k: 'double' } as CelT,
  string: { k: 'string' } as CelT,
  bool: { k: 'bool' } as CelT,
  bytes: { k: 'bytes' } as CelT,
  null: { k: 'null' } as CelT,
  dyn: { k: 'dyn' } as CelT,
  timestamp: { k: 'timestamp' } as CelT,
  duration: { k: 'duration' } as CelT,
  type: { k: 'type' } as CelT,
  list: (elem: CelT, size?: number): CelT => ({ k: 'list', elem, size }),
  map: (key: CelT, val: CelT, size?: number): CelT => ({ k: 'map', key, val, size }),
  opt: (inner: CelT): CelT => ({ k: 'opt', inner }),
  opaque: (name: string): CelT => ({ k: 'opaque', name }),
};

/** typeName prints a type as cel-go's checker does in its overload errors: `list(string)`, `optional_type(int)`. */
export function typeName(t: CelT): string {
  switch (t.k) {
    case 'list':
      return `list(${typeName(t.elem)})`;
    case 'map':
      return `map(${typeName(t.key)}, ${typeName(t.val)})`;
    case 'opt':
      return `optional_type(${typeName(t.inner)})`;
    case 'object':
      return objectNames.get(t) ?? 'object';
    case 'opaque':
      return t.name;
    case 'null':
      return 'null_type';
    default:
      return t.k;
  }
}

/** objectNames: the names cel-go's messages give the object types of the rules being compiled now. */
const objectNames = new WeakMap<CelT, string>();

/** nameObjects names the object types under `t` as kube's generated self type: `selfType123`, `selfType123.spec`. */
export function nameObjects(t: CelT, name: string, seen = new Set<CelT>()): void {
  if (seen.has(t)) return;
  seen.add(t);
  if (t.k === 'object') {
    objectNames.set(t, name);
    for (const [f, ft] of t.fields) nameObjects(ft, `${name}.${f}`, seen);
  } else if (t.k === 'list') nameObjects(t.elem, `${name}.@idx`, seen);
  else if (t.k === 'map') nameObjects(t.val, `${name}.@elem`, seen);
  else if (t.k === 'opt') nameObjects(t.inner, name, seen);
}

/** maxRequestSizeBytes bounds what one request can hold (apiserver's 3 MiB), the size of anything unbounded. */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

/** minJSONSize is the smallest JSON a value of the schema can be, as model/schemas.go estimates it. */
function minJSONSize(s: JSONSchema): number {
  if (s['x-kubernetes-int-or-string'] || s['x-kubernetes-preserve-unknown-fields']) return 1;
  switch (s.type) {
    case 'string':
      return 2 + Math.max(0, s.minLength ?? 0);
    case 'boolean':
      return 4;
    case 'integer':
    case 'number':
      return 1;
    case 'array':
      return 2;
    case 'object':
      return 2;
    default:
      return 1;
  }
}

const num = (s: JSONSchema, key: string): number | undefined => {
  const v = (s as Record<string, unknown>)[key];
  return typeof v === 'number' ? v : undefined;
};

/** maxStringLength: maxLength, or a format's own bound, or what fits in a request. */
function maxStringLength(s: JSONSchema): number {
  // maxLength counts code points; kube sizes in bytes, up to 4 a code point
  if (s.maxLength !== undefined) return s.maxLength * 4;
  if (s.enum && s.enum.length > 0) return Math.max(...s.enum.map((e) => (typeof e === 'string' ? e.length : 0)));
  switch (s.format) {
    case 'date':
      return 10;
    case 'date-time':
      return 32;
    case 'duration':
      return 64;
  }
  return MAX_REQUEST_SIZE_BYTES - 2;
}

/** maxListItems: maxItems, or as many of the smallest item as fit in a request (each with its comma). */
export function maxListItems(s: JSONSchema): number {
  const m = num(s, 'maxItems');
  if (m !== undefined) return m;
  return Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minJSONSize(s.items ?? {}) + 1));
}

/** maxMapProperties: maxProperties, or as many `"":v,` pairs as fit in a request. */
export function maxMapProperties(s: JSONSchema): number {
  const m = num(s, 'maxProperties');
  if (m !== undefined) return m;
  const add = typeof s.additionalProperties === 'object' ? s.additionalProperties : {};
  return Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minJSONSize(add) + 4));
}

/** isIntOrString: the x-kubernetes-int-or-string marker. */
export function isIntOrString(s: JSONSchema): boolean {
  return s['x-kubernetes-int-or-string'] === true;
}

/** ESCAPES are the property names CEL reaches as `__dot__`-style words (apiserver/pkg/cel/escaping.go). */
const CEL_RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/** escapeName turns a property name into the CEL field name kube declares, or undefined if it cannot be one. */
export function escapeName(name: string): string | undefined {
  if (name === '') return undefined;
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z_][a-zA-Z0-9_.\-/]*$/.test(name)) return undefined;
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    if (c === '_' && name.slice(i).startsWith('__')) {
      out += '__underscores__';
      i++;
    } else if (c === '.') out += '__dot__';
    else if (c === '-') out += '__dash__';
    else if (c === '/') out += '__slash__';
    else out += c;
  }
  return out;
}

/**
 * schemaType is the CEL type of a value of the schema. `root`/`embedded` add apiVersion, kind and a metadata
 * with only name and generateName (model.WithTypeAndObjectMeta). Returns undefined for a schema CEL cannot see
 * (an array of such).
 */
export function schemaType(s: JSONSchema, root = false): CelT | undefined {
  // values are converted against their schema node by node: compute each node's type once
  const cache = root ? rootTypes : types;
  if (cache.has(s)) return cache.get(s);
  const t = computeType(s, root);
  cache.set(s, t);
  return t;
}
const types = new WeakMap<JSONSchema, CelT | undefined>();
const rootTypes = new WeakMap<JSONSchema, CelT | undefined>();

function computeType(s: JSONSchema, root: boolean): CelT | undefined {
  if (isIntOrString(s)) return T.dyn;
  const embedded = root || s['x-kubernetes-embedded-resource'] === true;
  // a schema without a type (preserve-unknown or not) has no CEL type: kube leaves such a field out of its
  // object, and refuses rules on it; a typed object that preserves unknown fields shows only its properties
  switch (embedded && !s.type ? 'object' : s.type) {
    case 'string':
      if (s.format === 'byte') return { k: 'bytes', size: maxStringLength(s) };
      if (s.format === 'date-time' || s.format === 'date') return T.timestamp;
      if (s.format === 'duration') return T.duration;
      return { k: 'string', size: maxStringLength(s) };
    case 'integer':
      return T.int;
    case 'number':
      return T.double;
    case 'boolean':
      return T.bool;
    case 'array': {
      const elem = s.items ? schemaType(s.items, s.items['x-kubernetes-embedded-resource'] === true) : undefined;
      if (!elem) return undefined;
      return T.list(elem, maxListItems(s));
    }
    case 'object': {
      if (typeof s.additionalProperties === 'object' && !s.properties && !embedded) {
        const val = schemaType(s.additionalProperties, s.additionalProperties['x-kubernetes-embedded-resource'] === true);
        if (!val) return undefined;
        return T.map({ k: 'string', size: 0 }, val, maxMapProperties(s)); // kube's key type has no size: 0
      }
      {
        const fields = new Map<string, CelT>();
        for (const [name, prop] of Object.entries(s.properties ?? {})) {
          const esc = escapeName(name);
          if (esc === undefined) continue;
          const t = schemaType(prop, prop['x-kubernetes-embedded-resource'] === true);
          if (t) fields.set(esc, t);
        }
        if (embedded) {
          fields.set('apiVersion', { k: 'string', size: MAX_REQUEST_SIZE_BYTES - 2 });
          fields.set('kind', { k: 'string', size: MAX_REQUEST_SIZE_BYTES - 2 });
          const meta = new Map<string, CelT>([
            ['name', { k: 'string', size: MAX_REQUEST_SIZE_BYTES - 2 }],
            ['generateName', { k: 'string', size: MAX_REQUEST_SIZE_BYTES - 2 }],
          ]);
          fields.set('metadata', { k: 'object', fields: meta });
        }
        return { k: 'object', fields };
      }
    }
  }
  return undefined;
}
