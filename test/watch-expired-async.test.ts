/**
 * A backend may report a watch from a compacted resourceVersion either by throwing StorageError('Expired') from
 * watch() (lmdb, memory) or later through the sink's onError (a remote engine such as etcd learns of the compaction
 * only when it answers; storage/interface). Clients must not see the difference: an in-process server (createServer,
 * listening on a real port, plain HTTP) over a Storage wrapper that can switch between the two forms answers the
 * same watches, over HTTP and over WebSocket, in both versions, with byte-identical answers: 200, one ERROR event
 * carrying the 410 Expired Status, the end of the stream. The controllers' change feed (store-source) re-lists on
 * both forms alike as well.
 */
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Authentication } from '../src/auth/authentication.js';
import { watchStoreKeys } from '../src/controllers/store-source.js';
import { website } from '../src/kinds/website/index.js';
import { createServer } from '../src/server/server.js';
import { isStorageError, StorageError } from '../src/storage/errors.js';
import type { KeyPrefix, WatchHandle, WatchSink } from '../src/storage/interface.js';
import { MemoryStorage } from '../src/storage/memory-storage.js';

/** ExpiresLater is the memory store; with `async` on, a watch it refuses as Expired is refused through onError on the next tick. */
class ExpiresLater extends MemoryStorage {
  async = false;
  /** How many watches were refused through onError. */
  reported = 0;
  override watch(prefix: KeyPrefix, fromRevision: number, sink: WatchSink): WatchHandle {
    if (!this.async) return super.watch(prefix, fromRevision, sink);
    try {
      return super.watch(prefix, fromRevision, sink);
    } catch (e) {
      if (!isStorageError(e, 'Expired')) throw e;
      let stopped = false;
      setImmediate(() => {
        if (stopped) return;
        this.reported++;
        sink.onError(new StorageError('Expired', e.message));
      });
      return { position: () => fromRevision, stop: () => (stopped = true) };
    }
  }
}

const authentication: Authentication = {
  authenticate: async () => ({ name: 'admin', groups: ['system:masters', 'system:authenticated'] }),
  trustedCAs: () => [],
  onTrustChange: () => {},
};
const storage = new ExpiresLater({ historyEvents: 3 });
const srv = createServer({ storage, kinds: [website], logger: pino({ level: 'silent' }), authentication, standalone: true });
let base = '';
const V1 = '/apis/extensions.example.com/v1';
const ALPHA = '/apis/extensions.example.com/v1alpha1';

beforeAll(async () => {
  await srv.app.listen({ port: 0, host: '127.0.0.1' });
  base = `127.0.0.1:${(srv.app.server.address() as AddressInfo).port}`;
  // Six writes with a history of three: resourceVersions 1 to 3 are compacted.
  for (let i = 0; i < 6; i++) {
    const r = await srv.app.inject({
      method: 'POST',
      url: `${V1}/namespaces/ns/websites`,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({
        apiVersion: 'extensions.example.com/v1',
        kind: 'Website',
        metadata: { name: `w${i}` },
        spec: { git: { repository: 'https://example.com/r.git' } },
      }),
    });
    expect(r.statusCode, r.body).toBe(201);
  }
  expect(storage.compactedRevision()).toBe(3);
});
afterAll(async () => {
  await srv.app.close();
  await storage.close();
});

/** httpWatch reads a whole watch response (the server ends it after the ERROR). */
async function httpWatch(path: string, accept?: string) {
  const res = await request(`http://${base}${path}`, { headersTimeout: 10_000, bodyTimeout: 10_000, ...(accept ? { headers: { accept } } : {}) });
  return { status: res.statusCode, contentType: res.headers['content-type'], body: await res.body.text() };
}

/** wsWatch reads every message of a WebSocket watch until the server closes it. */
function wsWatch(path: string): Promise<{ messages: string[]; code: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${base}${path}`, { origin: `http://${base}` });
    const messages: string[] = [];
    ws.on('message', (data) => messages.push(String(data)));
    ws.on('close', (code) => resolve({ messages, code }));
    ws.on('error', reject);
    setTimeout(() => reject(new Error(`no close from ${path}`)), 10_000).unref();
  });
}

/** both answers `read` with the storage throwing Expired, then with it reporting Expired through onError. */
async function both<T>(read: () => Promise<T>): Promise<{ thrown: T; reported: T }> {
  storage.async = false;
  const thrown = await read();
  storage.async = true;
  const before = storage.reported;
  try {
    const reported = await read();
    expect(storage.reported, 'the wrapper reported Expired through onError').toBe(before + 1);
    return { thrown, reported };
  } finally {
    storage.async = false;
  }
}

describe('a watch from a compacted resourceVersion, Expired thrown or reported through onError', () => {
  it.each([
    ['v1, one namespace', `${V1}/namespaces/ns/websites?watch=true&resourceVersion=1`, undefined],
    ['v1alpha1 (converted), all namespaces, bookmarks allowed', `${ALPHA}/websites?watch=true&resourceVersion=2&allowWatchBookmarks=true`, undefined],
    ['v1, a Table watch', `${V1}/namespaces/ns/websites?watch=true&resourceVersion=1&includeObject=None`, 'application/json;as=Table;v=v1;g=meta.k8s.io'],
  ])('answers the same over HTTP: 200, one ERROR 410 Expired, end (%s)', async (_name, path, accept) => {
    const { thrown, reported } = await both(() => httpWatch(path, accept));
    expect(reported).toEqual(thrown);
    expect(thrown.status).toBe(200);
    expect(thrown.contentType).toBe('application/json');
    const lines = thrown.body.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toEqual({
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: expect.stringContaining('too old resource version'),
        reason: 'Expired',
        code: 410,
      },
    });
  });

  it('answers the same over WebSocket: the ERROR message, then a normal close', async () => {
    const path = `${V1}/namespaces/ns/websites?watch=true&resourceVersion=1`;
    const { thrown, reported } = await both(() => wsWatch(path));
    expect(reported).toEqual(thrown);
    expect(thrown.code).toBe(1000);
    expect(thrown.messages).toHaveLength(1);
    expect(JSON.parse(thrown.messages[0] as string)).toMatchObject({ type: 'ERROR', object: { reason: 'Expired', code: 410 } });
    // The HTTP stream carries the same line.
    expect(thrown.messages[0]).toBe((await httpWatch(path)).body);
  });
});

describe("the controllers' change feed", () => {
  it('lists again on Expired, thrown by watch() or reported through onError', async () => {
    for (const form of ['thrown', 'reported'] as const) {
      // A storage whose watch is Expired the first time, in one form or the other, then works.
      const flaky = new (class extends MemoryStorage {
        refused = false;
        override watch(prefix: KeyPrefix, from: number, sink: WatchSink): WatchHandle {
          if (this.refused) return super.watch(prefix, from, sink);
          this.refused = true;
          const e = new StorageError('Expired', `too old resource version: ${from}`);
          if (form === 'thrown') throw e;
          setImmediate(() => sink.onError(e));
          return { position: () => from, stop: () => undefined };
        }
      })();
      await flaky.create({ resource: 'r/x', namespace: 'ns', name: 'a' }, { metadata: { name: 'a', namespace: 'ns' } });
      await flaky.create({ resource: 'r/x', namespace: 'ns', name: 'b' }, { metadata: { name: 'b', namespace: 'ns' } });
      const keys: string[] = [];
      const warnings: string[] = [];
      const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push((JSON.parse(line) as { msg: string }).msg) });
      const feed = watchStoreKeys(flaky, { resource: 'r/x' }, (k) => keys.push(k), logger);
      // Listed, refused, listed again.
      await expect.poll(() => keys, { timeout: 5_000 }).toEqual(['ns/a', 'ns/b', 'ns/a', 'ns/b']);
      expect(warnings, form).toEqual(['store feed ended; listing again']);
      // Live after the re-list: a change arrives.
      await flaky.create({ resource: 'r/x', namespace: 'ns', name: 'c' }, { metadata: { name: 'c', namespace: 'ns' } });
      await expect.poll(() => keys.at(-1), { timeout: 5_000 }).toBe('ns/c');
      expect(keys).toHaveLength(5);
      feed.stop();
      await flaky.close();
    }
  });
});
