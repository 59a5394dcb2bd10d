/**
 * @module apis/meta/go-struct
 * Decoding JSON into a described Go struct exactly as kube-apiserver's decoder does (sigs.k8s.io/json, the
 * case-sensitive fork of encoding/json that apimachinery's util/json and UnmarshalStrict use), then writing the
 * result back the way runtime.DefaultUnstructuredConverter.ToUnstructured does. Entry point: goUnmarshal.
 *
 * ## Guarantees (what encoding/json does, reproduced)
 * - Object members are matched to fields by their exact JSON name; others are unknown fields (reported with the
 *   path kjson.FieldError prints: `ownerReferences[0].foo`) and dropped.
 * - `null` leaves a value field untouched and sets a pointer, map or slice field to nil.
 * - A JSON value of the wrong type is skipped and remembered; decoding goes on and the *first* such error is
 *   returned at the end (`json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type
 *   map[string]string`). An error from a type's own UnmarshalJSON (metav1.Time) ends decoding at once.
 * - `sortKeys`: object members are visited in sorted order, as happens when the value was first marshaled from a
 *   map[string]interface{} (a custom resource's metadata: apiextensions-apiserver objectmeta.GetObjectMeta);
 *   otherwise in document order (a typed body such as DeleteOptions or an autoscaling/v1 Scale).
 * - Output: fields in struct order; `omitempty` drops zero values, nil pointers are dropped, metav1.Time is written
 *   in UTC at second precision.
 */
import { compareUtf8, type GoValue } from './go-json.js';
import { setMember } from './json-clone.js';
import { formatGoTime, parseGoTime } from './go-time.js';

/** GoType describes the Go type a JSON value is decoded into. `name` is how Go prints the type in errors. */
export type GoType =
  | { kind: 'string'; name: string }
  | { kind: 'int'; name: 'int64' | 'int32' }
  | { kind: 'bool' }
  /** metav1.Time: its UnmarshalJSON takes null or an RFC 3339 string. */
  | { kind: 'time' }
  /** Any JSON kept as it is (metav1.FieldsV1, whose UnmarshalJSON keeps the raw bytes). */
  | { kind: 'raw' }
  | { kind: 'map'; name: string; elem: GoType }
  | { kind: 'slice'; name: string; elem: GoType }
  /** `name` is the bare struct name errors use as context (ObjectMeta); `qualified` its type name (v1.ObjectMeta). */
  | { kind: 'struct'; name: string; qualified: string; fields: readonly GoField[] };

/** GoField is one struct field: its JSON name, type, and the `*T` / `omitempty` that decide its output. */
export interface GoField {
  json: string;
  type: GoType;
  pointer?: boolean;
  omitEmpty?: boolean;
}

/** GoDecodeError is the error text Go's decoder returns, ready to be put in a Status message. */
export class GoDecodeError extends Error {}

/** GoUnmarshalOptions: visit members in sorted order (see the module notes). */
export interface GoUnmarshalOptions {
  sortKeys: boolean;
}

/** GoUnmarshalResult is the decoded value in its wire form and the unknown fields met on the way. */
export interface GoUnmarshalResult {
  value: unknown;
  unknownFields: string[];
}

/**
 * Where the decoder is, as a chain to the root, turned into text only when an error needs it: encoding/json's
 * errorContext (the innermost struct, the JSON names from the root without indexes or map keys) and kjson's field
 * path of unknown fields (with [i] indexes).
 */
interface Context {
  parent?: Context;
  /** A struct field: its JSON name and the struct holding it. */
  field?: { name: string; struct: string };
  /** An element of a list. */
  index?: number;
}

const ROOT: Context = {};

function errorContext(ctx: Context): { struct: string | undefined; stack: string[] } {
  const stack: string[] = [];
  let struct: string | undefined;
  for (let c: Context | undefined = ctx; c; c = c.parent) {
    if (c.field) {
      stack.push(c.field.name);
      struct ??= c.field.struct;
    }
  }
  return { struct, stack: stack.reverse() };
}

function fieldPath(ctx: Context): string {
  let out = '';
  for (let c: Context | undefined = ctx; c; c = c.parent) {
    if (c.field) out = c.parent && (c.parent.field || c.parent.index !== undefined) ? `.${c.field.name}${out}` : `${c.field.name}${out}`;
    else if (c.index !== undefined) out = `[${c.index}]${out}`;
  }
  return out;
}

class Fatal {
  constructor(readonly message: string) {}
}

/**
 * GoNumberLiteral is a JSON number kept as written, for a body Go decodes straight from its bytes (DeleteOptions, a
 * Scale): there `1e3` or `1.0` is not an int64 and the error quotes the literal. Numbers of a custom resource's
 * metadata are plain numbers: Go re-marshals them from a map first, where 1e3 becomes 1000.
 */
export class GoNumberLiteral {
  constructor(readonly raw: string) {}
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoNumberLiteral);

// isSortedUtf8 tells whether keys are already in UTF-8 byte order (usually so: sorting would only copy them).
function isSortedUtf8(keys: string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (compareUtf8(keys[i - 1] as string, keys[i] as string) > 0) return false;
  return true;
}

// A struct's fields by JSON name, built once per type (the types are module constants).
const FIELD_INDEXES = new WeakMap<GoType, Map<string, GoField>>();
function fieldIndex(t: Extract<GoType, { kind: 'struct' }>): Map<string, GoField> {
  let index = FIELD_INDEXES.get(t);
  if (!index) {
    index = new Map(t.fields.map((f) => [f.json, f]));
    FIELD_INDEXES.set(t, index);
  }
  return index;
}

/** goNumberText is how Go writes a float64 back to JSON (what the error shows after a round trip). */
export const goNumberText = (n: number): string => (Object.is(n, -0) ? '0' : String(n));

/** jsonKind is how an UnmarshalTypeError names a JSON value's type. */
export function jsonKind(v: unknown): string {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number' || v instanceof GoNumberLiteral) return 'number';
  return Array.isArray(v) ? 'array' : 'object';
}

/** fromGoJson turns a go-json document into a value whose numbers are GoNumberLiterals (the last duplicate wins). */
export function fromGoJson(v: GoValue): unknown {
  if (v === null) return null;
  switch (v.kind) {
    case 'number':
      return new GoNumberLiteral(v.raw);
    case 'string':
    case 'bool':
      return v.value;
    case 'array':
      return v.items.map(fromGoJson);
    default: {
      const out: Record<string, unknown> = {};
      for (const [k, e] of v.entries) setMember(out, k, fromGoJson(e));
      return out;
    }
  }
}

const INT_SYNTAX = /^-?(0|[1-9][0-9]*)$/;
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

function typeName(t: GoType): string {
  switch (t.kind) {
    case 'string':
    case 'int':
    case 'map':
    case 'slice':
      return t.name;
    case 'struct':
      return t.qualified;
    case 'bool':
      return 'bool';
    default:
      return 'string';
  }
}

/** unmarshalTypeError is json.UnmarshalTypeError.Error() with the decoder's context added. */
function unmarshalTypeError(value: string, type: string, ctx: Context): string {
  const { struct, stack } = errorContext(ctx);
  if (struct !== undefined || stack.length > 0) {
    return `json: cannot unmarshal ${value} into Go struct field ${struct ?? ''}.${stack.join('.')} of type ${type}`;
  }
  return `json: cannot unmarshal ${value} into Go value of type ${type}`;
}

const INT_RANGE = { int64: [-(2 ** 63), 2 ** 63], int32: [-(2 ** 31), 2 ** 31] } as const;

class Decoder {
  saved: string | undefined;
  readonly unknown: string[] = [];
  /**
   * sortMaps: a map's members are visited, so written, in sorted order. sortStructs: a struct's members too, which
   * only decides which error is the first and the order of the unknown fields (goUnmarshal redoes a decode that
   * found either with it on, so the usual, clean decode does not pay for sorting).
   */
  constructor(
    readonly sortMaps: boolean,
    readonly sortStructs: boolean,
  ) {}

  #typeError(value: string, t: GoType, ctx: Context): void {
    this.saved ??= unmarshalTypeError(value, typeName(t), ctx);
  }

  #keys(o: Record<string, unknown>, sort: boolean): string[] {
    const keys = Object.keys(o);
    if (!sort || keys.length < 2 || isSortedUtf8(keys)) return keys;
    // UTF-16 order is UTF-8 byte order for ASCII keys, the usual case; others need the byte comparison.
    return keys.every((k) => ASCII.test(k)) ? keys.sort() : keys.sort(compareUtf8);
  }

  /** decode returns the new value of a Go variable holding `current` after decoding `v` into it. */
  decode(current: unknown, v: unknown, t: GoType, ctx: Context): unknown {
    switch (t.kind) {
      case 'string':
        if (v === null) return current;
        if (typeof v === 'string') return v;
        this.#typeError(jsonKind(v), t, ctx);
        return current;
      case 'int': {
        if (v === null) return current;
        const [lo, hi] = INT_RANGE[t.name];
        if (v instanceof GoNumberLiteral) {
          // strconv.ParseInt on the literal: only integer syntax, within the type's range.
          const n = INT_SYNTAX.test(v.raw) ? BigInt(v.raw) : undefined;
          if (n !== undefined && n >= BigInt(lo) && n < BigInt(hi)) return Number(n);
          this.#typeError(`number ${v.raw}`, t, ctx);
          return current;
        }
        if (typeof v === 'number') {
          if (Number.isInteger(v) && v >= lo && v < hi) return v === 0 ? 0 : v;
          this.#typeError(`number ${goNumberText(v)}`, t, ctx);
          return current;
        }
        this.#typeError(jsonKind(v), t, ctx);
        return current;
      }
      case 'bool':
        if (v === null) return current;
        if (typeof v === 'boolean') return v;
        this.#typeError(jsonKind(v), t, ctx);
        return current;
      case 'time': {
        // metav1.Time.UnmarshalJSON: null is the zero time; otherwise json.Unmarshal into a string, then
        // time.Parse(RFC3339). Its errors are returned at once, the type error with the decoder's context.
        if (v === null) return undefined;
        if (typeof v !== 'string') throw new Fatal(unmarshalTypeError(jsonKind(v), 'string', ctx));
        const r = parseGoTime(v);
        if (!r.ok) throw new Fatal(r.error);
        return r.unixSeconds;
      }
      case 'raw':
        // The input is the caller's own copy: kept as it is, literal numbers made numbers again.
        return v === null ? current : plain(v);
      case 'map': {
        if (v === null) return undefined;
        if (!isObject(v)) {
          this.#typeError(jsonKind(v), t, ctx);
          return current;
        }
        const out: Record<string, unknown> = isObject(current) ? current : {};
        for (const k of this.#keys(v, this.sortMaps)) {
          // A null element is the element type's zero value; a wrong one is an error (no key in the context).
          setMember(out, k, this.decode(zeroOf(t.elem), v[k], t.elem, ctx));
        }
        return out;
      }
      case 'slice': {
        if (v === null) return undefined;
        if (!Array.isArray(v)) {
          this.#typeError(jsonKind(v), t, ctx);
          return current;
        }
        return v.map((e, i) => this.decode(zeroOf(t.elem), e, t.elem, { parent: ctx, index: i }));
      }
      case 'struct': {
        if (v === null) return current;
        if (!isObject(v)) {
          this.#typeError(jsonKind(v), t, ctx);
          return current;
        }
        const out: Record<string, unknown> = isObject(current) ? current : {};
        const fields = fieldIndex(t);
        for (const k of this.#keys(v, this.sortStructs)) {
          const f = fields.get(k);
          const child: Context = { parent: ctx, field: { name: k, struct: t.name } };
          if (!f) {
            this.unknown.push(fieldPath(child));
            continue;
          }
          if (v[k] === null && f.pointer) delete out[k];
          else out[k] = this.decode(f.pointer ? (out[k] ?? zeroOf(f.type)) : out[k], v[k], f.type, child);
        }
        return out;
      }
    }
  }
}

// plain turns GoNumberLiterals back into numbers in place (a raw field keeps the JSON value).
function plain(v: unknown): unknown {
  if (v instanceof GoNumberLiteral) return Number(v.raw);
  if (Array.isArray(v))
    v.forEach((e, i) => {
      v[i] = plain(e);
    });
  else if (isObject(v)) for (const k of Object.keys(v)) v[k] = plain(v[k]);
  return v;
}

/** zeroOf is a Go type's zero value in this module's representation (undefined: nil map, slice, zero time). */
function zeroOf(t: GoType): unknown {
  switch (t.kind) {
    case 'string':
      return '';
    case 'int':
      return 0;
    case 'bool':
      return false;
    case 'struct':
      return {};
    default:
      return undefined;
  }
}

/**
 * goUnmarshal decodes `json` (a parsed JSON value) into the Go type `t`; throws GoDecodeError with Go's text.
 * The result is in wire form (toUnstructured).
 */
export function goUnmarshal(json: unknown, t: GoType, opts: GoUnmarshalOptions): GoUnmarshalResult {
  const run = (sortStructs: boolean): { d: Decoder; value: unknown; fatal?: Fatal } => {
    const d = new Decoder(opts.sortKeys, sortStructs);
    try {
      return { d, value: d.decode(zeroOf(t), json, t, ROOT) };
    } catch (e) {
      if (e instanceof Fatal) return { d, value: undefined, fatal: e };
      throw e;
    }
  };
  let r = run(false);
  // Only which error comes first and the unknown fields' order depend on the order members are visited in.
  if (opts.sortKeys && (r.fatal || r.d.saved !== undefined || r.d.unknown.length > 0)) r = run(true);
  if (r.fatal) throw new GoDecodeError(r.fatal.message);
  if (r.d.saved !== undefined) throw new GoDecodeError(r.d.saved);
  return { value: toUnstructured(r.value, t), unknownFields: r.d.unknown };
}

/**
 * goDecodes tells, without building anything, whether goUnmarshal would decode `json` into `t` without an error
 * (a type error or a time that does not parse; the order members are visited in does not matter for that).
 */
export function goDecodes(v: unknown, t: GoType): boolean {
  if (v === null) return true;
  switch (t.kind) {
    case 'string':
      return typeof v === 'string';
    case 'bool':
      return typeof v === 'boolean';
    case 'int': {
      const [lo, hi] = INT_RANGE[t.name];
      if (v instanceof GoNumberLiteral) {
        if (!INT_SYNTAX.test(v.raw)) return false;
        const n = BigInt(v.raw);
        return n >= BigInt(lo) && n < BigInt(hi);
      }
      return typeof v === 'number' && Number.isInteger(v) && v >= lo && v < hi;
    }
    case 'time':
      return typeof v === 'string' && parseGoTime(v).ok;
    case 'raw':
      return true;
    case 'map':
      if (!isObject(v)) return false;
      for (const k in v) if (Object.hasOwn(v, k) && !goDecodes(v[k], t.elem)) return false;
      return true;
    case 'slice':
      return Array.isArray(v) && v.every((e) => goDecodes(e, t.elem));
    case 'struct':
      if (!isObject(v)) return false;
      for (const f of t.fields) if (Object.hasOwn(v, f.json) && !goDecodes(v[f.json], f.type)) return false;
      return true;
  }
}

function isZero(v: unknown, t: GoType): boolean {
  switch (t.kind) {
    case 'string':
      return v === '' || v === undefined;
    case 'int':
      return v === 0 || v === undefined;
    case 'bool':
      return v === false || v === undefined;
    case 'map':
      return !isObject(v) || Object.keys(v).length === 0;
    case 'slice':
      return !Array.isArray(v) || v.length === 0;
    default:
      return v === undefined;
  }
}

/** toUnstructured writes a decoded Go value as DefaultUnstructuredConverter.ToUnstructured does. */
export function toUnstructured(v: unknown, t: GoType): unknown {
  switch (t.kind) {
    case 'time':
      return v === undefined ? null : formatGoTime(v as number);
    case 'raw':
      return v === undefined ? null : v;
    case 'map': {
      if (!isObject(v)) return null;
      const out: Record<string, unknown> = {};
      for (const k in v) if (Object.hasOwn(v, k)) setMember(out, k, toUnstructured(v[k], t.elem));
      return out;
    }
    case 'slice':
      return Array.isArray(v) ? v.map((e) => toUnstructured(e, t.elem)) : null;
    case 'struct': {
      const o = isObject(v) ? v : {};
      const out: Record<string, unknown> = {};
      for (const f of t.fields) {
        const fv = o[f.json];
        if (f.pointer ? fv === undefined : f.omitEmpty && isZero(fv, f.type)) continue;
        out[f.json] = toUnstructured(fv ?? zeroOf(f.type), f.type);
      }
      return out;
    }
    default:
      return v;
  }
}
