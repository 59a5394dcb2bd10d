/**
 * @module admission/cel/lib/quantity
 * Kubernetes' quantity library: quantity(), isQuantity() and the Quantity methods, on an exact rational value
 * (numerator/denominator) parsed as resource.ParseQuantity reads `1.5Gi`, `100m`, `1e3`.
 */
import { celFunc, celMethod, CelScalar, type CelFunc, type CelValue } from '@bufbuild/cel';
import { need, opaque } from './opaque.js';

const { DYN, STRING, BOOL, INT, DOUBLE } = CelScalar;
const PATTERN = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const BIN: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DEC: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

/** dec: quantities written as a fraction with a binary suffix (`1.5Gi`), which never convert to an integer. */
const dec = new Set<string>();

/** Q is num/den, den > 0. */
export interface Q {
  num: bigint;
  den: bigint;
}

const pow = (b: bigint, e: number) => b ** BigInt(e);

/** parseQuantity reads a quantity or returns undefined. */
export function parseQuantity(s: string): Q | undefined {
  const m = PATTERN.exec(s);
  if (!m || s.length === 0) return undefined;
  const [, numStr, suffix] = m as unknown as [string, string, string];
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(numStr)) return undefined;
  const neg = numStr.startsWith('-');
  const digits = numStr.replace(/^[+-]/, '');
  const [ip, fp = ''] = digits.split('.');
  let num = BigInt(`${ip || '0'}${fp}` || '0');
  let den = pow(10n, fp.length);
  // a fraction with a binary suffix is kept as an inf.Dec by resource.Quantity, which AsInt64 refuses
  if (suffix in BIN && fp.replace(/0+$/, '') !== '') dec.add(`${neg ? '-' : ''}${digits}${suffix}`);
  if (suffix in BIN) num *= pow(2n, BIN[suffix]!);
  else if (suffix in DEC) {
    const e = DEC[suffix]!;
    if (e >= 0) num *= pow(10n, e);
    else den *= pow(10n, -e);
  } else if (/^[eE][-+]?\d+$/.test(suffix)) {
    const e = Number(suffix.slice(1));
    if (e >= 0) num *= pow(10n, e);
    else den *= pow(10n, -e);
  } else return undefined;
  return { num: neg ? -num : num, den };
}

const cmp = (a: Q, b: Q) => {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
};
const add = (a: Q, b: Q): Q => ({ num: a.num * b.den + b.num * a.den, den: a.den * b.den });
const neg = (a: Q): Q => ({ num: -a.num, den: a.den });
const INT64_MAX = 9223372036854775807n;

function q(v: unknown, fn: string): Q {
  const [num, den] = (need(v, 'Quantity', fn) as string).split('/');
  return { num: BigInt(num!), den: BigInt(den!) };
}
const isDec = (v: unknown) => (need(v, 'Quantity', 'asInteger') as string).endsWith('/dec');
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));
/** wrap stores the reduced fraction as text, so equal quantities are equal values (`1` == `1000m`); `/dec` marks
 * one that cannot become an integer. */
function wrap(x: Q, decimal = false): CelValue {
  const g = gcd(x.num, x.den) || 1n;
  return opaque('Quantity', `${x.num / g}/${x.den / g}${decimal ? '/dec' : ''}`);
}
function toQ(v: unknown, fn: string): Q {
  return typeof v === 'bigint' ? { num: v, den: 1n } : q(v, fn);
}

export const quantityFuncs: CelFunc[] = [
  celFunc('quantity', [STRING], DYN, (s) => {
    const x = parseQuantity(s);
    if (!x) throw new Error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    return wrap(x, dec.has(s.replace(/^\+/, '')));
  }),
  celFunc('isQuantity', [STRING], BOOL, (s) => parseQuantity(s) !== undefined),
  celMethod('sign', DYN, [], INT, function () {
    return BigInt(Math.sign(Number(q(this, 'sign').num)));
  }),
  celMethod('isInteger', DYN, [], BOOL, function () {
    const x = q(this, 'isInteger');
    return !isDec(this) && x.num % x.den === 0n && x.num / x.den <= INT64_MAX && x.num / x.den >= -INT64_MAX - 1n;
  }),
  celMethod('asInteger', DYN, [], INT, function () {
    const x = q(this, 'asInteger');
    const i = x.num / x.den;
    if (isDec(this) || x.num % x.den !== 0n || i > INT64_MAX || i < -INT64_MAX - 1n) throw new Error('cannot convert value to integer');
    return i;
  }),
  celMethod('asApproximateFloat', DYN, [], DOUBLE, function () {
    const x = q(this, 'asApproximateFloat');
    return Number(x.num) / Number(x.den);
  }),
  celMethod('add', DYN, [DYN], DYN, function (o) {
    return wrap(add(q(this, 'add'), toQ(o, 'add')));
  }),
  celMethod('sub', DYN, [DYN], DYN, function (o) {
    return wrap(add(q(this, 'sub'), neg(toQ(o, 'sub'))));
  }),
];

/** quantityCompare serves isLessThan/isGreaterThan/compareTo when both sides are quantities. */
export function quantityCompare(a: unknown, b: unknown): number | undefined {
  try {
    return cmp(q(a, 'compareTo'), q(b, 'compareTo'));
  } catch {
    return undefined;
  }
}
