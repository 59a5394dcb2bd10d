/**
 * @module kinds/crd/structural-defaults
 * kube's check of schema defaults (pkg/apiserver/schema/defaulting/validation.go ValidateDefaults): every `default`
 * must survive pruning unchanged (`must not have unknown fields`) and must validate against its own schema, with
 * the errors of kube-openapi's validator (` in body must be of type integer: "string"`). The schema root counts as
 * an embedded resource, so a default there needs apiVersion and kind. A default that passes is run through the CEL
 * rules of its schema. Defaults under metadata are not checked here.
 */
import { invalid, required } from './validation-field.js';
import type { FieldError } from '../../apis/meta/field-path.js';
import { isObject, props, sortedKeys, type Schema } from './structural.js';
import { isDNS1035Label } from './validation-names.js';
import { compile } from '../../admission/structural.js';
import { validateValues } from '../../admission/value-validation.js';
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

function hasRules(s: Schema): boolean {
  if (Array.isArray(s['x-kubernetes-validations']) && s['x-kubernetes-validations'].length > 0) return true;
  const kids = [...Object.values(props(s)), s.items, s.additionalProperties];
  return kids.some((k) => isObject(k) && hasRules(k));
}

// A valid default is also run through the schema's CEL rules, as a create (no old object), errors placed under
// `default` (the CEL module reports the root as `<nil>`).
function celErrors(s: Schema, at: string): FieldError[] {
  let errors: FieldError[];
  try {
    errors = compileCelRules(s as JSONSchema, at).rules.validate(clone(s.default), undefined).errors;
  } catch {
    return []; // a schema the CEL module cannot take must not stop the check
  }
  return errors.map((e) => {
    const field = e.field === '<nil>' ? at : `${at}.${e.field}`;
    const body = e.message.startsWith(`${e.field}: `) ? e.message.slice(e.field.length + 2) : e.message;
    return { ...e, field, message: `${field}: ${body}` };
  });
}

// validateEmbeddedResource's apiVersion and kind checks (its metadata checks are not reproduced).
function embeddedTypeMeta(d: Record<string, unknown>, at: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const k of ['apiVersion', 'kind']) if (!(k in d)) errs.push(required(`${at}.${k}`));
  const apiVersion = d.apiVersion;
  if (typeof apiVersion === 'string') {
    if (!apiVersion) errs.push(invalid(`${at}.apiVersion`, apiVersion, 'must not be empty'));
    else if (apiVersion !== '/' && apiVersion.split('/').length > 2)
      errs.push(invalid(`${at}.apiVersion`, apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
  }
  const kind = d.kind;
  if (typeof kind === 'string') {
    const e = isDNS1035Label(kind.toLowerCase());
    if (!kind) errs.push(invalid(`${at}.kind`, kind, 'must not be empty'));
    else if (e.length) errs.push(invalid(`${at}.kind`, kind, `may have mixed case, but should otherwise match: ${e.join(',')}`));
  }
  return errs;
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
  errs.push(...valueErrors(s, `${p}.default`));
}

// ValidateCustomResource of the default against its own schema: kube-openapi's validator (admission's port), with
// the errors under `default`.
// field.TooLong says "1 byte" for a limit of one; admission's port says "1 bytes" (reported to its owner): mended here.
const valueErrors = (s: Schema, at: string): FieldError[] =>
  validateValues(compile(s as JSONSchema), clone(s.default), at).map((e) =>
    e.type === 'FieldValueTooLong' && e.message.endsWith(': Too long: may not be more than 1 bytes') ? { ...e, message: e.message.slice(0, -1) } : e,
  );

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
      else errs.push(...embeddedTypeMeta(d, `${p}.default`));
    }
    if (errs.length === before) errs.push(...valueErrors(s, `${p}.default`));
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
