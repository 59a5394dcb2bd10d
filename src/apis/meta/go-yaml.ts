/**
 * @module apis/meta/go-yaml
 * The YAML kube-apiserver answers for `Accept: application/yaml`: its YAML serializer encodes JSON and converts it
 * with sigs.k8s.io/yaml JSONToYAML, which reads the JSON into plain maps with go-yaml v2 and marshals them again.
 * So the text is go-yaml v2's, for a JSON value: map keys sorted by go-yaml's natural order (not the JSON order),
 * sequences not indented under their key, strings plain when that reads back as the same string, else single-quoted,
 * else double-quoted, multi-line strings as literal blocks, and long scalars folded at the first space past column 80.
 * The `yaml` package cannot be told to make those choices (its folding, quoting and key order differ), so this
 * small emitter makes them; the tests read its output back with the `yaml` package.
 */

const BEST_WIDTH = 80;
const BEST_INDENT = 2;

/** toGoYaml renders a JSON value as go-yaml v2 marshals it (the document ends with a newline). */
export function toGoYaml(value: unknown): string {
  const e = new Emitter();
  e.node(value, 0, 'root');
  e.newline(0);
  // A keep-chomped literal (`|+`) as the last block scalar leaves the document open: go-yaml ends it with `...`.
  if (e.openEnded) e.out.push('...\n');
  return e.out.join('');
}

// ---- what a plain scalar would read back as (go-yaml v2 resolve.go) ----

const MAP_VALUES = new Set([
  'y',
  'Y',
  'yes',
  'Yes',
  'YES',
  'true',
  'True',
  'TRUE',
  'on',
  'On',
  'ON',
  'n',
  'N',
  'no',
  'No',
  'NO',
  'false',
  'False',
  'FALSE',
  'off',
  'Off',
  'OFF',
  '',
  '~',
  'null',
  'Null',
  'NULL',
  '.nan',
  '.NaN',
  '.NAN',
  '.inf',
  '.Inf',
  '.INF',
  '+.inf',
  '+.Inf',
  '+.INF',
  '-.inf',
  '-.Inf',
  '-.INF',
  '<<',
]);
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

// goParsesAsInteger tells whether strconv.ParseInt(s, 0, 64) or ParseUint(s, 0, 64) accepts s.
function goParsesAsInteger(s: string): boolean {
  let body = s;
  let negative = false;
  let signed = false;
  if (body[0] === '+' || body[0] === '-') {
    negative = body[0] === '-';
    signed = true;
    body = body.slice(1);
  }
  let digits = body;
  let base = 10;
  const prefix = body.slice(0, 2).toLowerCase();
  if (prefix === '0x') [base, digits] = [16, body.slice(2)];
  else if (prefix === '0o') [base, digits] = [8, body.slice(2)];
  else if (prefix === '0b') [base, digits] = [2, body.slice(2)];
  else if (body.length > 1 && body[0] === '0') [base, digits] = [8, body.slice(1)];
  const valid = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[base as 2 | 8 | 10 | 16];
  if (!valid.test(digits)) return false;
  const n = BigInt(base === 10 ? digits : `0${base === 16 ? 'x' : base === 8 ? 'o' : 'b'}${digits}`);
  if (negative) return n <= INT64_MAX + 1n;
  return signed ? n <= INT64_MAX : n <= UINT64_MAX;
}

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
const TIMESTAMP_FORMS = [
  /^(\d{4})-(\d{1,2})-(\d{1,2})[Tt](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/,
  /^(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.\d+)?$/,
  /^(\d{4})-(\d{1,2})-(\d{1,2})$/,
];

// isTimestamp is go-yaml's parseTimestamp: one of its layouts, read by time.Parse (so the date must exist).
function isTimestamp(s: string): boolean {
  for (const form of TIMESTAMP_FORMS) {
    const m = form.exec(s);
    if (!m) continue;
    const [y, mo, d, h = 0, mi = 0, sec = 0] = m
      .slice(1)
      .filter((x) => x !== undefined)
      .map(Number);
    if (mo! < 1 || mo! > 12 || d! < 1 || d! > daysIn(y!, mo!)) return false;
    return h <= 23 && mi <= 59 && sec <= 59;
  }
  return false;
}

/** readsAsString tells whether go-yaml would read `s`, written plain, back as the string `s`. */
export function readsAsString(s: string): boolean {
  const c = s[0];
  if (s === '') return false;
  if (c !== undefined && 'yYnNtTfFoO~'.includes(c)) return !MAP_VALUES.has(s);
  if (c === '.') return !MAP_VALUES.has(s) && !(YAML_STYLE_FLOAT.test(s) && Number.isFinite(Number(s)));
  if (c === '+' || c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
    if (MAP_VALUES.has(s)) return false;
    if (isTimestamp(s)) return false;
    const plain = s.replaceAll('_', '');
    if (goParsesAsInteger(plain)) return false;
    if (YAML_STYLE_FLOAT.test(plain) && Number.isFinite(Number(plain))) return false;
    // A float stays a string to base-60 checks below (stringv quotes those too).
    return true;
  }
  return true;
}

const isBase60Float = (s: string) => /^[-+0-9]/.test(s) && s.includes(':') && BASE60_FLOAT.test(s);

/**
 * readBackFromJson is the string go-yaml reads from kube's JSON text of `s`: Go's encoder writes U+0085 (NEL) as it
 * is, and a raw NEL inside a double-quoted YAML scalar is a line break, folded (with the blanks around it) to a space,
 * or to n-1 newlines for n of them in a row. Every other break character reaches go-yaml escaped.
 */
function readBackFromJson(s: string): string {
  if (!s.includes('\u0085')) return s;
  return s.replace(/[ \t]*(\u0085+)[ \t]*/g, (_m, nels: string) => (nels.length === 1 ? ' ' : '\n'.repeat(nels.length - 1)));
}

// ---- the emitter's view of a scalar (libyaml yaml_emitter_analyze_scalar) ----

const isBreak = (c: number) => c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;
const isBlankz = (c: number | undefined) => c === undefined || c === 0x20 || c === 0x09 || isBreak(c);
const isPrintable = (c: number) => c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);

interface Analysis {
  multiline: boolean;
  blockPlain: boolean;
  singleQuoted: boolean;
  block: boolean;
}

function analyze(s: string): Analysis {
  if (s === '') return { multiline: false, blockPlain: true, singleQuoted: true, block: false };
  const cs = Array.from(s, (ch) => ch.codePointAt(0) as number);
  let blockIndicators = s.startsWith('---') || s.startsWith('...');
  let special = false;
  let lineBreaks = false;
  let leadingSpace = false,
    leadingBreak = false,
    trailingSpace = false,
    trailingBreak = false;
  let breakSpace = false,
    spaceBreak = false,
    previousSpace = false,
    previousBreak = false;
  let precededByWhitespace = true;
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i] as number;
    const ch = String.fromCodePoint(c);
    const followedByWhitespace = isBlankz(cs[i + 1]);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(ch)) blockIndicators = true;
      if ((ch === '?' || ch === ':') && followedByWhitespace) blockIndicators = true;
      if (ch === '-' && followedByWhitespace) blockIndicators = true;
    } else {
      if (ch === ':' && followedByWhitespace) blockIndicators = true;
      if (ch === '#' && precededByWhitespace) blockIndicators = true;
    }
    if (!isPrintable(c)) special = true;
    if (isBreak(c)) lineBreaks = true;
    if (c === 0x20) {
      if (i === 0) leadingSpace = true;
      if (i === cs.length - 1) trailingSpace = true;
      if (previousBreak) breakSpace = true;
      previousSpace = true;
      previousBreak = false;
    } else if (isBreak(c)) {
      if (i === 0) leadingBreak = true;
      if (i === cs.length - 1) trailingBreak = true;
      if (previousSpace) spaceBreak = true;
      previousBreak = true;
      previousSpace = false;
    } else {
      previousSpace = false;
      previousBreak = false;
    }
    precededByWhitespace = isBlankz(c);
  }
  let blockPlain = true,
    singleQuoted = true,
    block = true;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) blockPlain = false;
  if (trailingSpace) block = false;
  if (breakSpace) blockPlain = singleQuoted = false;
  if (spaceBreak || special) blockPlain = singleQuoted = block = false;
  if (lineBreaks) blockPlain = false;
  if (blockIndicators) blockPlain = false;
  return { multiline: lineBreaks, blockPlain, singleQuoted, block };
}

// ---- numbers: a JSON number as go-yaml reads it (int, uint or float64) and prints it again ----

function goNumber(n: number): string {
  const text = JSON.stringify(n);
  if (goParsesAsInteger(text)) return text;
  if (!Number.isFinite(n)) return n > 0 ? '.inf' : n < 0 ? '-.inf' : '.nan';
  // strconv.FormatFloat(f, 'g', -1, 64): the shortest digits, in exponent form below 1e-4 and from 1e+6.
  const [mantissa = '0', e = '0'] = Math.abs(n).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const exp = Number(e);
  const sign = n < 0 ? '-' : '';
  if (exp < -4 || exp >= 6) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const x = Math.abs(exp);
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${x < 10 ? '0' : ''}${x}`;
  }
  const dp = exp + 1;
  if (dp <= 0) return `${sign}0.${'0'.repeat(-dp)}${digits}`;
  if (dp >= digits.length) return `${sign}${digits}${'0'.repeat(dp - digits.length)}`;
  return `${sign}${digits.slice(0, dp)}.${digits.slice(dp)}`;
}

// ---- key order (go-yaml v2 sorter.go keyList.Less) ----

const isLetter = (c: string) => /\p{L}/u.test(c);
const isDigit = (c: string) => /\p{Nd}/u.test(c);

/** goKeyLess orders map keys as go-yaml v2 does: letters after other characters, digit runs by their value. */
export function goKeyLess(a: string, b: string): boolean {
  const ar = Array.from(a);
  const br = Array.from(b);
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const ac = ar[i] as string;
    const bc = br[i] as string;
    const al = isLetter(ac);
    const bl = isLetter(bc);
    if (al && bl) return (ac.codePointAt(0) as number) < (bc.codePointAt(0) as number);
    if (al || bl) return bl;
    let an = 0n,
      bn = 0n;
    if (ac === '0' || bc === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j] as string); j--) {
        if (ar[j] !== '0') {
          an = 1n;
          bn = 1n;
          break;
        }
      }
    }
    let ai = i,
      bi = i;
    for (; ai < ar.length && isDigit(ar[ai] as string); ai++) an = an * 10n + BigInt((ar[ai] as string).charCodeAt(0) - 48);
    for (; bi < br.length && isDigit(br[bi] as string); bi++) bn = bn * 10n + BigInt((br[bi] as string).charCodeAt(0) - 48);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return (ac.codePointAt(0) as number) < (bc.codePointAt(0) as number);
  }
  return ar.length < br.length;
}

const goKeyCompare = (a: string, b: string) => (goKeyLess(a, b) ? -1 : goKeyLess(b, a) ? 1 : 0);

/** isSimpleKey is yaml_emitter_check_simple_key for a string: at most 128 bytes, on one line. */
function isSimpleKey(k: string): boolean {
  const s = readBackFromJson(k);
  return Buffer.byteLength(s) <= 128 && !analyze(s).multiline;
}

// ---- writing ----

// biome-ignore-start lint/complexity/useSimpleNumberKeys: code points read as hex, as in go-yaml's emitter
const ESCAPES: Record<number, string> = {
  0x00: '0',
  0x07: 'a',
  0x08: 'b',
  0x09: 't',
  0x0a: 'n',
  0x0b: 'v',
  0x0c: 'f',
  0x0d: 'r',
  0x1b: 'e',
  0x22: '"',
  0x5c: '\\',
  0x85: 'N',
  0xa0: '_',
  0x2028: 'L',
  0x2029: 'P',
};
// biome-ignore-end lint/complexity/useSimpleNumberKeys: code points read as hex

function escapeChar(c: number): string {
  const named = ESCAPES[c];
  if (named !== undefined) return `\\${named}`;
  const hex = c.toString(16).toUpperCase();
  if (c <= 0xff) return `\\x${hex.padStart(2, '0')}`;
  if (c <= 0xffff) return `\\u${hex.padStart(4, '0')}`;
  return `\\U${hex.padStart(8, '0')}`;
}

class Emitter {
  readonly out: string[] = [];
  /** Characters on the current line so far (go-yaml counts characters, not bytes). */
  column = 0;
  openEnded = false;

  write(s: string): void {
    // Any indicator or text after a keep-chomped literal closes it again (libyaml write_indicator).
    if (this.openEnded && /[^ \n]/.test(s)) this.openEnded = false;
    this.out.push(s);
    const nl = s.lastIndexOf('\n');
    this.column = nl < 0 ? this.column + Array.from(s).length : Array.from(s.slice(nl + 1)).length;
  }

  /** newline starts a line at `indent` (a literal block that ended with a break has already started it). */
  /** writeBreak writes a line break character itself (go-yaml keeps U+2028 and U+2029 as they are). */
  writeBreak(ch: string): void {
    this.out.push(ch);
    this.column = 0;
  }

  newline(indent: number): void {
    const last = this.out[this.out.length - 1] ?? '';
    this.write(`${this.column === 0 && isBreak(last.codePointAt(last.length - 1) ?? 0) ? '' : '\n'}${' '.repeat(indent)}`);
  }

  /**
   * node writes a value where it stands: at the top (`root`), after `key:` (`value`, the key at column `indent`)
   * or after `-` (`item`, the dash at column `indent`).
   */
  node(value: unknown, indent: number, at: 'root' | 'value' | 'item'): void {
    const lead = at === 'root' ? '' : ' ';
    if (Array.isArray(value)) {
      if (value.length === 0) return this.write(`${lead}[]`);
      // Under a key the dashes stay at the key's column; in a sequence the first goes on the dash's line.
      const dashes = at === 'item' ? indent + BEST_INDENT : indent;
      if (at === 'value') this.newline(dashes);
      else this.write(lead);
      value.forEach((item, i) => {
        if (i > 0) this.newline(dashes);
        this.write('-');
        this.node(item, dashes, 'item');
      });
      return;
    }
    if (value !== null && typeof value === 'object') {
      const keys = Object.keys(value).sort(goKeyCompare);
      if (keys.length === 0) return this.write(`${lead}{}`);
      const keyIndent = at === 'root' ? 0 : indent + BEST_INDENT;
      if (at === 'value') this.newline(keyIndent);
      else this.write(lead);
      keys.forEach((k, i) => {
        if (i > 0) this.newline(keyIndent);
        const v = (value as Record<string, unknown>)[k];
        if (isSimpleKey(k)) {
          this.scalar(k, keyIndent, true);
          this.write(':');
          this.node(v, keyIndent, 'value');
        } else {
          // A key over 128 bytes, or of several lines, is a complex key: `? key`, then `: value` on the next line.
          this.write('? ');
          this.scalar(k, keyIndent, false);
          this.newline(keyIndent);
          this.write(':');
          this.node(v, keyIndent, 'item');
        }
      });
      return;
    }
    this.write(lead);
    if (typeof value === 'string') this.scalar(value, indent, false);
    else if (typeof value === 'number') this.write(goNumber(value));
    else if (typeof value === 'boolean') this.write(String(value));
    else this.write('null');
  }

  /** scalar writes a string in the style go-yaml picks; `indent` is its parent's, continuation lines go 2 deeper. */
  scalar(text: string, indent: number, key: boolean): void {
    const s = readBackFromJson(text);
    const a = analyze(s);
    let style: 'plain' | 'single' | 'double' | 'literal' = s.includes('\n') ? 'literal' : readsAsString(s) && !isBase60Float(s) ? 'plain' : 'double';
    if (style === 'plain' && !a.blockPlain) style = 'single';
    if (style === 'single' && !a.singleQuoted) style = 'double';
    if (style === 'literal' && (!a.block || key)) style = 'double';
    const contIndent = indent + BEST_INDENT;
    const breaks = !key;
    const cs = Array.from(s);
    switch (style) {
      case 'plain': {
        let spaces = false;
        cs.forEach((ch, i) => {
          if (ch === ' ') {
            if (breaks && !spaces && this.column > BEST_WIDTH && cs[i + 1] !== ' ') this.newline(contIndent);
            else this.write(ch);
            spaces = true;
          } else {
            this.write(ch);
            spaces = false;
          }
        });
        return;
      }
      case 'single': {
        this.write("'");
        let spaces = false;
        let broken = false;
        cs.forEach((ch, i) => {
          if (ch === ' ') {
            if (breaks && !spaces && this.column > BEST_WIDTH && i !== 0 && i !== cs.length - 1 && cs[i + 1] !== ' ') this.newline(contIndent);
            else this.write(ch);
            spaces = true;
          } else if (isBreak(ch.codePointAt(0) as number)) {
            // A line separator is written as it is and the text goes on at the indentation.
            if (!broken && ch === '\n') this.write('\n');
            this.writeBreak(ch);
            broken = true;
          } else {
            if (broken) this.write(' '.repeat(contIndent));
            this.write(ch === "'" ? "''" : ch);
            spaces = false;
            broken = false;
          }
        });
        this.write("'");
        return;
      }
      case 'double': {
        this.write('"');
        let spaces = false;
        cs.forEach((ch, i) => {
          const c = ch.codePointAt(0) as number;
          if (!isPrintable(c) || c === 0xfeff || isBreak(c) || ch === '"' || ch === '\\') {
            this.write(escapeChar(c));
            spaces = false;
          } else if (ch === ' ') {
            if (breaks && !spaces && this.column > BEST_WIDTH && i > 0 && i < cs.length - 1) {
              this.newline(contIndent);
              if (cs[i + 1] === ' ') this.write('\\');
            } else this.write(ch);
            spaces = true;
          } else {
            this.write(ch);
            spaces = false;
          }
        });
        this.write('"');
        return;
      }
      case 'literal': {
        // Hints: an indentation digit when the text starts with a space or break; chomping from its last breaks.
        let hints = cs[0] === ' ' || isBreak((cs[0] as string).codePointAt(0) as number) ? String(BEST_INDENT) : '';
        const last = cs.length - 1;
        const breakAt = (i: number) => i >= 0 && isBreak((cs[i] as string).codePointAt(0) as number);
        this.openEnded = false;
        const keep = breakAt(last) && (last === 0 || breakAt(last - 1));
        if (!breakAt(last)) hints += '-';
        else if (keep) hints += '+';
        this.write(`|${hints}`);
        let lineStart = true;
        this.write('\n');
        for (const ch of cs) {
          if (isBreak(ch.codePointAt(0) as number)) {
            this.writeBreak(ch);
            lineStart = true;
          } else {
            if (lineStart) this.write(' '.repeat(contIndent));
            lineStart = false;
            this.write(ch);
          }
        }
        this.openEnded = keep;
        return;
      }
    }
  }
}
