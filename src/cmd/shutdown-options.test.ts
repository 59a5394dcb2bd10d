// The graceful-termination flags, with kube-apiserver's names and defaults (k8s.io/apiserver
// pkg/server/options/server_run_options.go; ShutdownTimeout is --request-timeout, server/config.go New).
import { describe, expect, it } from 'vitest';
import { parseOptions, usage, type Options, type ParseResult } from './options.js';

function ok(r: ParseResult): Options {
  if (r.kind !== 'ok') throw new Error(`expected options, got ${JSON.stringify(r)}`);
  return r.options;
}

describe('shutdown flags', () => {
  it("default to kube-apiserver's: no delay, no 429s, watches ended at once, a 1 minute request timeout", () => {
    const o = ok(parseOptions([], {}));
    expect(o.shutdownDelayMs).toBe(0);
    expect(o.shutdownSendRetryAfter).toBe(false);
    expect(o.shutdownWatchTerminationGracePeriodMs).toBe(0);
    expect(o.requestTimeoutMs).toBe(60_000);
  });

  it('read flags and environment variables, the flag winning', () => {
    const o = ok(
      parseOptions(['--shutdown-delay-duration=70s', '--shutdown-send-retry-after=true', '--request-timeout', '30s'], {
        WEBSITE_APISERVER_SHUTDOWN_WATCH_TERMINATION_GRACE_PERIOD: '25s',
        WEBSITE_APISERVER_SHUTDOWN_DELAY_DURATION: '5s',
      }),
    );
    expect(o.shutdownDelayMs).toBe(70_000);
    expect(o.shutdownSendRetryAfter).toBe(true);
    expect(o.shutdownWatchTerminationGracePeriodMs).toBe(25_000);
    expect(o.requestTimeoutMs).toBe(30_000);
  });

  it('refuse bad values, all at once: a zero request timeout, a malformed delay, a non-boolean', () => {
    const r = parseOptions(['--request-timeout=0', '--shutdown-delay-duration=soon', '--shutdown-send-retry-after=yes'], {});
    expect(r.kind).toBe('error');
    const errs = r.kind === 'error' ? r.errors : [];
    expect(errs).toEqual([
      expect.stringContaining('--shutdown-send-retry-after: must be true or false, got "yes"'),
      expect.stringContaining('--request-timeout: must be a positive duration'),
      expect.stringContaining('--shutdown-delay-duration: must be a non-negative duration'),
    ]);
  });

  it('are documented in --help', () => {
    const help = usage();
    for (const flag of ['request-timeout', 'shutdown-delay-duration', 'shutdown-send-retry-after', 'shutdown-watch-termination-grace-period']) {
      expect(help).toContain(`--${flag}`);
      expect(help).toContain(`WEBSITE_APISERVER_${flag.toUpperCase().replace(/-/g, '_')}`);
    }
  });
});
