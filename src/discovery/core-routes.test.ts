/**
 * @module discovery/core-routes.test
 * The core roots a standalone server answers (app.inject through createServer, so the authn/authz hook applies):
 * `/api` legacy and aggregated v2, `/api/v1`, namespace reads for the namespaces holding objects (kube's Namespace,
 * Table and 404 bodies), and none of it when a cluster is configured (kube-apiserver answers those there).
 */
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Authentication } from '../auth/authentication.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { RequestAttributes } from '../auth/request-info.js';
import { testKinds as kinds, ticket } from '../../test/kinds/index.js';
import { createServer } from '../server/server.js';
import { MemoryStorage } from '../storage/memory-storage.js';
import { DISCOVERY_V2_CONTENT_TYPE } from './discovery.js';

const authentication: Authentication = {
  authenticate: async (req) => (req.headers['x-user'] ? { name: String(req.headers['x-user']), groups: ['system:authenticated'] } : undefined),
  trustedCAs: () => [],
  onTrustChange: () => {},
};
const seen: RequestAttributes[] = [];
// Everyone may do everything except `reader`, who may not get namespaces.
const authorizer: Authorizer = {
  async authorize(user, a) {
    seen.push(a);
    return { allowed: !(user.name === 'reader' && a.isResourceRequest && a.resource === 'namespaces'), reason: '' };
  },
};

const storage = new MemoryStorage();
const standalone = createServer({ storage, kinds, logger: pino({ level: 'silent' }), authentication, authorizer, standalone: true });
const delegated = createServer({ storage: new MemoryStorage(), kinds, logger: pino({ level: 'silent' }), authentication, authorizer });
afterAll(async () => {
  await standalone.app.close();
  await delegated.app.close();
});

const get = (url: string, headers: Record<string, string> = {}, server = standalone) =>
  server.app.inject({ method: 'GET', url, headers: { 'x-user': 'admin', ...headers } });
// A namespace holding an object of any namespaced kind exists (here a test-only kind's).
const objectIn = (namespace: string, name: string) =>
  storage.create({ resource: 'testing.example.com/flighttickets', namespace, name }, ticket(name, namespace));

describe('GET /api', () => {
  it('answers APIVersions with v1 and the address the client dialled (legacy.go)', async () => {
    const res = await get('/api', { host: 'api.example.test:6443' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json()).toEqual({
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: 'api.example.test:6443' }],
    });
  });

  it('answers the aggregated discovery Accept with the unnamed core group, an ETag and 304', async () => {
    const accept = `${DISCOVERY_V2_CONTENT_TYPE},application/json`;
    const res = await get('/api', { accept });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(DISCOVERY_V2_CONTENT_TYPE);
    expect(res.json()).toEqual({
      kind: 'APIGroupDiscoveryList',
      apiVersion: 'apidiscovery.k8s.io/v2',
      metadata: {},
      items: [
        {
          metadata: {},
          versions: [
            {
              version: 'v1',
              freshness: 'Current',
              resources: [
                {
                  resource: 'namespaces',
                  responseKind: { group: '', version: 'v1', kind: 'Namespace' },
                  scope: 'Cluster',
                  singularResource: 'namespace',
                  verbs: ['get'],
                  shortNames: ['ns'],
                },
              ],
            },
          ],
        },
      ],
    });
    const again = await get('/api', { accept, 'if-none-match': res.headers.etag as string });
    expect(again.statusCode).toBe(304);
    expect((await get('/api', { accept: 'application/vnd.kubernetes.protobuf' })).statusCode).toBe(406);
  });
});

describe('GET /api/v1', () => {
  it('lists namespaces with the one verb served, without apiVersion as kube writes the legacy list', async () => {
    const res = await get('/api/v1');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      kind: 'APIResourceList',
      groupVersion: 'v1',
      resources: [{ name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace', verbs: ['get'], shortNames: ['ns'] }],
    });
  });
});

describe('GET /api/v1/namespaces/<name>', () => {
  const notFound = (name: string) => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `namespaces "${name}" not found`,
    reason: 'NotFound',
    details: { name, kind: 'namespaces' },
    code: 404,
  });

  it('serves default, and a namespace while it holds an object; 404 as kube words it otherwise', async () => {
    expect((await get('/api/v1/namespaces/default')).json()).toMatchObject({ kind: 'Namespace', metadata: { name: 'default' }, status: { phase: 'Active' } });
    const before = await get('/api/v1/namespaces/team-a');
    expect(before.statusCode).toBe(404);
    expect(before.json()).toEqual(notFound('team-a'));
    await objectIn('team-a', 'blog');
    const found = await get('/api/v1/namespaces/team-a');
    expect(found.statusCode).toBe(200);
    expect(found.json()).toEqual({
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name: 'team-a', labels: { 'kubernetes.io/metadata.name': 'team-a' } },
      spec: {},
      status: { phase: 'Active' },
    });
    await storage.delete({ resource: 'testing.example.com/flighttickets', namespace: 'team-a', name: 'blog' });
    expect((await get('/api/v1/namespaces/team-a')).json()).toEqual(notFound('team-a'));
  });

  it('answers kubectl get ns with a Table (Name, Status, Age) and metadata-only requests with PartialObjectMetadata', async () => {
    const table = (await get('/api/v1/namespaces/default', { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' })).json();
    expect(table).toMatchObject({
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      rows: [{ cells: ['default', 'Active', '<unknown>'], object: { kind: 'PartialObjectMetadata' } }],
    });
    expect(table.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Status', 'Age']);
    const meta = (await get('/api/v1/namespaces/default', { accept: 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io' })).json();
    expect(meta).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { name: 'default', labels: { 'kubernetes.io/metadata.name': 'default' } },
    });
  });

  it('is authorized as kube sees it: get namespaces, the name doubling as the namespace', async () => {
    seen.length = 0;
    const denied = await get('/api/v1/namespaces/default', { 'x-user': 'reader' });
    expect(seen[0]).toMatchObject({
      isResourceRequest: true,
      verb: 'get',
      apiGroup: '',
      apiVersion: 'v1',
      resource: 'namespaces',
      name: 'default',
      namespace: 'default',
    });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().message).toBe(
      'namespaces "default" is forbidden: User "reader" cannot get resource "namespaces" in API group "" in the namespace "default"',
    );
    expect((await standalone.app.inject({ method: 'GET', url: '/api' })).statusCode).toBe(401);
  });
});

describe('with a cluster configured', () => {
  it('leaves /api, /api/v1 and namespaces to kube-apiserver: 404 here', async () => {
    for (const url of ['/api', '/api/v1', '/api/v1/namespaces/default']) {
      const res = await get(url, {}, delegated);
      expect(res.statusCode, url).toBe(404);
      expect(res.json().message, url).toBe('the server could not find the requested resource');
    }
  });
});
