/**
 * @module apis/meta/json-syntax
 * What kube-apiserver's JSON decoder says about a body's text before any value is built from it. Every decoder it
 * uses (encoding/json, sigs.k8s.io/json) first runs the text through encoding/json's scanner (scanner.go,
 * checkValid), so a malformed body is refused with the scanner's first complaint, word for word:
 * `invalid character '}' looking for beginning of object key string`, `unexpected end of JSON input`,
 * `invalid character '[' exceeded max depth`.
 *
 * - scanJsonShape is the cheap pass made on every body: how deep it nests, and the first number literal that does
 *   not fit a float64 (`1e999`, which JSON.parse would silently turn into Infinity). It never recurses.
 * - jsonSyntaxError replays the scanner to word the error, only once a body is known to be bad.
 *
 * The nesting limit is ours, not Go's 10000: everything that later walks a value here (structuredClone, schema
 * validation, the YAML composer, the managed-fields walk) recurses on the JavaScript stack. Measured through the
 * server, every write path survives 1500 levels; at 2000 a deep managedFields entry or merge patch overflows and an
 * apply patch aborts the process (in the YAML composer), so 500 keeps a margin of three. kube's decoders stop at
 * 10000 with the same words; no Kubernetes object comes near either limit.
 */
import { goQuote } from './go-json.js';

/** MAX_NESTING_DEPTH bounds how deep a request body may nest (Go's scanner: maxNestingDepth, 10000). */
export const MAX_NESTING_DEPTH = 500;

/** JsonShape is what scanJsonShape found. */
export interface JsonShape {
  /** The text nests deeper than the limit (the text may also be malformed before that point). */
  tooDeep: boolean;
  /** The first number literal, outside strings, whose value is not a finite float64. */
  overflow?: string;
  /** How many object members the text holds (its colons outside strings), counted up to where the scan stopped. */
  members: number;
}

const DIGIT_OR_SIGN = /[-0-9]/;

/**
 * scanJsonShape makes one pass over the text, outside string literals only: the bracket depth and the number
 * literals. Malformed text is not its concern (JSON.parse and jsonSyntaxError judge that).
 */
export function scanJsonShape(text: string, maxDepth = MAX_NESTING_DEPTH): JsonShape {
  let depth = 0;
  let members = 0;
  let overflow: string | undefined;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip the string literal; an unterminated one ends the scan.
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > maxDepth) return { tooDeep: true, members, ...(overflow ? { overflow } : {}) };
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      if (depth > 0) depth--;
    } else if (c === 0x3a /* : */) {
      members++;
    } else if (overflow === undefined && (c === 0x2d || (c >= 0x30 && c <= 0x39))) {
      let j = i + 1;
      let exponent = false;
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d === 0x65 || d === 0x45) exponent = true;
        else if (!((d >= 0x30 && d <= 0x39) || d === 0x2e || d === 0x2b || d === 0x2d)) break;
        j++;
      }
      // Only an exponent or more than 308 digits can leave the float64 range.
      if (exponent || j - i > 308) {
        const literal = text.slice(i, j);
        if (!Number.isFinite(Number(literal)) && DIGIT_OR_SIGN.test(literal[0] ?? '')) overflow = literal;
      }
      i = j - 1;
    }
  }
  return overflow ? { tooDeep: false, members, overflow } : { tooDeep: false, members };
}

// The scanner's states (encoding/json scanner.go), one per step function.
// biome-ignore lint/suspicious/noConstEnum: module-private, so tsc and esbuild inline the states into the scanner's hot loop
const enum S {
  BeginValueOrEmpty,
  BeginValue,
  BeginStringOrEmpty,
  BeginString,
  EndValue,
  EndTop,
  InString,
  InStringEsc,
  InStringEscU,
  InStringEscU1,
  InStringEscU12,
  InStringEscU123,
  Neg,
  One,
  Zero,
  Dot,
  Dot0,
  E,
  ESign,
  E0,
  T,
  Tr,
  Tru,
  F,
  Fa,
  Fal,
  Fals,
  N,
  Nu,
  Nul,
  Error,
}

// What the enclosing composite expects next (parseObjectKey, parseObjectValue, parseArrayValue).
// biome-ignore lint/suspicious/noConstEnum: module-private, so tsc and esbuild inline it like S
const enum P {
  ObjectKey,
  ObjectValue,
  ArrayValue,
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

// quoteChar is scanner.go's: a byte as a Go character literal, bytes above 0x7f read as Latin-1 runes.
function quoteChar(c: number): string {
  if (c === 0x27) return "'\\''";
  if (c === 0x22) return "'\"'";
  return `'${goQuote(String.fromCharCode(c)).slice(1, -1)}'`;
}

// Literal states: the byte each expects, the state it leads to, and the literal named in the error.
const LITERALS: Partial<Record<S, readonly [number, S, string]>> = {
  [S.T]: [0x72, S.Tr, 'true'],
  [S.Tr]: [0x75, S.Tru, 'true'],
  [S.Tru]: [0x65, S.EndValue, 'true'],
  [S.F]: [0x61, S.Fa, 'false'],
  [S.Fa]: [0x6c, S.Fal, 'false'],
  [S.Fal]: [0x73, S.Fals, 'false'],
  [S.Fals]: [0x65, S.EndValue, 'false'],
  [S.N]: [0x75, S.Nu, 'null'],
  [S.Nu]: [0x6c, S.Nul, 'null'],
  [S.Nul]: [0x6c, S.EndValue, 'null'],
};

/**
 * jsonSyntaxError is checkValid: encoding/json's scanner over the bytes of `input`, undefined when it accepts them,
 * else its error text. It is iterative: no input can exhaust the stack.
 */
export function jsonSyntaxError(input: string | Uint8Array, maxDepth = MAX_NESTING_DEPTH): string | undefined {
  const data = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const stack: P[] = [];
  let state: S = S.BeginValue;
  let err: string | undefined;
  let endTop = false;
  const fail = (c: number, context: string) => {
    err = `invalid character ${quoteChar(c)} ${context}`;
    state = S.Error;
  };
  const push = (c: number, p: P, next: S) => {
    stack.push(p);
    if (stack.length <= maxDepth) state = next;
    else fail(c, 'exceeded max depth');
  };
  const pop = () => {
    stack.pop();
    if (stack.length === 0) {
      state = S.EndTop;
      endTop = true;
    } else state = S.EndValue;
  };

  // step feeds one byte to the current state (the scanner's s.step(s, c)); states that hand the byte on loop.
  const step = (c: number): void => {
    for (;;) {
      switch (state) {
        case S.BeginValueOrEmpty:
          if (isSpace(c)) return;
          if (c === 0x5d) {
            state = S.EndValue;
            continue;
          }
          state = S.BeginValue;
          continue;
        case S.BeginValue:
          if (isSpace(c)) return;
          if (c === 0x7b) return push(c, P.ObjectKey, S.BeginStringOrEmpty);
          if (c === 0x5b) return push(c, P.ArrayValue, S.BeginValueOrEmpty);
          if (c === 0x22) state = S.InString;
          else if (c === 0x2d) state = S.Neg;
          else if (c === 0x30) state = S.Zero;
          else if (c === 0x74) state = S.T;
          else if (c === 0x66) state = S.F;
          else if (c === 0x6e) state = S.N;
          else if (c >= 0x31 && c <= 0x39) state = S.One;
          else fail(c, 'looking for beginning of value');
          return;
        case S.BeginStringOrEmpty:
          if (isSpace(c)) return;
          if (c === 0x7d) {
            stack[stack.length - 1] = P.ObjectValue;
            state = S.EndValue;
            continue;
          }
          state = S.BeginString;
          continue;
        case S.BeginString:
          if (isSpace(c)) return;
          if (c === 0x22) state = S.InString;
          else fail(c, 'looking for beginning of object key string');
          return;
        case S.EndValue: {
          if (stack.length === 0) {
            state = S.EndTop;
            endTop = true;
            continue;
          }
          if (isSpace(c)) return;
          const top = stack[stack.length - 1];
          if (top === P.ObjectKey) {
            if (c === 0x3a) {
              stack[stack.length - 1] = P.ObjectValue;
              state = S.BeginValue;
            } else fail(c, 'after object key');
          } else if (top === P.ObjectValue) {
            if (c === 0x2c) {
              stack[stack.length - 1] = P.ObjectKey;
              state = S.BeginString;
            } else if (c === 0x7d) pop();
            else fail(c, 'after object key:value pair');
          } else if (c === 0x2c) state = S.BeginValue;
          else if (c === 0x5d) pop();
          else fail(c, 'after array element');
          return;
        }
        case S.EndTop:
          if (!isSpace(c)) fail(c, 'after top-level value');
          return;
        case S.InString:
          if (c === 0x22) state = S.EndValue;
          else if (c === 0x5c) state = S.InStringEsc;
          else if (c < 0x20) fail(c, 'in string literal');
          return;
        case S.InStringEsc:
          if ([0x62, 0x66, 0x6e, 0x72, 0x74, 0x5c, 0x2f, 0x22].includes(c)) state = S.InString;
          else if (c === 0x75) state = S.InStringEscU;
          else fail(c, 'in string escape code');
          return;
        case S.InStringEscU:
        case S.InStringEscU1:
        case S.InStringEscU12:
        case S.InStringEscU123:
          if (isHex(c)) state = state === S.InStringEscU123 ? S.InString : ((state + 1) as S);
          else fail(c, 'in \\u hexadecimal character escape');
          return;
        case S.Neg:
          if (c === 0x30) state = S.Zero;
          else if (c >= 0x31 && c <= 0x39) state = S.One;
          else fail(c, 'in numeric literal');
          return;
        case S.One:
          if (isDigit(c)) return;
          state = S.Zero;
          continue;
        case S.Zero:
          if (c === 0x2e) state = S.Dot;
          else if (c === 0x65 || c === 0x45) state = S.E;
          else {
            state = S.EndValue;
            continue;
          }
          return;
        case S.Dot:
          if (isDigit(c)) state = S.Dot0;
          else fail(c, 'after decimal point in numeric literal');
          return;
        case S.Dot0:
          if (isDigit(c)) return;
          if (c === 0x65 || c === 0x45) {
            state = S.E;
            return;
          }
          state = S.EndValue;
          continue;
        case S.E:
          if (c === 0x2b || c === 0x2d) {
            state = S.ESign;
            return;
          }
          state = S.ESign;
          continue;
        case S.ESign:
          if (isDigit(c)) state = S.E0;
          else fail(c, 'in exponent of numeric literal');
          return;
        case S.E0:
          if (isDigit(c)) return;
          state = S.EndValue;
          continue;
        case S.Error:
          return;
        default: {
          const [want, next, literal] = LITERALS[state] as readonly [number, S, string];
          if (c === want) state = next;
          else fail(c, `in literal ${literal} (expecting ${quoteChar(want)})`);
          return;
        }
      }
    }
  };

  for (const c of data) {
    step(c);
    if (err !== undefined) return err;
  }
  // scanner.eof: a value may end at the end of input (a number), so feed a space before calling it unexpected.
  if (endTop) return undefined;
  step(0x20);
  if (endTop) return undefined;
  return err ?? 'unexpected end of JSON input';
}
