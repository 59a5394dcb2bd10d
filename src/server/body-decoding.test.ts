// goMediaType against Go's mime.ParseMediaType (vectors from Go 1.2x), and the decoders' answers for each role.
import { describe, expect, it } from 'vitest';
import { StatusError } from '../apis/meta/errors.js';
import { decodeJsonBody, decodeYamlBody, goMediaType, unsupportedBody, type BodyRole } from './body-decoding.js';

describe('goMediaType: mime.ParseMediaType', () => {
  it.each<[string, string | undefined]>([
    ['application/json', 'application/json'],
    ['application/json;', 'application/json'],
    ['application/json; charset=utf-8', 'application/json'],
    ['application/json ; charset = utf-8', 'application/json'],
    ['APPLICATION/JSON', 'application/json'],
    ['application/json; charset="utf-8"', 'application/json'],
    ['application', 'application'],
    ['application/json;charset=utf-8;', 'application/json'],
    ['*/*', '*/*'],
    ['text/plain', 'text/plain'],
    ['application/json; charset', undefined],
    ['application/json;;', undefined],
    ['application/json; charset="', undefined],
    ['application/json;a=1;a=2', undefined],
    ['application/', undefined],
    ['/json', undefined],
    ['application/json/x', undefined],
    ['application/json; foo=bar baz', undefined],
    ['', undefined],
    ['application/json, text/plain', undefined],
  ])('%j', (input, want) => {
    expect(goMediaType(input)).toBe(want);
  });

  it('refuses a patch type or a malformed type outside PATCH, and leaves PATCH to its handler', () => {
    expect(unsupportedBody('POST', 'application/merge-patch+json', ['application/json'])?.code).toBe(415);
    expect(unsupportedBody('PUT', 'application/json;;', ['application/json'])?.code).toBe(415);
    expect(unsupportedBody('POST', 'application/json; charset=utf-8', ['application/json'])).toBeUndefined();
    expect(unsupportedBody('POST', undefined, ['application/json'])).toBeUndefined();
    expect(unsupportedBody('PATCH', 'application/merge-patch+json; charset', ['application/json'])).toBeUndefined();
  });
});

const WEBSITE: BodyRole = { role: 'object', kind: 'Website', apiVersion: 'extensions.example.com/v1alpha1' };
const message = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    if (e instanceof StatusError) return e.status.message ?? '';
    throw e;
  }
  throw new Error('no error');
};

describe('decodeJsonBody and decodeYamlBody', () => {
  it('read what parses and return undefined for an empty body', () => {
    expect(decodeJsonBody('{"a":[1,{"b":null}]}', WEBSITE, JSON.parse)).toEqual({ a: [1, { b: null }] });
    expect(decodeJsonBody('', WEBSITE, JSON.parse)).toBeUndefined();
    expect(decodeYamlBody('a: [1, {b: ~}]\n', WEBSITE)).toEqual({ a: [1, { b: null }] });
    // Only the first document counts, as yaml.v2 reads only the first.
    expect(decodeYamlBody('a: 1\n---\nb: 2\n', WEBSITE)).toEqual({ a: 1 });
  });

  it('word failures per role', () => {
    expect(message(() => decodeJsonBody('{"a":}', { role: 'delete' }, JSON.parse))).toBe(
      "couldn't get version/kind; json parse error: invalid character '}' looking for beginning of value",
    );
    expect(message(() => decodeJsonBody('{"a":}', { role: 'merge-patch' }, JSON.parse))).toBe('invalid JSON patch');
    expect(message(() => decodeJsonBody('{"kind":"Other","apiVersion":"x/v9","n":-1e400}', WEBSITE, JSON.parse))).toBe(
      'Other in version "v9" cannot be handled as a Website: json: cannot unmarshal number -1e400 into Go value of type float64',
    );
    expect(message(() => decodeYamlBody('a: *nope\n', { role: 'apply' }))).toBe("error encoding patch: yaml: unknown anchor 'nope' referenced");
    expect(message(() => decodeYamlBody('a: .nan\n', { role: 'other' }))).toBe('json: unsupported value: NaN');
  });

  it('a refused member name is a 400 that names the refusal, not a parser exception', () => {
    const strict = (t: string) => {
      const v = JSON.parse(t) as Record<string, unknown>;
      if (Object.hasOwn(v, '__proto__')) throw new SyntaxError('Object contains forbidden prototype property');
      return v;
    };
    expect(message(() => decodeJsonBody('{"__proto__":{}}', WEBSITE, strict))).toBe(
      'the request body was refused: Object contains forbidden prototype property',
    );
  });
});
