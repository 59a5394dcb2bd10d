import { describe, expect, it } from 'vitest';
import { StatusError } from './errors.js';
import { escapeFieldValue, parseFieldSelector } from './fields.js';

const fields = (name: string, namespace = 'default') => ({ 'metadata.name': name, 'metadata.namespace': namespace });

describe('parseFieldSelector matching', () => {
  it.each<[string, string, Record<string, string>, boolean]>([
    ['an empty selector matches everything', '', fields('a'), true],
    ['= matches an equal field', 'metadata.name=web', fields('web'), true],
    ['= rejects a different field', 'metadata.name=web', fields('api'), false],
    ['== matches an equal field', 'metadata.name==web', fields('web'), true],
    ['!= matches a different field', 'metadata.name!=web', fields('api'), true],
    ['!= rejects an equal field', 'metadata.name!=web', fields('web'), false],
    ['a missing field counts as the empty string for =', 'metadata.name=', {}, true],
    ['a missing field counts as the empty string for !=', 'metadata.name!=web', {}, true],
    ['metadata.namespace is selectable', 'metadata.namespace=prod', fields('web', 'prod'), true],
    ['a comma ANDs terms that all hold', 'metadata.name=web,metadata.namespace=prod', fields('web', 'prod'), true],
    ['a comma ANDs terms and one failing rejects', 'metadata.name=web,metadata.namespace=prod', fields('web', 'dev'), false],
    ['empty terms between commas are skipped', ',,metadata.name=web,', fields('web'), true],
    ['an escaped comma is part of the value', 'metadata.name=a\\,b', fields('a,b'), true],
    ['an escaped equals sign is part of the value', 'metadata.name=a\\=b', fields('a=b'), true],
    ['an escaped backslash is one backslash', 'metadata.name=a\\\\b', fields('a\\b'), true],
    ['an escaped comma does not split terms', 'metadata.name!=a\\,b', fields('a,b'), false],
    ['fields are never found on the object prototype', 'metadata.name=', Object.create({ 'metadata.name': 'x' }) as Record<string, string>, true],
  ])('%s', (_name, selector, f, expected) => {
    expect(parseFieldSelector(selector).matches(f)).toBe(expected);
  });

  it('accepts extra fields when the kind allows them', () => {
    const sel = parseFieldSelector('spec.domain=example.com', ['metadata.name', 'metadata.namespace', 'spec.domain']);
    expect(sel.matches({ 'spec.domain': 'example.com' })).toBe(true);
  });
});

describe('parseFieldSelector introspection', () => {
  it.each<[string, string, string | undefined]>([
    ['= pins the name', 'metadata.name=web', 'web'],
    ['== pins the name', 'metadata.name==web', 'web'],
    ['!= does not pin the name', 'metadata.name!=web', undefined],
    ['a namespace term does not pin the name', 'metadata.namespace=prod', undefined],
    ['a name term among others pins the name', 'metadata.namespace=prod,metadata.name=web', 'web'],
    ['an escaped name is unescaped', 'metadata.name=a\\,b', 'a,b'],
    ['an empty selector pins nothing', '', undefined],
  ])('exactName: %s', (_name, selector, expected) => {
    expect(parseFieldSelector(selector).exactName()).toBe(expected);
  });

  it.each<[string, string, boolean]>([
    ['the empty string is empty', '', true],
    ['only commas is empty', ',,', true],
    ['a term is not empty', 'metadata.name=a', false],
  ])('empty: %s', (_name, selector, empty) => {
    expect(parseFieldSelector(selector).empty).toBe(empty);
  });

  it.each<[string, string, string]>([
    ['terms are sorted', 'metadata.namespace=b,metadata.name=a', 'metadata.name=a,metadata.namespace=b'],
    ['== prints as =', 'metadata.name==a', 'metadata.name=a'],
    ['!= keeps its spelling', 'metadata.name!=a', 'metadata.name!=a'],
    ['values are re-escaped', 'metadata.name=a\\,b\\=c\\\\d', 'metadata.name=a\\,b\\=c\\\\d'],
  ])('toString: %s', (_name, selector, printed) => {
    expect(parseFieldSelector(selector).toString()).toBe(printed);
  });

  it('escapeFieldValue escapes backslash, comma and equals so the value round-trips', () => {
    const raw = 'a\\b,c=d';
    expect(escapeFieldValue(raw)).toBe('a\\\\b\\,c\\=d');
    expect(parseFieldSelector(`metadata.name=${escapeFieldValue(raw)}`).exactName()).toBe(raw);
  });
});

describe('parseFieldSelector errors', () => {
  it.each<[string, string, string]>([
    ['a term without an operator', 'metadata.name', "invalid selector: 'metadata.name'; can't understand 'metadata.name'"],
    ['the first bad term in sorted order', 'z=1,a', "invalid selector: 'z=1,a'; can't understand 'a'"],
    ['an unescaped equals sign in a value', 'metadata.name=a=b', "invalid field selector: unescaped character in value: '='"],
    ['an unknown escape sequence', 'metadata.name=a\\b', 'invalid field selector: invalid escape sequence: \\b'],
    ['a value ending in a lone backslash', 'metadata.name=a\\', 'invalid field selector: invalid escape sequence: \\'],
    ['an unknown field', 'spec.replicas=1', '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'],
    ['a field name with a trailing space', 'metadata.name =a', '"metadata.name " is not a known field selector: only "metadata.name", "metadata.namespace"'],
    ['an empty field name', '=a', '"" is not a known field selector: only "metadata.name", "metadata.namespace"'],
  ])('rejects %s with a 400', (_name, selector, message) => {
    let caught: unknown;
    try {
      parseFieldSelector(selector);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(StatusError);
    const err = caught as StatusError;
    expect(err.code).toBe(400);
    expect(err.reason).toBe('BadRequest');
    expect(err.status.message).toBe(message);
  });

  it('lists the kind’s own allowed fields when rejecting an unknown one', () => {
    expect(() => parseFieldSelector('spec.x=1', ['metadata.name', 'spec.domain'])).toThrow(
      '"spec.x" is not a known field selector: only "metadata.name", "spec.domain"',
    );
  });
});
