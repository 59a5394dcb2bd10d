/**
 * Watch over WebSocket against real server processes, as kube-apiserver serves it (k8s.io/apiserver
 * pkg/endpoints/handlers/watch.go: serveWatchHandler upgrades when wsstream.IsWebSocketRequest holds, HandleWS
 * sends each event as one message through golang.org/x/net/websocket). Every watch form is opened twice, over
 * HTTP and over WebSocket, from the same resourceVersion: the messages must be the HTTP stream's lines, byte for
 * byte and in the same order, each in a text frame. The handshake answers are x/net's (server.go newServerConn,
 * hybi.go, Handler's checkOrigin), as measured against kube-apiserver 1.37 serving the Website CRD: 403 without an
 * Origin, 400 for two subprotocols, any single subprotocol echoed and no base64 for `base64.binary.k8s.io`.
 * - `server` runs with `--watch-bookmark-interval 1s`, so periodic BOOKMARKs come quickly;
 * - `small` runs with `--watch-history-events 5`, so old resourceVersions answer 410 Expired; it is shut down last.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { request, type Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { adminAgent, API, call, cleanupTempDirs, startServer, website, type ServerProcess } from './helpers/server-process.js';
import { readLines } from './helpers/stream-lines.js';

const MERGE = { 'content-type': 'application/merge-patch+json' };
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
const WATCH_LIST = 'watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan';
const MAX_BUFFERED_EVENTS = 1000; // WatchRegistry default (endpoints/watch.ts)

let server: ServerProcess;
let small: ServerProcess;
let agent: Agent;
let sagent: Agent;
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  [server, small] = await Promise.all([startServer({ args: ['--watch-bookmark-interval', '1s'] }), startServer({ args: ['--watch-history-events', '5'] })]);
  agent = adminAgent(server.certDir);
  sagent = adminAgent(small.certDir);
});
afterAll(async () => {
  for (const f of cleanups.splice(0)) f();
  await agent?.close();
  await sagent?.close();
  await server?.stop();
  await small?.stop();
  cleanupTempDirs();
});

const coll = (ns: string, srv = server) => `${srv.url}${API}/namespaces/${ns}/websites`;
const wsUrl = (url: string) => url.replace(/^https:/, 'wss:');
const tlsOf = (srv: ServerProcess, withCert = true) => ({
  ca: readFileSync(join(srv.certDir, 'ca.crt')),
  ...(withCert ? { cert: readFileSync(join(srv.certDir, 'admin.crt')), key: readFileSync(join(srv.certDir, 'admin.key')) } : {}),
});

async function waitFor(what: string, f: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function currentRV(srv = server, dispatcher = agent): Promise<string> {
  const r = await call(dispatcher, `${srv.url}${API}/websites?fieldSelector=metadata.name%3Dno-such-object`);
  expect(r.status).toBe(200);
  return r.body.metadata.resourceVersion as string;
}
async function create(ns: string, name: string, srv = server, dispatcher = agent, metadata: Record<string, unknown> = {}) {
  const r = await call(dispatcher, coll(ns, srv), 'POST', website(name, {}, metadata));
  expect(r.status, r.text).toBe(201);
  return r.body;
}
async function patch(ns: string, name: string, body: unknown, srv = server, dispatcher = agent) {
  const r = await call(dispatcher, `${coll(ns, srv)}/${name}`, 'PATCH', body, MERGE);
  expect(r.status, r.text).toBe(200);
  return r.body;
}
async function remove(ns: string, name: string) {
  const r = await call(agent, `${coll(ns)}/${name}`, 'DELETE');
  expect(r.status, r.text).toBe(200);
}

/** Lines is a stream of watch lines (HTTP) or messages (WebSocket), kept as the exact text received. */
interface Lines {
  texts: string[];
  events(): any[];
  ended: boolean;
  until(n: number, what: string, keep?: (text: string) => boolean, ms?: number): Promise<string[]>;
}

function lines(): Lines & { push(t: string): void; end(): void } {
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const f of waiters.splice(0)) f();
  };
  const l = {
    texts: [] as string[],
    ended: false,
    events: () => l.texts.map((t) => JSON.parse(t)),
    push(t: string) {
      l.texts.push(t);
      wake();
    },
    end() {
      l.ended = true;
      wake();
    },
    async until(n: number, what: string, keep: (text: string) => boolean = () => true, ms = 10_000) {
      const deadline = Date.now() + ms;
      while (l.texts.filter(keep).length < n) {
        const seen = () => l.texts.map((t) => t.slice(0, 60)).join(' | ');
        if (l.ended) throw new Error(`stream ended before ${what}: ${seen()}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${seen()}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, 200);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
      return l.texts.filter(keep);
    },
  };
  return l;
}

/** openHttp opens the HTTP watch; its texts are the stream's lines, newline included. */
async function openHttp(url: string, accept?: string, dispatcher = agent): Promise<Lines & { close(): void }> {
  const res = await request(url, { dispatcher, headers: accept ? { accept } : {} });
  expect(res.statusCode).toBe(200);
  const l = lines();
  const close = () => res.body.destroy();
  cleanups.push(close);
  res.body.setEncoding('utf8');
  readLines(
    res.body as AsyncIterable<string>,
    (line) => l.push(line),
    () => l.end(),
  );
  return Object.assign(l, { close });
}

/** WsWatch is a WebSocket watch: its texts are the messages; a refused handshake gives status and body instead. */
interface WsWatch extends Lines {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  protocol: string;
  extensions: string;
  /** Every message arrived in a text frame. */
  allText: boolean;
  closed: Promise<{ code: number; reason: string }>;
  socket: WebSocket;
}

interface WsOptions {
  protocols?: string | string[];
  /** The Origin header; `null` sends none. Default: the server's URL, as fabric8 and browsers send one. */
  origin?: string | null;
  accept?: string;
  srv?: ServerProcess;
  withCert?: boolean;
  headers?: Record<string, string>;
}

async function openWs(url: string, o: WsOptions = {}): Promise<WsWatch> {
  const srv = o.srv ?? server;
  const origin = o.origin === undefined ? srv.url : o.origin;
  const socket = new WebSocket(wsUrl(url), o.protocols ?? [], {
    ...tlsOf(srv, o.withCert ?? true),
    ...(origin !== null ? { origin } : {}),
    headers: { ...(o.accept ? { accept: o.accept } : {}), ...o.headers },
  });
  cleanups.push(() => socket.terminate());
  const l = lines();
  const w = Object.assign(l, { status: 0, headers: {}, body: '', protocol: '', extensions: '', allText: true, socket }) as unknown as WsWatch;
  w.closed = new Promise((resolve) => {
    socket.on('close', (code, reason) => {
      l.end();
      resolve({ code, reason: reason.toString() });
    });
  });
  socket.on('message', (data, isBinary) => {
    if (isBinary) w.allText = false;
    l.push(data.toString());
  });
  await new Promise<void>((resolve, reject) => {
    socket.on('upgrade', (res) => {
      w.status = res.statusCode ?? 0;
      w.headers = res.headers;
    });
    socket.on('open', () => {
      w.protocol = socket.protocol;
      w.extensions = socket.extensions;
      resolve();
    });
    socket.on('unexpected-response', (_req, res) => {
      w.status = res.statusCode ?? 0;
      w.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (c: string) => (w.body += c));
      res.on('end', () => {
        l.end();
        resolve();
      });
      res.on('error', () => resolve());
    });
    socket.on('error', (e) => {
      if (!w.status) reject(e);
    });
  });
  return w;
}

/**
 * compare opens `path` as an HTTP watch and as a WebSocket watch, runs `act`, and waits for `n` kept lines on each:
 * the WebSocket messages must be exactly the HTTP lines, in order, all in text frames. Returns the events.
 */
async function compare(
  url: string,
  o: { accept?: string; n: number; act?: () => Promise<void>; keep?: (text: string) => boolean; protocols?: string; same?: (text: string) => string },
) {
  const http = await openHttp(url, o.accept);
  const ws = await openWs(url, { accept: o.accept, protocols: o.protocols });
  try {
    expect(ws.status).toBe(101);
    await o.act?.();
    const fromHttp = await http.until(o.n, `${o.n} HTTP lines`, o.keep);
    const fromWs = await ws.until(o.n, `${o.n} WebSocket messages`, o.keep);
    const same = o.same ?? ((t: string) => t);
    expect(fromWs.map(same)).toEqual(fromHttp.map(same));
    expect(ws.allText).toBe(true);
    return { events: fromWs.map((t) => JSON.parse(t)), ws, http };
  } finally {
    http.close();
    ws.socket.close();
  }
}

const summary = (e: any) => `${e.type} ${e.object?.metadata?.name ?? e.object?.rows?.[0]?.cells?.[0] ?? ''}`.trim();
const isPeriodicBookmark = (t: string) => t.startsWith('{"type":"BOOKMARK"') && !t.includes('k8s.io/initial-events-end');

describe("every watch form gives the HTTP stream's events over WebSocket (handlers/watch.go HandleWS)", () => {
  it('a namespaced list watch from a resourceVersion: ADDED, MODIFIED, DELETED as the HTTP lines, in text frames', async () => {
    const rv = await currentRV();
    const { events, ws } = await compare(`${coll('ns-list')}?watch=true&resourceVersion=${rv}`, {
      n: 3,
      act: async () => {
        await create('ns-list', 'a');
        await patch('ns-list', 'a', { spec: { replicas: 2 } });
        await remove('ns-list', 'a');
      },
    });
    expect(events.map(summary)).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a']);
    expect(events[1].object.spec.replicas).toBe(2);
    // No subprotocol asked, none given; no extension negotiated (x/net has none).
    expect(ws.protocol).toBe('');
    expect(ws.extensions).toBe('');
    expect(ws.headers['sec-websocket-protocol']).toBeUndefined();
  });

  it('a watch of all namespaces with initial state (resourceVersion=0)', async () => {
    await create('all-a', 'x');
    await create('all-b', 'y');
    const before = (await call(agent, `${server.url}${API}/websites`)).body.items.length as number;
    const { events } = await compare(`${server.url}${API}/websites?watch=true&resourceVersion=0`, {
      n: before + 1,
      act: () => patch('all-b', 'y', { metadata: { labels: { seen: 'yes' } } }).then(() => undefined),
    });
    expect(events.slice(0, before).every((e) => e.type === 'ADDED')).toBe(true);
    expect(events.map(summary)).toEqual(expect.arrayContaining(['ADDED x', 'ADDED y', 'MODIFIED y']));
    expect(events.at(-1).object.metadata.namespace).toBe('all-b');
  });

  it('a named watch (fieldSelector metadata.name) sees only that object', async () => {
    await create('named', 'one');
    await create('named', 'other');
    const rv = await currentRV();
    const { events } = await compare(`${coll('named')}?watch=true&fieldSelector=metadata.name%3Done&resourceVersion=${rv}`, {
      n: 2,
      act: async () => {
        await patch('named', 'other', { spec: { replicas: 3 } });
        await patch('named', 'one', { spec: { replicas: 2 } });
        await remove('named', 'one');
      },
    });
    expect(events.map(summary)).toEqual(['MODIFIED one', 'DELETED one']);
  });

  it('Table (Accept as=Table): column definitions in the first event only, the same bytes as over HTTP', async () => {
    await create('table', 't1');
    const { events } = await compare(`${coll('table')}?watch=true&resourceVersion=0`, {
      accept: TABLE,
      n: 2,
      // A row's Age (the 7th cell) is worked out when each stream sends it: the two may be a second apart.
      same: (t) => t.replace(/("cells":\[(?:"(?:[^"\\]|\\.)*",){6})"[^"]*"/g, '$1"<age>"'),
      act: () => patch('table', 't1', { spec: { replicas: 4 } }).then(() => undefined),
    });
    expect(events.map((e) => [e.type, e.object.kind, e.object.rows[0].cells[0]])).toEqual([
      ['ADDED', 'Table', 't1'],
      ['MODIFIED', 'Table', 't1'],
    ]);
    expect(events[0].object.columnDefinitions.length).toBeGreaterThan(0);
    expect(events[1].object.columnDefinitions).toBeNull();
  });

  it('PartialObjectMetadata (metadata-only Accept)', async () => {
    await create('meta', 'm1');
    const { events } = await compare(`${coll('meta')}?watch=true&resourceVersion=0`, {
      accept: METADATA,
      n: 2,
      act: () => patch('meta', 'm1', { metadata: { labels: { a: 'b' } } }).then(() => undefined),
    });
    expect(events.map((e) => [e.type, e.object.kind, e.object.apiVersion, e.object.metadata.name])).toEqual([
      ['ADDED', 'PartialObjectMetadata', 'meta.k8s.io/v1', 'm1'],
      ['MODIFIED', 'PartialObjectMetadata', 'meta.k8s.io/v1', 'm1'],
    ]);
    expect(events[1].object.spec).toBeUndefined();
  });

  it('sendInitialEvents with resourceVersionMatch=NotOlderThan and bookmarks: initial ADDED, the initial-events-end BOOKMARK, then changes and periodic BOOKMARKs', async () => {
    await create('wl', 'w1');
    await create('wl', 'w2');
    const { events, ws } = await compare(`${coll('wl')}?${WATCH_LIST}`, {
      n: 4,
      keep: (t) => !isPeriodicBookmark(t),
      act: () => create('wl', 'w3').then(() => undefined),
    });
    expect(events.map(summary)).toEqual(['ADDED w1', 'ADDED w2', 'BOOKMARK', 'ADDED w3']);
    expect(events[2].object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
    // The server's 1 s BOOKMARK ticker reaches WebSocket watchers too.
    const ws2 = await openWs(`${coll('wl')}?watch=true&allowWatchBookmarks=true&resourceVersion=${await currentRV()}`);
    const periodic = await ws2.until(1, 'a periodic BOOKMARK', isPeriodicBookmark, 5000);
    expect(JSON.parse(periodic[0] as string)).toMatchObject({
      type: 'BOOKMARK',
      object: { kind: 'Website', metadata: { resourceVersion: expect.any(String) } },
    });
    ws2.socket.close();
    expect(ws.allText && ws2.allText).toBe(true);
  });

  it('resuming from a resourceVersion replays the later changes from history', async () => {
    await create('resume', 'r1');
    const from = (await patch('resume', 'r1', { spec: { replicas: 2 } })).metadata.resourceVersion as string;
    await patch('resume', 'r1', { spec: { replicas: 3 } });
    await create('resume', 'r2');
    const { events } = await compare(`${coll('resume')}?watch=true&resourceVersion=${from}`, { n: 2 });
    expect(events.map(summary)).toEqual(['MODIFIED r1', 'ADDED r2']);
    expect(events[0].object.spec.replicas).toBe(3);
  });

  it('a too-old resourceVersion: one ERROR 410 Expired message (the HTTP line), then close 1000', async () => {
    for (let i = 0; i < 8; i++) await create('old', `o${i}`, small, sagent);
    // History is trimmed in the background: wait until resourceVersion 1 is gone from it.
    await waitFor(
      'resourceVersion 1 to be compacted',
      async () => (await call(sagent, `${coll('old', small)}?resourceVersion=1&resourceVersionMatch=Exact`)).status === 410,
    );
    const url = `${coll('old', small)}?watch=true&resourceVersion=1`;
    const http = await openHttp(url, undefined, sagent);
    const ws = await openWs(url, { srv: small });
    await http.until(1, 'the HTTP ERROR');
    await ws.until(1, 'the WebSocket ERROR');
    expect(ws.texts).toEqual(http.texts);
    expect(ws.events()[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired' } });
    expect(await ws.closed).toEqual({ code: 1000, reason: '' });
  });

  it('timeoutSeconds ends the WebSocket with close 1000', async () => {
    const t0 = Date.now();
    const ws = await openWs(`${coll('timeout')}?watch=true&timeoutSeconds=1`);
    expect(await ws.closed).toEqual({ code: 1000, reason: '' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('subprotocols and the handshake (x/net/websocket, as kube-apiserver answers)', () => {
  it.each(['base64.binary.k8s.io', 'binary.k8s.io', 'v4.channel.k8s.io'])(
    '%s is echoed and the events stay plain JSON text frames (no base64)',
    async (protocol) => {
      const rv = await currentRV();
      const { events, ws } = await compare(`${coll('proto')}?watch=true&resourceVersion=${rv}`, {
        n: 1,
        protocols: protocol,
        act: () => create('proto', `p-${protocol.split('.')[0]}-${rv}`).then(() => undefined),
      });
      expect(ws.protocol).toBe(protocol);
      expect(ws.headers['sec-websocket-protocol']).toBe(protocol);
      expect(events[0].type).toBe('ADDED');
    },
  );

  it('two subprotocols: 400 with an empty body (AcceptHandshake takes exactly one)', async () => {
    const ws = await openWs(`${coll('proto')}?watch=true`, { protocols: ['base64.binary.k8s.io', 'binary.k8s.io'] });
    expect(ws.status).toBe(400);
    expect(ws.body).toBe('');
  });

  it.each([
    ['no Origin', null],
    ['Origin: null', 'null'],
    ['a relative Origin', 'example.com'],
  ])('%s: 403 with an empty body (websocket.Handler checkOrigin), after authentication and authorization passed', async (_n, origin) => {
    const ws = await openWs(`${coll('origin')}?watch=true`, { origin });
    expect(ws.status).toBe(403);
    expect(ws.body).toBe('');
  });

  it('raw x/net answers: an empty key is 400 "mismatch challenge/response", version 8 is 400 with Sec-WebSocket-Version: 13', async () => {
    const path = `${API}/namespaces/raw/websites?watch=true`;
    const noKey = await rawExchange(path, { 'Sec-WebSocket-Key': '' });
    expect(noKey.head).toBe('HTTP/1.1 400 Bad Request');
    expect(noKey.body).toBe('mismatch challenge/response');
    expect(noKey.closed).toBe(true);
    const v8 = await rawExchange(path, { 'Sec-WebSocket-Version': '8' });
    expect(v8.head).toBe('HTTP/1.1 400 Bad Request\r\nSec-WebSocket-Version: 13');
    expect(v8.body).toBe('missing or bad WebSocket Version');
  });

  it('without a client certificate: the 401 Status of any request, not an upgrade', async () => {
    const ws = await openWs(`${coll('authn')}?watch=true`, { withCert: false });
    expect(ws.status).toBe(401);
    expect(JSON.parse(ws.body)).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
  });

  it.each([
    ['an unparsable resourceVersion', 'watch=true&resourceVersion=abc'],
    ['resourceVersionMatch without resourceVersion', 'watch=true&resourceVersionMatch=NotOlderThan'],
    ['a bad label selector', 'watch=true&labelSelector=a%3D%3D%3Db'],
  ])("%s is answered before the upgrade with the HTTP watch's Status", async (_n, query) => {
    const http = await call(agent, `${coll('params')}?${query}`);
    expect(http.status).toBeGreaterThanOrEqual(400);
    expect(http.body).toMatchObject({ kind: 'Status', code: http.status });
    const ws = await openWs(`${coll('params')}?${query}`);
    expect(ws.status).toBe(http.status);
    expect(JSON.parse(ws.body)).toEqual(http.body);
  });

  it('pings are answered, client messages are ignored, and a client close unregisters the watcher', async () => {
    const registered = async () => Number(/^apiserver_registered_watchers (\S+)$/m.exec((await call(agent, `${server.url}/metrics`)).text)?.[1]);
    const idle = await registered();
    const rv = await currentRV();
    const ws = await openWs(`${coll('ping')}?watch=true&resourceVersion=${rv}`);
    const pong = new Promise<string>((r) => ws.socket.once('pong', (d) => r(d.toString())));
    ws.socket.ping('hi');
    expect(await pong).toBe('hi');
    ws.socket.send('please ignore me');
    await create('ping', 'p1');
    expect(JSON.parse((await ws.until(1, 'the ADDED'))[0] as string).type).toBe('ADDED');
    await waitFor('the watcher to be registered', async () => (await registered()) === idle + 1);
    ws.socket.close(1000);
    expect((await ws.closed).code).toBe(1000);
    await waitFor('the watcher to be unregistered', async () => (await registered()) === idle);
  });
});

/** rawExchange sends one GET with WebSocket headers (overridable) on a raw TLS connection and reads until close. */
async function rawExchange(path: string, override: Record<string, string>, method = 'GET', body = '') {
  const url = new URL(server.url);
  const socket = connect({ host: url.hostname, port: Number(url.port), ...tlsOf(server), ALPNProtocols: ['http/1.1'] });
  cleanups.push(() => socket.destroy());
  await new Promise<void>((r, j) => {
    socket.once('secureConnect', () => r());
    socket.once('error', j);
  });
  const chunks: Buffer[] = [];
  let closed = false;
  socket.on('data', (b: Buffer) => chunks.push(b));
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  const headers: Record<string, string> = {
    Host: url.host,
    Connection: 'Upgrade',
    Upgrade: 'websocket',
    'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    Origin: server.url,
    ...(body ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } : {}),
    ...override,
  };
  socket.write(
    `${method} ${path} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n${body}`,
  );
  await waitFor('the server to close the connection', () => closed, 5000);
  const all = Buffer.concat(chunks).toString('utf8');
  const end = all.indexOf('\r\n\r\n');
  return { head: all.slice(0, end), body: all.slice(end + 4), closed };
}

describe('requests other than a watch, with an Upgrade header, get their normal answer (kube ignores it outside watches)', () => {
  it('a list, a get, a create with a body, an unknown path and a health path answer as without the header, then close', async () => {
    await create('plain', 'g1');
    const list = await rawExchange(`${API}/namespaces/plain/websites`, {});
    expect(list.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(list.head).toMatch(/\r\nconnection: close/i);
    expect(JSON.parse(list.body)).toMatchObject({ kind: 'WebsiteList', items: [{ metadata: { name: 'g1' } }] });
    const get = await rawExchange(`${API}/namespaces/plain/websites/g1`, {});
    expect(get.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(JSON.parse(get.body)).toMatchObject({ kind: 'Website', metadata: { name: 'g1' } });
    // The body Node left on the socket reaches the handler.
    const created = await rawExchange(`${API}/namespaces/plain/websites`, {}, 'POST', JSON.stringify(website('g2')));
    expect(created.head).toMatch(/^HTTP\/1\.1 201 Created\r\n/);
    expect(JSON.parse(created.body)).toMatchObject({ kind: 'Website', metadata: { name: 'g2', namespace: 'plain' } });
    expect((await call(agent, `${coll('plain')}/g2`)).status).toBe(200);
    const missing = await rawExchange('/apis/no.such.group/v1/things', {});
    expect(missing.head).toMatch(/^HTTP\/1\.1 404 Not Found\r\n/);
    expect(JSON.parse(missing.body)).toMatchObject({ kind: 'Status', code: 404 });
    const ready = await rawExchange('/readyz', {});
    expect(ready.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it('a watch asking for another protocol (Upgrade: h2c) gets the chunked HTTP stream', async () => {
    await create('h2c', 'h1');
    const r = await rawExchange(`${API}/namespaces/h2c/websites?watch=true&timeoutSeconds=1`, { Upgrade: 'h2c' });
    expect(r.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(r.head).toMatch(/\r\ntransfer-encoding: chunked/i);
    expect(r.body).toContain('{"type":"ADDED"');
    expect(r.body.endsWith('0\r\n\r\n')).toBe(true);
  });
});

describe('backpressure and shutdown', () => {
  it('a WebSocket client that stops reading is cut off with ERROR 410 after maxBufferedEvents, having lost nothing before it', async () => {
    const metrics = async () => (await call(agent, `${server.url}/metrics`)).text;
    const counter = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    const before = await metrics();
    const pad = 'x'.repeat(16_000);
    const objects = 16;
    for (let i = 0; i < objects; i++) await create('slow', `s${i}`, server, agent, { annotations: { pad } });
    const rv = await currentRV();
    const ws = await openWs(`${coll('slow')}?watch=true&resourceVersion=${rv}`);
    ws.socket.pause();
    // Write until the server gives up on the paused client (the kernel buffers hold a few hundred events first).
    const written: string[] = [];
    let terminated = false;
    for (let round = 1; !terminated && round < 400; round++) {
      await Promise.all(
        Array.from({ length: objects }, async (_, i) => {
          const o = await patch('slow', `s${i}`, { metadata: { labels: { round: String(round) } } });
          written.push(o.metadata.resourceVersion as string);
        }),
      );
      if (round % 10 === 0)
        terminated = counter(await metrics(), 'apiserver_terminated_watchers_total') > counter(before, 'apiserver_terminated_watchers_total');
    }
    expect(terminated).toBe(true);
    const after = await metrics();
    expect(counter(after, 'apiserver_watch_events_dropped_total') - counter(before, 'apiserver_watch_events_dropped_total')).toBe(MAX_BUFFERED_EVENTS + 1);
    ws.socket.resume();
    expect(await ws.closed).toEqual({ code: 1000, reason: '' });
    const events = ws.events();
    const last = events.pop();
    expect(last).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    // What came before the ERROR is a gap-free prefix of the changes, in order.
    const got = events.map((e) => e.object.metadata.resourceVersion as string);
    const order = [...written].sort((a, b) => Number(a) - Number(b));
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual(order.slice(0, got.length));
  }, 120_000);

  it('shutdown closes WebSocket watches with close 1000 and the server exits promptly', async () => {
    const ws = await openWs(`${coll('bye', small)}?watch=true`, { srv: small });
    const quiet = await openWs(`${coll('bye', small)}?watch=true`, { srv: small });
    // A client that does not answer the close frame does not hold the shutdown for long either.
    quiet.socket.pause();
    const t0 = Date.now();
    const code = await small.stop();
    expect(code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(8000);
    expect(await ws.closed).toEqual({ code: 1000, reason: '' });
  });
});
