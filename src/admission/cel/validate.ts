/**
 * @module admission/cel/validate
 * Running the compiled rules over an object as the CRD handler's CEL validator does: depth first, a node's
 * rules before its children, null values skipped, transition rules only with an old value (or an optional
 * oldSelf), old values followed through object fields, map values and list-map items (by their keys), a runtime
 * cost budget for the whole object and a per-call limit, and kube's words for every outcome. Errors of rules
 * without oldSelf on a value unchanged from the old object are ratcheted to warnings (CRDValidationRatcheting).
 */
import type { CelInput } from '@bufbuild/cel';
import { forbidden, formatValue, invalid, required, type FieldError } from '../../apis/meta/field-path.js';
import type { RuleNode } from './compile.js';
import { estimateCost, PER_CALL_LIMIT } from './cost.js';
import { optNone, optOf } from './lib/opaque.js';
import { checkExpr } from './checker.js';
import type { ValidationRule } from './rules.js';
import { T, type CelT } from './types.js';
import { toCel } from './values.js';

interface Run {
  /** cap: the whole object's JSON length, the longest any value in a rule can be. */
  cap: number;
  errors: FieldError[];
  warnings: string[];
  budget: number;
}

/** valueErr is field.Invalid/Duplicate as 1.37 prints a failed rule: scalar values shown, objects and lists left out. */
function valueErr(type: 'Invalid' | 'Duplicate', at: string, v: unknown, detail?: string): FieldError {
  const shown = v === null || typeof v !== 'object' ? `: ${formatValue(v)}` : '';
  const body = type === 'Invalid' ? `Invalid value${shown}: ${detail}` : `Duplicate value${shown}`;
  return { type: type === 'Invalid' ? 'FieldValueInvalid' : 'FieldValueDuplicate', field: at, message: `${at}: ${body}` };
}

/** typeNameOf is the schema type kube prints as the invalid value (`"object"`, `"string"`). */
function schemaTypeName(n: RuleNode): string {
  return n.schema.type ?? '';
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((x, i) => deepEqual(x, (b as unknown[])[i]));
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

const ruleErrorString = (r: ValidationRule) => (r.message?.trim() ? r.message.trim() : r.rule.trim());
const ruleMessageOrDefault = (r: ValidationRule) => (r.message?.trim() ? r.message.trim() : `failed rule: ${ruleErrorString(r)}`);

/** shapeOf types an actual value with its actual sizes, for the runtime cost. */
function shapeOf(v: unknown, declared: CelT): CelT {
  if (typeof v === 'string') return { k: declared.k === 'dyn' ? 'string' : declared.k, size: v.length } as CelT;
  if (Array.isArray(v)) {
    const elemDecl = declared.k === 'list' ? declared.elem : T.dyn;
    let elem: CelT = elemDecl;
    for (const x of v) elem = mergeShape(elem, shapeOf(x, elemDecl));
    return T.list(elem, v.length);
  }
  if (v && typeof v === 'object') {
    if (declared.k === 'object') {
      const fields = new Map<string, CelT>();
      // an absent field costs nothing to walk: it is an error to reach
      for (const [k, t] of declared.fields) fields.set(k, k in (v as object) ? shapeOf((v as Record<string, unknown>)[k], t) : emptyShape(t));
      return { k: 'object', fields };
    }
    const valDecl = declared.k === 'map' ? declared.val : T.dyn;
    let val: CelT = valDecl;
    for (const x of Object.values(v as object)) val = mergeShape(val, shapeOf(x, valDecl));
    return T.map({ k: 'string', size: Math.max(0, ...Object.keys(v as object).map((k) => k.length)) }, val, Object.keys(v as object).length);
  }
  return declared;
}
function emptyShape(t: CelT): CelT {
  if (t.k === 'list') return T.list(emptyShape(t.elem), 0);
  if (t.k === 'map') return T.map(t.key, emptyShape(t.val), 0);
  if (t.k === 'object') return { k: 'object', fields: new Map([...t.fields].map(([k, f]) => [k, emptyShape(f)])) };
  if (t.k === 'string' || t.k === 'bytes') return { k: t.k, size: 0 };
  return t;
}
function mergeShape(a: CelT, b: CelT): CelT {
  const sa = 'size' in a ? a.size : undefined;
  const sb = 'size' in b ? b.size : undefined;
  if (sa === undefined || sb === undefined || sb <= sa) return sa === undefined ? b : a;
  return b;
}

// costs of rules over scalars (list items, map values) by program and size: the same few shapes recur
const scalarCosts = new WeakMap<object, Map<string, number>>();

function runtimeCost(ast: Parameters<typeof estimateCost>[0], self: CelT, source: string, cap: number, oldSelf?: CelT): number {
  const scalar =
    self.k !== 'list' && self.k !== 'map' && self.k !== 'object' && (!oldSelf || (oldSelf.k !== 'list' && oldSelf.k !== 'map' && oldSelf.k !== 'object'));
  if (scalar) {
    const key = JSON.stringify([self, oldSelf ?? null, cap]);
    let m = scalarCosts.get(ast);
    if (!m) scalarCosts.set(ast, (m = new Map()));
    const hit = m.get(key);
    if (hit !== undefined) return hit;
    const cost = computeRuntimeCost(ast, self, source, cap, oldSelf);
    if (m.size < 1000) m.set(key, cost);
    return cost;
  }
  return computeRuntimeCost(ast, self, source, cap, oldSelf);
}

function computeRuntimeCost(ast: Parameters<typeof estimateCost>[0], self: CelT, source: string, cap: number, oldSelf?: CelT): number {
  const vars = new Map<string, CelT>([['self', self]]);
  if (oldSelf) vars.set('oldSelf', oldSelf);
  const checked = checkExpr(ast, {}, vars, source);
  return estimateCost(ast, checked.types, cap);
}

/** evalNode runs the node's rules on `obj` (non-null) at `p`; `old` is the correlated old value, if any. */
function evalRules(n: RuleNode, p: string, obj: unknown, old: unknown, unchanged: boolean, run: Run): void {
  if (n.rules.length === 0) return;
  const typeName = schemaTypeName(n);
  if (run.budget <= 0) {
    run.errors.push(invalid(p, typeName, 'validation failed due to running out of cost budget, no further validation rules will be run'));
    run.budget = -1;
    return;
  }
  const declared = n.type;
  const self = toCel(obj, n.schema, n.root);
  const oldSelf = old === undefined ? undefined : toCel(old, n.schema, n.root);
  const selfShape = shapeOf(obj, declared);
  const oldShape = old === undefined ? undefined : shapeOf(old, declared);
  for (const c of n.rules) {
    const r = c.rule;
    const optional = r.optionalOldSelf === true;
    if (c.program.usesOldSelf && old === undefined && !optional) continue;
    const bindings: Record<string, CelInput> = { self };
    if (c.program.usesOldSelf) bindings.oldSelf = optional ? (old === undefined ? optNone() : optOf(oldSelf as CelInput)) : (oldSelf as CelInput);
    const oldT = oldShape ?? declared;
    const cost = runtimeCost(c.program.ast, selfShape, r.rule, run.cap, c.program.usesOldSelf ? (optional ? T.opt(oldT) : oldT) : undefined);
    if (cost > PER_CALL_LIMIT) {
      run.errors.push(
        invalid(
          p,
          typeName,
          `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(r)}`,
        ),
      );
      run.budget = -1;
      return;
    }
    if (cost > run.budget) {
      run.errors.push(invalid(p, typeName, 'validation failed due to running out of cost budget, no further validation rules will be run'));
      run.budget = -1;
      return;
    }
    run.budget -= cost;
    const out = c.program.run(bindings);
    if (out.error !== undefined) {
      if (out.error.startsWith('no such overload'))
        run.errors.push(
          invalid(
            p,
            typeName,
            `'${out.error}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(r)}`,
          ),
        );
      else run.errors.push(invalid(p, typeName, `${out.error} evaluating rule: ${ruleErrorString(r)}`));
      continue;
    }
    if (out.value === true) continue;
    const at = c.fieldPath ? (c.fieldPath.startsWith('[') ? `${p}${c.fieldPath}` : `${p}.${c.fieldPath}`) : p;
    let detail = ruleMessageOrDefault(r);
    if (c.message) {
      const m = c.message.run(bindings);
      const mcost = runtimeCost(c.message.ast, selfShape, r.messageExpression ?? '', run.cap);
      if (mcost > run.budget) {
        run.errors.push(
          invalid(at, typeName, 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'),
        );
        run.budget = -1;
        return;
      }
      run.budget -= mcost;
      const text = typeof m.value === 'string' ? m.value.trim() : '';
      if (m.error === undefined && text && text.length <= 5 * 1024 && !/\n/.test(text)) detail = text;
    }
    let e: FieldError;
    switch (r.reason) {
      case 'FieldValueForbidden':
        e = forbidden(at, detail);
        break;
      case 'FieldValueRequired':
        e = required(at, detail);
        break;
      case 'FieldValueDuplicate':
        e = valueErr('Duplicate', at, obj);
        break;
      default:
        e = valueErr('Invalid', at, obj, detail);
    }
    if (!c.program.usesOldSelf && unchanged) run.warnings.push(e.message);
    else run.errors.push(e);
  }
}

/** listMapKeyOf finds the old item with the same list-map keys. */
function correlateItem(n: RuleNode, item: unknown, oldList: unknown[] | undefined): unknown {
  if (!oldList || n.schema['x-kubernetes-list-type'] !== 'map' || !item || typeof item !== 'object') return undefined;
  const keys = n.schema['x-kubernetes-list-map-keys'] ?? [];
  return oldList.find(
    (o) => o && typeof o === 'object' && keys.every((k) => deepEqual((o as Record<string, unknown>)[k], (item as Record<string, unknown>)[k])),
  );
}

/** base is the path children extend: the root's is empty, though its own errors say <nil>. */
const base = (p: string) => (p === '<nil>' ? '' : p);

/** walk validates `obj` at node `n`, then its children. */
export function walk(n: RuleNode, p: string, obj: unknown, old: unknown, parentUnchanged: boolean, run: Run): void {
  if (obj === null || obj === undefined || run.budget < 0) return;
  const unchanged = old !== undefined ? deepEqual(obj, old) : parentUnchanged;
  evalRules(n, p, obj, old, unchanged, run);
  if (run.budget < 0) return;
  if (Array.isArray(obj)) {
    if (!n.items) return;
    const oldList = Array.isArray(old) ? old : undefined;
    obj.forEach((item, i) => {
      if (run.budget < 0) return;
      const o = correlateItem(n, item, oldList);
      walk(n.items!, `${base(p)}[${i}]`, item, o, o === undefined ? unchanged : false, run);
    });
    return;
  }
  if (typeof obj === 'object') {
    const oldObj = old && typeof old === 'object' && !Array.isArray(old) ? (old as Record<string, unknown>) : undefined;
    const mapType = n.schema['x-kubernetes-map-type'];
    const correlatable = mapType === undefined || mapType === 'granular' || mapType === 'atomic';
    for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
      if (run.budget < 0) return;
      const child = n.properties.get(k);
      const o = correlatable ? oldObj?.[k] : undefined;
      if (n.additionalProperties && !n.schema.properties) walk(n.additionalProperties, `${base(p)}[${k}]`, v, o, unchanged, run);
      if (child) walk(child, base(p) ? `${base(p)}.${k}` : k, v, o, unchanged, run);
    }
  }
}

/** validateTree runs every rule under `root` with a fresh budget. */
export function validateTree(root: RuleNode, obj: unknown, old: unknown, budget: number): { errors: FieldError[]; warnings: string[]; cost: number } {
  const run: Run = { cap: Math.max(64, JSON.stringify(obj ?? null).length), errors: [], warnings: [], budget };
  walk(root, '<nil>', obj, old, false, run);
  return { errors: run.errors, warnings: run.warnings, cost: Math.max(0, budget - Math.max(run.budget, 0)) };
}
