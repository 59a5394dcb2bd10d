/**
 * @module e2e/crd-diff/invalid
 * Invalid objects generated from a version's openAPIV3Schema: each takes a valid example and breaks it in one place
 * (so kube's answer holds one error, in a fixed order): a wrong type at a leaf, a value outside an enum, a pattern,
 * a length or a bound, a required property missing, null where the schema does not allow it, unknown fields under
 * each fieldValidation, duplicates in a set or a list map, and, under a CEL rule, an optional property removed (which
 * the rule may require). Deterministic: the walk follows the example's key order, and the selection takes categories
 * in turn until the bound.
 */
import type { Json } from './corpus.js';
import { minimal } from './edits.js';
import { fitsNumber, fitsString, reMatches, setAt, typeOf, walk, type Path } from './schema-walk.js';

export interface Invalid {
  category: string;
  /** What was broken, where (`spec.replicas: a string`). */
  title: string;
  object: Json;
  /** fieldValidation for the create (unknown fields), when not the default. */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

const dotted = (p: Path) =>
  p
    .map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`))
    .join('')
    .replace(/^\./, '');

/** Candidates for a string that breaks a pattern, tried in order. */
const NOT_MATCHING = ['Not Valid!', '-', '', '0', 'a', 'a.b', 'A'];

/** invalidsOf lists every single-place breakage of one example the schema allows the generator to find. */
export function invalidsOf(schema: Json, example: Json): Invalid[] {
  const out: Invalid[] = [];
  const add = (category: string, path: Path, what: string, value: Json, fieldValidation?: Invalid['fieldValidation']) =>
    out.push({ category, title: `${dotted(path)}: ${what}`, object: setAt(example, path, value), ...(fieldValidation ? { fieldValidation } : {}) });
  walk(schema, example, (v) => {
    const { path, schema: s, value } = v;
    // apiVersion, kind and metadata are kube's own, not the CRD's schema.
    if (path.length === 0 || ['apiVersion', 'kind', 'metadata'].includes(String(path[0]))) {
      if (path.length === 0) unknownFields(s, path, value);
      return;
    }
    const type = typeOf(s);
    if (value === null) return;
    // Wrong type, one per type of leaf.
    if (type === 'string') add('wrong type', path, 'a number for a string', 12345);
    else if (type === 'integer') add('wrong type', path, 'a string for an integer', 'seven');
    else if (type === 'number') add('wrong type', path, 'a string for a number', 'seven');
    else if (type === 'boolean') add('wrong type', path, 'a string for a boolean', 'yes');
    else if (type === 'int-or-string') add('wrong type', path, 'a boolean for an int-or-string', true);
    else if (type === 'array') add('wrong type', path, 'a string for an array', 'not-a-list');
    else if (type === 'object' && path.length <= 2) add('wrong type', path, 'a string for an object', 'not-an-object');
    if (!s.nullable) add('null', path, 'null where not nullable', null);
    if (typeof value === 'string') {
      if (s.enum) add('enum', path, 'a value outside the enum', 'NotInTheEnum');
      if (typeof s.pattern === 'string') {
        const bad = NOT_MATCHING.find((c) => reMatches(s.pattern, c) === false && fitsString({ ...s, pattern: undefined, enum: undefined }, c));
        if (bad !== undefined) add('pattern', path, `${JSON.stringify(bad)} against the pattern`, bad);
      }
      if (typeof s.maxLength === 'number') {
        const long = value + (value.at(-1) ?? 'a').repeat(s.maxLength + 1 - value.length);
        if (fitsString({ ...s, maxLength: undefined }, long)) add('length', path, `${s.maxLength + 1} characters (maxLength ${s.maxLength})`, long);
      }
      if (typeof s.minLength === 'number' && s.minLength > 0) {
        const short = value.slice(0, s.minLength - 1);
        if (fitsString({ ...s, minLength: undefined }, short)) add('length', path, `${short.length} characters (minLength ${s.minLength})`, short);
      }
      if (s.format === 'date-time') add('format', path, 'not a date-time', 'yesterday');
    }
    if (typeof value === 'number') {
      if (typeof s.maximum === 'number') add('bounds', path, `above the maximum ${s.maximum}`, s.exclusiveMaximum ? s.maximum : s.maximum + 1);
      if (typeof s.minimum === 'number') add('bounds', path, `below the minimum ${s.minimum}`, s.exclusiveMinimum ? s.minimum : s.minimum - 1);
    }
    if (Array.isArray(value)) {
      const listType = s['x-kubernetes-list-type'];
      if (value.length > 0 && listType === 'set') add('duplicate in a set', path, 'its first item twice', [value[0], ...value]);
      if (value.length > 0 && listType === 'map') add('duplicate in a list map', path, 'its first item twice', [value[0], ...value]);
      if (typeof s.maxItems === 'number' && value.length > 0 && listType !== 'set' && listType !== 'map') {
        add(
          'items',
          path,
          `${s.maxItems + 1} items (maxItems ${s.maxItems})`,
          Array.from({ length: s.maxItems + 1 }, () => value[0]),
        );
      }
      if (typeof s.minItems === 'number' && s.minItems > 0) add('items', path, `no items (minItems ${s.minItems})`, []);
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const r of s.required ?? []) if (Object.hasOwn(value, r)) add('required', [...path, r], 'missing (required)', undefined);
      // A set the object does not hold yet, written with its first item twice (the examples hold few sets).
      for (const [k, sub] of Object.entries<Json>(s.properties ?? {})) {
        if (Object.hasOwn(value, k)) continue;
        const built = withDuplicateInSet(sub, 3);
        if (built !== undefined) add('duplicate in a set', [...path, k], `a new value whose set holds an item twice`, built);
      }
      unknownFields(s, path, value);
      // Under a CEL rule an optional property removed, one at a time: rules often require one of several.
      if ((s['x-kubernetes-validations'] ?? []).length) {
        for (const k of Object.keys(value))
          if (!(s.required ?? []).includes(k))
            add(
              'CEL',
              [...path, k],
              `removed under the rule(s) ${s['x-kubernetes-validations'].map((r: Json) => JSON.stringify(r.rule)).join(', ')}`,
              undefined,
            );
      }
    }
    // A scalar whose object has a rule: changed to another schema-valid value (rules compare siblings: min <= max,
    // a mode and what it needs).
    const parentRules: Json[] = v.ancestors.at(-1)?.['x-kubernetes-validations'] ?? [];
    if (parentRules.length && value !== null && typeof value !== 'object') {
      const rules = parentRules.map((r: Json) => JSON.stringify(r.rule)).join(', ');
      let other: Json;
      if (typeof value === 'number')
        other = [typeof s.maximum === 'number' ? s.maximum : undefined, value + 1000].find((n) => n !== undefined && n !== value && fitsNumber(s, n));
      else if (typeof value === 'boolean') other = !value;
      else if (typeof value === 'string' && s.enum) other = s.enum.find((e: Json) => e !== value);
      if (other !== undefined) add('CEL', path, `${JSON.stringify(other)} under the rule(s) ${rules}`, other);
    }
  });

  /** unknownFields: an unknown property where the schema prunes (no preserve-unknown-fields, no additionalProperties). */
  function unknownFields(s: Json, path: Path, value: Json) {
    if (!s.properties || s['x-kubernetes-preserve-unknown-fields'] || s.additionalProperties || s['x-kubernetes-embedded-resource']) return;
    if (path.length > 1 || !value || typeof value !== 'object' || Array.isArray(value)) return;
    for (const fv of ['Strict', 'Warn', 'Ignore'] as const)
      add(`unknown field (${fv})`, [...path, 'unknownField'], `an unknown field, fieldValidation=${fv}`, 'surprise', fv);
  }
  return out;
}

/** withDuplicateInSet builds a value of `schema`, at most `depth` levels deep, holding a set whose one item is there twice. */
function withDuplicateInSet(schema: Json, depth: number): Json {
  if (depth < 0 || !schema) return undefined;
  if (schema.type === 'array' && schema['x-kubernetes-list-type'] === 'set') {
    const item = minimal(schema.items ?? {});
    return item !== null && typeof item !== 'object' ? [item, item] : undefined;
  }
  if (schema.type === 'array' && schema.items) {
    const inner = withDuplicateInSet(schema.items, depth - 1);
    return inner === undefined ? undefined : [inner];
  }
  if (schema.type === 'object' && schema.properties) {
    for (const [k, sub] of Object.entries<Json>(schema.properties)) {
      const inner = withDuplicateInSet(sub, depth - 1);
      if (inner !== undefined) return { ...minimal(schema), [k]: inner };
    }
  }
  return undefined;
}

/**
 * selectInvalid takes up to `bound` breakages from several examples, categories in turn (each category's first
 * breakage, then each one's second, …), so that a large schema does not spend the bound on one kind of error.
 */
export function selectInvalid(all: Invalid[], bound: number): Invalid[] {
  const byCategory = new Map<string, Invalid[]>();
  const seen = new Set<string>();
  for (const i of all) {
    if (seen.has(i.title + (i.fieldValidation ?? ''))) continue;
    seen.add(i.title + (i.fieldValidation ?? ''));
    byCategory.set(i.category, [...(byCategory.get(i.category) ?? []), i]);
  }
  const out: Invalid[] = [];
  for (let round = 0; out.length < bound; round++) {
    let took = false;
    for (const list of byCategory.values()) {
      if (round < list.length && out.length < bound) {
        out.push(list[round]!);
        took = true;
      }
    }
    if (!took) break;
  }
  return out;
}
