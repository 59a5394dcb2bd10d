/**
 * @module admission/cel/rewrite
 * What @bufbuild/cel's parser does not read, brought to forms it does: the optional accessors `x.?f` and
 * `m[?k]` (to k8s.optSelect/k8s.optIndex calls), optional literal entries `[?x]` and `{?k: v}` (to
 * k8s.optList/k8s.optMapLit over the plain literal), cel-go's two-variable comprehensions
 * `all/exists/existsOne/exists_one(i, v, p)` and `transformList/transformMap/transformMapEntry(i, v, [filter,] e)`
 * (to a one-variable comprehension over k8s.pairs(range), each [key, value] pair standing in for i and v), and
 * the macros sortBy, optMap and optFlatMap (to plain calls and map()).
 */
import { celFunc, CelScalar, isCelList, isCelMap, parse, type CelFunc, type CelInput } from '@bufbuild/cel';

type ParsedExpr = ReturnType<typeof parse>;
export type Expr = NonNullable<ParsedExpr['expr']>;
export type SourceInfo = NonNullable<ParsedExpr['sourceInfo']>;

const OPT_FIELD = '__opt__';
const OPT_INDEX = '__optidx__';
const OPT_ELEM = '__optelem__';
const OPT_ENTRY = '__optentry__';

/** Preprocessed is the rewritten text and the way back from its offsets to the source's. */
export interface Preprocessed {
  text: string;
  toSource(offset: number): number;
}

/** preprocess rewrites `.?name` and index `[?` outside string literals; toSource maps offsets back for messages. */
export function preprocess(src: string): Preprocessed {
  let out = '';
  // open brackets: what closes each, and for a list literal whether an optional element is open
  const frames: { close: string; list: boolean; elemOpen: boolean; map?: boolean; optEntry?: boolean }[] = [];
  // [offset in out where an insertion ends, source offset there]
  const marks: [number, number][] = [];
  let i = 0;
  /** optElement opens `__optelem__(` for a `?` starting a list literal's element. */
  const optElement = () => {
    const frame = frames[frames.length - 1];
    if (!frame?.list) return;
    let j = i;
    while (j < src.length && /\s/.test(src[j]!)) j++;
    if (src[j] !== '?') return;
    out += `${src.slice(i, j)}${OPT_ELEM}(`;
    i = j + 1;
    frame.elemOpen = true;
    marks.push([out.length, i]);
  };
  /** optEntry drops the `?` of a map literal's optional entry; its value gets wrapped at the entry's ':'. */
  const optEntry = () => {
    const frame = frames[frames.length - 1];
    if (!frame?.map) return;
    let j = i;
    while (j < src.length && /\s/.test(src[j]!)) j++;
    if (src[j] !== '?') return;
    out += src.slice(i, j);
    i = j + 1;
    frame.optEntry = true;
    marks.push([out.length, i]);
  };
  const closeElement = () => {
    const frame = frames[frames.length - 1];
    if (frame?.elemOpen) {
      marks.push([out.length, i]);
      out += ')';
      frame.elemOpen = false;
      marks.push([out.length, i]);
    }
  };
  while (i < src.length) {
    const c = src[i]!;
    // string literals, raw or not, single or triple quoted
    const q = /^[rRbB]{0,2}('''|"""|'|")/.exec(src.slice(i));
    if (q && (i === 0 || !/[A-Za-z0-9_]/.test(src[i - 1]!) || /^[rRbB]/.test(q[0]))) {
      const raw = /[rR]/.test(q[0].slice(0, q[0].length - q[1]!.length));
      const end = q[1]!;
      let j = i + q[0].length;
      while (j < src.length && !src.startsWith(end, j)) j += !raw && src[j] === '\\' ? 2 : 1;
      out += src.slice(i, j + end.length);
      i = j + end.length;
      continue;
    }
    if (c === '.' && src[i + 1] === '?') {
      out += `.${OPT_FIELD}`;
      i += 2;
      marks.push([out.length, i]);
      continue;
    }
    if (c === '[') {
      const prev = out.trimEnd().slice(-1);
      const isIndex = /[A-Za-z0-9_)\]}'"]/.test(prev);
      if (isIndex && src[i + 1] === '?') {
        out += `[${OPT_INDEX}(`;
        frames.push({ close: ')]', list: false, elemOpen: false });
        i += 2;
        marks.push([out.length, i]);
        continue;
      }
      frames.push({ close: ']', list: !isIndex, elemOpen: false });
      out += c;
      i++;
      optElement();
      continue;
    }
    if (c === '(') frames.push({ close: ')', list: false, elemOpen: false });
    else if (c === '{') {
      frames.push({ close: '}', list: false, elemOpen: false, map: true });
      out += c;
      i++;
      optEntry();
      continue;
    } else if (c === ')') frames.pop();
    else if (c === '}') {
      closeElement();
      frames.pop();
    } else if (c === ':' && frames[frames.length - 1]?.optEntry) {
      const frame = frames[frames.length - 1]!;
      frame.optEntry = false;
      frame.elemOpen = true;
      out += `:${OPT_ENTRY}(`;
      i++;
      marks.push([out.length, i]);
      continue;
    } else if (c === ',') {
      closeElement();
      out += c;
      i++;
      optElement();
      optEntry();
      continue;
    } else if (c === ']') {
      closeElement();
      const close = frames.pop()?.close ?? ']';
      if (close.length > 1) marks.push([out.length, i]);
      out += close;
      i++;
      marks.push([out.length, i]);
      continue;
    }
    out += c;
    i++;
  }
  const toSource = (offset: number): number => {
    let back = offset;
    for (const [at, srcAt] of marks) if (at <= offset) back = srcAt + (offset - at);
    return Math.min(back, src.length);
  };
  return { text: out, toSource };
}

let nextId = 1_000_000n;
const node = (exprKind: Expr['exprKind']): Expr => ({ $typeName: 'cel.expr.Expr', id: nextId++, exprKind }) as Expr;
const call = (fn: string, args: Expr[]): Expr => node({ case: 'callExpr', value: { $typeName: 'cel.expr.Expr.Call', function: fn, args } } as Expr['exprKind']);
const ident = (name: string): Expr => node({ case: 'identExpr', value: { $typeName: 'cel.expr.Expr.Ident', name } } as Expr['exprKind']);
const intConst = (v: bigint): Expr =>
  node({ case: 'constExpr', value: { $typeName: 'cel.expr.Constant', constantKind: { case: 'int64Value', value: v } } } as Expr['exprKind']);
const strConst = (v: string): Expr =>
  node({ case: 'constExpr', value: { $typeName: 'cel.expr.Constant', constantKind: { case: 'stringValue', value: v } } } as Expr['exprKind']);

/** substitute replaces free identifiers by fresh copies of their replacements (inner bindings shadow). */
function substitute(e: Expr, subst: Map<string, () => Expr>): Expr {
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr': {
      const r = subst.get(k.value.name);
      return r ? r() : e;
    }
    case 'selectExpr':
      if (k.value.operand) k.value.operand = substitute(k.value.operand, subst);
      return e;
    case 'callExpr':
      if (k.value.target) k.value.target = substitute(k.value.target, subst);
      k.value.args = k.value.args.map((a) => substitute(a, subst));
      return e;
    case 'listExpr':
      k.value.elements = k.value.elements.map((a) => substitute(a, subst));
      return e;
    case 'structExpr':
      for (const en of k.value.entries) {
        if (en.value) en.value = substitute(en.value, subst);
        if (en.keyKind.case === 'mapKey') en.keyKind.value = substitute(en.keyKind.value, subst);
      }
      return e;
    case 'comprehensionExpr': {
      const c = k.value;
      if (c.iterRange) c.iterRange = substitute(c.iterRange, subst);
      if (c.accuInit) c.accuInit = substitute(c.accuInit, subst);
      const inner = new Map(subst);
      inner.delete(c.iterVar);
      inner.delete(c.accuVar);
      for (const part of ['loopCondition', 'loopStep', 'result'] as const) if (c[part]) c[part] = substitute(c[part]!, inner);
      return e;
    }
    default:
      return e;
  }
}

const TEMPLATES: Record<string, string> = {
  all: '__r__.all(__p__, __b__)',
  exists: '__r__.exists(__p__, __b__)',
  existsOne: '__r__.exists_one(__p__, __b__)',
  exists_one: '__r__.exists_one(__p__, __b__)',
  transformList: '__r__.map(__p__, __b__)',
  transformList4: '__r__.filter(__p__, __f__).map(__p__, __b__)',
  transformMap: 'k8s.toMap(__r__.map(__p__, [__p__[0], __b__]))',
  transformMap4: 'k8s.toMap(__r__.filter(__p__, __f__).map(__p__, [__p__[0], __b__]))',
  transformMapEntry: 'k8s.mergeMaps(__r__.map(__p__, __b__))',
  transformMapEntry4: 'k8s.mergeMaps(__r__.filter(__p__, __f__).map(__p__, __b__))',
};

/** ONE_VAR are the one-variable macros @bufbuild/cel does not expand: target, variable name, body. */
const ONE_VAR: Record<string, (v: string) => string> = {
  sortBy: (v) => `k8s.sortByKeys(__t__, __t__.map(${v}, __b__))`,
  optMap: (v) => `__t__.hasValue() ? optional.of([__t__.value()].map(${v}, __b__)[0]) : optional.none()`,
  optFlatMap: (v) => `__t__.hasValue() ? [__t__.value()].map(${v}, __b__)[0] : optional.none()`,
};

let pairs = 0;

/** twoVar expands one two-variable macro call into the template with range, pair and body put in. */
function twoVar(name: string, range: Expr, i: string, v: string, body: Expr, filter?: Expr): Expr {
  // a fresh pair variable per expansion, so an outer i or v put into an inner body is not captured
  const pv = `__p${pairs++}__`;
  const tpl = parse(TEMPLATES[filter ? `${name}4` : name]!.replaceAll('__p__', pv)).expr!;
  const pair = (n: bigint) => () => call('_[_]', [ident(pv), intConst(n)]);
  const vars = new Map([
    [i, pair(0n)],
    [v, pair(1n)],
  ]);
  const body2 = substitute(body, vars);
  const filter2 = filter ? substitute(filter, vars) : undefined;
  const fill = new Map<string, () => Expr>([
    ['__r__', () => call('k8s.pairs', [range])],
    ['__b__', () => body2],
  ]);
  if (filter2) fill.set('__f__', () => filter2);
  return substitute(renumber(tpl), fill);
}

/** renumber gives a template's nodes fresh ids (before the rule's own nodes go in), so none collide. */
function renumber(e: Expr): Expr {
  if (e.id < 1_000_000n) e.id = nextId++;
  const k = e.exprKind;
  if (k.case === 'callExpr') {
    if (k.value.target) renumber(k.value.target);
    k.value.args.forEach(renumber);
  } else if (k.case === 'selectExpr' && k.value.operand) renumber(k.value.operand);
  else if (k.case === 'listExpr') k.value.elements.forEach(renumber);
  else if (k.case === 'comprehensionExpr') {
    const c = k.value;
    for (const part of [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result]) if (part) renumber(part);
  }
  return e;
}

/** transform walks the parsed tree and rewrites optional accessors and two-variable macros in place. */
export function transform(e: Expr): Expr {
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr': {
      const operand = k.value.operand ? transform(k.value.operand) : undefined;
      k.value.operand = operand;
      if (k.value.field.startsWith(OPT_FIELD) && operand) {
        const r = call('k8s.optSelect', [operand, strConst(k.value.field.slice(OPT_FIELD.length))]);
        r.id = e.id;
        return r;
      }
      return e;
    }
    case 'callExpr': {
      const c = k.value;
      if (c.target) c.target = transform(c.target);
      c.args = c.args.map(transform);
      const a = c.args;
      if (c.function === '_[_]' && a[1]?.exprKind.case === 'callExpr' && a[1].exprKind.value.function === OPT_INDEX) {
        const r = call('k8s.optIndex', [a[0]!, a[1].exprKind.value.args[0]!]);
        r.id = e.id;
        return r;
      }
      if (c.target && a.length === 2 && a[0]?.exprKind.case === 'identExpr' && c.function in ONE_VAR) {
        const v = (a[0].exprKind.value as { name: string }).name;
        const target = c.target;
        const tpl = parse(ONE_VAR[c.function]!(v)).expr!;
        const r = substitute(
          renumber(tpl),
          new Map([
            ['__t__', () => target],
            ['__b__', () => a[1]!],
          ]),
        );
        r.id = e.id;
        return r;
      }
      const twoIdents = a[0]?.exprKind.case === 'identExpr' && a[1]?.exprKind.case === 'identExpr';
      if (c.target && twoIdents && ((a.length === 3 && c.function in TEMPLATES) || (a.length === 4 && `${c.function}4` in TEMPLATES))) {
        const i = (a[0]!.exprKind.value as { name: string }).name;
        const v = (a[1]!.exprKind.value as { name: string }).name;
        const r = a.length === 4 ? twoVar(c.function, c.target, i, v, a[3]!, a[2]) : twoVar(c.function, c.target, i, v, a[2]!);
        r.id = e.id;
        return r;
      }
      return e;
    }
    case 'listExpr': {
      k.value.elements = k.value.elements.map(transform);
      // optional elements ([?x]): the list goes through k8s.optList with their indexes
      const optional: Expr[] = [];
      k.value.elements = k.value.elements.map((el, idx) => {
        if (el.exprKind.case === 'callExpr' && el.exprKind.value.function === OPT_ELEM && el.exprKind.value.args.length === 1) {
          optional.push(intConst(BigInt(idx)));
          return el.exprKind.value.args[0]!;
        }
        return el;
      });
      if (optional.length === 0) return e;
      const indexes = node({ case: 'listExpr', value: { $typeName: 'cel.expr.Expr.CreateList', elements: optional, optionalIndices: [] } } as Expr['exprKind']);
      return call('k8s.optList', [e, indexes]);
    }
    case 'structExpr': {
      // optional entries ({?k: v}): the map goes through k8s.optMapLit with their keys
      const keys: Expr[] = [];
      for (const en of k.value.entries) {
        if (en.value) en.value = transform(en.value);
        if (en.keyKind.case === 'mapKey') en.keyKind.value = transform(en.keyKind.value);
        const v = en.value;
        if (v && v.exprKind.case === 'callExpr' && v.exprKind.value.function === OPT_ENTRY && v.exprKind.value.args.length === 1) {
          en.value = v.exprKind.value.args[0]!;
          if (en.keyKind.case === 'mapKey') keys.push(structuredClone(en.keyKind.value));
        }
      }
      if (keys.length === 0) return e;
      const list = node({ case: 'listExpr', value: { $typeName: 'cel.expr.Expr.CreateList', elements: keys, optionalIndices: [] } } as Expr['exprKind']);
      return call('k8s.optMapLit', [e, list]);
    }
    case 'comprehensionExpr': {
      const c = k.value;
      for (const part of ['iterRange', 'accuInit', 'loopCondition', 'loopStep', 'result'] as const) if (c[part]) c[part] = transform(c[part]!);
      return e;
    }
    default:
      return e;
  }
}

/** pairsFunc is k8s.pairs: [index, item] of a list, [key, value] of a map. */
export const pairsFunc: CelFunc = celFunc('k8s.pairs', [CelScalar.DYN], CelScalar.DYN, (r) => {
  if (isCelList(r)) return [...r].map((v, i) => [BigInt(i), v as CelInput]);
  if (isCelMap(r)) return [...r].map(([k, v]) => [k as CelInput, v as CelInput]);
  throw new Error('no such overload');
});
