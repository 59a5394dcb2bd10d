// Vectors produced by Go 1.2x's encoding/json (json.Unmarshal into interface{}: checkValid's scanner), the decoder
// kube-apiserver reads every JSON body with; the depth tests use the limit as a parameter.
import { describe, expect, it } from 'vitest';
import { jsonSyntaxError, MAX_NESTING_DEPTH, scanJsonShape } from './json-syntax.js';

const GO_VECTORS: Array<[string | Buffer, string | undefined]> = [
  ['', 'unexpected end of JSON input'],
  [' ', 'unexpected end of JSON input'],
  ['{', 'unexpected end of JSON input'],
  ['{"a":}', "invalid character '}' looking for beginning of value"],
  ['{"a" 1}', "invalid character '1' after object key"],
  ['{"a":1 "b":2}', "invalid character '\"' after object key:value pair"],
  ['[1 2]', "invalid character '2' after array element"],
  ['[1,]', "invalid character ']' looking for beginning of value"],
  ['{,}', "invalid character ',' looking for beginning of object key string"],
  ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
  ['tru', "invalid character ' ' in literal true (expecting 'e')"],
  ['trux', "invalid character 'x' in literal true (expecting 'e')"],
  ['fals', "invalid character ' ' in literal false (expecting 'e')"],
  ['nulx', "invalid character 'x' in literal null (expecting 'l')"],
  ['-', "invalid character ' ' in numeric literal"],
  ['-a', "invalid character 'a' in numeric literal"],
  ['01', "invalid character '1' after top-level value"],
  ['1.', "invalid character ' ' after decimal point in numeric literal"],
  ['1e+', "invalid character ' ' in exponent of numeric literal"],
  ['1ex', "invalid character 'x' in exponent of numeric literal"],
  ['"abc', 'unexpected end of JSON input'],
  ['"a\\x"', "invalid character 'x' in string escape code"],
  ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
  ['"a\nb"', "invalid character '\\n' in string literal"],
  ['[]]', "invalid character ']' after top-level value"],
  ['\uFEFF{}', "invalid character 'ï' looking for beginning of value"],
  ["'a'", "invalid character '\\'' looking for beginning of value"],
  [Buffer.from([0x80]), "invalid character '\\u0080' looking for beginning of value"],
  ['é', "invalid character 'Ã' looking for beginning of value"],
  ['[\u0001]', "invalid character '\\x01' looking for beginning of value"],
  ['{"a":[1,{"b":nul}]}', "invalid character '}' in literal null (expecting 'l')"],
  ['"\\', "invalid character ' ' in string escape code"],
  ['"\\u', "invalid character ' ' in \\u hexadecimal character escape"],
  ['123abc', "invalid character 'a' after top-level value"],
  ['-0.5e-3', undefined],
  ['{"a":"\\u00e9","b":[true,false,null,{}],"c":-1.5E+10}', undefined],
  [`[${'['.repeat(600)}`, 'unexpected end of JSON input'],
];

describe('jsonSyntaxError: encoding/json scanner.go, word for word', () => {
  it.each(GO_VECTORS)('%j', (input, want) => {
    expect(jsonSyntaxError(input, 10_000)).toBe(want);
  });

  it('refuses nesting past the limit at the bracket that passes it, as pushParseState does', () => {
    expect(jsonSyntaxError('[[[]]]', 3)).toBeUndefined();
    expect(jsonSyntaxError('[[[[]]]]', 3)).toBe("invalid character '[' exceeded max depth");
    expect(jsonSyntaxError('{"a":{"b":{"c":{}}}}', 3)).toBe("invalid character '{' exceeded max depth");
    // An earlier syntax error wins, as the scanner stops at the first.
    expect(jsonSyntaxError('[1 [[[[', 3)).toBe("invalid character '[' after array element");
    // Iterative: a million levels cost no stack.
    expect(jsonSyntaxError('['.repeat(1_000_000), 2_000_000)).toBe('unexpected end of JSON input');
  });
});

describe('scanJsonShape: the pass every body gets', () => {
  it('measures nesting outside strings only', () => {
    expect(scanJsonShape('[[[]]]', 3).tooDeep).toBe(false);
    expect(scanJsonShape('[[[[]]]]', 3).tooDeep).toBe(true);
    expect(scanJsonShape('{"a":"[[[[[[[[","b":"\\"[[[["}', 3).tooDeep).toBe(false);
    // Members are the colons outside strings: what duplicate detection compares with the parsed keys.
    expect(scanJsonShape('{"a":{"b:c":1,"b":[{"x":":"}]},"a":2}').members).toBe(5);
    expect(scanJsonShape(`{"a":${'['.repeat(MAX_NESTING_DEPTH)}`).tooDeep).toBe(true);
  });

  it('finds the first number beyond float64, and nothing else', () => {
    expect(scanJsonShape('{"a":1e308,"b":-1.5e-400,"c":123456789012345678901234567890}').overflow).toBeUndefined();
    expect(scanJsonShape('{"a":"1e999","b":[1,2e999,-3e999]}').overflow).toBe('2e999');
    expect(scanJsonShape(`[-1${'0'.repeat(400)}]`).overflow).toBe(`-1${'0'.repeat(400)}`);
  });
});
