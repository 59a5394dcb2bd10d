/**
 * @module kinds/crd/structural-regexp
 * Whether a schema `pattern` compiles with Go's regexp (RE2 syntax), and Go's error text when it does not
 * (`error parsing regexp: missing closing ]: `[a``). Only the common mistakes are told apart; anything else JavaScript
 * also refuses gets Go's generic wording for the whole expression.
 */

const err = (code: string, arg: string) => `error parsing regexp: ${code}: \`${arg}\``;

/** goRegexpError returns Go's regexp.Compile error for `p`, or undefined when Go accepts it. */
export function goRegexpError(p: string): string | undefined {
  let depth = 0;
  const opens: number[] = [];
  let prevRepeatable = false;
  let prevWasRepeat = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') {
      const n = p[i + 1];
      if (n === undefined) return err('trailing backslash at end of expression', '');
      // RE2 has no backreferences and no \k / lookaround escapes.
      if (/[1-9]/.test(n)) return err('invalid escape sequence', `\\${n}`);
      i++;
      prevRepeatable = true;
      prevWasRepeat = false;
      continue;
    }
    if (c === '[') {
      let j = i + 1;
      if (p[j] === '^') j++;
      if (p[j] === ']') j++;
      while (j < p.length && p[j] !== ']') j += p[j] === '\\' ? 2 : p.startsWith('[:', j) ? Math.max(p.indexOf(':]', j + 2) + 2 - j, 1) : 1;
      if (j >= p.length) return err('missing closing ]', p.slice(i));
      i = j;
      prevRepeatable = true;
      prevWasRepeat = false;
      continue;
    }
    if (c === '(') {
      if (p.startsWith('(?=', i) || p.startsWith('(?!', i) || p.startsWith('(?<=', i) || p.startsWith('(?<!', i)) {
        return err('invalid or unsupported Perl syntax', p.slice(i, p[i + 2] === '<' ? i + 4 : i + 3));
      }
      depth++;
      opens.push(i);
      prevRepeatable = false;
      prevWasRepeat = false;
      continue;
    }
    if (c === ')') {
      if (depth === 0) return err('unexpected )', p);
      depth--;
      opens.pop();
      prevRepeatable = true;
      prevWasRepeat = false;
      continue;
    }
    if (c === '*' || c === '+' || c === '?') {
      if (prevWasRepeat && c !== '?') return err('invalid nested repetition operator', p.slice(i - 1, i + 1));
      if (!prevRepeatable && !prevWasRepeat) return err('missing argument to repetition operator', c);
      // A `?` after a repetition makes it non-greedy; it is not a repetition of its own.
      prevWasRepeat = !(c === '?' && prevWasRepeat);
      prevRepeatable = false;
      continue;
    }
    if (c === '|') {
      prevRepeatable = false;
      prevWasRepeat = false;
      continue;
    }
    prevRepeatable = c !== '^';
    prevWasRepeat = false;
  }
  if (depth > 0) return err('missing closing )', p);
  return undefined;
}
