/**
 * @module kinds/crd/structural
 * The structural-schema checks kube runs on a CRD's schema (apiextensions-apiserver pkg/apiserver/schema):
 * structuralInitError is NewStructural's refusal, validateStructural is ValidateStructural (invariants and
 * completeness, sorted by message as kube sorts them). Schemas are the v1 document form.
 *
 * Go iterates `properties` (a map) in random order where kube does not sort afterwards; we visit keys sorted so
 * that our answer is one of kube's possible answers and always the same.
 */
import { compareErrors, forbidden, invalid, required } from './validation-field.js';
import type { FieldError } from '../../apis/meta/field-path.js';
import { goRegexpError } from './structural-regexp.js';

export type Schema = Record<string, unknown>;
export const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
export const sortedKeys = (v: unknown): string[] => (isObject(v) ? Object.keys(v).sort() : []);
export const props = (s: Schema): Schema => (isObject(s.properties) ? s.properties : {});
const child = (s: Schema, k: string): Schema | undefined => (isObject(s[k]) ? (s[k] as Schema) : undefined);
const nonEmpty = (v: unknown) => (Array.isArray(v) ? v.length > 0 : isObject(v) ? Object.keys(v).length > 0 : false);

// validateUnsupportedFields (convert.go).
function unsupported(s: Schema): string | undefined {
  if (typeof s.id === 'string' && s.id) return "OpenAPIV3Schema 'id' is not supported";
  if (typeof s.$schema === 'string' && s.$schema) return "OpenAPIV3Schema 'schema' is not supported";
  if (typeof s.$ref === 'string' && s.$ref) return "OpenAPIV3Schema '$ref' is not supported";
  if (nonEmpty(s.patternProperties)) return "OpenAPIV3Schema 'patternProperties' is not supported";
  if (nonEmpty(s.dependencies)) return "OpenAPIV3Schema 'dependencies' is not supported";
  if (s.additionalItems !== undefined && s.additionalItems !== null) return "OpenAPIV3Schema 'additionalItems' is not supported";
  if (nonEmpty(s.definitions)) return "OpenAPIV3Schema 'definitions' is not supported";
  return undefined;
}

// The checks NewStructural and newNestedValueValidation share, in their order, then the children.
function nestedInitError(s: Schema | undefined, structural: boolean): string | undefined {
  if (!s) return undefined;
  const own = unsupported(s);
  if (own) return own;
  for (const k of ['not'] as const) {
    const e = nestedInitError(child(s, k), false);
    if (e) return e;
  }
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) {
    for (const x of Array.isArray(s[k]) ? (s[k] as unknown[]) : []) {
      const e = nestedInitError(isObject(x) ? x : {}, false);
      if (e) return e;
    }
  }
  if (s['x-kubernetes-preserve-unknown-fields'] === false) return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined";
  if (Array.isArray(s.items) && s.items.length > 0) return "OpenAPIV3Schema 'items' must be a schema, but is an array";
  const e = nestedInitError(child(s, 'items'), structural);
  if (e) return e;
  for (const k of sortedKeys(s.properties)) {
    const pe = nestedInitError(child(props(s), k) ?? {}, structural);
    if (pe) return pe;
  }
  return nestedInitError(child(s, 'additionalProperties'), structural);
}

/** structuralInitError is NewStructural's error text for a schema, if it refuses it. */
export function structuralInitError(schema: Schema): string | undefined {
  return nestedInitError(schema, true);
}

type Level = 'root' | 'item' | 'field';

const INT_OR_STRING = (list: unknown): boolean =>
  Array.isArray(list) &&
  list.length === 2 &&
  [
    ['integer', list[0]],
    ['string', list[1]],
  ].every(([t, x]) => isObject(x) && Object.keys(x).length === 1 && x.type === t);

function invariants(s: Schema | undefined, lvl: Level, p: string, errs: FieldError[]): void {
  if (!s) return;
  const items = child(s, 'items');
  if (s.type === 'array' && !items) errs.push(required(`${p}.items`, 'must be specified'));
  invariants(items, 'item', `${p}.items`, errs);
  for (const k of sortedKeys(s.properties)) invariants(child(props(s), k) ?? {}, 'field', `${p}.properties[${k}]`, errs);
  const ap = s.additionalProperties;
  if (ap !== undefined && ap !== null) {
    if (lvl === 'root') errs.push(forbidden(`${p}.additionalProperties`, 'must not be used at the root'));
    if (isObject(ap)) invariants(ap, 'field', `${p}.additionalProperties`, errs);
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve) errs.push(invalid(`${p}.x-kubernetes-preserve-unknown-fields`, true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) errs.push(invalid(`${p}.x-kubernetes-embedded-resource`, true, 'must be false if x-kubernetes-int-or-string is true'));
  valueValidation(s, INT_OR_STRING(s.anyOf), Array.isArray(s.allOf) && isObject(s.allOf[0]) && INT_OR_STRING(s.allOf[0].anyOf), p, errs);

  const type = typeof s.type === 'string' ? s.type : '';
  if (embedded && type !== 'object') {
    if (!type) errs.push(required(`${p}.type`, 'must be object if x-kubernetes-embedded-resource is true'));
    else errs.push(invalid(`${p}.type`, type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!type && !intOrString && !preserve) {
    const where = { root: 'at the root', item: 'for specified array items', field: 'for specified object fields' }[lvl];
    errs.push(required(`${p}.type`, `must not be empty ${where}`));
  }
  if (embedded && ap !== undefined && ap !== null)
    errs.push(forbidden(`${p}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
  if (lvl === 'root' && type && type !== 'object') errs.push(invalid(`${p}.type`, type, 'must be object at the root'));

  const checkMetadata = lvl === 'root' || embedded;
  for (const k of ['kind', 'apiVersion']) {
    const f = child(props(s), k);
    if (f && checkMetadata && f.type !== 'string') errs.push(invalid(`${p}.properties[${k}].type`, typeof f.type === 'string' ? f.type : '', 'must be string'));
  }
  const metadata = child(props(s), 'metadata');
  if (metadata) {
    const mp = `${p}.properties[metadata]`;
    if (checkMetadata && metadata.type !== 'object') errs.push(invalid(`${mp}.type`, typeof metadata.type === 'string' ? metadata.type : '', 'must be object'));
    if (lvl === 'root' && !metadataOnlyNames(metadata)) {
      errs.push(forbidden(mp, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
    }
  }
  if (embedded && !preserve && !nonEmpty(s.properties)) {
    errs.push(required(`${p}.properties`, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
  }
}

// validateStructuralMetadataInvariants at the root: with type and default ignored, metadata may only list `name`
// and/or `generateName` as properties. Any other keyword makes the Structural differ from the empty one.
function metadataOnlyNames(m: Schema): boolean {
  const keys = Object.keys(m).filter((k) => m[k] !== undefined && m[k] !== null && k !== 'type' && k !== 'default');
  for (const k of keys) {
    if (k === 'properties') {
      const names = Object.keys(props(m));
      const ok = names.length > 0 && names.length <= 2 && names.every((n) => n === 'name' || n === 'generateName');
      if (!ok && names.length > 0) return false;
      continue;
    }
    const v = m[k];
    // Zero values (false, "", 0-length lists) leave the Structural equal to the empty one... except a present list.
    if (v === false || v === '') continue;
    return false;
  }
  return true;
}

function valueValidation(v: Schema, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, p: string, errs: FieldError[]): void {
  const each = (k: string, fn: (x: Schema, i: number) => void) => {
    const l = v[k];
    if (Array.isArray(l))
      l.forEach((x, i) => {
        fn(isObject(x) ? x : {}, i);
      });
  };
  if (!skipAnyOf) each('anyOf', (x, i) => nested(x, false, `${p}.anyOf[${i}]`, errs));
  each('allOf', (x, i) => nested(x, skipFirstAllOfAnyOf && i === 0, `${p}.allOf[${i}]`, errs));
  each('oneOf', (x, i) => nested(x, false, `${p}.oneOf[${i}]`, errs));
  const not = child(v, 'not');
  if (not) nested(not, false, `${p}.not`, errs);
  if (typeof v.pattern === 'string' && v.pattern) {
    const e = goRegexpError(v.pattern);
    if (e) errs.push(invalid(`${p}.pattern`, v.pattern, `must be a valid regular expression, but isn't: ${e}`));
  }
}

function nested(v: Schema, skipAnyOf: boolean, p: string, errs: FieldError[]): void {
  valueValidation(v, skipAnyOf, false, p, errs);
  const items = child(v, 'items');
  if (items) nested(items, false, `${p}.items`, errs);
  for (const k of sortedKeys(v.properties)) nested(child(props(v), k) ?? {}, false, `${p}.properties[${k}]`, errs);
  if (typeof v.type === 'string' && v.type) errs.push(forbidden(`${p}.type`, 'must be empty to be structural'));
  // additionalProperties: false is nil in the nested form; true or a schema is set.
  if (v.additionalProperties === true || isObject(v.additionalProperties))
    errs.push(forbidden(`${p}.additionalProperties`, 'must be undefined to be structural'));
  if (v.default !== undefined && v.default !== null) errs.push(forbidden(`${p}.default`, 'must be undefined to be structural'));
  if (typeof v.title === 'string' && v.title) errs.push(forbidden(`${p}.title`, 'must be empty to be structural'));
  if (typeof v.description === 'string' && v.description) errs.push(forbidden(`${p}.description`, 'must be empty to be structural'));
  if (v.nullable === true) errs.push(forbidden(`${p}.nullable`, 'must be false to be structural'));
  if (v['x-kubernetes-preserve-unknown-fields'] === true) errs.push(forbidden(`${p}.x-kubernetes-preserve-unknown-fields`, 'must be false to be structural'));
  if (v['x-kubernetes-embedded-resource'] === true) errs.push(forbidden(`${p}.x-kubernetes-embedded-resource`, 'must be false to be structural'));
  if (v['x-kubernetes-int-or-string'] === true) errs.push(forbidden(`${p}.x-kubernetes-int-or-string`, 'must be false to be structural'));
  if (nonEmpty(v['x-kubernetes-list-map-keys'])) errs.push(forbidden(`${p}.x-kubernetes-list-map-keys`, 'must be empty to be structural'));
  if (typeof v['x-kubernetes-list-type'] === 'string') errs.push(forbidden(`${p}.x-kubernetes-list-type`, 'must be undefined to be structural'));
  if (typeof v['x-kubernetes-map-type'] === 'string') errs.push(forbidden(`${p}.x-kubernetes-map-type`, 'must be undefined to be structural'));
  if (nonEmpty(v['x-kubernetes-validations'])) errs.push(forbidden(`${p}.x-kubernetes-validations`, 'must be empty to be structural'));
  if (child(props(v), 'metadata')) errs.push(forbidden(`${p}.properties[metadata]`, 'must not be specified in a nested context'));
}

// validateStructuralCompleteness: only the root's not/allOf/anyOf/oneOf are compared with the structural part
// (kube does not descend into properties here), each nested clause against the same node.
function completeness(s: Schema, p: string, errs: FieldError[]): void {
  const clauses = (v: Schema, vp: string, sNode: Schema | undefined, sp: string) => {
    const not = child(v, 'not');
    if (not) nestedCompleteness(not, sNode, sp, `${vp}.not`, errs);
    for (const k of ['allOf', 'anyOf', 'oneOf']) {
      const l = v[k];
      if (Array.isArray(l))
        l.forEach((x, i) => {
          nestedCompleteness(isObject(x) ? x : {}, sNode, sp, `${vp}.${k}[${i}]`, errs);
        });
    }
  };
  const nestedCompleteness = (v: Schema, sNode: Schema | undefined, sp: string, vp: string, out: FieldError[]): void => {
    if (!sNode) {
      out.push(required(sp, `because it is defined in ${vp}`));
      return;
    }
    clauses(v, vp, sNode, sp);
    const vi = child(v, 'items');
    if (vi) nestedCompleteness(vi, child(sNode, 'items'), `${sp}.items`, `${vp}.items`, out);
    for (const k of sortedKeys(v.properties)) {
      const sf = child(props(sNode), k);
      if (!sf) out.push(required(`${sp}.properties[${k}]`, `because it is defined in ${vp}.properties[${k}]`));
      else nestedCompleteness(child(props(v), k) ?? {}, sf, `${sp}.properties[${k}]`, `${vp}.properties[${k}]`, out);
    }
  };
  clauses(s, p, s, p);
}

/** validateStructural is ValidateStructural: every error, sorted by its text. */
export function validateStructural(schema: Schema, p: string): FieldError[] {
  const errs: FieldError[] = [];
  invariants(schema, 'root', p, errs);
  completeness(schema, p, errs);
  return errs.sort(compareErrors);
}
