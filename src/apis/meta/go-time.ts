/**
 * @module apis/meta/go-time
 * metav1.Time as kube-apiserver reads and writes it (k8s.io/apimachinery pkg/apis/meta/v1/time.go): UnmarshalJSON is
 * Go's `time.Parse(time.RFC3339, s)`, whose general parser (Go src/time/format.go `parse`) accepts a little more than
 * RFC 3339 (one-digit hours, any number of fractional digits) and words its errors in its own way
 * (`parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`); ToUnstructured writes the instant
 * in UTC at second precision. Both are reproduced here for the one layout metav1 uses.
 */

/** RFC3339_LAYOUT is Go's time.RFC3339 layout, which appears in every parse error. */
export const RFC3339_LAYOUT = '2006-01-02T15:04:05Z07:00';

/** GoTimeResult is a parsed instant (seconds since the epoch, UTC) or Go's ParseError text. */
export type GoTimeResult = { ok: true; unixSeconds: number } | { ok: false; error: string };

// The layout split as time.nextStdChunk splits it: literal prefix, then the std element's own text.
const CHUNKS: ReadonlyArray<readonly [prefix: string, std: Std, text: string]> = [
  ['', 'year', '2006'],
  ['-', 'month', '01'],
  ['-', 'day', '02'],
  ['T', 'hour', '15'],
  [':', 'minute', '04'],
  [':', 'second', '05'],
  ['', 'zone', 'Z07:00'],
];
type Std = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'zone';

const isDigitAt = (s: string, i: number) => i < s.length && s.charCodeAt(i) >= 0x30 && s.charCodeAt(i) <= 0x39;

// getnum is time.getnum: one or two digits (fixed: exactly two).
function getnum(s: string, fixed: boolean): [number, string, boolean] {
  if (!isDigitAt(s, 0)) return [0, s, false];
  if (!isDigitAt(s, 1)) return fixed ? [0, s, false] : [s.charCodeAt(0) - 48, s.slice(1), true];
  return [(s.charCodeAt(0) - 48) * 10 + (s.charCodeAt(1) - 48), s.slice(2), true];
}

// atoi is time.atoi: an optional sign, then digits only.
function atoi(s: string): number | undefined {
  const body = s[0] === '-' || s[0] === '+' ? s.slice(1) : s;
  if (!/^[0-9]*$/.test(body)) return undefined;
  const n = body === '' ? 0 : Number(body);
  return s[0] === '-' ? -n : n;
}

/** goTimeQuote is the time package's own quote: ASCII printable as is, every other byte as \xNN. */
export function goTimeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (c >= 0x80 || c < 0x20) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else {
      if (ch === '"' || ch === '\\') out += '\\';
      out += ch;
    }
  }
  return `${out}"`;
}

const parseError = (value: string, layoutElem: string, valueElem: string): GoTimeResult => ({
  ok: false,
  error: `parsing time ${goTimeQuote(value)} as ${goTimeQuote(RFC3339_LAYOUT)}: cannot parse ${goTimeQuote(valueElem)} as ${goTimeQuote(layoutElem)}`,
});
const messageError = (value: string, message: string): GoTimeResult => ({ ok: false, error: `parsing time ${goTimeQuote(value)}${message}` });

const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const daysIn = (month: number, year: number) => (month === 2 && isLeap(year) ? 29 : (DAYS[month - 1] as number));

// unixSeconds is time.Date(...).Unix() in UTC, for any year (Date.UTC maps years 0-99 to 1900-1999).
function unixSeconds(year: number, month: number, day: number, hour: number, min: number, sec: number): number {
  const d = new Date(Date.UTC(2000, month - 1, day, hour, min, sec));
  d.setUTCFullYear(year);
  return Math.floor(d.getTime() / 1000);
}

/** parseGoTime is `time.Parse(time.RFC3339, value)`: the instant, or Go's error text. */
export function parseGoTime(value: string): GoTimeResult {
  let rest = value;
  let year = 0;
  let month = 1;
  let day = 1;
  let hour = 0;
  let min = 0;
  let sec = 0;
  let offset = 0;
  for (const [prefix, std, text] of CHUNKS) {
    for (const c of prefix) {
      if (rest.length === 0 || rest[0] !== c) return parseError(value, prefix, rest);
      rest = rest.slice(1);
    }
    const hold = rest;
    let ok = true;
    let range = '';
    switch (std) {
      case 'year': {
        if (rest.length < 4 || !isDigitAt(rest, 0)) {
          ok = false;
          break;
        }
        const y = atoi(rest.slice(0, 4));
        rest = rest.slice(4);
        if (y === undefined) ok = false;
        else year = y;
        break;
      }
      case 'month':
        [month, rest, ok] = getnum(rest, true);
        if (ok && (month <= 0 || month > 12)) range = 'month';
        break;
      case 'day':
        [day, rest, ok] = getnum(rest, true);
        break;
      case 'hour':
        [hour, rest, ok] = getnum(rest, false);
        if (hour < 0 || hour >= 24) range = 'hour';
        break;
      case 'minute':
        [min, rest, ok] = getnum(rest, true);
        if (min < 0 || min >= 60) range = 'minute';
        break;
      case 'second':
        [sec, rest, ok] = getnum(rest, true);
        if (!ok) break;
        if (sec < 0 || sec >= 60) {
          range = 'second';
          break;
        }
        // A fractional second the layout does not have is read and dropped (metav1.Time keeps whole seconds).
        if (rest.length >= 2 && (rest[0] === '.' || rest[0] === ',') && isDigitAt(rest, 1)) {
          let n = 2;
          while (isDigitAt(rest, n)) n++;
          rest = rest.slice(n);
        }
        break;
      case 'zone': {
        if (rest.length >= 1 && rest[0] === 'Z') {
          rest = rest.slice(1);
          break;
        }
        if (rest.length < 6 || rest[3] !== ':') {
          ok = false;
          break;
        }
        const sign = rest[0];
        const [hr, , okH] = getnum(rest.slice(1, 3), true);
        const [mm, , okM] = okH ? getnum(rest.slice(4, 6), true) : [0, '', false];
        rest = rest.slice(6);
        ok = okH && okM;
        if (hr > 24) range = 'time zone offset hour';
        if (mm > 60) range = 'time zone offset minute';
        offset = (hr * 60 + mm) * 60;
        if (sign === '-') offset = -offset;
        else if (sign !== '+') ok = false;
        break;
      }
    }
    if (range) return messageError(value, `: ${range} out of range`);
    if (!ok) return parseError(value, text, hold);
  }
  if (rest.length !== 0) return messageError(value, `: extra text: ${goTimeQuote(rest)}`);
  if (day < 1 || day > daysIn(month, year)) return messageError(value, ': day out of range');
  return { ok: true, unixSeconds: unixSeconds(year, month, day, hour, min, sec) - offset };
}

/** formatGoTime is metav1.Time's wire form: RFC 3339 in UTC at second precision (`2006-01-02T15:04:05Z`). */
export function formatGoTime(unixSeconds: number): string {
  const d = new Date(unixSeconds * 1000);
  const y = d.getUTCFullYear();
  const two = (n: number) => String(n).padStart(2, '0');
  const year = y < 0 ? `-${String(-y).padStart(4, '0')}` : String(y).padStart(4, '0');
  return `${year}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}T${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}Z`;
}

/** rfc3339 formats a time at second precision in UTC, as metav1.Time marshals (now, in a write). */
export function rfc3339(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`;
}
