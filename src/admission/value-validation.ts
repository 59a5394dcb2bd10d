/**
 * @module admission/value-validation
 * kube-openapi's SchemaValidator as apiextensions-apiserver runs it on a custom resource (validation.go
 * ValidateCustomResource), ported rather than delegated to ajv: kube's messages name the field twice
 * (`spec.x: Invalid value: 5: spec.x in body should be less than or equal to 3`), it checks keywords in its own
 * order (type, allOf/anyOf/oneOf/not, string, format, number, array, enum, object; at one node they can all report),
 * and it picks which failed anyOf/oneOf branch to report by counting matched checks (Result.MatchCount). Errors are
 * turned into field errors as kubeOpenAPIResultToFieldErrors does: errors without a field path print `<nil>`.
 *
 * One difference is deliberate: kube walks an object's properties in Go map order, which is random from one request
 * to the next; here they are walked in the object's order, one of the orders kube may answer with.
 */
import type { FieldError } from '../apis/meta/field-path.js';
import { goMarshal, goQuote } from '../apis/meta/go-json.js';
import { formatValid } from './formats.js';
import { fieldErr, goFloat, isInt64 } from './go-values.js';
import type { Node } from './structural.js';

// One kube-openapi error: a Validation (with the field it names) or a plain error (no field).
interface OpenAPIError {
  code: 'type' | 'required' | 'tooLong' | 'enum' | 'maxItems' | 'tooManyProps' | 'other' | 'plain';
  name: string;
  message: string;
  value?: unknown;
  /** maxLength, maxItems or maxProperties; the enum's values. */
  limit?: number;
  values?: readonly unknown[];
}

const MAX_JSON_FLOAT = 2 ** 53;

// jsonInteger is swag.IsFloat64AJSONInteger: a float64 that is (close enough to) a whole number JSON can carry.
function jsonInteger(f: number): boolean {
  if (!Number.isFinite(f) || f < -MAX_JSON_FLOAT || f > MAX_JSON_FLOAT) return false;
  if (Number.isInteger(f)) return true;
  if (f < 0) return false;
  const g = Math.trunc(f);
  if (g === 0) return false;
  return Math.abs(f - g) / (f + g) < 1e-9;
}

type Kind = 'null' | 'string' | 'bool' | 'int' | 'float' | 'slice' | 'map';

function kindOf(v: unknown): Kind {
  if (v === null || v === undefined) return 'null';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'number':
      return isInt64(v) ? 'int' : 'float';
    default:
      return Array.isArray(v) ? 'slice' : 'map';
  }
}

// The JSON schema type name and format kube infers from a decoded value (typeValidator.schemaInfoForType).
const SCHEMA_INFO: Record<Exclude<Kind, 'null'>, [string, string]> = {
  string: ['string', ''],
  bool: ['boolean', ''],
  int: ['integer', 'int64'],
  float: ['number', 'float64'],
  slice: ['array', ''],
  map: ['object', ''],
};

const typeMessage = (name: string, want: string, found: string) => `${name} in body must be of type ${want}: ${goQuote(found)}`;

// checkType is typeValidator.Validate: the declared type (and a numeric format), null refused unless nullable.
function checkType(s: Node, data: unknown, kind: Kind, path: string, out: OpenAPIError[]): number {
  if (kind === 'null') {
    if (s.types.length > 0 && !s.nullable) {
      out.push({ code: 'type', name: path, message: typeMessage(path, s.types.join(','), 'null'), value: 'null' });
      return 0;
    }
    return 1;
  }
  const [schType, format] = SCHEMA_INFO[kind];
  const has = (t: string) => s.types.includes(t);
  const isFloatInt = schType === 'number' && jsonInteger(data as number) && has('integer');
  const isIntFloat = schType === 'integer' && has('number');
  if (kind !== 'string' && kind !== 'slice' && s.format !== '' && !(has(schType) || format === s.format || isFloatInt || isIntFloat)) {
    out.push({ code: 'type', name: path, message: typeMessage(path, s.format, format), value: format });
    return 0;
  }
  if (!(has('number') || has('integer')) && s.format !== '' && (kind === 'string' || kind === 'slice')) return 1;
  if (!(has(schType) || isFloatInt || isIntFloat)) {
    out.push({ code: 'type', name: path, message: typeMessage(path, s.types.join(','), schType), value: schType });
    return 0;
  }
  return 1;
}

// checkEnum is basicCommonValidator: the value must equal one of the enum's values after Go's conversion to the
// enum value's type (so an int64 is compared to a float64 enum value as a float64, a float64 to an int64 truncated).
function checkEnum(s: Node, data: unknown, kind: Kind, path: string, out: OpenAPIError[]): void {
  if (!s.enum || s.enum.length === 0) return;
  if (kind !== 'null') {
    let text: string | undefined;
    for (const e of s.enum) {
      if (e === data) return;
      if (e === null || e === undefined) continue;
      if (typeof e === 'number' && (kind === 'int' || kind === 'float')) {
        if (isInt64(e) && kind === 'float' ? Math.trunc(data as number) === e : data === e) return;
      } else if (typeof e === 'string' && kind === 'int') {
        // Go converts an integer to a string as a rune.
        const n = data as number;
        if (String.fromCodePoint(n >= 0 && n <= 0x10ffff && !(n >= 0xd800 && n < 0xe000) ? n : 0xfffd) === e) return;
      } else if (typeof e === 'object' && typeof data === 'object' && Array.isArray(e) === Array.isArray(data) && goMarshal(e) === (text ??= goMarshal(data)))
        return;
    }
  }
  out.push({ code: 'enum', name: path, message: '', value: data, values: s.enum });
}

// runes counts code points (utf8.RuneCountInString) without building an array.
function runes(v: string): number {
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < v.length) {
      const d = v.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) i++;
    }
    n++;
  }
  return n;
}

function checkString(s: Node, data: string, path: string, out: OpenAPIError[]): void {
  // A string has no more code points than code units: only a long one needs counting.
  if (s.maxLength !== undefined && data.length > s.maxLength && runes(data) > s.maxLength) {
    out.push({ code: 'tooLong', name: path, message: `${path} in body should be at most ${s.maxLength} chars long`, value: data, limit: s.maxLength });
    return;
  }
  if (s.minLength !== undefined && (data.length < s.minLength || runes(data) < s.minLength)) {
    out.push({ code: 'other', name: path, message: `${path} in body should be at least ${s.minLength} chars long`, value: data });
    return;
  }
  if (s.pattern) {
    const { re, source, error } = s.pattern;
    if (!re) out.push({ code: 'other', name: path, message: `${path} in body should match '${source}, but pattern is invalid: ${error ?? ''}'`, value: data });
    else if (!re.test(data)) out.push({ code: 'other', name: path, message: `${path} in body should match '${source}'`, value: data });
  }
}

// rangeError is IsValueValidAgainstRange: a number (the value or a bound) must fit the declared integer or float
// format, or it is a plain error (no field).
function rangeError(v: number, s: Node, prefix: string, path: string): OpenAPIError | undefined {
  const t = s.types.length === 1 ? s.types[0] : '';
  let ok = true;
  if (t === 'integer') {
    // swag.ConvertInt64/ConvertInt32 of the number's decimal text: whole and within the format's range.
    ok = s.format === 'int32' ? Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31 : isInt64(v);
  } else if (s.format === 'float') {
    ok = Math.abs(v) <= 3.4028234663852886e38;
  }
  if (ok) return undefined;
  const what = s.format ? `${t} with format ${s.format}` : `${t} (default format)`;
  return { code: 'plain', name: '', message: `${prefix} value must be of type ${what} in ${path}` };
}

// checkNumber is numberValidator: the value's range, then multipleOf, minimum, maximum (kube's merge order).
function checkNumber(s: Node, data: number, path: string, out: OpenAPIError[]): void {
  const range = rangeError(data, s, 'Checked', path);
  if (range) out.push(range);
  const int = isInt64(data);
  if (s.multipleOf !== undefined) {
    const bad = rangeError(s.multipleOf, s, 'MultipleOf', path);
    if (bad) out.push(bad);
    if (!bad && int) {
      const factor = Math.trunc(s.multipleOf);
      if (factor <= 0) out.push({ code: 'other', name: path, message: `factor MultipleOf declared for ${path} must be positive: ${factor}`, value: factor });
      else if (Number.isSafeInteger(data) ? data % factor !== 0 : BigInt(data) % BigInt(factor) !== 0n)
        out.push({ code: 'other', name: path, message: `${path} in body should be a multiple of ${factor}`, value: data });
    } else {
      const factor = s.multipleOf;
      if (factor <= 0)
        out.push({ code: 'other', name: path, message: `factor MultipleOf declared for ${path} must be positive: ${goFloat(factor)}`, value: factor });
      else if (!jsonInteger(factor < 1 ? (1 / factor) * data : data / factor)) {
        out.push({ code: 'other', name: path, message: `${path} in body should be a multiple of ${goFloat(factor)}`, value: data });
      }
    }
  }
  if (s.minimum !== undefined) {
    const bad = rangeError(s.minimum, s, 'Minimum boundary', path);
    if (bad) out.push(bad);
    const min = !bad && int ? Math.trunc(s.minimum) : s.minimum;
    if (s.exclusiveMinimum ? data <= min : data < min) {
      const text = !bad && int ? String(min) : goFloat(min);
      out.push({
        code: 'other',
        name: path,
        message: `${path} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${text}`,
        value: data,
      });
    }
  }
  if (s.maximum !== undefined) {
    const bad = rangeError(s.maximum, s, 'Maximum boundary', path);
    if (bad) out.push(bad);
    const max = !bad && int ? Math.trunc(s.maximum) : s.maximum;
    if (s.exclusiveMaximum ? data >= max : data > max) {
      const text = !bad && int ? String(max) : goFloat(max);
      out.push({ code: 'other', name: path, message: `${path} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${text}`, value: data });
    }
  }
}

// checkSlice is schemaSliceValidator: every item first, then minItems, maxItems and uniqueItems. Returns the items'
// match count.
function checkSlice(s: Node, data: unknown[], path: string, out: OpenAPIError[], old: unknown): number {
  let matched = 1;
  if (s.items) {
    for (let i = 0; i < data.length; i++) matched += validateNode(s.items, data[i], `${path}[${i}]`, out, correlatedItem(s, data[i], old));
  }
  if (s.minItems !== undefined && data.length < s.minItems) {
    out.push({ code: 'other', name: path, message: `${path} in body should have at least ${s.minItems} items`, value: data.length });
  }
  if (s.maxItems !== undefined && data.length > s.maxItems) {
    out.push({ code: 'maxItems', name: path, message: `${path} in body should have at most ${s.maxItems} items`, value: data.length, limit: s.maxItems });
  }
  if (s.uniqueItems && new Set(data.map((x) => goMarshal(x))).size !== data.length) {
    out.push({ code: 'other', name: path, message: `${path} in body shouldn't contain duplicates` });
  }
  return matched;
}

// checkObject is objectValidator: property counts, members additionalProperties refuses or
// describes, the declared properties, then the required ones. Returns the members' match count.
function checkObject(s: Node, data: Record<string, unknown>, path: string, out: OpenAPIError[], old: unknown): number {
  let n = 0;
  if (s.minProperties !== undefined || s.maxProperties !== undefined) for (const k in data) if (Object.hasOwn(data, k)) n++;
  if (s.minProperties !== undefined && n < s.minProperties) {
    out.push({ code: 'other', name: path, message: `${path} in body should have at least ${s.minProperties} properties`, value: n });
  }
  if (s.maxProperties !== undefined && n > s.maxProperties) {
    out.push({
      code: 'tooManyProps',
      name: path,
      message: `${path} in body should have at most ${s.maxProperties} properties`,
      value: n,
      limit: s.maxProperties,
    });
  }
  let matched = 0;
  const props = s.properties;
  if (s.additional === false) {
    for (const k in data) {
      if (Object.hasOwn(data, k) && !props?.has(k)) out.push({ code: 'other', name: path, message: `${path}.${k} in body is a forbidden property`, value: k });
    }
  } else if (s.additional) {
    for (const k in data) {
      if (Object.hasOwn(data, k) && !props?.has(k)) matched += validateNode(s.additional, data[k], `${path}.${k}`, out, member(old, k));
    }
  }
  if (props) {
    // The members present, in the object's order (kube's order is Go map order): an object sets few of the many
    // properties a large schema declares.
    for (const k in data) {
      const p = Object.hasOwn(data, k) ? props.get(k) : undefined;
      if (p) matched += validateNode(p, data[k], path ? `${path}.${k}` : k, out, member(old, k));
    }
  }
  for (const k of s.required) if (!Object.hasOwn(data, k)) out.push({ code: 'required', name: `${path}.${k}`, message: '' });
  return matched;
}

// checkComposition is schemaPropsValidator: anyOf, oneOf, allOf and not. A failed anyOf/oneOf reports its own
// error and the errors of the branch that matched the most checks (the first of equals).
function checkComposition(s: Node, data: unknown, path: string, out: OpenAPIError[]): number {
  let matched = 1;
  if (s.anyOf.length > 0) {
    let best: { errs: OpenAPIError[]; count: number } | undefined;
    let success: number | undefined;
    for (const branch of s.anyOf) {
      const errs: OpenAPIError[] = [];
      const count = validateNode(branch, data, path, errs);
      if (errs.length === 0) {
        success = count;
        best = undefined;
        break;
      }
      if (!best || count > best.count) best = { errs, count };
    }
    if (success === undefined) out.push({ code: 'plain', name: '', message: `${goQuote(path)} must validate at least one schema (anyOf)` });
    if (best) {
      out.push(...best.errs);
      matched += best.count;
    } else if (success !== undefined) matched += success;
  }
  if (s.oneOf.length > 0) {
    let best: { errs: OpenAPIError[]; count: number } | undefined;
    let first: number | undefined;
    let valid = 0;
    for (const branch of s.oneOf) {
      const errs: OpenAPIError[] = [];
      const count = validateNode(branch, data, path, errs);
      if (errs.length === 0) {
        valid++;
        best = undefined;
        first ??= count;
        continue;
      }
      if (valid === 0 && (!best || count > best.count)) best = { errs, count };
    }
    if (valid !== 1) {
      const more = valid === 0 ? 'Found none valid' : `Found ${valid} valid alternatives`;
      out.push({ code: 'plain', name: '', message: `${goQuote(path)} must validate one and only one schema (oneOf). ${more}` });
      if (best) {
        out.push(...best.errs);
        matched += best.count;
      }
    } else if (first !== undefined) matched += first;
  }
  if (s.allOf.length > 0) {
    let valid = 0;
    for (const branch of s.allOf) {
      const errs: OpenAPIError[] = [];
      matched += validateNode(branch, data, path, errs);
      if (errs.length === 0) valid++;
      out.push(...errs);
    }
    if (valid !== s.allOf.length) {
      out.push({ code: 'plain', name: '', message: `${goQuote(path)} must validate all the schemas (allOf)${valid === 0 ? '. None validated' : ''}` });
    }
  }
  if (s.not) {
    const errs: OpenAPIError[] = [];
    validateNode(s.not, data, path, errs);
    if (errs.length === 0) out.push({ code: 'plain', name: '', message: `${goQuote(path)} must not validate the schema (not)` });
  }
  return matched;
}

const hasComposition = (s: Node) => s.anyOf.length > 0 || s.oneOf.length > 0 || s.allOf.length > 0 || s.not !== undefined;

/** NONE marks a value with no old value to ratchet against (a create, or nothing correlates). */
const NONE: unique symbol = Symbol('none');

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// member is the old value of an object's member (CorrelatedObject.Key).
const member = (old: unknown, k: string): unknown => (isObject(old) && Object.hasOwn(old, k) ? old[k] : NONE);

// correlatedItem is the old item a list item ratchets against (CorrelatedObject.Index): only list-type map items
// correlate, by their keys; set and atomic items do not.
function correlatedItem(s: Node, item: unknown, old: unknown): unknown {
  if (old === NONE || s.listType !== 'map' || !Array.isArray(old) || !isObject(item)) return NONE;
  const keys = s.listMapKeys;
  for (const o of old) {
    if (isObject(o) && keys.every((k) => Object.hasOwn(o, k) === Object.hasOwn(item, k) && goMarshal(o[k]) === goMarshal(item[k]))) return o;
  }
  return NONE;
}

/**
 * validateNode is SchemaValidator.Validate for one value: every check that applies to the value's kind, in kube's
 * order, each error appended to `out`. Returns Result.MatchCount (what anyOf/oneOf compare branches by). `old` is the
 * correlated old value on an update: errors of a value equal to its old value are dropped (CRD validation
 * ratcheting, ratchetingValueValidator).
 */
function validateNode(s: Node, data: unknown, path: string, out: OpenAPIError[], old: unknown = NONE): number {
  if (old === NONE) return checkNode(s, data, path, out, NONE);
  const errs: OpenAPIError[] = [];
  const matched = checkNode(s, data, path, errs, old);
  if (errs.length === 0) return matched;
  if (goMarshal(old) === goMarshal(data)) return 0;
  out.push(...errs);
  return matched;
}

function checkNode(s: Node, data: unknown, path: string, out: OpenAPIError[], old: unknown): number {
  const kind = kindOf(data);
  if (kind === 'null') {
    const m = checkType(s, data, kind, path, out);
    checkEnum(s, data, kind, path, out);
    return m;
  }
  let matched = 1;
  // Each check that applies adds its own count and one more (SchemaValidator's result.Inc()).
  if (s.types.length > 0 || s.format !== '') matched += checkType(s, data, kind, path, out) + 1;
  matched += (hasComposition(s) ? checkComposition(s, data, path, out) : 1) + 1;
  if (kind === 'string') {
    checkString(s, data as string, path, out);
    matched++;
    if (s.format !== '') {
      if (!formatValid(s.format, data as string)) out.push({ code: 'type', name: path, message: typeMessage(path, s.format, data as string), value: data });
      matched++;
    }
  } else if (kind === 'int' || kind === 'float') {
    checkNumber(s, data as number, path, out);
    matched += 2;
  } else if (kind === 'slice') {
    matched += checkSlice(s, data as unknown[], path, out, old) + 1;
  }
  checkEnum(s, data, kind, path, out);
  matched++;
  if (kind === 'map') matched += checkObject(s, data as Record<string, unknown>, path, out, old) + 1;
  return matched;
}

/**
 * validateValues runs kube-openapi's validation of a value and returns kube's field errors. `at` is where the value
 * sits when it is not the whole object (the status subresource validates `status` alone, at `status`): the fields
 * are under it, the messages name the path inside the value, and errors without a path are reported at it. `old`,
 * on an update, is the stored value: what did not change is not refused again (ratcheting).
 */
export function validateValues(root: Node, value: unknown, at = '', old: unknown = NONE): FieldError[] {
  const errs: OpenAPIError[] = [];
  validateNode(root, value, '', errs, old);
  return errs.map((e) => toFieldError(e, at));
}

// enumText is how kube lists an enum value: a string as it is, anything else as its JSON.
const enumText = (v: unknown) => (typeof v === 'string' ? v : goMarshal(v));

// toFieldError is kubeOpenAPIResultToFieldErrors for one error (a nil field path prints `<nil>`).
function toFieldError(e: OpenAPIError, at: string): FieldError {
  if (e.code === 'plain') return fieldErr.invalid(at || '<nil>', '', e.message);
  const trimmed = e.name.startsWith('.') ? e.name.slice(1) : e.name;
  const field = at ? (trimmed ? `${at}.${trimmed}` : at) : trimmed || '<nil>';
  const value = e.value ?? '';
  switch (e.code) {
    case 'required':
      return fieldErr.required(field);
    case 'enum':
      return fieldErr.notSupported(field, e.value ?? null, (e.values ?? []).map(enumText));
    case 'tooLong':
      return fieldErr.tooLong(field, e.limit ?? -1);
    case 'maxItems':
    case 'tooManyProps':
      return fieldErr.tooMany(field, e.value as number, e.limit ?? -1);
    case 'type':
      return fieldErr.typeInvalid(field, value, e.message);
    default:
      return fieldErr.invalid(field, value, e.message);
  }
}
