/**
 * @module kinds/crd/validation-selectable
 * ValidateCustomResourceSelectableFields: each `jsonPath` must name (dot notation only) a string, boolean or integer
 * field of the schema outside metadata, once. The path walk is schema/cel ValidFieldPath without array notation.
 */
import { duplicate, invalid, required } from './validation-field.js';
import type { FieldError } from '../../apis/meta/field-path.js';
import { isObject, type Schema } from './structural.js';

// ValidFieldPath: the found schema and the normalized path, or Go's error text.
function validFieldPath(jsonPath: string, root: Schema | undefined): { path: string[]; schema: Schema | undefined } | string {
  // The scanner's tokens: delimiters one by one, everything between them as one token.
  const tokens = jsonPath.match(/[.[\]]|[^.[\]]+/g) ?? [];
  let schema: Schema | undefined = root;
  const path: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i]!;
    if (tok === '[') return 'array notation is not allowed';
    if (tok !== '.') return `expected [ or . but got: ${tok}`;
    const name = tokens[++i];
    if (name === undefined) return 'unexpected end of JSON path';
    if (!schema) return 'does not refer to a valid field';
    if (isObject(schema.properties)) {
      const f: unknown = schema.properties[name];
      if (!isObject(f)) return 'does not refer to a valid field';
      schema = f;
    } else if (schema.additionalProperties !== undefined && schema.additionalProperties !== null) {
      schema = isObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
    } else return 'does not refer to a valid field';
    path.push(name);
  }
  return { path, schema };
}

/** validateSelectableFields returns the per-field errors and the number of distinct paths (kube caps it at 8). */
export function validateSelectableFields(fields: unknown[], schema: Schema | undefined, p: string): { errors: FieldError[]; unique: number } {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const at = `${p}[${i}].jsonPath`;
    const jp = isObject(f) && typeof f.jsonPath === 'string' ? f.jsonPath : '';
    if (!jp) {
      errors.push(required(at));
      return;
    }
    const r = validFieldPath(jp, schema);
    if (typeof r === 'string') {
      errors.push(invalid(at, jp, `is an invalid path: ${r}`));
      return;
    }
    if (r.path[0] === 'metadata') errors.push(invalid(at, jp, 'must not point to fields in metadata'));
    const t = r.schema?.type;
    if (t !== 'string' && t !== 'boolean' && t !== 'integer') {
      errors.push(invalid(at, jp, 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.'));
    }
    const key = r.path.join('.');
    if (seen.has(key)) errors.push(duplicate(at, jp));
    else seen.add(key);
  });
  return { errors, unique: seen.size };
}
