/**
 * @module admission/defaulting
 * Schema defaults as kube-apiserver's custom resource codec applies them, on every decode (a request body, and an
 * object read from storage): first PruneNonNullableNullsWithoutDefaults (a `null` member whose schema is neither
 * nullable nor defaulted is dropped, as if it had not been sent), then Default (schema/defaulting algorithm.go): a
 * missing member, or a `null` one its schema does not allow, gets a copy of its default, at every depth — inside list
 * items and additionalProperties values too, a null item or value getting the items' or values' default.
 */
import type { Node } from './structural.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const copy = (v: unknown): unknown => (typeof v === 'object' && v !== null ? structuredClone(v) : v);

// A null the schema neither allows nor defaults (isNonNullableNull without a default).
const droppedNull = (v: unknown, s: Node | undefined) => v === null && s !== undefined && !s.nullable && !s.hasDefault;

const memberSchema = (s: Node | undefined, k: string): Node | undefined => s?.properties?.get(k) ?? (s?.additional || undefined);

/** pruneNulls is PruneNonNullableNullsWithoutDefaults. */
export function pruneNulls(x: unknown, s: Node | undefined): void {
  if (Array.isArray(x)) {
    for (const v of x) if (typeof v === 'object' && v !== null) pruneNulls(v, s?.items);
  } else if (isObject(x)) {
    for (const k in x) {
      if (!Object.hasOwn(x, k)) continue;
      const v = x[k];
      const sub = memberSchema(s, k);
      if (droppedNull(v, sub)) delete x[k];
      else if (typeof v === 'object' && v !== null) pruneNulls(v, sub);
    }
  }
}

const nonNullableNull = (v: unknown, s: Node) => v === null && !s.nullable;

/** applySchemaDefaults is defaulting.Default. */
export function applySchemaDefaults(x: unknown, s: Node | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = s.items;
    if (!items) return;
    for (let i = 0; i < x.length; i++) {
      if (nonNullableNull(x[i], items)) x[i] = copy(items.default ?? null);
      if (typeof x[i] === 'object' && x[i] !== null) applySchemaDefaults(x[i], items);
    }
  } else if (isObject(x)) {
    const props = s.properties;
    if (props) {
      for (const [k, p] of props) {
        if (p.hasDefault && (!Object.hasOwn(x, k) || nonNullableNull(x[k], p))) x[k] = copy(p.default);
      }
    }
    for (const k in x) {
      if (!Object.hasOwn(x, k)) continue;
      const p = props?.get(k);
      if (p) {
        if (typeof x[k] === 'object' && x[k] !== null) applySchemaDefaults(x[k], p);
      } else if (s.additional) {
        if (nonNullableNull(x[k], s.additional)) x[k] = copy(s.additional.default ?? null);
        if (typeof x[k] === 'object' && x[k] !== null) applySchemaDefaults(x[k], s.additional);
      }
    }
  }
}

/** hasDefaults tells whether a schema declares a default anywhere (most do not: nothing to apply). */
export function hasDefaults(s: Node, seen = new Set<Node>()): boolean {
  if (seen.has(s)) return false;
  seen.add(s);
  if (s.hasDefault) return true;
  if (s.items && hasDefaults(s.items, seen)) return true;
  if (s.additional && hasDefaults(s.additional, seen)) return true;
  for (const p of s.properties?.values() ?? []) if (hasDefaults(p, seen)) return true;
  return false;
}
