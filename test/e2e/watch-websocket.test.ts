/**
 * Watch over WebSocket through kube-apiserver's aggregator (it proxies the upgrade to us: UpgradeAwareHandler) and
 * straight to our port in delegated mode, as fabric8 and browser dashboards watch (k8s.io/apiserver
 * pkg/endpoints/handlers/watch.go HandleWS: one event per text message, the HTTP stream's lines).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { apiClient } from './helpers-kubectl.js';
import { e2e } from './harness/state.js';
import { readLines } from '../helpers/stream-lines.js';

const env = e2e();
const api = apiClient(env.server, env.caFile, env.tokens.admin);
const ns = `ws-watch-${randomBytes(3).toString('hex')}`;
const path = `/apis/extensions.example.com/v1alpha1/namespaces/${ns}/websites`;
const kubeCA = readFileSync(env.caFile, 'utf8');
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const website = (name: string) => ({
  apiVersion: 'extensions.example.com/v1alpha1',
  kind: 'Website',
  metadata: { name },
  spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git' },
});
const cleanups: (() => void)[] = [];

beforeAll(async () => {
  const r = await api('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
});
afterAll(async () => {
  for (const f of cleanups.splice(0)) f();
  await api('DELETE', `/api/v1/namespaces/${ns}`);
  await api.close();
});

interface Opened {
  status: number;
  body: string;
  protocol: string;
  messages: { text: string; binary: boolean }[];
  closed: Promise<number>;
  socket: WebSocket;
  until(n: number, what: string, ms?: number): Promise<void>;
}

/** openWs opens a WebSocket to `url` and resolves once it is open or refused. */
async function openWs(
  url: string,
  o: { headers?: Record<string, string>; protocols?: string[]; ca: string; servername?: string; origin?: string },
): Promise<Opened> {
  const socket = new WebSocket(url.replace(/^https:/, 'wss:'), o.protocols ?? [], {
    ca: o.ca,
    ...(o.servername ? { servername: o.servername } : {}),
    origin: o.origin ?? env.server,
    headers: o.headers ?? {},
  });
  cleanups.push(() => socket.terminate());
  const w: Opened = {
    status: 0,
    body: '',
    protocol: '',
    messages: [],
    socket,
    closed: new Promise((r) => socket.on('close', (code) => r(code))),
    async until(n, what, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (w.messages.length < n) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${w.messages.map((m) => m.text.slice(0, 50)).join(' | ')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
  socket.on('message', (data, binary) => w.messages.push({ text: data.toString(), binary }));
  await new Promise<void>((resolve, reject) => {
    socket.on('open', () => {
      w.status = 101;
      w.protocol = socket.protocol;
      resolve();
    });
    socket.on('unexpected-response', (_req, res) => {
      w.status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (c: string) => (w.body += c));
      res.on('end', () => resolve());
    });
    socket.on('error', (e) => {
      if (!w.status) reject(e);
    });
  });
  return w;
}

/** openHttp reads an HTTP watch through kube-apiserver line by line. */
async function openHttp(url: string) {
  const agent = new Agent({ connect: { ca: kubeCA } });
  const res = await request(url, { dispatcher: agent, headers: bearer(env.tokens.admin) });
  expect(res.statusCode).toBe(200);
  const lines: string[] = [];
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    res.body.destroy();
    void agent.destroy();
  };
  cleanups.push(close);
  res.body.setEncoding('utf8');
  readLines(res.body as AsyncIterable<string>, (line) => lines.push(line));
  return { lines, close };
}

async function listRV(): Promise<string> {
  const r = await api('GET', path);
  expect(r.status).toBe(200);
  return r.body.metadata.resourceVersion as string;
}

const summary = (text: string) => {
  const e = JSON.parse(text);
  return `${e.type} ${e.object.metadata.name}`;
};

describe('watch over WebSocket through kube-apiserver (aggregation)', () => {
  it('sees ADDED, MODIFIED and DELETED for the objects it changes, in text frames equal to the HTTP watch lines', async () => {
    const url = `${env.server}${path}?watch=true&resourceVersion=${await listRV()}`;
    const http = await openHttp(url);
    const ws = await openWs(url, { headers: bearer(env.tokens.admin), ca: kubeCA });
    expect(ws.status).toBe(101);
    expect((await api('POST', path, website('one'))).status).toBe(201);
    expect((await api('PATCH', `${path}/one`, { spec: { replicas: 2 } }, 'application/merge-patch+json')).status).toBe(200);
    expect((await api('DELETE', `${path}/one`)).status).toBe(200);
    await ws.until(3, 'three events');
    expect(ws.messages.map((m) => summary(m.text))).toEqual(['ADDED one', 'MODIFIED one', 'DELETED one']);
    expect(ws.messages.every((m) => !m.binary)).toBe(true);
    expect(JSON.parse(ws.messages[1]!.text).object.spec.replicas).toBe(2);
    const deadline = Date.now() + 10_000;
    while (http.lines.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(ws.messages.map((m) => m.text)).toEqual(http.lines);
    ws.socket.close();
    http.close();
  });

  it('a browser-style token in the subprotocol: kube-apiserver authenticates and strips it, we echo base64.binary.k8s.io and send plain JSON', async () => {
    const token = Buffer.from(env.tokens.admin).toString('base64url');
    const rv = await listRV();
    const ws = await openWs(`${env.server}${path}?watch=true&resourceVersion=${rv}`, {
      ca: kubeCA,
      protocols: [`base64url.bearer.authorization.k8s.io.${token}`, 'base64.binary.k8s.io'],
    });
    expect(ws.status).toBe(101);
    expect(ws.protocol).toBe('base64.binary.k8s.io');
    expect((await api('POST', path, website('two'))).status).toBe(201);
    await ws.until(1, 'the ADDED event');
    expect(summary(ws.messages[0]!.text)).toBe('ADDED two');
    ws.socket.close();
  });

  it("timeoutSeconds closes with 1000, and a missing Origin gets our (x/net's) 403 through the proxy", async () => {
    const ws = await openWs(`${env.server}${path}?watch=true&timeoutSeconds=1`, { headers: bearer(env.tokens.admin), ca: kubeCA });
    expect(ws.status).toBe(101);
    expect(await ws.closed).toBe(1000);
    const socket = new WebSocket(`${env.server.replace(/^https:/, 'wss:')}${path}?watch=true`, { ca: kubeCA, headers: bearer(env.tokens.admin) });
    cleanups.push(() => socket.terminate());
    const status = await new Promise<number>((resolve, reject) => {
      socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      socket.on('open', () => resolve(101));
      socket.on('error', reject);
    });
    expect(status).toBe(403);
  });
});

describe('watch over WebSocket straight to our port (delegated authentication and authorization)', () => {
  const ours = { ca: readFileSync(env.website.servingCAFile, 'utf8'), servername: 'website-apiserver.website-system.svc' };

  it('a token kube-apiserver knows is reviewed and authorized as for an HTTP watch: admin upgrades, nobody gets 403', async () => {
    const url = `${env.website.url}${path}?watch=true&resourceVersion=${await listRV()}`;
    const admin = await openWs(url, { ...ours, headers: bearer(env.tokens.admin) });
    expect(admin.status).toBe(101);
    expect((await api('POST', path, website('three'))).status).toBe(201);
    await admin.until(1, 'the ADDED event');
    expect(summary(admin.messages[0]!.text)).toBe('ADDED three');
    admin.socket.close();

    const nobody = await openWs(url, { ...ours, headers: bearer(env.tokens.nobody) });
    expect(nobody.status).toBe(403);
    expect(JSON.parse(nobody.body)).toMatchObject({
      kind: 'Status',
      code: 403,
      reason: 'Forbidden',
      message: expect.stringContaining('User "nobody" cannot watch resource "websites" in API group "extensions.example.com"'),
    });
  });

  it('a token as a subprotocol (websocket/protocol.go) is reviewed like a header token and never echoed back; a bad one is 401', async () => {
    const url = `${env.website.url}${path}?watch=true&resourceVersion=${await listRV()}`;
    const asProtocol = (t: string) => `base64url.bearer.authorization.k8s.io.${Buffer.from(t).toString('base64url')}`;
    const admin = await openWs(url, { ...ours, protocols: [asProtocol(env.tokens.admin), 'base64.binary.k8s.io'] });
    expect(admin.status).toBe(101);
    expect(admin.protocol).toBe('base64.binary.k8s.io');
    expect((await api('POST', path, website('four'))).status).toBe(201);
    await admin.until(1, 'the ADDED event');
    expect(summary(admin.messages[0]!.text)).toBe('ADDED four');
    admin.socket.close();

    const bogus = await openWs(url, { ...ours, protocols: [asProtocol('not-a-token'), 'base64.binary.k8s.io'] });
    expect(bogus.status).toBe(401);
    // The token alone leaves no subprotocol to echo: kube refuses it as an authentication error.
    const alone = await openWs(url, { ...ours, protocols: [asProtocol(env.tokens.admin)] });
    expect(alone.status).toBe(401);
  });
});
