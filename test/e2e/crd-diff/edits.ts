/**
 * @module e2e/crd-diff/edits
 * Valid changes found in a schema beside an example: a scalar to change (for updates and apply conflicts), an item
 * to add to a list map or set (for a second applier), a field under a transition rule (`oldSelf`) to change, and a
 * status to write.
 */
import type { Json, ServedVersion } from './corpus.js';
import { changedScalar, fitsString, underRule, underTransitionRule, walk, type Path } from './schema-walk.js';

export interface Edit {
  path: Path;
  from: Json;
  to: Json;
}

const noIndex = (p: Path) => p.every((k) => typeof k === 'string');
const isScalar = (v: Json) => v !== null && typeof v !== 'object';

/** scalarEdit: a scalar in the object (not metadata) with another valid value, outside any CEL rule, with no list on its path. */
export function scalarEdit(schema: Json, object: Json): Edit | undefined {
  let found: Edit | undefined;
  walk(schema, object, (v) => {
    if (found || v.path.length < 2 || ['apiVersion', 'kind', 'metadata', 'status'].includes(String(v.path[0]))) return;
    if (!isScalar(v.value) || !noIndex(v.path) || underRule(v)) return;
    const to = changedScalar(v.schema, v.value);
    if (to !== undefined) found = { path: v.path, from: v.value, to };
  });
  return found;
}

/** listEdit: a list map or set (no list above it, no transition rule) with a new item whose keys are new. */
export function listEdit(schema: Json, object: Json): { path: Path; item: Json; type: string } | undefined {
  let found: { path: Path; item: Json; type: string } | undefined;
  walk(schema, object, (v) => {
    if (found || ['metadata', 'status'].includes(String(v.path[0])) || !noIndex(v.path) || underTransitionRule(v)) return;
    const type = v.schema['x-kubernetes-list-type'];
    if (!Array.isArray(v.value) || v.value.length === 0 || (type !== 'map' && type !== 'set')) return;
    const first = v.value[0];
    if (type === 'set') {
      const to = isScalar(first) ? changedScalar(v.schema.items ?? {}, first) : undefined;
      if (to !== undefined && !v.value.includes(to)) found = { path: v.path, item: to, type };
      return;
    }
    const keys: string[] = v.schema['x-kubernetes-list-map-keys'] ?? [];
    const item = structuredClone(first);
    for (const k of keys) {
      if (!Object.hasOwn(item, k)) continue;
      const to = changedScalar(v.schema.items?.properties?.[k] ?? {}, item[k]);
      if (to === undefined) return;
      item[k] = to;
    }
    if (keys.length) found = { path: v.path, item, type };
  });
  return found;
}

/** transitionEdits: values under a rule reading oldSelf, each changed to another schema-valid value (at most `max`). */
export function transitionEdits(schema: Json, object: Json, max = 3): (Edit & { rule: string })[] {
  const out: (Edit & { rule: string })[] = [];
  walk(schema, object, (v) => {
    if (out.length >= max || !isScalar(v.value) || !underTransitionRule(v) || ['metadata', 'status'].includes(String(v.path[0]))) return;
    const to = changedScalar(v.schema, v.value);
    const rule = [...v.ancestors, v.schema]
      .flatMap((s) => (s['x-kubernetes-validations'] ?? []).map((r: Json) => r.rule as string))
      .find((r) => /\boldSelf\b/.test(r))!;
    if (to !== undefined && !out.some((e) => e.rule === rule)) out.push({ path: v.path, from: v.value, to, rule });
  });
  return out;
}

/** nest builds the object holding `value` at path (for a merge patch or an apply configuration). */
export const nest = (path: Path, value: Json): Json => path.reduceRight((acc: Json, k) => ({ [k]: acc }), value);

/** minimal is a value with only what the schema requires: the first enum value, the least number, a fitting string. */
export function minimal(schema: Json): Json {
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'object': {
      const o: Json = {};
      for (const k of schema.required ?? []) o[k] = minimal(schema.properties?.[k] ?? {});
      return o;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => minimal(schema.items ?? {}));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'date-time') return '2026-01-02T03:04:05Z';
      return ['Ready', 'True', 'a', 'a'.repeat(schema.minLength ?? 1)].find((s) => fitsString(schema, s)) ?? 'a';
    default:
      return schema['x-kubernetes-int-or-string'] ? 1 : {};
  }
}

/**
 * statusOf writes a status the schema accepts: observedGeneration, a Ready condition when conditions are metav1
 * Conditions, a first plain string or integer otherwise, and the scale subresource's replicas and selector.
 */
export function statusOf(version: ServedVersion, n: number): Json {
  const props = version.schema.properties?.status?.properties ?? {};
  const status: Json = {};
  if (props.observedGeneration?.type === 'integer') status.observedGeneration = n;
  const item = props.conditions?.items;
  if (item?.properties?.type && item.properties.status) {
    const given: Json = { type: 'Ready', status: 'True', reason: 'Checked', message: `check ${n}` };
    const cond = minimal(item);
    for (const [k, val] of Object.entries<string>(given)) if (item.properties[k] && fitsString(item.properties[k], val)) cond[k] = val;
    status.conditions = [cond];
  }
  if (Object.keys(status).length === 0) {
    for (const [k, s] of Object.entries<Json>(props)) {
      if (s.type === 'string' && !s.format && fitsString(s, `value-${n}`)) {
        status[k] = `value-${n}`;
        break;
      }
      if (s.type === 'integer' && !s.minimum) {
        status[k] = n;
        break;
      }
    }
  }
  const scale = version.scale;
  if (scale) {
    const field = (p: string) => p.replace(/^\.status\./, '');
    if (scale.statusReplicasPath.startsWith('.status.')) status[field(scale.statusReplicasPath)] = n;
    if (scale.labelSelectorPath?.startsWith('.status.')) status[field(scale.labelSelectorPath)] = 'app=crd-diff';
  }
  return status;
}
