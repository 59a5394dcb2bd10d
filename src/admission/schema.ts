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
import type { JSONSchema } from '../registry/resource.js';

const addFormats = formatsModule.default;

// Kubernetes' structural-schema vendor extensions are annotations, not validation keywords.
const VENDOR_KEYWORDS = [
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string', 'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys', 'x-kubernetes-map-type', 'x-kubernetes-embedded-resource', 'x-kubernetes-validations',
];

// ObjectMeta fields a client may send; anything else under metadata is an unknown field, as for built-in types.
const OBJECT_META_FIELDS = new Set([
  'name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields',
]);

/** SchemaAdmission holds the compiled validator for one kind. */
export interface SchemaAdmission {
  /** pruneUnknown removes unknown fields in place and returns their paths (`spec.foo`, `metadata.bar`). */
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
      prune(schema, obj, '', unknown);
      const meta = obj['metadata'];
      if (isPlainObject(meta)) {
        for (const k of Object.keys(meta)) if (!OBJECT_META_FIELDS.has(k)) {
          unknown.push(`metadata.${k}`);
          delete meta[k];
        }
      }
      return unknown;
    },
    defaultAndValidate: (obj) => {
      if (validate(obj)) return [];
      return toFieldErrors(validate.errors ?? [], obj);
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
  const props = schema.properties;
  for (const k of Object.keys(value)) {
    const child = props?.[k];
    const childPath = at ? `${at}.${k}` : k;
    if (child) prune(child, value[k], childPath, unknown);
    else if (typeof schema.additionalProperties === 'object') prune(schema.additionalProperties, value[k], childPath, unknown);
    else if (schema.additionalProperties !== true && props) {
      unknown.push(childPath);
      delete value[k];
    }
  }
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
      case 'type': fe = typeInvalid(field, value, `must be of type ${String(p['type'])}`); break;
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
