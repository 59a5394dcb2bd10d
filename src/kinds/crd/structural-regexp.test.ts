/**
 * goRegexpError against Go 1.26's regexp.Compile: each pattern with the error text Go returned for it ("" when Go
 * compiled it), recorded by running regexp.Compile on exactly these strings.
 */
import { describe, expect, it } from 'vitest';
import { goRegexpError } from './structural-regexp.js';

const GO: [string, string][] = [
  ['()*', ''],
  ['(*)', 'error parsing regexp: missing argument to repetition operator: `*`'],
  ['(?!a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?!`'],
  ['(?:ab)+', ''],
  ['(?<=a)b', 'error parsing regexp: invalid named capture: `(?<=a)b`'],
  ['(?<name>a)', ''],
  ['(?=a)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
  ['(?P<n>a)', ''],
  ['(?i)abc', ''],
  ['(?i:a)b', ''],
  ['(a', 'error parsing regexp: missing closing ): `(a`'],
  ['(|a)', ''],
  ['*a', 'error parsing regexp: missing argument to repetition operator: `*`'],
  ['[[:alpha:]]+', ''],
  ['[]a]', ''],
  ['[^]a]', ''],
  ['[a', 'error parsing regexp: missing closing ]: `[a`'],
  ['\\', 'error parsing regexp: trailing backslash at end of expression: ``'],
  ['\\/', ''],
  ['\\d{1,3}', ''],
  ['\\e', 'error parsing regexp: invalid escape sequence: `\\e`'],
  ['\\p{L}+', ''],
  ['^$', ''],
  ['^(([a-z0-9][-a-z0-9_.]*)?[a-z0-9])?$', ''],
  ['^*', ''],
  ['^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$', ''],
  ['^[a-z]+$', ''],
  ['a)', 'error parsing regexp: unexpected ): `a)`'],
  ['a**', 'error parsing regexp: invalid nested repetition operator: `**`'],
  ['a*+', 'error parsing regexp: invalid nested repetition operator: `*+`'],
  ['a++', 'error parsing regexp: invalid nested repetition operator: `++`'],
  ['a+?', ''],
  ['a??', ''],
  ['a\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
  ['a{,3}', ''],
  ['a{2}{3}', 'error parsing regexp: invalid nested repetition operator: `{2}{3}`'],
  ['a|*', 'error parsing regexp: missing argument to repetition operator: `*`'],
  ['x{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
];

describe('goRegexpError', () => {
  it.each(GO)('%j', (pattern, goError) => {
    expect(goRegexpError(pattern) ?? '').toBe(goError);
  });
});
