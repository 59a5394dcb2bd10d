/**
 * @module endpoints/query
 * Parsing and validating query parameters the way kube-apiserver does (ListOptions, CreateOptions, PatchOptions,
 * DeleteOptions): unknown parameters are ignored, bad values are 400 (unparsable) or 422 (invalid combination).
 */
import { badRequest, invalidParams } from '../apis/meta/errors.js';
import { forbidden, invalid, notSupported, type FieldError } from '../apis/meta/field-path.js';
import { parseFieldSelector, type FieldSelector } from '../apis/meta/fields.js';
import { parseLabelSelector, type LabelSelector } from '../apis/meta/labels.js';
import type { DeleteOptions, FieldValidation, WriteOptions } from '../registry/store.js';

/** Query is fastify's parsed querystring: repeated keys become arrays. */
export type Query = Record<string, string | string[] | undefined>;

/** one returns the first value of a parameter. */
export function one(q: Query, name: string): string | undefined {
  const v = q[name];
  return Array.isArray(v) ? v[0] : v;
}

const truthy = (v: string | undefined) => v === 'true' || v === '1';

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
  timeoutSeconds: number | undefined;
  limit: number | undefined;
  continueToken: string | undefined;
}

/** parseListOptions parses and validates list/watch parameters (internalversion/validation.ValidateListOptions). */
export function parseListOptions(q: Query): ListOptions {
  const label = parseLabelSelector(one(q, 'labelSelector') ?? '');
  const field = parseFieldSelector(one(q, 'fieldSelector') ?? '');
  const watch = truthy(one(q, 'watch'));
  const resourceVersion = one(q, 'resourceVersion') || undefined;
  const rvm = one(q, 'resourceVersionMatch') || undefined;
  const sie = one(q, 'sendInitialEvents');
  const sendInitialEvents = sie === undefined || sie === '' ? undefined : truthy(sie);
  const timeoutSeconds = parseIntParam(q, 'timeoutSeconds');
  const limit = parseIntParam(q, 'limit');
  const continueToken = one(q, 'continue') || undefined;
  if (resourceVersion !== undefined && !/^\d+$/.test(resourceVersion)) {
    throw badRequest(`invalid resource version "${resourceVersion}": strconv.ParseUint: parsing "${resourceVersion}": invalid syntax`);
  }
  const errs: FieldError[] = [];
  if (rvm !== undefined && rvm !== 'NotOlderThan' && rvm !== 'Exact') {
    errs.push(notSupported('resourceVersionMatch', rvm, ['Exact', 'NotOlderThan', '']));
  }
  if (rvm !== undefined && resourceVersion === undefined && !(watch && sendInitialEvents)) {
    errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
  }
  if (rvm === 'Exact' && resourceVersion === '0') {
    errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (rvm !== undefined && continueToken !== undefined) {
    errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  if (watch) {
    if (sendInitialEvents !== undefined && rvm !== 'NotOlderThan') {
      errs.push(forbidden('resourceVersionMatch', "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"));
    }
    if (rvm !== undefined && sendInitialEvents === undefined) {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    }
  } else if (sendInitialEvents !== undefined) {
    errs.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  if (timeoutSeconds !== undefined && timeoutSeconds < 0) errs.push(invalid('timeoutSeconds', timeoutSeconds, 'must be greater than or equal to 0'));
  if (limit !== undefined && limit < 0) errs.push(invalid('limit', limit, 'must be greater than or equal to 0'));
  if (errs.length) throw invalidParams('ListOptions', errs);
  return {
    label, field, watch, resourceVersion, resourceVersionMatch: rvm as ResourceVersionMatch,
    allowWatchBookmarks: truthy(one(q, 'allowWatchBookmarks')), sendInitialEvents, timeoutSeconds, limit, continueToken,
  };
}

function parseIntParam(q: Query, name: string): number | undefined {
  const v = one(q, name);
  if (v === undefined || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw badRequest(`invalid value for ${name}: "${v}": must be an integer`);
  return Number(v);
}

/** parseWriteOptions parses dryRun and fieldValidation (and checks fieldManager/force) for create, update and patch. */
export function parseWriteOptions(q: Query, kind: string, userAgent: string | undefined, isApply = false): WriteOptions & { force: boolean } {
  const errs: FieldError[] = [];
  const dry = q['dryRun'];
  const dryValues = dry === undefined ? [] : Array.isArray(dry) ? dry : [dry];
  for (const v of dryValues) if (v !== 'All') errs.push(notSupported('dryRun', v, ['All']));
  const fv = one(q, 'fieldValidation') || 'Warn';
  if (fv !== 'Strict' && fv !== 'Warn' && fv !== 'Ignore') {
    errs.push(notSupported('fieldValidation', fv, ['Ignore', 'Strict', 'Warn']));
  }
  const fieldManager = one(q, 'fieldManager');
  if (fieldManager !== undefined && (fieldManager.length > 128 || /[^\x20-\x7e]/.test(fieldManager))) {
    errs.push(invalid('fieldManager', fieldManager, 'must be no more than 128 printable characters'));
  }
  const forceParam = one(q, 'force');
  if (forceParam !== undefined && !isApply) errs.push(forbidden('force', 'may not be specified for non-apply patch'));
  if (isApply && !fieldManager) errs.push({ type: 'FieldValueRequired', field: 'fieldManager', message: 'fieldManager: Required value: is required for apply patch' });
  if (errs.length) throw invalidParams(kind, errs);
  return {
    dryRun: dryValues.length > 0,
    fieldValidation: fv as FieldValidation,
    manager: fieldManager || managerFromUserAgent(userAgent),
    force: truthy(forceParam),
  };
}

/** managerFromUserAgent is the default field manager: the User-Agent up to its first '/' (as kube-apiserver derives it). */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const name = (userAgent ?? '').split('/')[0]?.trim() ?? '';
  return (name || 'unknown').slice(0, 128);
}

/** parseDeleteOptions reads DeleteOptions from the JSON body when present, else from query parameters. */
export function parseDeleteOptions(body: unknown, q: Query): DeleteOptions {
  if (body && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length > 0) {
    const b = body as Record<string, unknown>;
    if (b['kind'] !== undefined && b['kind'] !== 'DeleteOptions') {
      throw badRequest(`DeleteOptions: the kind in the data (${String(b['kind'])}) does not match the expected kind (DeleteOptions)`);
    }
    return b as DeleteOptions;
  }
  const o: DeleteOptions = {};
  const pp = one(q, 'propagationPolicy');
  if (pp) o.propagationPolicy = pp as DeleteOptions['propagationPolicy'] & string;
  const od = one(q, 'orphanDependents');
  if (od !== undefined) o.orphanDependents = truthy(od);
  // Not a number at all is a decoding error (400), like limit and timeoutSeconds; a negative one is 422 later.
  const gp = parseIntParam(q, 'gracePeriodSeconds');
  if (gp !== undefined) o.gracePeriodSeconds = gp;
  const dry = q['dryRun'];
  if (dry !== undefined) o.dryRun = Array.isArray(dry) ? dry : [dry];
  return o;
}

/** isDryRun validates a DeleteOptions dryRun list (only "All"). */
export function isDryRun(o: DeleteOptions, kind: string): boolean {
  const values = o.dryRun ?? [];
  const bad = values.filter((v) => v !== 'All');
  if (bad.length) throw invalidParams(kind, bad.map((v) => notSupported('dryRun', v, ['All'])));
  return values.length > 0;
}
