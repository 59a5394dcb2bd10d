/**
 * @module kinds/crd/scale-validation
 * The checks kube's custom resource validator makes of the values behind a CRD's scale paths
 * (apiextensions-apiserver registry/customresource/validator.go ValidateScaleSpec, ValidateScaleStatus): the
 * replicas an integer from 0 to 2^31-1, the label selector a string, each read as unstructured.NestedInt64 and
 * NestedString read it, with their accessor errors. A path that is absent is fine (0, or no selector).
 */
import { invalid, type FieldError } from '../../apis/meta/field-path.js';
import type { KubeObject } from '../../apis/meta/types.js';
import { formatGoValue } from '../../registry/json-path.js';
import type { CrdScale } from './types.js';

const MAX_INT32 = 2 ** 31 - 1;

// goTypeName is %T of a value unstructured JSON decoding produces (a whole number is int64).
function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return Array.isArray(v) ? '[]interface {}' : 'map[string]interface {}';
}

type Read<T> = { value: T; error?: string };

// nested reads a path as NestedFieldNoCopy does: an intermediate that is not an object is an accessor error.
function nested(obj: unknown, fields: readonly string[]): { found: boolean; value?: unknown; error?: string } {
  let cur: unknown = obj;
  for (let i = 0; i < fields.length; i++) {
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur)) {
      return {
        found: false,
        error: `.${fields.slice(0, i + 1).join('.')} accessor error: ${formatGoValue(cur)} is of the type ${goTypeName(cur)}, expected map[string]interface{}`,
      };
    }
    const o = cur as Record<string, unknown>;
    const f = fields[i] as string;
    if (!Object.hasOwn(o, f)) return { found: false };
    cur = o[f];
  }
  return { found: true, value: cur };
}

// nestedInt64 is unstructured.NestedInt64: a JSON number without a fraction decodes as int64, anything else fails.
function nestedInt64(obj: unknown, fields: readonly string[]): Read<number> {
  const r = nested(obj, fields);
  if (r.error) return { value: 0, error: r.error };
  if (!r.found) return { value: 0 };
  if (typeof r.value === 'number' && Number.isInteger(r.value)) return { value: r.value };
  return { value: 0, error: `.${fields.join('.')} accessor error: ${formatGoValue(r.value)} is of the type ${goTypeName(r.value)}, expected int64` };
}

function nestedString(obj: unknown, fields: readonly string[]): Read<string> {
  const r = nested(obj, fields);
  if (r.error) return { value: '', error: r.error };
  if (!r.found) return { value: '' };
  if (typeof r.value === 'string') return { value: r.value };
  return { value: '', error: `.${fields.join('.')} accessor error: ${formatGoValue(r.value)} is of the type ${goTypeName(r.value)}, expected string` };
}

const fieldsOf = (path: string) => path.replace(/^\./, '').split('.');

function replicasErrors(obj: unknown, path: string): FieldError[] {
  const r = nestedInt64(obj, fieldsOf(path));
  if (r.error !== undefined) return [invalid(path, r.value, r.error)];
  if (r.value < 0) return [invalid(path, r.value, 'should be a non-negative integer')];
  if (r.value > MAX_INT32) return [invalid(path, r.value, `should be less than or equal to ${MAX_INT32}`)];
  return [];
}

/** scaleValidation checks an object's scale values; on /status only the status ones, as kube's status strategy does. */
export function scaleValidation(scale: CrdScale): (obj: KubeObject, sub: 'main' | 'status') => FieldError[] {
  return (obj, sub) => {
    const errs = sub === 'main' ? replicasErrors(obj, scale.specReplicasPath) : [];
    errs.push(...replicasErrors(obj, scale.statusReplicasPath));
    if (scale.labelSelectorPath) {
      const r = nestedString(obj, fieldsOf(scale.labelSelectorPath));
      if (r.error !== undefined) errs.push(invalid(scale.labelSelectorPath, r.value, r.error));
    }
    return errs;
  };
}
