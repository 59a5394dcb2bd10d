/**
 * The query decoder against Go and apimachinery's own cases: net/url url_test.go parseTests (ParseQuery),
 * strconv atoi_test.go parseInt64Tests / parseUint64Tests and quote_test.go quotetests, runtime/conversion.go's
 * string conversions, meta/v1 conversion_test.go TestConvertSliceStringToDeletionPropagation and
 * internalversion/scheme register_test.go TestListOptions; and request-info decoding the same query the same way.
 */
import { describe, expect, it } from 'vitest';
import { requestAttributes } from '../../auth/request-info.js';
import {
  decodeDeleteOptions,
  decodeGetOptions,
  decodeListOptions,
  decodeTableOptions,
  decodeWriteOptions,
  goBool,
  goQuote,
  parseInt64,
  parseQuery,
  parseUint64,
  queryOf,
  requestInfoListOptions,
  toBool,
  toOptionalBool,
} from './parameter-codec.js';
import { StatusError } from './errors.js';

const values = (raw: string) => Object.fromEntries([...parseQuery(raw)].map(([k, v]) => [k, [...v]]));

describe('parseQuery is url.ParseQuery as URL.Query() uses it (url_test.go parseTests)', () => {
  it.each([
    ['a=1', { a: ['1'] }],
    ['a=1&b=2', { a: ['1'], b: ['2'] }],
    ['a=1&a=2&a=banana', { a: ['1', '2', 'banana'] }],
    ['ascii=%3Ckey%3A+0x90%3E', { ascii: ['<key: 0x90>'] }],
    ['a=1;b=2', {}],
    ['a;b=1', {}],
    ['a=%3B', { a: [';'] }],
    ['a%3Bb=1', { 'a;b': ['1'] }],
    ['a=1&a=2;a=banana', { a: ['1'] }],
    ['a;b&c=1', { c: ['1'] }],
    ['a=1&b=2;a=3&c=4', { a: ['1'], c: ['4'] }],
    ['a=1&b=2;c=3', { a: ['1'] }],
    [';', {}],
    ['a=1;', {}],
    ['a=1&;', { a: ['1'] }],
    [';a=1&b=2', { b: ['2'] }],
    // A malformed escape drops its pair only; a key alone has the empty value; empty pairs are skipped.
    ['limit=%zz&watch=true', { watch: ['true'] }],
    ['a=%4', {}],
    ['watch', { watch: [''] }],
    ['watch=&&x=1&', { watch: [''], x: ['1'] }],
    ['a=b=c', { a: ['b=c'] }],
    ['%C3%A9=%E2%98%BA', { é: ['☺'] }],
    ['', {}],
  ])('%s', (raw, want) => {
    expect(values(raw)).toEqual(want);
  });

  it('decodes nothing from a query of more than 10000 parameters (Go 1.26 urlmaxqueryparams)', () => {
    expect(parseQuery(Array.from({ length: 10_000 }, () => 'a=1').join('&')).get('a')).toHaveLength(10_000);
    expect(parseQuery(Array.from({ length: 10_001 }, () => 'a=1').join('&')).size).toBe(0);
  });

  it('queryOf takes everything after the first ?', () => {
    expect(Object.fromEntries(queryOf('/apis/g/v/r?watch=1&x=a?b'))).toEqual({ watch: ['1'], x: ['a?b'] });
    expect(queryOf('/apis/g/v/r').size).toBe(0);
  });
});

describe('goQuote is strconv.Quote (quote_test.go quotetests)', () => {
  it.each([
    ['\x07\b\f\r\n\t\v', '"\\a\\b\\f\\r\\n\\t\\v"'],
    ['\\', '"\\\\"'],
    ['\u263a', '"☺"'],
    ['\u{10ffff}', '"\\U0010ffff"'],
    ['\x04', '"\\x04"'],
    ['!\u00a0!\u2000!\u3000!', '"!\\u00a0!\\u2000!\\u3000!"'],
    ['\x7f', '"\\x7f"'],
    ['say "hi"', '"say \\"hi\\""'],
    ['é', '"é"'],
  ])('%j', (s, want) => {
    expect(goQuote(s)).toBe(want);
  });
});

describe('parseInt64 is strconv.ParseInt(s, 10, 64) with its error text (atoi_test.go parseInt64Tests)', () => {
  it.each([
    ['0', 0n],
    ['-0', 0n],
    ['+0', 0n],
    ['1', 1n],
    ['-1', -1n],
    ['+1', 1n],
    ['12345', 12345n],
    ['-12345', -12345n],
    ['012345', 12345n],
    ['-012345', -12345n],
    ['98765432100', 98765432100n],
    ['-98765432100', -98765432100n],
    ['9223372036854775807', 9223372036854775807n],
    ['-9223372036854775807', -9223372036854775807n],
    ['-9223372036854775808', -9223372036854775808n],
  ])('%s is %s', (s, want) => {
    expect(parseInt64(s)).toBe(want);
  });

  it.each([
    ['', 'invalid syntax'],
    ['-1_2_3_4_5', 'invalid syntax'],
    ['-_12345', 'invalid syntax'],
    ['_12345', 'invalid syntax'],
    ['1__2345', 'invalid syntax'],
    ['12345_', 'invalid syntax'],
    ['123%45', 'invalid syntax'],
    ['+', 'invalid syntax'],
    [' 1', 'invalid syntax'],
    ['0x10', 'invalid syntax'],
    ['1.5', 'invalid syntax'],
    ['9223372036854775808', 'value out of range'],
    ['9223372036854775809', 'value out of range'],
    ['-9223372036854775809', 'value out of range'],
    // The overflow is found at the digit that causes it, before the bad character after it (ParseUint's loop).
    ['99999999999999999999x', 'value out of range'],
  ])('%j fails: %s', (s, err) => {
    expect(() => parseInt64(s)).toThrow(`strconv.ParseInt: parsing ${goQuote(s)}: ${err}`);
  });

  it('parseUint64 is strconv.ParseUint(s, 10, 64) (atoi_test.go parseUint64Tests)', () => {
    expect(parseUint64('18446744073709551615')).toBe(18446744073709551615n);
    expect(parseUint64('012345')).toBe(12345n);
    for (const s of ['', '12345x', '1_2_3_4_5', '_12345', '-0', '-1', '+1'])
      expect(() => parseUint64(s), s).toThrow(`strconv.ParseUint: parsing ${goQuote(s)}: invalid syntax`);
    for (const s of ['18446744073709551616', '18446744073709551620'])
      expect(() => parseUint64(s), s).toThrow(`strconv.ParseUint: parsing "${s}": value out of range`);
  });
});

describe('booleans are Convert_Slice_string_To_bool: false only for "0" and EqualFold "false"', () => {
  it.each([
    ['', true],
    ['true', true],
    ['True', true],
    ['TRUE', true],
    ['1', true],
    ['yes', true],
    ['no', true],
    ['00', true],
    ['f', true],
    ['false ', true],
    ['0', false],
    ['false', false],
    ['False', false],
    ['FALSE', false],
    ['fAlSe', false],
    // strings.EqualFold folds ſ (U+017F) to s.
    ['falſe', false],
  ])('%j is %s', (v, want) => {
    expect(goBool(v)).toBe(want);
  });

  it('reads the first value; absent is false, or unset for a pointer (Convert_Slice_string_To_Pointer_bool)', () => {
    expect(toBool(parseQuery('watch=false&watch=true'), 'watch')).toBe(false);
    expect(toBool(parseQuery('watch=true&watch=false'), 'watch')).toBe(true);
    expect(toBool(parseQuery('watch'), 'watch')).toBe(true);
    expect(toBool(parseQuery('other=1'), 'watch')).toBe(false);
    expect(toOptionalBool(parseQuery(''), 'sendInitialEvents')).toBeUndefined();
    expect(toOptionalBool(parseQuery('sendInitialEvents='), 'sendInitialEvents')).toBe(true);
    expect(toOptionalBool(parseQuery('sendInitialEvents=0'), 'sendInitialEvents')).toBe(false);
  });
});

// badRequestOf returns the 400 a decode threw (ParameterCodec errors become errors.NewBadRequest(err.Error())).
function badRequestOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    expect((e as StatusError).status).toMatchObject({ code: 400, reason: 'BadRequest' });
    return (e as StatusError).status.message ?? '';
  }
  throw new Error('no error');
}

describe('decodeListOptions is ParameterCodec.DecodeParameters into internal ListOptions', () => {
  it('decodes every field (register_test.go TestListOptions round trip)', () => {
    const o = decodeListOptions(parseQuery('labelSelector=a%3D1&fieldSelector=b%3D1&resourceVersion=10&timeoutSeconds=10&watch=true'));
    expect(o).toMatchObject({ labelSelector: 'a=1', fieldSelector: 'b=1', resourceVersion: '10', timeoutSeconds: 10, watch: true, limit: 0, continue: '' });
    expect(o.label.matches({ a: '1' })).toBe(true);
    expect(o.field.exactName()).toBeUndefined();
    expect(o.sendInitialEvents).toBeUndefined();
  });

  it('refuses selectors that do not parse (TestListOptions failing conversions)', () => {
    expect(badRequestOf(() => decodeListOptions(parseQuery('labelSelector=a!!!')))).not.toBe('');
    expect(badRequestOf(() => decodeListOptions(parseQuery('fieldSelector=a!!!')))).toContain('invalid selector');
  });

  it('visits fields in the generated order: timeoutSeconds fails before limit, and both before the selectors', () => {
    expect(badRequestOf(() => decodeListOptions(parseQuery('limit=x&timeoutSeconds=y&labelSelector=a!!!')))).toBe(
      'strconv.ParseInt: parsing "y": invalid syntax',
    );
    expect(badRequestOf(() => decodeListOptions(parseQuery('limit=x&labelSelector=a!!!')))).toBe('strconv.ParseInt: parsing "x": invalid syntax');
    expect(badRequestOf(() => decodeListOptions(parseQuery('limit=')))).toBe('strconv.ParseInt: parsing "": invalid syntax');
  });

  it('keeps limit and timeoutSeconds as given (zero and negatives mean something to the handler, not the codec)', () => {
    expect(decodeListOptions(parseQuery('limit=-1&timeoutSeconds=0'))).toMatchObject({ limit: -1, timeoutSeconds: 0 });
    expect(decodeListOptions(parseQuery(''))).toMatchObject({ limit: 0, timeoutSeconds: undefined });
  });
});

describe('the other options', () => {
  it('DeleteOptions: the first propagationPolicy, even empty (TestConvertSliceStringToDeletionPropagation); pointers unset only when absent', () => {
    expect(decodeDeleteOptions(parseQuery(''))).toEqual({});
    expect(decodeDeleteOptions(parseQuery('propagationPolicy=foo'))).toEqual({ propagationPolicy: 'foo' });
    expect(decodeDeleteOptions(parseQuery('propagationPolicy=bar&propagationPolicy=foo'))).toEqual({ propagationPolicy: 'bar' });
    expect(decodeDeleteOptions(parseQuery('propagationPolicy='))).toEqual({ propagationPolicy: '' });
    expect(
      decodeDeleteOptions(parseQuery('orphanDependents&ignoreStoreReadErrorWithClusterBreakingPotential=False&gracePeriodSeconds=-3&dryRun=All&dryRun=x')),
    ).toEqual({ orphanDependents: true, ignoreStoreReadErrorWithClusterBreakingPotential: false, gracePeriodSeconds: -3, dryRun: ['All', 'x'] });
    expect(badRequestOf(() => decodeDeleteOptions(parseQuery('gracePeriodSeconds=1s')))).toBe('strconv.ParseInt: parsing "1s": invalid syntax');
  });

  it('Create/Update/PatchOptions: every dryRun value, the first of the rest; force only on PatchOptions', () => {
    expect(decodeWriteOptions(parseQuery('dryRun=All&dryRun=All&fieldManager=a&fieldManager=b&force=&fieldValidation=Strict'), 'PatchOptions')).toEqual({
      dryRun: ['All', 'All'],
      fieldManager: 'a',
      fieldValidation: 'Strict',
      force: true,
    });
    expect(decodeWriteOptions(parseQuery('force=true'), 'CreateOptions')).toEqual({
      dryRun: undefined,
      fieldManager: '',
      fieldValidation: '',
      force: undefined,
    });
  });

  it('TableOptions: noHeaders comes from a parameter named "-" (its json tag), includeObject as given', () => {
    expect(decodeTableOptions(parseQuery('-=true&includeObject=None'))).toEqual({ noHeaders: true, includeObject: 'None' });
    expect(decodeTableOptions(parseQuery('-'))).toEqual({ noHeaders: true, includeObject: '' });
    expect(decodeTableOptions(parseQuery('noHeaders=true'))).toEqual({ noHeaders: false, includeObject: '' });
  });

  it('GetOptions: a true export is refused as get.go refuses it; a false one is fine', () => {
    expect(badRequestOf(() => decodeGetOptions(parseQuery('export=true')))).toBe('the export parameter, deprecated since v1.14, is no longer supported');
    expect(badRequestOf(() => decodeGetOptions(parseQuery('export=')))).toBe('the export parameter, deprecated since v1.14, is no longer supported');
    expect(decodeGetOptions(parseQuery('export=0&resourceVersion=5'))).toEqual({ resourceVersion: '5' });
  });
});

describe('authorization decodes exactly what the handlers decode (requestinfo.go)', () => {
  const NS = '/apis/extensions.example.com/v1alpha1/namespaces/default/websites';
  const verb = (q: string) => requestAttributes('GET', `${NS}?${q}`).verb;

  it.each([
    ['watch=True', 'watch'],
    ['watch=', 'watch'],
    ['watch', 'watch'],
    ['watch=yes', 'watch'],
    ['watch=FALSE', 'list'],
    ['watch=0', 'list'],
    ['watch=falſe', 'list'],
    ['watch=0&watch=1', 'list'],
    ['watch=1;x=1', 'list'],
    ['watch=%zz', 'list'],
    ['foo=bar', 'list'],
  ])('%s is verb %s, as the handler decodes it', (q, want) => {
    expect(verb(q)).toBe(want);
    expect(decodeListOptions(parseQuery(q)).watch).toBe(want === 'watch');
  });

  it('when the options do not decode, only watch is read, lowercased (not folded), and no name is taken from the selector', () => {
    expect(requestInfoListOptions(parseQuery('limit=abc&watch=True'))).toEqual({ watch: true, field: undefined });
    expect(requestInfoListOptions(parseQuery('limit=abc&watch=FALSE'))).toEqual({ watch: false, field: undefined });
    // strings.ToLower leaves ſ alone, so this is a watch here although the codec would decode it as false.
    expect(requestInfoListOptions(parseQuery('limit=abc&watch=falſe'))).toEqual({ watch: true, field: undefined });
    expect(requestAttributes('GET', `${NS}?timeoutSeconds=x&watch=1&fieldSelector=metadata.name%3Dkubia`)).toMatchObject({ verb: 'watch', name: '' });
    expect(requestAttributes('GET', `${NS}?labelSelector=a!!!&fieldSelector=metadata.name%3Dkubia`)).toMatchObject({ verb: 'list', name: '' });
    expect(requestAttributes('GET', `${NS}?watch=True&fieldSelector=metadata.name%3Dkubia`)).toMatchObject({ verb: 'watch', name: 'kubia' });
  });

  it('a GET with a name stays verb get whatever the query says', () => {
    expect(requestAttributes('GET', `${NS}/kubia?watch=true`)).toMatchObject({ verb: 'get', name: 'kubia' });
  });
});
