/**
 * @module admission/schema
 * Structural-schema admission for one kind, the way kube-apiserver treats a CRD: find unknown fields (for
 * `fieldValidation`), prune them, apply schema defaults, then validate with ajv and report every bad field as a
 * Kubernetes FieldError (`spec.replicas: Invalid value: 500: must be less than or equal to 100`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formatsModule from 'ajv-formats';
import {
  invalid, notSupported, required, tooLong, typeInvalid, type FieldError,
} from '../apis/meta/field-path.js';
import { compareUtf8 } from '../apis/meta/go-json.js';
import type { JSONSchema } from '../apis/meta/json-schema.js';

const addFormats = formatsModule.default;

// Kubernetes' structural-schema vendor extensions are annotations, not validation keywords.
const VENDOR_KEYWORDS = [
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string', 'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-embedded-resource', 'x-kubernetes-validations',
];

/** SchemaAdmission holds the compiled validator for one kind. */
export interface SchemaAdmission {
  /**
   * pruneUnknown removes unknown fields in place and returns their paths (`spec.foo`), in the sorted order kube's
   * structural pruning reports them. `metadata` is not looked at: it is decoded as metav1.ObjectMeta
   * (apis/meta/decode.ts), which finds its unknown fields.
   */
  pruneUnknown(obj: Record<string, unknown>): string[];
  /** defaultAndValidate fills schema defaults in place and returns every schema violation. */
  defaultAndValidate(obj: Record<string, unknown>): FieldError[];
}

/** compileSchemaAdmission compiles a kind's schema once (ajv compile is ~20 ms; never on the request path). */
export function compileSchemaAdmission(schema: JSONSchema): SchemaAdmission {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, coerceTypes: false });
  ajv.addVocabulary(VENDOR_KEYWORDS);
  addFormats(ajv);
  const validate: ValidateFunction = ajv.compile(schema);
  return {
    pruneUnknown: (obj) => {
      const unknown: string[] = [];
      // The usual object has nothing to prune: find that out without sorting or building paths.
      if (hasUnknown(schema, obj, true)) prune(schema, obj, '', unknown);
      return unknown;
    },
    defaultAndValidate: (obj) => {
      const errs = validate(obj) ? [] : toFieldErrors(validate.errors ?? [], obj);
      outOfInt64(schema, obj, [], errs);
      return errs;
    },
  };
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// prune walks the object along the schema and deletes properties the schema does not declare.
function prune(schema: JSONSchema, value: unknown, at: string, unknown: string[]): void {
  if (schema['x-kubernetes-preserve-unknown-fields']) return;
  if (Array.isArray(value)) {
    if (schema.items) value.forEach((v, i) => prune(schema.items as JSONSchema, v, `${at}[${i}]`, unknown));
    return;
  }
  if (!isPlainObject(value) || schema.type !== 'object') return;
  // Members in sorted order, as the pruning of a decoded map reports them (apiextensions structural/pruning).
  for (const k of Object.keys(value).sort(compareUtf8)) {
    if (at === '' && k === 'metadata') continue;
    const child = memberSchema(schema, k);
    const childPath = at ? `${at}.${k}` : k;
    if (child) prune(child, value[k], childPath, unknown);
    else if (undeclared(schema)) {
      unknown.push(childPath);
      delete value[k];
    }
  }
}

// hasUnknown tells whether prune would remove anything from `value` (`root`: the object itself, whose metadata
// prune leaves alone).
function hasUnknown(schema: JSONSchema, value: unknown, root = false): boolean {
  if (schema['x-kubernetes-preserve-unknown-fields']) return false;
  if (Array.isArray(value)) {
    const items = schema.items as JSONSchema | undefined;
    if (items) for (const v of value) if (hasUnknown(items, v)) return true;
    return false;
  }
  if (!isPlainObject(value) || schema.type !== 'object') return false;
  for (const k in value) {
    if (!Object.hasOwn(value, k) || (root && k === 'metadata')) continue;
    const child = memberSchema(schema, k);
    if (child ? hasUnknown(child, value[k]) : undeclared(schema)) return true;
  }
  return false;
}

// memberSchema is the schema of member `k` of an object: its declared property (own properties only: `constructor`
// is no declared field), else additionalProperties when that is a schema.
function memberSchema(schema: JSONSchema, k: string): JSONSchema | undefined {
  const props = schema.properties;
  if (props && Object.hasOwn(props, k)) return props[k];
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

// undeclared tells whether a member without a schema of its own is unknown (pruned): the object declares properties
// and does not allow any others.
const undeclared = (schema: JSONSchema): boolean => schema.additionalProperties !== true && schema.properties !== undefined;

const INT64_LIMIT = 2 ** 63;

/**
 * outOfInt64 adds a type error for each `type: integer` value that is whole but beyond int64: JSON Schema calls it an
 * integer, but kube-apiserver decodes it as a float64 and its schema validation refuses it (`must be of type
 * integer`), and no Go client could decode it into its int64 or int32 field.
 */
// wrongType words a type error as kube-openapi's validator does (errors.InvalidType), the value being the name of the
// type found: `spec.x: Invalid value: "null": spec.x in body must be of type string: "null"`.
function wrongType(field: string, found: string, want: string): FieldError {
  return typeInvalid(field, found, `${field} in body must be of type ${want}: ${JSON.stringify(found)}`);
}

// jsonTypeName is the validator's name for a decoded JSON value's type (a whole number is an integer).
function jsonTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function outOfInt64(schema: JSONSchema, value: unknown, at: (string | number)[], errs: FieldError[]): void {
  if (schema.type === 'integer') {
    if (typeof value === 'number' && Number.isInteger(value) && (value >= INT64_LIMIT || value < -INT64_LIMIT)) {
      errs.push(wrongType(pathText(at), 'number', 'integer'));
    }
    return;
  }
  if (!declaresInteger(schema)) return;
  // `at` is one stack of segments, pushed and popped: the text is built only for an error.
  if (Array.isArray(value)) {
    const items = schema.items as JSONSchema | undefined;
    if (!items) return;
    for (let i = 0; i < value.length; i++) {
      at.push(i);
      outOfInt64(items, value[i], at, errs);
      at.pop();
    }
    return;
  }
  if (!isPlainObject(value)) return;
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    const child = memberSchema(schema, k);
    if (!child) continue;
    at.push(k);
    outOfInt64(child, value[k], at, errs);
    at.pop();
  }
}

// pathText writes path segments as a field path: spec.items[0].name.
const pathText = (at: (string | number)[]): string =>
  at.reduce<string>((out, seg) => (typeof seg === 'number' ? `${out}[${seg}]` : out ? `${out}.${seg}` : seg), '');

// Whether a schema declares an integer anywhere beneath it, per schema node (schemas are compiled once and kept).
const INTEGER_BENEATH = new WeakMap<JSONSchema, boolean>();
function declaresInteger(schema: JSONSchema): boolean {
  let found = INTEGER_BENEATH.get(schema);
  if (found === undefined) {
    const children = [...Object.values(schema.properties ?? {}), schema.items, schema.additionalProperties];
    found = schema.type === 'integer' || children.some((c) => typeof c === 'object' && c !== null && declaresInteger(c as JSONSchema));
    INTEGER_BENEATH.set(schema, found);
  }
  return found;
}

// toFieldPath turns an ajv instancePath (/spec/items/0/name) into spec.items[0].name.
function toFieldPath(instancePath: string): string {
  let out = '';
  for (const raw of instancePath.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(seg) ? `[${seg}]` : out ? `.${seg}` : seg;
  }
  return out;
}

function valueAt(obj: unknown, instancePath: string): unknown {
  let v: unknown = obj;
  for (const raw of instancePath.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    v = isPlainObject(v) || Array.isArray(v) ? (v as Record<string, unknown>)[seg] : undefined;
  }
  return v;
}

// Ajv reports one error per keyword; Kubernetes reports one per field and never more than this many.
const MAX_ERRORS = 100;

function toFieldErrors(errors: ErrorObject[], obj: unknown): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errors.slice(0, MAX_ERRORS)) {
    const field = toFieldPath(e.instancePath);
    const value = valueAt(obj, e.instancePath);
    const p = e.params as Record<string, unknown>;
    let fe: FieldError;
    switch (e.keyword) {
      case 'required': fe = required(field ? `${field}.${String(p['missingProperty'])}` : String(p['missingProperty'])); break;
      case 'type': fe = wrongType(field, jsonTypeName(value), String(p['type'])); break;
      case 'minimum': fe = invalid(field, value, `must be greater than or equal to ${String(p['limit'])}`); break;
      case 'maximum': fe = invalid(field, value, `must be less than or equal to ${String(p['limit'])}`); break;
      case 'enum': fe = notSupported(field, value, (p['allowedValues'] as unknown[]).map(String)); break;
      case 'minLength': fe = invalid(field, value, `must be at least ${String(p['limit'])} chars long`); break;
      case 'maxLength': fe = tooLong(field, Number(p['limit'])); break;
      case 'format': fe = invalid(field, value, `must be in format "${String(p['format'])}"`); break;
      case 'pattern': fe = invalid(field, value, `must match the pattern ${String(p['pattern'])}`); break;
      default: fe = invalid(field, value, e.message ?? 'is invalid');
    }
    if (!seen.has(fe.message)) {
      seen.add(fe.message);
      out.push(fe);
    }
  }
  return out;
}
