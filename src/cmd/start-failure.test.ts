// A failed start's one line: which errors are the operator's (and what the line says), which are bugs (undefined: the stack).
import { describe, expect, it } from 'vitest';
import { DataDirInUse } from '../storage/data-dir-lock.js';
import { parseOptions, type Options } from './options.js';
import { StartFailure, startFailureMessage } from './start-failure.js';

function options(argv: string[]): Options {
  const r = parseOptions(argv, {});
  if (r.kind !== 'ok') throw new Error(JSON.stringify(r));
  return r.options;
}
const sysError = (message: string, fields: Record<string, unknown>) => Object.assign(new Error(message), fields);

describe('startFailureMessage', () => {
  const o = options([
    '--data-dir',
    '/srv/ws/data',
    '--cert-dir',
    '/srv/ws/certs',
    '--tls-cert-file',
    '/etc/tls/tls.crt',
    '--tls-private-key-file',
    '/etc/tls/tls.key',
  ]);

  it('says which address and port listen(2) refused, and what to do', async () => {
    expect(await startFailureMessage(sysError('listen EADDRINUSE', { code: 'EADDRINUSE', syscall: 'listen', address: '::1', port: 8443 }), o)).toMatch(
      /^cannot listen on \[::1\]:8443: the address is already in use .*choose another port with --port \(--port 0 picks a free one\)$/,
    );
    expect(await startFailureMessage(sysError('listen EACCES', { code: 'EACCES', syscall: 'listen', address: '0.0.0.0', port: 443 }), o)).toBe(
      'cannot listen on 0.0.0.0:443: permission denied (a port below 1024 needs privileges); choose another port with --port',
    );
    expect(
      await startFailureMessage(sysError('listen EADDRNOTAVAIL', { code: 'EADDRNOTAVAIL', syscall: 'listen', address: '10.9.9.9', port: 8443 }), o),
    ).toMatch(/^cannot listen on 10\.9\.9\.9:8443: 10\.9\.9\.9 is not an address of this machine; choose another with --bind-address/);
  });

  it('names the flag of a file or directory that failed, and the reason', async () => {
    expect(await startFailureMessage(sysError('open', { code: 'EACCES', syscall: 'open', path: '/etc/tls/tls.key' }), o)).toBe(
      '--tls-private-key-file /etc/tls/tls.key: cannot open it: permission denied (EACCES)',
    );
    expect(await startFailureMessage(sysError('open', { code: 'EROFS', syscall: 'open', path: '/srv/ws/certs/ca.key' }), o)).toBe(
      '--cert-dir /srv/ws/certs: cannot open /srv/ws/certs/ca.key: the file system is read-only (EROFS)',
    );
    expect(await startFailureMessage(sysError('mkdir', { code: 'ENOSPC', syscall: 'mkdir', path: '/srv/ws/data' }), o)).toBe(
      '--data-dir /srv/ws/data: cannot mkdir it: no space left on the device (ENOSPC)',
    );
  });

  it("passes the operator's own errors through, and leaves any other error to its stack", async () => {
    expect(await startFailureMessage(new StartFailure('one line'), o)).toBe('one line');
    expect(await startFailureMessage(new DataDirInUse('/srv/ws/data', undefined, '/srv/ws/data/website-apiserver.lock'), o)).toContain('/srv/ws/data');
    expect(await startFailureMessage(new TypeError('x is undefined'), o)).toBeUndefined();
    expect(await startFailureMessage(sysError('open', { code: 'ENOENT', syscall: 'open', path: '/elsewhere/file' }), o)).toBeUndefined();
    expect(await startFailureMessage('not an error', o)).toBeUndefined();
  });
});
