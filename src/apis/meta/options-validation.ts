/**
 * @module apis/meta/options-validation
 * Validation of decoded query options, worded as kube-apiserver words it:
 * k8s.io/apimachinery/pkg/apis/meta/internalversion/validation (ValidateListOptions) and
 * k8s.io/apimachinery/pkg/apis/meta/v1/validation (ValidateCreateOptions, ValidateUpdateOptions, ValidatePatchOptions,
 * ValidateDeleteOptions, ValidateTableOptions). The handlers wrap the errors in
 * `errors.NewInvalid(GroupKind{meta.k8s.io, <Kind>}, "", errs)`: 422 `<Kind>.meta.k8s.io "" is invalid: ...`.
 */
import { StatusError } from './errors.js';
import type { FieldError } from './field-path.js';
import { goQuote, isPrint, type DeleteOptionsV1, type InternalListOptions, type TableOptionsV1, type WriteOptionsV1 } from './parameter-codec.js';
import type { StatusCause } from './types.js';

/** goJson is json.Marshal as field.Error prints a non-string value (named string types, slices): HTML-safe. */
export function goJson(v: unknown): string {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

// The value part of an Invalid/NotSupported message: a plain Go string prints %q, any other value as JSON.
type Shown = { quoted: string } | { json: unknown } | { raw: string };
const show = (v: Shown) => ('quoted' in v ? goQuote(v.quoted) : 'json' in v ? goJson(v.json) : v.raw);

const fieldError = (type: FieldError['type'], field: string, body: string): FieldError => ({ type, field, message: `${field}: ${body}` });
const forbidden = (field: string, detail: string) => fieldError('FieldValueForbidden', field, `Forbidden: ${detail}`);
const required = (field: string, detail: string) => fieldError('FieldValueRequired', field, `Required value: ${detail}`);
const invalid = (field: string, value: Shown, detail: string) => fieldError('FieldValueInvalid', field, `Invalid value: ${show(value)}: ${detail}`);
const notSupported = (field: string, value: Shown, allowed: string[]) =>
  fieldError('FieldValueNotSupported', field, `Unsupported value: ${show(value)}: supported values: ${allowed.map(goQuote).join(', ')}`);

/**
 * invalidOptions is errors.NewInvalid for an options kind: no name in details, causes without the field prefix,
 * identical messages printed once (ErrorList.ToAggregate), several in brackets.
 */
export function invalidOptions(kind: string, errs: FieldError[]): StatusError {
  const messages = [...new Set(errs.map((e) => e.message))];
  const summary = messages.length === 1 ? messages[0] : `[${messages.join(', ')}]`;
  const causes: StatusCause[] = errs.map((e) => ({ reason: e.type, message: e.message.slice(e.field.length + 2), field: e.field }));
  return new StatusError({
    code: 422,
    reason: 'Invalid',
    message: `${kind}.meta.k8s.io "" is invalid: ${summary}`,
    details: { group: 'meta.k8s.io', kind, causes },
  });
}

/** validateListOptions is ValidateListOptions with the WatchList feature on (its 1.37 default). */
export function validateListOptions(o: InternalListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (o.watch) {
    if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
      errs.push(forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    }
    if (match !== '') {
      if (o.sendInitialEvents === undefined)
        errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      if (match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', { json: match }, ['NotOlderThan']));
      if (o.continue !== '') errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
    return errs;
  }
  if (match !== '') {
    if (o.resourceVersion === '') errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (o.continue !== '') errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') errs.push(notSupported('resourceVersionMatch', { json: match }, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && o.resourceVersion === '0') {
      errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
  }
  if (o.sendInitialEvents !== undefined) errs.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

const FIELD_MANAGER_MAX_LENGTH = 128;

// ValidateFieldManager: at most 128 bytes, every rune printable (position = byte offset, as Go's range reports it).
function validateFieldManager(fm: string): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(fm) > FIELD_MANAGER_MAX_LENGTH) {
    errs.push(fieldError('FieldValueTooLong', 'fieldManager', `Too long: may not be more than ${FIELD_MANAGER_MAX_LENGTH} bytes`));
  }
  let at = 0;
  for (const ch of fm) {
    if (!isPrint(ch)) {
      const code = (ch.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
      errs.push(invalid('fieldManager', { quoted: fm }, `invalid character U+${code} (at position ${at})`));
    }
    at += Buffer.byteLength(ch);
  }
  return errs;
}

// ValidateDryRun: every value must be "All"; the whole list is the bad value.
function validateDryRun(dryRun: readonly string[] | undefined): FieldError[] {
  return dryRun?.some((v) => v !== 'All') ? [notSupported('dryRun', { json: dryRun }, ['All'])] : [];
}

// ValidateFieldValidation: "" (the default, Warn) or one of the three directives; the list printed sorted.
function validateFieldValidation(fv: string): FieldError[] {
  return ['', 'Ignore', 'Strict', 'Warn'].includes(fv) ? [] : [notSupported('fieldValidation', { quoted: fv }, ['', 'Ignore', 'Strict', 'Warn'])];
}

/** validateWriteOptions is ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions (isApply: the patch type is apply). */
export function validateWriteOptions(o: WriteOptionsV1, kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', isApply = false): FieldError[] {
  const errs: FieldError[] = [];
  if (kind === 'PatchOptions') {
    if (isApply && o.fieldManager === '') errs.push(required('fieldManager', 'is required for apply patch'));
    if (!isApply && o.force !== undefined) errs.push(forbidden('force', 'may not be specified for non-apply patch'));
  }
  errs.push(...validateFieldManager(o.fieldManager), ...validateDryRun(o.dryRun), ...validateFieldValidation(o.fieldValidation));
  return errs;
}

/** DeleteOptionsInput is DeleteOptions from the query or from a body (which may also carry preconditions). */
export interface DeleteOptionsInput extends DeleteOptionsV1 {
  preconditions?: unknown;
}

/**
 * validateDeleteOptions is ValidateDeleteOptions, including ValidateIgnoreStoreReadError (AllowUnsafeMalformedObjectDeletion
 * is on by default in 1.37, so the option is decoded and checked).
 */
export function validateDeleteOptions(o: DeleteOptionsInput): FieldError[] {
  const errs: FieldError[] = [];
  const policy = o.propagationPolicy;
  if (o.orphanDependents !== undefined && policy !== undefined) {
    errs.push(invalid('propagationPolicy', { json: policy }, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (policy !== undefined && policy !== 'Foreground' && policy !== 'Background' && policy !== 'Orphan') {
    errs.push(notSupported('propagationPolicy', { json: policy }, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  errs.push(...validateDryRun(o.dryRun));
  if (o.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    const field = 'ignoreStoreReadErrorWithClusterBreakingPotential';
    if (policy !== undefined) errs.push(invalid(field, { raw: 'true' }, 'cannot be set together with .propagationPolicy'));
    if (o.orphanDependents !== undefined) errs.push(invalid(field, { raw: 'true' }, 'cannot be set together with .orphanDependents'));
    if (o.gracePeriodSeconds !== undefined) errs.push(invalid(field, { raw: 'true' }, 'cannot be set together with .gracePeriodSeconds'));
    if (o.preconditions !== undefined && o.preconditions !== null) errs.push(invalid(field, { raw: 'true' }, 'cannot be set together with .preconditions'));
  }
  return errs;
}

/** unsafeDeleteCollection is DeleteCollection's refusal of ignoreStoreReadErrorWithClusterBreakingPotential (handlers/delete.go). */
export function unsafeDeleteCollection(): FieldError {
  return invalid(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    { raw: 'true' },
    'is not allowed with DELETECOLLECTION, try again after removing the option',
  );
}

/**
 * validateTableOptions is ValidateTableOptions; optionsForTransform (handlers/response.go) reports it as 400
 * `Unable to convert to Table as requested: <error>`.
 */
export function validateTableOptions(o: TableOptionsV1): FieldError[] {
  return ['', 'Metadata', 'None', 'Object'].includes(o.includeObject)
    ? []
    : [invalid('includeObject', { json: o.includeObject }, "must be 'Metadata', 'Object', 'None', or empty")];
}
