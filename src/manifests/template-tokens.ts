/**
 * @module manifests/template-tokens
 * Placeholders that let objects built by render.ts carry Helm template code through YAML serialization. An object
 * field is set to a token (a plain word YAML never quotes); after `yaml.stringify`, `expand` replaces each token:
 * an inline token by its expression where it stands, a line token (the whole line holding it) by lines built for
 * that line's indentation, so conditional fields and blocks (`{{- with … }}`, `toYaml … | nindent N`) land at the
 * right depth. Pure and deterministic: tokens are numbered in creation order.
 */
import { stringify } from 'yaml';

type LineFn = (indent: string, item: boolean) => string;

/** Tokens hands out placeholders and expands them in rendered YAML text. */
export class Tokens {
  private readonly inlines = new Map<string, string>();
  private readonly lines = new Map<string, LineFn>();
  private next = 0;

  private token(): string {
    this.next += 1;
    return `HELMTOKEN${String(this.next).padStart(4, '0')}X`;
  }

  /** inline: `expr` where the token stands (`replicas: {{ .Values.replicas }}`). */
  inline(expr: string): string {
    const t = this.token();
    this.inlines.set(t, expr);
    return t;
  }

  /**
   * line: the whole line holding the token becomes `fn(indent, item)`, where indent is the line's indentation (for
   * a list item `- TOKEN`, the indentation of the item's content, with item true). The result's own lines are
   * written as they are; start each with `indent` (template actions such as `{{- if }}` may stand at column 0).
   */
  line(fn: LineFn): string {
    const t = this.token();
    this.lines.set(t, fn);
    return t;
  }

  /** block: `key:` then the value's YAML from `expr` at the right depth, or nothing when it is empty (`with`). */
  block(key: string, expr: string): string {
    return this.line((ind) => `{{- with ${expr} }}\n${ind}${key}:\n${ind}  {{- toYaml . | nindent ${ind.length + 2} }}\n{{- end }}`);
  }

  /** when: the field's line (key and value as `yaml`) only if the template condition holds. */
  when(cond: string, key: string, value: unknown): string {
    return this.line((ind) => `{{- if ${cond} }}\n${yamlAt({ [key]: value }, ind)}\n{{- end }}`);
  }

  /** expand replaces every token in `text`; throws if one is left (a token in a place YAML quoted or folded). */
  expand(text: string): string {
    const out = text
      .split('\n')
      .map((l) => {
        const m = /^(\s*)(- )?(?:[^:\s]+: )?(HELMTOKEN\d{4}X)$/.exec(l);
        const fn = m ? this.lines.get(m[3]!) : undefined;
        if (m === null || fn === undefined) return l;
        const item = m[2] !== undefined;
        return fn(item ? `${m[1]}  ` : m[1]!, item);
      })
      .join('\n')
      .replace(/HELMTOKEN\d{4}X/g, (t) => this.inlines.get(t) ?? t);
    const left = /HELMTOKEN\d{4}X/.exec(out);
    if (left) throw new Error(`template token ${left[0]} was not expanded`);
    return out;
  }
}

/**
 * yamlAt is `value` as block YAML with every line indented by `indent` (a list item's lines: the first gets the
 * `- ` in the indentation's last two columns, as YAML's block sequences nest).
 */
export function yamlAt(value: unknown, indent: string, item = false): string {
  const lines = stringify(value, { lineWidth: 0 }).trimEnd().split('\n');
  return lines.map((l, i) => (item && i === 0 ? `${indent.slice(0, -2)}- ${l}` : `${indent}${l}`)).join('\n');
}
