/**
 * What generic clients walk on a standalone server, over real HTTPS and with the real kubectl on the PATH:
 * `/api`, `/api/v1` and namespace reads (so the Python and kube-rs discovery clients proceed, and kubectl tells a
 * missing Website from a missing namespace as cli-runtime resource/visitor.go Info.Get does), and `/openapi/v2` in
 * protobuf (client-go's OpenAPISchema, which `kubectl explain --output=plaintext-openapiv2` uses).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAgent, API, call, cleanupTempDirs, startServer, tempDir, website, type ServerProcess } from './helpers/server-process.js';

let server: ServerProcess;
let agent: Agent;
let work: string;

beforeAll(async () => {
  server = await startServer();
  agent = adminAgent(server.certDir);
  work = tempDir('ws-discovery-');
  const created = await call(
    agent,
    `${server.url}${API}/namespaces/team-a/websites`,
    'POST',
    website('blog', { gitRepo: 'https://github.com/luksa/kubia-website-example.git' }),
  );
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

/** kubectl runs the real kubectl against the server and resolves with what it printed (never rejects). */
function kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      args,
      { env: { ...process.env, KUBECONFIG: server.kubeconfig, KUBECACHEDIR: join(work, 'cache') }, timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

describe('core discovery roots (standalone)', () => {
  it('GET /api answers APIVersions naming v1 and the address dialled', async () => {
    const res = await call(agent, `${server.url}/api`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${server.port}` }],
    });
  });

  it('GET /api/v1 lists namespaces with the get verb only', async () => {
    const res = await call(agent, `${server.url}/api/v1`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [expect.objectContaining({ name: 'namespaces', kind: 'Namespace', verbs: ['get'] })],
    });
  });

  it('GET /api/v1/namespaces/<ns> is an Active Namespace where objects are, a kube 404 elsewhere', async () => {
    const found = await call(agent, `${server.url}/api/v1/namespaces/team-a`);
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'team-a' }, status: { phase: 'Active' } });
    const missing = await call(agent, `${server.url}/api/v1/namespaces/nowhere`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'namespaces "nowhere" not found',
      reason: 'NotFound',
      details: { name: 'nowhere', kind: 'namespaces' },
      code: 404,
    });
  });

  it('needs credentials like every other path', async () => {
    const anonymous = adminAgent(server.certDir, false);
    try {
      expect((await call(anonymous, `${server.url}/api`)).status).toBe(401);
      expect((await call(anonymous, `${server.url}/api/v1/namespaces/team-a`)).status).toBe(401);
    } finally {
      await anonymous.close();
    }
  });

  it('kubectl says which is missing: the Website in a namespace that exists, else the namespace', async () => {
    const inTeam = await kubectl('get', 'ws', 'missing', '-n', 'team-a');
    expect(inTeam.code).not.toBe(0);
    expect(inTeam.stderr.trim()).toBe('Error from server (NotFound): websites.extensions.example.com "missing" not found');
    const elsewhere = await kubectl('get', 'ws', 'missing', '-n', 'nowhere');
    expect(elsewhere.stderr.trim()).toBe('Error from server (NotFound): namespaces "nowhere" not found');
  });

  it('kubectl get ns prints the namespace as a table', async () => {
    const res = await kubectl('get', 'ns', 'team-a');
    expect(res.stderr).toBe('');
    expect(res.stdout.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+AGE$/);
    expect(res.stdout.split('\n')[1]).toMatch(/^team-a\s+Active\s+<unknown>$/);
  });
});

describe('OpenAPI v2 in protobuf', () => {
  it('kubectl explain --output=plaintext-openapiv2 prints the spec fields and their descriptions', async () => {
    const res = await kubectl('explain', 'websites.spec', '--output=plaintext-openapiv2');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^KIND:\s+Website$/m);
    expect(res.stdout).toMatch(/^VERSION:\s+extensions\.example\.com\/v1$/m);
    expect(res.stdout).toMatch(/git\s+<Object> -required-\n\s+Git is the repository the site is served from/);
    expect(res.stdout).toMatch(/replicas\s+<integer>\n\s+Replicas is the number of nginx pods/);
    // The other version's schema is in the same document (the OpenAPI v2 of every served version).
    const alpha = await kubectl('explain', 'websites.spec', '--output=plaintext-openapiv2', '--api-version=extensions.example.com/v1alpha1');
    expect(alpha.stdout).toMatch(/^VERSION:\s+extensions\.example\.com\/v1alpha1$/m);
    expect(alpha.stdout).toMatch(/gitRepo\s+<string> -required-\n\s+GitRepo is the URL of the git repository/);
  });

  it('serves client-go its Accept as protobuf, with the JSON ETag', async () => {
    const pb = await call(agent, `${server.url}/openapi/v2`, 'GET', undefined, { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' });
    const json = await call(agent, `${server.url}/openapi/v2`, 'GET', undefined, { accept: 'application/json' });
    expect(pb.status).toBe(200);
    expect(pb.headers['content-type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    expect(pb.headers.etag).toBe(json.headers.etag);
    expect(pb.body).toBeUndefined(); // not JSON
  });
});
