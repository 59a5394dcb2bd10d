/**
 * @module admission/cel/rules
 * The x-kubernetes-validations entries of a schema node, read from the JSON schema, and the checks kube makes of
 * each entry's own fields before compiling anything (apiextensions validation.go): rule present, message and
 * messageExpression not blank, no line breaks, a supported reason, a fieldPath that names a field.
 */
import { invalid, notSupported, required, type FieldError } from '../../apis/meta/field-path.js';
import type { JSONSchema } from '../../apis/meta/json-schema.js';

export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** rulesOf reads the node's x-kubernetes-validations. */
export function rulesOf(s: JSONSchema): ValidationRule[] {
  const v = s['x-kubernetes-validations'];
  return Array.isArray(v) ? (v as ValidationRule[]) : [];
}

const SUPPORTED_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const NEWLINE = /[\n\r]+/;

/** ruleJSON prints a rule as kube's field.Invalid prints the ValidationRule struct (Go's JSON, HTML-escaped). */
export function ruleJSON(r: ValidationRule): string {
  const json = JSON.stringify({
    Rule: r.rule ?? '',
    Message: r.message ?? '',
    MessageExpression: r.messageExpression ?? '',
    Reason: r.reason ?? null,
    FieldPath: r.fieldPath ?? '',
    OptionalOldSelf: r.optionalOldSelf ?? null,
  });
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** resolveFieldPath parses a rule's fieldPath (`.a.b`, `['x.y']`) against the schema: the normalized path, or undefined. */
export function resolveFieldPath(fieldPath: string, s: JSONSchema): string | undefined {
  const tokens = fieldPath.match(/'(?:[^'\\]|\\.)*'|[.[\]]|[^.[\]']+/g) ?? [];
  let node: JSONSchema | undefined = s;
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    let name: string;
    if (t === '.') {
      const n = tokens[++i];
      if (!n || n === '.' || n === '[' || n === ']') return undefined;
      name = n;
    } else if (t === '[') {
      const q = tokens[++i];
      if (!q?.startsWith("'") || tokens[++i] !== ']') return undefined;
      name = q.slice(1, -1).replace(/\\(.)/g, '$1');
    } else return undefined;
    if (!node) return undefined;
    if (node.properties) {
      node = node.properties[name];
      if (!node) return undefined;
      out += out ? `.${name}` : name;
    } else if (typeof node.additionalProperties === 'object') {
      node = node.additionalProperties;
      out += `[${name}]`;
    } else return undefined;
  }
  return out;
}

/** ruleFieldErrors are the checks of one rule's own fields, at `p` (`...x-kubernetes-validations[i]`). */
export function ruleFieldErrors(r: ValidationRule, p: string, s: JSONSchema): FieldError[] {
  const errs: FieldError[] = [];
  const rule = (r.rule ?? '').trim();
  const msg = (r.message ?? '').trim();
  if (!rule) errs.push(required(`${p}.rule`, 'rule is not specified'));
  else if (r.message !== undefined && r.message.length > 0 && !msg) errs.push(invalid(`${p}.message`, r.message, 'must be non-empty if specified'));
  else if ((r.message ?? '').length > 2048)
    errs.push(invalid(`${p}.message`, `${r.message!.slice(0, 10)}...`, 'must have a maximum length of 2048 characters'));
  else if (NEWLINE.test(msg)) errs.push(invalid(`${p}.message`, r.message, 'must not contain line breaks'));
  else if (NEWLINE.test(rule) && !msg) errs.push(required(`${p}.message`, 'message must be specified if rule contains line breaks'));
  if (r.messageExpression !== undefined && r.messageExpression.length > 0 && !r.messageExpression.trim())
    errs.push(required(`${p}.messageExpression`, 'must be non-empty if specified'));
  if (r.reason !== undefined && !SUPPORTED_REASONS.includes(r.reason)) errs.push(notSupported(`${p}.reason`, r.reason, SUPPORTED_REASONS));
  if (r.fieldPath !== undefined) {
    if (r.fieldPath.length > 0 && !r.fieldPath.trim()) errs.push(invalid(`${p}.fieldPath`, r.fieldPath, 'must be non-empty if specified'));
    else if (NEWLINE.test(r.fieldPath)) errs.push(invalid(`${p}.fieldPath`, r.fieldPath, 'must not contain line breaks'));
    else if (r.fieldPath.length > 0 && resolveFieldPath(r.fieldPath.trim(), s) === undefined)
      errs.push(invalid(`${p}.fieldPath`, r.fieldPath, 'must be a valid path'));
  }
  return errs;
}
