/**
 * @module admission/cel/lib/opaque
 * Kubernetes' own CEL types (Quantity, URL, IP, CIDR, Semver, Format, optionals) carried through @bufbuild/cel as
 * maps with a marker key, since the library has no custom value types; the library functions unwrap them. The
 * checker keeps them apart statically, so no rule can reach the marker as a map.
 */
import { celMap, isCelMap, type CelInput, type CelValue } from '@bufbuild/cel';

const MARK = '@k8s';

/** opaque wraps `data` as a value of the Kubernetes type `kind`. */
export function opaque(kind: string, data: CelInput): CelValue {
  return celMap(
    new Map<string, CelInput>([
      [MARK, kind],
      ['v', data],
    ]),
  ) as CelValue;
}

/** unwrap returns the data of a `kind` value, or undefined when `v` is no such value. */
export function unwrap(v: unknown, kind: string): CelValue | undefined {
  if (!isCelMap(v) || v.get(MARK) !== kind) return undefined;
  return v.get('v');
}

/** kindOf names the Kubernetes type of `v`, if it is one. */
export function kindOf(v: unknown): string | undefined {
  if (!isCelMap(v)) return undefined;
  const k = v.get(MARK);
  return typeof k === 'string' ? k : undefined;
}

/** noOverload is cel-go's runtime error for a call with arguments of the wrong types. */
export function noOverload(name: string): Error {
  return new Error(`no such overload: ${name}`);
}

/** need unwraps or throws the no-overload error. */
export function need(v: unknown, kind: string, fn: string): CelValue {
  const d = unwrap(v, kind);
  if (d === undefined) throw noOverload(fn);
  return d;
}

/** OPT_NONE is the one empty optional. */
export const NONE_MARK = 'optional.none';
export function optNone(): CelValue {
  return celMap(new Map<string, CelInput>([[MARK, NONE_MARK]])) as CelValue;
}
export function optOf(v: CelInput): CelValue {
  return opaque('optional', v);
}
/** optGet: [present, value] of an optional, or undefined for a non-optional. */
export function optGet(v: unknown): [boolean, CelValue | undefined] | undefined {
  const k = kindOf(v);
  if (k === NONE_MARK) return [false, undefined];
  if (k === 'optional') return [true, unwrap(v, 'optional')];
  return undefined;
}
