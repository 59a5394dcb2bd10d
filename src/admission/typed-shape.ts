/**
 * @module admission/typed-shape
 * What a Go client of a kind written in code could not decode, although the CRD validator lets it through:
 * kube-openapi's type check passes any string or array where a string with a `format` is declared
 * (typeValidator.Validate returns early for them), so an array can be stored in, say, a condition's
 * lastTransitionTime. A custom resource is read as unstructured JSON and may hold it; a kind with Go types (Website)
 * would answer every list with a decoding error, so for it such a value is the type error it is.
 */
import { typeInvalid, type FieldError } from '../apis/meta/field-path.js';
import type { JSONSchema } from '../apis/meta/json-schema.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** typedShapeErrors finds arrays where the schema declares a string with a format. */
export function typedShapeErrors(schema: JSONSchema, obj: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const walk = (s: JSONSchema, v: unknown, path: string): void => {
    if (s.type === 'string' && s.format && Array.isArray(v)) {
      errs.push(typeInvalid(path, 'array', `${path} in body must be of type string: "array"`));
      return;
    }
    if (Array.isArray(v) && s.items)
      v.forEach((item, i) => {
        walk(s.items as JSONSchema, item, `${path}[${i}]`);
      });
    else if (isObject(v)) {
      for (const [k, child] of Object.entries(v)) {
        const p = s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
        if (p) walk(p, child, path ? `${path}.${k}` : k);
      }
    }
  };
  walk(schema, obj, '');
  return errs;
}
