/**
 * @module cmd/read-args
 * readArgs: the server's command line read by node:util's parseArgs, as its tokens, so that every problem is
 * reported at once (parseArgs' strict mode stops at the first) and a typo is one problem, not two.
 */
import { parseArgs } from 'node:util';

/** ArgValues are the flags read: a string, the strings of a repeatable flag, or true for a switch. */
export type ArgValues = Record<string, string | string[] | boolean | undefined>;

/** ArgSpec is one flag taking a value (`--name value` or `--name=value`), repeatable when `multiple`. */
export interface ArgSpec {
  name: string;
  multiple?: boolean;
}

/**
 * readArgs reads `argv` as the flags `strings` (with values) and `switches` (without; `help` is also `-h`); `--` ends
 * the flags. Collected problems: an unknown flag (with `suggest`'s nearest known one; a word after it is taken as its
 * value), a flag without its value (the next word is a flag: a value starting with a dash takes the `=` form), a
 * switch given a value, and any argument that is no flag.
 */
export function readArgs(
  argv: readonly string[],
  strings: readonly ArgSpec[],
  switches: readonly string[],
  suggest: (name: string) => string | undefined,
): { values: ArgValues; errors: string[] } {
  const options = Object.fromEntries([
    ...strings.map((f) => [f.name, { type: 'string' as const, multiple: f.multiple === true }]),
    ...switches.map((s) => [s, { type: 'boolean' as const, ...(s === 'help' ? { short: 'h' } : {}) }]),
  ]);
  const values: ArgValues = {};
  const errors: string[] = [];
  let rest = [...argv];
  // parseArgs takes the word after a flag as its value even when it is another flag; then the flag lacks its value,
  // and reading starts again at that word.
  for (let again = true; again; ) {
    again = false;
    const { tokens } = parseArgs({ args: rest, options, strict: false, allowPositionals: true, tokens: true });
    let skip = -1;
    for (const [i, t] of tokens.entries()) {
      if (t.kind === 'option-terminator') {
        for (const p of tokens.slice(i + 1))
          if (p.kind === 'positional') errors.push(`unexpected argument ${JSON.stringify(p.value)}: the server takes flags only`);
        break;
      }
      if (t.kind === 'positional') {
        if (t.index !== skip)
          errors.push(
            `unexpected argument ${JSON.stringify(t.value)}: the server takes flags only (--name=value); its commands are backup, restore and version`,
          );
        continue;
      }
      const spec = options[t.name];
      // `-x` is only ever `-h`; a long flag spelled with one dash is unknown too.
      if (!spec || (!t.rawName.startsWith('--') && t.rawName !== '-h')) {
        const near = t.rawName.startsWith('--') ? suggest(t.name) : undefined;
        errors.push(`unknown flag: ${t.rawName}${near ? ` (did you mean --${near}?)` : ''}`);
        if (!t.inlineValue) skip = t.index + 1;
        continue;
      }
      if (spec.type === 'boolean') {
        if (t.inlineValue) errors.push(`${t.rawName} takes no value, got ${JSON.stringify(t.value)}`);
        else values[t.name] = true;
        continue;
      }
      if (t.value === undefined || (!t.inlineValue && t.value.startsWith('-') && t.value !== '-')) {
        errors.push(`flag needs a value: ${t.rawName} (${t.rawName} VALUE or ${t.rawName}=VALUE)`);
        if (t.value !== undefined) {
          rest = rest.slice(t.index + 1);
          again = true;
          break;
        }
        continue;
      }
      if (spec.multiple) values[t.name] = [...((values[t.name] as string[] | undefined) ?? []), t.value];
      else values[t.name] = t.value;
    }
  }
  return { values, errors };
}
