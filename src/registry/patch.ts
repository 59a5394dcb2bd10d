/**
 * @module registry/patch
 * Applying PATCH bodies to the JSON of the current object: JSON merge patch (RFC 7386) and JSON patch (RFC 6902,
 * decoded and applied as kube-apiserver does: registry/json-patch.ts). Strategic merge patch is not supported for
 * our kinds, exactly as for CRDs (415).
 */
import { cloneJson } from '../apis/meta/json-clone.js';
import { badRequest, internalError, StatusError, tooLarge } from '../apis/meta/errors.js';
import { decodeGoJson, GoJsonSyntaxError, goMarshal, goQuote, type GoValue } from '../apis/meta/go-json.js';
import { applyPatch, JsonPatchDecodeError, JsonPatchError, JsonPatchPanic, patchFromJson, type Patch } from './json-patch.js';
import type { FieldValidation, KubeObject } from '../apis/meta/types.js';
import { duplicatesOf } from './duplicate-fields.js';

/** PatchType is the media type of a PATCH body. */
export type PatchType = 'application/merge-patch+json' | 'application/json-patch+json' | 'application/apply-patch+yaml';

/** APPLY_PATCH_TYPE is server-side apply's media type (see registry/managed-fields.ts). */
export const APPLY_PATCH_TYPE = 'application/apply-patch+yaml';

/**
 * SUPPORTED_PATCH_TYPES is what PATCH accepts on the main resource, in the order kube-apiserver lists them for
 * CRDs. Routes, the 415 message and the OpenAPI documents all read this one list.
 */
export const SUPPORTED_PATCH_TYPES: readonly PatchType[] = ['application/json-patch+json', 'application/merge-patch+json', APPLY_PATCH_TYPE];

// kube-apiserver's limit on the number of operations in one JSON patch (maxJSONPatchOperations).
const MAX_JSON_PATCH_OPS = 10_000;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** mergePatch applies an RFC 7386 merge patch and returns a new value (the target is not modified). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return cloneJson(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    // The JSON parser refuses __proto__ already; skip it again defensively. (`constructor` and `prototype` are
    // ordinary keys, e.g. of labels: assigning them as own properties is safe.)
    if (key === '__proto__') continue;
    const value = patch[key];
    if (value === null) delete out[key];
    else out[key] = mergePatch(Object.hasOwn(out, key) ? out[key] : undefined, value);
  }
  return out;
}

/** JsonPatchBody is a JSON patch request body that is valid JSON, as the content-type parser hands it to the routes. */
export class JsonPatchBody {
  constructor(readonly json: GoValue) {}
}

/**
 * decodeJsonPatchBody checks a JSON patch body before anything else: kube-apiserver refuses one that is not valid
 * JSON with 400 `invalid JSON patch` even when the object does not exist (handlers/patch.go,
 * validateAndTranscodePatch).
 */
export function decodeJsonPatchBody(body: string | Uint8Array): JsonPatchBody {
  try {
    return new JsonPatchBody(decodeGoJson(body));
  } catch (e) {
    if (e instanceof GoJsonSyntaxError) throw badRequest('invalid JSON patch');
    throw e;
  }
}

/** JsonPatchOptions: the request's fieldValidation, and where strict-decoding warnings about the patch go. */
export interface JsonPatchOptions {
  fieldValidation?: FieldValidation;
  warnings?: string[];
}

// kube-apiserver's AccumulatedCopySizeLimit: JSONPatchMaxCopyBytes, 3 MiB (k8s.io/apiserver/pkg/server/config.go).
const JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024;

/**
 * jsonPatch applies a JSON patch atomically with kube-apiserver's answers (handlers/patch.go, jsonPatcher):
 * - unless fieldValidation=Ignore, the body is first decoded as []jsonPatchOp: a wrong JSON type is 400
 *   `error decoding patch: json: cannot unmarshal ...`, unknown and duplicate members are warnings (Warn) or
 *   part of a 422 (Strict) once the patch applied;
 * - DecodePatch's own type errors are 400; more than 10000 operations is 413;
 * - any failing operation is 422 `the server rejected our request due to an error in our request` with no detail
 *   (errors.NewGenericServerResponse keeps none); a patch on which the library would panic is 500.
 * `kind`, `group` and `name` are not part of these answers: kube-apiserver reports them without any.
 */
export function jsonPatch(target: unknown, ops: unknown, _kind: string, _group: string, _name: string, opts: JsonPatchOptions = {}): unknown {
  const body =
    ops instanceof JsonPatchBody ? ops : decodeJsonPatchBody(typeof ops === 'string' || ops instanceof Uint8Array ? ops : (JSON.stringify(ops) ?? ''));
  const validation = opts.fieldValidation ?? 'Warn';
  let strict: string[] = [];
  if (validation !== 'Ignore') {
    const decoded = decodePatchOps(body.json);
    if (decoded.typeError) throw badRequest(`error decoding patch: ${decoded.typeError}`);
    strict = decoded.strict;
  }
  let patch: Patch;
  try {
    patch = patchFromJson(body.json);
  } catch (e) {
    if (e instanceof JsonPatchDecodeError) throw badRequest(e.message);
    throw e;
  }
  if (patch.length > MAX_JSON_PATCH_OPS) {
    throw tooLarge(`Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPS}, got ${patch.length}`);
  }
  let patched: string;
  try {
    patched = applyPatch(patch, goMarshal(target), { accumulatedCopySizeLimit: JSON_PATCH_MAX_COPY_BYTES });
  } catch (e) {
    if (e instanceof JsonPatchError) {
      throw new StatusError(
        { code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request', details: {} },
        { cause: e },
      );
    }
    if (e instanceof JsonPatchPanic) throw internalError(`json patch: ${e.message}`);
    throw e;
  }
  if (validation !== 'Ignore') {
    // Members the patch duplicated inside a value stay duplicated in the patched JSON, which the object's strict
    // decoding reports (`duplicate field "metadata.labels.a"`), after the patch's own findings.
    duplicateKeys(decodeGoJson(patched), '', (path) => strict.push(`duplicate field ${goQuote(path)}`));
  }
  if (strict.length > 0) {
    if (validation === 'Strict') {
      // errors.NewInvalid(schema.GroupKind{}, "", field.Invalid(field.NewPath("patch"), patchedJSON, strictDecodingError))
      const detail = `Invalid value: ${goQuote(patched)}: strict decoding error: ${strict.join(', ')}`;
      throw new StatusError({
        code: 422,
        reason: 'Invalid',
        message: ` "" is invalid: patch: ${detail}`,
        details: { causes: [{ reason: 'FieldValueInvalid', message: detail, field: 'patch' }] },
      });
    }
    opts.warnings?.push(...strict);
  }
  return JSON.parse(patched);
}

/**
 * patchObject applies a merge or JSON patch to the JSON of an object of `kind` (a JSON patch through jsonPatch);
 * strict-decoding warnings about a JSON patch itself go to `warnings`. A merge patch must be a JSON object (400).
 */
export function patchObject(
  target: KubeObject,
  type: PatchType,
  patch: unknown,
  kind: string,
  group: string,
  name: string,
  fieldValidation: FieldValidation,
  warnings: string[] = [],
): unknown {
  if (type === 'application/json-patch+json') return jsonPatch(target, patch, kind, group, name, { fieldValidation, warnings });
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
  }
  return mergePatch(target, patch);
}

/**
 * mergePatchDuplicates: a merge patch's duplicate members are strict decoding errors of the patch (patch.go
 * applyJSPatch: kjson.UnmarshalStrict), warnings under Warn, under Strict kube's 422 on field `patch`.
 */
export function mergePatchDuplicates(patch: unknown, patched: unknown, fieldValidation: FieldValidation, warnings: string[]): void {
  if (fieldValidation === 'Ignore') return;
  const strict = duplicatesOf(patch).map((f) => `duplicate field ${JSON.stringify(f)}`);
  if (strict.length === 0) return;
  if (fieldValidation === 'Warn') {
    warnings.push(...strict);
    return;
  }
  const detail = `Invalid value: ${JSON.stringify(goMarshal(patched))}: strict decoding error: ${strict.join(', ')}`;
  throw new StatusError({
    code: 422,
    reason: 'Invalid',
    message: ` "" is invalid: patch: ${detail}`,
    details: { causes: [{ reason: 'FieldValueInvalid', message: detail, field: 'patch' }] },
  });
}

const PATCH_OP_FIELDS = new Set(['op', 'path', 'from', 'value']);
// sigs.k8s.io/json keeps at most this many strict errors, each once.
const MAX_STRICT_ERRORS = 100;

/**
 * decodePatchOps is kjson.UnmarshalStrict(patch, &[]jsonPatchOp): the first JSON type error, else the strict errors
 * (case-sensitive unknown members, duplicate members, duplicate keys inside values) in document order, each
 * prefixed `json patch ` as kube-apiserver reports them.
 */
function decodePatchOps(json: GoValue): { typeError?: string; strict: string[] } {
  if (json === null) return { strict: [] };
  if (json.kind !== 'array') return { typeError: `json: cannot unmarshal ${json.kind} into Go value of type []handlers.jsonPatchOp`, strict: [] };
  let typeError: string | undefined;
  const strict = new Set<string>();
  const note = (what: string, path: string) => {
    if (strict.size < MAX_STRICT_ERRORS) strict.add(`json patch ${what} ${goQuote(path)}`);
  };
  json.items.forEach((op, i) => {
    if (op === null) return;
    if (op.kind !== 'object') {
      typeError ??= `json: cannot unmarshal ${op.kind} into Go value of type handlers.jsonPatchOp`;
      return;
    }
    const seen = new Set<string>();
    for (const [key, v] of op.entries) {
      const path = `[${i}].${key}`;
      if (!PATCH_OP_FIELDS.has(key)) {
        note('unknown field', path);
        continue;
      }
      if (seen.has(key)) note('duplicate field', path);
      seen.add(key);
      if (key === 'value') duplicateKeys(v, path, (p) => note('duplicate field', p));
      else if (v !== null && v.kind !== 'string') typeError ??= `json: cannot unmarshal ${v.kind} into Go struct field jsonPatchOp.${key} of type string`;
    }
  });
  return typeError ? { typeError, strict: [] } : { strict: [...strict] };
}

// duplicateKeys reports every key repeated within one object of a value, in the order a decoder meets them (kjson
// paths: `key` at the top, `.key` below, `[i]` for elements). Iterative: values may nest 10000 deep.
function duplicateKeys(v: GoValue, path: string, report: (path: string) => void): void {
  type Task = { value: GoValue; at: string } | { duplicate: string };
  const todo: Task[] = [{ value: v, at: path }];
  while (todo.length > 0) {
    const task = todo.pop()!;
    if ('duplicate' in task) {
      report(task.duplicate);
      continue;
    }
    const { value, at } = task;
    if (value === null || (value.kind !== 'object' && value.kind !== 'array')) continue;
    const next: Task[] = [];
    if (value.kind === 'array')
      value.items.forEach((item, k) => {
        next.push({ value: item, at: `${at}[${k}]` });
      });
    else {
      const seen = new Set<string>();
      for (const [key, member] of value.entries) {
        const child = at === '' ? key : `${at}.${key}`;
        if (seen.has(key)) next.push({ duplicate: child });
        seen.add(key);
        next.push({ value: member, at: child });
      }
    }
    for (let k = next.length - 1; k >= 0; k--) todo.push(next[k]!);
  }
}
