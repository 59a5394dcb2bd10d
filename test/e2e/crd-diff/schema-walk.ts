/**
 * @module e2e/crd-diff/schema-walk
 * Walks an openAPIV3Schema beside an object that conforms to it, calling back at every value the object holds with the
 * schema node that governs it. The invalid-object generator and the edit finders are built on it.
 */
import type { Json } from './corpus.js';

export type Path = (string | number)[];

export interface Visit {
  path: Path;
  schema: Json;
  value: Json;
  /** The schemas from the root down to (not including) this node. */
  ancestors: Json[];
}

/** walk visits every value of `value` that `schema` describes, depth first in the object's key order; at most `perList` items of each list. */
export function walk(schema: Json, value: Json, fn: (v: Visit) => void, perList = 2, path: Path = [], ancestors: Json[] = []): void {
  if (!schema || typeof schema !== 'object') return;
  fn({ path, schema, value, ancestors });
  const down = [...ancestors, schema];
  if (Array.isArray(value) && schema.items) {
    value.slice(0, perList).forEach((item, i) => {
      walk(schema.items, item, fn, perList, [...path, i], down);
    });
  } else if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) {
      const sub = schema.properties?.[k] ?? (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
      if (sub) walk(sub, v, fn, perList, [...path, k], down);
    }
  }
}

/** at reads the value at a path. */
export const at = (o: Json, path: Path): Json => path.reduce((v, k) => (v == null ? undefined : v[k]), o);

/** setAt returns a copy of o with the value at path replaced (undefined deletes it). */
export function setAt(o: Json, path: Path, value: Json): Json {
  const out = structuredClone(o);
  if (path.length === 0) return value;
  let cur = out;
  for (const k of path.slice(0, -1)) cur = cur[k];
  const last = path[path.length - 1]!;
  if (value === undefined) {
    if (Array.isArray(cur)) cur.splice(last as number, 1);
    else delete cur[last];
  } else cur[last] = value;
  return out;
}

/** pointer is a JSON pointer (RFC 6901) for a path. */
export const pointer = (path: Path) => path.map((k) => `/${String(k).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** typeOf is the schema's value type: int-or-string and preserve-unknown nodes say so. */
export function typeOf(schema: Json): string {
  if (schema['x-kubernetes-int-or-string']) return 'int-or-string';
  return schema.type ?? (schema['x-kubernetes-preserve-unknown-fields'] ? 'any' : 'untyped');
}

/**
 * reMatches tests a value against an OpenAPI pattern with JavaScript's engine (RE2 and JS agree on the patterns
 * these CRDs use); a pattern JS cannot compile counts as unknown (undefined).
 */
export function reMatches(pattern: string, s: string): boolean | undefined {
  try {
    return new RegExp(pattern, 'u').test(s);
  } catch {
    try {
      return new RegExp(pattern).test(s);
    } catch {
      return undefined;
    }
  }
}

/** fitsString says whether a string satisfies a node's own string constraints (pattern, lengths, enum); formats are not checked. */
export function fitsString(schema: Json, s: string): boolean {
  if (schema.enum && !schema.enum.includes(s)) return false;
  if (typeof schema.maxLength === 'number' && [...s].length > schema.maxLength) return false;
  if (typeof schema.minLength === 'number' && [...s].length < schema.minLength) return false;
  if (typeof schema.pattern === 'string' && reMatches(schema.pattern, s) !== true) return false;
  return true;
}

/** fitsNumber says whether a number satisfies a node's bounds. */
export function fitsNumber(schema: Json, n: number): boolean {
  if (schema.type === 'integer' && !Number.isInteger(n)) return false;
  if (typeof schema.maximum === 'number' && (schema.exclusiveMaximum ? n >= schema.maximum : n > schema.maximum)) return false;
  if (typeof schema.minimum === 'number' && (schema.exclusiveMinimum ? n <= schema.minimum : n < schema.minimum)) return false;
  if (schema.enum && !schema.enum.includes(n)) return false;
  return true;
}

/** underTransitionRule says whether a node or one above it has a rule that reads oldSelf (a change there may be refused). */
export const underTransitionRule = (v: Visit) =>
  [...v.ancestors, v.schema].some((s) => (s['x-kubernetes-validations'] ?? []).some((r: Json) => /\boldSelf\b/.test(r.rule)));

/** underRule says whether a node or one above it has any CEL rule. */
export const underRule = (v: Visit) => [...v.ancestors, v.schema].some((s) => (s['x-kubernetes-validations'] ?? []).length > 0);

/**
 * changedScalar is another valid value for a scalar node (another enum value, a number within bounds, a longer
 * string that still fits), or undefined when none is found.
 */
export function changedScalar(schema: Json, value: Json): Json {
  if (schema.enum) return schema.enum.find((e: Json) => e !== value && typeof e === typeof value);
  if (typeof value === 'boolean' && schema.type === 'boolean') return !value;
  if (typeof value === 'number' && (schema.type === 'integer' || schema.type === 'number')) {
    for (const n of [value + 1, value - 1, value + 2]) if (fitsNumber(schema, n)) return n;
    return undefined;
  }
  if (typeof value === 'string' && schema.type === 'string' && !schema.format) {
    for (const s of [`${value}b`, `${value}-b`, `b${value}`, value.slice(0, -1)]) if (s !== value && s.length > 0 && fitsString(schema, s)) return s;
  }
  return undefined;
}
