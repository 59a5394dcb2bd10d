import { describe, expect, it } from 'vitest';
import { StatusError } from './errors.js';
import { parseLabelSelector } from './labels.js';

type Labels = Record<string, string> | undefined;

const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('parseLabelSelector matching', () => {
  it.each<[string, string, Labels, boolean]>([
    ['an empty selector matches an object without labels', '', undefined, true],
    ['an empty selector matches an object with labels', '', { env: 'prod' }, true],
    ['a whitespace-only selector matches everything', ' \t\n ', { env: 'prod' }, true],
    ['= matches an equal value', 'env=prod', { env: 'prod' }, true],
    ['= rejects a different value', 'env=prod', { env: 'dev' }, false],
    ['= rejects a missing key', 'env=prod', {}, false],
    ['== matches an equal value', 'env==prod', { env: 'prod' }, true],
    ['== rejects a different value', 'env==prod', { env: 'dev' }, false],
    ['!= matches a different value', 'env!=prod', { env: 'dev' }, true],
    ['!= rejects an equal value', 'env!=prod', { env: 'prod' }, false],
    ['!= matches an object that lacks the key', 'env!=prod', {}, true],
    ['!= matches an object with no labels at all', 'env!=prod', undefined, true],
    ['in matches any listed value', 'env in (prod,staging)', { env: 'staging' }, true],
    ['in rejects an unlisted value', 'env in (prod,staging)', { env: 'dev' }, false],
    ['in rejects a missing key', 'env in (prod)', {}, false],
    ['notin matches an unlisted value', 'env notin (prod,staging)', { env: 'dev' }, true],
    ['notin rejects a listed value', 'env notin (prod,staging)', { env: 'prod' }, false],
    ['notin matches an object that lacks the key', 'env notin (prod)', {}, true],
    ['a bare key matches when the key exists with any value', 'env', { env: '' }, true],
    ['a bare key rejects when the key is missing', 'env', { tier: 'web' }, false],
    ['!key matches when the key is missing', '!env', { tier: 'web' }, true],
    ['!key rejects when the key exists', '!env', { env: 'prod' }, false],
    ['> matches a larger integer', 'replicas>3', { replicas: '4' }, true],
    ['> rejects an equal integer', 'replicas>3', { replicas: '3' }, false],
    ['> rejects a non-integer label value', 'replicas>3', { replicas: 'many' }, false],
    ['> rejects a missing key', 'replicas>3', {}, false],
    ['< matches a smaller integer', 'replicas<3', { replicas: '2' }, true],
    ['< rejects a larger integer', 'replicas<3', { replicas: '10' }, false],
    ['integer comparison is numeric, not lexical', 'replicas>9', { replicas: '10' }, true],
    ['comparison works at the int64 limit', 'n>9223372036854775806', { n: '9223372036854775807' }, true],
    ['a comma ANDs requirements that all hold', 'env=prod,tier in (web)', { env: 'prod', tier: 'web' }, true],
    ['a comma ANDs requirements and one failing rejects', 'env=prod,tier in (web)', { env: 'prod', tier: 'db' }, false],
    ['whitespace around operators, commas and parentheses is ignored', '  env = prod ,  tier  in ( web , db )  ', { env: 'prod', tier: 'db' }, true],
    ['tabs and newlines count as whitespace', 'env\t=\nprod', { env: 'prod' }, true],
    ['a prefixed key is accepted', 'example.com/app=web', { 'example.com/app': 'web' }, true],
    ['an operator without a value means the empty value', 'env=', { env: '' }, true],
    ['an operator without a value still needs the key', 'env=', {}, false],
    ['empty parentheses mean the empty value', 'env in ()', { env: '' }, true],
    ['a leading empty list entry means the empty value', 'env in (,prod)', { env: '' }, true],
    ['in and notin can be keys and values', 'in=notin', { in: 'notin' }, true],
    ['in and notin can be set members', 'x in (in,notin)', { x: 'notin' }, true],
    ['keys are never found on the object prototype', 'constructor', {}, false],
    ['!key is not fooled by the object prototype', '!toString', {}, true],
  ])('%s', (_name, selector, labels, expected) => {
    expect(parseLabelSelector(selector).matches(labels)).toBe(expected);
  });
});

describe('parseLabelSelector emptiness and printing', () => {
  it.each<[string, string, boolean]>([
    ['the empty string is an empty selector', '', true],
    ['whitespace is an empty selector', '   ', true],
    ['a requirement makes the selector non-empty', 'a', false],
  ])('%s', (_name, selector, empty) => {
    expect(parseLabelSelector(selector).empty).toBe(empty);
  });

  it.each<[string, string, string]>([
    ['requirements are sorted by key', 'b=2,a=1', 'a=1,b=2'],
    ['set values are sorted and de-duplicated', 'a in (z,y,z)', 'a in (y,z)'],
    ['notin prints with spaces and parentheses', 'a notin (x)', 'a notin (x)'],
    ['== and != keep their spelling', 'a==1,b!=2', 'a==1,b!=2'],
    ['exists and does-not-exist print bare', '!b, a', 'a,!b'],
    ['integer comparisons print with symbols', 'a>1,b<2', 'a>1,b<2'],
    ['whitespace is dropped', '  a  =  1  ', 'a=1'],
    ['an empty selector prints as the empty string', '', ''],
  ])('%s', (_name, selector, printed) => {
    expect(parseLabelSelector(selector).toString()).toBe(printed);
  });
});

describe('parseLabelSelector errors', () => {
  it.each<[string, string, string]>([
    ['a missing operator between key and value', 'a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"],
    ['a trailing comma', 'a=b,', "found '', expected: identifier after ','"],
    ['a leading comma', ',a', "found ',', expected: !, identifier, or 'end of string'"],
    ['two requirements without a comma', 'a=b c', "found 'c', expected: ',' or 'end of string'"],
    ['a second = after a value', 'a=b=c', "found '=', expected: ',' or 'end of string'"],
    ['!key followed by an operator', '!a=b', "found '=', expected: ',' or 'end of string'"],
    ['a lone !', '!', "unable to parse requirement: found '', expected: identifier"],
    ['in without parentheses', 'x in a', "unable to parse requirement: found 'a' expected: '('"],
    ['an unclosed set', 'x in (a', "unable to parse requirement: found '', expected: ',' or ')'"],
    ['set members without a comma', 'x in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
    ['an operator opening a set', 'x in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier"],
    ['an operator inside a set', 'x in (a,=)', "unable to parse requirement: found '=', expected: ',', or identifier"],
    ['a parenthesis after =', 'a=(b)', "unable to parse requirement: found '(', expected: identifier"],
    ['>= which is not an operator', 'a>=1', "unable to parse requirement: found '=', expected: identifier"],
    ['a key with a forbidden character', 'a@b=c', `unable to parse requirement: <nil>: Invalid value: "a@b": ${NAME_PART_MSG}`],
    [
      'a key with two slashes',
      'a/b/c=d',
      "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', " +
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ],
    ['a key with an empty prefix', '/a', 'unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty'],
    [
      'a value longer than 63 characters',
      `good-key=${'z'.repeat(64)}`,
      `unable to parse requirement: values[0][good-key]: Invalid value: "${'z'.repeat(64)}": must be no more than 63 characters`,
    ],
    ['a value with a forbidden character inside a set', 'k in (ok,_x)', `unable to parse requirement: values[0][k]: Invalid value: "_x": ${LABEL_VALUE_MSG}`],
    ['a non-integer after >', 'k>abc', `unable to parse requirement: values[0]: Invalid value: "abc": for 'Gt', 'Lt' operators, the value must be an integer`],
    [
      'an integer beyond int64 after <',
      'k<9223372036854775808',
      `unable to parse requirement: values[0]: Invalid value: "9223372036854775808": for 'Gt', 'Lt' operators, the value must be an integer`,
    ],
    [
      'several problems with one value, aggregated in brackets',
      'k>-x',
      `unable to parse requirement: [values[0]: Invalid value: "-x": for 'Gt', 'Lt' operators, the value must be an integer, values[0][k]: Invalid value: "-x": ${LABEL_VALUE_MSG}]`,
    ],
  ])('rejects %s with a 400 worded like Kubernetes', (_name, selector, message) => {
    let caught: unknown;
    try {
      parseLabelSelector(selector);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(StatusError);
    const err = caught as StatusError;
    expect(err.code).toBe(400);
    expect(err.reason).toBe('BadRequest');
    expect(err.status.message).toBe(message);
  });
});
