/**
 * @module observability/audit.test
 * The Auditor's hooks on a bare fastify app (app.inject): Audit-Id with auditing off (audit_init.go runs in every
 * kube-apiserver), the Panic stage for a bug (filters/audit.go's recover) but not for a plain Error, and an
 * authorizer failure, which kube answers as an InternalError with the `internal error` reason, not as a panic.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { notFound } from '../apis/meta/errors.js';
import { requestAttributes } from '../auth/request-info.js';
import { Auditor } from './audit.js';
import { AuditLog } from './audit-log.js';
import { parsePolicy, PolicyEvaluator } from './audit-policy.js';

const logger = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'auditor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const BASE = '/apis/g.example.com/v1/namespaces/ns/things';

async function appWith(auditor: Auditor, authorizerFails = false): Promise<FastifyInstance> {
  const app = Fastify();
  auditor.install(app);
  app.addHook('onRequest', async (req) => {
    auditor.authenticated(req, { name: 'tim', groups: ['humans'] }, requestAttributes(req.method, req.url));
    if (authorizerFails) {
      auditor.authorized(req, undefined);
      throw new Error('connection refused');
    }
    auditor.authorized(req, { allowed: true, reason: 'RBAC: allowed' });
  });
  app.get(`${BASE}/boom`, async () => {
    throw new TypeError("Cannot read properties of undefined (reading 'x')");
  });
  // What the storage's lmdb throws when no reader slot is left (issue 24): a plain Error, not a bug.
  app.get(`${BASE}/readers-full`, async () => {
    throw new Error('MDB_READERS_FULL: Environment maxreaders limit reached');
  });
  app.get(`${BASE}/missing`, async () => {
    throw notFound({ group: 'g.example.com', resource: 'things' }, 'missing');
  });
  app.setErrorHandler((err: Error, _req, reply) => {
    const code = (err as { code?: number }).code;
    const status = typeof code === 'number' ? code : 500;
    reply
      .code(status)
      .type('application/json')
      .send({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: err.message,
        reason: status === 500 ? 'InternalError' : 'NotFound',
        code: status,
      });
  });
  await app.ready();
  return app;
}

async function auditorWriting(path: string): Promise<{ auditor: Auditor; log: AuditLog }> {
  const log = await AuditLog.open({ path, maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0 }, logger);
  const policy = new PolicyEvaluator(parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n'));
  return { auditor: new Auditor(policy, log, logger), log };
}

const events = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

describe('Auditor', () => {
  it("sends Audit-Id on every response even with auditing off: the client's own, else a new UUID", async () => {
    const app = await appWith(new Auditor(undefined, undefined, logger));
    const fresh = await app.inject({ method: 'GET', url: `${BASE}/missing` });
    expect(fresh.headers['audit-id']).toMatch(UUID);
    const given = await app.inject({ method: 'GET', url: `${BASE}/missing`, headers: { 'audit-id': 'abc-123' } });
    expect(given.headers['audit-id']).toBe('abc-123');
    await app.close();
  });

  it('a bug (a TypeError) ends with a Panic event instead of ResponseComplete; a Status or a plain Error does not', async () => {
    const path = join(dir, 'panic.log');
    const { auditor } = await auditorWriting(path);
    const app = await appWith(auditor);
    const boom = await app.inject({ method: 'GET', url: `${BASE}/boom` });
    const missing = await app.inject({ method: 'GET', url: `${BASE}/missing` });
    const full = await app.inject({ method: 'GET', url: `${BASE}/readers-full` });
    expect([boom.statusCode, missing.statusCode, full.statusCode]).toEqual([500, 404, 500]);
    await app.close();
    const byId = (id: unknown) => events(path).filter((e) => e['auditID'] === id);
    expect(byId(boom.headers['audit-id']).map((e) => e['stage'])).toEqual(['RequestReceived', 'Panic']);
    expect(byId(boom.headers['audit-id'])[1]?.['responseStatus']).toEqual({
      metadata: {},
      status: 'Failure',
      reason: 'InternalError',
      code: 500,
      message: "APIServer panic'd: Cannot read properties of undefined (reading 'x')",
    });
    // A plain Error from a dependency (Go's error value) is answered, not a panic: ResponseComplete with the answer.
    const fullEvents = byId(full.headers['audit-id']);
    expect(fullEvents.map((e) => e['stage'])).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(fullEvents[1]?.['responseStatus']).toEqual({
      metadata: {},
      status: 'Failure',
      reason: 'InternalError',
      code: 500,
      message: 'MDB_READERS_FULL: Environment maxreaders limit reached',
    });
    // A Status error is an answer, not a panic.
    expect(byId(missing.headers['audit-id']).map((e) => e['stage'])).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(byId(missing.headers['audit-id'])[1]?.['annotations']).toEqual({
      'authorization.k8s.io/decision': 'allow',
      'authorization.k8s.io/reason': 'RBAC: allowed',
    });
  });

  it('a failing authorizer is an InternalError answer with reason "internal error" and no decision', async () => {
    const path = join(dir, 'authz.log');
    const { auditor } = await auditorWriting(path);
    const app = await appWith(auditor, true);
    const r = await app.inject({ method: 'GET', url: `${BASE}/missing` });
    expect(r.statusCode).toBe(500);
    await app.close();
    const evs = events(path).filter((e) => e['auditID'] === r.headers['audit-id']);
    expect(evs.map((e) => e['stage'])).toEqual(['RequestReceived', 'ResponseComplete']);
    expect(evs[1]).toMatchObject({ annotations: { 'authorization.k8s.io/reason': 'internal error' }, responseStatus: { code: 500, reason: 'InternalError' } });
    expect(evs[1]?.['annotations']).not.toHaveProperty('authorization.k8s.io/decision');
  });
});
