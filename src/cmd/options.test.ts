// Flags: the command line (every problem one line, -h, --version), --log-format, the watch history and bookmarks (Go-style durations, defaults, environment variables, precedence, errors) and cluster delegation.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { kinds } from '../kinds/index.js';
import { envName, FLAGS, parseByteSize, parseDuration, parseOptions, suggestFlag, usage, type Options, type ParseResult } from './options.js';

function ok(r: ParseResult): Options {
  if (r.kind !== 'ok') throw new Error(`expected options, got ${JSON.stringify(r)}`);
  return r.options;
}
function errors(r: ParseResult): string[] {
  if (r.kind !== 'error') throw new Error(`expected errors, got ${JSON.stringify(r)}`);
  return r.errors;
}

describe('parseDuration', () => {
  it('reads Go-style durations into milliseconds', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration('0s')).toBe(0);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('2m30s')).toBe(150_000);
    expect(parseDuration('1m500ms')).toBe(60_500);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('1h1m1s1ms')).toBe(3_661_001);
  });

  it('rejects malformed durations', () => {
    for (const bad of ['', '15', '00', 'm', 's', '1d', '1h 30m', ' 1s', '1s ', '1h30', 'abc', '1m-1s', '1S', '1min', '10 s', 'h1']) {
      expect(parseDuration(bad), JSON.stringify(bad)).toBeUndefined();
    }
  });
});

describe('watch flags', () => {
  it('defaults to 100000 events, 15 minutes of history and a 1 minute bookmark interval', () => {
    const o = ok(parseOptions([], {}));
    expect(o.watchHistoryEvents).toBe(100_000);
    expect(o.watchHistoryAgeMs).toBe(15 * 60_000);
    expect(o.watchBookmarkIntervalMs).toBe(60_000);
  });

  it('reads the flags', () => {
    const o = ok(parseOptions(['--watch-history-events', '500', '--watch-history-age=1h30m', '--watch-bookmark-interval', '250ms'], {}));
    expect(o.watchHistoryEvents).toBe(500);
    expect(o.watchHistoryAgeMs).toBe(5_400_000);
    expect(o.watchBookmarkIntervalMs).toBe(250);
  });

  it('reads the environment variables, and a flag wins over its variable', () => {
    expect(envName('watch-history-events')).toBe('WEBSITE_APISERVER_WATCH_HISTORY_EVENTS');
    const env = {
      WEBSITE_APISERVER_WATCH_HISTORY_EVENTS: '42',
      WEBSITE_APISERVER_WATCH_HISTORY_AGE: '90s',
      WEBSITE_APISERVER_WATCH_BOOKMARK_INTERVAL: '5s',
    };
    const fromEnv = ok(parseOptions([], env));
    expect(fromEnv.watchHistoryEvents).toBe(42);
    expect(fromEnv.watchHistoryAgeMs).toBe(90_000);
    expect(fromEnv.watchBookmarkIntervalMs).toBe(5000);
    const flagWins = ok(parseOptions(['--watch-history-events=7', '--watch-bookmark-interval=2m'], env));
    expect(flagWins.watchHistoryEvents).toBe(7);
    expect(flagWins.watchHistoryAgeMs).toBe(90_000);
    expect(flagWins.watchBookmarkIntervalMs).toBe(120_000);
  });

  it('reports every bad value at once, naming each flag and the value', () => {
    const errs = errors(parseOptions(['--watch-history-events', '0', '--watch-history-age', 'forever', '--watch-bookmark-interval', '0'], {}));
    expect(errs).toHaveLength(3);
    expect(errs.find((e) => e.includes('--watch-history-events'))).toContain('"0"');
    expect(errs.find((e) => e.includes('--watch-history-age'))).toContain('"forever"');
    expect(errs.find((e) => e.includes('--watch-bookmark-interval'))).toContain('"0"');
  });

  it('rejects non-integer and non-positive history sizes, from a flag or the environment', () => {
    for (const bad of ['-5', '1.5', 'abc', '1e3', '', ' 10', '0x10']) {
      const errs = errors(parseOptions([`--watch-history-events=${bad}`], {}));
      expect(errs, bad).toEqual([expect.stringContaining('--watch-history-events')]);
    }
    expect(errors(parseOptions([], { WEBSITE_APISERVER_WATCH_HISTORY_EVENTS: 'lots' }))).toEqual([expect.stringContaining('"lots"')]);
  });

  it('rejects zero and malformed durations, from a flag or the environment', () => {
    for (const bad of ['0', '0s', '15', '1d', '-1m', '']) {
      expect(errors(parseOptions([`--watch-history-age=${bad}`], {})), bad).toEqual([expect.stringContaining('--watch-history-age')]);
      expect(errors(parseOptions([`--watch-bookmark-interval=${bad}`], {})), bad).toEqual([expect.stringContaining('--watch-bookmark-interval')]);
    }
    expect(errors(parseOptions([], { WEBSITE_APISERVER_WATCH_HISTORY_AGE: '10 minutes' }))).toEqual([expect.stringContaining('"10 minutes"')]);
  });

  it('reports a bad watch flag together with other bad flags', () => {
    const errs = errors(parseOptions(['--port', 'x', '--watch-history-age', '1y'], {}));
    expect(errs.some((e) => e.startsWith('--port'))).toBe(true);
    expect(errs.some((e) => e.startsWith('--watch-history-age'))).toBe(true);
  });

  it('--help names every served version of every kind, the storage version first', () => {
    const summary =
      usage()
        .split('\n')
        .find((l) => l.startsWith('Serves ')) ?? '';
    expect(summary).toBe('Serves Website (extensions.example.com/v1 and extensions.example.com/v1alpha1; stored as v1) over HTTPS, in lmdb or etcd.');
    for (const k of kinds) {
      for (const v of [k.storage.version, ...(k.converted ?? []).map((c) => c.definition.version)]) expect(summary).toContain(`${k.storage.group}/${v}`);
    }
  });

  it('documents the new flags, their defaults and variables in --help', () => {
    const text = usage();
    for (const [flag, def] of [
      ['watch-history-events', '100000'],
      ['watch-history-age', '15m'],
      ['watch-bookmark-interval', '1m'],
    ] as const) {
      expect(text).toContain(`--${flag} (default "${def}")`);
      expect(text).toContain(envName(flag));
    }
  });
});

describe('--lmdb-map-size', () => {
  it('defaults to 16Gi and reads bytes with a binary suffix, from the flag or its variable', () => {
    expect(ok(parseOptions([], {})).lmdbMapSize).toBe(16 * 2 ** 30);
    expect(ok(parseOptions(['--lmdb-map-size=512Mi'], {})).lmdbMapSize).toBe(512 * 2 ** 20);
    expect(ok(parseOptions([], { WEBSITE_APISERVER_LMDB_MAP_SIZE: '1Ti' })).lmdbMapSize).toBe(2 ** 40);
    expect(parseByteSize('1048576')).toBe(2 ** 20);
    expect(usage()).toContain('--lmdb-map-size (default "16Gi")');
  });

  it('rejects malformed and tiny sizes', () => {
    for (const bad of ['', '16G', '1.5Gi', '-1', '4096', 'lots']) {
      expect(errors(parseOptions([`--lmdb-map-size=${bad}`], {})), bad).toEqual([expect.stringContaining('--lmdb-map-size')]);
    }
  });
});

describe('cluster delegation flags', () => {
  it('defaults to no kubeconfig and auto modes', () => {
    const o = ok(parseOptions([], {}));
    expect(o.kubeconfig).toBeUndefined();
    expect(o.authenticationMode).toBe('auto');
    expect(o.authorizationMode).toBe('auto');
  });

  it('reads --kubeconfig from the flag or WEBSITE_APISERVER_KUBECONFIG, the flag winning; empty means unset', () => {
    expect(ok(parseOptions(['--kubeconfig', '/etc/kube/admin.conf'], {})).kubeconfig).toBe('/etc/kube/admin.conf');
    expect(ok(parseOptions(['--kubeconfig=/a'], {})).kubeconfig).toBe('/a');
    expect(envName('kubeconfig')).toBe('WEBSITE_APISERVER_KUBECONFIG');
    expect(ok(parseOptions([], { WEBSITE_APISERVER_KUBECONFIG: '/env/kc' })).kubeconfig).toBe('/env/kc');
    expect(ok(parseOptions(['--kubeconfig', '/flag/kc'], { WEBSITE_APISERVER_KUBECONFIG: '/env/kc' })).kubeconfig).toBe('/flag/kc');
    expect(ok(parseOptions(['--kubeconfig='], {})).kubeconfig).toBeUndefined();
    expect(ok(parseOptions([], { WEBSITE_APISERVER_KUBECONFIG: '' })).kubeconfig).toBeUndefined();
  });

  it('reads each mode from its flag or variable, the flag winning', () => {
    for (const mode of ['auto', 'standalone', 'delegated'] as const) {
      const o = ok(parseOptions([`--authentication-mode=${mode}`, '--authorization-mode', mode], {}));
      expect([o.authenticationMode, o.authorizationMode]).toEqual([mode, mode]);
    }
    const env = { WEBSITE_APISERVER_AUTHENTICATION_MODE: 'delegated', WEBSITE_APISERVER_AUTHORIZATION_MODE: 'standalone' };
    const fromEnv = ok(parseOptions([], env));
    expect([fromEnv.authenticationMode, fromEnv.authorizationMode]).toEqual(['delegated', 'standalone']);
    const flagWins = ok(parseOptions(['--authorization-mode', 'delegated'], env));
    expect([flagWins.authenticationMode, flagWins.authorizationMode]).toEqual(['delegated', 'delegated']);
  });

  it('sets the two modes independently', () => {
    const o = ok(parseOptions(['--authentication-mode', 'delegated'], {}));
    expect([o.authenticationMode, o.authorizationMode]).toEqual(['delegated', 'auto']);
  });

  it('rejects an unknown mode, naming the flag, the value and the choices, together with other errors', () => {
    const errs = errors(parseOptions(['--authentication-mode', 'webhook', '--authorization-mode=RBAC', '--port', 'x'], {}));
    expect(errs).toHaveLength(3);
    const authn = errs.find((e) => e.startsWith('--authentication-mode'));
    expect(authn).toContain('"webhook"');
    for (const choice of ['auto', 'standalone', 'delegated']) expect(authn).toContain(choice);
    expect(errs.find((e) => e.startsWith('--authorization-mode'))).toContain('"RBAC"');
    // Case matters, as for --log-level.
    expect(errors(parseOptions(['--authentication-mode', 'Delegated'], {}))).toEqual([expect.stringContaining('"Delegated"')]);
    expect(errors(parseOptions([], { WEBSITE_APISERVER_AUTHORIZATION_MODE: 'always-allow' }))).toEqual([expect.stringContaining('"always-allow"')]);
  });

  it('rejects --kubeconfig without a value', () => {
    expect(parseOptions(['--kubeconfig'], {}).kind).toBe('error');
  });

  it('documents the flags, their defaults and variables in --help', () => {
    const text = usage();
    expect(text).toContain('--kubeconfig');
    expect(text).toContain(envName('kubeconfig'));
    for (const flag of ['authentication-mode', 'authorization-mode']) {
      expect(text).toContain(`--${flag} (default "auto")`);
      expect(text).toContain(envName(flag));
    }
  });
});

describe('storage backend flags', () => {
  it('defaults to lmdb, and reads etcd servers, prefix and TLS files as kube-apiserver names them', () => {
    expect(ok(parseOptions([], {})).storageBackend).toBe('lmdb');
    const o = ok(
      parseOptions(
        [
          '--storage-backend',
          'etcd',
          '--etcd-servers',
          'https://10.0.0.1:2379, https://10.0.0.2:2379',
          '--etcd-cafile',
          'ca.crt',
          '--etcd-certfile',
          'c.crt',
          '--etcd-keyfile',
          'c.key',
        ],
        {},
      ),
    );
    expect(o).toMatchObject({
      storageBackend: 'etcd',
      etcdServers: ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'],
      etcdPrefix: '/registry/website-apiserver',
      etcdCaFile: 'ca.crt',
      etcdCertFile: 'c.crt',
      etcdKeyFile: 'c.key',
    });
    expect(ok(parseOptions([], { WEBSITE_APISERVER_STORAGE_BACKEND: 'etcd', WEBSITE_APISERVER_ETCD_SERVERS: 'http://127.0.0.1:2379' })).etcdServers).toEqual([
      'http://127.0.0.1:2379',
    ]);
  });

  it('refuses an unknown backend, etcd without servers, a server that is not a URL and a certificate without its key', () => {
    expect(errors(parseOptions(['--storage-backend', 'bolt'], {}))).toEqual(['--storage-backend: must be lmdb or etcd, got "bolt"']);
    expect(errors(parseOptions(['--storage-backend', 'etcd'], {}))).toEqual(['--etcd-servers: required with --storage-backend=etcd']);
    expect(errors(parseOptions(['--storage-backend', 'etcd', '--etcd-servers', 'localhost:2379'], {}))).toEqual([
      '--etcd-servers: "localhost:2379" is not an http:// or https:// URL of a server',
    ]);
    expect(errors(parseOptions(['--etcd-certfile', 'c.crt'], {}))).toEqual(['--etcd-certfile and --etcd-keyfile must be given together']);
  });
});

describe('the command line', () => {
  it('-h and --help ask for the usage, --version for the version, before any value is checked', () => {
    expect(parseOptions(['-h'], {}).kind).toBe('help');
    expect(parseOptions(['--help'], {}).kind).toBe('help');
    expect(parseOptions(['--port', 'abc', '-h'], {}).kind).toBe('help');
    expect(parseOptions(['--version'], {}).kind).toBe('version');
    expect(parseOptions(['--version'], { WEBSITE_APISERVER_PORT: 'abc' }).kind).toBe('version');
  });

  it('documents -h, --version, the version command and --log-format in the usage', () => {
    const text = usage();
    expect(text).toContain('-h, --help');
    expect(text).toContain('  --version\n');
    expect(text).toContain('website-apiserver version');
    expect(text).toContain('--log-format');
    expect(text).toContain(envName('log-format'));
  });

  it('reports each problem of the command line as one line, every one of them', () => {
    expect(errors(parseOptions(['--bogus'], {}))).toEqual(['unknown flag: --bogus']);
    expect(errors(parseOptions(['--prot', '8443'], {}))).toEqual(['unknown flag: --prot (did you mean --port?)']);
    expect(errors(parseOptions(['--prot=8443', '--data-dri', '/tmp/d', '-x'], {}))).toEqual([
      'unknown flag: --prot (did you mean --port?)',
      'unknown flag: --data-dri (did you mean --data-dir?)',
      'unknown flag: -x',
    ]);
    expect(errors(parseOptions(['--port'], {}))).toEqual(['flag needs a value: --port (--port VALUE or --port=VALUE)']);
    expect(errors(parseOptions(['--port', '--data-dir', '/tmp/d'], {}))).toEqual(['flag needs a value: --port (--port VALUE or --port=VALUE)']);
    expect(errors(parseOptions(['serve'], {}))).toEqual([expect.stringMatching(/^unexpected argument "serve": /)]);
    expect(errors(parseOptions(['--help=yes'], {}))).toEqual(['--help takes no value, got "yes"']);
    for (const e of errors(parseOptions(['--bogus', '--port', 'x', 'y', '--', 'z'], {}))) expect(e).not.toContain('\n');
  });

  it('reads values as before: --name value, --name=value, a dash as a value, the last of a repeated flag, repeatable flags', () => {
    const o = ok(
      parseOptions(['--port', '1234', '--port=2345', '--audit-log-path', '-', '--audit-policy-file', 'p.yaml', '--tls-san', 'a.test', '--tls-san=b.test'], {}),
    );
    expect(o.port).toBe(2345);
    expect(o.auditLogPath).toBe('-');
    expect(o.tlsSans).toEqual(['a.test', 'b.test']);
    // A value starting with a dash needs the = form.
    expect(errors(parseOptions(['--audit-log-maxage=-1'], {}))).toEqual(["--audit-log-maxage -1 can't be a negative number"]);
  });

  it('suggests the nearest flag only when it is near', () => {
    const known = FLAGS.map((f) => f.name);
    expect(suggestFlag('log-formt', known)).toBe('log-format');
    expect(suggestFlag('tls-cert', known)).toBe('tls-cert-file');
    expect(suggestFlag('bogus', known)).toBeUndefined();
    expect(suggestFlag('x', known)).toBeUndefined();
  });
});

describe('--log-format', () => {
  it('defaults to text on a terminal and json otherwise', () => {
    expect(ok(parseOptions([], {})).logFormat).toBe('json');
    expect(ok(parseOptions([], {}, { stdoutIsTTY: false })).logFormat).toBe('json');
    expect(ok(parseOptions([], {}, { stdoutIsTTY: true })).logFormat).toBe('text');
  });

  it('takes the flag or its variable, the flag first, whatever stdout is', () => {
    expect(ok(parseOptions(['--log-format', 'json'], {}, { stdoutIsTTY: true })).logFormat).toBe('json');
    expect(ok(parseOptions(['--log-format=text'], {}, { stdoutIsTTY: false })).logFormat).toBe('text');
    expect(ok(parseOptions([], { WEBSITE_APISERVER_LOG_FORMAT: 'text' })).logFormat).toBe('text');
    expect(ok(parseOptions(['--log-format=json'], { WEBSITE_APISERVER_LOG_FORMAT: 'text' }, { stdoutIsTTY: true })).logFormat).toBe('json');
  });

  it('refuses another format, naming it', () => {
    expect(errors(parseOptions(['--log-format', 'yaml'], {}))).toEqual(['--log-format: must be one of text, json, got "yaml"']);
    expect(errors(parseOptions([], { WEBSITE_APISERVER_LOG_FORMAT: 'logfmt' }))).toEqual(['--log-format: must be one of text, json, got "logfmt"']);
  });
});

describe('the flags reference (docs/reference.md)', () => {
  it('lists every flag in its Flags table, with its variable, and names -h and --version', () => {
    const reference = readFileSync(new URL('../../docs/reference.md', import.meta.url), 'utf8');
    expect(reference).toContain('## Flags');
    const table = reference.slice(reference.indexOf('## Flags'), reference.indexOf('\n## ', reference.indexOf('## Flags') + 1));
    for (const f of FLAGS) {
      const row = table.split('\n').find((l) => new RegExp(`^\\| [^|]*\`--${f.name}\``).test(l));
      expect(row, f.name).toBeDefined();
      // A row of several flags (the etcd TLS files) names the first variable and `…`.
      expect(row?.includes(envName(f.name)) || row?.includes('`…'), f.name).toBe(true);
    }
    expect(table).toContain('`-h`');
    expect(table).toContain('--version');
  });
});
