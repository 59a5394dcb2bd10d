// time.ParseDuration vectors from Go 1.2x (the `timeout` query parameter, filters/request_deadline.go), and the
// flags that set the limits.
import { describe, expect, it } from 'vitest';
import { parseOptions } from '../cmd/options.js';
import { nodeTimeoutOptions, parseGoDuration } from './timeouts.js';

describe('parseGoDuration', () => {
  it.each<[string, bigint | string]>([
    ['0', 0n],
    ['-0', 0n],
    ['1s', 1_000_000_000n],
    ['1.5h', 5_400_000_000_000n],
    ['-2m3s', -123_000_000_000n],
    ['+5ms', 5_000_000n],
    ['1us', 1000n],
    ['1µs', 1000n],
    ['1μs', 1000n],
    ['300ns', 300n],
    ['.5s', 500_000_000n],
    ['5.s', 5_000_000_000n],
    ['9223372036854775807ns', 9223372036854775807n],
    ['1.0000000000000000001s', 1_000_000_000n],
    ['0.0000000001s', 0n],
    ['abc', 'time: invalid duration "abc"'],
    ['5', 'time: missing unit in duration "5"'],
    ['5y', 'time: unknown unit "y" in duration "5y"'],
    ['', 'time: invalid duration ""'],
    ['1h2', 'time: missing unit in duration "1h2"'],
    ['.', 'time: invalid duration "."'],
    ['-', 'time: invalid duration "-"'],
    ['9223372036854775808ns', 'time: invalid duration "9223372036854775808ns"'],
    ['2562048h', 'time: invalid duration "2562048h"'],
    ['"q"s', 'time: invalid duration "\\"q\\"s"'],
    ['1e3s', 'time: unknown unit "e" in duration "1e3s"'],
  ])('%j', (input, want) => {
    expect(parseGoDuration(input)).toBe(want);
  });
});

describe('the connection limits', () => {
  it("default to kube-apiserver's and can be set", () => {
    const d = parseOptions([], {});
    if (d.kind !== 'ok') throw new Error(JSON.stringify(d));
    expect([d.options.requestTimeoutMs, d.options.readHeaderTimeoutMs, d.options.keepAliveTimeoutMs]).toEqual([60_000, 32_000, 90_000]);
    const s = parseOptions(['--read-header-timeout', '2s', '--keep-alive-timeout=500ms'], { WEBSITE_APISERVER_REQUEST_TIMEOUT: '5s' });
    if (s.kind !== 'ok') throw new Error(JSON.stringify(s));
    expect([s.options.requestTimeoutMs, s.options.readHeaderTimeoutMs, s.options.keepAliveTimeoutMs]).toEqual([5000, 2000, 500]);
    const bad = parseOptions(['--read-header-timeout', '0', '--keep-alive-timeout', 'soon'], {});
    expect(bad.kind === 'error' && bad.errors).toEqual([
      '--read-header-timeout: must be a positive duration such as 90s or 1m, got "0"',
      '--keep-alive-timeout: must be a positive duration such as 90s or 1m, got "soon"',
    ]);
  });

  it('Node checks its timers often enough, and its whole-request limit only backs up the request timeout', () => {
    const o = nodeTimeoutOptions({ requestTimeoutMs: 60_000, readHeaderTimeoutMs: 32_000, keepAliveTimeoutMs: 90_000 });
    expect(o.https['headersTimeout']).toBe(32_000);
    expect(o.https['handshakeTimeout']).toBe(32_000);
    expect(o.https['connectionsCheckingInterval']).toBe(4000);
    expect(o.fastify.keepAliveTimeout).toBe(90_000);
    expect(o.fastify.requestTimeout).toBeGreaterThan(60_000);
  });
});
