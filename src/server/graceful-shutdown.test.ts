/**
 * @module server/graceful-shutdown.test
 * The refusals of a shutting-down server, through app.inject (no sockets): after the delay and the pre-shutdown
 * hooks a new request gets kube's `503 apiserver is shutting down` with `Retry-After: 1` (filters/waitgroup.go),
 * /readyz fails its `shutdown` check from SIGTERM on while /livez, /healthz and /metrics are served, kube-apiserver's
 * own User-Agent is exempt (with_retry_after.go), and a request begun before still gets its answer.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Authentication } from '../auth/authentication.js';
import { testKinds as kinds, ticket, tickets } from '../../test/kinds/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbStorage } from '../storage/lmdb-storage.js';
import { MemoryStorage } from '../storage/memory-storage.js';
import { createServer } from './server.js';

const authentication: Authentication = {
  authenticate: async () => ({ name: 'admin', groups: ['system:masters', 'system:authenticated'] }),
  trustedCAs: () => [],
  onTrustChange: () => {},
};
// A test-only kind: shutdown is the server's, whatever it serves.
const COLLECTION = tickets('default');
const tick = () => new Promise((r) => setTimeout(r, 20));

function newServer() {
  const storage = new MemoryStorage();
  const server = createServer({ storage, kinds, logger: pino({ level: 'silent' }), authentication, shutdown: { drainTimeoutMs: 20_000 } });
  return { server, storage };
}

describe('GracefulShutdown through the handler chain', () => {
  it('refuses new requests with the 503 of waitgroup.go once it stops accepting, answers the one begun, serves probes', async () => {
    const { server } = newServer();
    const { app } = server;
    const before = await app.inject({ method: 'GET', url: '/readyz?verbose' });
    expect(before.body).toContain('[+]shutdown ok');
    // A list at a resourceVersion the store has not reached waits (up to 3 s, then 504): it is in flight.
    const begun = app.inject({ method: 'GET', url: `${COLLECTION}?resourceVersion=5` });
    await tick();
    let hookRan = false;
    const done = server.shutdown(async () => {
      hookRan = true;
    });
    await tick();
    expect(hookRan).toBe(true);

    const refused = await app.inject({ method: 'POST', url: COLLECTION, payload: ticket('x') });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['x-content-type-options']).toBe('nosniff');
    expect(refused.json()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'apiserver is shutting down',
      reason: 'ServiceUnavailable',
      code: 503,
    });
    // A watch is refused the same way (WithWatchTerminationDuringShutdown).
    expect((await app.inject({ method: 'GET', url: `${COLLECTION}?watch=1` })).statusCode).toBe(503);

    const ready = await app.inject({ method: 'GET', url: '/readyz?verbose' });
    expect(ready.statusCode).toBe(500);
    expect(ready.body).toContain('[-]shutdown failed: reason withheld');
    expect((await app.inject({ method: 'GET', url: '/livez' })).body).toBe('ok');
    expect((await app.inject({ method: 'GET', url: '/healthz' })).body).toBe('ok');
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    const loopback = await app.inject({ method: 'GET', url: COLLECTION, headers: { 'user-agent': 'kube-apiserver/v1.37.2 (linux/amd64) kubernetes/abcdef' } });
    expect(loopback.statusCode).toBe(200);

    expect((await begun).statusCode).toBe(504);
    const report = await done;
    expect(report.refused503).toBe(2);
    expect(report.refused429).toBe(0);
    expect(report.cutOff).toBe(0);
    expect(report.inFlightAtStop).toBe(1);
  });

  it('with send-retry-after answers 429 text, not a Status, as soon as the delay is over', async () => {
    const storage = new MemoryStorage();
    const server = createServer({ storage, kinds, logger: pino({ level: 'silent' }), authentication, shutdown: { sendRetryAfter: true, delayMs: 200 } });
    const { app } = server;
    const begun = app.inject({ method: 'GET', url: `${COLLECTION}?resourceVersion=5` });
    await tick();
    const done = server.shutdown();
    await tick();
    // During the delay: served normally.
    expect((await app.inject({ method: 'GET', url: COLLECTION })).statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, 250));
    const refused = await app.inject({ method: 'GET', url: COLLECTION });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers.connection).toBe('close');
    expect(refused.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(refused.body).toBe('The apiserver is shutting down, please try again later.\n');
    expect((await begun).statusCode).toBe(504);
    expect((await done).refused429).toBe(1);
  });

  it('at the drain bound closes the storage to late writers before anything is dropped, and reports the request cut off', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ws-graceful-'));
    try {
      const storage = new LmdbStorage({ path: dir, compactionIntervalMs: 0 });
      const server = createServer({ storage, kinds, logger: pino({ level: 'silent' }), authentication, shutdown: { drainTimeoutMs: 200 } });
      const begun = server.app.inject({ method: 'GET', url: `${COLLECTION}?resourceVersion=5` });
      await tick();
      const t0 = performance.now();
      const report = await server.shutdown();
      expect(report.cutOff).toBe(1);
      // The bound, then at most the grace for answers of writes that committed as the storage closed.
      expect(performance.now() - t0).toBeLessThan(200 + 1000 + 500);
      await expect(
        storage.create({ resource: 'testing.example.com/flighttickets', namespace: 'default', name: 'late' }, ticket('late', 'default')),
      ).rejects.toThrow('storage is closed');
      await begun;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
