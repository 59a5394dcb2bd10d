/**
 * @module admission/structural
 * A CRD schema compiled once into the form every admission step walks: apiextensions' structural schema plus the
 * value validations kube-openapi checks (properties in a Map, patterns compiled, unsupported formats dropped as
 * StripUnsupportedFormatsPostProcess drops them, `x-kubernetes-int-or-string` as the types integer and string).
 */
import type { JSONSchema } from '../apis/meta/json-schema.js';
import { knownFormat } from './formats.js';

/** Node is one compiled schema node. */
export interface Node {
  /** The declared types: none, one, or integer and string for x-kubernetes-int-or-string. */
  readonly types: readonly string[];
  readonly nullable: boolean;
  /** The format as kube keeps it (StripUnsupportedFormatsPostProcess): empty when it ignores the declared one. */
  readonly format: string;
  readonly enum?: readonly unknown[];
  readonly hasDefault: boolean;
  readonly default?: unknown;
  readonly maxLength?: number;
  readonly minLength?: number;
  readonly pattern?: { source: string; re: RegExp | undefined; error?: string };
  readonly multipleOf?: number;
  readonly maximum?: number;
  readonly exclusiveMaximum: boolean;
  readonly minimum?: number;
  readonly exclusiveMinimum: boolean;
  readonly maxItems?: number;
  readonly minItems?: number;
  readonly uniqueItems: boolean;
  readonly maxProperties?: number;
  readonly minProperties?: number;
  readonly required: readonly string[];
  readonly properties?: ReadonlyMap<string, Node>;
  /** additionalProperties: a schema, `false`, or undefined (absent or `true`). */
  readonly additional?: Node | false;
  /** additionalProperties is a boolean: pruning then walks undeclared members with no schema at all. */
  readonly additionalBool: boolean;
  readonly items?: Node;
  readonly allOf: readonly Node[];
  readonly anyOf: readonly Node[];
  readonly oneOf: readonly Node[];
  readonly not?: Node;
  readonly preserveUnknown: boolean;
  readonly embedded: boolean;
  readonly listType?: string;
  readonly listMapKeys: readonly string[];
}

type Raw = JSONSchema & Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** compile turns a JSONSchema into Nodes (recursively; each node once). */
export function compile(raw: JSONSchema): Node {
  const s = raw as Raw;
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const types = intOrString ? ['integer', 'string'] : s.type ? [s.type] : [];
  const props = s.properties ? new Map(Object.entries(s.properties).map(([k, v]) => [k, compile(v)] as const)) : undefined;
  const ap = s.additionalProperties;
  const list = (v: unknown) => (Array.isArray(v) ? (v as JSONSchema[]).map(compile) : []);
  return {
    types,
    nullable: s.nullable === true,
    format: keptFormat(s.format, types),
    enum: Array.isArray(s.enum) ? s.enum : undefined,
    hasDefault: s.default !== undefined && s.default !== null,
    default: s.default ?? undefined,
    maxLength: num(s.maxLength),
    minLength: num(s.minLength),
    pattern: typeof s.pattern === 'string' ? compilePattern(s.pattern) : undefined,
    multipleOf: num(s['multipleOf']),
    maximum: num(s.maximum),
    exclusiveMaximum: s['exclusiveMaximum'] === true,
    minimum: num(s.minimum),
    exclusiveMinimum: s['exclusiveMinimum'] === true,
    maxItems: num(s['maxItems']),
    minItems: num(s['minItems']),
    uniqueItems: s['uniqueItems'] === true,
    maxProperties: num(s['maxProperties']),
    minProperties: num(s['minProperties']),
    required: Array.isArray(s.required) ? s.required : [],
    properties: props,
    additional: ap === false ? false : typeof ap === 'object' && ap !== null ? compile(ap) : undefined,
    additionalBool: typeof ap === 'boolean',
    items: s.items && typeof s.items === 'object' && !Array.isArray(s.items) ? compile(s.items) : undefined,
    allOf: list(s['allOf']),
    anyOf: list(s['anyOf']),
    oneOf: list(s['oneOf']),
    not: s['not'] && typeof s['not'] === 'object' ? compile(s['not'] as JSONSchema) : undefined,
    preserveUnknown: s['x-kubernetes-preserve-unknown-fields'] === true,
    embedded: s['x-kubernetes-embedded-resource'] === true,
    listType: typeof s['x-kubernetes-list-type'] === 'string' ? s['x-kubernetes-list-type'] : undefined,
    listMapKeys: Array.isArray(s['x-kubernetes-list-map-keys']) ? s['x-kubernetes-list-map-keys'] : [],
  };
}

// keptFormat is the format CRD validation keeps (StripUnsupportedFormatsPostProcessorForVersion): on strings (or
// untyped schemas) the string formats it supports, on integers int32/int64, on numbers float/double, nothing else.
function keptFormat(format: unknown, types: readonly string[]): string {
  if (typeof format !== 'string' || format === '') return '';
  const t = types.length === 1 ? types[0] : '';
  if (t === '' || t === 'string') return knownFormat(format) ? format : '';
  if (t === 'integer') return format === 'int32' || format === 'int64' ? format : '';
  if (t === 'number') return format === 'float' || format === 'double' ? format : '';
  return '';
}

// compilePattern compiles an ECMA-262 pattern as kube does with Go's regexp (RE2 syntax, the common subset of both).
// A pattern JavaScript refuses is reported the way kube reports one Go refuses.
function compilePattern(source: string): { source: string; re: RegExp | undefined; error?: string } {
  try {
    return { source, re: new RegExp(source, 'u') };
  } catch {
    try {
      return { source, re: new RegExp(source) };
    } catch (e) {
      return { source, re: undefined, error: (e as Error).message };
    }
  }
}
