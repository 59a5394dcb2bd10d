/**
 * @module admission/cel/lib/misc
 * Kubernetes' url, semver and format libraries, and the comparison methods Quantity and Semver share
 * (isLessThan, isGreaterThan, compareTo).
 */
import { celFunc, celMethod, CelScalar, type CelFunc, type CelInput, type CelValue } from '@bufbuild/cel';
import { kindOf, need, noOverload, opaque, optNone, optOf } from './opaque.js';
import { quantityCompare } from './quantity.js';

const { DYN, STRING, BOOL, INT } = CelScalar;

// ---- url
interface Url {
  scheme: string;
  host: string;
  hostname: string;
  port: string;
  path: string;
  query: string;
}
function parseUrl(s: string): Url | undefined {
  if (s.startsWith('/')) return { scheme: '', host: '', hostname: '', port: '', path: s.split('?')[0]!, query: s.split('?')[1] ?? '' };
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(\/\/([^/?#]*))?([^?#]*)(\?([^#]*))?/.exec(s);
  if (!m || /\s/.test(s)) return undefined;
  const host = m[3] ?? '';
  const hm = /^(?:[^@]*@)?(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(host);
  if (!hm) return undefined;
  return { scheme: m[1]!, host: host.replace(/^[^@]*@/, ''), hostname: hm[1]!.replace(/^\[|\]$/g, ''), port: hm[2] ?? '', path: m[4] ?? '', query: m[6] ?? '' };
}
const urlv = (v: unknown, fn: string) => JSON.parse(need(v, 'URL', fn) as string) as Url;

// ---- semver
interface Semver {
  major: bigint;
  minor: bigint;
  patch: bigint;
  pre: string[];
}
function parseSemver(s: string): Semver | undefined {
  const m =
    /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/.exec(
      s,
    );
  if (!m) return undefined;
  return { major: BigInt(m[1]!), minor: BigInt(m[2]!), patch: BigInt(m[3]!), pre: m[4] ? m[4].split('.') : [] };
}
function semverCmp(a: Semver, b: Semver): number {
  for (const k of ['major', 'minor', 'patch'] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  if (!a.pre.length || !b.pre.length) return a.pre.length === b.pre.length ? 0 : a.pre.length ? -1 : 1;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i]!;
    const y = b.pre[i]!;
    if (x === y) continue;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return Math.sign(a.pre.length - b.pre.length);
}
/** semverError words a parse failure as blang/semver does. */
function semverError(s: string): string {
  if (s === '') return 'Version string empty';
  const parts = s.split(/[-+]/)[0]!.split('.');
  if (parts.length !== 3) return 'No Major.Minor.Patch elements found';
  const names = ['major', 'minor', 'patch'];
  for (let i = 0; i < 3; i++) {
    const p = parts[i]!;
    if (!/^\d+$/.test(p)) return `Invalid character(s) found in ${names[i]} number ${JSON.stringify(p)}`;
    if (p.length > 1 && p.startsWith('0'))
      return `${names[i]![0]!.toUpperCase()}${names[i]!.slice(1)} number must not contain leading zeroes ${JSON.stringify(p)}`;
  }
  return `Invalid semver: ${s}`;
}
const semv = (v: unknown, fn: string) => parseSemver(need(v, 'Semver', fn) as string)!;

function compare(a: unknown, b: unknown, fn: string): number {
  if (kindOf(a) === 'Semver' && kindOf(b) === 'Semver') return semverCmp(semv(a, fn), semv(b, fn));
  const q = quantityCompare(a, b);
  if (q === undefined) throw noOverload(fn);
  return q;
}

// ---- format: apimachinery's validators, their messages as kube words them.
const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUB = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const DNS1035 = '[a-z]([-a-z0-9]*[a-z0-9])?';
const maxLen = (n: number) => `must be no more than ${n} characters`;
// apimachinery's RegexError joins its examples with ",  or " (two spaces)
const regexErr = (msg: string, re: string, ex: string[]) => `${msg} (e.g. ${ex.map((e) => `'${e}'`).join(',  or ')}, regex used for validation is '${re}')`;
type Validator = (s: string) => string[];
const label1123: Validator = (s) => [
  ...(s.length > 63 ? [maxLen(63)] : []),
  ...(new RegExp(`^${DNS1123_LABEL}$`).test(s)
    ? []
    : [
        regexErr(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL,
          ['my-name', '123-abc'],
        ),
      ]),
];
const sub1123: Validator = (s) => [
  ...(s.length > 253 ? [maxLen(253)] : []),
  ...(new RegExp(`^${DNS1123_SUB}$`).test(s)
    ? []
    : [
        regexErr(
          "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
          DNS1123_SUB,
          ['example.com'],
        ),
      ]),
];
// kube-apiserver 1.37.2 reported no length error for a 64-character dns1035Label
const label1035: Validator = (s) => [
  ...(new RegExp(`^${DNS1035}$`).test(s)
    ? []
    : [
        regexErr(
          "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
          DNS1035,
          ['my-name', 'abc-123'],
        ),
      ]),
];
// kube-apiserver 1.37.2 reported nothing for the *Prefix formats on any value tried ('A_b.', 'a/b/c', 64 a's, '-x')
const prefix =
  (_v: Validator): Validator =>
  () => [];
const QNAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const qualifiedName: Validator = (s) => {
  const parts = s.split('/');
  const errs: string[] = [];
  let name = s;
  if (parts.length === 2) {
    if (!parts[0]) errs.push('prefix part must be non-empty');
    else errs.push(...sub1123(parts[0]).map((e) => `prefix part ${e}`));
    name = parts[1]!;
  } else if (parts.length > 2) {
    return [
      `${regexErr("a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QNAME, ['MyName', 'my.name', '123-abc'])} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (!name) errs.push('name part must be non-empty');
  else if (Buffer.byteLength(name) > 63) errs.push('name part must be no more than 63 bytes');
  if (name && !new RegExp(`^${QNAME}$`).test(name))
    errs.push(
      `name part ${regexErr("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QNAME, ['MyName', 'my.name', '123-abc'])}`,
    );
  return errs;
};
const labelValue: Validator = (s) => [
  ...(Buffer.byteLength(s) > 63 ? ['must be no more than 63 bytes'] : []),
  ...(s === '' || new RegExp(`^${QNAME}$`).test(s)
    ? []
    : [
        regexErr(
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
          `(${QNAME})?`,
          ['MyValue', 'my_value', '12345'],
        ),
      ]),
];
const FORMATS: Record<string, Validator> = {
  dns1123Label: label1123,
  dns1123Subdomain: sub1123,
  dns1035Label: label1035,
  qualifiedName,
  dns1123LabelPrefix: prefix(label1123),
  dns1123SubdomainPrefix: prefix(sub1123),
  dns1035LabelPrefix: prefix(label1035),
  labelValue,
  uri: (s) => (parseUrl(s) ? [] : [`parse ${JSON.stringify(s)}: invalid URI for request`]),
  uuid: (s) => (/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(s) ? [] : ['does not match the UUID format']),
  byte: (s) => (/^[A-Za-z0-9+/]*={0,2}$/.test(s) && s.length % 4 === 0 ? [] : ['invalid base64']),
  date: (s) => (/^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) ? [] : ['invalid date']),
  datetime: (s) => (/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) ? [] : ['invalid datetime']),
};
/** FORMAT_NAMES are the functions format.<name>() the library declares. */
export const FORMAT_NAMES = Object.keys(FORMATS);

export const miscFuncs: CelFunc[] = [
  celFunc('url', [STRING], DYN, (s) => {
    const u = parseUrl(s);
    if (!u) throw new Error(`URL parse error during conversion from string: parse "${s}": invalid URI for request`);
    return opaque('URL', JSON.stringify(u));
  }),
  celFunc('isURL', [STRING], BOOL, (s) => parseUrl(s) !== undefined),
  celMethod('getScheme', DYN, [], STRING, function () {
    return urlv(this, 'getScheme').scheme;
  }),
  celMethod('getHost', DYN, [], STRING, function () {
    return urlv(this, 'getHost').host;
  }),
  celMethod('getHostname', DYN, [], STRING, function () {
    return urlv(this, 'getHostname').hostname;
  }),
  celMethod('getPort', DYN, [], STRING, function () {
    return urlv(this, 'getPort').port;
  }),
  celMethod('getEscapedPath', DYN, [], STRING, function () {
    return urlv(this, 'getEscapedPath').path;
  }),
  celMethod('getQuery', DYN, [], DYN, function () {
    const m = new Map<string, CelInput>();
    for (const [k, v] of new URLSearchParams(urlv(this, 'getQuery').query)) {
      const l = (m.get(k) as string[] | undefined) ?? [];
      l.push(v);
      m.set(k, l);
    }
    return m;
  }),
  celFunc('semver', [STRING], DYN, (s) => {
    if (!parseSemver(s)) throw new Error(semverError(s));
    return opaque('Semver', s);
  }),
  celFunc('isSemver', [STRING], BOOL, (s) => parseSemver(s) !== undefined),
  celMethod('major', DYN, [], INT, function () {
    return semv(this, 'major').major;
  }),
  celMethod('minor', DYN, [], INT, function () {
    return semv(this, 'minor').minor;
  }),
  celMethod('patch', DYN, [], INT, function () {
    return semv(this, 'patch').patch;
  }),
  celMethod('isLessThan', DYN, [DYN], BOOL, function (o) {
    return compare(this, o, 'isLessThan') < 0;
  }),
  celMethod('isGreaterThan', DYN, [DYN], BOOL, function (o) {
    return compare(this, o, 'isGreaterThan') > 0;
  }),
  celMethod('compareTo', DYN, [DYN], INT, function (o) {
    return BigInt(compare(this, o, 'compareTo'));
  }),
  ...FORMAT_NAMES.map((n) => celFunc(`format.${n}`, [], DYN, () => opaque('Format', n))),
  celFunc('format.named', [STRING], DYN, (n) => (n in FORMATS ? optOf(opaque('Format', n) as CelInput) : optNone())),
  celMethod('validate', DYN, [STRING], DYN, function (s) {
    const errs = FORMATS[need(this, 'Format', 'validate') as string]!(s);
    return errs.length ? optOf(errs) : optNone();
  }),
];

export type { CelValue };
