/**
 * @module apis/meta/field-path
 * Field paths and field errors in the shape of k8s.io/apimachinery/pkg/util/validation/field:
 * `spec.replicas`, `metadata.labels[app]`, `spec.items[0].name`. Validators collect FieldError[] and never throw.
 */

/** FieldErrorType is the reason reported in Status causes (metav1.CauseType). */
export type FieldErrorType =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueDuplicate'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid';

/** FieldError is one bad field: its path, the reason and a message in Kubernetes wording. */
export interface FieldError {
  type: FieldErrorType;
  field: string;
  /** Full message as kube-apiserver prints it, e.g. `spec.replicas: Invalid value: 500: must be less than or equal to 100`. */
  message: string;
}

/** FieldPath builds dotted paths: `path('spec').child('replicas')` is `spec.replicas`. */
export class FieldPath {
  readonly #segments: string;
  constructor(segments: string) {
    this.#segments = segments;
  }
  child(...names: string[]): FieldPath {
    // One name, the usual call, without the array work.
    if (names.length === 1 && names[0]) return new FieldPath(this.#segments ? `${this.#segments}.${names[0]}` : names[0]);
    return new FieldPath([this.#segments, ...names].filter(Boolean).join('.'));
  }
  toString(): string {
    return this.#segments;
  }
}

/** path starts a FieldPath from one or more names. */
export function path(...names: string[]): FieldPath {
  return new FieldPath(names.join('.'));
}

/** formatValue prints a value the way Go's field.Invalid does: strings quoted, numbers bare. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** required: `field: Required value[: detail]`. */
export function required(p: FieldPath | string, detail = ''): FieldError {
  return { type: 'FieldValueRequired', field: String(p), message: `${p}: Required value${detail ? `: ${detail}` : ''}` };
}

/** invalid: `field: Invalid value: <value>: detail`. */
export function invalid(p: FieldPath | string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field: String(p), message: `${p}: Invalid value: ${formatValue(value)}: ${detail}` };
}

/** notSupported: `field: Unsupported value: <value>: supported values: "a", "b"`. */
export function notSupported(p: FieldPath | string, value: unknown, allowed: readonly string[]): FieldError {
  const list = allowed.map((a) => JSON.stringify(a)).join(', ');
  return { type: 'FieldValueNotSupported', field: String(p), message: `${p}: Unsupported value: ${formatValue(value)}: supported values: ${list}` };
}

/** forbidden: `field: Forbidden: detail`. */
export function forbidden(p: FieldPath | string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field: String(p), message: `${p}: Forbidden: ${detail}` };
}

/** tooLong: `field: Too long: may not be more than N bytes`. */
export function tooLong(p: FieldPath | string, max: number): FieldError {
  return { type: 'FieldValueTooLong', field: String(p), message: `${p}: Too long: may not be more than ${max} bytes` };
}

/** typeInvalid: `field: Invalid value: <value>: must be of type X`. */
export function typeInvalid(p: FieldPath | string, value: unknown, detail: string): FieldError {
  return { type: 'FieldValueTypeInvalid', field: String(p), message: `${p}: Invalid value: ${formatValue(value)}: ${detail}` };
}
