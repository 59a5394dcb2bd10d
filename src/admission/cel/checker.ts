/**
 * @module admission/cel/checker
 * A static type check of a parsed rule, standing in for cel-go's checker (which @bufbuild/cel lacks): it types
 * every node from the declared variables, reports cel-go's own words (`undefined field 'x'`, `undeclared
 * reference to 'f' (in container '')`, `found no matching overload for '_==_' applied to '(int, string)'`,
 * `invalid matches argument`) at cel-go's positions, and leaves a type per node (with schema sizes) for the cost
 * estimator. Where it is unsure it says dyn, so it may accept a rule cel-go refuses, never the reverse.
 */
import { isValidRe2 } from './lib/re2.js';
import type { Expr } from './rewrite.js';
import { isDyn, OPERATORS, SIGS, TYPE_NAMES } from './signatures.js';
import { T, typeName, type CelT } from './types.js';

export interface CheckIssue {
  offset: number;
  message: string;
}

export interface Checked {
  type: CelT;
  types: Map<bigint, CelT>;
  issues: CheckIssue[];
  /** usesOldSelf: the rule names oldSelf (a transition rule). */
  usesOldSelf: boolean;
}

/** checkExpr types `e` with the variables given (self, oldSelf); comprehension variables are scoped. */
export function checkExpr(e: Expr, positionsIn: Record<string, number>, vars: Map<string, CelT>, source: string): Checked {
  const types = new Map<bigint, CelT>();
  const issues: CheckIssue[] = [];
  let usesOldSelf = false;
  const positions = new Map<bigint, number>();
  // types of literals that already failed the homogeneity check: they match nothing else
  const poisoned = new Set<CelT>();
  const homogeneous = (a: CelT, b: CelT) => !poisoned.has(a) && !poisoned.has(b) && typeName(a) === typeName(b);
  // cel-go exempts format()'s argument list from the homogeneity check
  const exempt = new Set<bigint>();
  const err = (id: bigint, message: string, offset?: number) => issues.push({ offset: offset ?? positions.get(id) ?? 0, message });

  const visit = (x: Expr, scope: Map<string, CelT>): CelT => {
    const t = type(x, scope);
    types.set(x.id, t);
    return t;
  };

  const callOffset = (x: Expr, fn: string, hasTarget: boolean): number | undefined => {
    // cel-go places a call at its '(' ; the parser at the name (or the dot before a method)
    const p = positions.get(x.id);
    if (p === undefined) return undefined;
    const at = source.indexOf('(', p + (hasTarget ? 1 : 0) + (fn.includes('.') ? 0 : fn.length) - 1);
    return at >= 0 ? at : p;
  };

  // cel-go places a binary operator at its symbol; the parser at the end of the left operand
  const operatorOffset = (x: Expr, fn: string): number | undefined => {
    const p = positions.get(x.id);
    const sym = OPERATORS[fn];
    if (p === undefined || !sym) return p;
    const at = source.indexOf(sym, p);
    return at >= 0 ? at : p;
  };

  /** nodeOffset is where cel-go reports a node: a call at its '(' or operator, anything else where it starts. */
  const nodeOffset = (x: Expr): number | undefined => {
    if (x.exprKind.case !== 'callExpr') return positions.get(x.id);
    const fn = x.exprKind.value.function;
    return OPERATORS[fn] ? operatorOffset(x, fn) : callOffset(x, fn, !!x.exprKind.value.target);
  };

  const type = (x: Expr, scope: Map<string, CelT>): CelT => {
    const k = x.exprKind;
    switch (k.case) {
      case 'constExpr': {
        const c = k.value.constantKind;
        switch (c.case) {
          case 'boolValue':
            return T.bool;
          case 'int64Value':
            return T.int;
          case 'uint64Value':
            return T.uint;
          case 'doubleValue':
            return T.double;
          case 'stringValue':
            return { k: 'string', size: c.value.length };
          case 'bytesValue':
            return { k: 'bytes', size: c.value.length };
          case 'nullValue':
            return T.null;
          default:
            return T.dyn;
        }
      }
      case 'identExpr': {
        const name = k.value.name;
        if (name === 'oldSelf') usesOldSelf = true;
        const t = scope.get(name) ?? (TYPE_NAMES.has(name) ? T.type : undefined);
        if (t) return t;
        err(x.id, `undeclared reference to '${name}' (in container '')`);
        return T.dyn;
      }
      case 'selectExpr': {
        const operand = k.value.operand!;
        const qual = qualified(x);
        if (qual && !scope.has(qual.split('.')[0]!) && SIGS[qual]) return T.dyn;
        const ot = visit(operand, scope);
        const f = k.value.field;
        let ft: CelT = T.dyn;
        if (ot.k === 'opt' && !k.value.testOnly) {
          // a field of an optional is an optional (cel-go): run it as the optional accessor
          const inner = ot.inner;
          if (inner.k === 'object' && !inner.fields.has(f)) err(x.id, `undefined field '${f}'`);
          const fieldT = inner.k === 'object' ? (inner.fields.get(f) ?? T.dyn) : inner.k === 'map' ? inner.val : T.dyn;
          x.exprKind = {
            case: 'callExpr',
            value: { $typeName: 'cel.expr.Expr.Call', function: 'k8s.optSelect', args: [operand, stringConst(f)] },
          } as Expr['exprKind'];
          return T.opt(fieldT);
        }
        if (ot.k === 'object') {
          const field = ot.fields.get(f);
          if (!field) err(x.id, `undefined field '${f}'`);
          else ft = field;
        } else if (ot.k === 'map') ft = ot.val;
        else if (!isDyn(ot)) {
          err(x.id, `type '${typeName(ot)}' does not support field selection`);
        }
        return k.value.testOnly ? T.bool : ft;
      }
      case 'callExpr': {
        const c = k.value;
        const fn = c.function;
        if (fn === 'k8s.optSelect') {
          const ot = visit(c.args[0]!, scope);
          const f = (c.args[1]!.exprKind.value as { constantKind: { value: string } }).constantKind.value;
          const base = ot.k === 'opt' ? ot.inner : ot;
          if (base.k === 'object') {
            const field = base.fields.get(f);
            if (!field) {
              err(x.id, `undefined field '${f}'`);
              return T.opt(T.dyn);
            }
            return T.opt(field);
          }
          return T.opt(base.k === 'map' ? base.val : T.dyn);
        }
        if (fn === 'k8s.optList') {
          // the list's optional elements count as their values' type
          const lit = c.args[0]!;
          exempt.add(lit.id);
          const lt = visit(lit, scope);
          visit(c.args[1]!, scope);
          const idx = new Set(
            (c.args[1]!.exprKind.value as { elements: Expr[] }).elements.map((x) =>
              Number((x.exprKind.value as { constantKind: { value: bigint } }).constantKind.value),
            ),
          );
          const els = (lit.exprKind.value as { elements: Expr[] }).elements.map((x, i) => {
            const t = types.get(x.id) ?? T.dyn;
            return idx.has(i) && t.k === 'opt' ? t.inner : t;
          });
          // optional.none() stands for any type: the first other element sets it
          const firstAt = els.findIndex((t) => !isDyn(t));
          const first = els[firstAt] ?? T.dyn;
          els.forEach((t, i) => {
            if (i > firstAt && !isDyn(t) && !homogeneous(first, t))
              err(
                lit.id,
                `expected type '${typeName(first)}' but found '${typeName(t)}'`,
                nodeOffset((lit.exprKind.value as { elements: Expr[] }).elements[i]!),
              );
          });
          return T.list(first, (lt as { size?: number }).size);
        }
        if (fn === 'k8s.optMapLit') {
          // the optional entries' values count as their values' type
          const lit = c.args[0]!;
          exempt.add(lit.id);
          const mt = visit(lit, scope);
          visit(c.args[1]!, scope);
          if (mt.k !== 'map') return mt;
          return T.map(mt.key, mt.val.k === 'opt' ? mt.val.inner : mt.val, mt.size);
        }
        if (fn === 'k8s.optIndex') {
          const ct = visit(c.args[0]!, scope);
          visit(c.args[1]!, scope);
          const base = ct.k === 'opt' ? ct.inner : ct;
          return T.opt(base.k === 'list' ? base.elem : base.k === 'map' ? base.val : T.dyn);
        }
        const qual = c.target ? qualified(c.target) : undefined;
        const qname = qual && !scope.has(qual.split('.')[0]!) ? `${qual}.${fn}` : undefined;
        const sig = SIGS[qname ?? ''] ?? SIGS[fn];
        const useTarget = c.target && !(qname && SIGS[qname]);
        if (fn === 'format' && c.args[0]?.exprKind.case === 'listExpr') exempt.add(c.args[0].id);
        const target = useTarget ? visit(c.target!, scope) : undefined;
        const args = c.args.map((a) => visit(a, scope));
        if (!sig) {
          err(x.id, `undeclared reference to '${fn}' (in container '')`, callOffset(x, fn, !!useTarget));
          return T.dyn;
        }
        if ((fn === 'duration' || fn === 'timestamp') && !useTarget && c.args.length === 1) {
          const lit = c.args[0]!.exprKind;
          if (lit.case === 'constExpr' && lit.value.constantKind.case === 'stringValue' && !validTimeLiteral(fn, lit.value.constantKind.value)) {
            err(c.args[0]!.id, `invalid ${fn} argument`);
            return fn === 'duration' ? T.duration : T.timestamp;
          }
        }
        if ((fn === 'matches' || fn === 'find' || fn === 'findAll') && c.args[useTarget ? 0 : 1]) {
          const patExpr = c.args[useTarget ? 0 : 1]!;
          const pat = patExpr.exprKind;
          if (pat.case === 'constExpr' && pat.value.constantKind.case === 'stringValue' && !isValidRe2(pat.value.constantKind.value)) {
            // cel-go points at the pattern itself
            err(patExpr.id, `invalid ${fn} argument`);
            return T.bool;
          }
        }
        const pairOf = fn === '_[_]' && args[0]?.k === 'list' ? args[0].pair : undefined;
        const idx = c.args[1]?.exprKind;
        if (pairOf && idx?.case === 'constExpr' && idx.value.constantKind.case === 'int64Value') return pairOf[Number(idx.value.constantKind.value)] ?? T.dyn;
        const r = sig(args, target);
        if (r) return fn === 'size' || fn.startsWith('_') ? r : sized(fn, r, target, args);
        const shown = target ? `${typeName(target)}.(${args.map(typeName).join(', ')})` : `(${args.map(typeName).join(', ')})`;
        const name = qname && SIGS[qname] ? qname : fn;
        const op = fn.startsWith('_') || fn.startsWith('@') || fn === '!_' || fn === '-_';
        err(x.id, `found no matching overload for '${name}' applied to '${shown}'`, op ? operatorOffset(x, fn) : callOffset(x, fn, !!useTarget));
        return T.dyn;
      }
      case 'listExpr': {
        // HomogeneousAggregateLiterals: every element of the first's type
        const els = k.value.elements.map((el) => visit(el, scope));
        const elem: CelT = els[0] ?? T.dyn;
        let bad = false;
        if (!exempt.has(x.id) && x.id < 1_000_000n)
          // not the rewrites' own lists
          els.slice(1).forEach((el, i) => {
            if (!homogeneous(elem, el)) {
              err(x.id, `expected type '${typeName(elem)}' but found '${typeName(el)}'`, nodeOffset(k.value.elements[i + 1]!));
              bad = true;
            }
          });
        // cel-go does not size the strings of a list literal: what walks them (min, indexOf, join) is unbounded
        const sizedElem: CelT = elem.k === 'string' || elem.k === 'bytes' ? { k: elem.k, size: UNBOUNDED } : elem;
        const t = T.list(bad ? T.dyn : sizedElem, els.length);
        if (bad) poisoned.add(t);
        return t;
      }
      case 'structExpr': {
        let key: CelT = T.dyn;
        let val: CelT = T.dyn;
        k.value.entries.forEach((en, i) => {
          const kt = en.keyKind.case === 'mapKey' ? visit(en.keyKind.value, scope) : T.string;
          const vt = en.value ? visit(en.value, scope) : T.dyn;
          if (i === 0) [key, val] = [kt, vt];
          else if (!exempt.has(x.id)) {
            if (en.keyKind.case === 'mapKey' && !homogeneous(key, kt))
              err(x.id, `expected type '${typeName(key)}' but found '${typeName(kt)}'`, nodeOffset(en.keyKind.value));
            if (en.value && !homogeneous(val, vt)) err(x.id, `expected type '${typeName(val)}' but found '${typeName(vt)}'`, nodeOffset(en.value));
          }
        });
        return T.map(key, val, k.value.entries.length);
      }
      case 'comprehensionExpr': {
        const c = k.value;
        const rt = visit(c.iterRange!, scope);
        const iterT = rt.k === 'list' ? rt.elem : rt.k === 'map' ? rt.key : T.dyn;
        if (!isDyn(rt) && rt.k !== 'list' && rt.k !== 'map')
          err(c.iterRange!.id, `expression of type '${typeName(rt)}' cannot be range of a comprehension (must be list, map, or dynamic)`);
        const accT = visit(c.accuInit!, scope);
        const inner = new Map(scope);
        inner.set(c.iterVar, iterT);
        inner.set(c.accuVar, accT.k === 'list' ? T.list(T.dyn, (rt as { size?: number }).size) : accT);
        if (c.loopCondition) visit(c.loopCondition, inner);
        const stepT = visit(c.loopStep!, inner);
        if (accT.k === 'list' && stepT.k === 'list') inner.set(c.accuVar, { ...stepT, size: (rt as { size?: number }).size });
        return visit(c.result!, inner);
      }
      default:
        return T.dyn;
    }
  };

  for (const [id, off] of Object.entries(positionsIn)) positions.set(BigInt(id), off);
  const t = visit(e, vars);
  return { type: t, types, issues, usesOldSelf };
}

const stringConst = (v: string): Expr =>
  ({
    $typeName: 'cel.expr.Expr',
    id: 0n,
    exprKind: { case: 'constExpr', value: { $typeName: 'cel.expr.Constant', constantKind: { case: 'stringValue', value: v } } },
  }) as Expr;

/** validTimeLiteral: cel-go's literal validators accept Go durations and RFC 3339 timestamps only. */
function validTimeLiteral(fn: string, s: string): boolean {
  if (fn === 'duration') return /^[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)$/.test(s);
  return /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s));
}

/** qualified is the dotted name a select chain of identifiers spells (`sets.contains` target `sets`). */
function qualified(x: Expr): string | undefined {
  const k = x.exprKind;
  if (k.case === 'identExpr') return k.value.name;
  if (k.case === 'selectExpr' && k.value.operand && !k.value.testOnly) {
    const q = qualified(k.value.operand);
    return q ? `${q}.${k.value.field}` : undefined;
  }
  return undefined;
}

/** UNBOUNDED is cel-go's size of what it cannot bound (max uint64). */
const UNBOUNDED = 1.8446744073709552e19;

/** sized gives a result the size the cost estimator needs where it follows from the inputs. */
function sized(fn: string, r: CelT, target: CelT | undefined, args: CelT[]): CelT {
  const sz = (t?: CelT) => (t as { size?: number } | undefined)?.size;
  if (['lowerAscii', 'upperAscii', 'trim', 'substring', 'replace', 'find', 'charAt'].includes(fn) && r.k === 'string') return { k: 'string', size: sz(target) };
  if ((fn === 'split' || fn === 'findAll') && r.k === 'list') return T.list({ k: 'string', size: sz(target) }, sz(target));
  // cel-go knows no bound for these results' text
  if (fn === 'join' && r.k === 'string') return { k: 'string', size: UNBOUNDED };
  if (fn === 'string' && r.k === 'string') return { k: 'string', size: args[0]?.k === 'string' ? sz(args[0]) : args[0]?.k === 'opaque' ? 64 : UNBOUNDED };
  return r;
}
