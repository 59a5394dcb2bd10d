/**
 * @module registry/duplicate-fields
 * Duplicate object members in a JSON body, which Go's strict decoder (sigs.k8s.io/json) reports as `duplicate field
 * "spec"`: a warning under fieldValidation=Warn, a strict decoding error under Strict. JSON.parse keeps only the last
 * member, so the body decoder records the duplicates of the text it parsed, keyed by the parsed value.
 */
import { decodeGoJson, type GoValue } from '../apis/meta/go-json.js';

const recorded = new WeakMap<object, string[]>();

/** duplicatesOf returns the duplicate member paths recorded for a parsed body (none when it had none). */
export function duplicatesOf(value: unknown): string[] {
  return typeof value === 'object' && value !== null ? (recorded.get(value) ?? []) : [];
}

/**
 * recordDuplicates notes the duplicate members of `text`, which parsed into `value`. The cheap test first: `members`
 * is the text's member count (the body scanner's colons outside strings); only when the parsed value has fewer keys
 * are the paths looked for.
 */
export function recordDuplicates(text: string, members: number, value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  if (members === keyCount(value)) return;
  const paths: string[] = [];
  duplicatePaths(decodeGoJson(text), '', paths);
  if (paths.length > 0) recorded.set(value, paths);
}

// keyCount counts the members of every object in a parsed value (recursion: the body decoder bounds its depth;
// for-in walks cached key lists where Object.keys would allocate an array per object).
function keyCount(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 0;
  let n = 0;
  if (Array.isArray(v)) {
    for (const e of v) n += keyCount(e);
    return n;
  }
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    n += 1 + keyCount((v as Record<string, unknown>)[k]);
  }
  return n;
}

// duplicatePaths lists `a.b.c` paths (array items as `[i]`) of members repeated within one object, in document
// order, iteratively (the depth is bounded by the body decoder, but recursion is not needed).
function duplicatePaths(root: GoValue, at: string, out: string[]): void {
  const todo: { value: GoValue; at: string }[] = [{ value: root, at }];
  while (todo.length > 0) {
    const { value, at: path } = todo.shift()!;
    if (value === null || (value.kind !== 'object' && value.kind !== 'array')) continue;
    if (value.kind === 'array') {
      value.items.forEach((item, k) => {
        todo.push({ value: item, at: `${path}[${k}]` });
      });
      continue;
    }
    const seen = new Set<string>();
    for (const [key, member] of value.entries) {
      const child = path === '' ? key : `${path}.${key}`;
      if (seen.has(key)) out.push(child);
      seen.add(key);
      todo.push({ value: member, at: child });
    }
  }
}
