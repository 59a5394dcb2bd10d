/**
 * @module kinds/crd/structural-regexp
 * Whether a schema `pattern` compiles with Go's regexp (RE2 syntax), and Go's error text when it does not
 * (`error parsing regexp: missing closing ]: `[a``). The common mistakes are told apart as Go's parser does
 * (checked against Go 1.26 regexp.Compile in structural-regexp.test.ts); rarer RE2 errors are not detected.
 */

const err = (code: string, arg: string) => `error parsing regexp: ${code}: \`${arg}\``;

// Escapes RE2 knows: punctuation, the C escapes, \x, octal from \0, classes, assertions, \p/\P and \Q...\E.
const ESCAPE_LETTERS = new Set([...'aftnrvxdDsSwWbBAzpPQE0']);

/** A repetition operator at `i` (`*`, `+`, `?`, or `{n}`, `{n,}`, `{n,m}`): its text and maximum, if one starts there. */
function repetition(p: string, i: number): { text: string; count?: number } | undefined {
  const c = p[i];
  if (c === '*' || c === '+' || c === '?') return { text: c };
  if (c !== '{') return undefined;
  const m = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
  if (!m) return undefined;
  return { text: m[0], count: Math.max(Number(m[1]), m[3] ? Number(m[3]) : 0) };
}

/** goRegexpError returns Go's regexp.Compile error for `p`, or undefined when Go accepts it. */
export function goRegexpError(p: string): string | undefined {
  let depth = 0;
  // Whether the last item can be repeated, and the text of a repetition just applied (for the nested error).
  let operand = false;
  let lastRepeat: string | undefined;
  let lazy = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    const rep = repetition(p, i);
    if (rep) {
      if (lastRepeat !== undefined) {
        // A `?` right after a repetition makes it non-greedy.
        if (rep.text === '?' && !lazy) {
          lastRepeat += '?';
          lazy = true;
          continue;
        }
        return err('invalid nested repetition operator', `${lastRepeat}${rep.text}`);
      }
      if (!operand) return err('missing argument to repetition operator', rep.text);
      if (rep.count !== undefined && rep.count > 1000) return err('invalid repeat count', rep.text);
      lastRepeat = rep.text;
      lazy = false;
      operand = false;
      i += rep.text.length - 1;
      continue;
    }
    lastRepeat = undefined;
    if (c === '\\') {
      const n = p[i + 1];
      if (n === undefined) return err('trailing backslash at end of expression', '');
      if (/[A-Za-z0-9]/.test(n) && !ESCAPE_LETTERS.has(n)) return err('invalid escape sequence', `\\${n}`);
      if (n === 'p' || n === 'P') {
        const m = /^\\[pP](\{[^}]*\}|[A-Za-z])/.exec(p.slice(i));
        i += m ? m[0].length - 1 : 1;
      } else i++;
      operand = true;
      continue;
    }
    if (c === '[') {
      let j = i + 1;
      if (p[j] === '^') j++;
      if (p[j] === ']') j++;
      while (j < p.length && p[j] !== ']') {
        if (p[j] === '\\') j += 2;
        else if (p.startsWith('[:', j) && p.indexOf(':]', j + 2) > 0) j = p.indexOf(':]', j + 2) + 2;
        else j++;
      }
      if (j >= p.length) return err('missing closing ]', p.slice(i));
      i = j;
      operand = true;
      continue;
    }
    if (c === '(') {
      if (p[i + 1] === '?') {
        const rest = p.slice(i);
        if (rest.startsWith('(?=') || rest.startsWith('(?!')) return err('invalid or unsupported Perl syntax', rest.slice(0, 3));
        const named = /^\(\?P?<([A-Za-z0-9_]+)>/.exec(rest);
        if (rest.startsWith('(?<') || rest.startsWith('(?P<')) {
          if (!named) return err('invalid named capture', rest);
          i += named[0].length - 1;
        } else {
          const flags = /^\(\?[imsU-]*([:)])/.exec(rest);
          if (!flags) return err('invalid or unsupported Perl syntax', rest.slice(0, 3));
          i += flags[0].length - 1;
          // `(?i)` only sets flags: nothing to repeat and no group to close.
          if (flags[1] === ')') {
            operand = false;
            continue;
          }
        }
      }
      depth++;
      operand = false;
      continue;
    }
    if (c === ')') {
      if (depth === 0) return err('unexpected )', p);
      depth--;
      operand = true;
      continue;
    }
    // Go lets `^` and `$` be repeated like any other item; only the start of a group or alternative cannot be.
    operand = c !== '|';
  }
  if (depth > 0) return err('missing closing )', p);
  return undefined;
}
