// JSON as Go's encoding/json reads and writes it (the JSON patch handler depends on both).
import { describe, expect, it } from 'vitest';
import { compareUtf8, decodeGoJson, GoJsonSyntaxError, goMarshal, goQuote } from './go-json.js';

describe('decodeGoJson', () => {
  it('keeps the text of scalars and every member of an object, duplicates included', () => {
    expect(decodeGoJson(' {"n": 1.0e1, "s": "a\\u0026b", "n": -0, "t": true, "z": null} ')).toEqual({
      kind: 'object',
      entries: [
        ['n', { kind: 'number', raw: '1.0e1', value: 10 }],
        ['s', { kind: 'string', raw: '"a\\u0026b"', value: 'a&b' }],
        ['n', { kind: 'number', raw: '-0', value: -0 }],
        ['t', { kind: 'bool', raw: 'true', value: true }],
        ['z', null],
      ],
    });
    expect(decodeGoJson('[[], {}, "\\ud83d\\ude00", "\\udc00x"]')).toEqual({
      kind: 'array',
      items: [
        { kind: 'array', items: [] },
        { kind: 'object', entries: [] },
        { kind: 'string', raw: '"\\ud83d\\ude00"', value: '😀' },
        { kind: 'string', raw: '"\\udc00x"', value: '\ufffdx' },
      ],
    });
    expect(decodeGoJson('null')).toBeNull();
  });

  it('refuses what json.Valid refuses', () => {
    const bad = [
      '',
      ' ',
      '[1,]',
      '{"a":1,}',
      '01',
      '1.',
      '.5',
      '-',
      '1e',
      '+1',
      '"\t"',
      '"\\x"',
      '"\\u12"',
      'nul',
      '[1 2]',
      '{"a" 1}',
      '{a:1}',
      '1 2',
      "'a'",
      '\ufeff{}',
    ];
    for (const text of bad) expect(() => decodeGoJson(text), text).toThrow(GoJsonSyntaxError);
    expect(() => decodeGoJson(`${'{"a":'.repeat(10000)}1${'}'.repeat(10000)}`)).not.toThrow();
    expect(() => decodeGoJson(`${'['.repeat(10001)}${']'.repeat(10001)}`)).toThrow(GoJsonSyntaxError);
  });
});

describe('goMarshal and goQuote', () => {
  it('writes what json.Marshal writes for a map: sorted keys, HTML-safe strings', () => {
    expect(goMarshal({ b: ['<a&b>', '\u2028', '\b\f\n\r\t\u0001'], a: { y: 1.5, x: null }, c: true })).toBe(
      '{"a":{"x":null,"y":1.5},"b":["\\u003ca\\u0026b\\u003e","\\u2028","\\b\\f\\n\\r\\t\\u0001"],"c":true}',
    );
  });

  it('quotes as strconv.Quote does', () => {
    expect(goQuote('a"b\\c\u0007\u007f é\u00ad😀')).toBe('"a\\"b\\\\c\\a\\x7f é\\u00ad😀"');
  });
});

describe('compareUtf8', () => {
  it('orders exactly as the UTF-8 bytes do, surrogate pairs, lone surrogates and U+E000..U+FFFF included', () => {
    const units = [0x41, 0x61, 0x7f, 0xe9, 0x7ff, 0x800, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xfffd, 0xffff];
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const word = () => String.fromCharCode(...Array.from({ length: rnd(4) }, () => units[rnd(units.length)] as number));
    const sign = (n: number) => Math.sign(n);
    for (let i = 0; i < 20_000; i++) {
      const a = word();
      const b = rnd(3) === 0 ? a + word() : word();
      expect([a, b, sign(compareUtf8(a, b))]).toEqual([a, b, sign(Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')))]);
    }
  });
});
