/**
 * Graceful shutdown as kube-apiserver does it (k8s.io/apiserver pkg/server/genericapiserver.go RunWithContext, the
 * filters WithRetryAfter and WithWaitGroup), seen by clients of the real process: on SIGTERM every request either
 * gets its answer or a connection error, an acknowledged write is durable, one cut off before any answer was not
 * applied, an open watch ends with the end of its chunked stream, and the process exits 0 within its bound.
 */
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type Agent, request } from 'undici';
import { adminAgent, API, call, serversPerTest, website, type ServerProcess } from './helpers/server-process.js';
import { openWatch } from './helpers/watch-client.js';

const COLLECTION = `${API}/namespaces/default/websites`;
const WRITERS = 16;

const startWithAgent = serversPerTest();
async function start(args: string[] = [], dirs: { dataDir?: string; certDir?: string } = {}): Promise<ServerProcess> {
  return (await startWithAgent({ ...dirs, args })).srv;
}

// A new agent per call: a request during a shutdown must not reuse a connection the server is closing.
const agents: Agent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.destroy().catch(() => undefined);
});
function agentFor(srv: ServerProcess, connections?: number): Agent {
  const a = adminAgent(srv.certDir, true, connections);
  agents.push(a);
  return a;
}

/**
 * exited resolves with the exit code and how long after `since` the process ended, once its output is all read (the
 * tests check its last log lines).
 */
function exited(srv: ServerProcess, since: number): Promise<{ code: number | null; ms: number }> {
  return new Promise((res) => {
    let ms: number | undefined;
    const exit = () => (ms ??= performance.now() - since);
    const done = () => res({ code: srv.proc.exitCode, ms: exit() });
    if (srv.proc.exitCode !== null || srv.proc.signalCode !== null) exit();
    else srv.proc.once('exit', exit);
    if (srv.proc.stdout?.destroyed && srv.proc.stderr?.destroyed) done();
    else srv.proc.once('close', done);
  });
}

/** shutdownReport is the figures the server logged when it finished shutting down. */
function shutdownReport(srv: ServerProcess): Record<string, number> {
  const line = srv
    .logs()
    .split('\n')
    .find((l) => l.includes('"msg":"shut down"'));
  expect(line, 'the "shut down" log line').toBeDefined();
  return JSON.parse(line as string) as Record<string, number>;
}

/** Outcome of one request: the status it was answered with, or the connection error it got before any answer. */
type Outcome = { status: number; headers: Record<string, string | string[] | undefined>; body: any } | { error: string };

/** send issues one request on the writer's own keep-alive connection and classifies how it ended. */
async function send(agent: Agent, url: string, method: 'POST' | 'PATCH' | 'DELETE' | 'GET', body?: unknown): Promise<Outcome> {
  let status: number | undefined;
  try {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
    const res = await request(url, { dispatcher: agent, method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    status = res.statusCode;
    const text = await res.body.text();
    return { status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  } catch (e) {
    // An answer whose body broke off would be neither: the test refuses that case.
    if (status !== undefined) return { error: `answered ${status} but its body broke off: ${(e as Error).message}` };
    return { error: (e as { code?: string }).code ?? (e as Error).message };
  }
}

/** Trickle is a create whose body is only half sent: it is in flight until finish() sends the rest. */
interface Trickle {
  finish(): void;
  response: Promise<{ status: number; headers: IncomingMessage['headers']; body: any }>;
}

/** trickleCreate starts a create over its own connection and sends only the first half of its body. */
function trickleCreate(srv: ServerProcess, name: string): Trickle {
  const agent = new HttpsAgent({
    ca: readFileSync(join(srv.certDir, 'ca.crt')),
    cert: readFileSync(join(srv.certDir, 'admin.crt')),
    key: readFileSync(join(srv.certDir, 'admin.key')),
  });
  const payload = Buffer.from(JSON.stringify(website(name)));
  const req = httpsRequest(`${srv.url}${COLLECTION}`, {
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/json', 'content-length': String(payload.length) },
  });
  const response = new Promise<{ status: number; headers: IncomingMessage['headers']; body: any }>((res, rej) => {
    req.on('response', (r) => {
      let text = '';
      r.on('data', (c: Buffer) => (text += c.toString()));
      r.on('end', () => {
        agent.destroy();
        res({ status: r.statusCode ?? 0, headers: r.headers, body: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', (e) => {
      agent.destroy();
      rej(e);
    });
  });
  // Awaited by the test; a connection reset must fail the test there, not as an unhandled rejection.
  response.catch(() => undefined);
  req.write(payload.subarray(0, payload.length >> 1));
  return { finish: () => req.end(payload.subarray(payload.length >> 1)), response };
}

/** listAll maps each website of the namespace to its spec.replicas. */
async function listAll(srv: ServerProcess): Promise<{ items: Map<string, number>; rv: number }> {
  const agent = agentFor(srv);
  const res = await call(agent, `${srv.url}${COLLECTION}`);
  expect(res.status).toBe(200);
  const items = res.body.items as { metadata: { name: string }; spec: { replicas: number } }[];
  return { items: new Map(items.map((i) => [i.metadata.name, i.spec.replicas])), rv: Number(res.body.metadata.resourceVersion) };
}

/** Tally counts how requests ended. */
interface Tally {
  answered: number;
  refused: number;
  connectionErrors: number;
  byStatus: Record<string, number>;
  byError: Record<string, number>;
}

describe('graceful shutdown on SIGTERM (genericapiserver.go RunWithContext)', () => {
  for (const halfSent of [2, 0])
    it(`with ${WRITERS} writers creating, patching and deleting over keep-alive connections${halfSent ? ` and ${halfSent} creates half-sent` : ''}: every answer is durable, nothing cut off was applied, the watch ends cleanly, exit 0 within --request-timeout`, async () => {
      const REQUEST_TIMEOUT_S = 10;
      const srv = await start(['--request-timeout', `${REQUEST_TIMEOUT_S}s`]);
      const { rv: startRv } = await listAll(srv);
      const watch = await openWatch(srv, COLLECTION, startRv);

      // Each writer works on its own names, one request at a time, so a name's expected state is the fold of the
      // requests that were answered 2xx. After a connection error the writer moves on to a fresh name: the failed
      // request is then the last one on its name, and the final state shows whether it was applied.
      const expected = new Map<string, number | undefined>();
      const acked: { name: string; rv: number; replicas: number }[] = [];
      const tally: Tally = { answered: 0, refused: 0, connectionErrors: 0, byStatus: {}, byError: {} };
      const broken: string[] = [];
      let exitedYet = false;
      let acks = 0;
      const record = (o: Outcome): o is Exclude<Outcome, { error: string }> => {
        if ('error' in o) {
          if (o.error.startsWith('answered')) broken.push(o.error);
          tally.connectionErrors++;
          tally.byError[o.error] = (tally.byError[o.error] ?? 0) + 1;
          return false;
        }
        tally.byStatus[o.status] = (tally.byStatus[o.status] ?? 0) + 1;
        if (o.status === 429 || o.status === 503) tally.refused++;
        else tally.answered++;
        return true;
      };
      const writer = async (i: number) => {
        const agent = agentFor(srv, 1);
        for (let k = 0; !exitedYet; k++) {
          const name = `w${i}-${k}`;
          const url = `${srv.url}${COLLECTION}`;
          const steps: [() => Promise<Outcome>, (o: Exclude<Outcome, { error: string }>) => void][] = [
            [
              () => send(agent, url, 'POST', website(name, { replicas: 1 })),
              (o) => {
                if (o.status === 201) {
                  expected.set(name, 1);
                  acked.push({ name, rv: Number(o.body.metadata.resourceVersion), replicas: 1 });
                }
              },
            ],
            [
              () => send(agent, `${url}/${name}`, 'PATCH', { spec: { replicas: 2 + (k % 5) } }),
              (o) => {
                if (o.status === 200) {
                  expected.set(name, 2 + (k % 5));
                  acked.push({ name, rv: Number(o.body.metadata.resourceVersion), replicas: 2 + (k % 5) });
                }
              },
            ],
            // Every other name is deleted again.
            ...(k % 2 === 0
              ? [
                  [
                    () => send(agent, `${url}/${name}`, 'DELETE'),
                    (o: Exclude<Outcome, { error: string }>) => {
                      if (o.status === 200) expected.set(name, undefined);
                    },
                  ] as [() => Promise<Outcome>, (o: Exclude<Outcome, { error: string }>) => void],
                ]
              : []),
          ];
          if (!expected.has(name)) expected.set(name, undefined);
          for (const [issue, apply] of steps) {
            const o = await issue();
            if (!record(o)) {
              await new Promise((r) => setTimeout(r, 20));
              break;
            }
            apply(o);
            if (o.status < 300) acks++;
          }
        }
      };
      const writers = Array.from({ length: WRITERS }, (_, i) => writer(i));

      // Creates in the middle of their bodies when SIGTERM arrives: in flight, they must still be answered.
      const trickles = Array.from({ length: halfSent }, (_, i) => trickleCreate(srv, `trickle-${i}`));
      while (acks < 300) await new Promise((r) => setTimeout(r, 5));
      const t0 = performance.now();
      const exit = exited(srv, t0);
      srv.proc.kill('SIGTERM');
      setTimeout(
        () =>
          trickles.forEach((t) => {
            t.finish();
          }),
        300,
      );
      const { code, ms } = await exit;
      exitedYet = true;
      await Promise.all(writers);
      const trickled = await Promise.all(trickles.map((t) => t.response));
      const watchEnd = await watch.ended;

      expect(code).toBe(0);
      expect(ms).toBeLessThan(REQUEST_TIMEOUT_S * 1000);
      expect(broken).toEqual([]);
      // Requests begun before SIGTERM were answered, and told the client its connection closes.
      for (const t of trickled) {
        expect(t.status).toBe(201);
        expect(t.headers.connection).toBe('close');
        expected.set(t.body.metadata.name as string, 1);
      }
      expect(watchEnd).toBe('end');
      const report = shutdownReport(srv);

      // After a restart, the store holds exactly what the answers said.
      const srv2 = await start([], { dataDir: srv.dataDir, certDir: srv.certDir });
      const { items } = await listAll(srv2);
      const wrong: string[] = [];
      for (const [name, replicas] of expected) {
        if (items.get(name) !== replicas) wrong.push(`${name}: expected ${replicas ?? 'absent'}, stored ${items.get(name) ?? 'absent'}`);
      }
      for (const name of items.keys()) if (!expected.has(name)) wrong.push(`${name}: stored but never written`);
      expect(wrong).toEqual([]);

      // The watch saw every acknowledged write up to where it ended, in order, each once.
      const rvs = watch.events.map((e) => e.rv);
      expect([...rvs].sort((a, b) => a - b)).toEqual(rvs);
      expect(new Set(rvs).size).toBe(rvs.length);
      const last = rvs[rvs.length - 1] ?? 0;
      const seen = new Set(rvs);
      expect(acked.filter((a) => a.rv <= last && !seen.has(a.rv))).toEqual([]);

      console.log(
        `graceful shutdown with ${WRITERS} writers, ${halfSent ? `${halfSent} half-sent creates (completed 300 ms after SIGTERM)` : 'no half-sent create'} and 1 watch: SIGTERM to exit ${Math.round(ms)} ms ` +
          `(server: ${report.inFlightAtStop} in flight when it stopped accepting, drained after ${report.msToDrained} ms, ` +
          `${report.answered} answered during the shutdown, ${report.refused503} refused with 503, ${report.cutOff} cut off); ` +
          `clients: ${tally.answered} answered, ${tally.refused} refused, ${tally.connectionErrors} connection errors (${JSON.stringify(tally.byError)}), by status ${JSON.stringify(tally.byStatus)}; ` +
          `${acked.length} acknowledged writes, ${items.size} objects after restart; the watch got ${watch.events.length} events and ended cleanly`,
      );
    });

  it('keeps serving through --shutdown-delay-duration with /readyz failing its shutdown check, then refuses new connections while a request begun is answered', async () => {
    const srv = await start(['--shutdown-delay-duration', '1500ms']);
    const before = await call(agentFor(srv), `${srv.url}/readyz?verbose`);
    expect(before.text).toContain('[+]shutdown ok');
    const held = trickleCreate(srv, 'held');
    await sleep(200);
    const t0 = performance.now();
    const exit = exited(srv, t0);
    srv.proc.kill('SIGTERM');
    await sleep(300);

    // During the delay: not ready, but alive and serving (server_run_options.go --shutdown-delay-duration).
    const ready = await call(agentFor(srv), `${srv.url}/readyz?verbose`);
    expect(ready.status).toBe(500);
    expect(ready.text).toContain('[-]shutdown failed: reason withheld');
    expect(ready.text).toContain('readyz check failed');
    expect((await call(agentFor(srv), `${srv.url}/livez`)).text).toBe('ok');
    expect((await call(agentFor(srv), `${srv.url}/healthz`)).text).toBe('ok');
    expect((await call(agentFor(srv), `${srv.url}${COLLECTION}`, 'POST', website('during-delay'))).status).toBe(201);

    // After it: the listener is closed, and the request begun before is still answered.
    await sleep(1500 - (performance.now() - t0) + 300);
    const late = await send(agentFor(srv), `${srv.url}${COLLECTION}`, 'POST', website('too-late'));
    expect(late).toEqual({ error: 'ECONNREFUSED' });
    held.finish();
    const answer = await held.response;
    expect(answer.status).toBe(201);
    expect(answer.headers.connection).toBe('close');
    const { code, ms } = await exit;
    expect(code).toBe(0);
    expect(ms).toBeGreaterThanOrEqual(1500);

    const srv2 = await start([], { dataDir: srv.dataDir, certDir: srv.certDir });
    expect([...(await listAll(srv2)).items.keys()]).toEqual(['during-delay', 'held']);
  });

  it("with --shutdown-send-retry-after keeps listening until drained and refuses new requests with kube's 429 (with_retry_after.go), health, metrics and kube-apiserver itself exempt", async () => {
    const srv = await start(['--shutdown-send-retry-after=true']);
    const held = trickleCreate(srv, 'held');
    await sleep(200);
    const exit = exited(srv, performance.now());
    srv.proc.kill('SIGTERM');
    await sleep(300);

    const res = await request(`${srv.url}${COLLECTION}`, {
      dispatcher: agentFor(srv),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(website('refused')),
    });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers.connection).toBe('close');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(await res.body.text()).toBe('The apiserver is shutting down, please try again later.\n');

    expect((await call(agentFor(srv), `${srv.url}/readyz`)).status).toBe(500);
    expect((await call(agentFor(srv), `${srv.url}/livez`)).status).toBe(200);
    expect((await call(agentFor(srv), `${srv.url}/metrics`)).status).toBe(200);
    const loopback = await call(agentFor(srv), `${srv.url}${COLLECTION}`, 'GET', undefined, {
      'user-agent': 'kube-apiserver/v1.37.2 (linux/amd64) kubernetes/abcdef',
    });
    expect(loopback.status).toBe(200);

    held.finish();
    expect((await held.response).status).toBe(201);
    const { code } = await exit;
    expect(code).toBe(0);
    const report = shutdownReport(srv);
    expect(report.refused429).toBe(1);

    const srv2 = await start([], { dataDir: srv.dataDir, certDir: srv.certDir });
    expect([...(await listAll(srv2)).items.keys()]).toEqual(['held']);
  });

  it('a request still unanswered when --request-timeout ends is answered 504 or cut off, never applied, and the process exits 0 within the bound', async () => {
    const srv = await start(['--request-timeout', '1s']);
    const stuck = trickleCreate(srv, 'stuck');
    await sleep(200);
    const exit = exited(srv, performance.now());
    srv.proc.kill('SIGTERM');
    const { code, ms } = await exit;
    // Its body arrives only after the bound: too late, whatever the socket still takes.
    stuck.finish();
    const outcome = await stuck.response.then(
      (r) => r.status,
      (e: { code?: string }) => e.code ?? 'error',
    );
    expect([504, 'ECONNRESET', 'EPIPE']).toContain(outcome);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(1000 + 5000);
    const srv2 = await start([], { dataDir: srv.dataDir, certDir: srv.certDir });
    expect((await listAll(srv2)).items.size).toBe(0);
  });

  it('with --shutdown-watch-termination-grace-period ends every open watch cleanly within it (kube paces them, at least 200 a second)', async () => {
    const srv = await start(['--shutdown-watch-termination-grace-period', '2s']);
    const { rv } = await listAll(srv);
    const watches = await Promise.all(Array.from({ length: 5 }, () => openWatch(srv, COLLECTION, rv)));
    const { code, ms } = await (async () => {
      const exit = exited(srv, performance.now());
      srv.proc.kill('SIGTERM');
      return exit;
    })();
    expect(code).toBe(0);
    expect(ms).toBeLessThan(2000);
    expect(await Promise.all(watches.map((w) => w.ended))).toEqual(Array(5).fill('end'));
    expect(shutdownReport(srv).watchesEnded).toBe(5);
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
