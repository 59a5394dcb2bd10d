/**
 * @module admission/cel/cost
 * An estimate of a rule's worst-case cost in cel-go's units, from the checked types' sizes (maxLength, maxItems,
 * maxProperties, else what fits in a 3 MiB request). It follows cel-go's checker/cost.go in the large: an
 * identifier or field selection costs 1, has() 0, a call 1 plus its arguments, string and list traversals
 * 0.1 per byte (ceil; a maxLength is 4 bytes a character), a regular expression the string's traversal times
 * 0.25 per character of the pattern, and a
 * comprehension its range size times its body. It is an approximation: what matters is that bounded rules stay
 * well under the limits and quadratic walks over unbounded data go far over them, as with kube.
 * The same estimate with the actual value's sizes stands in for cel-go's runtime cost tracking.
 */
import type { Expr } from './rewrite.js';
import type { CelT } from './types.js';

/** Limits of apiserver/pkg/apis/cel/config.go. */
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

/** sizeOfCapped: a node's size; `cap` bounds what a run cannot exceed (no value is longer than its object). */
const sizeOfCapped = (t: CelT | undefined, cap = Infinity): number => Math.min(cap, t && 'size' in t && t.size !== undefined ? t.size : 1);
// cel-go traverses a string of n bytes at ceil((1 + n) * 0.1)
const trav = (n: number) => Math.ceil((1 + n) * 0.1);

/** estimateCost is the worst-case cost of `e`, given the checker's type (with size) of each node; at run time
 * `cap` (the object's JSON length) stands for sizes the estimate cannot bound, such as string(int). */
export function estimateCost(e: Expr, types: Map<bigint, CelT>, cap = Infinity): number {
  const ty = (x: Expr) => types.get(x.id);
  const sizeOf = (t: CelT | undefined) => sizeOfCapped(t, cap);
  const cost = (x: Expr): number => {
    const k = x.exprKind;
    switch (k.case) {
      case 'constExpr':
        return 0;
      case 'identExpr':
        return 1;
      case 'selectExpr':
        return (k.value.testOnly ? 0 : 1) + (k.value.operand ? cost(k.value.operand) : 0);
      case 'listExpr':
        return 10 + k.value.elements.reduce((s, el) => s + cost(el), 0);
      case 'structExpr':
        return 30 + k.value.entries.reduce((s, en) => s + (en.value ? cost(en.value) : 0) + (en.keyKind.case === 'mapKey' ? cost(en.keyKind.value) : 0), 0);
      case 'comprehensionExpr': {
        const c = k.value;
        const n = sizeOf(ty(c.iterRange!));
        const body = (c.loopCondition ? cost(c.loopCondition) : 0) + cost(c.loopStep!);
        return cost(c.iterRange!) + cost(c.accuInit!) + n * body + cost(c.result!);
      }
      case 'callExpr': {
        const c = k.value;
        const args = c.args.reduce((s, a) => s + cost(a), 0) + (c.target ? cost(c.target) : 0);
        if (c.function === '_&&_' || c.function === '_||_') return args;
        // the two-variable rewrites' pair and its halves stand for plain variables: cost them so
        if (c.function === 'k8s.pairs') return args;
        const pairVar = c.function === '_[_]' && c.args[0]?.exprKind.case === 'identExpr' ? ty(c.args[0]) : undefined;
        if (pairVar?.k === 'list' && pairVar.pair) return 1;
        // a conditional runs its condition and the dearer branch
        if (c.function === '_?_:_') return cost(c.args[0]!) + Math.max(cost(c.args[1]!), cost(c.args[2]!));
        const operands = [...(c.target ? [c.target] : []), ...c.args].map((a) => ty(a));
        const [a0, a1] = operands;
        const strLike = (t?: CelT) => t !== undefined && (t.k === 'string' || t.k === 'bytes');
        switch (c.function) {
          case '_==_':
          case '_!=_':
          case '_<_':
          case '_<=_':
          case '_>_':
          case '_>=_':
            // a comparison stops at the shorter string
            if (strLike(a0) || strLike(a1)) return args + 1 + trav(Math.min(sizeOf(a0), sizeOf(a1)));
            if (a0?.k === 'list' || a0?.k === 'map' || a0?.k === 'object') return args + 1 + sizeOf(a0) * 2;
            return args + 1;
          case '_+_':
            if (strLike(a0)) return args + 1 + trav(sizeOf(a0) + sizeOf(a1));
            return args + 1;
          case '@in':
            return args + 1 + (a1?.k === 'list' ? sizeOf(a1) : 0);
          case 'matches':
          case 'find':
          case 'findAll': {
            // the string's traversal times the pattern's length at 0.25 (a guess of 4 characters a term)
            const str = c.target ? a0 : operands[0];
            const pat = operands[c.target ? 1 : 1];
            return args + trav(sizeOf(str)) * Math.ceil(sizeOf(pat) * 0.25);
          }
          case 'startsWith':
          case 'endsWith':
            return args + 1 + trav(sizeOf(a1));
          case 'split':
          case 'replace':
            return args + 1 + 2 * trav(sizeOf(a0));
          case 'url':
          case 'isURL':
            return args + 1;
          case 'validate':
            // kube refuses a named-format check of an unbounded string by a wide margin
            return args + 1 + 100 * trav(sizeOf(a1));
          case 'contains':
          case 'lowerAscii':
          case 'upperAscii':
          case 'trim':
          case 'substring':
          case 'charAt':
          case 'quantity':
          case 'isQuantity':
          case 'semver':
          case 'isSemver':
          case 'ip':
          case 'isIP':
          case 'cidr':
          case 'isCIDR':
            return args + 1 + trav(sizeOf(a0)) + (a0?.k === 'list' ? sizeOf(a0) : 0);
          case 'sort':
          case 'distinct':
          case 'k8s.sortByKeys':
            // each item against the others, as far as kube's estimate goes (it refuses either on an unbounded list)
            return args + 1 + sizeOf(a0) * sizeOf(a0);
          case 'join':
            // kube bounds no join: its estimate is the traversal of an unbounded result (even of a literal list)
            return args + 1 + trav(sizeOf(ty(x)));
          case 'isSorted':
          case 'sum':
          case 'min':
          case 'max':
          case 'indexOf':
          case 'lastIndexOf':
            if (a0?.k === 'list') {
              const el = a0.elem;
              return args + 1 + sizeOf(a0) * (strLike(el) ? trav(sizeOf(el)) : 1);
            }
            return args + 1 + trav(sizeOf(a0));
          case 'sets.contains':
          case 'sets.equivalent':
          case 'sets.intersects':
            return args + 1 + sizeOf(a0) * Math.max(1, c.function.startsWith('sets.') ? sizeOf(a1) : 1);
          default:
            return args + 1;
        }
      }
      default:
        return 0;
    }
  };
  return cost(e);
}

/** costFactorMessage words how far over budget an estimate is, as getCostErrorMessage does. */
export function costFactorMessage(what: string, cost: number, limit: number): string {
  const f = cost / limit;
  let factor: string;
  if (f > 100) factor = 'more than 100x';
  else if (f < 1.5) factor = `${f.toFixed(6)}x`;
  else factor = `${f.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
