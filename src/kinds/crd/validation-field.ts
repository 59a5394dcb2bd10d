/**
 * @module kinds/crd/validation-field
 * field.Error constructors printing values as Go's field package does (ErrorBody): strings with %q (strconv.Quote,
 * not JSON), numbers and bools bare, anything else as its json.Marshal text (see validation-gojson.ts).
 */
import { goMarshal, goQuote } from '../../apis/meta/go-json.js';
import type { FieldError, FieldErrorType } from '../../apis/meta/field-path.js';

/** GoJson is a value already rendered as json.Marshal would (an internal struct, a slice). */
export class GoJson {
  constructor(readonly text: string) {}
}

function show(value: unknown): string {
  if (value instanceof GoJson) return value.text;
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return goMarshal(value);
}

const make = (type: FieldErrorType, field: string, body: string): FieldError => ({ type, field, message: `${field}: ${body}` });

export const required = (field: string, detail = '') => make('FieldValueRequired', field, `Required value${detail ? `: ${detail}` : ''}`);
export const forbidden = (field: string, detail: string) => make('FieldValueForbidden', field, `Forbidden: ${detail}`);
export const invalid = (field: string, value: unknown, detail: string) =>
  make('FieldValueInvalid', field, `Invalid value: ${show(value)}${detail ? `: ${detail}` : ''}`);
export const notSupported = (field: string, value: unknown, allowed: readonly string[]) =>
  make('FieldValueNotSupported', field, `Unsupported value: ${show(value)}${allowed.length ? `: supported values: ${allowed.map(goQuote).join(', ')}` : ''}`);
export const duplicate = (field: string, value: unknown) => make('FieldValueDuplicate', field, `Duplicate value: ${show(value)}`);
export const tooLong = (field: string, max: number) =>
  make('FieldValueTooLong', field, `Too long: may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}`);
// metav1.CauseTypeTooMany is a cause kube sends that the shared FieldErrorType union does not list yet.
export const tooMany = (field: string, actual: number, max: number) =>
  make('FieldValueTooMany' as FieldErrorType, field, `Too many: ${actual}: must have at most ${max} ${max === 1 ? 'item' : 'items'}`);

/** compareErrors orders errors as sort.Slice on Error() strings does (byte order of the full message). */
export const compareErrors = (a: FieldError, b: FieldError): number => Buffer.compare(Buffer.from(a.message, 'utf8'), Buffer.from(b.message, 'utf8'));
