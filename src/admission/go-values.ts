/**
 * @module admission/go-values
 * How a decoded JSON value looks to kube-apiserver's Go code: its type (unstructured JSON decodes a whole number that
 * fits as int64, anything else as float64), Go's `%v` text of it, and the field error bodies apimachinery's
 * field.Error prints around it. Schema admission words its errors with these, byte for byte.
 */
import type { FieldError, FieldErrorType } from '../apis/meta/field-path.js';
import { goMarshal, goQuote } from '../apis/meta/go-json.js';

const INT64_LIMIT = 2 ** 63;

/** isInt64 tells whether Go decodes this JSON number as an int64 (whole and in range) rather than a float64. */
export const isInt64 = (v: number): boolean => Number.isInteger(v) && v < INT64_LIMIT && v >= -INT64_LIMIT;

/**
 * goFloat is Go's `%v` of a float64 (strconv 'g' with the shortest precision): the shortest digits that round-trip,
 * in exponent form when the decimal exponent is below -4 or at least 6 (`1e+06`, `1.8446744073709552e+19`).
 */
export function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mant, expText] = v.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp >= -4 && exp < 6) return String(v);
  return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/** goNumber is `%v` of a decoded JSON number: int64 bare, float64 as goFloat. */
export const goNumber = (v: number): string => (isInt64(v) ? String(v) : goFloat(v));

/**
 * goValueText is how field.Error prints a bad value: strings quoted (%q), numbers and booleans with %v, anything else
 * (maps, slices, null) as its JSON.
 */
export function goValueText(v: unknown): string {
  if (typeof v === 'string') return goQuote(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  return goMarshal(v);
}

// field.ErrorTypeTooMany is not among apis/meta's error types (no hand-written kind reports it).
const TOO_MANY = 'FieldValueTooMany' as FieldErrorType;

const withValue = (type: FieldErrorType, label: string, field: string, value: unknown, detail: string): FieldError => ({
  type,
  field,
  message: `${field}: ${label}: ${goValueText(value)}${detail ? `: ${detail}` : ''}`,
});

/** The field.Error constructors, printing values as Go does. */
export const fieldErr = {
  required: (field: string): FieldError => ({ type: 'FieldValueRequired', field, message: `${field}: Required value` }),
  invalid: (field: string, value: unknown, detail: string) => withValue('FieldValueInvalid', 'Invalid value', field, value, detail),
  typeInvalid: (field: string, value: unknown, detail: string) => withValue('FieldValueTypeInvalid', 'Invalid value', field, value, detail),
  notSupported: (field: string, value: unknown, allowed: readonly string[]) =>
    withValue('FieldValueNotSupported', 'Unsupported value', field, value, `supported values: ${allowed.map(goQuote).join(', ')}`),
  duplicate: (field: string, value: unknown) => withValue('FieldValueDuplicate', 'Duplicate value', field, value, ''),
  tooLong: (field: string, max: number): FieldError => ({ type: 'FieldValueTooLong', field, message: `${field}: Too long: may not be more than ${max} bytes` }),
  tooMany: (field: string, actual: number, max: number) => withValue(TOO_MANY, 'Too many', field, actual, `must have at most ${max} items`),
};
