/**
 * Smoke test of the e2e control plane itself (test/e2e/plane.mjs): certificates, token users, the
 * request-header setup kube-apiserver publishes for aggregated servers, and the two controllers the suite
 * relies on (namespace deletion, garbage collection). Runs only under the e2e vitest config.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildBinaries, startControlPlane, type ControlPlane } from './plane.mjs';

const run = promisify(execFile);

let plane: ControlPlane;

/** kubectl runs kubectl with a kubeconfig and returns stdout, or the error's stderr when allowFail. */
async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const p = run('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });
  if (input !== undefined) {
    p.child.stdin?.end(input);
  }
  return (await p).stdout;
}

/** kubectlFails runs kubectl expecting failure and returns its stderr. */
async function kubectlFails(kubeconfig: string, args: string[]): Promise<string> {
  try {
    await kubectl(kubeconfig, args);
  } catch (e) {
    return String((e as { stderr?: string }).stderr ?? e);
  }
  throw new Error(`kubectl ${args.join(' ')} succeeded`);
}

/** eventually retries fn until it stops throwing or the deadline passes. */
async function eventually(fn: () => Promise<void>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** whoami asks kube-apiserver who a raw HTTPS request is, optionally with a client cert and extra headers. */
function whoami(cert: { certFile: string; keyFile: string } | undefined, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = request(
      `${plane.server}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      {
        method: 'POST',
        ca: readFileSync(plane.caFile),
        ...(cert ? { cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) } : {}),
        headers: { 'Content-Type': 'application/json', ...headers },
      },
      (r) => {
        let body = '';
        r.on('data', (c: Buffer) => (body += c.toString()));
        r.on('end', () => res({ status: r.statusCode ?? 0, body }));
      },
    );
    req.on('error', rej);
    req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
  });
}

beforeAll(async () => {
  plane = await startControlPlane({ binDir: process.env.E2E_BIN_DIR ?? buildBinaries() });
}, 900_000);

afterAll(async () => {
  await plane?.stop({ remove: true });
});

describe('e2e control plane', () => {
  it('runs the pinned Kubernetes version, and the suite drives kubectl of that version', async () => {
    const pinned = readFileSync(`${plane.binDir}/kubernetes-version`, 'utf8').trim();
    expect(pinned).toMatch(/^v1\.37\.\d+$/);
    const server = JSON.parse(await kubectl(plane.kubeconfig, ['version', '-o', 'json'])) as {
      clientVersion: { gitVersion: string };
      serverVersion: { gitVersion: string };
    };
    expect(server.serverVersion.gitVersion).toBe(pinned);
    expect(server.clientVersion.gitVersion).toBe(pinned);
  });

  it('serves the admin token user and the system namespaces', async () => {
    const out = await kubectl(plane.kubeconfig, ['get', 'ns', '-o', 'name']);
    expect(out).toContain('namespace/default');
    expect(out).toContain('namespace/kube-system');
  });

  it('publishes the request-header configuration for aggregated servers', async () => {
    const out = await kubectl(plane.kubeconfig, ['get', 'configmap', '-n', 'kube-system', 'extension-apiserver-authentication', '-o', 'json']);
    const data = (JSON.parse(out) as { data: Record<string, string> }).data;
    expect(data['client-ca-file']).toBe(readFileSync(plane.clientCAFile, 'utf8'));
    expect(data['requestheader-client-ca-file']).toBe(readFileSync(plane.frontProxy.caFile, 'utf8'));
    expect(JSON.parse(data['requestheader-allowed-names'] ?? '')).toEqual(['front-proxy-client']);
    expect(JSON.parse(data['requestheader-username-headers'] ?? '')).toEqual(['X-Remote-User']);
    expect(JSON.parse(data['requestheader-group-headers'] ?? '')).toEqual(['X-Remote-Group']);
    expect(JSON.parse(data['requestheader-extra-headers-prefix'] ?? '')).toEqual(['X-Remote-Extra-']);
    expect(JSON.parse(data['requestheader-uid-headers'] ?? '')).toEqual(['X-Remote-Uid']);
  });

  it('trusts X-Remote-User only from the front-proxy client certificate', async () => {
    const headers = { 'X-Remote-User': 'alice', 'X-Remote-Group': 'team-a', 'X-Remote-Uid': 'alice-uid' };
    const spoofed = await whoami(undefined, headers);
    // Without the certificate the headers are ignored: the request is anonymous, which RBAC refuses.
    expect(spoofed.status).toBe(403);
    expect(spoofed.body).toContain('system:anonymous');
    const proxied = await whoami(plane.frontProxy, headers);
    expect(proxied.status).toBe(201);
    const user = (JSON.parse(proxied.body) as { status: { userInfo: Record<string, unknown> } }).status.userInfo;
    expect(user).toMatchObject({ username: 'alice', uid: 'alice-uid' });
    expect(user.groups).toEqual(expect.arrayContaining(['team-a', 'system:authenticated']));
  });

  it('gives token users without bindings nothing, and RBAC bindings take effect', async () => {
    expect(await kubectlFails(plane.tokens.viewer.kubeconfig, ['get', 'pods'])).toMatch(/Forbidden.*User "viewer" cannot list resource "pods"/);
    expect(await kubectlFails(plane.tokens.nobody.kubeconfig, ['get', 'pods'])).toMatch(/Forbidden/);
    await kubectl(plane.kubeconfig, ['create', 'rolebinding', 'smoke-viewer', '--clusterrole=view', '--user=viewer']);
    await eventually(async () => {
      await kubectl(plane.tokens.viewer.kubeconfig, ['get', 'pods']);
    }, 10_000);
    expect(await kubectlFails(plane.tokens.viewer.kubeconfig, ['create', 'configmap', 'nope'])).toMatch(
      /forbidden: User "viewer" cannot create resource "configmaps"/,
    );
  });

  it('deletes a namespace with content (namespace controller)', async () => {
    await kubectl(plane.kubeconfig, ['create', 'namespace', 'smoke-ns']);
    await kubectl(plane.kubeconfig, ['create', 'configmap', 'inside', '-n', 'smoke-ns', '--from-literal=a=b']);
    await kubectl(plane.kubeconfig, ['delete', 'namespace', 'smoke-ns', '--wait=false']);
    await eventually(async () => {
      const err = await kubectlFails(plane.kubeconfig, ['get', 'namespace', 'smoke-ns']);
      expect(err).toMatch(/NotFound/);
    });
  });

  it('collects a dependent whose owner is deleted (garbage collector)', async () => {
    await kubectl(plane.kubeconfig, ['create', 'configmap', 'owner-a']);
    const uid = await kubectl(plane.kubeconfig, ['get', 'configmap', 'owner-a', '-o', 'jsonpath={.metadata.uid}']);
    const dependent = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'dependent-b', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-a', uid }] },
    };
    await kubectl(plane.kubeconfig, ['create', '-f', '-'], JSON.stringify(dependent));
    await kubectl(plane.kubeconfig, ['delete', 'configmap', 'owner-a']);
    await eventually(async () => {
      expect(await kubectlFails(plane.kubeconfig, ['get', 'configmap', 'dependent-b'])).toMatch(/NotFound/);
    });
  });
});
