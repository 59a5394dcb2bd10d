/**
 * @module apis/meta/parameter-codec
 * Query parameters decoded exactly as kube-apiserver decodes them: Go's `url.ParseQuery`, then
 * metainternalversionscheme.ParameterCodec with the generated conversions of
 * k8s.io/apimachinery/pkg/apis/meta/v1/zz_generated.conversion.go (Convert_url_Values_To_v1_*Options) and the
 * string conversions of k8s.io/apimachinery/pkg/runtime/conversion.go. Authorization (auth/request-info.ts) and the
 * handlers (endpoints/query.ts) both decode through this module, so the verb a request is authorized for and the
 * thing it is served as can never disagree.
 *
 * - The first value of a repeated parameter wins; `dryRun` keeps every value. Unknown parameters are ignored.
 * - Booleans are false only for `0` and a case-insensitive `false`; an empty value (`?watch=`, `?watch`) and `True`
 *   are true (Convert_Slice_string_To_bool). Pointer booleans and pointer integers are unset only when absent.
 * - Integers are strconv.ParseInt(s, 10, 64): `limit=` is an error, and so is `+1` sent unescaped (`+` is a space).
 *   A decoding error is a 400 BadRequest carrying Go's error text (`strconv.ParseInt: parsing "x": invalid syntax`).
 */
import { badRequest } from './errors.js';
import { parseFieldSelector, type FieldSelector } from './fields.js';
import { parseLabelSelector, type LabelSelector } from './labels.js';

/** QueryValues is Go's url.Values: every value of every parameter, in request order. */
export type QueryValues = ReadonlyMap<string, readonly string[]>;

// net/url defaultMaxParams (Go 1.26, GODEBUG urlmaxqueryparams): a longer query decodes to no parameters at all.
const MAX_QUERY_PARAMS = 10_000;

const utf8 = new TextDecoder('utf-8');
const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

// queryUnescape is url.QueryUnescape: `+` is a space, `%XX` a byte; a malformed escape makes the pair invalid.
function queryUnescape(s: string): string | undefined {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '%') {
      if (!isHex(s[i + 1]) || !isHex(s[i + 2])) return undefined;
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (c === '+') bytes.push(0x20);
    else {
      const code = c.charCodeAt(0);
      if (code < 0x80) bytes.push(code);
      else bytes.push(...Buffer.from(c, 'utf8'));
    }
  }
  return utf8.decode(Uint8Array.from(bytes));
}

/**
 * parseQuery is url.ParseQuery as `req.URL.Query()` uses it: pairs split on `&`, a pair holding `;` or a malformed
 * escape is dropped (Go reports an error that URL.Query ignores), `a` alone is `a=""`.
 */
export function parseQuery(raw: string): QueryValues {
  const m = new Map<string, string[]>();
  if (raw.split('&').length > MAX_QUERY_PARAMS) return m;
  for (const pair of raw.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    const key = queryUnescape(eq < 0 ? pair : pair.slice(0, eq));
    const value = queryUnescape(eq < 0 ? '' : pair.slice(eq + 1));
    if (key === undefined || value === undefined) continue;
    const values = m.get(key);
    if (values) values.push(value);
    else m.set(key, [value]);
  }
  return m;
}

/** queryOf decodes the query of a request target (`/path?query`); everything after the first `?` is the query. */
export function queryOf(url: string): QueryValues {
  const q = url.indexOf('?');
  return parseQuery(q < 0 ? '' : url.slice(q + 1));
}

/** first is Convert_Slice_string_To_string: the first value, or undefined when the parameter is absent. */
export function first(q: QueryValues, name: string): string | undefined {
  return q.get(name)?.[0];
}

/** isPrint is unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
export const isPrint = (ch: string) => ch === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch);
const SHORT_ESCAPES: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };

/** goQuote is Go's strconv.Quote (`%q`): printable runes as they are, others escaped as Go escapes them. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (isPrint(ch)) out += ch;
    else if (SHORT_ESCAPES[ch]) out += SHORT_ESCAPES[ch];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

const MAX_UINT64 = (1n << 64n) - 1n;

// numError is strconv.NumError's text.
const numError = (fn: string, s: string, err: 'invalid syntax' | 'value out of range') => `strconv.${fn}: parsing ${goQuote(s)}: ${err}`;

// parseDecimal is the loop of strconv.ParseUint(s, 10, 64): 'syntax' or 'range' on failure, stopping at the first.
function parseDecimal(s: string): bigint | 'syntax' | 'range' {
  if (s === '') return 'syntax';
  const cutoff = MAX_UINT64 / 10n + 1n;
  let n = 0n;
  for (const c of s) {
    if (c < '0' || c > '9') return 'syntax';
    if (n >= cutoff) return 'range';
    n = n * 10n + BigInt(c.charCodeAt(0) - 48);
    if (n > MAX_UINT64) return 'range';
  }
  return n;
}

/** parseInt64 is strconv.ParseInt(s, 10, 64); it throws Go's NumError text as a plain Error. */
export function parseInt64(s: string): bigint {
  if (s === '') throw new Error(numError('ParseInt', s, 'invalid syntax'));
  const neg = s[0] === '-';
  const digits = s[0] === '+' || s[0] === '-' ? s.slice(1) : s;
  const un = parseDecimal(digits);
  if (un === 'syntax') throw new Error(numError('ParseInt', s, 'invalid syntax'));
  const cutoff = 1n << 63n;
  if (un === 'range' || (!neg && un >= cutoff) || (neg && un > cutoff)) throw new Error(numError('ParseInt', s, 'value out of range'));
  return neg ? -un : un;
}

/** parseUint64 is strconv.ParseUint(s, 10, 64) (resource versions); it throws Go's NumError text. */
export function parseUint64(s: string): bigint {
  const n = parseDecimal(s);
  if (n === 'syntax') throw new Error(numError('ParseUint', s, 'invalid syntax'));
  if (n === 'range') throw new Error(numError('ParseUint', s, 'value out of range'));
  return n;
}

// equalFoldFalse is strings.EqualFold(v, "false"): Unicode simple folding, where ſ (U+017F) folds to s.
function equalFoldFalse(v: string): boolean {
  const runes = [...v];
  return runes.length === 5 && ['fF', 'aA', 'lL', 'sSſ', 'eE'].every((set, i) => set.includes(runes[i] as string));
}

/** goBool is the value rule of Convert_Slice_string_To_bool: false only for "0" and a case-insensitive "false". */
export const goBool = (v: string) => !(v === '0' || equalFoldFalse(v));

/** toBool is Convert_Slice_string_To_bool on a parameter: absent is false, else the first value decides. */
export function toBool(q: QueryValues, name: string): boolean {
  const v = first(q, name);
  return v !== undefined && goBool(v);
}

/** toOptionalBool is Convert_Slice_string_To_Pointer_bool: undefined only when the parameter is absent. */
export function toOptionalBool(q: QueryValues, name: string): boolean | undefined {
  const v = first(q, name);
  return v === undefined ? undefined : goBool(v);
}

// Integers as JavaScript numbers: every use (limits, seconds) stays far below 2^53 or only compares.
function int64(q: QueryValues, name: string): number | undefined {
  const v = first(q, name);
  if (v === undefined) return undefined;
  try {
    return Number(parseInt64(v));
  } catch (e) {
    // handlers: errors.NewBadRequest(err.Error()) around ParameterCodec.DecodeParameters.
    throw badRequest((e as Error).message);
  }
}

/** ListOptionsV1 is metav1.ListOptions as decoded from the query (Convert_url_Values_To_v1_ListOptions). */
export interface ListOptionsV1 {
  labelSelector: string;
  fieldSelector: string;
  watch: boolean;
  allowWatchBookmarks: boolean;
  resourceVersion: string;
  resourceVersionMatch: string;
  timeoutSeconds: number | undefined;
  limit: number;
  continue: string;
  sendInitialEvents: boolean | undefined;
}

/** InternalListOptions adds the parsed selectors (Convert_v1_ListOptions_To_internalversion_ListOptions). */
export interface InternalListOptions extends ListOptionsV1 {
  label: LabelSelector;
  field: FieldSelector;
}

/**
 * decodeListOptions is ParameterCodec.DecodeParameters into metainternalversion.ListOptions: the fields in the order
 * the generated conversion visits them (so timeoutSeconds fails before limit), then the label and the field selector
 * parsed. Throws 400 BadRequest. Field names are not checked here (that is the handler's field-label conversion).
 */
export function decodeListOptions(q: QueryValues): InternalListOptions {
  const timeoutSeconds = int64(q, 'timeoutSeconds');
  const limit = int64(q, 'limit') ?? 0;
  const v1: ListOptionsV1 = {
    labelSelector: first(q, 'labelSelector') ?? '',
    fieldSelector: first(q, 'fieldSelector') ?? '',
    watch: toBool(q, 'watch'),
    allowWatchBookmarks: toBool(q, 'allowWatchBookmarks'),
    resourceVersion: first(q, 'resourceVersion') ?? '',
    resourceVersionMatch: first(q, 'resourceVersionMatch') ?? '',
    timeoutSeconds,
    limit,
    continue: first(q, 'continue') ?? '',
    sendInitialEvents: toOptionalBool(q, 'sendInitialEvents'),
  };
  return { ...v1, label: parseLabelSelector(v1.labelSelector), field: parseFieldSelector(v1.fieldSelector, 'any') };
}

/**
 * requestInfoListOptions is what RequestInfoFactory reads for a GET without a name (requestinfo.go): the decoded
 * ListOptions, or, when they do not decode, no selector and `watch` unless its first value lowercases to "false" or
 * "0" (strings.ToLower, ASCII here: no other rune lowercases into those letters).
 */
export function requestInfoListOptions(q: QueryValues): { watch: boolean; field: FieldSelector | undefined } {
  try {
    const o = decodeListOptions(q);
    return { watch: o.watch, field: o.field };
  } catch {
    const w = first(q, 'watch');
    const lower = w?.replace(/[A-Z]/g, (c) => c.toLowerCase());
    return { watch: w !== undefined && lower !== 'false' && lower !== '0', field: undefined };
  }
}

/** GetOptionsV1 is metav1.GetOptions. */
export interface GetOptionsV1 {
  resourceVersion: string;
}

/**
 * decodeGetOptions is GetResource's query handling (handlers/get.go): a true `export` is refused with 400 as it has
 * been since 1.14 (`export=`, being true, too), then GetOptions.
 */
export function decodeGetOptions(q: QueryValues): GetOptionsV1 {
  if (q.has('export') && toBool(q, 'export')) throw badRequest('the export parameter, deprecated since v1.14, is no longer supported');
  return { resourceVersion: first(q, 'resourceVersion') ?? '' };
}

/** WriteOptionsV1 is metav1.CreateOptions / UpdateOptions / PatchOptions (force only on PatchOptions). */
export interface WriteOptionsV1 {
  dryRun: readonly string[] | undefined;
  fieldManager: string;
  fieldValidation: string;
  force: boolean | undefined;
}

/** decodeWriteOptions decodes CreateOptions, UpdateOptions and PatchOptions (none of their fields can fail). */
export function decodeWriteOptions(q: QueryValues, kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions'): WriteOptionsV1 {
  return {
    dryRun: q.get('dryRun'),
    fieldManager: first(q, 'fieldManager') ?? '',
    fieldValidation: first(q, 'fieldValidation') ?? '',
    force: kind === 'PatchOptions' ? toOptionalBool(q, 'force') : undefined,
  };
}

/** DeleteOptionsV1 is metav1.DeleteOptions as the query carries it (preconditions only come in a body). */
export interface DeleteOptionsV1 {
  gracePeriodSeconds?: number;
  orphanDependents?: boolean;
  /** A present `propagationPolicy=` is the empty policy, which validation refuses (Convert_Slice_string_To_Pointer_v1_DeletionPropagation). */
  propagationPolicy?: string;
  dryRun?: string[];
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

/** decodeDeleteOptions is Convert_url_Values_To_v1_DeleteOptions; only gracePeriodSeconds can fail (400). */
export function decodeDeleteOptions(q: QueryValues): DeleteOptionsV1 {
  const o: DeleteOptionsV1 = {};
  const grace = int64(q, 'gracePeriodSeconds');
  if (grace !== undefined) o.gracePeriodSeconds = grace;
  const orphan = toOptionalBool(q, 'orphanDependents');
  if (orphan !== undefined) o.orphanDependents = orphan;
  const policy = first(q, 'propagationPolicy');
  if (policy !== undefined) o.propagationPolicy = policy;
  const dryRun = q.get('dryRun');
  if (dryRun) o.dryRun = [...dryRun];
  const unsafe = toOptionalBool(q, 'ignoreStoreReadErrorWithClusterBreakingPotential');
  if (unsafe !== undefined) o.ignoreStoreReadErrorWithClusterBreakingPotential = unsafe;
  return o;
}

/** TableOptionsV1 is metav1.TableOptions: `includeObject`, and noHeaders, which the generated conversion reads from a parameter named `-`. */
export interface TableOptionsV1 {
  noHeaders: boolean;
  includeObject: string;
}

/** decodeTableOptions is Convert_url_Values_To_v1_TableOptions. */
export function decodeTableOptions(q: QueryValues): TableOptionsV1 {
  return { noHeaders: toBool(q, '-'), includeObject: first(q, 'includeObject') ?? '' };
}
