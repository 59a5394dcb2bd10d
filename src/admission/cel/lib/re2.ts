/**
 * @module admission/cel/lib/re2
 * RE2 patterns (what cel-go's matches/find/findAll take) run as JavaScript regular expressions: the leading
 * `(?i)`/`(?s)`/`(?m)` flag group, `(?P<name>` groups and `\A`/`\z` are translated; what JS cannot express is a
 * compile error, as an invalid pattern is for cel-go.
 */
const cache = new Map<string, RegExp>();

/** compileRe2 returns the JS RegExp for an RE2 pattern, or throws `error parsing regexp` as Go does. */
export function compileRe2(pattern: string, extraFlags = ''): RegExp {
  const key = `${extraFlags}/${pattern}`;
  const hit = cache.get(key);
  if (hit) return new RegExp(hit.source, hit.flags);
  let src = pattern;
  let flags = extraFlags;
  const lead = /^\(\?([imsU]+)\)/.exec(src);
  if (lead) {
    for (const f of lead[1]!) if (f !== 'U' && !flags.includes(f)) flags += f;
    src = src.slice(lead[0].length);
  }
  // what JS reads but RE2 refuses: lookaround and backreferences
  if (/\(\?<?[=!]/.test(src) || /(^|[^\\])(\\\\)*\\[1-9]/.test(src))
    throw new Error(`error parsing regexp: invalid or unsupported Perl syntax: \`${/\(\?<?[=!]/.exec(src)?.[0] ?? '\\1'}\``);
  src = src
    .replace(/\(\?P</g, '(?<')
    .replace(/\\A/g, '^')
    .replace(/\\z/g, '$(?![\\s\\S])');
  let re: RegExp;
  try {
    re = new RegExp(src, `${flags}u`);
  } catch {
    try {
      re = new RegExp(src, flags);
    } catch {
      throw new Error(`error parsing regexp: ${goRegexpError(pattern)}`);
    }
  }
  cache.set(key, re);
  return new RegExp(re.source, re.flags);
}

/** isValidRe2 tells the checker whether a literal pattern compiles. */
export function isValidRe2(pattern: string): boolean {
  try {
    compileRe2(pattern);
    return true;
  } catch {
    return false;
  }
}

/** goRegexpError words the commonest pattern errors as Go's regexp/syntax does (the code and the bad fragment). */
function goRegexpError(p: string): string {
  let depth = 0;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '[') {
      const end = p.indexOf(']', i + 2);
      if (end < 0) return `missing closing ]: \`${p.slice(i)}\``;
      i = end;
    } else if (c === '(') depth++;
    else if (c === ')') {
      if (depth === 0) return `unexpected ): \`${p}\``;
      depth--;
    } else if ((c === '*' || c === '+' || c === '?') && (i === 0 || '(|'.includes(p[i - 1]!))) return `missing argument to repetition operator: \`${c}\``;
  }
  if (depth > 0) return `missing closing ): \`${p}\``;
  return `invalid pattern: \`${p}\``;
}
