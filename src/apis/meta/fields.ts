/**
 * @module apis/meta/fields
 * Field selectors with the grammar of k8s.io/apimachinery/pkg/fields: `f=v`, `f==v`, `f!=v` joined by commas (AND),
 * values escaped with backslashes (`\\`, `\,`, `\=`). Fields outside the allowed list are rejected the way
 * kube-apiserver's default field-label conversion does. Errors become 400 BadRequest.
 */
import { badRequest } from './errors.js';

/** FieldSelector is a parsed field selector. */
export interface FieldSelector {
  /** matches reports whether every term holds; a field missing from `fields` counts as the empty string. */
  matches(fields: Record<string, string>): boolean;
  /** empty is true when the selector has no terms and so matches everything. */
  readonly empty: boolean;
  /** fields are the terms' field names in term order (sorted), for a field-label conversion. */
  readonly fields: readonly string[];
  /** exactName returns the name when the selector pins metadata.name with = or ==, else undefined. */
  exactName(): string | undefined;
  /** toString prints the canonical form: terms sorted, `==` written `=`, values re-escaped. */
  toString(): string;
}

/** DEFAULT_SELECTABLE_FIELDS are the fields every kind supports (runtime.DefaultMetaV1FieldSelectorConversion). */
export const DEFAULT_SELECTABLE_FIELDS: readonly string[] = ['metadata.name', 'metadata.namespace'];

interface Term {
  field: string;
  /** `==` is parsed as `=`: Kubernetes treats them as the same operator. */
  op: '=' | '!=';
  value: string;
}

/** escapeFieldValue escapes `\`, `,` and `=` so any literal string can be used as a field selector value. */
export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

// Commas preceded by a backslash are data; the backslash stays for unescapeValue to handle.
function splitTerms(selector: string): string[] {
  if (selector === '') return [];
  const terms: string[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

// The field side allows no escapes, so the first operator wins; at one position `!=` and `==` beat `=`.
const OPERATORS = ['!=', '==', '='] as const;
function splitTerm(term: string): { lhs: string; op: (typeof OPERATORS)[number]; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of OPERATORS) {
      if (term.startsWith(op, i)) return { lhs: term.slice(0, i), op, rhs: term.slice(i + op.length) };
    }
  }
  return undefined;
}

function unescapeValue(s: string): string {
  let out = '';
  let escaped = false;
  for (const c of s) {
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=') throw badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      escaped = false;
    } else if (c === '\\') {
      escaped = true;
    } else if (c === ',' || c === '=') {
      // Kubernetes prints the rune as a number here ("61"); quoting the character says the same thing readably.
      throw badRequest(`invalid field selector: unescaped character in value: '${c}'`);
    } else {
      out += c;
    }
  }
  if (escaped) throw badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

class ParsedFieldSelector implements FieldSelector {
  readonly #terms: readonly Term[];
  constructor(terms: readonly Term[]) {
    this.#terms = terms;
  }
  get empty(): boolean {
    return this.#terms.length === 0;
  }
  get fields(): readonly string[] {
    return this.#terms.map((t) => t.field);
  }
  matches(fields: Record<string, string>): boolean {
    return this.#terms.every((t) => {
      const actual = Object.hasOwn(fields, t.field) ? fields[t.field] : '';
      return t.op === '=' ? actual === t.value : actual !== t.value;
    });
  }
  exactName(): string | undefined {
    return this.#terms.find((t) => t.field === 'metadata.name' && t.op === '=')?.value;
  }
  toString(): string {
    return this.#terms.map((t) => `${t.field}${t.op}${escapeFieldValue(t.value)}`).join(',');
  }
}

/**
 * parseFieldSelector parses a `fieldSelector` query value; the empty string matches everything.
 * Throws StatusError 400 BadRequest for syntax errors (`invalid selector: 'x'; can't understand 'x'`) and for fields
 * not in `allowedFields` (`"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"`);
 * `'any'` skips that check (request attributes are read before any conversion).
 */
export function parseFieldSelector(s: string, allowedFields: readonly string[] | 'any' = DEFAULT_SELECTABLE_FIELDS): FieldSelector {
  // Kubernetes sorts the raw terms first, which fixes both the printed order and which error is reported.
  const parts = splitTerms(s).sort();
  const terms: Term[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const split = splitTerm(part);
    if (!split) throw badRequest(`invalid selector: '${s}'; can't understand '${part}'`);
    const value = unescapeValue(split.rhs);
    // A term with neither field nor value (`=`, `==`, `!=`) transforms to Everything (selector.go hasTerm.Transform).
    if (split.lhs === '' && value === '') continue;
    terms.push({ field: split.lhs, op: split.op === '!=' ? '!=' : '=', value });
  }
  // Field-label conversion runs after parsing, as the list handler's Transform does.
  for (const t of terms) {
    if (allowedFields !== 'any' && !allowedFields.includes(t.field)) {
      throw badRequest(`${JSON.stringify(t.field)} is not a known field selector: only ${allowedFields.map((f) => JSON.stringify(f)).join(', ')}`);
    }
  }
  return new ParsedFieldSelector(terms);
}
