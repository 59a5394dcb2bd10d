/**
 * @module admission/formats
 * The string formats kube-apiserver validates in CRD schemas (apiextensions validation/formats.go: the formats of
 * strfmt.Default, plus k8s-short-name and k8s-long-name since 1.34) and a checker for each, after kube-openapi's
 * strfmt and its forked govalidator. Names are normalized as go-openapi does (dashes removed: `date-time` is
 * `datetime`). Any other format — `quantity` included, which kube 1.37 warns is unrecognized — is ignored.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { isDNS1123Label, isDNS1123Subdomain } from '../apis/meta/validation.js';

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const DATE_TIME_CLOCK = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(([.,][0-9]+)?)(z|([+-][0-9]{2}:[0-9]{2}))$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const HEXCOLOR = /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const BYTE_RANGE = '(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])';
const RGBCOLOR = new RegExp(`^rgb\\(\\s*${BYTE_RANGE}\\s*,\\s*${BYTE_RANGE}\\s*,\\s*${BYTE_RANGE}\\s*\\)$`);
const SSN = /^\d{3}[- ]?\d{2}[- ]?\d{4}$/;
// net.ParseMAC: 6, 8 or 20 octets, as pairs split by one kind of separator (`:` or `-`), dotted quads, or bare hex.
const MAC =
  /^(?:[0-9a-fA-F]{2}([:-])[0-9a-fA-F]{2}(?:\1[0-9a-fA-F]{2}){4}(?:(?:\1[0-9a-fA-F]{2}){2}|(?:\1[0-9a-fA-F]{2}){14})?|[0-9a-fA-F]{4}(?:\.[0-9a-fA-F]{4}){2}(?:\.[0-9a-fA-F]{4}|(?:\.[0-9a-fA-F]{4}){7})?|[0-9a-fA-F]{12}|[0-9a-fA-F]{16}|[0-9a-fA-F]{40})$/;
const CREDIT_CARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/;
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
// strfmt's scala-style durations: any `<n> <unit>` inside the text counts, units by name or by a long prefix.
const DURATION_MATCH = /((?:-\s?)?\d+)\s*([A-Za-zµ]+)/g;
const TIME_UNITS = [
  ['ns', 'nano'],
  ['us', 'µs', 'micro'],
  ['ms', 'milli'],
  ['s', 'sec'],
  ['m', 'min'],
  ['h', 'hr', 'hour'],
  ['d', 'day'],
  ['w', 'wk', 'week'],
];

// isSloppyIPv4 is netutils.ParseIPSloppy for dotted quads: leading zeros are allowed (and read as decimal).
const isSloppyIPv4 = (s: string) => /^\d{1,3}(\.\d{1,3}){3}$/.test(s) && s.split('.').every((p) => Number(p) <= 255 && p.length <= 3);

function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1) return false;
  const days = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= days[mo - 1]!;
}

// isDateTime is strfmt.IsDateTime: a date, a `t`, and a clock with seconds and a zone, compared textually.
function isDateTime(str: string): boolean {
  if (str.length < 4) return false;
  const parts = str.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = DATE_TIME_CLOCK.exec(parts[1]!);
  return !!m && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

// isDuration is strfmt.ParseDuration: Go's time.ParseDuration, else at least one `<n><unit>` match anywhere.
function isDuration(s: string): boolean {
  if (GO_DURATION.test(s) || s === '0' || s === '+0' || s === '-0') return true;
  for (const m of s.matchAll(DURATION_MATCH)) {
    const unit = m[2]!.toLowerCase();
    for (const variants of TIME_UNITS) {
      const last = variants.length - 1;
      if (variants.some((v, i) => (i === last && unit.startsWith(v)) || v === unit)) return true;
    }
  }
  return false;
}

function isCIDR(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  if (isSloppyIPv4(ip)) return Number(bits) <= 32;
  return isIPv6(ip) && !ip.includes('%') && Number(bits) <= 128;
}

function isEmail(s: string): boolean {
  const angle = /^[^<>]*<([^<>]+)>$/.exec(s);
  const addr = angle ? angle[1]! : s;
  return /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+$/.test(addr) && !addr.startsWith('.') && !addr.includes('..');
}

// isRequestURI is url.ParseRequestURI: an absolute URI (with a scheme) or an absolute path, no control characters.
function isRequestURI(s: string): boolean {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(s)) return false;
  if (s.startsWith('/')) return true;
  const m = /^[a-zA-Z][a-zA-Z0-9+.-]*:(.*)$/.exec(s);
  if (!m) return false;
  const rest = m[1]!;
  if (rest.startsWith('//')) {
    const authority = rest.slice(2).split(/[/?#]/)[0]!;
    const host = authority.slice(authority.lastIndexOf('@') + 1);
    if (/[\s{}|\\^`"<>]/.test(host)) return false;
  }
  return true;
}

function isbn10(s: string): boolean {
  const v = s.replace(/[\s-]/g, '');
  if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(v)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(v[i]);
  sum += v[9] === 'X' ? 100 : 10 * Number(v[9]);
  return sum % 11 === 0;
}

function isbn13(s: string): boolean {
  const v = s.replace(/[\s-]/g, '');
  if (!/^[0-9]{13}$/.test(v)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(v[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(v[12]);
}

function isCreditCard(s: string): boolean {
  const v = s.replace(/[^0-9]/g, '');
  if (!CREDIT_CARD.test(v)) return false;
  let sum = 0;
  let double = false;
  for (let i = v.length - 1; i >= 0; i--) {
    let d = Number(v[i]);
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

const CHECKERS: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isRequestURI,
  email: isEmail,
  hostname: (s) => HOSTNAME.test(s) && Buffer.byteLength(s) <= 255 && s.split('.').every((p) => Buffer.byteLength(p) <= 63),
  ipv4: (s) => isSloppyIPv4(s) || (s.includes('.') && isIPv6(s) && !s.includes('%')),
  ipv6: (s) => s.includes(':') && (isIPv6(s) || isIPv4(s)) && !s.includes('%'),
  cidr: isCIDR,
  mac: (s) => MAC.test(s),
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isbn10(s) || isbn13(s),
  isbn10,
  isbn13,
  creditcard: isCreditCard,
  ssn: (s) => s.length === 11 && SSN.test(s),
  hexcolor: (s) => HEXCOLOR.test(s),
  rgbcolor: (s) => RGBCOLOR.test(s),
  byte: (s) => BASE64.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
  k8sshortname: (s) => isDNS1123Label(s).length === 0,
  k8slongname: (s) => isDNS1123Subdomain(s).length === 0,
};

const normalize = (format: string) => format.replace(/-/g, '');

/** knownFormat tells whether kube keeps (and checks) a string format. */
export const knownFormat = (format: string): boolean => Object.hasOwn(CHECKERS, normalize(format));

/** formatValid checks a string against a known format (unknown formats accept everything). */
export function formatValid(format: string, value: string): boolean {
  const check = CHECKERS[normalize(format)];
  return check ? check(value) : true;
}
