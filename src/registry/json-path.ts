/**
 * @module registry/json-path
 * client-go's JSONPath (k8s.io/client-go/util/jsonpath, parser.go + jsonpath.go) as the CRD machinery runs it:
 * printer columns (tableconvertor) and selectable fields, both with AllowMissingKeys(true) on `{<path>}`.
 *
 * Why not jsonpath-plus (installed for this): its semantics differ from client-go's wherever a CRD path can reach,
 * so every step would need patching and nothing of it would be left:
 * - property access on strings and arrays finds their own `length` (`.spec.items.length` → 2); client-go finds nothing;
 * - filters are JavaScript (`@.a==1` matches "1"); client-go compares with text/template's eq/lt, which fail on
 *   mixed types ("incompatible types for comparison") and fail the whole path, not just the element;
 * - `..` visits leaves and uses its own order; client-go visits only non-empty containers (strings included), pre-order;
 * - a string column prints a map or list as Go's encoding/json writes it (sorted keys, HTML-safe escapes);
 * - out-of-range indexes, non-list `[n]`, filters on non-lists are errors in client-go (the cell becomes null),
 *   an empty result in jsonpath-plus; `[]` is `[0]`, `['a.b']` is two fields, `*` on a string yields its bytes;
 * - its own syntax (`~`, `^`, `@string()`, backticks) gives meaning to field names client-go reads literally.
 * So this module is a port: the parser and evaluator below follow the Go code node by node, with its error texts
 * (crd-columns.test.ts checks the cells it gives against kube-apiserver 1.37.2's own, odd paths and values included).
 *
 * Values are the JSON values of the object, with Go's int64/float64 split read from the number (an integral number
 * in int64 range is an int64, as kube's JSON decoding makes it), plus two Go-only values: `GoByte` (an element of
 * a string, from `*`/`..` over a string) and `GoFloat` (a float literal such as `2.0`, which Go types as float64).
 * Go iterates maps in random order for `*` and `..`; this port uses sorted key order (what kube's JSON shows).
 */

/** GoByte is a byte of a string, as client-go yields it when `*` or `..` walks a string (a Go uint8). */
export class GoByte {
  constructor(readonly value: number) {}
}
/** GoFloat is a float literal of a path (`2.0`): a Go float64, whatever its value. */
export class GoFloat {
  constructor(readonly value: number) {}
}

/** JsonPathError is a client-go evaluation error (FindResults returning an error). */
export class JsonPathError extends Error {}

/** CompiledJsonPath evaluates one parsed path. */
export interface CompiledJsonPath {
  /** every match, in client-go's order (FindResults, AllowMissingKeys(true)), flattened over the template's
   * actions; GoByte/GoFloat values come out as plain numbers. Throws JsonPathError where client-go returns an error. */
  find(obj: unknown): unknown[];
  /** FindResults itself: one list per action of the template, values as client-go holds them (GoByte, GoFloat). */
  findResults(obj: unknown): unknown[][];
}

/** compileJsonPath compiles a path such as `.status.conditions[?(@.type=="Ready")].status` (kube wraps it as
 * `{<path>}` before parsing); throws Error with client-go's parse error text on a bad path. */
export function compileJsonPath(path: string, opts: { allowMissingKeys?: boolean } = {}): CompiledJsonPath {
  return compileJsonPathTemplate(`{${path}}`, opts);
}

/** compileJsonPathTemplate compiles a whole template (text with `{...}` actions), as JSONPath.Parse takes it. */
export function compileJsonPathTemplate(template: string, opts: { allowMissingKeys?: boolean } = {}): CompiledJsonPath {
  const evaluator = new Evaluator(parseTemplate(template), opts.allowMissingKeys ?? true);
  return { findResults: (obj) => evaluator.findResults(obj), find: (obj) => evaluator.findResults(obj).flat().map(plain) };
}

const plain = (v: unknown): unknown => (v instanceof GoByte || v instanceof GoFloat ? v.value : v);

// ---------------------------------------------------------------------------------------------------------------
// Nodes (client-go node.go)

type Node =
  | { type: 'list'; nodes: Node[] }
  | { type: 'text'; text: string }
  | { type: 'field'; value: string }
  | { type: 'identifier'; name: string }
  | { type: 'int'; value: number }
  | { type: 'float'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'array'; params: [Param, Param, Param] }
  | { type: 'filter'; left: ListNode; right: ListNode; operator: string }
  | { type: 'wildcard' }
  | { type: 'recursive' }
  | { type: 'union'; nodes: ListNode[] };
type ListNode = Extract<Node, { type: 'list' }>;
interface Param {
  value: number;
  known: boolean;
  derived: boolean;
}

const newList = (): ListNode => ({ type: 'list', nodes: [] });

// ---------------------------------------------------------------------------------------------------------------
// Parser (client-go parser.go). It walks code points; Go walks UTF-8 runes, and the one byte test it makes
// (`input[pos-2] != '\\'`) reads the same on either since a multi-byte rune never ends in a backslash byte.

const EOF = '';

function parseTemplate(text: string): ListNode {
  const p = new Parser(text);
  p.parseText(p.root);
  return p.root;
}

/** parseAction parses `{text}` and returns the action's list (client-go parseAction). */
function parseAction(text: string): ListNode {
  return parseTemplate(`{${text}}`).nodes[0] as ListNode;
}

class Parser {
  readonly root = newList();
  private readonly input: string[];
  private pos = 0;
  private start = 0;

  constructor(text: string) {
    this.input = Array.from(text);
  }

  private consumeText(): string {
    const value = this.input.slice(this.start, this.pos).join('');
    this.start = this.pos;
    return value;
  }
  private next(): string {
    if (this.pos >= this.input.length) return EOF;
    return this.input[this.pos++]!;
  }
  private backup(r: string): void {
    if (r !== EOF) this.pos--;
  }
  private peek(): string {
    return this.pos < this.input.length ? this.input[this.pos]! : EOF;
  }
  private hasPrefix(prefix: string): boolean {
    const chars = Array.from(prefix);
    return chars.every((c, i) => this.input[this.pos + i] === c);
  }

  parseText(cur: ListNode): void {
    for (;;) {
      if (this.hasPrefix('{')) {
        if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() });
        this.parseLeftDelim(cur);
        return;
      }
      if (this.next() === EOF) break;
    }
    if (this.pos > this.start) cur.nodes.push({ type: 'text', text: this.consumeText() });
  }

  private parseLeftDelim(cur: ListNode): void {
    this.pos += 1;
    this.consumeText();
    const node = newList();
    cur.nodes.push(node);
    this.parseInsideAction(node);
  }

  private parseInsideAction(cur: ListNode): void {
    // Go recurses once per token; a loop keeps long paths off the JS stack.
    for (;;) {
      if (this.hasPrefix('}')) return this.parseRightDelim();
      if (this.hasPrefix('[?(')) {
        this.parseFilter(cur);
        continue;
      }
      if (this.hasPrefix('..')) {
        this.parseRecursive(cur);
        continue;
      }
      const r = this.next();
      if (r === EOF || r === '\r' || r === '\n') throw new Error('unclosed action');
      if (r === ' ' || r === '@' || r === '$') {
        this.consumeText();
      } else if (r === '[') {
        this.parseArray(cur);
      } else if (r === '"' || r === "'") {
        this.parseQuote(cur, r);
      } else if (r === '.') {
        this.parseField(cur);
      } else if (r === '+' || r === '-' || isDigit(r)) {
        this.backup(r);
        this.parseNumber(cur);
      } else if (isAlphaNumeric(r)) {
        this.backup(r);
        this.parseIdentifier(cur);
      } else {
        throw new Error(`unrecognized character in action: ${goQuoteRune(r)}`);
      }
    }
  }

  private parseRightDelim(): void {
    this.pos += 1;
    this.consumeText();
    this.parseText(this.root);
  }

  private parseIdentifier(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (isTerminator(r)) {
        this.backup(r);
        break;
      }
    }
    const value = this.consumeText();
    if (value === 'true' || value === 'false') cur.nodes.push({ type: 'bool', value: value === 'true' });
    else cur.nodes.push({ type: 'identifier', name: value });
  }

  private parseRecursive(cur: ListNode): void {
    if (cur.nodes.at(-1)?.type === 'recursive') throw new Error('invalid multiple recursive descent');
    this.pos += 2;
    this.consumeText();
    cur.nodes.push({ type: 'recursive' });
    if (isAlphaNumeric(this.peek())) this.parseField(cur);
  }

  private parseNumber(cur: ListNode): void {
    const first = this.peek();
    if (first === '+' || first === '-') this.next();
    for (;;) {
      const r = this.next();
      if (r !== '.' && !isDigit(r)) {
        this.backup(r);
        break;
      }
    }
    const value = this.consumeText();
    const i = goAtoi(value);
    if (i !== undefined) {
      cur.nodes.push({ type: 'int', value: i });
      return;
    }
    const f = goParseFloat(value);
    if (f !== undefined) {
      cur.nodes.push({ type: 'float', value: f });
      return;
    }
    throw new Error(`cannot parse number ${value}`);
  }

  private parseArray(cur: ListNode): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === '\n') throw new Error('unterminated array');
      if (r === ']') break;
    }
    let text = this.consumeText();
    text = text.slice(1, -1);
    if (text === '*') text = ':';

    // union operator
    const strs = text.split(',');
    if (strs.length > 1) {
      cur.nodes.push({ type: 'union', nodes: strs.map((s) => parseAction(`[${trimSpaces(s)}]`)) });
      return;
    }
    // dict key: parsed as a field path, so `['a.b']` is the two fields a and b, as in client-go
    const key = /^'([^']*)'$/.exec(text);
    if (key) {
      cur.nodes.push(...parseAction(`.${key[1]}`).nodes);
      return;
    }
    // slice operator
    const m = /^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$/.exec(text);
    if (!m) throw new Error(`invalid array index ${text}`);
    const params: [Param, Param, Param] = [
      { value: 0, known: false, derived: false },
      { value: 0, known: false, derived: false },
      { value: 0, known: false, derived: false },
    ];
    for (let i = 0; i < 3; i++) {
      let v = m[i + 1] ?? '';
      if (v !== '') {
        if (i > 0) v = v.slice(1);
        if (i > 0 && v === '') {
          params[i]!.known = false;
        } else {
          const n = goAtoi(v);
          if (n === undefined) throw new Error(`array index ${v} is not a number`);
          params[i] = { value: n, known: true, derived: false };
        }
      } else if (i === 1) {
        params[i] = { value: params[0].value + 1, known: true, derived: true };
      }
    }
    cur.nodes.push({ type: 'array', params });
  }

  private parseFilter(cur: ListNode): void {
    this.pos += 3;
    this.consumeText();
    let begin = false;
    let end = false;
    let pair = '';
    for (;;) {
      const r = this.next();
      if (r === EOF || r === '\n') throw new Error('unterminated filter');
      if (r === '"' || r === "'") {
        if (!begin) {
          begin = true;
          pair = r;
          continue;
        }
        if (this.input[this.pos - 2] !== '\\' && r === pair) end = true;
      } else if (r === ')') {
        if (begin === end) break;
      }
    }
    if (this.next() !== ']') throw new Error('unclosed array expect ]');
    const text = this.consumeText().slice(0, -2);
    const m = /^([^!<>=]+)([!<>=]+)(.+?)$/.exec(text);
    if (!m) {
      cur.nodes.push({ type: 'filter', left: parseAction(text), right: newList(), operator: 'exists' });
    } else {
      const left = parseAction(m[1]!);
      const right = parseAction(m[3]!);
      cur.nodes.push({ type: 'filter', left, right, operator: m[2]! });
    }
  }

  private parseQuote(cur: ListNode, end: string): void {
    for (;;) {
      const r = this.next();
      if (r === EOF || r === '\n') throw new Error('unterminated quoted string');
      if (r === end && this.input[this.pos - 2] !== '\\') break;
    }
    const value = this.consumeText();
    const s = unquoteExtend(value);
    if (s === undefined) throw new Error(`unquote string ${value} error invalid syntax`);
    cur.nodes.push({ type: 'text', text: s });
  }

  private parseField(cur: ListNode): void {
    this.consumeText();
    while (this.advance());
    const value = this.consumeText();
    if (value === '*') cur.nodes.push({ type: 'wildcard' });
    else cur.nodes.push({ type: 'field', value: value.replaceAll('\\', '') });
  }

  /** advance scans until the next terminator that is not escaped by a backslash. */
  private advance(): boolean {
    const r = this.next();
    if (r === '\\') this.next();
    else if (isTerminator(r)) {
      this.backup(r);
      return false;
    }
    return true;
  }
}

function isTerminator(r: string): boolean {
  return r === EOF || ' \t\r\n.,[]$@{}'.includes(r);
}
const isDigit = (r: string) => r !== EOF && /^\p{Nd}$/u.test(r);
const isAlphaNumeric = (r: string) => r === '_' || (r !== EOF && /^[\p{L}\p{Nd}]$/u.test(r));
const trimSpaces = (s: string) => s.replace(/^ +| +$/g, '');

/** goQuoteRune is fmt's %#U: `U+0023 '#'`, without the quoted rune when it is not printable. */
function goQuoteRune(r: string): string {
  const cp = r.codePointAt(0)!;
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  return r === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(r) ? `${hex} '${r}'` : hex;
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** goAtoi is strconv.Atoi on a 64-bit platform: optional sign, ASCII digits, in range; else undefined. */
function goAtoi(s: string): number | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : Number(n);
}

/** goParseFloat is strconv.ParseFloat for what parseNumber can collect (sign, digits and dots). */
function goParseFloat(s: string): number | undefined {
  return /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$/.test(s) ? Number(s) : undefined;
}

/** unquoteExtend is client-go's UnquoteExtend (strconv.Unquote that also takes single quotes); undefined = ErrSyntax. */
function unquoteExtend(s: string): string | undefined {
  const chars = Array.from(s);
  const n = chars.length;
  if (n < 2) return undefined;
  const quote = chars[0]!;
  if (quote !== chars[n - 1] || (quote !== '"' && quote !== "'")) return undefined;
  const body = chars.slice(1, n - 1);
  if (!body.includes('\\') && !body.includes(quote)) return body.join('');
  let out = '';
  for (let i = 0; i < body.length; ) {
    const c = body[i]!;
    if (c === quote) return undefined;
    if (c !== '\\') {
      out += c;
      i++;
      continue;
    }
    const e = body[i + 1];
    i += 2;
    const simple: Record<string, string> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };
    if (e === undefined) return undefined;
    if (e in simple) out += simple[e];
    else if (e === "'" || e === '"') {
      if (e !== quote) return undefined;
      out += e;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i, i + len).join('');
      if (hex.length !== len || !/^[0-9a-fA-F]+$/.test(hex)) return undefined;
      const v = parseInt(hex, 16);
      i += len;
      if (e === 'x') out += String.fromCharCode(v);
      else if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) return undefined;
      else out += String.fromCodePoint(v);
    } else if (e >= '0' && e <= '7') {
      const oct = body.slice(i - 1, i + 2).join('');
      if (!/^[0-7]{3}$/.test(oct)) return undefined;
      const v = parseInt(oct, 8);
      if (v > 255) return undefined;
      out += String.fromCharCode(v);
      i += 2;
    } else return undefined;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Evaluator (client-go jsonpath.go). The range state lives on the evaluator as on client-go's JSONPath, and so does
// what a `range` leaves behind: FindResults narrows the root's nodes to the range's body and never restores them, so
// kube's one JSONPath per column fails on every later row (seen on kube-apiserver 1.37: the first row has a cell,
// the others null).

type Value = unknown;

class Evaluator {
  private beginRange = 0;
  private inRange = 0;
  private endRange = 0;
  private lastEndNode: Node | undefined;

  constructor(
    private readonly root: ListNode,
    private readonly allowMissingKeys: boolean,
  ) {}

  findResults(data: Value): Value[][] {
    const cur = [data];
    const nodes = this.root.nodes;
    const full: Value[][] = [];
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      const results = this.walk(cur, node);
      // an end node breaks the current block
      if (this.endRange > 0 && this.endRange <= this.inRange) {
        this.endRange -= 1;
        this.lastEndNode = node;
        break;
      }
      // a range node runs the nodes after it once per result (once with nil when there is none, to find its end)
      if (this.beginRange > 0) {
        this.beginRange -= 1;
        this.inRange += 1;
        if (results.length > 0) {
          for (const value of results) {
            this.root.nodes = nodes.slice(i + 1);
            full.push(...this.findResults(value));
          }
        } else {
          this.root.nodes = nodes.slice(i + 1);
          this.findResults(null);
        }
        this.inRange -= 1;
        // resume after the end node the body stopped at
        for (let k = i + 1; k < nodes.length; k++) {
          if (nodes[k] === this.lastEndNode) {
            i = k;
            break;
          }
        }
        continue;
      }
      full.push(results);
    }
    return full;
  }

  private walk(value: Value[], node: Node): Value[] {
    switch (node.type) {
      case 'list':
        return this.evalList(value, node);
      case 'text':
        return [node.text];
      case 'field':
        return this.evalField(value, node.value);
      case 'array':
        return this.evalArray(value, node.params);
      case 'filter':
        return this.evalFilter(value, node);
      case 'int':
        return value.map(() => node.value);
      case 'bool':
        return value.map(() => node.value);
      case 'float':
        return value.map(() => new GoFloat(node.value));
      case 'wildcard':
        return this.evalWildcard(value);
      case 'recursive':
        return this.evalRecursive(value);
      case 'union':
        return node.nodes.flatMap((list) => this.evalList(value, list));
      case 'identifier':
        return this.evalIdentifier(value, node.name);
    }
  }

  private evalList(value: Value[], node: ListNode): Value[] {
    let cur = value;
    for (const n of node.nodes) cur = this.walk(cur, n);
    return cur;
  }

  private evalIdentifier(input: Value[], name: string): Value[] {
    if (name === 'range') {
      this.beginRange += 1;
      return input;
    }
    if (name === 'end') {
      if (this.inRange === 0) throw new JsonPathError('not in range, nothing to end');
      this.endRange += 1;
      return [];
    }
    throw new JsonPathError(`unrecognized identifier ${name}`);
  }

  private evalArray(input: Value[], p: readonly [Param, Param, Param]): Value[] {
    const result: Value[] = [];
    for (const value of input) {
      if (value === null || value === undefined) continue;
      if (!Array.isArray(value)) throw new JsonPathError(`${goTypeName(value)} is not array or slice`);
      const len = value.length;
      let start = p[0].known ? p[0].value : 0;
      if (start < 0) start += len;
      let end = p[1].known ? p[1].value : len;
      if (end < 0 || (end === 0 && p[1].derived)) end += len;
      if (end === start) return result; // zero elements asked for: client-go returns at once, even with more input
      if (start >= len || start < 0) throw new JsonPathError(`array index out of bounds: index ${start}, length ${len}`);
      if (end > len || end < 0) throw new JsonPathError(`array index out of bounds: index ${end - 1}, length ${len}`);
      if (start > end) throw new JsonPathError(`starting index ${start} is greater than ending index ${end}`);
      let step = 1;
      if (p[2].known) {
        if (p[2].value <= 0) throw new JsonPathError('step must be > 0');
        step = p[2].value;
      }
      for (let i = start; i < end; i += step) result.push(value[i]);
    }
    return result;
  }

  private evalField(input: Value[], name: string): Value[] {
    const results: Value[] = [];
    for (const value of input) {
      if (isMap(value) && Object.hasOwn(value, name)) results.push(value[name]);
    }
    if (results.length === 0 && !this.allowMissingKeys && input.length > 0) {
      throw new JsonPathError(`${name} is not found`);
    }
    return results;
  }

  private evalWildcard(input: Value[]): Value[] {
    return input.flatMap(children);
  }

  private evalRecursive(input: Value[]): Value[] {
    const result: Value[] = [];
    for (const value of input) {
      const kids = children(value);
      // only non-empty containers are visited (and strings, whose children are bytes); leaves never are
      if (kids.length !== 0) {
        result.push(value);
        result.push(...this.evalRecursive(kids));
      }
    }
    return result;
  }

  private evalFilter(input: Value[], node: Extract<Node, { type: 'filter' }>): Value[] {
    const results: Value[] = [];
    for (const value of input) {
      if (!Array.isArray(value)) {
        throw new JsonPathError(`${formatGoValue(value, '<nil>')} is not array or slice and cannot be filtered`);
      }
      for (const item of value) {
        let lefts: Value[];
        let leftError: unknown;
        try {
          lefts = this.evalList([item], node.left);
        } catch (e) {
          lefts = [];
          leftError = e;
        }
        if (node.operator === 'exists') {
          if (lefts.length > 0) results.push(item);
          continue;
        }
        if (leftError !== undefined) throw leftError;
        if (lefts.length === 0) continue;
        if (lefts.length > 1) throw new JsonPathError('can only compare one element at a time');
        const rights = this.evalList([item], node.right);
        if (rights.length === 0) continue;
        if (rights.length > 1) throw new JsonPathError('can only compare one element at a time');
        if (compare(lefts[0], rights[0], node.operator)) results.push(item);
      }
    }
    return results;
  }
}

function isMap(v: Value): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof GoByte) && !(v instanceof GoFloat);
}

/** children are what `*` yields: a map's values (sorted keys), a list's items, a string's UTF-8 bytes. */
function children(value: Value): Value[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return [...Buffer.from(value, 'utf8')].map((b) => new GoByte(b));
  if (isMap(value)) return sortedKeys(value).map((k) => value[k]);
  return [];
}

/** sortedKeys orders keys as Go compares strings (by UTF-8 bytes, which is code point order). */
export function sortedKeys(m: Record<string, unknown>): string[] {
  return Object.keys(m).sort((a, b) => {
    const x = Array.from(a);
    const y = Array.from(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
      if (d !== 0) return d;
    }
    return x.length - y.length;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Comparison: text/template's eq/ne/lt/le/gt/ge (client-go's fork, funcs.go)

type Kind = 'bool' | 'int' | 'uint' | 'float' | 'string';

/** goKind is the Go kind of a value as kube decodes JSON: integral numbers in int64 range are int64. */
function goKind(v: Value): Kind | undefined {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return isGoInt(v) ? 'int' : 'float';
  if (v instanceof GoByte) return 'uint';
  if (v instanceof GoFloat) return 'float';
  return undefined;
}

/** isGoInt tells whether kube holds a JSON number as int64 (integral and in range) rather than float64. */
export function isGoInt(n: number): boolean {
  return Number.isInteger(n) && n >= -(2 ** 63) && n < 2 ** 63;
}

const num = (v: Value) => (v instanceof GoByte || v instanceof GoFloat ? v.value : (v as number));

function kinds(a: Value, b: Value): [Kind, Kind] {
  const ka = goKind(a);
  const kb = goKind(b);
  if (!ka || !kb) throw new JsonPathError('invalid type for comparison');
  return [ka, kb];
}

function equal(a: Value, b: Value): boolean {
  const [ka, kb] = kinds(a, b);
  if (ka !== kb) {
    // integers compare across signedness; nothing else does
    if ((ka === 'int' && kb === 'uint') || (ka === 'uint' && kb === 'int')) return num(a) === num(b);
    throw new JsonPathError('incompatible types for comparison');
  }
  return ka === 'string' || ka === 'bool' ? a === b : num(a) === num(b);
}

function less(a: Value, b: Value): boolean {
  const [ka, kb] = kinds(a, b);
  if (ka !== kb) {
    if ((ka === 'int' && kb === 'uint') || (ka === 'uint' && kb === 'int')) return num(a) < num(b);
    throw new JsonPathError('incompatible types for comparison');
  }
  if (ka === 'bool') throw new JsonPathError('invalid type for comparison');
  if (ka === 'string') return compareGoStrings(a as string, b as string) < 0;
  return num(a) < num(b);
}

function compare(a: Value, b: Value, op: string): boolean {
  switch (op) {
    case '<':
      return less(a, b);
    case '>':
      return !(less(a, b) || equal(a, b));
    case '==':
      return equal(a, b);
    case '!=':
      return !equal(a, b);
    case '<=':
      return less(a, b) || equal(a, b);
    case '>=':
      return !less(a, b);
    default:
      throw new JsonPathError(`unrecognized filter operator ${op}`);
  }
}

function compareGoStrings(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

// ---------------------------------------------------------------------------------------------------------------
// Printing: fmt's %v of the decoded JSON values, as PrintResults and fmt.Sprint produce them

/** printJsonPathValue is the text tableconvertor puts in a string cell: client-go's PrintResults of one value, which
 * writes a map or a list as JSON (encoding/json) and anything else as fmt.Fprint does, `<no value>` for a null. */
export function printJsonPathValue(value: unknown): string {
  if (Array.isArray(value) || isMap(value)) return goJsonMarshal(value);
  return formatGoValue(value, '<no value>');
}

/** goJsonMarshal is encoding/json's Marshal of a decoded JSON value: compact, map keys sorted, and <, >, &, U+2028,
 * U+2029 escaped in strings (Go's HTML-safe default), where JSON.stringify differs. */
export function goJsonMarshal(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goJsonMarshal).join(',')}]`;
  if (isMap(value))
    return `{${sortedKeys(value)
      .map((k) => `${goJsonString(k)}:${goJsonMarshal(value[k])}`)
      .join(',')}}`;
  if (typeof value === 'string') return goJsonString(value);
  if (typeof value === 'number' && isGoInt(value)) return BigInt(value).toString();
  return JSON.stringify(value ?? null);
}

const HTML_ESCAPES: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };
const goJsonString = (s: string) => JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => HTML_ESCAPES[c]!);

/** formatGoValue is fmt's %v of a decoded JSON value; `nil` is what a top-level null prints as. */
export function formatGoValue(value: unknown, nil = '<nil>'): string {
  if (value === null || value === undefined) return nil;
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return isGoInt(value) ? BigInt(value).toString() : formatGoFloat(value);
  if (value instanceof GoByte) return String(value.value);
  if (value instanceof GoFloat) return formatGoFloat(value.value);
  if (Array.isArray(value)) return `[${value.map((v) => formatGoValue(v)).join(' ')}]`;
  const m = value as Record<string, unknown>;
  return `map[${sortedKeys(m)
    .map((k) => `${k}:${formatGoValue(m[k])}`)
    .join(' ')}]`;
}

/** formatGoFloat is %v of a float64 (strconv 'g', shortest): the shortest digits, in %e form when the decimal
 * exponent is < -4 or >= 6 (the precision 'g' uses for that choice when the digits are the shortest). */
export function formatGoFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mantissa, e] = v.toExponential().split('e') as [string, string];
  const neg = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const exp = Number(e);
  const sign = neg ? '-' : '';
  if (exp < -4 || exp >= 6) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const ee = Math.abs(exp).toString().padStart(2, '0');
    return `${sign}${digits[0]}${frac}e${exp < 0 ? '-' : '+'}${ee}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return `${sign}${digits}${'0'.repeat(exp + 1 - digits.length)}`;
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** goTypeName is the Go type of a decoded JSON value, as `%v` of reflect.Type prints it. */
function goTypeName(v: Value): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return isGoInt(v) ? 'int64' : 'float64';
  if (v instanceof GoByte) return 'uint8';
  if (v instanceof GoFloat) return 'float64';
  return 'map[string]interface {}';
}
