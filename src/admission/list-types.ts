/**
 * @module admission/list-types
 * The uniqueness x-kubernetes-list-type promises (apiextensions-apiserver schema/listtype/validation.go): a `set`
 * holds no value twice, a `map` no two items with the same keys; `atomic` lists (and lists without a type) are not
 * checked. Each repeated value is reported once, at its second appearance (`spec.tags[2]: Duplicate value: "a"`), a
 * map item by its keys (`Duplicate value: {"name":"a"}`; `{}` when the keys are missing), at any depth.
 */
import type { FieldError } from '../apis/meta/field-path.js';
import { goMarshal } from '../apis/meta/go-json.js';
import { fieldErr } from './go-values.js';
import type { Node } from './structural.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** hasListTypes tells whether a schema has a set or a map list anywhere (most have none: nothing to walk). */
export function hasListTypes(s: Node, seen = new Set<Node>()): boolean {
  if (seen.has(s)) return false;
  seen.add(s);
  if (s.listType === 'set' || s.listType === 'map') return true;
  if (s.items && hasListTypes(s.items, seen)) return true;
  if (s.additional && hasListTypes(s.additional, seen)) return true;
  for (const p of s.properties?.values() ?? []) if (hasListTypes(p, seen)) return true;
  return false;
}

/** validateListTypes checks every set and map list in `obj` (an object validated against `s`). */
export function validateListTypes(s: Node, obj: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  walkObject('', s, obj, errs);
  return errs;
}

// walkObject is ValidateListSetsAndMaps: additionalProperties members first (as `path[key]`), then the declared ones.
function walkObject(path: string, s: Node, obj: Record<string, unknown>, errs: FieldError[]): void {
  if (s.additional) for (const k in obj) if (Object.hasOwn(obj, k)) walk(`${path}[${k}]`, s.additional, obj[k], errs);
  if (s.properties) {
    for (const k in obj) {
      const p = Object.hasOwn(obj, k) ? s.properties.get(k) : undefined;
      if (p) walk(path ? `${path}.${k}` : k, p, obj[k], errs);
    }
  }
}

function walk(path: string, s: Node, v: unknown, errs: FieldError[]): void {
  if (Array.isArray(v)) walkArray(path, s, v, errs);
  else if (isObject(v)) walkObject(path, s, v, errs);
}

function walkArray(path: string, s: Node, list: unknown[], errs: FieldError[]): void {
  if (s.listType === 'set') {
    for (const i of repeated(list)) errs.push(fieldErr.duplicate(`${path}[${i}]`, list[i]));
  } else if (s.listType === 'map') {
    errs.push(...mapDuplicates(path, s, list));
  }
  if (s.items) for (let i = 0; i < list.length; i++) walk(`${path}[${i}]`, s.items, list[i], errs);
}

// repeated is validateListSet: the index of each value's second appearance (values compared as their JSON).
function repeated(list: readonly unknown[]): number[] {
  if (list.length <= 1) return [];
  const times = new Map<string, number>();
  const out: number[] = [];
  list.forEach((x, i) => {
    // Scalars and compounds are kept apart in kube; a scalar's JSON never equals a compound's.
    const key = x === undefined ? '\u0000unspecified' : goMarshal(x);
    const n = times.get(key) ?? 0;
    if (n === 1) out.push(i);
    times.set(key, n + 1);
  });
  return out;
}

// mapDuplicates is validateListMap: items must be objects (or null); items with equal keys are duplicates.
function mapDuplicates(path: string, s: Node, list: readonly unknown[]): FieldError[] {
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (x !== null && !isObject(x)) return [fieldErr.invalid(`${path}[${i}]`, x, 'must be an object for an array of list-type map')];
  }
  if (list.length <= 1) return [];
  const keys = s.listMapKeys;
  if (keys.length === 1) {
    const k = keys[0]!;
    const values = list.map((x) => (isObject(x) && Object.hasOwn(x, k) ? x[k] : undefined));
    return repeated(values).map((i) => fieldErr.duplicate(`${path}[${i}]`, values[i] === undefined ? {} : { [k]: values[i] }));
  }
  const keyObjects = list.map((x) => {
    const key: Record<string, unknown> = {};
    if (isObject(x)) for (const k of keys) if (Object.hasOwn(x, k)) key[k] = x[k];
    return key;
  });
  return repeated(keyObjects).map((i) => fieldErr.duplicate(`${path}[${i}]`, keyObjects[i]));
}
