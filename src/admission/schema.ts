/**
 * @module admission/schema
 * Structural-schema admission for one kind, answer for answer as kube-apiserver treats a custom resource:
 * - decoding (pruneUnknown): unknown members pruned at any depth and reported for fieldValidation (pruning.ts),
 *   non-nullable nulls without a default dropped, embedded resources' metadata decoded as ObjectMeta (embedded.ts);
 * - defaulting (applyDefaults, also on read), then validation (defaultAndValidate): kube-openapi's value validations
 *   with kube's words and field paths (value-validation.ts), embedded resources' type and metadata, and list-type
 *   uniqueness (list-types.ts), in the order the custom resource strategy reports them;
 * - the status subresource's validation (the status alone) and updates' ratcheting (what is unchanged is not refused
 *   again), as kube 1.37's strategies do them.
 *
 * Proven against a real kube-apiserver: src/admission/schema-corpus.test.ts replays thousands of recorded answers
 * (test/fixtures/schema-admission). Not here: CEL rules (admission/cel), scale subresource checks and metadata
 * validation (the registry's strategy).
 *
 * ajv is no longer used: its messages, its keyword order, its anyOf/oneOf reporting and its defaulting (missing
 * members only, not nulls) all differ from kube's, so the validator is a port of kube-openapi's instead. The schema
 * is compiled once (structural.ts); a walk is skipped entirely where the schema has nothing for it (no defaults, no
 * list sets or maps, no embedded resources).
 */
import type { FieldError } from '../apis/meta/field-path.js';
import type { JSONSchema } from '../apis/meta/json-schema.js';
import { applySchemaDefaults, hasDefaults, pruneNulls } from './defaulting.js';
import { coerceEmbedded, hasEmbedded, validateEmbedded } from './embedded.js';
import { hasListTypes, validateListTypes } from './list-types.js';
import { pruneObject } from './pruning.js';
import { compile } from './structural.js';
import { validateValues } from './value-validation.js';

export { CoercionError } from './embedded.js';

/** SchemaAdmission holds the compiled schema of one kind. */
export interface SchemaAdmission {
  /**
   * pruneUnknown is the decoder's part (unstructuredSchemaCoercer.apply): it removes unknown members in place and
   * returns their paths (`spec.foo`; pruned paths sorted, then unknown fields of embedded metadata), drops
   * non-nullable nulls without a default, and replaces embedded metadata by its stored form. The object's own
   * `metadata` is not looked at (apis/meta/decode.ts decodes it). Throws CoercionError for an embedded resource kube's
   * decoder refuses (a 400).
   */
  pruneUnknown(obj: Record<string, unknown>, opts?: { keepNulls?: boolean }): string[];
  /**
   * applyDefaults drops non-nullable nulls without a default and fills schema defaults in place, as kube's codec does
   * on every decode: a request body, and an object read from storage (defaulting on read).
   */
  applyDefaults(obj: Record<string, unknown>): void;
  /** hasDefaults: the schema declares a default somewhere (else applyDefaults only drops nulls). */
  readonly hasDefaults: boolean;
  /** defaultAndValidate applies the defaults, then returns every schema violation in kube's order. */
  defaultAndValidate(obj: Record<string, unknown>): FieldError[];
  /**
   * defaultAndValidateStatus is defaultAndValidate for a write to the status subresource, as kube's status strategy
   * validates it: the status alone against the status schema (fields under `status`, messages naming the path inside
   * it: `status.x: Invalid value: 5: x in body should be ...`), then embedded resources and list types everywhere.
   */
  defaultAndValidateStatus(obj: Record<string, unknown>): FieldError[];
  /**
   * defaultAndValidateUpdate is defaultAndValidate for an update of the stored `old` (defaulted as read), with CRD
   * validation ratcheting as kube 1.37 has it on: a value equal to its old value (members matched by name, list-map
   * items by their keys) is not refused again, and list-type uniqueness is checked only if the old object kept it.
   */
  defaultAndValidateUpdate(obj: Record<string, unknown>, old: Record<string, unknown>): FieldError[];
  /** defaultAndValidateStatusUpdate is defaultAndValidateStatus for an update of the stored `old`, ratcheting. */
  defaultAndValidateStatusUpdate(obj: Record<string, unknown>, old: Record<string, unknown>): FieldError[];
}

// One compilation per schema object: the store and the start-up defaults walk of a kind share it.
const compiled = new WeakMap<JSONSchema, SchemaAdmission>();

/** compileSchemaAdmission compiles a kind's schema once (never on the request path); the same schema, the same result. */
export function compileSchemaAdmission(schema: JSONSchema): SchemaAdmission {
  let a = compiled.get(schema);
  if (!a) {
    a = compileOnce(schema);
    compiled.set(schema, a);
  }
  return a;
}

function compileOnce(schema: JSONSchema): SchemaAdmission {
  const root = compile(schema);
  const defaults = hasDefaults(root);
  const lists = hasListTypes(root);
  const embedded = hasEmbedded(root);
  const applyDefaults = (obj: Record<string, unknown>): void => {
    pruneNulls(obj, root);
    if (defaults) applySchemaDefaults(obj, root);
  };
  // Validation defaults what is missing (or null with a default) but keeps other nulls: those the decoder did not
  // drop (an applied configuration's, which no decoder sees) are the schema's type errors, as kube reports them.
  const defaultOnly = (obj: Record<string, unknown>): void => {
    if (defaults) applySchemaDefaults(obj, root);
  };
  return {
    pruneUnknown: (obj, opts) => {
      const unknown = pruneObject(root, obj);
      if (!opts?.keepNulls) pruneNulls(obj, root);
      if (embedded) coerceEmbedded('', root, obj, unknown);
      return unknown;
    },
    applyDefaults,
    hasDefaults: defaults,
    defaultAndValidate: (obj) => {
      defaultOnly(obj);
      return structureErrors(obj, validateValues(root, obj));
    },
    defaultAndValidateStatus: (obj) => {
      defaultOnly(obj);
      return structureErrors(obj, statusErrors(obj));
    },
    defaultAndValidateUpdate: (obj, old) => {
      defaultOnly(obj);
      return structureErrors(obj, validateValues(root, obj, '', old), old);
    },
    defaultAndValidateStatusUpdate: (obj, old) => {
      defaultOnly(obj);
      return structureErrors(obj, statusErrors(obj, old), old);
    },
  };
  // The status alone against the status schema (ValidateStatusUpdate), when the object has one.
  function statusErrors(obj: Record<string, unknown>, old?: Record<string, unknown>): FieldError[] {
    const status = root.properties?.get('status');
    if (!status || !Object.hasOwn(obj, 'status')) return [];
    return old && Object.hasOwn(old, 'status')
      ? validateValues(status, obj['status'], 'status', old['status'])
      : validateValues(status, obj['status'], 'status');
  }
  // Then embedded resources (objectmeta.Validate) and list types (ValidateListSetsAndMaps), as the strategies do; an
  // update checks list types only if the old object passed them.
  function structureErrors(obj: Record<string, unknown>, errs: FieldError[], old?: Record<string, unknown>): FieldError[] {
    if (embedded) validateEmbedded('', root, obj, errs);
    if (lists && !(old && validateListTypes(root, old).length > 0)) errs.push(...validateListTypes(root, obj));
    return errs;
  }
}
