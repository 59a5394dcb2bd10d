/**
 * @module registry/go-json
 * JSON text as Go's encoding/json reads and writes it, for the JSON patch handler (registry/json-patch.ts): there,
 * kube-apiserver compares values by their JSON *text* and reports duplicate members, so a plain JSON.parse, which
 * keeps neither the text of a value nor its duplicates, cannot give the same answers.
 * - decodeGoJson reads a document keeping each scalar's source text and every object member in order, duplicates
 *   included; it accepts what Go's json.Valid accepts (RFC 8259, at most 10000 levels of nesting).
 * - goMarshal writes a JavaScript value as json.Marshal writes a map[string]interface{}: keys sorted, strings
 *   HTML-safe (`<`, `>`, `&`, U+2028, U+2029 escaped).
 * - goQuote is strconv.Quote (fmt's %q), used where Go messages quote a value.
 */

/** GoScalar is a string, number or boolean with its JSON text as written. `kind` is how Go names the JSON type. */
export interface GoScalar {
  readonly kind: 'string' | 'number' | 'bool';
  readonly raw: string;
  readonly value: string | number | boolean;
}

/** GoObject keeps every member in document order, duplicates included (Go keeps the last one). */
export interface GoObject {
  readonly kind: 'object';
  readonly entries: ReadonlyArray<readonly [string, GoValue]>;
}

/** GoArray is a JSON array. */
export interface GoArray {
  readonly kind: 'array';
  readonly items: readonly GoValue[];
}

/** GoValue is a decoded JSON value; JavaScript null is the JSON null literal. */
export type GoValue = GoScalar | GoObject | GoArray | null;

/** GoJsonSyntaxError is a document json.Valid would refuse. */
export class GoJsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at offset ${offset}`);
  }
}

// encoding/json's scanner refuses deeper documents (maxNestingDepth in scanner.go).
const MAX_NESTING_DEPTH = 10000;

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const utf8 = new TextDecoder();

type Frame = { kind: 'object'; entries: Array<[string, GoValue]>; key: string } | { kind: 'array'; items: GoValue[] };

/**
 * decodeGoJson parses JSON text (bytes or a string). It is iterative, so the 10000 levels Go allows cannot overflow
 * the JavaScript stack.
 */
export function decodeGoJson(input: string | Uint8Array): GoValue {
  const b = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const n = b.length;
  let i = 0;
  const fail = (what: string): never => {
    throw new GoJsonSyntaxError(i >= n ? 'unexpected end of JSON input' : `${what}: unexpected byte 0x${b[i]!.toString(16).padStart(2, '0')}`, i);
  };
  const skipSpace = () => {
    while (i < n && SPACE.has(b[i]!)) i++;
  };
  const expect = (c: number, what: string) => {
    if (b[i] !== c) fail(what);
    i++;
  };

  // readString reads a string literal starting at its opening quote and returns its raw text and value.
  const readString = (): { raw: string; value: string } => {
    const start = i;
    i++;
    let escaped = false;
    for (;;) {
      if (i >= n) fail('in string literal');
      const c = b[i]!;
      if (c === 0x22) break;
      if (c < 0x20) fail('in string literal');
      if (c === 0x5c) {
        escaped = true;
        i++;
        const e = b[i];
        if (e === 0x75) {
          for (let k = 1; k <= 4; k++)
            if (!isHex(b[i + k] ?? -1)) {
              i += k;
              fail('in \\u escape');
            }
          i += 5;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(String.fromCharCode(e))) fail('in string escape code');
      }
      i++;
    }
    i++;
    const raw = utf8.decode(b.subarray(start, i));
    const body = raw.slice(1, -1);
    return { raw, value: escaped ? unescapeGo(body) : body };
  };

  // readNumber reads a number literal (-?int frac? exp?) as the scanner's number states accept it.
  const readNumber = (): GoScalar => {
    const start = i;
    if (b[i] === 0x2d) i++;
    if (b[i] === 0x30) i++;
    else if (isDigit(b[i] ?? -1)) while (isDigit(b[i] ?? -1)) i++;
    else fail('in numeric literal');
    if (b[i] === 0x2e) {
      i++;
      if (!isDigit(b[i] ?? -1)) fail('after decimal point in numeric literal');
      while (isDigit(b[i] ?? -1)) i++;
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      i++;
      if (b[i] === 0x2b || b[i] === 0x2d) i++;
      if (!isDigit(b[i] ?? -1)) fail('in exponent of numeric literal');
      while (isDigit(b[i] ?? -1)) i++;
    }
    const raw = utf8.decode(b.subarray(start, i));
    return { kind: 'number', raw, value: Number(raw) };
  };

  const readLiteral = (word: string): void => {
    for (let k = 0; k < word.length; k++, i++) if (b[i] !== word.charCodeAt(k)) fail(`in literal ${word}`);
  };

  const stack: Frame[] = [];
  const push = (f: Frame) => {
    if (stack.length + 1 > MAX_NESTING_DEPTH) fail('exceeded max depth');
    stack.push(f);
  };
  // readKey reads `"key" :` inside an object.
  const readKey = (top: Frame & { kind: 'object' }) => {
    skipSpace();
    if (b[i] !== 0x22) fail('looking for beginning of object key string');
    top.key = readString().value;
    skipSpace();
    expect(0x3a, 'after object key');
  };

  for (;;) {
    // A value begins here.
    skipSpace();
    if (i >= n) fail('looking for beginning of value');
    const c = b[i]!;
    let value: GoValue;
    if (c === 0x7b) {
      i++;
      const frame: Frame = { kind: 'object', entries: [], key: '' };
      push(frame);
      skipSpace();
      if (b[i] !== 0x7d) {
        readKey(frame);
        continue;
      }
      i++;
      stack.pop();
      value = { kind: 'object', entries: frame.entries };
    } else if (c === 0x5b) {
      i++;
      const frame: Frame = { kind: 'array', items: [] };
      push(frame);
      skipSpace();
      if (b[i] !== 0x5d) continue;
      i++;
      stack.pop();
      value = { kind: 'array', items: frame.items };
    } else if (c === 0x22) {
      const s = readString();
      value = { kind: 'string', raw: s.raw, value: s.value };
    } else if (c === 0x2d || isDigit(c)) {
      value = readNumber();
    } else if (c === 0x74) {
      readLiteral('true');
      value = { kind: 'bool', raw: 'true', value: true };
    } else if (c === 0x66) {
      readLiteral('false');
      value = { kind: 'bool', raw: 'false', value: false };
    } else if (c === 0x6e) {
      readLiteral('null');
      value = null;
    } else {
      return fail('looking for beginning of value');
    }

    // The value ends here: hand it to its container, closing every container that ends with it.
    for (;;) {
      const top = stack.at(-1);
      if (!top) {
        skipSpace();
        if (i < n) fail('after top-level value');
        return value;
      }
      if (top.kind === 'object') top.entries.push([top.key, value]);
      else top.items.push(value);
      skipSpace();
      const sep = b[i];
      if (sep === 0x2c) {
        i++;
        if (top.kind === 'object') readKey(top);
        break;
      }
      if (top.kind === 'object' ? sep === 0x7d : sep === 0x5d) {
        i++;
        stack.pop();
        value = top.kind === 'object' ? { kind: 'object', entries: top.entries } : { kind: 'array', items: top.items };
        continue;
      }
      fail(top.kind === 'object' ? 'after object key:value pair' : 'after array element');
    }
  }
}

// unescapeGo decodes the escapes of a string literal's body as Go's unquote does: an unpaired surrogate is U+FFFD.
function unescapeGo(body: string): string {
  let out = '';
  for (let k = 0; k < body.length; k++) {
    const ch = body[k]!;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const e = body[++k]!;
    if (e !== 'u') {
      out += ({ b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' } as Record<string, string>)[e] ?? e;
      continue;
    }
    const cu = parseInt(body.slice(k + 1, k + 5), 16);
    k += 4;
    if (cu < 0xd800 || cu >= 0xe000) {
      out += String.fromCharCode(cu);
      continue;
    }
    // A surrogate: valid only as a high one directly followed by an escaped low one.
    const next = body.slice(k + 1, k + 3) === '\\u' ? parseInt(body.slice(k + 3, k + 7), 16) : NaN;
    if (cu < 0xdc00 && next >= 0xdc00 && next < 0xe000) {
      out += String.fromCharCode(cu, next);
      k += 6;
    } else {
      out += '\ufffd';
    }
  }
  return out;
}

/** goString encodes a string as encoding/json does (HTML-safe, \b \f \n \r \t short escapes, bad UTF-16 as U+FFFD). */
export function goString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (cp < 0x20) out += SHORT_ESCAPES[ch] ?? `\\u00${cp.toString(16).padStart(2, '0')}`;
    else if (ch === '<' || ch === '>' || ch === '&' || cp === 0x2028 || cp === 0x2029) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else if (cp >= 0xd800 && cp < 0xe000) out += '\\ufffd';
    else out += ch;
  }
  return `${out}"`;
}

const SHORT_ESCAPES: Record<string, string> = { '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * htmlSafe makes the JSON text of a value HTML-safe as json.Marshal does when it copies a json.RawMessage: the only
 * characters it rewrites can appear in strings only, so a plain replacement is exact.
 */
export function htmlSafe(raw: string): string {
  return raw.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`);
}

/** goMarshal encodes a JSON-compatible JavaScript value as json.Marshal encodes the same map/slice/scalar tree. */
export function goMarshal(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return goString(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(goMarshal).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort(compareUtf8);
    return `{${keys.map((k) => `${goString(k)}:${goMarshal(o[k])}`).join(',')}}`;
  }
  return 'null';
}

/**
 * compareUtf8 orders strings by their UTF-8 bytes, as Go sorts map keys. UTF-8 byte order is code point order, so
 * the code units are compared directly up to the first difference; only where a surrogate is involved there (a
 * code point past U+FFFF, or a lone surrogate that encodes as U+FFFD) are the bytes compared. It runs for every
 * key of every write (pruning, strict decoding), so it allocates nothing in the usual case.
 */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  const x = i < a.length ? a.charCodeAt(i) : -1;
  const y = i < b.length ? b.charCodeAt(i) : -1;
  const surrogate = (u: number) => u >= 0xd800 && u < 0xe000;
  // A prefix ending in a high surrogate may pair with the next unit of the longer string.
  const before = i > 0 ? a.charCodeAt(i - 1) : -1;
  if (!surrogate(x) && !surrogate(y) && !surrogate(before)) return x - y;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** goQuote is strconv.Quote: printable runes as they are, everything else escaped Go's way. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp === 0x20 || (cp > 0x7e && PRINTABLE.test(ch)) || (cp > 0x20 && cp < 0x7f)) out += ch;
    else if (GO_ESCAPES[ch]) out += GO_ESCAPES[ch];
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp >= 0xd800 && cp < 0xe000) out += '\\ufffd';
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

// unicode.IsPrint: letters, marks, numbers, punctuation and symbols (the ASCII space is handled apart).
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u;
const GO_ESCAPES: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };
