/**
 * @module kinds/crd/structural-defaults
 * kube's check of schema defaults (pkg/apiserver/schema/defaulting/validation.go ValidateDefaults): every `default`
 * must survive pruning unchanged (`must not have unknown fields`) and must validate against its own schema, with
 * the errors of kube-openapi's validator (` in body must be of type integer: "string"`). The schema root counts as
 * an embedded resource, so a default there needs apiVersion and kind. Defaults under metadata are not checked here.
 */
import { invalid, notSupported, required, tooLong } from './validation-field.js';
import type { FieldError } from '../../apis/meta/field-path.js';
import { isObject, props, sortedKeys, type Schema } from './structural.js';

const clone = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

// pruning.Prune: drop object members no schema covers, unless unknown fields are preserved.
function prune(v: unknown, s: Schema | undefined, resourceRoot: boolean): void {
  if (!s) return;
  if (Array.isArray(v)) {
    const items = isObject(s.items) ? s.items : undefined;
    for (const e of v) prune(e, items, items?.['x-kubernetes-embedded-resource'] === true);
    return;
  }
  if (!isObject(v)) return;
  const p = props(s);
  const ap = s.additionalProperties;
  for (const k of Object.keys(v)) {
    if (resourceRoot && (k === 'apiVersion' || k === 'kind' || k === 'metadata') && !(k in p)) continue;
    const f = p[k];
    if (isObject(f)) prune(v[k], f, f['x-kubernetes-embedded-resource'] === true);
    else if (isObject(ap)) prune(v[k], ap, ap['x-kubernetes-embedded-resource'] === true);
    else if (ap !== true && s['x-kubernetes-preserve-unknown-fields'] !== true) delete v[k];
  }
}

function deepEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v === 'boolean' ? 'boolean' : typeof v === 'string' ? 'string' : 'object';
}

// kube-openapi's value validation for the keywords defaults use; `name` is the path inside the value.
function validateValue(v: unknown, s: Schema, p: string, name: string, errs: FieldError[]): void {
  const type = typeof s.type === 'string' ? s.type : '';
  const actual = jsonType(v);
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const typeOk = !type || actual === type || (type === 'number' && actual === 'integer') || (v === null && s.nullable === true);
  if (!intOrString && !typeOk) {
    errs.push(invalid(p, actual, `${name} in body must be of type ${type}: "${actual}"`));
    return;
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, v))) {
    errs.push(notSupported(p, v, s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
  }
  if (typeof v === 'string') {
    if (typeof s.maxLength === 'number' && [...v].length > s.maxLength) errs.push(tooLong(p, s.maxLength));
    if (typeof s.minLength === 'number' && [...v].length < s.minLength) errs.push(invalid(p, v, `${name} in body should be at least ${s.minLength} chars long`));
    if (typeof s.pattern === 'string') {
      let re: RegExp | undefined;
      try { re = new RegExp(s.pattern, 'u'); } catch { re = undefined; }
      if (re && !re.test(v)) errs.push(invalid(p, v, `${name} in body should match '${s.pattern}'`));
    }
  }
  if (typeof v === 'number') {
    if (typeof s.maximum === 'number' && (s.exclusiveMaximum === true ? v >= s.maximum : v > s.maximum)) {
      errs.push(invalid(p, v, `${name} in body should be less than ${s.exclusiveMaximum === true ? '' : 'or equal to '}${s.maximum}`));
    }
    if (typeof s.minimum === 'number' && (s.exclusiveMinimum === true ? v <= s.minimum : v < s.minimum)) {
      errs.push(invalid(p, v, `${name} in body should be greater than ${s.exclusiveMinimum === true ? '' : 'or equal to '}${s.minimum}`));
    }
  }
  if (Array.isArray(v) && isObject(s.items)) {
    const items = s.items;
    v.forEach((e, i) => validateValue(e, items, `${p}[${i}]`, `${name}[${i}]`, errs));
  }
  if (isObject(v)) {
    // kube-openapi's object validator checks the properties first, then the required ones.
    const ps = props(s);
    for (const k of Object.keys(v).sort()) {
      const f = ps[k];
      if (isObject(f)) validateValue(v[k], f, `${p}.${k}`, name ? `${name}.${k}` : k, errs);
    }
    for (const r of Array.isArray(s.required) ? s.required : []) {
      if (typeof r === 'string' && !(r in v)) errs.push(required(`${p}.${r}`));
    }
  }
}

function walk(s: Schema, p: string, root: boolean, resourceRoot: boolean, insideMeta: boolean, errs: FieldError[]): void {
  const embedded = root || s['x-kubernetes-embedded-resource'] === true;
  if (s['x-kubernetes-embedded-resource'] === true) insideMeta = false;
  if (s.default !== undefined && s.default !== null && !insideMeta) {
    const pruned = clone(s.default);
    prune(pruned, s, embedded);
    if (!deepEqual(pruned, s.default)) errs.push(invalid(`${p}.default`, s.default, 'must not have unknown fields'));
    const before = errs.length;
    if (resourceRoot && isObject(s.default)) {
      for (const k of ['apiVersion', 'kind']) if (!(k in s.default)) errs.push(required(`${p}.default.${k}`));
    }
    if (errs.length === before) validateValue(s.default, s, `${p}.default`, '', errs);
  }
  if (isObject(s.items)) walk(s.items, `${p}.items`, false, s.items['x-kubernetes-embedded-resource'] === true, insideMeta, errs);
  for (const k of sortedKeys(s.properties)) {
    const f = props(s)[k];
    if (!isObject(f)) continue;
    const meta = insideMeta || (embedded && (k === 'metadata' || k === 'apiVersion' || k === 'kind'));
    walk(f, `${p}.properties[${k}]`, false, f['x-kubernetes-embedded-resource'] === true, meta, errs);
  }
}

/** validateDefaults returns kube's errors for the defaults of a structural schema rooted at `p`. */
export function validateDefaults(schema: Schema, p: string): FieldError[] {
  const errs: FieldError[] = [];
  walk(schema, p, true, true, false, errs);
  return errs;
}
