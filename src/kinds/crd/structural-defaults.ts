/**
 * @module kinds/crd/structural-defaults
 * kube's check of schema defaults (pkg/apiserver/schema/defaulting/validation.go ValidateDefaults): every `default`
 * must survive pruning unchanged (`must not have unknown fields`) and must validate against its own schema, with
 * the errors of kube-openapi's validator (` in body must be of type integer: "string"`). The schema root counts as
 * an embedded resource, so a default there needs apiVersion and kind. A default that passes is run through the CEL
 * rules of its schema. Defaults under metadata are not checked here.
 */
import { invalid, notSupported, required, tooLong } from './validation-field.js';
import type { FieldError } from '../../apis/meta/field-path.js';
import { isObject, props, sortedKeys, type Schema } from './structural.js';
import { formatValid } from '../../admission/formats.js';
import { goRegExp } from './structural-regexp.js';
import { compileCelRules } from '../../admission/cel/index.js';
import type { JSONSchema } from '../../apis/meta/json-schema.js';

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

// kube-openapi's value validation for the keywords defaults use, in its validators' order (type, string, format,
// number, array, enum, object). `name` is kube-openapi's path inside the value (`conditions[0].message`, `[0].x`),
// which kube appends to the default's path with a dot.
function validateValue(v: unknown, s: Schema, base: string, name: string, errs: FieldError[]): void {
  const p = name ? `${base}.${name}` : base;
  const type = typeof s.type === 'string' ? s.type : '';
  const actual = jsonType(v);
  // The type validator passes a string or list value of a non-numeric schema with a format without looking further.
  const formatPass = typeof s.format === 'string' && s.format !== '' && type !== 'number' && type !== 'integer' && (actual === 'string' || actual === 'array');
  const typeOk = !type || formatPass || actual === type || (type === 'number' && actual === 'integer') || (v === null && s.nullable === true);
  // kube-openapi goes on after a type error: the enum check applies to any value, the others to the value's kind.
  // x-kubernetes-int-or-string relaxes nothing: without a type there is no type check anyway.
  // A value that is neither a string nor a list, of another type than a schema with a format, is reported against
  // the format with the format kube-openapi infers from the Go value (int64 and float64 for numbers, else none).
  const format = typeof s.format === 'string' ? s.format : '';
  const inferred = actual === 'integer' ? 'int64' : actual === 'number' ? 'float64' : '';
  const typeMatches = actual === type || (type === 'number' && actual === 'integer');
  if (v !== null && format && actual !== 'string' && actual !== 'array' && !typeMatches && inferred !== format) {
    errs.push(invalid(p, inferred, `${name} in body must be of type ${format}: "${inferred}"`));
  } else if (!typeOk) errs.push(invalid(p, actual, `${name} in body must be of type ${type}: "${actual}"`));
  if (typeof v === 'string') {
    // The string validator reports its first failure only: maxLength, minLength, then pattern.
    const re = typeof s.pattern === 'string' ? goRegExp(s.pattern) : undefined;
    if (typeof s.maxLength === 'number' && [...v].length > s.maxLength) errs.push(tooLong(p, s.maxLength));
    else if (typeof s.minLength === 'number' && [...v].length < s.minLength) errs.push(invalid(p, v, `${name} in body should be at least ${s.minLength} chars long`));
    else if (re && !re.test(v)) errs.push(invalid(p, v, `${name} in body should match '${s.pattern}'`));
    if (typeof s.format === 'string' && s.format && !formatValid(s.format, v)) {
      errs.push(invalid(p, v, `${name} in body must be of type ${s.format}: ${JSON.stringify(v)}`));
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
    v.forEach((e, i) => validateValue(e, items, base, `${name}[${i}]`, errs));
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, v))) {
    errs.push(notSupported(p, v, s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)))));
  }
  if (isObject(v)) {
    // kube-openapi's object validator checks the properties first, then the required ones.
    const ps = props(s);
    for (const k of Object.keys(v).sort()) {
      const f = ps[k];
      if (isObject(f)) validateValue(v[k], f, base, name ? `${name}.${k}` : k, errs);
    }
    for (const r of Array.isArray(s.required) ? s.required : []) {
      if (typeof r === 'string' && !(r in v)) errs.push(required(`${p}.${r}`));
    }
  }
}

function hasRules(s: Schema): boolean {
  if (Array.isArray(s['x-kubernetes-validations']) && s['x-kubernetes-validations'].length > 0) return true;
  const kids = [...Object.values(props(s)), s.items, s.additionalProperties];
  return kids.some((k) => isObject(k) && hasRules(k));
}

// A valid default is also run through the schema's CEL rules, as a create (no old object), errors placed under
// `default` (the CEL module reports the root as `<nil>`).
function celErrors(s: Schema, at: string): FieldError[] {
  const { errors } = compileCelRules(s as JSONSchema, at).rules.validate(clone(s.default), undefined);
  return errors.map((e) => {
    const field = e.field === '<nil>' ? at : `${at}.${e.field}`;
    const body = e.message.startsWith(`${e.field}: `) ? e.message.slice(e.field.length + 2) : e.message;
    return { ...e, field, message: `${field}: ${body}` };
  });
}

// A default inside a resource's apiVersion, kind or metadata is checked in a surrounding object: apiVersion and kind
// must be strings (`must result in valid metadata: kind: Invalid value: true: must be a string`), then the value
// must validate against its schema. (ObjectMeta checks of metadata defaults are not reproduced.)
function metaDefault(s: Schema, p: string, metaKey: string | undefined, errs: FieldError[]): void {
  const d = s.default;
  if ((metaKey === 'apiVersion' || metaKey === 'kind') && typeof d !== 'string') {
    const inner = invalid(metaKey, d, 'must be a string');
    errs.push(invalid(`${p}.default`, d, `must result in valid metadata: ${inner.message}`));
    return;
  }
  validateValue(d, s, `${p}.default`, '', errs);
}

function walk(s: Schema, p: string, root: boolean, resourceRoot: boolean, insideMeta: boolean, errs: FieldError[], metaKey?: string): void {
  const embedded = root || s['x-kubernetes-embedded-resource'] === true;
  if (s['x-kubernetes-embedded-resource'] === true) insideMeta = false;
  if (s.default !== undefined && s.default !== null && insideMeta) metaDefault(s, p, metaKey, errs);
  if (s.default !== undefined && s.default !== null && !insideMeta) {
    const pruned = clone(s.default);
    prune(pruned, s, embedded);
    if (!deepEqual(pruned, s.default)) errs.push(invalid(`${p}.default`, s.default, 'must not have unknown fields'));
    const before = errs.length;
    // objectmeta.Coerce then Validate: at a resource root apiVersion and kind must be strings, then present.
    if (resourceRoot && isObject(s.default)) {
      const d = s.default;
      const notString = ['apiVersion', 'kind'].find((k) => k in d && typeof d[k] !== 'string');
      if (notString) errs.push(invalid(`${p}.default.${notString}`, d[notString], 'must be a string'));
      else for (const k of ['apiVersion', 'kind']) if (!(k in d)) errs.push(required(`${p}.default.${k}`));
    }
    if (errs.length === before) validateValue(s.default, s, `${p}.default`, '', errs);
    if (errs.length === before && hasRules(s)) errs.push(...celErrors(s, `${p}.default`));
  }
  if (isObject(s.items)) walk(s.items, `${p}.items`, false, s.items['x-kubernetes-embedded-resource'] === true, insideMeta, errs);
  for (const k of sortedKeys(s.properties)) {
    const f = props(s)[k];
    if (!isObject(f)) continue;
    const isMetaKey = embedded && (k === 'metadata' || k === 'apiVersion' || k === 'kind');
    walk(f, `${p}.properties[${k}]`, false, f['x-kubernetes-embedded-resource'] === true, insideMeta || isMetaKey, errs, isMetaKey ? k : undefined);
  }
}

/** validateDefaults returns kube's errors for the defaults of a structural schema rooted at `p`. */
export function validateDefaults(schema: Schema, p: string): FieldError[] {
  const errs: FieldError[] = [];
  walk(schema, p, true, true, false, errs);
  return errs;
}
