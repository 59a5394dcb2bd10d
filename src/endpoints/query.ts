/**
 * @module endpoints/query
 * The handlers' options, in kube-apiserver's order (handlers/get.go listOpts, create.go, update.go, patch.go,
 * delete.go): decode the query with apis/meta/parameter-codec (400 BadRequest with Go's text), validate
 * (422 `<Kind>.meta.k8s.io "" is invalid`), then the field-label conversion of a CRD (400). Unknown parameters are
 * ignored. Authorization decodes the same query with the same codec (auth/request-info.ts).
 */
import { badRequest } from '../apis/meta/errors.js';
import type { FieldSelector } from '../apis/meta/fields.js';
import type { LabelSelector } from '../apis/meta/labels.js';
import { invalidOptions, validateListOptions, validateTableOptions, validateWriteOptions } from '../apis/meta/options-validation.js';
import {
  decodeDeleteOptions,
  decodeGetOptions,
  decodeListOptions,
  decodeTableOptions,
  decodeWriteOptions,
  first,
  goQuote,
  parseUint64,
  queryOf,
  type QueryValues,
} from '../apis/meta/parameter-codec.js';
import { decodeDeleteOptionsBody, GoDecodeError } from '../apis/meta/decode.js';
import type { DeleteOptions, FieldValidation, WriteOptions } from '../registry/store.js';
import type { IncludeObject } from '../registry/table.js';

export type { QueryValues } from '../apis/meta/parameter-codec.js';

/** Query is fastify's own parse of a querystring (repeated keys become arrays); handlers use requestQuery instead. */
export type Query = Record<string, string | string[] | undefined>;

/** toQueryValues views a fastify Query as url.Values (for callers that only have `req.query`). */
export function toQueryValues(q: Query | QueryValues): QueryValues {
  if (q instanceof Map) return q;
  const m = new Map<string, string[]>();
  for (const [k, v] of Object.entries(q)) if (v !== undefined) m.set(k, Array.isArray(v) ? v : [v]);
  return m;
}

/** requestQuery decodes a request's query as Go's url.Values (the raw URL, never fastify's own parse). */
export const requestQuery = (req: { url: string }): QueryValues => queryOf(req.url);

/** ResourceVersionMatch is the list/watch `resourceVersionMatch` parameter. */
export type ResourceVersionMatch = 'NotOlderThan' | 'Exact' | undefined;

/** ListOptions is the parsed form of metav1.ListOptions. */
export interface ListOptions {
  label: LabelSelector;
  field: FieldSelector;
  watch: boolean;
  resourceVersion: string | undefined;
  resourceVersionMatch: ResourceVersionMatch;
  allowWatchBookmarks: boolean;
  sendInitialEvents: boolean | undefined;
  /** Seconds until a watch ends; undefined picks kube's random default. */
  timeoutSeconds: number | undefined;
  limit: number | undefined;
  continueToken: string | undefined;
}

// The longest timer Node keeps (2^31-1 ms, about 24.8 days); a longer timeoutSeconds would otherwise fire at once.
const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/**
 * parseListOptions decodes and validates list/watch parameters as listOpts does. Past decoding: `limit` <= 0 lists
 * everything; `timeoutSeconds=0` is the default timeout and a negative one ends the watch at once (handleWatch).
 * A field other than metadata.name (and metadata.namespace when namespaced) or one of the kind's `selectable` fields
 * (a CRD's selectableFields) is a CRD's `field label not supported` (apiextensions-apiserver crConverter.ConvertFieldLabel).
 */
export function parseListOptions(q: QueryValues, namespaced = true, selectable: readonly string[] = []): ListOptions {
  const o = decodeListOptions(q);
  const errs = validateListOptions(o);
  if (errs.length) throw invalidOptions('ListOptions', errs);
  for (const field of o.field.fields) {
    if (field !== 'metadata.name' && !(namespaced && field === 'metadata.namespace') && !selectable.includes(field))
      throw badRequest(`field label not supported: ${field}`);
  }
  const t = o.timeoutSeconds;
  return {
    label: o.label,
    field: o.field,
    watch: o.watch,
    resourceVersion: o.resourceVersion || undefined,
    resourceVersionMatch: (o.resourceVersionMatch || undefined) as ResourceVersionMatch,
    allowWatchBookmarks: o.allowWatchBookmarks,
    sendInitialEvents: o.sendInitialEvents,
    timeoutSeconds: t === undefined || t === 0 ? undefined : Math.min(Math.max(t, 0), MAX_TIMER_SECONDS),
    limit: o.limit > 0 ? o.limit : undefined,
    continueToken: o.continue || undefined,
  };
}

/**
 * checkResourceVersion parses a list's or watch's resourceVersion as the storage does (APIObjectVersioner
 * ParseResourceVersion): 400 `invalid resource version: ...`. kube-apiserver answers a list so; for a watch its
 * cacher returns the same parse error unwrapped, which becomes a 500 with no reason. A client's typo is not a
 * server fault to retry, so a watch gets the list's 400 (a deliberate difference).
 */
export function checkResourceVersion(rv: string | undefined): void {
  if (rv === undefined || rv === '0') return;
  try {
    parseUint64(rv);
  } catch (e) {
    throw badRequest(`invalid resource version: resourceVersion: Invalid value: ${goQuote(rv)}: ${(e as Error).message}`);
  }
}

/**
 * parseGetOptions handles a GET of one object's query: `export` is refused, and a resourceVersion that is not a
 * uint64 is the list's 400 (kube's storage answers a get with it 500: a client's typo is not a server fault).
 */
export function parseGetOptions(q: QueryValues): void {
  const o = decodeGetOptions(q);
  checkResourceVersion(o.resourceVersion || undefined);
}

/** parseTableOptions reads the Table options (`includeObject`, and `-` for noHeaders) when a Table is asked for. */
export function parseTableOptions(q: QueryValues): { includeObject: IncludeObject; noHeaders: boolean } {
  const o = decodeTableOptions(q);
  const [err] = validateTableOptions(o);
  if (err) throw badRequest(`Unable to convert to Table as requested: ${err.message}`);
  return { includeObject: (o.includeObject || 'Metadata') as IncludeObject, noHeaders: o.noHeaders };
}

/** parseWriteOptions decodes and validates CreateOptions, UpdateOptions or PatchOptions (isApply: an apply patch). */
export function parseWriteOptions(
  q: QueryValues,
  kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
  userAgent: string | undefined,
  isApply = false,
): WriteOptions & { force: boolean } {
  const o = decodeWriteOptions(q, kind);
  const errs = validateWriteOptions(o, kind, isApply);
  if (errs.length) throw invalidOptions(kind, errs);
  return {
    dryRun: (o.dryRun?.length ?? 0) > 0,
    fieldValidation: (o.fieldValidation || 'Warn') as FieldValidation,
    manager: o.fieldManager || managerFromUserAgent(userAgent),
    force: o.force === true,
  };
}

/** managerFromUserAgent is the default field manager: the User-Agent up to its first '/' (as kube-apiserver derives it). */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const name = (userAgent ?? '').split('/')[0]?.trim() ?? '';
  return (name || 'unknown').slice(0, 128);
}

/**
 * parseDeleteOptions reads DeleteOptions as handlers/delete.go does: from the body whenever there is one (even `{}`
 * or `null`; the query is then not read), decoded as a typed metav1.DeleteOptions (apis/meta/decode.ts: a body of
 * another kind or with a wrongly typed field is 400 with the decoder's text), else from the query, where `uid` and
 * `resourceVersion` are preconditions (meta/v1 conversion.go Convert_url_Values_To_v1_DeleteOptions). Validation
 * happens in the store (ValidateDeleteOptions), for every caller, before anything is read. `raw` is the body's
 * bytes when the route kept them, so numbers are read as Go reads them.
 */
export function parseDeleteOptions(body: unknown, q: QueryValues, raw?: Uint8Array): DeleteOptions {
  if (body !== undefined) {
    try {
      return decodeDeleteOptionsBody(body, raw);
    } catch (e) {
      if (e instanceof GoDecodeError) throw badRequest(e.message);
      throw e;
    }
  }
  const o: DeleteOptions = decodeDeleteOptions(q);
  const uid = first(q, 'uid');
  const resourceVersion = first(q, 'resourceVersion');
  if (uid || resourceVersion) o.preconditions = { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) };
  return o;
}

/** isDryRun tells whether DeleteOptions ask for a dry run (the store validates the values). */
export function isDryRun(o: DeleteOptions): boolean {
  return (o.dryRun?.length ?? 0) > 0;
}
