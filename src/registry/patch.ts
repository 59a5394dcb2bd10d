/**
 * @module registry/patch
 * Applying PATCH bodies to the JSON of the current object: JSON merge patch (RFC 7386) and JSON patch (RFC 6902,
 * via fast-json-patch). Strategic merge patch is not supported for our kinds, exactly as for CRDs (415).
 */
import jsonpatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { badRequest, invalid, tooLarge } from '../apis/meta/errors.js';

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
  if (!isObject(patch)) return structuredClone(patch);
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

/** jsonPatch applies RFC 6902 operations atomically; a failing operation is a 422 (as kube-apiserver reports it). */
export function jsonPatch(target: unknown, ops: unknown, kind: string, group: string, name: string): unknown {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  if (ops.length > MAX_JSON_PATCH_OPS) {
    throw tooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPS}, got ${ops.length}`);
  }
  try {
    return jsonpatch.applyPatch(structuredClone(target), ops as Operation[], true, false).newDocument;
  } catch (e) {
    const message = e instanceof Error ? e.message.split('\n')[0] ?? e.message : String(e);
    throw invalid(kind, group, name, [{ type: 'FieldValueInvalid', field: '', message: `the server rejected our request due to an error in our request: ${message}` }]);
  }
}
