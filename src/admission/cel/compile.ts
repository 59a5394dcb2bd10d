/**
 * @module admission/cel/compile
 * Compiling every x-kubernetes-validations rule of a version's schema as CRD validation does: per node, the
 * rules' own fields first; then, when nothing at or below the node is wrong with those, each rule compiled
 * against the node's type (must be bool), its messageExpression (must be string), the per-rule estimated cost
 * (times how many times the node can occur) against StaticEstimatedCostLimit, optionalOldSelf only with
 * oldSelf, no oldSelf under a list that cannot correlate old items; then the total against
 * StaticEstimatedCRDCostLimit, naming the most expensive rules.
 */
import { forbidden, invalid, type FieldError } from '../../apis/meta/field-path.js';
import type { JSONSchema } from '../../apis/meta/json-schema.js';
import { costFactorMessage, estimateCost, STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT } from './cost.js';
import { compileExpression, type Program } from './program.js';
import { resolveFieldPath, ruleFieldErrors, ruleJSON, rulesOf, type ValidationRule } from './rules.js';
import { maxListItems, maxMapProperties, nameObjects, schemaType, T, type CelT } from './types.js';

export interface CompiledRule {
  rule: ValidationRule;
  program: Program;
  message?: Program;
  /** fieldPath normalized (`spec.x`), appended to the node's path for the error. */
  fieldPath?: string;
}

/** RuleNode parallels the schema: its compiled rules and the nodes below that have any. */
export interface RuleNode {
  schema: JSONSchema;
  root: boolean;
  type: CelT;
  rules: CompiledRule[];
  properties: Map<string, RuleNode>;
  additionalProperties?: RuleNode;
  items?: RuleNode;
}

interface Ctx {
  errors: FieldError[];
  costs: { path: string; cost: number }[];
  total: number;
}

const withRules = new WeakMap<JSONSchema, boolean>();
/** hasRules: a rule at or below the node (remembered, as every level asks). */
function hasRules(s: JSONSchema | undefined): boolean {
  if (!s) return false;
  const known = withRules.get(s);
  if (known !== undefined) return known;
  const has =
    rulesOf(s).length > 0 ||
    Object.values(s.properties ?? {}).some(hasRules) ||
    (typeof s.additionalProperties === 'object' && hasRules(s.additionalProperties)) ||
    hasRules(s.items);
  withRules.set(s, has);
  return has;
}

function fieldErrorsBelow(s: JSONSchema, p: string): FieldError[] {
  const own = rulesOf(s).flatMap((r, i) => ruleFieldErrors(r, `${p}.x-kubernetes-validations[${i}]`, s));
  const props = Object.entries(s.properties ?? {}).flatMap(([k, v]) => fieldErrorsBelow(v, `${p}.properties[${k}]`));
  const add = typeof s.additionalProperties === 'object' ? fieldErrorsBelow(s.additionalProperties, `${p}.additionalProperties`) : [];
  const items = s.items ? fieldErrorsBelow(s.items, `${p}.items`) : [];
  return [...own, ...props, ...add, ...items];
}

/** compileNode compiles the rules of `s` and below; `uncorrelatable` is the list path oldSelf cannot cross. */
function compileNode(s: JSONSchema, p: string, root: boolean, cardinality: number, uncorrelatable: string | undefined, ctx: Ctx): RuleNode | undefined {
  if (!hasRules(s)) return undefined;
  const declared = schemaType(s, root);
  const type = declared ?? T.dyn;
  const node: RuleNode = { schema: s, root, type, rules: [], properties: new Map() };
  const rules = rulesOf(s);
  const fieldErrs = rules.flatMap((r, i) => ruleFieldErrors(r, `${p}.x-kubernetes-validations[${i}]`, s));
  ctx.errors.push(...fieldErrs);
  const clean = fieldErrorsBelow(s, p).length === 0;
  if (clean && rules.length > 0 && !declared) {
    ctx.errors.push({
      type: 'InternalError' as FieldError['type'],
      field: `${p}.x-kubernetes-validations`,
      message: `${p}.x-kubernetes-validations: Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations`,
    });
  } else if (clean && rules.length > 0) {
    // kube names self's type anew for every compilation (selfType + nanoseconds), so no rule can depend on it
    nameObjects(type, `selfType${Math.floor(Math.random() * 1e9)}`);
    const vars = new Map<string, CelT>([['self', type]]);
    rules.forEach((r, i) => {
      const rp = `${p}.x-kubernetes-validations[${i}]`;
      const optionalOld = r.optionalOldSelf === true;
      const v = new Map(vars).set('oldSelf', optionalOld ? T.opt(type) : type);
      const c = compileExpression(r.rule, v);
      const cost = c.program ? estimateCost(c.program.ast, c.program.types) * cardinality : 0;
      if (cost > STATIC_ESTIMATED_COST_LIMIT)
        ctx.errors.push(forbidden(`${rp}.rule`, costFactorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT)));
      ctx.total += cost;
      if (cost >= STATIC_ESTIMATED_CRD_COST_LIMIT / 100) ctx.costs.push({ path: `${rp}.rule`, cost });
      let error = c.error ? `compilation failed: ${c.error}` : undefined;
      if (!error && c.program && c.program.type.k !== 'bool' && c.program.type.k !== 'dyn') error = 'cel expression must evaluate to a bool';
      if (error) ctx.errors.push(invalid(`${rp}.rule`, undefined, error));
      if (error) ctx.errors[ctx.errors.length - 1]!.message = `${rp}.rule: Invalid value: ${ruleJSON(r)}: ${error}`;
      let message: Program | undefined;
      let msgError: string | undefined;
      // kube compiles a messageExpression only beside a rule that compiled to a bool
      if (!error && r.messageExpression && r.messageExpression.trim()) {
        const m = compileExpression(r.messageExpression, v);
        if (m.error) msgError = `messageExpression compilation failed: ${m.error}`;
        else if (m.program!.type.k !== 'string' && m.program!.type.k !== 'dyn') msgError = 'messageExpression must evaluate to a string';
        else {
          message = m.program;
          const mcost = estimateCost(m.program!.ast, m.program!.types) * cardinality;
          if (mcost > STATIC_ESTIMATED_COST_LIMIT)
            ctx.errors.push(forbidden(`${rp}.messageExpression`, costFactorMessage('estimated messageExpression cost', mcost, STATIC_ESTIMATED_COST_LIMIT)));
          ctx.total += mcost;
          if (mcost >= STATIC_ESTIMATED_CRD_COST_LIMIT / 100) ctx.costs.push({ path: `${rp}.messageExpression`, cost: mcost });
        }
      }
      if (msgError) {
        const e = invalid(`${rp}.messageExpression`, undefined, msgError);
        e.message = `${rp}.messageExpression: Invalid value: ${ruleJSON(r)}: ${msgError}`;
        ctx.errors.push(e);
      }
      const usesOld = !error && !!c.program?.usesOldSelf;
      if (optionalOld && !usesOld) ctx.errors.push(invalid(`${rp}.optionalOldSelf`, true, 'may not be set if oldSelf is not used in rule'));
      if (usesOld && uncorrelatable !== undefined)
        ctx.errors.push(invalid(`${rp}.rule`, r.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`));
      if (!error && c.program) {
        const fp = r.fieldPath?.trim() ? resolveFieldPath(r.fieldPath.trim(), s) : undefined;
        node.rules.push({ rule: r, program: c.program, message, fieldPath: fp });
      }
    });
  }
  for (const [k, v] of Object.entries(s.properties ?? {})) {
    const child = compileNode(v, `${p}.properties[${k}]`, v['x-kubernetes-embedded-resource'] === true, cardinality, uncorrelatable, ctx);
    if (child) node.properties.set(k, child);
  }
  if (typeof s.additionalProperties === 'object') {
    const a = s.additionalProperties;
    node.additionalProperties = compileNode(
      a,
      `${p}.additionalProperties`,
      a['x-kubernetes-embedded-resource'] === true,
      cardinality * maxMapProperties(s),
      uncorrelatable,
      ctx,
    );
  }
  if (s.items) {
    const isMapList = s['x-kubernetes-list-type'] === 'map';
    const unc = uncorrelatable ?? (isMapList ? undefined : p);
    node.items = compileNode(s.items, `${p}.items`, s.items['x-kubernetes-embedded-resource'] === true, cardinality * maxListItems(s), unc, ctx);
  }
  return node;
}

/** compileSchema compiles the rules of a version's schema at `at`; errors are kube's CRD validation errors. */
export function compileSchema(schema: JSONSchema, at: string): { root?: RuleNode; errors: FieldError[] } {
  const ctx: Ctx = { errors: [], costs: [], total: 0 };
  const root = compileNode(schema, at, true, 1, undefined, ctx);
  if (ctx.total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    const top = [...ctx.costs].sort((a, b) => b.cost - a.cost).slice(0, 4);
    for (const t of top) ctx.errors.push(forbidden(t.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    ctx.errors.push(
      forbidden(
        at,
        costFactorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', ctx.total, STATIC_ESTIMATED_CRD_COST_LIMIT),
      ),
    );
  }
  return { root, errors: ctx.errors };
}
