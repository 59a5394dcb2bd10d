/**
 * @module apis/meta/labels
 * Label selectors with the grammar, semantics and error wording of k8s.io/apimachinery/pkg/labels:
 * `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>1`, `k<1`, joined by commas (AND).
 * Parse errors become 400 BadRequest, carrying the message kube-apiserver would send.
 */
import { badRequest } from './errors.js';
import { invalid } from './field-path.js';
import { isQualifiedName, isValidLabelValue } from './validation.js';

/** LabelSelector is a parsed label selector. */
export interface LabelSelector {
  /** matches reports whether every requirement holds for `labels` (undefined = no labels). */
  matches(labels: Record<string, string> | undefined): boolean;
  /** empty is true when the selector has no requirements and so matches everything. */
  readonly empty: boolean;
  /** toString prints the canonical form: requirements sorted by key, set values sorted. */
  toString(): string;
  /**
   * equalities are the requirements only a label with one of the given values meets (`=`, `==`, `in`): a
   * matching object holds, for each, `key` with one of `values`. Lets a store rule objects out without decoding them.
   */
  equalities(): { key: string; values: readonly string[] }[];
}

/** LabelOperator names an operator as selection.Operator does. */
export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

interface Requirement {
  key: string;
  op: LabelOperator;
  /** Sorted and de-duplicated, like the sets.String the Go parser collects into. */
  values: string[];
}

// The order and spelling of the "expected:" list in parseOperator's error.
const BINARY_OPERATORS = ['in', 'notin', '=', '==', '!=', 'gt', 'lt'];

type Tok = 'EOS' | 'ERROR' | 'ID' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<' | 'in' | 'notin';

// Literal spellings of the non-identifier tokens; a Map so keys like "constructor" are not found on a prototype.
const LITERALS = new Map<string, Tok>([
  ['(', '('],
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['=', '='],
  ['==', '=='],
  ['!=', '!='],
  ['>', '>'],
  ['<', '<'],
  ['in', 'in'],
  ['notin', 'notin'],
]);

interface Item {
  tok: Tok;
  lit: string;
}

const isWhitespace = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string) => c === '=' || c === '!' || c === '(' || c === ')' || c === ',' || c === '>' || c === '<';

/** Splits the selector into tokens ending with EOS, the way labels.Lexer does. */
function lex(s: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  for (;;) {
    while (pos < s.length && isWhitespace(s[pos]!)) pos++;
    if (pos >= s.length) {
      items.push({ tok: 'EOS', lit: '' });
      return items;
    }
    if (isSpecial(s[pos]!)) {
      // Grow the operator while the longer spelling is still a token ("!" → "!=", "=" → "==").
      let buf = '';
      let last: Item | undefined;
      while (pos < s.length && isSpecial(s[pos]!)) {
        buf += s[pos];
        const tok = LITERALS.get(buf);
        if (tok) last = { tok, lit: buf };
        else if (last) break;
        pos++;
      }
      items.push(last ?? { tok: 'ERROR', lit: `error expected: keyword found '${buf}'` });
    } else {
      const start = pos;
      while (pos < s.length && !isSpecial(s[pos]!) && !isWhitespace(s[pos]!)) pos++;
      const word = s.slice(start, pos);
      const kw = LITERALS.get(word);
      items.push(kw ? { tok: kw, lit: word } : { tok: 'ID', lit: word });
    }
  }
}

// Thrown inside the parser and turned into a 400 at the API boundary.
class SelectorSyntaxError extends Error {}
const fail = (message: string): never => {
  throw new SelectorSyntaxError(message);
};

// Where 'in'/'notin' are read: after a key they are operators; as a key or value they are plain identifiers.
type Context = 'keyAndOperator' | 'values';

class Parser {
  readonly #items: Item[];
  #pos = 0;
  constructor(s: string) {
    this.#items = lex(s);
  }

  #at(i: number, ctx: Context): Item {
    const it = this.#items[Math.min(i, this.#items.length - 1)]!;
    return ctx === 'values' && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'ID', lit: it.lit } : it;
  }
  lookahead(ctx: Context): Item {
    return this.#at(this.#pos, ctx);
  }
  consume(ctx: Context): Item {
    return this.#at(this.#pos++, ctx);
  }

  parse(): Requirement[] {
    const reqs: Requirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead('values');
      if (tok === 'EOS') return reqs;
      if (tok !== 'ID' && tok !== '!') fail(`found '${lit}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.parseRequirement());
      } catch (e) {
        if (e instanceof SelectorSyntaxError) fail(`unable to parse requirement: ${e.message}`);
        throw e;
      }
      const next = this.consume('values');
      if (next.tok === 'EOS') return reqs;
      if (next.tok !== ',') fail(`found '${next.lit}', expected: ',' or 'end of string'`);
      const after = this.lookahead('values');
      if (after.tok !== 'ID' && after.tok !== '!') fail(`found '${after.lit}', expected: identifier after ','`);
    }
  }

  parseRequirement(): Requirement {
    const { key, op: inferred } = this.parseKeyAndInferOperator();
    if (inferred) return { key, op: inferred, values: [] };
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    const sorted = [...values].sort();
    const errs = requirementErrors(key, op, sorted);
    if (errs.length > 0) fail(errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);
    return { key, op, values: sorted };
  }

  parseKeyAndInferOperator(): { key: string; op: LabelOperator | undefined } {
    let op: LabelOperator | undefined;
    let { tok, lit } = this.consume('values');
    if (tok === '!') {
      op = '!';
      ({ tok, lit } = this.consume('values'));
    }
    if (tok !== 'ID') fail(`found '${lit}', expected: identifier`);
    const keyErrs = isQualifiedName(lit);
    // The Go parser validates with a nil field path, which prints as "<nil>".
    if (keyErrs.length > 0) fail(invalid('<nil>', lit, keyErrs.join('; ')).message);
    const next = this.lookahead('values').tok;
    if ((next === 'EOS' || next === ',') && op !== '!') op = 'exists';
    return { key: lit, op };
  }

  parseOperator(): LabelOperator {
    const { tok, lit } = this.consume('keyAndOperator');
    switch (tok) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        return tok;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        return fail(`found '${lit}', expected: ${BINARY_OPERATORS.join(', ')}`);
    }
  }

  parseValues(): Set<string> {
    const open = this.consume('values');
    if (open.tok !== '(') fail(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead('values');
    if (tok === ')') {
      this.consume('values');
      return new Set(['']);
    }
    if (tok !== 'ID' && tok !== ',') fail(`found '${lit}', expected: ',', ')' or identifier`);
    const set = this.parseIdentifiersList();
    if (this.consume('values').tok !== ')') fail(`found '${lit}', expected: ')'`);
    return set;
  }

  // A comma-separated list in which empty entries stand for the empty value: "(,a)", "(a,)", "(a,,b)".
  parseIdentifiersList(): Set<string> {
    const set = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume('values');
      if (tok === 'ID') {
        set.add(lit);
        const next = this.lookahead('values');
        if (next.tok === ',') continue;
        if (next.tok === ')') return set;
        fail(`found '${next.lit}', expected: ',' or ')'`);
      } else if (tok === ',') {
        if (set.size === 0) set.add('');
        const next = this.lookahead('values').tok;
        if (next === ')') {
          set.add('');
          return set;
        }
        if (next === ',') set.add('');
      } else {
        fail(`found '${lit}', expected: ',', or identifier`);
      }
    }
  }

  parseExactValue(): Set<string> {
    const next = this.lookahead('values').tok;
    if (next === 'EOS' || next === ',') return new Set(['']);
    const { tok, lit } = this.consume('values');
    if (tok !== 'ID') fail(`found '${lit}', expected: identifier`);
    return new Set([lit]);
  }
}

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits, within int64.
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/** The checks of labels.NewRequirement that the grammar leaves open, as aggregated field-error messages. */
function requirementErrors(key: string, op: LabelOperator, values: string[]): string[] {
  const errs: string[] = [];
  if (op === 'gt' || op === 'lt') {
    values.forEach((v, i) => {
      if (parseInt64(v) === undefined) errs.push(invalid(`values[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer").message);
    });
  }
  values.forEach((v, i) => {
    const msgs = isValidLabelValue(v);
    if (msgs.length > 0) errs.push(invalid(`values[${i}][${key}]`, v, msgs.join('; ')).message);
  });
  return errs;
}

const has = (labels: Record<string, string>, key: string) => Object.hasOwn(labels, key);

function requirementMatches(r: Requirement, labels: Record<string, string>): boolean {
  switch (r.op) {
    case '=':
    case '==':
    case 'in':
      return has(labels, r.key) && r.values.includes(labels[r.key]!);
    case '!=':
    case 'notin':
      // A missing key satisfies a negative requirement, as in Kubernetes.
      return !has(labels, r.key) || !r.values.includes(labels[r.key]!);
    case 'exists':
      return has(labels, r.key);
    case '!':
      return !has(labels, r.key);
    case 'gt':
    case 'lt': {
      if (!has(labels, r.key)) return false;
      const actual = parseInt64(labels[r.key]!);
      const bound = parseInt64(r.values[0] ?? '');
      if (actual === undefined || bound === undefined) return false;
      return r.op === 'gt' ? actual > bound : actual < bound;
    }
  }
}

function requirementString(r: Requirement): string {
  switch (r.op) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.op} (${r.values.join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0]}`;
    case 'lt':
      return `${r.key}<${r.values[0]}`;
    default:
      return `${r.key}${r.op}${r.values[0]}`;
  }
}

class ParsedLabelSelector implements LabelSelector {
  readonly #reqs: readonly Requirement[];
  constructor(reqs: readonly Requirement[]) {
    this.#reqs = reqs;
  }
  get empty(): boolean {
    return this.#reqs.length === 0;
  }
  matches(labels: Record<string, string> | undefined): boolean {
    const ls = labels ?? {};
    return this.#reqs.every((r) => requirementMatches(r, ls));
  }
  toString(): string {
    return this.#reqs.map(requirementString).join(',');
  }
  equalities(): { key: string; values: readonly string[] }[] {
    return this.#reqs.filter((r) => r.op === '=' || r.op === '==' || r.op === 'in').map((r) => ({ key: r.key, values: r.values }));
  }
}

/**
 * parseLabelSelector parses a `labelSelector` query value. The empty (or all-whitespace) string matches everything.
 * Throws StatusError 400 BadRequest worded like Kubernetes, e.g.
 * `unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`.
 */
export function parseLabelSelector(s: string): LabelSelector {
  let reqs: Requirement[];
  try {
    reqs = new Parser(s).parse();
  } catch (e) {
    if (e instanceof SelectorSyntaxError) throw badRequest(e.message);
    throw e;
  }
  // Sorted by key (stably) so String() is deterministic, as labels.Parse does.
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return new ParsedLabelSelector(reqs);
}
