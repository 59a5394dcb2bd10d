/**
 * The machinery is generic: a server whose kinds list holds Website and two test-only kinds (test/kinds/: the
 * namespaced FlightTicket with a status subresource and no scale, the cluster-scoped Airport with no subresources,
 * in their own API group) serves each through the same code, in standalone mode on a real lmdb file, through
 * createServer's authentication, routes and error mapping (app.inject). Each kind registers without a cast. Their
 * controllers (test/kinds/controllers.ts) are chosen and run by the same code as the server's own
 * (controllers/kind-controllers.ts and the manager), in standalone mode since they need no cluster.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Authentication } from '../src/auth/authentication.js';
import { website } from '../src/kinds/website/index.js';
import type { KindDefinition } from '../src/registry/resource.js';
import { createServer } from '../src/server/server.js';
import { LmdbStorage } from '../src/storage/lmdb-storage.js';
import { airport } from './kinds/airport.js';
import { flightTicket } from './kinds/flight-ticket.js';
import { airportKind, flightTicketKind } from './kinds/controllers.js';
import { kindControllers } from '../src/controllers/kind-controllers.js';
import { startManager, type Manager } from '../src/controllers/manager.js';
import type { Kind } from '../src/registry/kind-controller.js';
import { Registry } from 'prom-client';

const authentication: Authentication = {
  authenticate: async () => ({ name: 'admin', groups: ['system:masters', 'system:authenticated'] }),
  trustedCAs: () => [],
  onTrustChange: () => {},
};
const dir = mkdtempSync(join(tmpdir(), 'kinds-test-'));
const storage = new LmdbStorage({ path: join(dir, 'data') });
const kinds: readonly KindDefinition[] = [website, { storage: flightTicket }, { storage: airport }];
const { app } = createServer({ storage, kinds, logger: pino({ level: 'silent' }), authentication, standalone: true });
afterAll(async () => {
  await app.close();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

const TICKETS = '/apis/testing.example.com/v1/namespaces/travel/flighttickets';
const AIRPORTS = '/apis/testing.example.com/v1/airports';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const ticket = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'testing.example.com/v1',
  kind: 'FlightTicket',
  metadata: { name },
  spec: { departure: 'ICN', destination: 'SFO' },
  ...extra,
});
type Obj = { metadata: { name: string; namespace?: string; resourceVersion: string }; spec: Record<string, unknown>; status?: Record<string, unknown> };

async function call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await app.inject({
    method,
    url,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { code: r.statusCode, body: r.json() as Obj & Record<string, unknown> };
}

describe('kinds beside Website, through the same machinery', () => {
  it('discovery lists each kind in its group with its scope and subresources', async () => {
    const groups = (await call('GET', '/apis')).body as unknown as { groups: { name: string; preferredVersion: { version: string } }[] };
    expect(groups.groups.map((g) => `${g.name}/${g.preferredVersion.version}`)).toEqual(['extensions.example.com/v1', 'testing.example.com/v1']);
    const list = (await call('GET', '/apis/testing.example.com/v1')).body as unknown as {
      resources: { name: string; namespaced: boolean; kind: string; shortNames?: string[] }[];
    };
    expect(list.resources.map((r) => `${r.name} ${r.kind} ${r.namespaced}`)).toEqual([
      'airports Airport false',
      'flighttickets FlightTicket true',
      'flighttickets/status FlightTicket true',
    ]);
    expect(list.resources.find((r) => r.name === 'flighttickets')?.shortNames).toEqual(['ft']);
  });

  it("a spec write keeps a kind's status when the kind has no standalone status (it was erased before)", async () => {
    const created = await call('POST', TICKETS, ticket('t1', { status: { booked: true } }));
    expect(created.code).toBe(201);
    // The status subresource owns status: a create does not set it, and the server invents none for this kind.
    expect(created.body.status).toBeUndefined();
    expect(created.body.spec).toEqual({ departure: 'ICN', destination: 'SFO', seats: 1 });

    const status = await call('PUT', `${TICKETS}/t1/status`, { ...created.body, status: { booked: true, note: 'window' } });
    expect(status.code).toBe(200);
    expect(status.body.status).toEqual({ booked: true, note: 'window' });

    const patched = await call('PATCH', `${TICKETS}/t1`, { spec: { seats: 2 } }, { 'content-type': 'application/merge-patch+json' });
    expect(patched.code).toBe(200);
    expect(patched.body.spec['seats']).toBe(2);
    expect(patched.body.status).toEqual({ booked: true, note: 'window' });

    const updated = await call('PUT', `${TICKETS}/t1`, { ...patched.body, spec: { departure: 'ICN', destination: 'LAX', seats: 2 }, status: undefined });
    expect(updated.code).toBe(200);
    expect(updated.body.status).toEqual({ booked: true, note: 'window' });

    const applied = await call(
      'PATCH',
      `${TICKETS}/t1?fieldManager=tester&force=true`,
      { apiVersion: 'testing.example.com/v1', kind: 'FlightTicket', metadata: { name: 't1' }, spec: { departure: 'ICN', destination: 'NRT' } },
      { 'content-type': 'application/apply-patch+yaml' },
    );
    expect(applied.code).toBe(200);
    expect(applied.body.spec['destination']).toBe('NRT');
    expect((await call('GET', `${TICKETS}/t1`)).body.status).toEqual({ booked: true, note: 'window' });
  });

  it('Website in the same server still gets its standalone status from its own kind', async () => {
    const w = await call('POST', '/apis/extensions.example.com/v1alpha1/namespaces/travel/websites', {
      apiVersion: 'extensions.example.com/v1alpha1',
      kind: 'Website',
      metadata: { name: 'site' },
      spec: { gitRepo: 'https://example.com/site.git' },
    });
    expect(w.code).toBe(201);
    const conditions = (w.body.status?.['conditions'] ?? []) as { type: string; reason: string }[];
    expect(conditions.map((c) => `${c.type}=${c.reason}`)).toEqual(['Ready=NoCluster', 'Progressing=NoCluster', 'Degraded=NoCluster']);
  });

  it("the kind's own validation answers 422 with its field cause, and its columns make the Table", async () => {
    const bad = await call('POST', TICKETS, { ...ticket('t2'), spec: { departure: 'ICN', destination: 'ICN' } });
    expect(bad.code).toBe(422);
    expect((bad.body['details'] as { causes: { field: string }[] }).causes.map((c) => c.field)).toEqual(['spec.destination']);
    const table = (await call('GET', TICKETS, undefined, { accept: TABLE })).body as unknown as {
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[] }[];
    };
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Route', 'Booked', 'Age']);
    expect(table.rows.map((r) => r.cells.slice(0, 3))).toEqual([['t1', 'ICN-NRT', true]]);
  });

  it('a cluster-scoped kind lives outside namespaces: created, read and listed at the group root, no namespaced path', async () => {
    const created = await call('POST', AIRPORTS, {
      apiVersion: 'testing.example.com/v1',
      kind: 'Airport',
      metadata: { name: 'icn' },
      spec: { city: 'Incheon' },
    });
    expect(created.code).toBe(201);
    expect(created.body.metadata.namespace).toBeUndefined();
    expect((await call('GET', `${AIRPORTS}/icn`)).body.spec).toEqual({ city: 'Incheon' });
    expect(((await call('GET', AIRPORTS)).body['items'] as Obj[]).map((a) => a.metadata.name)).toEqual(['icn']);
    expect((await call('GET', '/apis/testing.example.com/v1/namespaces/travel/airports')).code).toBe(404);
    // No status subresource: a status in the body is the object's own, kept as sent.
    expect((await call('GET', `${AIRPORTS}/icn/status`)).code).toBe(404);
  });
});

describe("the controller manager runs the test kinds' controllers, standalone", () => {
  const dir2 = mkdtempSync(join(tmpdir(), 'kinds-controllers-'));
  const storage2 = new LmdbStorage({ path: join(dir2, 'data') });
  const served: readonly Kind[] = [website, flightTicketKind, airportKind];
  const srv = createServer({ storage: storage2, kinds: served, logger: pino({ level: 'silent' }), authentication, standalone: true });
  let manager: Manager | undefined;
  afterAll(async () => {
    await manager?.stop();
    await srv.app.close();
    await storage2.close();
    rmSync(dir2, { recursive: true, force: true });
  });
  const inject = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const r = await srv.app.inject({
      method,
      url,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return r.json() as Obj & Record<string, unknown>;
  };
  const eventually = async (what: string, cond: () => Promise<boolean>) => {
    for (let i = 0; i < 200; i++) {
      if (await cond()) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`${what} did not happen in 5 s`);
  };

  it("starts the controllers that need no cluster (not Website's), with their flags, and they reconcile through the stores", async () => {
    await srv.app.ready();
    const { controllers, off } = await kindControllers(served, {
      cluster: undefined,
      enabled: true,
      storeOf: (k) => srv.storeOf(k),
      flags: new Map([['seat-class', 'business']]),
    });
    expect(controllers.map((c) => c.name)).toEqual(['flightticket', 'airport']);
    expect(off).toEqual([{ controller: 'website', kind: 'Website', why: 'no cluster is configured (standalone mode)' }]);
    manager = startManager({
      storage: storage2,
      controllers,
      cluster: undefined,
      maxConcurrentReconciles: 2,
      resyncPeriodMs: 60_000,
      registry: new Registry(),
      logger: pino({ level: 'silent' }),
    });

    await inject('POST', TICKETS, ticket('seat-1'));
    await inject('POST', AIRPORTS, { apiVersion: 'testing.example.com/v1', kind: 'Airport', metadata: { name: 'sfo' }, spec: { city: 'San Francisco' } });
    await eventually('the ticket is booked', async () => (await inject('GET', `${TICKETS}/seat-1`)).status?.['booked'] === true);
    expect((await inject('GET', `${TICKETS}/seat-1`)).status).toEqual({ booked: true, note: 'booked in business' });
    await eventually('the airport is labelled', async () => {
      const a = await inject('GET', `${AIRPORTS}/sfo`);
      return (a.metadata as { labels?: Record<string, string> }).labels?.['testing.example.com/reconciled'] === 'sfo';
    });
    // Airport's second version reads the same object, converted, at its own path.
    const beta = await inject('GET', '/apis/testing.example.com/v1beta1/airports/sfo');
    expect(beta['apiVersion']).toBe('testing.example.com/v1beta1');
    expect(beta.spec).toEqual({ town: 'San Francisco' });
    expect((beta.metadata as { labels?: Record<string, string> }).labels).toEqual({ 'testing.example.com/reconciled': 'sfo' });
    // Nothing reconciles without a cause: the disabled switch turns every controller off.
    const none = await kindControllers(served, { cluster: undefined, enabled: false, storeOf: (k) => srv.storeOf(k), flags: new Map() });
    expect(none.controllers).toEqual([]);
    expect(none.off.map((c) => c.why)).toEqual(Array(3).fill('--enable-reconcilers=false'));
  });
});

describe('a test-only kind in two versions, through the same version machinery as Website', () => {
  const dir3 = mkdtempSync(join(tmpdir(), 'kinds-versions-'));
  const storage3 = new LmdbStorage({ path: join(dir3, 'data') });
  const srv = createServer({ storage: storage3, kinds: [airportKind], logger: pino({ level: 'silent' }), authentication, standalone: true });
  afterAll(async () => {
    await srv.app.close();
    await storage3.close();
    rmSync(dir3, { recursive: true, force: true });
  });
  const req = async (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, contentType = 'application/json') => {
    const r = await srv.app.inject({ method, url, headers: { 'content-type': contentType }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
    return { code: r.statusCode, body: r.json() as Record<string, any> };
  };

  it('serves v1 (stored, preferred) and v1beta1: discovery, conversion both ways, apply conflicts across versions', async () => {
    const group = (await req('GET', '/apis/testing.example.com')).body;
    expect(group['versions'].map((v: { version: string }) => v.version)).toEqual(['v1', 'v1beta1']);
    expect(group['preferredVersion'].version).toBe('v1');
    const hashes = await Promise.all(
      ['v1', 'v1beta1'].map(async (v) => (await req('GET', `/apis/testing.example.com/${v}`)).body['resources'][0].storageVersionHash),
    );
    expect(hashes[0]).toBe(hashes[1]);

    const created = await req(
      'PATCH',
      '/apis/testing.example.com/v1beta1/airports/icn?fieldManager=beta-tool',
      { apiVersion: 'testing.example.com/v1beta1', kind: 'Airport', metadata: { name: 'icn' }, spec: { town: 'Incheon' } },
      'application/apply-patch+yaml',
    );
    expect(created.code).toBe(201);
    expect(created.body['spec']).toEqual({ town: 'Incheon' });
    const v1 = (await req('GET', '/apis/testing.example.com/v1/airports/icn')).body;
    expect(v1['spec']).toEqual({ city: 'Incheon' });
    expect(v1['metadata'].managedFields[0]).toMatchObject({
      manager: 'beta-tool',
      apiVersion: 'testing.example.com/v1beta1',
      fieldsV1: { 'f:spec': { 'f:town': {} } },
    });
    const conflict = await req(
      'PATCH',
      '/apis/testing.example.com/v1/airports/icn?fieldManager=v1-tool',
      { apiVersion: 'testing.example.com/v1', kind: 'Airport', metadata: { name: 'icn' }, spec: { city: 'Seoul' } },
      'application/apply-patch+yaml',
    );
    expect(conflict.code).toBe(409);
    expect(conflict.body['message']).toBe('Apply failed with 1 conflict: conflict with "beta-tool": .spec.town');
    const table = (await srv.app.inject({ method: 'GET', url: '/apis/testing.example.com/v1beta1/airports', headers: { accept: TABLE } })).json() as {
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[] }[];
    };
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Town', 'Age']);
    expect(table.rows.map((r) => r.cells.slice(0, 2))).toEqual([['icn', 'Incheon']]);
  });
});
