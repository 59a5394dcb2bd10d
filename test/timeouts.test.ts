/**
 * kube-apiserver's time limits on a real server started with short ones (--request-timeout 2s, --read-header-timeout
 * 1500ms, --keep-alive-timeout 3s), over raw TLS where a client must misbehave: a body that trickles in is cut with
 * the 504 of pkg/server/filters/timeout.go, `?timeout=` shortens it (filters/request_deadline.go), headers that
 * trickle in and silent connections are closed (secure_serving.go ReadHeaderTimeout), idle keep-alive connections
 * are closed after their limit but reused before it, and watches, HTTP and WebSocket, outlive every limit.
 */
import { connect as tcpConnect } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { adminAgent, API, call, cleanupTempDirs, startServer, website, type ServerProcess } from './helpers/server-process.js';
import { httpRequest, parseResponse, rawRequest } from './helpers/raw-tls.js';

const REQUEST_TIMEOUT_MS = 2000;
const READ_HEADER_TIMEOUT_MS = 1500;
const KEEP_ALIVE_TIMEOUT_MS = 3000;
// Generous: the machine may be loaded; Node checks its connection timers every fraction of the shortest limit.
const SLACK_MS = 2500;

let server: ServerProcess;
let agent: Agent;
const COLL = `${API}/namespaces/default/websites`;
const TIMED_OUT = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Timeout: request did not complete within the allotted timeout',
  reason: 'Timeout',
  details: {},
  code: 504,
};

beforeAll(async () => {
  server = await startServer({
    args: [
      '--request-timeout',
      `${REQUEST_TIMEOUT_MS}ms`,
      '--read-header-timeout',
      `${READ_HEADER_TIMEOUT_MS}ms`,
      '--keep-alive-timeout',
      `${KEEP_ALIVE_TIMEOUT_MS}ms`,
    ],
  });
  agent = adminAgent(server.certDir);
});
afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

/** trickle writes `head`, then one byte every `everyMs` until the socket closes. */
const trickle = (head: string, everyMs: number) => (s: TLSSocket) => {
  s.write(head);
  const t = setInterval(() => (s.destroyed ? clearInterval(t) : s.write(' ')), everyMs);
  s.once('close', () => clearInterval(t));
};

async function stillServing(): Promise<void> {
  const r = await call(agent, `${server.url}${COLL}`);
  expect(r.status, r.text).toBe(200);
}

describe('--request-timeout: every request but a watch', () => {
  it('a body that trickles in is answered 504 Timeout at the deadline, the connection closed, nothing stored', async () => {
    const head = `POST ${COLL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;
    const r = await rawRequest(server, trickle(head, 100), { waitMs: REQUEST_TIMEOUT_MS + 10_000 });
    expect(r.status).toBe(504);
    expect(r.json).toEqual(TIMED_OUT);
    expect(r.headers['connection']?.[0]).toBe('close');
    expect(r.ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(r.ms).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
    // The server closed the connection (the client would have trickled on forever).
    expect(r.ended).not.toBe('timeout');
    await stillServing();
  });

  it('?timeout= shortens the deadline, never lengthens it', async () => {
    const head = (q: string) => `PUT ${COLL}/x?${q} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const short = await rawRequest(server, trickle(head('timeout=500ms'), 100), { waitMs: 10_000, firstResponse: true });
    expect(short.json).toEqual(TIMED_OUT);
    expect(short.ms).toBeLessThan(REQUEST_TIMEOUT_MS);
    const long = await rawRequest(server, trickle(head('timeout=10m'), 100), { waitMs: 10_000, firstResponse: true });
    expect(long.json).toEqual(TIMED_OUT);
    expect(long.ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
  });

  it('a 504 the client waited for is logged as one info `request` line with its code, never as an error with a stack', async () => {
    const from = server.logs().length;
    // ?timeout= runs out while the body trickles in; the request timeout runs out while a list waits (3 s) for a
    // resourceVersion the store does not reach, and the list handler ends in its own 504 after that.
    const put = `${COLL}/logged?timeout=300ms`;
    const timedOut = await rawRequest(
      server,
      trickle(`PUT ${put} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`, 100),
      { waitMs: 10_000, firstResponse: true },
    );
    expect(timedOut.json).toEqual(TIMED_OUT);
    const list = `${COLL}?resourceVersion=999999999&resourceVersionMatch=NotOlderThan`;
    const waited = await call(agent, `${server.url}${list}`);
    expect(waited.body).toEqual(TIMED_OUT);
    await new Promise((r) => setTimeout(r, 3000 - REQUEST_TIMEOUT_MS + 500));
    type Line = { level: number; msg: string; url?: string; code?: number; err?: unknown };
    const lines = (): Line[] =>
      server
        .logs()
        .slice(from)
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);
    for (const url of [put, list]) {
      expect(lines().filter((l) => l.url === url)).toEqual([expect.objectContaining({ level: 30, msg: 'request', code: 504 })]);
    }
    expect(lines().filter((l) => l.level >= 40 || l.err !== undefined)).toEqual([]);
    expect(server.logs().slice(from)).not.toContain('stack');
  });

  it.each([
    ['abc', 'time: invalid duration "abc"'],
    ['5', 'time: missing unit in duration "5"'],
    ['5y', 'time: unknown unit "y" in duration "5y"'],
  ])("?timeout=%s is a 400 before anything else, in kube-apiserver's words", async (value, why) => {
    const r = await call(agent, `${server.url}${COLL}?timeout=${value}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400, message: `invalid timeout specified in the request URL - ${why}` });
    // Before authentication, as WithRequestDeadline runs before WithAuthentication.
    const anonymous = await rawRequest(server, httpRequest('GET', `${COLL}?timeout=${value}`), { clientCert: false, firstResponse: true });
    expect(anonymous.status).toBe(400);
  });

  it('an HTTP watch outlives the request timeout and gets what happens after it', async () => {
    const res = await request(`${server.url}${COLL}?watch=1&timeoutSeconds=5`, { dispatcher: agent });
    expect(res.statusCode).toBe(200);
    const started = Date.now();
    let text = '';
    const reading = (async () => {
      for await (const chunk of res.body) text += chunk.toString();
    })();
    await new Promise((r) => setTimeout(r, REQUEST_TIMEOUT_MS + 1000));
    const created = await call(agent, `${server.url}${COLL}`, 'POST', website('after-deadline'));
    expect(created.status, created.text).toBe(201);
    await reading;
    // Ended by its own timeoutSeconds, cleanly (the stream's end, not a reset), with the late event in it.
    expect(Date.now() - started).toBeGreaterThanOrEqual(4500);
    expect(text).toContain('"name":"after-deadline"');
  });

  it('a WebSocket watch outlives every limit too', async () => {
    const ws = new WebSocket(`wss://127.0.0.1:${server.port}${COLL}?watch=1&timeoutSeconds=8`, {
      ca: readFileSync(join(server.certDir, 'ca.crt')),
      cert: readFileSync(join(server.certDir, 'admin.crt')),
      key: readFileSync(join(server.certDir, 'admin.key')),
      origin: 'https://localhost',
    });
    const messages: string[] = [];
    ws.on('message', (m) => messages.push(m.toString()));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    let closed = false;
    ws.once('close', () => (closed = true));
    await new Promise((r) => setTimeout(r, Math.max(REQUEST_TIMEOUT_MS, READ_HEADER_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS) + 1000));
    const created = await call(agent, `${server.url}${COLL}`, 'POST', website('after-limits'));
    expect(created.status, created.text).toBe(201);
    const deadline = Date.now() + 5000;
    while (!messages.some((m) => m.includes('"name":"after-limits"')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(false);
    expect(messages.some((m) => m.includes('"name":"after-limits"'))).toBe(true);
    ws.close();
  });
});

describe('--read-header-timeout: slowloris on headers', () => {
  it('headers that trickle in: the connection gets a Status and is closed', async () => {
    const r = await rawRequest(server, trickle(`GET ${COLL} HTTP/1.1\r\nHost: x\r\nX-Slow: a`, 100), { waitMs: READ_HEADER_TIMEOUT_MS + 10_000 });
    expect(r.status).toBe(408);
    expect(r.json).toMatchObject({ kind: 'Status', status: 'Failure', code: 408 });
    expect(r.ended).not.toBe('timeout');
    expect(r.ms).toBeGreaterThanOrEqual(READ_HEADER_TIMEOUT_MS - 50);
    expect(r.ms).toBeLessThan(READ_HEADER_TIMEOUT_MS + SLACK_MS);
    await stillServing();
  });

  it('a TLS connection that sends nothing is closed', async () => {
    const r = await rawRequest(server, () => {}, { waitMs: READ_HEADER_TIMEOUT_MS + 10_000 });
    expect(r.ended).not.toBe('timeout');
    expect(r.ms).toBeLessThan(READ_HEADER_TIMEOUT_MS + SLACK_MS);
  });

  it('a TCP connection that never starts its TLS handshake is closed', async () => {
    const started = Date.now();
    const ms = await new Promise<number>((resolve) => {
      const s = tcpConnect(server.port, '127.0.0.1');
      const t = setTimeout(() => {
        s.destroy();
        resolve(Infinity);
      }, READ_HEADER_TIMEOUT_MS + 10_000);
      s.on('error', () => {});
      s.on('close', () => {
        clearTimeout(t);
        resolve(Date.now() - started);
      });
    });
    expect(ms).toBeLessThan(READ_HEADER_TIMEOUT_MS + SLACK_MS);
  });
});

describe('--keep-alive-timeout: idle connections', () => {
  it('a connection is reused for requests within the limit, and closed once idle past it', async () => {
    const get = `GET ${COLL} HTTP/1.1\r\nHost: x\r\n\r\n`;
    const result = await rawRequest(
      server,
      (s) => {
        s.write(get);
        // A second request on the same connection, well within the idle limit.
        setTimeout(() => s.write(get), KEEP_ALIVE_TIMEOUT_MS / 3);
      },
      { waitMs: KEEP_ALIVE_TIMEOUT_MS + 15_000 },
    );
    const first = parseResponse(result.raw);
    expect(first?.status).toBe(200);
    const second = parseResponse(result.raw.subarray(first?.length ?? 0));
    expect(second?.status).toBe(200);
    expect(second?.headers['keep-alive']?.[0]).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
    // Closed by the server after the idle limit (measured from the second answer).
    expect(result.ended).not.toBe('timeout');
    expect(result.ms).toBeLessThan(KEEP_ALIVE_TIMEOUT_MS / 3 + KEEP_ALIVE_TIMEOUT_MS + SLACK_MS);
  });

  it('a keep-alive client sends request after request on one connection', async () => {
    const one = new Agent({
      connections: 1,
      connect: {
        ca: readFileSync(join(server.certDir, 'ca.crt'), 'utf8'),
        cert: readFileSync(join(server.certDir, 'admin.crt'), 'utf8'),
        key: readFileSync(join(server.certDir, 'admin.key'), 'utf8'),
      },
    });
    const sockets = new Set<unknown>();
    one.on('connect', (_origin, targets) => sockets.add(targets));
    try {
      for (let i = 0; i < 20; i++) {
        const r = await call(one, `${server.url}${COLL}${i % 2 ? '' : '/nothing'}`);
        expect(r.status).toBe(i % 2 ? 200 : 404);
      }
      expect(sockets.size).toBe(1);
    } finally {
      await one.close();
    }
  });
});
