/**
 * @module registry/decode-errors
 * How kube-apiserver words a body it cannot decode, by where the body came from:
 * - a create, update or apply body: handlers/rest.go transformDecodeError, 400
 *   `Website in version "v1alpha1" cannot be handled as a Website: <error>` once the type is known, else
 *   `the object provided is unrecognized (must be of type Website): <error> (<the first 30 bytes>)`;
 * - the result of a merge or JSON patch: handlers/patch.go applyPatchToCurrentObject, 422
 *   ` "" is invalid: patch: Invalid value: "<the patched object>": <error>` (field.Invalid on path `patch`).
 */
import { badRequest, StatusError } from '../apis/meta/errors.js';
import { goMarshal, goQuote } from '../apis/meta/go-json.js';

/** DecodeMode is where a decoded object came from. */
export type DecodeMode = 'create' | 'update' | 'patch' | 'apply';

/** groupOf is the group of an apiVersion (schema.ParseGroupVersion: `v1` is the core group ""). */
export const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

const versionOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion);

/** summarizeData is handlers/rest.go summarizeData: a JSON object's first 30 bytes as text, anything else in hex. */
export function summarizeData(data: Buffer, maxLength = 30): string {
  if (data.length === 0) return '<empty>';
  const head = data.subarray(0, maxLength);
  const more = data.length > maxLength ? ' ...' : '';
  return data[0] === 0x7b ? `${head.toString('utf8')}${more}` : `${head.toString('hex')}${more}`;
}

/** invalidPatch is patch.go's 422 for a patched object that does not decode: no kind, group or name. */
export function invalidPatch(patchedJson: string, message: string): StatusError {
  const body = `Invalid value: ${goQuote(patchedJson)}: ${message}`;
  return new StatusError({
    code: 422,
    reason: 'Invalid',
    message: ` "" is invalid: patch: ${body}`,
    details: { causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }] },
  });
}

/**
 * decodeFailure builds the error for a body (or a patch's result) that did not decode: `unrecognized` when its type
 * could not be read, `handledAs` the type it declared otherwise. Bodies arrive parsed, so the text quoted is their
 * compact JSON (what kubectl and client-go send).
 */
export function decodeFailure(
  body: unknown,
  mode: DecodeMode,
  kind: string,
  message: string,
  unrecognized: boolean,
  handledAs?: { kind: string; apiVersion: string },
): StatusError {
  if (mode === 'patch') return invalidPatch(goMarshal(body), message);
  if (unrecognized || !handledAs) {
    const data = Buffer.from(body === undefined ? '' : JSON.stringify(body), 'utf8');
    return badRequest(`the object provided is unrecognized (must be of type ${kind}): ${message} (${summarizeData(data)})`);
  }
  return badRequest(`${handledAs.kind} in version ${JSON.stringify(versionOf(handledAs.apiVersion))} cannot be handled as a ${kind}: ${message}`);
}
