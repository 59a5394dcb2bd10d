/**
 * @module cluster/access.test
 * Mode selection from the options (auto = delegated exactly when a cluster is configured) and the assembled delegated
 * chain against a fake API server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCA, type TestCert } from '../../test/helpers/auth-certs.js';
import { startFakeKube, type FakeKube } from '../../test/helpers/fake-kube.js';
import { allowAuthenticated } from '../auth/authorizer.js';
import { setupAccess, type Access } from './access.js';

const TOKENREVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
const logger = pino({ level: 'silent' });

let kube: FakeKube;
let dir: string;
let kubeconfigPath: string;
let ownCA: TestCert;
const started: Access[] = [];
beforeAll(async () => {
  ownCA = makeCA('website-apiserver-ca');
  kube = await startFakeKube();
  kube.collection('/api/v1/namespaces', 'NamespaceList');
  kube.collection('/api/v1/namespaces/kube-system/configmaps', 'ConfigMapList');
  dir = mkdtempSync(join(tmpdir(), 'access-test-'));
  kubeconfigPath = join(dir, 'kubeconfig');
  writeFileSync(kubeconfigPath, kube.kubeconfig.exportConfig());
});
afterAll(async () => {
  for (const a of started) await a.stop();
  await kube?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const setup = async (o: Partial<Parameters<typeof setupAccess>[0]>) => {
  const a = await setupAccess({ kubeconfig: kubeconfigPath, authenticationMode: 'auto', authorizationMode: 'auto', ownCA: ownCA.pem, logger, ...o });
  started.push(a);
  return a;
};
/** bearer is a request without a client certificate carrying a bearer token. */
const bearer = (token: string) =>
  ({ raw: { socket: {}, headers: {}, headersDistinct: {} }, headers: { authorization: `Bearer ${token}` } }) as unknown as FastifyRequest;

describe('setupAccess', () => {
  it('delegates both with a kubeconfig in auto mode, and checks readiness of both informers', async () => {
    const a = await setup({});
    expect(a.describe).toEqual({ authentication: 'delegated', authorization: 'delegated', cluster: kube.kubeconfig.getCurrentCluster()?.server });
    expect(a.authorizer).not.toBe(allowAuthenticated);
    expect(a.admission).toBeDefined();
    expect(a.readiness.map((r) => r.name).sort()).toEqual(['delegated-authentication-config', 'namespace-informer-synced']);
  });

  it('lets each mode be forced to standalone', async () => {
    const a = await setup({ authenticationMode: 'standalone', authorizationMode: 'standalone' });
    expect(a.describe).toMatchObject({ authentication: 'standalone', authorization: 'standalone' });
    expect(a.authorizer).toBe(allowAuthenticated);
    expect(a.authentication.trustedCAs()).toEqual([ownCA.pem.trim()]);
    const mixed = await setup({ authorizationMode: 'standalone' });
    expect(mixed.describe).toMatchObject({ authentication: 'delegated', authorization: 'standalone' });
  });

  it('refuses delegated modes without a cluster', async () => {
    // Outside a pod (no service-account token), no kubeconfig means no cluster.
    if (process.env['KUBERNETES_SERVICE_HOST']) return;
    await expect(setupAccess({ kubeconfig: undefined, authenticationMode: 'delegated', authorizationMode: 'auto', ownCA: ownCA.pem, logger })).rejects.toThrow(
      '--kubeconfig',
    );
    await expect(setupAccess({ kubeconfig: undefined, authenticationMode: 'auto', authorizationMode: 'delegated', ownCA: ownCA.pem, logger })).rejects.toThrow(
      '--kubeconfig',
    );
    const standalone = await setupAccess({ kubeconfig: undefined, authenticationMode: 'auto', authorizationMode: 'auto', ownCA: ownCA.pem, logger });
    expect(standalone.describe).toEqual({ authentication: 'standalone', authorization: 'standalone', cluster: undefined });
  });

  it('authenticates a bearer token through TokenReview, asking once per TTL', async () => {
    kube.onPost(TOKENREVIEWS, (body) => ({
      code: 201,
      body: { ...(body as object), status: { authenticated: true, user: { username: 'prom', groups: ['monitoring'] } } },
    }));
    const a = await setup({});
    expect(await a.authentication.authenticate(bearer('t-1'))).toEqual({ name: 'prom', groups: ['monitoring', 'system:authenticated'] });
    expect(await a.authentication.authenticate(bearer('t-1'))).toEqual({ name: 'prom', groups: ['monitoring', 'system:authenticated'] });
    expect(kube.posted(TOKENREVIEWS)).toHaveLength(1);
  });

  // The delegating authenticator builds its token cache with cacheErrs=false
  // (authenticatorfactory/delegating.go: cache.New(tokenAuth, false, CacheTTL, CacheTTL)): a failed TokenReview is asked
  // again on the next request. access.ts turns the error into "not authenticated" inside the cached function, so the
  // failure is cached for 10 s. Expected to fail until fixed (see the report); then drop `.fails`.
  it('asks TokenReview again after it failed, instead of caching the failure', async () => {
    let fail = true;
    kube.onPost(TOKENREVIEWS, (body) =>
      fail
        ? { code: 500, body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: 'etcd down' } }
        : { code: 201, body: { ...(body as object), status: { authenticated: true, user: { username: 'prom', groups: [] } } } },
    );
    const a = await setup({});
    expect(await a.authentication.authenticate(bearer('t-2'))).toBeUndefined();
    fail = false;
    expect((await a.authentication.authenticate(bearer('t-2')))?.name).toBe('prom');
  });
});
