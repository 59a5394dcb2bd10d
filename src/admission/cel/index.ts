/**
 * @module admission/cel
 * CEL validation rules (x-kubernetes-validations) of CRD-defined kinds, as kube-apiserver 1.37 runs them:
 * compileCelRules at CRD validation (kube's errors for rules that do not compile or cost too much) and
 * CelRuleSet.validate at create/update (kube's 422 causes, in kube's order). See the modules for each step.
 */
import type { FieldError } from '../../apis/meta/field-path.js';
import type { JSONSchema } from '../../apis/meta/json-schema.js';
import { compileSchema, type RuleNode } from './compile.js';
import { RUNTIME_CEL_COST_BUDGET } from './cost.js';
import { validateTree } from './validate.js';

export interface CelRuleSet {
  /** validate runs every rule of the schema over obj (old: the stored object on update, undefined on create);
   * returns kube's field errors (the 422 causes) in kube's order, and the runtime cost spent. Errors of rules
   * without oldSelf on values an update left unchanged come back as `warnings` instead (ratcheting). */
  validate(obj: unknown, old: unknown | undefined): { errors: FieldError[]; cost: number; warnings: string[] };
  /** ruleCount: number of rules (0 means validate is a no-op; the caller may skip it). */
  readonly ruleCount: number;
}

function countRules(n: RuleNode | undefined): number {
  if (!n) return 0;
  let c = n.rules.length + countRules(n.items) + countRules(n.additionalProperties);
  for (const child of n.properties.values()) c += countRules(child);
  return c;
}

/** compileCelRules compiles every x-kubernetes-validations rule under `schema` (the version's openAPIV3Schema);
 * `at` prefixes the paths of the compile errors, e.g. `spec.versions[0].schema.openAPIV3Schema`. */
export function compileCelRules(schema: JSONSchema, at: string): { rules: CelRuleSet; errors: FieldError[] } {
  const { root, errors } = compileSchema(schema, at);
  const ruleCount = countRules(root);
  return {
    errors,
    rules: {
      ruleCount,
      validate(obj, old) {
        if (!root || ruleCount === 0) return { errors: [], cost: 0, warnings: [] };
        return validateTree(root, obj, old, RUNTIME_CEL_COST_BUDGET);
      },
    },
  };
}
