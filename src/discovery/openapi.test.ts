/**
 * @module discovery/openapi.test
 * OpenAPI over HTTP (fastify inject): the v3 index and its hash, the per-GV document's caching (immutable, 301 on a
 * stale hash, 304), what kubectl reads (GVK extensions, PATCH content types, fieldValidation, schemas), and that every
 * `$ref` resolves in both v3 and v2.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { discoveryApp } from '../../test/helpers/discovery-app.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenAPISchema, OpenAPIV3Discovery, OpenAPIV3Document, SwaggerDocument } from './openapi.js';

const G = 'extensions.example.com';
// v1, the preferred version, is examined; v1alpha1 is served beside it.
const V = 'v1';
const VERSIONS = ['v1', 'v1alpha1'];
const KEY = `apis/${G}/${V}`;
const WEBSITE = 'com.example.extensions.v1.Website';
const WEBSITE_LIST = 'com.example.extensions.v1.WebsiteList';
const WEBSITE_GVK = { group: G, version: V, kind: 'Website' };
const SCALE_GVK = { group: 'autoscaling', version: 'v1', kind: 'Scale' };
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const LIST_PARAMS = [
  'allowWatchBookmarks',
  'continue',
  'fieldSelector',
  'labelSelector',
  'limit',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'timeoutSeconds',
  'watch',
];

type Op = Record<string, unknown> & {
  operationId?: string;
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: { $ref: string } }> };
  consumes?: string[];
  responses: Record<string, { content?: Record<string, { schema: { $ref: string } }>; schema?: { $ref: string } }>;
};

let app: FastifyInstance;
let index: OpenAPIV3Discovery;
let gvURL: string;
let v3: OpenAPIV3Document;
let v3Body: string;
let v2: SwaggerDocument;

const get = (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });

beforeAll(async () => {
  app = await discoveryApp();
  index = (await get('/openapi/v3')).json();
  gvURL = index.paths[KEY]!.serverRelativeURL;
  const res = await get(gvURL, { accept: 'application/json' });
  v3Body = res.body;
  v3 = res.json();
  v2 = (await get('/openapi/v2', { accept: 'application/json' })).json();
});

afterAll(async () => {
  await app.close();
});

// Every operation of a document, with its path and method.
function operations(paths: Record<string, Record<string, unknown>>): { path: string; method: string; op: Op }[] {
  const out: { path: string; method: string; op: Op }[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) if (item[method]) out.push({ path, method, op: item[method] as Op });
  }
  return out;
}

// Collects every `$ref` anywhere in a JSON value.
function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const v of value) refs(v, found);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') found.push(v);
      else refs(v, found);
    }
  }
  return found;
}

// What kubectl explain's plaintext template does: a GVK from an operation on one of four paths, then a schema whose
// x-kubernetes-group-version-kind list contains it.
function explainLookup(doc: OpenAPIV3Document, resource: string): OpenAPISchema | undefined {
  const prefix = `/apis/${G}/${V}`;
  const candidates = [
    `${prefix}/${resource}`,
    `${prefix}/${resource}/{name}`,
    `${prefix}/namespaces/{namespace}/${resource}`,
    `${prefix}/namespaces/{namespace}/${resource}/{name}`,
  ];
  let gvk: unknown;
  for (const p of candidates) {
    for (const m of ['get', 'post', 'put', 'patch', 'delete']) {
      gvk ??= (doc.paths[p]?.[m] as Op | undefined)?.['x-kubernetes-group-version-kind'];
    }
  }
  if (!gvk) return undefined;
  return Object.values(doc.components.schemas).find((s) =>
    (s['x-kubernetes-group-version-kind'] as unknown[] | undefined)?.some((x) => JSON.stringify(x) === JSON.stringify(gvk)),
  );
}

describe('GET /openapi/v3', () => {
  it('lists the group/version without a leading slash, with the uppercase sha512 of the served document', async () => {
    expect(Object.keys(index.paths)).toEqual(VERSIONS.map((v) => `apis/${G}/${v}`));
    expect(gvURL).toMatch(new RegExp(`^/openapi/v3/apis/${G.replaceAll('.', '\\.')}/${V}\\?hash=[0-9A-F]{128}$`));
    const hash = createHash('sha512').update(v3Body).digest('hex').toUpperCase();
    expect(gvURL.endsWith(`?hash=${hash}`)).toBe(true);
    const res = await get('/openapi/v3');
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers.etag).toMatch(/^"[0-9A-F]{128}"$/);
    expect((await get('/openapi/v3', { 'if-none-match': res.headers.etag as string })).statusCode).toBe(304);
  });
});

describe('GET /openapi/v3/apis/<g>/<v>', () => {
  it('serves the current hash as immutable for a year', async () => {
    const res = await get(gvURL);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['cache-control']).toBe('public, immutable');
    expect(res.headers.vary).toBe('Accept');
    const expires = Date.parse(res.headers.expires as string);
    const inAYear = Date.now() + 365 * 24 * 3600 * 1000;
    expect(Math.abs(expires - inAYear)).toBeLessThan(2 * 24 * 3600 * 1000);
    const hash = gvURL.split('hash=')[1];
    expect(res.headers.etag).toBe(`"${hash}"`);
  });

  it('redirects a stale hash to the current URL with 301', async () => {
    const res = await get(`/openapi/v3/${KEY}?hash=DEADBEEF`);
    expect(res.statusCode).toBe(301);
    expect(res.headers.location).toBe(gvURL);
  });

  it('without a hash: ETag and Vary but no immutable caching; If-None-Match gives 304', async () => {
    const res = await get(`/openapi/v3/${KEY}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers.vary).toBe('Accept');
    expect(res.headers['cache-control']).toBeUndefined();
    expect(res.body).toBe(v3Body);
    const etag = res.headers.etag as string;
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    const again = await get(`/openapi/v3/${KEY}`, { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('answers an unknown group/version with a 404 Status, and protobuf-only Accept with 406', async () => {
    const res = await get('/openapi/v3/apis/nope.example.com/v1');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    const pb = await get(`/openapi/v3/${KEY}`, { accept: 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf' });
    expect(pb.statusCode).toBe(406);
  });
});

describe('v3 document content', () => {
  it('is OpenAPI 3.0 with the paths kubectl and informers need', () => {
    expect(v3.openapi).toBe('3.0.0');
    expect(Object.keys(v3.paths).sort()).toEqual([
      `/apis/${G}/${V}/namespaces/{namespace}/websites`,
      `/apis/${G}/${V}/namespaces/{namespace}/websites/{name}`,
      `/apis/${G}/${V}/namespaces/{namespace}/websites/{name}/scale`,
      `/apis/${G}/${V}/namespaces/{namespace}/websites/{name}/status`,
      `/apis/${G}/${V}/websites`,
    ]);
    const item = v3.paths[`/apis/${G}/${V}/namespaces/{namespace}/websites/{name}`]!;
    expect(
      Object.keys(item)
        .filter((k) => k !== 'parameters')
        .sort(),
    ).toEqual(['delete', 'get', 'patch', 'put']);
    const coll = v3.paths[`/apis/${G}/${V}/namespaces/{namespace}/websites`]!;
    expect(
      Object.keys(coll)
        .filter((k) => k !== 'parameters')
        .sort(),
    ).toEqual(['delete', 'get', 'post']);
  });

  it('gives every operation an operationId, an action and a GVK object', () => {
    const ops = operations(v3.paths);
    expect(ops.length).toBe(1 + 3 + 4 + 3 + 3);
    const ids = new Set<string>();
    for (const { path, method, op } of ops) {
      expect(op.operationId, `${method} ${path}`).toBeTruthy();
      ids.add(op.operationId!);
      expect(op['x-kubernetes-action'], `${method} ${path}`).toBeTruthy();
      const gvk = op['x-kubernetes-group-version-kind'];
      expect(Array.isArray(gvk)).toBe(false);
      expect(gvk).toEqual(path.endsWith('/scale') ? SCALE_GVK : WEBSITE_GVK);
    }
    expect(ids.size).toBe(ops.length);
    expect(ids.has('listExtensionsExampleComV1WebsiteForAllNamespaces')).toBe(true);
    expect(ids.has('patchExtensionsExampleComV1NamespacedWebsite')).toBe(true);
  });

  it('offers PATCH only as JSON patch, merge patch and apply (never strategic merge), with fieldValidation', () => {
    const patches = operations(v3.paths).filter((o) => o.method === 'patch');
    expect(patches.length).toBe(3);
    for (const { op } of patches) {
      expect(Object.keys(op.requestBody!.content).sort()).toEqual([
        'application/apply-patch+yaml',
        'application/json-patch+json',
        'application/merge-patch+json',
      ]);
      expect(JSON.stringify(op)).not.toContain('strategic-merge-patch');
      const names = op.parameters!.map((p) => p.name);
      expect(names).toEqual(expect.arrayContaining(['dryRun', 'fieldManager', 'fieldValidation', 'force']));
    }
  });

  it('declares write parameters on POST/PUT and list parameters on list operations', () => {
    for (const { method, op } of operations(v3.paths)) {
      const names = (op.parameters ?? []).map((p) => p.name);
      if (method === 'post' || method === 'put') expect(names).toEqual(['dryRun', 'fieldManager', 'fieldValidation']);
      if (op['x-kubernetes-action'] === 'list') {
        expect(names).toEqual(LIST_PARAMS);
        expect(Object.keys(op.responses['200']!.content!)).toContain('application/json;stream=watch');
      }
    }
  });

  it('references the schemas from responses', () => {
    const coll = v3.paths[`/apis/${G}/${V}/namespaces/{namespace}/websites`]!;
    expect((coll.get as Op).responses['200']!.content!['application/json']!.schema.$ref).toBe(`#/components/schemas/${WEBSITE_LIST}`);
    const scale = v3.paths[`/apis/${G}/${V}/namespaces/{namespace}/websites/{name}/scale`]!;
    expect((scale.get as Op).responses['200']!.content!['application/json']!.schema.$ref).toBe('#/components/schemas/io.k8s.api.autoscaling.v1.Scale');
  });

  it('publishes the Website schema with descriptions, ObjectMeta and a GVK list', () => {
    const s = v3.components.schemas;
    const website = s[WEBSITE]!;
    expect(website['x-kubernetes-group-version-kind']).toEqual([WEBSITE_GVK]);
    expect(website.description).toMatch(/static website/);
    const repository = website.properties!.spec!.properties!.git!.properties!.repository!;
    expect(repository.type).toBe('string');
    expect(repository.description).toMatch(/^Repository is the URL of the git repository/);
    expect(website.properties!.spec!.required).toEqual(['git']);
    expect(website.properties!.metadata).toMatchObject({ allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }] });
    expect(s[WEBSITE_LIST]!['x-kubernetes-group-version-kind']).toEqual([{ ...WEBSITE_GVK, kind: 'WebsiteList' }]);
    const meta = s['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']!;
    for (const f of [
      'name',
      'generateName',
      'namespace',
      'uid',
      'resourceVersion',
      'generation',
      'creationTimestamp',
      'deletionTimestamp',
      'labels',
      'annotations',
      'ownerReferences',
      'finalizers',
      'managedFields',
    ]) {
      expect(meta.properties![f]?.description, f).toBeTruthy();
    }
    for (const name of ['ListMeta', 'Status', 'DeleteOptions', 'Patch']) expect(s[`io.k8s.apimachinery.pkg.apis.meta.v1.${name}`]).toBeDefined();
    expect(s['io.k8s.api.autoscaling.v1.Scale']!['x-kubernetes-group-version-kind']).toEqual([SCALE_GVK]);
  });

  it('resolves like kubectl explain does', () => {
    expect(explainLookup(v3, 'websites')).toBe(v3.components.schemas[WEBSITE]);
  });

  it('has every $ref resolvable', () => {
    const all = refs(v3);
    expect(all.length).toBeGreaterThan(10);
    for (const r of all) {
      expect(r.startsWith('#/components/schemas/'), r).toBe(true);
      expect(v3.components.schemas[r.slice('#/components/schemas/'.length)], r).toBeDefined();
    }
  });
});

describe('GET /openapi/v2', () => {
  it('serves Swagger 2.0 with an ETag and answers If-None-Match with 304', async () => {
    const res = await get('/openapi/v2', { accept: 'application/json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    const etag = res.headers.etag as string;
    expect(etag).toBe(`"${createHash('sha512').update(res.body).digest('hex').toUpperCase()}"`);
    const again = await get('/openapi/v2', { accept: 'application/json', 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(v2.swagger).toBe('2.0');
  });

  it('keeps every path under /apis/<g>/<v>/ (the aggregator drops the rest)', () => {
    for (const p of Object.keys(v2.paths))
      expect(
        VERSIONS.some((v) => p.startsWith(`/apis/${G}/${v}/`)),
        p,
      ).toBe(true);
    // Five paths per version: collection and item, all namespaces, status, scale.
    for (const v of VERSIONS) expect(Object.keys(v2.paths).filter((p) => p.startsWith(`/apis/${G}/${v}/`)).length, v).toBe(5);
  });

  it('gives every operation consumes, produces, an action and a GVK; PATCH consumes no strategic merge', () => {
    for (const { path, method, op } of operations(v2.paths)) {
      expect(op.operationId).toBeTruthy();
      expect(op['x-kubernetes-action']).toBeTruthy();
      const version = path.split('/')[3];
      expect(op['x-kubernetes-group-version-kind']).toEqual(path.endsWith('/scale') ? SCALE_GVK : { ...WEBSITE_GVK, version });
      expect(op.consumes!.length).toBeGreaterThan(0);
      expect((op.produces as string[]).length).toBeGreaterThan(0);
      if (method === 'patch') {
        expect([...op.consumes!].sort()).toEqual(['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json']);
        expect(op.parameters!.map((p) => p.name)).toEqual(expect.arrayContaining(['body', 'fieldValidation', 'force']));
      }
    }
  });

  it('has GVK lists on the kind definitions, no v3-only keywords, and every $ref resolvable', () => {
    expect(v2.definitions[WEBSITE]!['x-kubernetes-group-version-kind']).toEqual([WEBSITE_GVK]);
    expect(v2.definitions[WEBSITE]!.properties!.spec!.properties!.git!.properties!.repository!.description).toMatch(/^Repository/);
    // The other served version has its own definitions, in its own terms.
    const alpha = v2.definitions['com.example.extensions.v1alpha1.Website']!;
    expect(alpha['x-kubernetes-group-version-kind']).toEqual([{ ...WEBSITE_GVK, version: 'v1alpha1' }]);
    expect(alpha.properties!.spec!.properties!.gitRepo!.description).toMatch(/^GitRepo/);
    expect(v2.definitions[WEBSITE]!.properties!.metadata!.$ref).toBe('#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    expect(JSON.stringify(v2)).not.toMatch(/"nullable"|"allOf"|#\/components\//);
    const all = refs(v2);
    expect(all.length).toBeGreaterThan(10);
    for (const r of all) {
      expect(r.startsWith('#/definitions/'), r).toBe(true);
      expect(v2.definitions[r.slice('#/definitions/'.length)], r).toBeDefined();
    }
  });
});
