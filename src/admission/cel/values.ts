/**
 * @module admission/cel/values
 * JSON values turned into CEL values by their schema, as UnstructuredToVal does: integers are CEL ints (bigint)
 * even when JSON wrote them as 1.0, numbers doubles, objects maps keyed by the escaped field names, the resource
 * root's metadata cut down to name and generateName, date-time/duration strings as timestamps/durations.
 */
import { celEnv, isCelError, parse, plan, type CelInput } from '@bufbuild/cel';
import type { JSONSchema } from '../../apis/meta/json-schema.js';
import { escapeName, isIntOrString, schemaType } from './types.js';

// One tiny program each, so the timestamp and duration values are the library's own.
const env = celEnv({ variables: {} });
const mkTimestamp = plan(env, parse('timestamp(x)'));
const mkDuration = plan(env, parse('duration(x)'));

function viaProgram(p: (ctx?: Record<string, CelInput>) => unknown, x: string): CelInput {
  const r = p({ x });
  return isCelError(r) ? x : (r as CelInput);
}

/** genericToCel converts a value of no known schema (preserve-unknown, int-or-string): whole numbers are ints. */
export function genericToCel(v: unknown): CelInput {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(genericToCel);
  if (typeof v === 'object') {
    const m = new Map<string, CelInput>();
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) m.set(k, genericToCel(x));
    return m;
  }
  return null;
}

/** toCel converts `v` (valid against `s`) to the CEL value rules see; `root` marks a resource root. */
export function toCel(v: unknown, s: JSONSchema | undefined, root = false): CelInput {
  if (v === null || v === undefined) return null;
  if (!s || isIntOrString(s)) return genericToCel(v);
  const embedded = root || s['x-kubernetes-embedded-resource'] === true;
  if (typeof v === 'number') {
    if (s.type === 'integer' && Number.isInteger(v)) return BigInt(v);
    if (s.type === 'number') return v;
    return genericToCel(v);
  }
  if (typeof v === 'string') {
    if (s.type === 'string') {
      if (s.format === 'date-time') return viaProgram(mkTimestamp, v);
      if (s.format === 'date') return viaProgram(mkTimestamp, `${v}T00:00:00Z`);
      if (s.format === 'duration') return viaProgram(mkDuration, v);
      if (s.format === 'byte') return Buffer.from(v, 'base64');
    }
    return v;
  }
  if (typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map((x) => toCel(x, s.items, s.items?.['x-kubernetes-embedded-resource'] === true));
  if (typeof v === 'object') {
    const obj = v as Record<string, unknown>;
    const m = new Map<string, CelInput>();
    if (s.properties || embedded) {
      for (const [k, x] of Object.entries(obj)) {
        if (embedded && k === 'metadata') {
          m.set(k, embeddedMeta(x));
          continue;
        }
        if (embedded && (k === 'apiVersion' || k === 'kind')) {
          m.set(k, genericToCel(x));
          continue;
        }
        const prop = s.properties?.[k];
        const esc = escapeName(k);
        // only declared, typed fields are part of the CEL object
        if (esc === undefined || !prop || !schemaType(prop, prop['x-kubernetes-embedded-resource'] === true)) continue;
        m.set(esc, toCel(x, prop, prop['x-kubernetes-embedded-resource'] === true));
      }
      return m;
    }
    if (typeof s.additionalProperties === 'object') {
      const add = s.additionalProperties;
      for (const [k, x] of Object.entries(obj)) m.set(k, toCel(x, add, add['x-kubernetes-embedded-resource'] === true));
      return m;
    }
    return genericToCel(v);
  }
  return null;
}

/** embeddedMeta keeps what kube shows CEL of an object's metadata: name and generateName. */
function embeddedMeta(x: unknown): CelInput {
  const m = new Map<string, CelInput>();
  if (x && typeof x === 'object') {
    const meta = x as Record<string, unknown>;
    if (typeof meta.name === 'string') m.set('name', meta.name);
    if (typeof meta.generateName === 'string') m.set('generateName', meta.generateName);
  }
  return m;
}
