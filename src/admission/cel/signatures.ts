/**
 * @module admission/cel/signatures
 * The declarations the rule checker types calls against: cel-go's standard functions and operators, its strings
 * (version 2), lists and sets extensions, optionals, and Kubernetes' url, regex, quantity, ip, cidr, semver and
 * format libraries, at kube 1.37's environment. A signature answers the result type for argument types, or
 * nothing when no overload fits.
 */
import { FORMAT_NAMES } from './lib/misc.js';
import { T, type CelT } from './types.js';

export const isDyn = (t: CelT) => t.k === 'dyn';
/** TYPE_NAMES are the type identifiers a rule may compare type(x) with. */
export const TYPE_NAMES = new Set(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn']);
/** OPERATORS: each operator function's symbol in the source, where cel-go reports it. */
export const OPERATORS: Record<string, string> = {
  '_==_': '==',
  '_!=_': '!=',
  '_<_': '<',
  '_<=_': '<=',
  '_>_': '>',
  '_>=_': '>=',
  '_+_': '+',
  '_-_': '-',
  '_*_': '*',
  '_/_': '/',
  '_%_': '%',
  '@in': 'in',
  '_&&_': '&&',
  '_||_': '||',
  '_?_:_': '?',
  '_[_]': '[',
};
const NUM = new Set(['int', 'uint', 'double']);

/** same: a is assignable to b, dyn matching anything. */
export function same(a: CelT, b: CelT): boolean {
  if (isDyn(a) || isDyn(b)) return true;
  if (a.k !== b.k) return false;
  if (a.k === 'list' && b.k === 'list') return same(a.elem, b.elem);
  if (a.k === 'map' && b.k === 'map') return same(a.key, b.key) && same(a.val, b.val);
  if (a.k === 'opt' && b.k === 'opt') return same(a.inner, b.inner);
  if (a.k === 'opaque' && b.k === 'opaque') return a.name === b.name;
  return true;
}

const nullable = (t: CelT) => ['dyn', 'null', 'object', 'map', 'list', 'opt', 'timestamp', 'duration'].includes(t.k);

export type Sig = (args: CelT[], target?: CelT) => CelT | undefined;
const fixed =
  (ret: CelT, ...want: CelT[]): Sig =>
  (args) =>
    args.length === want.length && args.every((a, i) => same(a, want[i]!)) ? ret : undefined;
const method =
  (targetKind: CelT, ret: CelT | ((t: CelT) => CelT), ...want: CelT[]): Sig =>
  (args, target) =>
    target && same(target, targetKind) && args.length === want.length && args.every((a, i) => same(a, want[i]!))
      ? typeof ret === 'function'
        ? ret(target)
        : ret
      : undefined;
const anyOf =
  (...sigs: Sig[]): Sig =>
  (args, target) => {
    for (const s of sigs) {
      const r = s(args, target);
      if (r) return r;
    }
    return undefined;
  };
const elemOf = (t: CelT): CelT => (t.k === 'list' ? t.elem : T.dyn);
const LIST_DYN = T.list(T.dyn);
const Q = T.opaque('kubernetes.Quantity');
const URL_T = T.opaque('kubernetes.URL');
const IP = T.opaque('net.IP');
const CIDR = T.opaque('net.CIDR');
const SEMVER = T.opaque('kubernetes.Semver');
const FORMAT = T.opaque('kubernetes.NamedFormat');

const numeric2: Sig = (a) => {
  const [x, y] = a as [CelT, CelT];
  if (isDyn(x)) return y.k === 'dyn' ? T.dyn : NUM.has(y.k) || y.k === 'duration' ? y : undefined;
  if (isDyn(y)) return NUM.has(x.k) || x.k === 'duration' ? x : undefined;
  return NUM.has(x.k) && x.k === y.k ? x : undefined;
};
const ordered: Sig = (a) => {
  const [x, y] = a as [CelT, CelT];
  if (isDyn(x) || isDyn(y)) return T.bool;
  if (NUM.has(x.k) && NUM.has(y.k)) return T.bool;
  return x.k === y.k && ['string', 'bytes', 'bool', 'timestamp', 'duration'].includes(x.k) ? T.bool : undefined;
};
const timeMethods = [
  'getDate',
  'getDayOfMonth',
  'getDayOfWeek',
  'getDayOfYear',
  'getFullYear',
  'getHours',
  'getMilliseconds',
  'getMinutes',
  'getMonth',
  'getSeconds',
];

/** SIGS are the functions a CRD rule may call at kube 1.37's environment, by name. */
export const SIGS: Record<string, Sig> = {
  '_==_': (a) => (same(a[0]!, a[1]!) || (a[0]!.k === 'null' && nullable(a[1]!)) || (a[1]!.k === 'null' && nullable(a[0]!)) ? T.bool : undefined),
  '_<_': ordered,
  '_+_': (a) => {
    const [x, y] = a as [CelT, CelT];
    if (x.k === 'timestamp' && (y.k === 'duration' || isDyn(y))) return T.timestamp;
    if (x.k === 'duration' && y.k === 'timestamp') return T.timestamp;
    if ((x.k === 'string' || x.k === 'bytes' || x.k === 'list') && same(x, y)) return x.k === 'list' && isDyn(elemOf(x)) ? y : x;
    if (isDyn(x) && (y.k === 'string' || y.k === 'bytes' || y.k === 'list')) return y;
    return numeric2(a);
  },
  '_-_': (a) => {
    const [x, y] = a as [CelT, CelT];
    if (x.k === 'timestamp') return y.k === 'timestamp' ? T.duration : y.k === 'duration' || isDyn(y) ? T.timestamp : undefined;
    return numeric2(a);
  },
  '_*_': (a) => (a[0]!.k === 'duration' ? undefined : numeric2(a)),
  '_/_': (a) => (a[0]!.k === 'duration' ? undefined : numeric2(a)),
  '_%_': (a) => {
    const r = numeric2(a);
    return r && (r.k === 'int' || r.k === 'uint' || isDyn(r)) ? r : undefined;
  },
  '-_': (a) => (isDyn(a[0]!) || ['int', 'double', 'duration'].includes(a[0]!.k) ? a[0] : undefined),
  '!_': fixed(T.bool, T.bool),
  '_&&_': fixed(T.bool, T.bool, T.bool),
  '_||_': fixed(T.bool, T.bool, T.bool),
  '@not_strictly_false': fixed(T.bool, T.bool),
  '_?_:_': (a) => (same(a[0]!, T.bool) && same(a[1]!, a[2]!) ? (isDyn(a[1]!) ? a[2] : a[1]) : undefined),
  '_[_]': (a) => {
    const [c, i] = a as [CelT, CelT];
    if (isDyn(c)) return T.dyn;
    if (c.k === 'list') return same(i, T.int) || NUM.has(i.k) ? c.elem : undefined;
    if (c.k === 'map') return same(i, c.key) ? c.val : undefined;
    return undefined;
  },
  '@in': (a) => {
    const [x, c] = a as [CelT, CelT];
    if (isDyn(c)) return T.bool;
    if (c.k === 'list') return same(x, c.elem) ? T.bool : undefined;
    if (c.k === 'map') return same(x, c.key) ? T.bool : undefined;
    return undefined;
  },
  size: (a, t) => {
    const x = t ?? a[0];
    if ((t ? a.length : a.length - 1) !== 0 || !x) return undefined;
    return isDyn(x) || ['string', 'bytes', 'list', 'map'].includes(x.k) ? T.int : undefined;
  },
  matches: anyOf(method(T.string, T.bool, T.string), fixed(T.bool, T.string, T.string)),
  startsWith: method(T.string, T.bool, T.string),
  endsWith: method(T.string, T.bool, T.string),
  contains: method(T.string, T.bool, T.string),
  int: (a) => (a.length === 1 && ['int', 'uint', 'double', 'string', 'timestamp', 'dyn'].includes(a[0]!.k) ? T.int : undefined),
  uint: (a) => (a.length === 1 && ['int', 'uint', 'double', 'string', 'dyn'].includes(a[0]!.k) ? T.uint : undefined),
  double: (a) => (a.length === 1 && ['int', 'uint', 'double', 'string', 'dyn'].includes(a[0]!.k) ? T.double : undefined),
  string: (a) => (a.length === 1 && a[0]!.k !== 'list' && a[0]!.k !== 'map' && a[0]!.k !== 'object' ? T.string : undefined),
  bytes: (a) => (a.length === 1 && ['string', 'bytes', 'dyn'].includes(a[0]!.k) ? T.bytes : undefined),
  bool: (a) => (a.length === 1 && ['string', 'bool', 'dyn'].includes(a[0]!.k) ? T.bool : undefined),
  dyn: (a) => (a.length === 1 ? T.dyn : undefined),
  type: (a) => (a.length === 1 ? T.type : undefined),
  duration: fixed(T.duration, T.string),
  timestamp: anyOf(fixed(T.timestamp, T.string), fixed(T.timestamp, T.int)),
  ...Object.fromEntries(timeMethods.map((m) => [m, anyOf(method(T.timestamp, T.int), method(T.timestamp, T.int, T.string), method(T.duration, T.int))])),
  getHours: anyOf(method(T.timestamp, T.int), method(T.timestamp, T.int, T.string), method(T.duration, T.int)),
  // strings extension, version 2
  charAt: method(T.string, T.string, T.int),
  indexOf: anyOf(method(T.string, T.int, T.string), method(T.string, T.int, T.string, T.int), (a, t) =>
    t?.k === 'list' && a.length === 1 && same(a[0]!, t.elem) ? T.int : undefined,
  ),
  lastIndexOf: anyOf(method(T.string, T.int, T.string), method(T.string, T.int, T.string, T.int), (a, t) =>
    t?.k === 'list' && a.length === 1 && same(a[0]!, t.elem) ? T.int : undefined,
  ),
  lowerAscii: method(T.string, T.string),
  upperAscii: method(T.string, T.string),
  trim: method(T.string, T.string),
  replace: anyOf(method(T.string, T.string, T.string, T.string), method(T.string, T.string, T.string, T.string, T.int)),
  split: anyOf(method(T.string, T.list(T.string), T.string), method(T.string, T.list(T.string), T.string, T.int)),
  substring: anyOf(method(T.string, T.string, T.int), method(T.string, T.string, T.int, T.int)),
  join: anyOf(method(T.list(T.string), T.string), method(T.list(T.string), T.string, T.string)),
  'strings.quote': fixed(T.string, T.string),
  format: method(T.string, T.string, LIST_DYN),
  // reverse on strings came with strings version 3: at kube's version 2 only the lists extension's
  reverse: (a, t) => (t && a.length === 0 && (t.k === 'list' || isDyn(t)) ? t : undefined),
  slice: (a, t) => (t && (t.k === 'list' || isDyn(t)) && a.length === 2 && same(a[0]!, T.int) && same(a[1]!, T.int) ? t : undefined),
  flatten: (a, t) =>
    t && (t.k === 'list' || isDyn(t)) && a.length <= 1
      ? a.length === 0 && t.k === 'list' && t.elem.k === 'list'
        ? t.elem
        : T.list(T.dyn, (t as { size?: number }).size)
      : undefined,
  distinct: (a, t) => (t && (t.k === 'list' || isDyn(t)) && a.length === 0 ? t : undefined),
  sort: (a, t) => (t && (t.k === 'list' || isDyn(t)) && a.length === 0 ? t : undefined),
  first: (a, t) => (t && (t.k === 'list' || isDyn(t)) && a.length === 0 ? T.opt(elemOf(t)) : undefined),
  last: (a, t) => (t && (t.k === 'list' || isDyn(t)) && a.length === 0 ? T.opt(elemOf(t)) : undefined),
  'lists.range': fixed(T.list(T.int), T.int),
  'k8s.sortByKeys': (a) => a[0],
  'k8s.toMap': (a) => T.map(T.dyn, T.dyn, (a[0] as { size?: number }).size),
  'k8s.mergeMaps': (a) => T.map(T.dyn, T.dyn, (a[0] as { size?: number }).size),
  'optional.unwrap': (a) =>
    a.length === 1 && (a[0]!.k === 'list' || isDyn(a[0]!))
      ? T.list(a[0]!.k === 'list' && a[0]!.elem.k === 'opt' ? a[0]!.elem.inner : T.dyn, (a[0] as { size?: number }).size)
      : undefined,
  // lists
  isSorted: (a, t) => (t?.k === 'list' && a.length === 0 ? T.bool : t && isDyn(t) ? T.bool : undefined),
  sum: (a, t) =>
    t?.k === 'list' && a.length === 0 && ['int', 'uint', 'double', 'duration', 'dyn'].includes(t.elem.k) ? t.elem : t && isDyn(t) ? T.dyn : undefined,
  min: (a, t) => (t?.k === 'list' && a.length === 0 ? t.elem : t && isDyn(t) ? T.dyn : undefined),
  max: (a, t) => (t?.k === 'list' && a.length === 0 ? t.elem : t && isDyn(t) ? T.dyn : undefined),
  'sets.contains': fixed(T.bool, LIST_DYN, LIST_DYN),
  'sets.equivalent': fixed(T.bool, LIST_DYN, LIST_DYN),
  'sets.intersects': fixed(T.bool, LIST_DYN, LIST_DYN),
  // regex
  find: method(T.string, T.string, T.string),
  findAll: anyOf(method(T.string, T.list(T.string), T.string), method(T.string, T.list(T.string), T.string, T.int)),
  // url
  url: fixed(URL_T, T.string),
  isURL: fixed(T.bool, T.string),
  getScheme: method(URL_T, T.string),
  getHost: method(URL_T, T.string),
  getHostname: method(URL_T, T.string),
  getPort: method(URL_T, T.string),
  getEscapedPath: method(URL_T, T.string),
  getQuery: method(URL_T, T.map(T.string, T.list(T.string))),
  // quantity
  quantity: fixed(Q, T.string),
  isQuantity: fixed(T.bool, T.string),
  // sign came with a later quantity library: declared, no overload at 1.37's environment
  sign: () => undefined,
  isInteger: method(Q, T.bool),
  asInteger: method(Q, T.int),
  asApproximateFloat: method(Q, T.double),
  add: anyOf(method(Q, Q, Q), method(Q, Q, T.int)),
  sub: anyOf(method(Q, Q, Q), method(Q, Q, T.int)),
  isLessThan: anyOf(method(Q, T.bool, Q), method(SEMVER, T.bool, SEMVER)),
  isGreaterThan: anyOf(method(Q, T.bool, Q), method(SEMVER, T.bool, SEMVER)),
  compareTo: anyOf(method(Q, T.int, Q), method(SEMVER, T.int, SEMVER)),
  // ip and cidr
  ip: anyOf(fixed(IP, T.string), method(CIDR, IP)),
  isIP: fixed(T.bool, T.string),
  'ip.isCanonical': fixed(T.bool, T.string),
  family: method(IP, T.int),
  isUnspecified: method(IP, T.bool),
  isLoopback: method(IP, T.bool),
  isLinkLocalMulticast: method(IP, T.bool),
  isLinkLocalUnicast: method(IP, T.bool),
  isGlobalUnicast: method(IP, T.bool),
  cidr: fixed(CIDR, T.string),
  isCIDR: fixed(T.bool, T.string),
  containsIP: anyOf(method(CIDR, T.bool, IP), method(CIDR, T.bool, T.string)),
  containsCIDR: anyOf(method(CIDR, T.bool, CIDR), method(CIDR, T.bool, T.string)),
  masked: method(CIDR, CIDR),
  prefixLength: method(CIDR, T.int),
  // semver
  semver: anyOf(fixed(SEMVER, T.string), fixed(SEMVER, T.string, T.bool)),
  isSemver: anyOf(fixed(T.bool, T.string), fixed(T.bool, T.string, T.bool)),
  major: method(SEMVER, T.int),
  minor: method(SEMVER, T.int),
  patch: method(SEMVER, T.int),
  // format
  ...Object.fromEntries(FORMAT_NAMES.map((n) => [`format.${n}`, fixed(FORMAT)])),
  'format.named': fixed(T.opt(FORMAT), T.string),
  validate: method(FORMAT, T.opt(T.list(T.string)), T.string),
  // optionals
  'optional.of': (a) => (a.length === 1 ? T.opt(a[0]!) : undefined),
  'optional.ofNonZeroValue': (a) => (a.length === 1 ? T.opt(a[0]!) : undefined),
  'optional.none': (a) => (a.length === 0 ? T.opt(T.dyn) : undefined),
  hasValue: (a, t) => (t && (t.k === 'opt' || isDyn(t)) && a.length === 0 ? T.bool : undefined),
  value: (a, t) => (t && (t.k === 'opt' || isDyn(t)) && a.length === 0 ? (t.k === 'opt' ? t.inner : T.dyn) : undefined),
  orValue: (a, t) =>
    t && (t.k === 'opt' || isDyn(t)) && a.length === 1 && same(t.k === 'opt' ? t.inner : T.dyn, a[0]!)
      ? t.k === 'opt' && !isDyn(t.inner)
        ? t.inner
        : a[0]
      : undefined,
  or: (a, t) => (t && (t.k === 'opt' || isDyn(t)) && a.length === 1 && same(t, a[0]!) ? t : undefined),
  // [key, value] pairs of the two-variable rewrites: each pair remembers both types for p[0] and p[1]
  'k8s.pairs': (a) => {
    const r = a[0]!;
    if (a.length !== 1) return undefined;
    const pair: [CelT, CelT] = r.k === 'list' ? [T.int, r.elem] : r.k === 'map' ? [r.key, r.val] : [T.dyn, T.dyn];
    return T.list({ k: 'list', elem: T.dyn, pair, size: 2 }, (r as { size?: number }).size);
  },
};
SIGS['_!=_'] = SIGS['_==_']!;
for (const op of ['_<=_', '_>_', '_>=_']) SIGS[op] = ordered;
