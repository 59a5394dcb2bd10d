/**
 * @module admission/cel/lib/conversions
 * Standard functions whose failures @bufbuild/cel words differently from cel-go (or does not fail at all):
 * int/uint/double of a string parsed as Go's strconv does, and the strings extension's split with a limit (Go's
 * SplitN), charAt and substring with cel-go's range errors. Same names and argument types, so they replace the library's own.
 */
import { celFunc, celMethod, CelScalar, celUint, type CelFunc } from '@bufbuild/cel';

const { STRING, INT, UINT, DOUBLE, DYN } = CelScalar;
const conversion = (to: string) => new Error(`type conversion error from 'string' to '${to}'`);
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const GO_FLOAT = /^[+-]?((\d+(_\d+)*)?\.?\d*([eE][+-]?\d+)?|[Ii][Nn][Ff]([Ii][Nn][Ii][Tt][Yy])?|[Nn][Aa][Nn]|0[xX][0-9a-fA-F.]+[pP][+-]?\d+)$/;

export const conversionFuncs: CelFunc[] = [
  celFunc('int', [STRING], INT, (s) => {
    if (!/^[+-]?\d+$/.test(s)) throw conversion('int');
    const v = BigInt(s);
    if (v < INT64_MIN || v > INT64_MAX) throw conversion('int');
    return v;
  }),
  celFunc('uint', [STRING], UINT, (s) => {
    if (!/^\+?\d+$/.test(s)) throw conversion('uint');
    const v = BigInt(s);
    if (v > 2n ** 64n - 1n) throw conversion('uint');
    return celUint(v);
  }),
  celFunc('double', [STRING], DOUBLE, (s) => {
    if (!GO_FLOAT.test(s) || s === '' || /^[+-]?\.?$/.test(s)) throw conversion('double');
    if (/inf/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
    if (/nan/i.test(s)) return NaN;
    return Number(s.replace(/_/g, ''));
  }),
  // Go's strings.SplitN: at most n parts, the last holding the rest; 0 gives none, a negative n all
  celMethod('split', STRING, [STRING, INT], DYN, function (sep, n) {
    if (n === 0n) return [];
    const all = sep === '' ? [...this] : this.split(sep);
    if (n < 0n || BigInt(all.length) <= n) return all;
    const k = Number(n);
    if (sep === '') return [...all.slice(0, k - 1), all.slice(k - 1).join('')];
    return [...all.slice(0, k - 1), all.slice(k - 1).join(sep)];
  }),
  celMethod('charAt', STRING, [INT], STRING, function (i) {
    const cps = [...this];
    if (i < 0n || i > BigInt(cps.length)) throw new Error(`index out of range: ${i}`);
    return cps[Number(i)] ?? '';
  }),
  celMethod('substring', STRING, [INT], STRING, function (start) {
    const cps = [...this];
    if (start < 0n || start > BigInt(cps.length)) throw new Error(`index out of range: ${start}`);
    return cps.slice(Number(start)).join('');
  }),
  celMethod('substring', STRING, [INT, INT], STRING, function (start, end) {
    const cps = [...this];
    if (start < 0n || start > BigInt(cps.length)) throw new Error(`index out of range: ${start}`);
    if (end < 0n || end > BigInt(cps.length)) throw new Error(`index out of range: ${end}`);
    if (start > end) throw new Error(`invalid substring range. start: ${start}, end: ${end}`);
    return cps.slice(Number(start), Number(end)).join('');
  }),
];
