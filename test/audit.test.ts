/**
 * Audit logging on the wire: a real server process with `--audit-policy-file` and `--audit-log-path`, driven over
 * HTTPS. Each request's events are found by the `Audit-Id` response header, and checked against what kube-apiserver
 * writes (k8s.io/apiserver pkg/endpoints/filters/audit.go, authn_audit.go, audit_init.go; pkg/audit/request.go):
 * the stages, the level the first matching rule gives, omitted stages, the user and the impersonated user, objectRef,
 * responseStatus, request and response objects only at Request / RequestResponse, and nothing for level None.
 * A log on a full device and a log on stdout are checked too.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { Agent, request } from 'undici';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLeaf } from '../src/certs/issue.js';
import { adminAgent, API, call, cleanupTempDirs, startServer, tempDir, website, type ServerProcess } from './helpers/server-process.js';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
# Health checks and metrics: nothing.
- level: None
  nonResourceURLs: ["/healthz*", "/livez*", "/readyz*", "/metrics"]
# One Website nobody wants to hear about.
- level: None
  resources:
  - group: extensions.example.com
    resources: ["websites"]
    resourceNames: ["quiet"]
- level: Request
  verbs: ["update"]
  resources: [{group: extensions.example.com, resources: ["websites"]}]
- level: RequestResponse
  omitManagedFields: true
  verbs: ["create", "patch", "delete"]
  resources: [{group: extensions.example.com, resources: ["websites"]}]
- level: Metadata
  verbs: ["get", "list"]
  omitStages: ["RequestReceived"]
- level: Metadata
`;

type AuditEvent = Record<string, any>;

let server: ServerProcess;
let admin: Agent;
let alice: Agent;
let anonymous: Agent;
let logPath: string;
const NS = 'audit';
const coll = () => `${server.url}${API}/namespaces/${NS}/websites`;
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const ALLOWED = { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' };
const ADMIN_USER = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

/** completeLines are the lines of a log being written, without a last line still unfinished. */
function completeLines(text: string): string[] {
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter(Boolean);
}

function readEvents(path = logPath): AuditEvent[] {
  return completeLines(readFileSync(path, 'utf8')).map((l) => JSON.parse(l) as AuditEvent);
}

/** eventsOf waits until the request's last expected stage is written, then returns its events in order. */
async function eventsOf(id: unknown, lastStage = 'ResponseComplete'): Promise<AuditEvent[]> {
  expect(typeof id).toBe('string');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const evs = readEvents().filter((e) => e['auditID'] === id);
    if (evs.some((e) => e['stage'] === lastStage) || Date.now() > deadline) return evs;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** settle waits until the log stops growing (for checks that something was *not* written). */
async function settle(): Promise<void> {
  let size = -1;
  for (;;) {
    await new Promise((r) => setTimeout(r, 150));
    const now = readFileSync(logPath).length;
    if (now === size) return;
    size = now;
  }
}

const withoutManagedFields = (o: any) => {
  const { managedFields: _m, ...metadata } = o.metadata;
  return { ...o, metadata };
};

beforeAll(async () => {
  const dir = tempDir('ws-audit-');
  writeFileSync(join(dir, 'policy.yaml'), POLICY);
  logPath = join(dir, 'log', 'audit.log');
  server = await startServer({ args: ['--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', logPath] });
  admin = adminAgent(server.certDir);
  anonymous = adminAgent(server.certDir, false);
  const ca = {
    cert: forge.pki.certificateFromPem(readFileSync(join(server.certDir, 'ca.crt'), 'utf8')),
    key: forge.pki.privateKeyFromPem(readFileSync(join(server.certDir, 'ca.key'), 'utf8')),
  };
  const now = new Date();
  const leaf = createLeaf(ca, now, new Date(now.getTime() + 86_400_000), { subject: [{ shortName: 'CN', value: 'alice' }], extKeyUsage: { clientAuth: true } });
  alice = new Agent({ connect: { ca: readFileSync(join(server.certDir, 'ca.crt'), 'utf8'), cert: leaf.certPem, key: leaf.keyPem } });
});
afterAll(async () => {
  await Promise.all([admin?.close(), alice?.close(), anonymous?.close()]);
  await server?.stop();
  cleanupTempDirs();
});

describe('audit log', () => {
  it('a create at RequestResponse: RequestReceived then ResponseComplete, with both objects (managedFields omitted) and the Audit-Id', async () => {
    const body = website('kubia');
    const r = await call(admin, coll(), 'POST', body, { 'user-agent': 'audit-test/1.0', 'x-forwarded-for': '10.1.2.3, 10.4.5.6' });
    expect(r.status).toBe(201);
    expect(r.body.metadata.managedFields).toBeDefined();
    const evs = await eventsOf(r.headers['audit-id']);
    expect(evs.map((e) => e['stage'])).toEqual(['RequestReceived', 'ResponseComplete']);
    const [received, complete] = evs as [AuditEvent, AuditEvent];
    const common = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: 'RequestResponse',
      auditID: r.headers['audit-id'],
      requestURI: `${API}/namespaces/${NS}/websites`,
      verb: 'create',
      user: ADMIN_USER,
      // X-Forwarded-For first, then the connection's address (utilnet.SourceIPs).
      sourceIPs: ['10.1.2.3', '10.4.5.6', '127.0.0.1'],
      userAgent: 'audit-test/1.0',
    };
    expect(received).toEqual({
      ...common,
      stage: 'RequestReceived',
      objectRef: { resource: 'websites', namespace: NS, apiGroup: 'extensions.example.com', apiVersion: 'v1alpha1' },
      requestReceivedTimestamp: received['requestReceivedTimestamp'],
      stageTimestamp: received['requestReceivedTimestamp'],
    });
    expect(received['requestReceivedTimestamp']).toMatch(TIMESTAMP);
    expect(complete).toEqual({
      ...common,
      stage: 'ResponseComplete',
      // The name comes from the object in the body (LogRequestObject).
      objectRef: { resource: 'websites', namespace: NS, name: 'kubia', apiGroup: 'extensions.example.com', apiVersion: 'v1alpha1' },
      responseStatus: { metadata: {}, code: 201 },
      requestObject: body,
      responseObject: withoutManagedFields(r.body),
      requestReceivedTimestamp: received['requestReceivedTimestamp'],
      stageTimestamp: complete['stageTimestamp'],
      annotations: ALLOWED,
    });
    expect(complete['stageTimestamp']).toMatch(TIMESTAMP);
    expect(complete['stageTimestamp'] >= complete['requestReceivedTimestamp']).toBe(true);
  });

  it('a get at Metadata: no objects, and the omitted RequestReceived is not written', async () => {
    const r = await call(admin, `${coll()}/kubia`);
    expect(r.status).toBe(200);
    const evs = await eventsOf(r.headers['audit-id']);
    expect(evs).toHaveLength(1);
    expect(evs[0]).toMatchObject({
      level: 'Metadata',
      stage: 'ResponseComplete',
      verb: 'get',
      user: ADMIN_USER,
      responseStatus: { metadata: {}, code: 200 },
      annotations: ALLOWED,
      objectRef: { resource: 'websites', namespace: NS, name: 'kubia', apiGroup: 'extensions.example.com', apiVersion: 'v1alpha1' },
    });
    expect(evs[0]).not.toHaveProperty('requestObject');
    expect(evs[0]).not.toHaveProperty('responseObject');
  });

  it('a list: verb list, objectRef without a name', async () => {
    const r = await call(admin, `${coll()}?limit=5`);
    expect(r.status).toBe(200);
    const [ev, ...rest] = await eventsOf(r.headers['audit-id']);
    expect(rest).toEqual([]);
    expect(ev).toMatchObject({
      stage: 'ResponseComplete',
      verb: 'list',
      requestURI: `${API}/namespaces/${NS}/websites?limit=5`,
      responseStatus: { code: 200 },
    });
    expect(ev?.['objectRef']).toEqual({ resource: 'websites', namespace: NS, apiGroup: 'extensions.example.com', apiVersion: 'v1alpha1' });
  });

  it('a failure keeps the Status in responseStatus (status, message, reason, details, code)', async () => {
    const r = await call(admin, `${coll()}/missing`);
    expect(r.status).toBe(404);
    const [ev] = await eventsOf(r.headers['audit-id']);
    expect(ev?.['responseStatus']).toEqual({
      metadata: {},
      status: 'Failure',
      message: r.body.message,
      reason: 'NotFound',
      details: r.body.details,
      code: 404,
    });
  });

  it('an update at Request: the request object (and the objectRef uid and resourceVersion from it), no response object', async () => {
    const current = await call(admin, `${coll()}/kubia`);
    const body = { ...current.body, spec: { ...current.body.spec, branch: 'main' } };
    const r = await call(admin, `${coll()}/kubia`, 'PUT', body);
    expect(r.status).toBe(200);
    const evs = await eventsOf(r.headers['audit-id']);
    expect(evs.map((e) => [e['stage'], e['level']])).toEqual([
      ['RequestReceived', 'Request'],
      ['ResponseComplete', 'Request'],
    ]);
    const complete = evs[1] as AuditEvent;
    expect(complete['requestObject']).toEqual(body);
    expect(complete).not.toHaveProperty('responseObject');
    expect(complete['objectRef']).toEqual({
      resource: 'websites',
      namespace: NS,
      name: 'kubia',
      uid: current.body.metadata.uid,
      apiGroup: 'extensions.example.com',
      apiVersion: 'v1alpha1',
      resourceVersion: current.body.metadata.resourceVersion,
    });
  });

  it('an impersonated patch: user is who authenticated, impersonatedUser who it ran as, requestObject the patch', async () => {
    const patch = { metadata: { labels: { tier: 'web' } } };
    const r = await call(admin, `${coll()}/kubia`, 'PATCH', JSON.stringify(patch), {
      'content-type': 'application/merge-patch+json',
      'impersonate-user': 'bob',
      'impersonate-group': 'devs',
    });
    expect(r.status).toBe(200);
    const evs = await eventsOf(r.headers['audit-id']);
    const [received, complete] = evs as [AuditEvent, AuditEvent];
    // RequestReceived is written before the impersonation filter runs (kube's handler chain order).
    expect(received['user']).toEqual(ADMIN_USER);
    expect(received).not.toHaveProperty('impersonatedUser');
    expect(complete).toMatchObject({
      verb: 'patch',
      user: ADMIN_USER,
      impersonatedUser: { username: 'bob', groups: ['devs', 'system:authenticated'] },
      authenticationMetadata: { impersonationConstraint: 'impersonate:user-info' },
      requestObject: patch,
      responseObject: withoutManagedFields(r.body),
      responseStatus: { metadata: {}, code: 200 },
    });
  });

  it('a refused impersonation: 403 with its Status, no impersonated user, no authorization decision', async () => {
    const r = await call(alice, coll(), 'POST', website('by-bob'), { 'impersonate-user': 'bob' });
    expect(r.status).toBe(403);
    const evs = await eventsOf(r.headers['audit-id']);
    const complete = evs.at(-1) as AuditEvent;
    expect(complete).toMatchObject({
      stage: 'ResponseComplete',
      user: { username: 'alice', groups: ['system:authenticated'] },
      responseStatus: { status: 'Failure', reason: 'Forbidden', code: 403, message: r.body.message },
    });
    expect(complete).not.toHaveProperty('impersonatedUser');
    expect(complete).not.toHaveProperty('annotations');
    // The handler never ran: no request object although the level is RequestResponse.
    expect(complete).not.toHaveProperty('requestObject');
  });

  it('a delete at RequestResponse: DeleteOptions as the request object, the deleted object as the response', async () => {
    const opts = { propagationPolicy: 'Background' };
    const r = await call(admin, `${coll()}/kubia`, 'DELETE', opts);
    expect(r.status).toBe(200);
    const complete = (await eventsOf(r.headers['audit-id'])).at(-1) as AuditEvent;
    expect(complete).toMatchObject({
      verb: 'delete',
      requestObject: opts,
      responseObject: withoutManagedFields(r.body),
      responseStatus: { metadata: {}, code: 200 },
    });
  });

  it('level None writes nothing: a rule on resourceNames, and the health paths', async () => {
    const created = await call(admin, coll(), 'POST', website('quiet'));
    expect(created.status).toBe(201);
    const get = await call(admin, `${coll()}/quiet`);
    const patch = await call(admin, `${coll()}/quiet`, 'PATCH', JSON.stringify({ spec: { replicas: 2 } }), { 'content-type': 'application/merge-patch+json' });
    const health = await call(anonymous, `${server.url}/healthz`);
    expect([get.status, patch.status, health.status]).toEqual([200, 200, 200]);
    await settle();
    const ids = new Set(readEvents().map((e) => e['auditID']));
    for (const r of [get, patch, health]) {
      expect(typeof r.headers['audit-id']).toBe('string');
      expect(ids.has(r.headers['audit-id'])).toBe(false);
    }
    // The create has no name in its URL, so the resourceNames rule does not match it (as in kube).
    expect(ids.has(created.headers['audit-id'])).toBe(true);
  });

  it('a watch: RequestReceived, ResponseStarted when the stream starts, ResponseComplete when it ends', async () => {
    const res = await request(`${coll()}?watch=1&timeoutSeconds=1`, { dispatcher: admin });
    expect(res.statusCode).toBe(200);
    const id = res.headers['audit-id'];
    // Written while the stream is still open.
    const started = await eventsOf(id, 'ResponseStarted');
    expect(started.map((e) => e['stage'])).toEqual(['RequestReceived', 'ResponseStarted']);
    await res.body.text();
    const evs = await eventsOf(id);
    expect(evs.map((e) => e['stage'])).toEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    for (const e of evs) expect(e).toMatchObject({ level: 'Metadata', verb: 'watch', objectRef: { resource: 'websites', namespace: NS } });
    expect(evs[1]?.['responseStatus']).toEqual({ metadata: {}, code: 200 });
    expect(evs[2]?.['responseStatus']).toEqual({ metadata: {}, code: 200 });
    expect(evs[2]?.['stageTimestamp'] >= evs[1]?.['stageTimestamp']).toBe(true);
  });

  it('a WebSocket watch: ResponseStarted with 101 once the upgrade begins (kube records its Hijack as 101)', async () => {
    const ws = new WebSocket(`${coll().replace('https:', 'wss:')}?watch=1&timeoutSeconds=1&labelSelector=ws-audit`, {
      ca: readFileSync(join(server.certDir, 'ca.crt'), 'utf8'),
      cert: readFileSync(join(server.certDir, 'admin.crt'), 'utf8'),
      key: readFileSync(join(server.certDir, 'admin.key'), 'utf8'),
      origin: server.url,
    });
    await new Promise<void>((resolve, reject) => {
      ws.on('close', () => resolve());
      ws.on('error', reject);
    });
    let evs: AuditEvent[] = [];
    for (let i = 0; i < 200 && evs.length < 3; i++) {
      evs = readEvents().filter((e) => String(e['requestURI']).includes('labelSelector=ws-audit'));
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(evs.map((e) => [e['stage'], e['responseStatus']?.code])).toEqual([
      ['RequestReceived', undefined],
      ['ResponseStarted', 101],
      ['ResponseComplete', 101],
    ]);
    expect(new Set(evs.map((e) => e['auditID'])).size).toBe(1);
  });

  it('a request without credentials: one ResponseStarted event with an empty user and the 401', async () => {
    const r = await call(anonymous, coll());
    expect(r.status).toBe(401);
    const evs = await eventsOf(r.headers['audit-id'], 'ResponseStarted');
    expect(evs).toHaveLength(1);
    expect(evs[0]).toMatchObject({
      stage: 'ResponseStarted',
      level: 'Metadata',
      verb: 'list',
      user: {},
      responseStatus: { metadata: {}, status: 'Failure', reason: 'Unauthorized', code: 401 },
    });
    // A watch too: one event, no second ResponseStarted when the 401's headers go out.
    const w = await call(anonymous, `${coll()}?watch=1`);
    expect(w.status).toBe(401);
    await settle();
    expect(
      readEvents()
        .filter((e) => e['auditID'] === w.headers['audit-id'])
        .map((e) => [e['stage'], e['verb']]),
    ).toEqual([['ResponseStarted', 'watch']]);
  });

  it("the Audit-ID a client (or kube-apiserver's proxy) sends is kept, in the response and the events", async () => {
    const r = await call(admin, `${coll()}/quiet`, 'PATCH', JSON.stringify({ spec: { replicas: 3 } }), {
      'content-type': 'application/merge-patch+json',
      'audit-id': 'from-the-aggregator-1',
    });
    expect(r.headers['audit-id']).toBe('from-the-aggregator-1');
    const r2 = await call(admin, `${coll()}/gone`, 'GET', undefined, { 'audit-id': 'from-the-aggregator-2' });
    expect(r2.headers['audit-id']).toBe('from-the-aggregator-2');
    expect((await eventsOf('from-the-aggregator-2')).map((e) => e['stage'])).toEqual(['ResponseComplete']);
  });

  it('every line of the file is one audit.k8s.io/v1 Event', async () => {
    // Once nothing more is being written: then the file ends with a whole line.
    await settle();
    const lines = readFileSync(logPath, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    for (const l of lines.slice(0, -1)) expect(JSON.parse(l)).toMatchObject({ kind: 'Event', apiVersion: 'audit.k8s.io/v1' });
  });

  it('/metrics counts events and levels', async () => {
    const text = (await call(admin, `${server.url}/metrics`)).text;
    const events = Number(/^apiserver_audit_event_total (\d+)$/m.exec(text)?.[1]);
    expect(events).toBeGreaterThanOrEqual(readEvents().length);
    expect(text).toMatch(/^apiserver_audit_level_total\{level="None"\} [1-9]\d*$/m);
    expect(text).toMatch(/^apiserver_audit_error_total\{plugin="log"\} 0$/m);
  });
});

describe('audit log failures and stdout', () => {
  it.skipIf(process.platform !== 'linux')('a log that cannot be written (a full device) never fails a request: the failures are counted', async () => {
    const dir = tempDir('ws-audit-full-');
    writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n');
    const s = await startServer({ args: ['--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', '/dev/full'] });
    const agent = adminAgent(s.certDir);
    try {
      const created = await call(agent, `${s.url}${API}/namespaces/default/websites`, 'POST', website('full'));
      expect(created.status).toBe(201);
      expect(created.headers['audit-id']).toBeTypeOf('string');
      expect((await call(agent, `${s.url}${API}/namespaces/default/websites/full`)).status).toBe(200);
      let text = '';
      for (let i = 0; i < 50 && !/^apiserver_audit_error_total\{plugin="log"\} [1-9]/m.test(text); i++) {
        await new Promise((r) => setTimeout(r, 50));
        text = (await call(agent, `${s.url}/metrics`)).text;
      }
      expect(text).toMatch(/^apiserver_audit_error_total\{plugin="log"\} [1-9]\d*$/m);
      // The log line comes through the child's stdout, which may trail the metrics answer.
      await vi.waitFor(() => expect(s.logs()).toContain("Error in audit plugin 'log'"), { timeout: 5000, interval: 25 });
    } finally {
      await agent.close();
      await s.stop();
    }
  });

  it('--audit-log-path - writes the events to stdout', async () => {
    const dir = tempDir('ws-audit-stdout-');
    writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  verbs: [create]\n');
    const s = await startServer({ args: ['--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', '-'] });
    const agent = adminAgent(s.certDir);
    try {
      const r = await call(agent, `${s.url}${API}/namespaces/default/websites`, 'POST', website('out'));
      expect(r.status).toBe(201);
      const mine = () =>
        completeLines(s.logs())
          .filter((l) => l.includes(`"auditID":"${r.headers['audit-id']}"`))
          .map((l) => JSON.parse(l) as AuditEvent);
      for (let i = 0; i < 100 && mine().length < 2; i++) await new Promise((res) => setTimeout(res, 25));
      expect(mine().map((e) => [e['kind'], e['stage']])).toEqual([
        ['Event', 'RequestReceived'],
        ['Event', 'ResponseComplete'],
      ]);
    } finally {
      await agent.close();
      await s.stop();
    }
  });

  it("an invalid policy stops the start with kube-apiserver's error", async () => {
    const dir = tempDir('ws-audit-bad-');
    writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Loud\n');
    await expect(startServer({ args: ['--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', join(dir, 'a.log')] })).rejects.toThrow(
      `loading audit policy file: rules[0].level: Unsupported value: "Loud": supported values: "None", "Metadata", "Request", "RequestResponse": from file ${join(dir, 'policy.yaml')}`,
    );
  });
});
