/**
 * @module discovery/discovery.test
 * Discovery over HTTP (fastify inject): legacy APIGroupList/APIGroup/APIResourceList, aggregated discovery v2
 * negotiation with client-go's exact Accept, ETag/304, 404 Status for unknown groups, `/version`.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { discoveryApp } from '../../test/helpers/discovery-app.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareKubeVersions, DISCOVERY_V2_CONTENT_TYPE, storageVersionHash, type APIGroupDiscoveryList, type APIResourceList } from './discovery.js';
import { discoveryFormat } from './routes.js';

/** CLIENT_GO_ACCEPT is discovery.AcceptV2 + v2beta1 + JSON, as client-go ≤1.36 sends it. */
const CLIENT_GO_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
const GV = 'extensions.example.com/v1';
const GV_ALPHA = 'extensions.example.com/v1alpha1';
// Both versions of the group, v1 preferred (kube's version priority), as an APIGroup lists them.
const VERSIONS = [
  { groupVersion: GV, version: 'v1' },
  { groupVersion: GV_ALPHA, version: 'v1alpha1' },
];

let app: FastifyInstance;

beforeAll(async () => {
  app = await discoveryApp();
});

afterAll(async () => {
  await app.close();
});

const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });

describe('storageVersionHash', () => {
  it('matches the values kube-apiserver publishes', () => {
    expect(storageVersionHash('apps', 'v1', 'Deployment')).toBe('8aSe+NMegvE=');
    expect(storageVersionHash('', 'v1', 'Pod')).toBe('xPOwRZ+Yhw8=');
  });
});

describe('compareKubeVersions', () => {
  it('orders versions as k8s.io/apimachinery/pkg/version CompareKubeAwareVersionStrings documents', () => {
    const documented = ['v10', 'v2', 'v1', 'v11beta2', 'v10beta3', 'v3beta1', 'v12alpha1', 'v11alpha2', 'foo1', 'foo10'];
    const shuffled = [...documented].reverse();
    expect(shuffled.sort(compareKubeVersions)).toEqual(documented);
  });
});

describe('GET /apis/<group>/<version>', () => {
  it.each([GV, GV_ALPHA])('returns the APIResourceList of %s with websites, websites/status and websites/scale', async (gv) => {
    const res = await get(`/apis/${gv}`, { accept: 'application/json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const body = res.json<APIResourceList>();
    expect(body.kind).toBe('APIResourceList');
    expect(body.apiVersion).toBe('v1');
    expect(body.groupVersion).toBe(gv);
    const byName = Object.fromEntries(body.resources.map((r) => [r.name, r]));
    expect(Object.keys(byName).sort()).toEqual(['websites', 'websites/scale', 'websites/status']);

    expect(byName.websites).toEqual({
      name: 'websites',
      singularName: 'website',
      namespaced: true,
      kind: 'Website',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['ws'],
      categories: ['all'],
      // The storage version's hash from every version: the objects are the same (stored as v1).
      storageVersionHash: storageVersionHash('extensions.example.com', 'v1', 'Website'),
    });
    const hash = createHash('sha256').update('extensions.example.com/v1/Website').digest().subarray(0, 8).toString('base64');
    expect(byName.websites!.storageVersionHash).toBe(hash);

    expect(byName['websites/status']).toEqual({
      name: 'websites/status',
      singularName: '',
      namespaced: true,
      kind: 'Website',
      verbs: ['get', 'patch', 'update'],
    });
    expect(byName['websites/scale']).toEqual({
      name: 'websites/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  });

  it('answers an unknown group or version with a 404 Status', async () => {
    for (const url of ['/apis/extensions.example.com/v9', '/apis/nope.example.com/v1alpha1', '/apis/nope.example.com']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 });
    }
  });
});

describe('GET /apis/<group>', () => {
  it('returns the APIGroup', async () => {
    const res = await get('/apis/extensions.example.com');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'extensions.example.com',
      versions: VERSIONS,
      preferredVersion: { groupVersion: GV, version: 'v1' },
    });
  });
});

describe('GET /apis', () => {
  const legacy = {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [
      {
        name: 'extensions.example.com',
        versions: VERSIONS,
        preferredVersion: { groupVersion: GV, version: 'v1' },
      },
    ],
  };

  it('serves aggregated discovery v2 to the client-go Accept, echoing the GVK in Content-Type', async () => {
    const res = await get('/apis', { accept: CLIENT_GO_ACCEPT });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(res.headers['content-type']).toBe(DISCOVERY_V2_CONTENT_TYPE);
    expect(res.headers.vary).toBe('Accept');
    expect(res.headers['cache-control']).toBe('public');
    const etag = res.headers.etag as string;
    // Quoted, uppercase hex sha512 of the body (aggregated/etag.go uses %X).
    const hex = createHash('sha512').update(res.body).digest('hex').toUpperCase();
    expect(etag).toBe(`"${hex}"`);

    expect(res.json<APIGroupDiscoveryList>()).toEqual({
      kind: 'APIGroupDiscoveryList',
      apiVersion: 'apidiscovery.k8s.io/v2',
      metadata: {},
      items: [
        {
          metadata: { name: 'extensions.example.com' },
          versions: ['v1', 'v1alpha1'].map((version) => ({
            version,
            freshness: 'Current',
            resources: [
              {
                resource: 'websites',
                responseKind: { group: 'extensions.example.com', version, kind: 'Website' },
                scope: 'Namespaced',
                singularResource: 'website',
                verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
                shortNames: ['ws'],
                categories: ['all'],
                subresources: [
                  { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
                  {
                    subresource: 'status',
                    responseKind: { group: 'extensions.example.com', version, kind: 'Website' },
                    verbs: ['get', 'patch', 'update'],
                  },
                ],
              },
            ],
          })),
        },
      ],
    });
  });

  it('answers If-None-Match with the current ETag with 304 and no body', async () => {
    const first = await get('/apis', { accept: CLIENT_GO_ACCEPT });
    const etag = first.headers.etag as string;
    const res = await get('/apis', { accept: CLIENT_GO_ACCEPT, 'if-none-match': etag });
    expect(res.statusCode).toBe(304);
    expect(res.body).toBe('');
    expect(res.headers.etag).toBe(etag);
    const stale = await get('/apis', { accept: CLIENT_GO_ACCEPT, 'if-none-match': '"0123"' });
    expect(stale.statusCode).toBe(200);
  });

  it('tolerates reordered and extra parameters (profile=nopeer)', async () => {
    const res = await get('/apis', { accept: 'application/json; as=APIGroupDiscoveryList; profile=nopeer; v=v2; g=apidiscovery.k8s.io' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(DISCOVERY_V2_CONTENT_TYPE);
  });

  it('falls back to the legacy APIGroupList for plain Accepts', async () => {
    for (const accept of ['application/json', 'application/json, */*', '*/*', '']) {
      const res = await get('/apis', accept ? { accept } : {});
      expect(res.statusCode, accept).toBe(200);
      expect(res.headers['content-type'], accept).toBe('application/json');
      expect(res.headers.etag).toBeUndefined();
      expect(res.json(), accept).toEqual(legacy);
    }
  });

  it('lets the first satisfiable clause win', async () => {
    // A plain JSON clause before the v2 clause means legacy.
    let res = await get('/apis', { accept: `application/json,${CLIENT_GO_ACCEPT}` });
    expect(res.headers['content-type']).toBe('application/json');
    // v2beta1 is not served: skipped, then plain JSON.
    res = await get('/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json' });
    expect(res.json()).toEqual(legacy);
    // Protobuf first is skipped, then v2.
    res = await get('/apis', { accept: `application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,${CLIENT_GO_ACCEPT}` });
    expect(res.headers['content-type']).toBe(DISCOVERY_V2_CONTENT_TYPE);
  });

  it('answers 406 when nothing in Accept can be served', async () => {
    const res = await get('/apis', { accept: 'application/vnd.kubernetes.protobuf' });
    expect(res.statusCode).toBe(406);
    expect(res.json()).toMatchObject({ kind: 'Status', reason: 'NotAcceptable', code: 406 });
  });

  it('negotiates as documented', () => {
    expect(discoveryFormat(CLIENT_GO_ACCEPT)).toBe('v2');
    expect(discoveryFormat(undefined)).toBe('legacy');
    expect(discoveryFormat('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0,application/json')).toBe('legacy');
    expect(discoveryFormat('application/json;as=Table;g=meta.k8s.io;v=v1')).toBeUndefined();
    expect(discoveryFormat('text/plain')).toBeUndefined();
  });
});

describe('GET /version', () => {
  it('returns version.Info', async () => {
    const res = await get('/version');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const info = res.json();
    expect(info).toMatchObject({ major: '1', minor: '35', compiler: 'node' });
    expect(info.gitVersion).toMatch(/^v1\.35\.0-website-apiserver\.\d+\.\d+\.\d+/);
    expect(info.platform).toMatch(/^[a-z0-9]+\/[a-z0-9]+$/);
  });
});
