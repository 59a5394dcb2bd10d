/**
 * @module admission/cel/program
 * One CEL expression compiled as kube compiles a rule or messageExpression: parsed (with the rewrites),
 * type-checked against self/oldSelf, its issues worded as cel-go's `ERROR: <input>:1:5: ... | self.x | ....^`,
 * planned on @bufbuild/cel, and run with runtime errors worded as cel-go's.
 */
import { isCelError, parse, plan, type CelInput, type CelValue } from '@bufbuild/cel';
import { checkExpr, type CheckIssue } from './checker.js';
import { ruleEnv } from './env.js';
import { preprocess, transform, type Expr } from './rewrite.js';
import type { CelT } from './types.js';

export interface Program {
  ast: Expr;
  type: CelT;
  types: Map<bigint, CelT>;
  usesOldSelf: boolean;
  run(vars: Record<string, CelInput>): { value?: CelValue; error?: string };
}

/** formatIssues prints issues as cel-go's Issues.String(): location, message, the line and a caret. */
export function formatIssues(source: string, issues: CheckIssue[]): string {
  const sorted = [...issues].sort((a, b) => a.offset - b.offset);
  return sorted
    .map(({ offset, message }) => {
      const before = source.slice(0, offset);
      const line = before.split('\n').length;
      const lineStart = before.lastIndexOf('\n') + 1;
      const col = [...source.slice(lineStart, offset)].length + 1;
      const text = source.split('\n')[line - 1] ?? '';
      return `ERROR: <input>:${line}:${col}: ${message}\n | ${text}\n | ${'.'.repeat(col - 1)}^`;
    })
    .join('\n');
}

/** celGoError rewords @bufbuild/cel's runtime errors as cel-go's. */
export function celGoError(message: string): string {
  let m: RegExpExecArray | null;
  if ((m = /^field not found: (.*)$/.exec(message)) || (m = /^key not found: (.*)$/.exec(message))) return `no such key: ${m[1]}`;
  if ((m = /^index (-?\d+) out of bounds \[0, (-?\d+)\)$/.exec(message))) return `index out of bounds: ${m[1]}`;
  if (message.startsWith('Failed to parse duration')) return "type conversion error from 'string' to 'google.protobuf.Duration'";
  if (message.startsWith('Failed to parse timestamp')) return "type conversion error from 'string' to 'google.protobuf.Timestamp'";
  if (/divide by zero/.test(message)) return 'division by zero';
  if (/modulus by zero/.test(message)) return 'modulus by zero';
  if (/overflow/.test(message)) return message.includes('uint') ? 'unsigned integer overflow' : 'integer overflow';
  // cel-go says no more than this at run time (int-or-string and dyn values reach it)
  if (/^found no matching overload/.test(message) || /^unbound function/.test(message) || /^no such overload/.test(message)) return 'no such overload';
  return message;
}

/** compileExpression parses and checks `source`; `error` is cel-go's issue text when it does not compile. */
export function compileExpression(source: string, vars: Map<string, CelT>): { program?: Program; error?: string } {
  let parsed: ReturnType<typeof parse>;
  const pre = preprocess(source);
  try {
    parsed = parse(pre.text);
  } catch (e) {
    const err = e as { rawMessage?: string; message: string; location?: { start: { offset: number } } };
    // an expression cut off after a binary operator: ANTLR's words, at the end (the commonest syntax error)
    if (/(==|!=|&&|\|\||<=|>=|[<>+*/%?:]|\bin)\s*$/.test(source)) {
      const expecting = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
      return { error: formatIssues(source, [{ offset: source.length, message: `Syntax error: mismatched input '<EOF>' expecting ${expecting}` }]) };
    }
    const offset = pre.toSource(err.location?.start.offset ?? 0);
    return { error: formatIssues(source, [{ offset, message: `Syntax error: ${err.rawMessage ?? err.message}` }]) };
  }
  const ast = transform(parsed.expr!);
  const positions: Record<string, number> = {};
  for (const [id, off] of Object.entries(parsed.sourceInfo?.positions ?? {})) positions[id] = pre.toSource(Number(off));
  const checked = checkExpr(ast, positions, vars, source);
  if (checked.issues.length > 0) return { error: formatIssues(source, checked.issues) };
  const planned = plan(ruleEnv, { ...parsed, expr: ast });
  return {
    program: {
      ast,
      type: checked.type,
      types: checked.types,
      usesOldSelf: checked.usesOldSelf,
      run(bindings) {
        let r: unknown;
        try {
          r = (planned as (ctx: Record<string, CelInput>) => unknown)(bindings);
        } catch (e) {
          return { error: celGoError((e as Error).message) };
        }
        if (isCelError(r)) return { error: celGoError(r.message) };
        return { value: r as CelValue };
      },
    },
  };
}
