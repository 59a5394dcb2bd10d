/**
 * @module admission/cel/lib/collections
 * Kubernetes' lists library (isSorted, sum, min, max, indexOf, lastIndexOf), cel-go's sets extension
 * (sets.contains, sets.equivalent, sets.intersects), the regex library (find, findAll) and optionals
 * (optional.of/ofNonZeroValue/none, hasValue, value, orValue, or, and the `.?`/`[?]` accessors rewritten to
 * k8s.optSelect/k8s.optIndex), as @bufbuild/cel functions.
 */
import { celFunc, celMethod, CelScalar, isCelList, isCelMap, type CelFunc, type CelInput, type CelValue } from '@bufbuild/cel';
import { noOverload, optGet, optNone, optOf } from './opaque.js';
import { celEquals, celLess } from './compare.js';
import { compileRe2 } from './re2.js';

const { DYN, STRING, INT, BOOL } = CelScalar;

function items(v: unknown, fn: string): CelValue[] {
  if (!isCelList(v)) throw noOverload(fn);
  return [...v];
}

function sum(list: CelValue[]): CelInput {
  if (list.length === 0) return 0n;
  let acc: CelValue = list[0]!;
  for (const x of list.slice(1)) {
    if (typeof acc === 'bigint' && typeof x === 'bigint') {
      const r: bigint = acc + x;
      if (r > 9223372036854775807n || r < -9223372036854775808n) throw new Error('integer overflow');
      acc = r;
    } else if (typeof acc === 'number' && typeof x === 'number') acc = acc + x;
    else throw noOverload('sum');
  }
  return acc as CelInput;
}

function extreme(list: CelValue[], fn: string, pickLess: boolean): CelInput {
  if (list.length === 0) throw new Error(`${fn} called on empty list`);
  let best: CelValue = list[0]!;
  for (const x of list.slice(1)) if (pickLess ? celLess(x, best) : celLess(best, x)) best = x;
  return best as CelInput;
}

export const listFuncs: CelFunc[] = [
  celMethod('isSorted', DYN, [], BOOL, function () {
    const l = items(this, 'isSorted');
    for (let i = 1; i < l.length; i++) if (celLess(l[i]!, l[i - 1]!)) return false;
    return true;
  }),
  celMethod('sum', DYN, [], DYN, function () {
    return sum(items(this, 'sum'));
  }),
  celMethod('min', DYN, [], DYN, function () {
    return extreme(items(this, 'min'), 'min', true);
  }),
  celMethod('max', DYN, [], DYN, function () {
    return extreme(items(this, 'max'), 'max', false);
  }),
  celMethod('indexOf', DYN, [DYN], INT, function (x) {
    return BigInt(items(this, 'indexOf').findIndex((y) => celEquals(y, x)));
  }),
  celMethod('lastIndexOf', DYN, [DYN], INT, function (x) {
    const l = items(this, 'lastIndexOf');
    for (let i = l.length - 1; i >= 0; i--) if (celEquals(l[i]!, x)) return BigInt(i);
    return -1n;
  }),
];

const has = (l: CelValue[], x: CelValue) => l.some((y) => celEquals(y, x));

export const setFuncs: CelFunc[] = [
  celFunc('sets.contains', [DYN, DYN], BOOL, (a, b) => {
    const la = items(a, 'sets.contains');
    return items(b, 'sets.contains').every((x) => has(la, x));
  }),
  celFunc('sets.equivalent', [DYN, DYN], BOOL, (a, b) => {
    const la = items(a, 'sets.equivalent');
    const lb = items(b, 'sets.equivalent');
    return la.every((x) => has(lb, x)) && lb.every((x) => has(la, x));
  }),
  celFunc('sets.intersects', [DYN, DYN], BOOL, (a, b) => {
    const la = items(a, 'sets.intersects');
    return items(b, 'sets.intersects').some((x) => has(la, x));
  }),
];

export const regexFuncs: CelFunc[] = [
  celMethod('find', STRING, [STRING], STRING, function (re) {
    const m = compileRe2(re).exec(this);
    return m ? m[0] : '';
  }),
  celMethod('findAll', STRING, [STRING], DYN, function (re) {
    return [...this.matchAll(compileRe2(re, 'g'))].map((m) => m[0]);
  }),
  celMethod('findAll', STRING, [STRING, INT], DYN, function (re, n) {
    const all = [...this.matchAll(compileRe2(re, 'g'))].map((m) => m[0]);
    return n < 0n ? all : all.slice(0, Number(n));
  }),
];

function isZero(v: CelValue): boolean {
  if (v === null || v === false || v === 0n || v === 0 || v === '') return true;
  if (isCelList(v)) return v.size === 0;
  if (isCelMap(v)) return v.size === 0;
  if (v instanceof Uint8Array) return v.length === 0;
  return false;
}

function opt(v: unknown, fn: string): [boolean, CelValue | undefined] {
  const o = optGet(v);
  if (!o) throw noOverload(fn);
  return o;
}

/** optional field/key access: absent gives none, present gives of(value); an optional operand chains. */
function optAccess(target: CelValue, key: CelValue, fn: string): CelInput {
  const o = optGet(target);
  if (o) {
    if (!o[0]) return optNone();
    target = o[1]!;
  }
  if (isCelMap(target)) {
    const v = target.get(key as string);
    return v === undefined ? optNone() : optOf(v as CelInput);
  }
  if (isCelList(target) && typeof key === 'bigint') {
    const v = target.get(Number(key));
    return v === undefined ? optNone() : optOf(v as CelInput);
  }
  throw noOverload(fn);
}

export const optionalFuncs: CelFunc[] = [
  celFunc('optional.of', [DYN], DYN, (v) => optOf(v as CelInput)),
  celFunc('optional.ofNonZeroValue', [DYN], DYN, (v) => (isZero(v) ? optNone() : optOf(v as CelInput))),
  celFunc('optional.none', [], DYN, () => optNone()),
  celMethod('hasValue', DYN, [], BOOL, function () {
    return opt(this, 'hasValue')[0];
  }),
  celMethod('value', DYN, [], DYN, function () {
    const [ok, v] = opt(this, 'value');
    if (!ok) throw new Error('optional.none() dereference');
    return v as CelInput;
  }),
  celMethod('orValue', DYN, [DYN], DYN, function (d) {
    const [ok, v] = opt(this, 'orValue');
    return (ok ? v : d) as CelInput;
  }),
  celMethod('or', DYN, [DYN], DYN, function (other) {
    const [ok] = opt(this, 'or');
    opt(other, 'or');
    return (ok ? this : other) as CelInput;
  }),
  celFunc('optional.unwrap', [DYN], DYN, (l) =>
    items(l, 'optional.unwrap').flatMap((o) => {
      const [ok, v] = opt(o, 'optional.unwrap');
      return ok ? [v as CelInput] : [];
    }),
  ),
  celFunc('k8s.optList', [DYN, DYN], DYN, (l, idx) => {
    const optional = new Set(items(idx, '[?_]').map((i) => Number(i)));
    return items(l, '[?_]').flatMap((v, i) => {
      if (!optional.has(i)) return [v as CelInput];
      const [ok, x] = opt(v, '[?_]');
      return ok ? [x as CelInput] : [];
    });
  }),
  celFunc('k8s.optMapLit', [DYN, DYN], DYN, (m, keys) => {
    if (!isCelMap(m)) throw noOverload('{?_: _}');
    const optional = items(keys, '{?_: _}');
    const out = new Map<CelInput, CelInput>();
    for (const [k, v] of m) {
      if (!optional.some((o) => o === k)) {
        out.set(k as CelInput, v as CelInput);
        continue;
      }
      const [ok, x] = opt(v, '{?_: _}');
      if (ok) out.set(k as CelInput, x as CelInput);
    }
    return out as never;
  }),
  celFunc('k8s.optSelect', [DYN, STRING], DYN, (t, f) => optAccess(t, f, '_?._')),
  celFunc('k8s.optIndex', [DYN, DYN], DYN, (t, k) => optAccess(t, k, '_[?_]')),
];
