/**
 * @module admission/embedded
 * Embedded resources (`x-kubernetes-embedded-resource: true`) the way apiextensions-apiserver treats them
 * (schema/objectmeta): while decoding, their apiVersion and kind must be strings and their metadata must decode as
 * metav1.ObjectMeta, whose stored form replaces it (unknown metadata fields dropped and reported); when validating,
 * apiVersion and kind are required and well formed and the metadata is validated as ObjectMeta (names only as path
 * segments, a namespace only if one is set).
 */
import { decodeObjectMeta, GoDecodeError } from '../apis/meta/decode.js';
import { FieldPath, type FieldError } from '../apis/meta/field-path.js';
import type { ObjectMeta } from '../apis/meta/types.js';
import {
  isDNS1123Label,
  nameIsPathSegment,
  validateAnnotations,
  validateFinalizers,
  validateLabels,
  validateOwnerReferences,
} from '../apis/meta/validation.js';
import { fieldErr } from './go-values.js';
import type { Node } from './structural.js';

/**
 * CoercionError is a body kube's decoder refuses (400): the text is the field error, e.g. `spec.template.apiVersion:
 * Invalid value: 5: must be a string`; kube answers `<Kind> in version "<v>" cannot be handled as a <Kind>: <text>`.
 */
export class CoercionError extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** hasEmbedded tells whether a schema has an embedded resource anywhere (most have none: nothing to walk). */
export function hasEmbedded(s: Node, seen = new Set<Node>()): boolean {
  if (seen.has(s)) return false;
  seen.add(s);
  if (s.embedded) return true;
  if (s.items && hasEmbedded(s.items, seen)) return true;
  if (s.additional && hasEmbedded(s.additional, seen)) return true;
  for (const p of s.properties?.values() ?? []) if (hasEmbedded(p, seen)) return true;
  return false;
}

// eachChild calls `f` for every member or item of `x` the schema describes, with its path (a property as `.k`, an
// additionalProperties member as `[k]`, an item as `[i]`), as objectmeta's walks do.
function eachChild(path: string, s: Node, x: unknown, f: (path: string, s: Node, v: unknown) => void): void {
  if (Array.isArray(x)) {
    if (s.items) for (let i = 0; i < x.length; i++) f(`${path}[${i}]`, s.items, x[i]);
  } else if (isObject(x)) {
    for (const k in x) {
      if (!Object.hasOwn(x, k)) continue;
      const p = s.properties?.get(k);
      if (p) f(path ? `${path}.${k}` : k, p, x[k]);
      else if (s.additional) f(`${path}[${k}]`, s.additional, x[k]);
    }
  }
}

/**
 * coerceEmbedded is objectmeta.Coerce while decoding a request: it replaces each embedded metadata by its stored
 * form, appends the unknown metadata fields to `unknown`, and throws CoercionError for what does not decode.
 */
export function coerceEmbedded(path: string, s: Node, x: unknown, unknown: string[]): void {
  if (s.embedded && isObject(x)) {
    for (const k of ['apiVersion', 'kind'] as const) {
      if (Object.hasOwn(x, k) && typeof x[k] !== 'string') throw new CoercionError(fieldErr.invalid(`${path}.${k}`, x[k], 'must be a string').message);
    }
    if (Object.hasOwn(x, 'metadata')) {
      const at = `${path}.metadata`;
      try {
        const decoded = decodeObjectMeta(x['metadata'], at);
        const meta: ObjectMeta = decoded.meta;
        if (meta.creationTimestamp === null || meta.creationTimestamp === undefined) delete meta.creationTimestamp;
        x['metadata'] = meta;
        unknown.push(...decoded.unknownFields);
      } catch (e) {
        if (e instanceof GoDecodeError) throw new CoercionError(fieldErr.invalid(at, x['metadata'], e.message).message);
        throw e;
      }
    }
  }
  eachChild(path, s, x, (p, c, v) => coerceEmbedded(p, c, v, unknown));
}

/** validateEmbedded is objectmeta.Validate: every embedded resource's type and metadata, at any depth. */
export function validateEmbedded(path: string, s: Node, x: unknown, errs: FieldError[]): void {
  if (s.embedded && isObject(x)) validateResource(path, x, errs);
  eachChild(path, s, x, (p, c, v) => validateEmbedded(p, c, v, errs));
}

function validateResource(path: string, x: Record<string, unknown>, errs: FieldError[]): void {
  if (!Object.hasOwn(x, 'apiVersion')) errs.push(fieldErr.required(`${path}.apiVersion`));
  if (!Object.hasOwn(x, 'kind')) errs.push(fieldErr.required(`${path}.kind`));
  for (const k in x) {
    const v = x[k];
    if (k === 'apiVersion') {
      const at = `${path}.apiVersion`;
      if (typeof v !== 'string') errs.push(fieldErr.invalid(at, v, 'must be a string'));
      else if (v === '') errs.push(fieldErr.invalid(at, v, 'must not be empty'));
      else if (v !== '/' && v.split('/').length > 2) errs.push(fieldErr.invalid(at, v, `unexpected GroupVersion string: ${v}`));
    } else if (k === 'kind') {
      const at = `${path}.kind`;
      if (typeof v !== 'string') errs.push(fieldErr.invalid(at, v, 'must be a string'));
      else if (v === '') errs.push(fieldErr.invalid(at, v, 'must not be empty'));
      else {
        const bad = dns1035Label(v.toLowerCase());
        if (bad.length > 0) errs.push(fieldErr.invalid(at, v, `may have mixed case, but should otherwise match: ${bad.join(',')}`));
      }
    } else if (k === 'metadata') {
      try {
        errs.push(...validateMeta(`${path}.metadata`, decodeObjectMeta(v).meta));
      } catch (e) {
        if (!(e instanceof GoDecodeError)) throw e;
        errs.push(fieldErr.invalid(`${path}.metadata`, v, e.message));
      }
    }
  }
}

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

// dns1035Label is IsDNS1035Label's messages.
function dns1035Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1035_LABEL.test(v)) {
    errs.push(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return errs;
}

// validateMeta is metavalidation.ValidateObjectMeta with path.ValidatePathSegmentName, a namespace required only
// when one is set, and a missing name replaced by a placeholder (an embedded object need not be named).
function validateMeta(at: string, meta: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  const name = meta.name || 'fakename';
  if (meta.generateName)
    for (const msg of nameIsPathSegment(meta.generateName, true)) errs.push(fieldErr.invalid(`${at}.generateName`, meta.generateName, msg));
  for (const msg of nameIsPathSegment(name, false)) errs.push(fieldErr.invalid(`${at}.name`, name, msg));
  if (meta.namespace) for (const msg of isDNS1123Label(meta.namespace)) errs.push(fieldErr.invalid(`${at}.namespace`, meta.namespace, msg));
  if (typeof meta.generation === 'number' && meta.generation < 0)
    errs.push(fieldErr.invalid(`${at}.generation`, meta.generation, 'must be greater than or equal to 0'));
  const fp = (f: string) => new FieldPath(`${at}.${f}`);
  errs.push(
    ...validateLabels(meta.labels, fp('labels')),
    ...validateAnnotations(meta.annotations, fp('annotations')),
    ...validateOwnerReferences(meta.ownerReferences, fp('ownerReferences')),
    ...validateFinalizers(meta.finalizers, fp('finalizers')),
  );
  return errs;
}
