/**
 * Impersonation on the wire, standalone (a real server process over HTTPS, and the real kubectl's --as/--as-group):
 * system:masters may impersonate anyone and the request then runs as that user; any other user gets kube-apiserver
 * 1.37's 403 (constrained impersonation, k8s.io/apiserver pkg/endpoints/filters/impersonation); invalid header
 * combinations are its 400; authentication comes first (401).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLeaf } from '../src/certs/issue.js';
import { adminAgent, API, call, cleanupTempDirs, startServer, tempDir, website, type ServerProcess } from './helpers/server-process.js';

let server: ServerProcess;
let admin: Agent;
let alice: Agent;
/** A kubeconfig for alice: a client certificate from the server's CA, CN=alice, no groups. */
let aliceKubeconfig: string;
const path = (ns: string) => `${server.url}${API}/namespaces/${ns}/websites`;
const status = (code: number, reason: string, message: string, details?: object) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  ...(details ? { details } : {}),
  code,
});

beforeAll(async () => {
  server = await startServer({ args: ['--log-level', 'debug'] });
  admin = adminAgent(server.certDir);
  const ca = {
    cert: forge.pki.certificateFromPem(readFileSync(join(server.certDir, 'ca.crt'), 'utf8')),
    key: forge.pki.privateKeyFromPem(readFileSync(join(server.certDir, 'ca.key'), 'utf8')),
  };
  const now = new Date();
  const leaf = createLeaf(ca, now, new Date(now.getTime() + 86_400_000), { subject: [{ shortName: 'CN', value: 'alice' }], extKeyUsage: { clientAuth: true } });
  alice = new Agent({ connect: { ca: readFileSync(join(server.certDir, 'ca.crt'), 'utf8'), cert: leaf.certPem, key: leaf.keyPem } });
  // The admin kubeconfig with alice's credentials in place of admin's.
  const kc = readFileSync(server.kubeconfig, 'utf8')
    .replace(/client-certificate-data: .*/, `client-certificate-data: ${Buffer.from(leaf.certPem).toString('base64')}`)
    .replace(/client-key-data: .*/, `client-key-data: ${Buffer.from(leaf.keyPem).toString('base64')}`);
  aliceKubeconfig = join(tempDir('ws-alice-'), 'kubeconfig');
  writeFileSync(aliceKubeconfig, kc, { mode: 0o600 });
});
afterAll(async () => {
  await admin?.close();
  await alice?.close();
  await server?.stop();
  cleanupTempDirs();
});

function kubectl(kubeconfig: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    p.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** logLines are the server's complete JSON log lines with this message (a line still being written is left out). */
const logLines = (msg: string) =>
  server
    .logs()
    .split('\n')
    .slice(0, -1)
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((j) => j.msg === msg);
/**
 * expectLogged waits for a line like this: the request line is written once the answer is sent, and the child's stdout
 * reaches this process through a pipe, so on a busy machine a line may arrive after the client has its answer.
 */
const expectLogged = (msg: string, line: Record<string, unknown>) =>
  vi.waitFor(() => expect(logLines(msg)).toContainEqual(expect.objectContaining(line)), { timeout: 10_000, interval: 25 });

describe('system:masters impersonates', () => {
  it('runs the request as the impersonated user (the request log and the impersonation log name bob)', async () => {
    const r = await call(admin, path('imp'), 'POST', website('by-bob'), { 'impersonate-user': 'bob' });
    expect(r.status).toBe(201);
    expect(r.body.metadata.name).toBe('by-bob');
    const list = await call(admin, path('imp'), 'GET', undefined, {
      'impersonate-user': 'bob',
      'impersonate-group': 'devs',
      'impersonate-uid': '42',
      'impersonate-extra-example.com%2fteam': 'web',
    });
    expect(list.status).toBe(200);
    expect(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['by-bob']);
    // kube's httplog line "<requestor> is impersonating <user>", and the request's own log line names the new user.
    await expectLogged('impersonating', { requestor: 'admin', user: 'bob', constraint: 'impersonate:user-info' });
    await expectLogged('request', { method: 'POST', url: `${API}/namespaces/imp/websites`, user: 'bob', code: 201 });
  });

  it('kubectl --as/--as-group works', async () => {
    const r = await kubectl(server.kubeconfig, [
      'get',
      'ws',
      'by-bob',
      '-n',
      'imp',
      '-o',
      'name',
      '--as',
      'system:serviceaccount:imp:builder',
      '--as-group',
      'devs',
    ]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('website.extensions.example.com/by-bob\n');
    // Groups asked for with a service account: only legacy impersonation applies.
    await expectLogged('impersonating', { requestor: 'admin', user: 'system:serviceaccount:imp:builder', constraint: '' });
  });
});

describe('anyone else may not impersonate (standalone)', () => {
  it('alice may do everything herself', async () => {
    expect((await call(alice, path('imp'))).status).toBe(200);
  });

  it('but impersonating is 403, worded as kube-apiserver 1.37 words it, and nothing is created', async () => {
    const r = await call(alice, path('imp'), 'POST', website('as-bob'), { 'impersonate-user': 'bob' });
    expect(r.status).toBe(403);
    expect(r.body).toEqual(
      status(
        403,
        'Forbidden',
        'users.authentication.k8s.io "bob" is forbidden: User "alice" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope',
        { name: 'bob', group: 'authentication.k8s.io', kind: 'users' },
      ),
    );
    expect((await call(admin, `${path('imp')}/as-bob`)).status).toBe(404);

    const sa = await call(alice, path('imp'), 'GET', undefined, { 'impersonate-user': 'system:serviceaccount:imp:builder' });
    expect(sa.body).toEqual(
      status(
        403,
        'Forbidden',
        'serviceaccounts.authentication.k8s.io "builder" is forbidden: User "alice" cannot impersonate:serviceaccount resource "serviceaccounts" in API group "authentication.k8s.io" in the namespace "imp"',
        { name: 'builder', group: 'authentication.k8s.io', kind: 'serviceaccounts' },
      ),
    );
  });

  it('kubectl --as as alice prints that error', async () => {
    const r = await kubectl(aliceKubeconfig, ['get', 'ws', '-n', 'imp', '--as', 'bob']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'Error from server (Forbidden): users.authentication.k8s.io "bob" is forbidden: User "alice" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope',
    );
  });
});

describe('invalid headers and order', () => {
  it("a group, uid or extra without a user is 400 for everyone, with Go's rendering of what was asked", async () => {
    for (const agent of [admin, alice]) {
      const r = await call(agent, path('imp'), 'GET', undefined, { 'impersonate-group': 'devs' });
      expect(r.body).toEqual(
        status(
          400,
          'BadRequest',
          'requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"devs"}, Extra:map[string][]string(nil)} without impersonating a user name',
        ),
      );
    }
    const uid = await call(admin, path('imp'), 'GET', undefined, { 'impersonate-uid': '42' });
    expect(uid.body.message).toBe(
      'requested &user.DefaultInfo{Name:"", UID:"42", Groups:[]string(nil), Extra:map[string][]string(nil)} without impersonating a user name',
    );
  });

  it('without a credential the answer is 401 whatever the impersonation headers say', async () => {
    const anonymous = adminAgent(server.certDir, false);
    try {
      const r = await call(anonymous, path('imp'), 'GET', undefined, { 'impersonate-user': 'bob', 'impersonate-group': 'system:masters' });
      expect(r.status).toBe(401);
    } finally {
      await anonymous.close();
    }
  });
});
