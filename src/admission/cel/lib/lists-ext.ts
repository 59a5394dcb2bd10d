/**
 * @module admission/cel/lib/lists-ext
 * cel-go's lists extension as kube 1.37's environment declares it (slice, flatten, distinct, sort, reverse,
 * first, last, lists.range, and sortBy through k8s.sortByKeys), plus the helpers the two-variable transforms and
 * optMap/optFlatMap are rewritten onto (k8s.toMap, k8s.mergeMaps).
 */
import { celFunc, celMethod, CelScalar, isCelList, isCelMap, type CelFunc, type CelInput, type CelValue } from '@bufbuild/cel';
import { celEquals, celLess } from './compare.js';
import { noOverload, optNone, optOf } from './opaque.js';

const { DYN, INT } = CelScalar;

function list(v: unknown, fn: string): CelValue[] {
  if (!isCelList(v)) throw noOverload(fn);
  return [...v];
}

function flatten(l: CelValue[], depth: number): CelValue[] {
  if (depth < 0) throw new Error('level must be non-negative');
  const out: CelValue[] = [];
  for (const x of l) {
    if (isCelList(x) && depth > 0) out.push(...flatten([...x], depth - 1));
    else out.push(x);
  }
  return out;
}

function sorted(l: CelValue[], keys: CelValue[]): CelValue[] {
  const idx = l.map((_, i) => i);
  idx.sort((a, b) => (celLess(keys[a]!, keys[b]!) ? -1 : celLess(keys[b]!, keys[a]!) ? 1 : 0));
  return idx.map((i) => l[i]!);
}

export const listsExtFuncs: CelFunc[] = [
  celMethod('slice', DYN, [INT, INT], DYN, function (from, to) {
    const l = list(this, 'slice');
    if (from < 0n || to < 0n) throw new Error(`cannot slice(${from}, ${to}), negative indexes not supported`);
    if (from > to) throw new Error(`cannot slice(${from}, ${to}), start index must be less than or equal to end index`);
    if (to > BigInt(l.length)) throw new Error(`cannot slice(${from}, ${to}), list is length ${l.length}`);
    return l.slice(Number(from), Number(to)) as CelInput[];
  }),
  celMethod('flatten', DYN, [], DYN, function () {
    return flatten(list(this, 'flatten'), 1) as CelInput[];
  }),
  celMethod('flatten', DYN, [INT], DYN, function (d) {
    return flatten(list(this, 'flatten'), Number(d)) as CelInput[];
  }),
  celMethod('distinct', DYN, [], DYN, function () {
    const out: CelValue[] = [];
    for (const x of list(this, 'distinct')) if (!out.some((y) => celEquals(x, y))) out.push(x);
    return out as CelInput[];
  }),
  celMethod('sort', DYN, [], DYN, function () {
    const l = list(this, 'sort');
    return sorted(l, l) as CelInput[];
  }),
  celMethod('reverse', DYN, [], DYN, function () {
    return list(this, 'reverse').reverse() as CelInput[];
  }),
  celMethod('first', DYN, [], DYN, function () {
    const l = list(this, 'first');
    return l.length ? optOf(l[0] as CelInput) : optNone();
  }),
  celMethod('last', DYN, [], DYN, function () {
    const l = list(this, 'last');
    return l.length ? optOf(l[l.length - 1] as CelInput) : optNone();
  }),
  celFunc('lists.range', [INT], DYN, (n) => Array.from({ length: Math.max(0, Number(n)) }, (_, i) => BigInt(i))),
  celFunc('k8s.sortByKeys', [DYN, DYN], DYN, (l, keys) => sorted(list(l, 'sortBy'), list(keys, 'sortBy')) as CelInput[]),
  celFunc('k8s.toMap', [DYN], DYN, (pairs) => {
    const m = new Map<CelInput, CelInput>();
    for (const p of list(pairs, 'transformMap')) {
      const [k, v] = list(p, 'transformMap');
      m.set(k as CelInput, v as CelInput);
    }
    return m as never;
  }),
  celFunc('k8s.mergeMaps', [DYN], DYN, (maps) => {
    const m = new Map<CelInput, CelInput>();
    for (const x of list(maps, 'transformMapEntry')) {
      if (!isCelMap(x)) throw noOverload('transformMapEntry');
      for (const [k, v] of x) {
        if (m.has(k as CelInput)) throw new Error(`insert failed: key ${String(k)} already exists`);
        m.set(k as CelInput, v as CelInput);
      }
    }
    return m as never;
  }),
];
