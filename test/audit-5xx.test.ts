/**
 * Every 5xx is audited exactly once, as the client got it (issue 24), against the real server process under
 * concurrent mixed traffic: clients over HTTP/1.1 and over HTTP/2 paging through lists (`?limit=5&continue=…`),
 * getting, creating, patching, deleting and deleting collections, while the storage fails on purpose:
 *
 * - a plain Error from the storage (not a StatusError, not a StorageError), as lmdb's MDB_READERS_FULL was: an
 *   fsync that fails after the commit became visible (500 on every write path) and then a failed meta page write,
 *   after which lmdb's environment is fatal (500 on get, list, delete and deletecollection, 503 on create and patch),
 *   both injected into data.mdb's writes with the LD_PRELOAD shim test/disk-full.test.ts uses. These were audited
 *   as Panic events (no ResponseComplete, a message the client never saw);
 * - a full disk (the data directory on a 16 MiB tmpfs): writes answer 503;
 * - the request timeout: 504 for a create whose body stalls past `?timeout=1s`, answered past fastify's reply, and
 *   audited as 200 "Connection closed early".
 *
 * Checked for every request: exactly one ResponseComplete (and no Panic) under its Audit-Id, with its verb,
 * requestURI, objectRef (resource, namespace, name) and response code, and for a failure the Status message and
 * reason the client read; no event names an Audit-Id no client received. Mounting needs root and the shim a C
 * compiler (CI has both): without them those cases are skipped with one printed line.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, type Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { adminAgent, API, cleanupTempDirs, startServer, tempDir, website, type ServerProcess } from './helpers/server-process.js';

const NS = 'default';
const COLLECTION = `${API}/namespaces/${NS}/websites`;
const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*", "/metrics"]
- level: RequestResponse
`;

// ---- the faults: a tmpfs (root) and the LD_PRELOAD shim of test/disk-full.test.ts (a C compiler) ---------------
const mountPoint = mkdtempSync(join(tmpdir(), 'ws-audit5xx-'));
let mounted = false;
const mountError = (() => {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mountPoint], { encoding: 'utf8' });
  if (r.error) return r.error.message;
  if (r.status !== 0) return r.stderr.trim() || `mount exited with ${r.status}`;
  mounted = true;
  return undefined;
})();
if (mountError) console.log(`audit-5xx.test.ts: SKIPPED the full-disk case: cannot mount a tmpfs (${mountError}); it needs root`);

const shim = (() => {
  const source = /const SHIM_SOURCE = String\.raw`([\s\S]*?)`;/.exec(readFileSync(join(import.meta.dirname, 'disk-full.test.ts'), 'utf8'))?.[1];
  if (!source) return { error: 'no SHIM_SOURCE in test/disk-full.test.ts' };
  const dir = tempDir('ws-audit5xx-shim-');
  writeFileSync(join(dir, 'fault.c'), source);
  const r = spawnSync('cc', ['-shared', '-fPIC', '-O1', '-o', join(dir, 'fault.so'), join(dir, 'fault.c'), '-ldl'], { encoding: 'utf8' });
  if (r.error) return { error: r.error.message };
  return r.status === 0 ? { path: join(dir, 'fault.so') } : { error: r.stderr.trim() };
})();
if (shim.error) console.log(`audit-5xx.test.ts: SKIPPED the storage-error case: cannot compile the LD_PRELOAD shim (${shim.error})`);

afterAll(() => {
  if (mounted) execFileSync('umount', ['-l', mountPoint]);
  rmSync(mountPoint, { recursive: true, force: true });
  cleanupTempDirs();
});

// ---- clients -----------------------------------------------------------------------------------------------
/** Sent is one request as its client saw it. */
interface Sent {
  proto: 'h1' | 'h2';
  method: string;
  path: string;
  /** The object the request names (in its URL, or in the body of a create). */
  name?: string;
  status: number;
  auditId: string;
  body: any;
}

type AuditEvent = Record<string, any>;

/** Traffic is one server with its clients and everything they sent. */
class Traffic {
  readonly sent: Sent[] = [];
  readonly #h1: Agent;
  #h2: ClientHttp2Session | undefined;
  #seq = 0;
  #labels = 0;

  constructor(
    readonly srv: ServerProcess,
    readonly logPath: string,
  ) {
    this.#h1 = adminAgent(srv.certDir);
  }

  async close(): Promise<void> {
    this.#h2?.close();
    await this.#h1.close();
  }

  async #session(): Promise<ClientHttp2Session> {
    if (this.#h2 && !this.#h2.closed && !this.#h2.destroyed) return this.#h2;
    const session = connect(this.srv.url, {
      ca: readFileSync(join(this.srv.certDir, 'ca.crt'), 'utf8'),
      cert: readFileSync(join(this.srv.certDir, 'admin.crt'), 'utf8'),
      key: readFileSync(join(this.srv.certDir, 'admin.key'), 'utf8'),
    });
    session.on('error', () => undefined);
    await new Promise<void>((res, rej) => {
      session.once('connect', () => res());
      session.once('error', rej);
    });
    this.#h2 = session;
    return session;
  }

  /** send makes one request over HTTP/1.1 or HTTP/2; `body` may be an async iterable (a body that stalls). */
  async send(proto: 'h1' | 'h2', method: string, path: string, body?: unknown, contentType = 'application/json', name?: string): Promise<Sent> {
    const payload = body === undefined ? undefined : isStream(body) ? body : JSON.stringify(body);
    const headers: Record<string, string> = payload === undefined ? {} : { 'content-type': contentType };
    let status: number;
    let auditId: unknown;
    let text: string;
    if (proto === 'h1') {
      const res = await request(`${this.srv.url}${path}`, {
        dispatcher: this.#h1,
        method: method as 'GET',
        headers,
        ...(payload === undefined ? {} : { body: payload as string }),
      });
      text = await res.body.text();
      [status, auditId] = [res.statusCode, res.headers['audit-id']];
    } else {
      ({ status, auditId, text } = await h2Request(await this.#session(), method, path, headers, payload));
    }
    expect(typeof auditId, `${method} ${path}: no Audit-Id`).toBe('string');
    const sent: Sent = { proto, method, path, ...(name ? { name } : {}), status, auditId: auditId as string, body: parse(text) };
    this.sent.push(sent);
    return sent;
  }

  /** lister pages through the collection, five at a time, until `done()`. */
  async lister(proto: 'h1' | 'h2', done: () => boolean): Promise<void> {
    while (!done()) {
      let token: string | undefined;
      do {
        const page = await this.send(proto, 'GET', `${COLLECTION}?limit=5${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
        token = page.status === 200 ? page.body?.metadata?.continue : undefined;
      } while (token && !done());
    }
  }

  /** writer creates, gets, patches and deletes objects of its own (and now and then deletes them as a collection) until `done()`. */
  async writer(proto: 'h1' | 'h2', done: () => boolean, ballast = 0): Promise<void> {
    const label = `w${this.#labels++}`;
    while (!done()) {
      const name = `${label}-${this.#seq++}`;
      const annotations = ballast ? { 'example.com/ballast': randomBytes(ballast).toString('base64') } : {};
      await this.send(proto, 'POST', COLLECTION, website(name, {}, { labels: { writer: label }, annotations }), 'application/json', name);
      await this.send(proto, 'GET', `${COLLECTION}/${name}`, undefined, undefined, name);
      await this.send(proto, 'PATCH', `${COLLECTION}/${name}`, { metadata: { labels: { patched: 'yes' } } }, 'application/merge-patch+json', name);
      if (this.#seq % 3 === 0) await this.send(proto, 'DELETE', `${COLLECTION}?labelSelector=writer%3D${label}&limit=2`);
      else await this.send(proto, 'DELETE', `${COLLECTION}/${name}`, undefined, undefined, name);
    }
  }

  /** mixed runs two listers and two writers on each protocol until `done()`. */
  async mixed(done: () => boolean, ballast = 0): Promise<void> {
    const protos = ['h1', 'h2', 'h1', 'h2'] as const;
    await Promise.all([...protos.map((p) => this.lister(p, done)), ...protos.map((p) => this.writer(p, done, ballast))]);
  }

  /**
   * timedOut sends a create whose body stalls past its `?timeout=1s`: the client gets 504. The server never read the
   * body, so the object's name is known to nobody but the client: the event's objectRef has none.
   */
  async timedOut(proto: 'h1' | 'h2', name: string): Promise<Sent> {
    const text = JSON.stringify(website(name));
    async function* stalling() {
      yield Buffer.from(text.slice(0, 20));
      await new Promise((r) => setTimeout(r, 1600));
      yield Buffer.from(text.slice(20));
    }
    return this.send(proto, 'POST', `${COLLECTION}?timeout=1s&late=${name}`, stalling());
  }

  /** events waits until the audit log stops growing and returns its complete lines. */
  async events(): Promise<AuditEvent[]> {
    let size = -1;
    for (;;) {
      await new Promise((r) => setTimeout(r, 200));
      const now = readFileSync(this.logPath).length;
      if (now === size) break;
      size = now;
    }
    const text = readFileSync(this.logPath, 'utf8');
    return text
      .slice(0, text.lastIndexOf('\n') + 1)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent);
  }

  /**
   * expectAudited: every request has exactly one ResponseComplete and no Panic under its Audit-Id, saying what was
   * asked and what the client got; no event belongs to a request nobody made. Returns the 5xx answers.
   */
  async expectAudited(): Promise<Sent[]> {
    const events = await this.events();
    const byId = new Map<string, AuditEvent[]>();
    for (const e of events) byId.set(e['auditID'], [...(byId.get(e['auditID']) ?? []), e]);
    const ids = new Set(this.sent.map((s) => s.auditId));
    expect(ids.size, 'an Audit-Id given to two requests').toBe(this.sent.length);
    expect(
      [...byId.keys()].filter((id) => !ids.has(id)),
      'events of requests nobody made',
    ).toEqual([]);
    for (const s of this.sent) {
      const what = `${s.proto} ${s.method} ${s.path} → ${s.status} (${s.auditId})`;
      const mine = byId.get(s.auditId) ?? [];
      const final = mine.filter((e) => e['stage'] === 'ResponseComplete' || e['stage'] === 'Panic');
      expect(
        final.map((e) => e['stage']),
        what,
      ).toEqual(['ResponseComplete']);
      const e = final[0] as AuditEvent;
      expect(e['verb'], what).toBe(verbOf(s));
      expect(e['requestURI'], what).toBe(s.path);
      expect(e['responseStatus']?.code, what).toBe(s.status);
      expect(e['objectRef'], what).toMatchObject({ resource: 'websites', namespace: NS, apiGroup: 'extensions.example.com', apiVersion: 'v1alpha1' });
      expect(e['objectRef']?.name, what).toBe(s.name);
      if (s.status >= 400) {
        expect(s.body?.kind, what).toBe('Status');
        expect(e['responseStatus'], what).toMatchObject({ status: 'Failure', message: s.body.message, code: s.status });
        expect(e['responseStatus']?.reason ?? '', what).toBe(s.body.reason ?? '');
        // RequestResponse: the Status as the client read it.
        expect(e['responseObject'], what).toEqual(s.body);
      }
    }
    return this.sent.filter((s) => s.status >= 500);
  }
}

function isStream(body: unknown): body is AsyncIterable<Buffer> {
  return typeof body === 'object' && body !== null && Symbol.asyncIterator in body;
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

async function h2Request(
  session: ClientHttp2Session,
  method: string,
  path: string,
  headers: Record<string, string>,
  payload: unknown,
): Promise<{ status: number; auditId: unknown; text: string }> {
  const stream = session.request({ ':method': method, ':path': path, ...headers });
  const answer = new Promise<{ status: number; auditId: unknown; text: string }>((res, rej) => {
    let status = 0;
    let auditId: unknown;
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      auditId = h['audit-id'];
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => res({ status, auditId, text: Buffer.concat(chunks).toString() }));
    stream.on('error', rej);
  });
  if (payload === undefined) stream.end();
  else if (typeof payload === 'string') stream.end(payload);
  else {
    // A stalled body: the answer may come (and the stream be reset) before it is all sent.
    void (async () => {
      for await (const chunk of payload as AsyncIterable<Buffer>) if (!stream.destroyed) stream.write(chunk);
      if (!stream.destroyed) stream.end();
    })().catch(() => undefined);
  }
  return answer;
}

// The verb kube's RequestInfoFactory gives each request these clients make.
function verbOf(s: Sent): string {
  const named = s.name !== undefined && s.method !== 'POST';
  switch (s.method) {
    case 'GET':
      return named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return s.method.toLowerCase();
  }
}

const forMs = (ms: number) => {
  const end = Date.now() + ms;
  return () => Date.now() > end;
};

async function startAudited(o: { dataDir?: string; env?: Record<string, string> } = {}): Promise<Traffic> {
  const dir = tempDir('ws-audit5xx-');
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  // The log on the ordinary disk, whatever fills the data directory's.
  const logPath = join(dir, 'log', 'audit.log');
  const srv = await startServer({ ...o, args: ['--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', logPath] });
  const t = new Traffic(srv, logPath);
  for (let i = 0; i < 12; i++)
    expect((await t.send(i % 2 ? 'h2' : 'h1', 'POST', COLLECTION, website(`seed-${i}`), 'application/json', `seed-${i}`)).status).toBe(201);
  return t;
}

const verbsOf = (sent: Sent[]) => new Set(sent.map(verbOf));

describe('every 5xx is audited once, as its client got it', () => {
  it('request timeouts (504) amid mixed traffic over HTTP/1.1 and HTTP/2', async () => {
    const t = await startAudited();
    try {
      const [, a, b] = await Promise.all([t.mixed(forMs(1500)), t.timedOut('h1', 'late-h1'), t.timedOut('h2', 'late-h2')]);
      expect([a.status, b.status]).toEqual([504, 504]);
      expect(a.body).toMatchObject({ kind: 'Status', reason: 'Timeout', code: 504 });
      const failed = await t.expectAudited();
      expect(failed.map((s) => s.path)).toEqual(expect.arrayContaining([a.path, b.path]));
      expect(t.sent.length).toBeGreaterThan(100);
    } finally {
      await t.close();
      await t.srv.stop('SIGKILL');
    }
  });

  it.skipIf(shim.path === undefined)('storage errors that are no Status (fsync failed, then a fatal environment) on every verb', async () => {
    const control = join(tempDir('ws-audit5xx-ctl-'), 'mode');
    writeFileSync(control, '');
    const t = await startAudited({ env: { LD_PRELOAD: shim.path as string, FAULT_CONTROL: control } });
    try {
      await t.mixed(forMs(400));
      // Each write commits, then its fsync fails: 500 InternalError on create, patch, delete and deletecollection.
      writeFileSync(control, 'sync');
      await t.mixed(forMs(1200));
      const syncFailed = t.sent.filter((s) => s.status === 500);
      expect(syncFailed.length).toBeGreaterThan(10);
      expect(syncFailed[0]?.body.message).toContain('flushing it to disk failed');
      expect(verbsOf(syncFailed)).toEqual(new Set(['create', 'patch', 'delete', 'deletecollection']));
      // A failed meta page write: lmdb is fatal, reads fail with 500 (MDB_PANIC) and writes with 500 or 503.
      writeFileSync(control, 'meta');
      await t.mixed(forMs(1200));
      writeFileSync(control, '');
      const failed = await t.expectAudited();
      const fatal = failed.filter((s) => s.status === 500 && /MDB_PANIC/.test(s.body.message));
      expect([...verbsOf(fatal)]).toEqual(expect.arrayContaining(['get', 'list', 'delete', 'deletecollection']));
      expect(failed.filter((s) => s.proto === 'h2').length).toBeGreaterThan(0);
    } finally {
      await t.close();
      await t.srv.stop('SIGKILL');
    }
  });

  it.skipIf(mountError !== undefined)('a full disk: writes answer 503 while lists, gets and other writers go on', async () => {
    const dataDir = join(mountPoint, 'data');
    mkdirSync(dataDir);
    // 10 MiB taken: about 80 objects of 64 KiB fit in what is left.
    writeFileSync(join(mountPoint, 'filler'), randomBytes(10 * 1024 * 1024));
    const t = await startAudited({ dataDir });
    try {
      let unavailable = 0;
      await t.mixed(() => {
        unavailable = t.sent.filter((s) => s.status === 503).length;
        return unavailable >= 40 || t.sent.length > 4000;
      }, 48 * 1024);
      const failed = await t.expectAudited();
      expect(failed.length).toBeGreaterThanOrEqual(40);
      for (const s of failed) expect(s.body).toMatchObject({ code: 503, reason: 'ServiceUnavailable' });
      expect(verbsOf(failed)).toContain('create');
    } finally {
      await t.close();
      await t.srv.stop('SIGKILL');
    }
  });
});
