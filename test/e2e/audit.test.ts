/**
 * Audit logging behind a real kube-apiserver 1.37: our server restarted with `--audit-policy-file` and
 * `--audit-log-path`, requests sent to kube-apiserver. Its proxy forwards its own Audit-ID (k8s.io/apiserver
 * pkg/util/proxy NewRequestForProxy), so the `Audit-Id` the client gets from kube-apiserver names our events too; the
 * user is the one kube-apiserver asserts in X-Remote-* (an impersonation is resolved there, so ours records the
 * resulting user, not an impersonatedUser); sourceIPs are the client's X-Forwarded-For, then the address kube-apiserver's
 * reverse proxy appended, then kube-apiserver's own connection (utilnet.SourceIPs drops it when it repeats the last).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suffix } from './helpers-access.js';
import { kubectlOk, waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { startWebsiteServer, stopWebsiteServer } from './harness/website-server.js';

const env = e2e();
const admin = env.kubeconfig.admin;
const NS = `audit-${suffix()}`;
const PATH = `/apis/extensions.example.com/v1alpha1/namespaces/${NS}/websites`;
const dir = mkdtempSync(join(tmpdir(), 'website-e2e-audit-'));
const logPath = join(dir, 'audit.log');
const kube = new Agent({ connect: { ca: readFileSync(env.caFile, 'utf8') } });
const bearer = { authorization: `Bearer ${env.tokens.admin}` };

type AuditEvent = Record<string, any>;
const spec = (args: string[]) => ({ args, logFile: env.website.logFile, pidFile: env.website.pidFile, url: env.website.url });

async function serving(): Promise<void> {
  await waitFor(
    'websites reachable through kube-apiserver',
    async () => {
      await kubectlOk(admin, ['get', 'websites', '-A', '-o', 'name'], { timeoutMs: 10_000 });
      return true;
    },
    90_000,
    500,
  );
}

/**
 * auditId is the response's Audit-Id. Through the aggregator it comes twice, equal: kube-apiserver sets its own
 * (WithAuditInit) and its proxy adds ours, which, as any k8s.io/apiserver-based server, sets it on every response.
 */
function auditId(h: Record<string, string | string[] | undefined>): string {
  const values = String(h['audit-id'])
    .split(',')
    .map((v) => v.trim());
  expect(new Set(values).size).toBe(1);
  return values[0] as string;
}

async function eventsOf(id: string, stages: number): Promise<AuditEvent[]> {
  return waitFor(
    `${stages} audit events of ${id}`,
    () => {
      // The log is being written: a last line without its newline is not finished yet.
      const text = readFileSync(logPath, 'utf8');
      const evs = text
        .slice(0, text.lastIndexOf('\n') + 1)
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as AuditEvent)
        .filter((e) => e['auditID'] === id);
      return evs.length >= stages ? evs : undefined;
    },
    15_000,
    50,
  );
}

beforeAll(async () => {
  writeFileSync(
    join(dir, 'policy.yaml'),
    [
      'apiVersion: audit.k8s.io/v1',
      'kind: Policy',
      'rules:',
      '- level: RequestResponse',
      '  resources: [{group: extensions.example.com, resources: [websites]}]',
      '- level: None',
      '',
    ].join('\n'),
  );
  await stopWebsiteServer(env.website.pidFile);
  await startWebsiteServer(spec([...env.website.args, '--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', logPath]));
  await serving();
  await kubectlOk(admin, ['create', 'namespace', NS]);
});

afterAll(async () => {
  // Later files get the server as the global setup started it.
  await stopWebsiteServer(env.website.pidFile);
  await startWebsiteServer(spec(env.website.args));
  await serving();
  await kubectlOk(admin, ['delete', 'namespace', NS, '--wait=false', '--ignore-not-found']);
  await kube.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('audit behind kube-apiserver', () => {
  it("a create: kube-apiserver's Audit-Id names our events, with the user it asserts and the forwarded source IPs", async () => {
    const who = await request(`${env.server}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
      dispatcher: kube,
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    });
    const userInfo = ((await who.body.json()) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
    const body = {
      apiVersion: 'extensions.example.com/v1alpha1',
      kind: 'Website',
      metadata: { name: 'audited' },
      spec: { gitRepo: 'https://example.com/site.git' },
    };
    const r = await request(`${env.server}${PATH}`, {
      dispatcher: kube,
      method: 'POST',
      body: JSON.stringify(body),
      headers: { ...bearer, 'content-type': 'application/json', 'x-forwarded-for': '10.9.8.7', 'user-agent': 'audit-e2e/1.0' },
    });
    const created = (await r.body.json()) as Record<string, any>;
    expect(r.statusCode).toBe(201);
    const id = auditId(r.headers);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const evs = await eventsOf(id, 2);
    expect(evs.map((e) => e['stage'])).toEqual(['RequestReceived', 'ResponseComplete']);
    const complete = evs[1] as AuditEvent;
    expect(complete['user']['username']).toBe(userInfo.username);
    expect(complete['user']['groups']).toEqual(expect.arrayContaining(userInfo.groups));
    expect(complete).not.toHaveProperty('impersonatedUser');
    expect(complete['sourceIPs'][0]).toBe('10.9.8.7');
    expect(complete['sourceIPs'].at(-1)).toBe('127.0.0.1');
    expect(complete).toMatchObject({
      verb: 'create',
      userAgent: 'audit-e2e/1.0',
      requestURI: PATH,
      objectRef: { resource: 'websites', namespace: NS, name: 'audited', apiGroup: 'extensions.example.com', apiVersion: 'v1alpha1' },
      responseStatus: { metadata: {}, code: 201 },
      requestObject: body,
      responseObject: created,
    });
  });

  it('an impersonated request: kube-apiserver resolves it, we record the resulting user', async () => {
    const r = await request(`${env.server}${PATH}/audited`, {
      dispatcher: kube,
      headers: { ...bearer, 'impersonate-user': 'audit-bob', 'impersonate-group': 'system:masters' },
    });
    await r.body.text();
    expect(r.statusCode).toBe(200);
    const evs = await eventsOf(auditId(r.headers), 2);
    expect(evs[1]?.['user']).toEqual({ username: 'audit-bob', groups: ['system:masters', 'system:authenticated'] });
    expect(evs[1]).not.toHaveProperty('impersonatedUser');
  });

  it('a watch through the aggregator: RequestReceived, ResponseStarted, ResponseComplete under one ID', async () => {
    const r = await request(`${env.server}${PATH}?watch=1&timeoutSeconds=1`, { dispatcher: kube, headers: bearer });
    expect(r.statusCode).toBe(200);
    await r.body.text();
    const evs = await eventsOf(auditId(r.headers), 3);
    expect(evs.map((e) => [e['stage'], e['verb'], e['responseStatus']?.code])).toEqual([
      ['RequestReceived', 'watch', undefined],
      ['ResponseStarted', 'watch', 200],
      ['ResponseComplete', 'watch', 200],
    ]);
  });
});
