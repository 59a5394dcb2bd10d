/**
 * HTTP/2 (ALPN h2) beside HTTP/1.1, against the real process: kube-apiserver's aggregator proxies to an aggregated
 * server over HTTP/2 when it offers h2, multiplexing its requests over few connections. Every request here is a
 * stream of a node:http2 session holding the admin client certificate, unless a test says otherwise.
 */
import { connect, constants, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { readFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { API, call, serversPerTest, useServer, website, type ServerProcess } from './helpers/server-process.js';
import type { Agent } from 'undici';

const COLLECTION = `${API}/namespaces/default/websites`;

const sessions: ClientHttp2Session[] = [];
afterEach(() => {
  for (const s of sessions.splice(0)) s.destroy();
});

/** open connects an HTTP/2 session to the server, with the admin client certificate unless told not to. */
async function open(srv: ServerProcess, withClientCert = true): Promise<ClientHttp2Session> {
  const ca = readFileSync(join(srv.certDir, 'ca.crt'), 'utf8');
  const creds = withClientCert ? { cert: readFileSync(join(srv.certDir, 'admin.crt'), 'utf8'), key: readFileSync(join(srv.certDir, 'admin.key'), 'utf8') } : {};
  const session = connect(srv.url, { ca, ...creds });
  sessions.push(session);
  session.on('error', () => undefined);
  await new Promise<void>((res, rej) => {
    session.once('connect', () => res());
    session.once('error', rej);
  });
  return session;
}

interface H2Response {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: any;
}

/** h2 sends one request as a stream of the session and reads the whole answer. */
function h2(session: ClientHttp2Session, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<H2Response> {
  return new Promise((res, rej) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const stream = session.request({
      ':method': method,
      ':path': path,
      ...(payload !== undefined && typeof body !== 'string' ? { 'content-type': 'application/json' } : {}),
      ...headers,
    });
    let status = 0;
    let got: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      got = h;
      status = Number(h[':status']);
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      res({ status, headers: got, text, body: parsed });
    });
    stream.on('error', rej);
    if (payload !== undefined) stream.end(payload);
    else stream.end();
  });
}

describe('HTTP/2', () => {
  let srv: ServerProcess;
  let agent: Agent;
  useServer((s, a) => {
    srv = s;
    agent = a;
  });

  it('is what ALPN negotiates when the client offers h2', async () => {
    const session = await open(srv);
    expect(session.alpnProtocol).toBe('h2');
    const r = await h2(session, 'GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.headers['connection']).toBeUndefined();
  });

  it('serves a create, a get and a list', async () => {
    const session = await open(srv);
    const created = await h2(session, 'POST', COLLECTION, website('h2-one'));
    expect(created.status, created.text).toBe(201);
    expect(created.body.metadata.name).toBe('h2-one');
    const got = await h2(session, 'GET', `${COLLECTION}/h2-one`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.uid).toBe(created.body.metadata.uid);
    const list = await h2(session, 'GET', COLLECTION);
    expect(list.status).toBe(200);
    expect(list.body.items.map((i: any) => i.metadata.name)).toContain('h2-one');
    const missing = await h2(session, 'GET', `${COLLECTION}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body.reason).toBe('NotFound');
    // A HEAD is answered like the GET, without a body.
    const head = await h2(session, 'HEAD', `${COLLECTION}/h2-one`);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('authenticates by the client certificate of the connection', async () => {
    const anonymous = await open(srv, false);
    expect(anonymous.alpnProtocol).toBe('h2');
    const r = await h2(anonymous, 'GET', COLLECTION);
    expect(r.status).toBe(401);
    expect(r.body.kind).toBe('Status');
    // Still healthy after the 401: the session serves the next stream.
    expect((await h2(anonymous, 'GET', '/livez')).status).toBe(200);
    const admin = await open(srv);
    const ok = await h2(admin, 'GET', COLLECTION);
    expect(ok.status).toBe(200);
  });

  it('multiplexes concurrent requests over one session', async () => {
    const session = await open(srv);
    const N = 40;
    const created = await Promise.all(Array.from({ length: N }, (_, i) => h2(session, 'POST', COLLECTION, website(`h2-many-${i}`))));
    expect(created.map((r) => r.status)).toEqual(Array(N).fill(201));
    const got = await Promise.all(Array.from({ length: N }, (_, i) => h2(session, 'GET', `${COLLECTION}/h2-many-${i}`)));
    expect(got.map((r) => r.body.metadata.name)).toEqual(Array.from({ length: N }, (_, i) => `h2-many-${i}`));
    expect(session.closed || session.destroyed).toBe(false);
  });

  it('streams a watch', async () => {
    const session = await open(srv);
    const stream = session.request({ ':method': 'GET', ':path': `${COLLECTION}?watch=1&fieldSelector=metadata.name%3Dh2-watched` });
    const lines: any[] = [];
    let buf = '';
    const arrived = (n: number) =>
      new Promise<void>((res) => {
        const check = () => {
          if (lines.length >= n) {
            stream.off('data', check);
            res();
          }
        };
        stream.on('data', check);
        check();
      });
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => {
      buf += c;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        lines.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
    });
    const headers = await new Promise<IncomingHttpHeaders>((res) => stream.once('response', res));
    expect(headers[':status']).toBe(200);
    expect(headers['content-type']).toBe('application/json');
    expect((await h2(session, 'POST', COLLECTION, website('h2-watched'))).status).toBe(201);
    await arrived(1);
    expect((await h2(session, 'DELETE', `${COLLECTION}/h2-watched`)).status).toBe(200);
    await arrived(2);
    expect(lines.map((l) => `${l.type} ${l.object.metadata.name}`)).toEqual(['ADDED h2-watched', 'DELETED h2-watched']);
    stream.close();
  });

  it('ends a watch whose client stops reading after its bounded queue fills, while its session keeps serving', async () => {
    // HTTP/2 flow control stands in for the socket's backpressure: a stream whose reader stopped takes no more
    // than its window, then its events queue in the server up to maxBufferedEvents, then the watch ends.
    const metrics = async () => (await call(agent, `${srv.url}/metrics`)).text;
    const counter = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    const before = await metrics();
    const session = await open(srv);
    const writer = await open(srv);
    const pad = 'x'.repeat(16_000);
    const objects = 16;
    const ns = `${API}/namespaces/h2-slow/websites`;
    for (let i = 0; i < objects; i++) expect((await h2(writer, 'POST', ns, website(`s${i}`, {}, { annotations: { pad } }))).status).toBe(201);
    // From the list's revision: a watch with initial events paces them to the reader and would not queue.
    const rv = (await h2(writer, 'GET', ns)).body.metadata.resourceVersion as string;
    const stream = session.request({ ':method': 'GET', ':path': `${ns}?watch=1&resourceVersion=${rv}` });
    await new Promise((res) => stream.once('response', res));
    stream.pause();
    let terminated = false;
    for (let round = 1; !terminated && round < 400; round++) {
      await Promise.all(
        Array.from({ length: objects }, async (_, i) => {
          const r = await h2(
            writer,
            'PATCH',
            `${ns}/s${i}`,
            { metadata: { labels: { round: String(round) } } },
            { 'content-type': 'application/merge-patch+json' },
          );
          expect(r.status).toBe(200);
        }),
      );
      if (round % 10 === 0)
        terminated = counter(await metrics(), 'apiserver_terminated_watchers_total') > counter(before, 'apiserver_terminated_watchers_total');
    }
    expect(terminated).toBe(true);
    // The same session still serves other streams: the slow stream did not hold the connection's window.
    expect((await h2(session, 'GET', '/livez')).status).toBe(200);
    // Once read, the stream ends cleanly with the ERROR 410 the server queued last.
    let text = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (text += c));
    const ended = new Promise((res) => stream.once('end', res));
    stream.resume();
    await ended;
    const last = JSON.parse(text.trim().split('\n').pop() ?? '{}');
    expect(last).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  }, 120_000);

  it('answers a body too large on its stream and keeps the session', async () => {
    const session = await open(srv);
    const big = JSON.stringify(website('h2-big', { pad: 'x'.repeat(4 * 1024 * 1024) }));
    const r = await h2(session, 'POST', COLLECTION, big, { 'content-type': 'application/json' }).catch((e: Error) => ({ status: -1, text: e.message }));
    expect(r.status, r.text).toBe(413);
    expect((await h2(session, 'GET', '/livez')).status).toBe(200);
  });

  it('leaves HTTP/1.1 to a client that offers only it', async () => {
    const ca = readFileSync(join(srv.certDir, 'ca.crt'), 'utf8');
    const sock = tlsConnect({ host: '127.0.0.1', port: srv.port, ca, servername: 'localhost', ALPNProtocols: ['http/1.1'], rejectUnauthorized: false });
    await new Promise<void>((res, rej) => {
      sock.once('secureConnect', () => res());
      sock.once('error', rej);
    });
    expect(sock.alpnProtocol).toBe('http/1.1');
    let text = '';
    sock.setEncoding('utf8');
    sock.on('data', (c: string) => (text += c));
    const closed = new Promise((res) => sock.once('close', res));
    sock.write('GET /livez HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    await closed;
    expect(text.startsWith('HTTP/1.1 200 ')).toBe(true);
    expect(text.toLowerCase()).toContain('connection: close');
    // undici (no ALPN h2 unless asked) gets HTTP/1.1 as before.
    const r = await call(agent, `${srv.url}/livez`);
    expect(r.status).toBe(200);
    expect(r.headers['connection']).toBe('keep-alive');
  });
});

describe('HTTP/2 turned off, and during a shutdown', () => {
  const start = serversPerTest();

  it('--enable-http2=false offers HTTP/1.1 only: a client asking for h2 or http/1.1 gets http/1.1', async () => {
    const { srv } = await start({ args: ['--enable-http2=false'] });
    const ca = readFileSync(join(srv.certDir, 'ca.crt'), 'utf8');
    const sock = tlsConnect({ host: '127.0.0.1', port: srv.port, ca, ALPNProtocols: ['h2', 'http/1.1'], rejectUnauthorized: false });
    await new Promise<void>((res, rej) => {
      sock.once('secureConnect', () => res());
      sock.once('error', rej);
    });
    expect(sock.alpnProtocol).toBe('http/1.1');
    sock.destroy();
  });

  it('ends an open watch cleanly and sends a GOAWAY, and the process exits 0', async () => {
    const { srv } = await start();
    const session = await open(srv);
    const goaway = new Promise<number>((res) => session.once('goaway', (code: number) => res(code)));
    const stream = session.request({ ':method': 'GET', ':path': `${COLLECTION}?watch=1` });
    let status = 0;
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.resume();
    await new Promise((res) => stream.once('response', res));
    // The watch ends with END_STREAM (a clean end), not RST_STREAM.
    const ended = new Promise<string>((res) => {
      stream.once('end', () => res('end'));
      stream.once('error', (e: Error) => res(`error ${e.message}`));
    });
    const exited = new Promise<number | null>((res) => srv.proc.once('exit', (code) => res(code)));
    srv.proc.kill('SIGTERM');
    expect(await ended).toBe('end');
    expect(status).toBe(200);
    expect(stream.rstCode === undefined || stream.rstCode === constants.NGHTTP2_NO_ERROR).toBe(true);
    expect(await goaway).toBe(constants.NGHTTP2_NO_ERROR);
    expect(await exited).toBe(0);
  });
});
