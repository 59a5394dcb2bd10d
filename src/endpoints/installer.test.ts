/**
 * The installer's verb selection, in process (app.inject) against a memory-backed REST map: each path gets the
 * verbs its store offers, a method it does not serve is the 405 naming its verb, and a subresource the kind does
 * not have (or no kind has) is a 404. The same routes serve /status and /scale through the same handlers.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { website } from '../kinds/website/index.js';
import { buildRestMap, type RestStorage } from '../registry/rest-map.js';
import type { StatusStore } from '../registry/status-store.js';
import { toStatusError } from '../server/server.js';
import { MemoryStorage } from '../storage/memory-storage.js';
import { airport } from '../../test/kinds/airport.js';
import { flightTicket } from '../../test/kinds/flight-ticket.js';
import { installGroupVersion, installRestMap } from './installer.js';
import { WatchRegistry } from './watch.js';

const WEBSITES = '/apis/extensions.example.com/v1/namespaces/ns/websites';
const TICKETS = '/apis/testing.example.com/v1/namespaces/ns/flighttickets';
const AIRPORTS = '/apis/testing.example.com/v1/airports';

let app: FastifyInstance;
const storage = new MemoryStorage();
const map = buildRestMap([website, { storage: flightTicket }, { storage: airport }], storage, { standalone: true });

// An app with the server's error mapping, a merge patch parser and nothing else but the installed REST map.
function appOf(install: (app: FastifyInstance) => void): FastifyInstance {
  const a = Fastify();
  a.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (_req, body, done) => done(null, JSON.parse(body as string)));
  a.setErrorHandler((err: Error, _req, reply) => {
    const s = toStatusError(err);
    return reply.code(s.code).send(s.status);
  });
  install(a);
  return a;
}

beforeAll(async () => {
  app = appOf((a) => installRestMap(a, map, new WatchRegistry()));
  await app.ready();
  const create = (url: string, body: object) => app.inject({ method: 'POST', url, payload: body });
  expect(
    (
      await create(WEBSITES, {
        apiVersion: 'extensions.example.com/v1',
        kind: 'Website',
        metadata: { name: 'w' },
        spec: { git: { repository: 'https://github.com/a/b' } },
      })
    ).statusCode,
  ).toBe(201);
  expect(
    (
      await create(TICKETS, {
        apiVersion: 'testing.example.com/v1',
        kind: 'FlightTicket',
        metadata: { name: 't' },
        spec: { departure: 'ICN', destination: 'SFO' },
      })
    ).statusCode,
  ).toBe(201);
  expect(
    (await create(AIRPORTS, { apiVersion: 'testing.example.com/v1', kind: 'Airport', metadata: { name: 'icn' }, spec: { city: 'Seoul' } })).statusCode,
  ).toBe(201);
});
afterAll(() => app.close());

async function call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown) {
  const r = await app.inject({
    method,
    url,
    ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  return { code: r.statusCode, body: r.json() as { kind?: string; reason?: string; message?: string; spec?: unknown } };
}

describe('installer', () => {
  it.each([
    [
      'a DELETE of /scale (GET, PUT and PATCH only)',
      'DELETE',
      `${WEBSITES}/w/scale`,
      'delete is not supported on resources of kind "websites.extensions.example.com"',
    ],
    ['a POST to /status', 'POST', `${TICKETS}/t/status`, 'post is not supported on resources of kind "flighttickets.testing.example.com"'],
    ['a POST to an object', 'POST', `${TICKETS}/t`, 'post is not supported on resources of kind "flighttickets.testing.example.com"'],
    [
      'a create across all namespaces',
      'POST',
      '/apis/testing.example.com/v1/flighttickets',
      'create is not supported on resources of kind "flighttickets.testing.example.com"',
    ],
    ['a PUT of a collection', 'PUT', AIRPORTS, 'put is not supported on resources of kind "airports.testing.example.com"'],
  ] as const)('%s is 405 naming its verb', async (_what, method, url, message) => {
    const r = await call(method, url, method === 'DELETE' ? undefined : {});
    expect(r.code).toBe(405);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', message });
  });

  it.each([
    ['/scale of a kind without scale', 'GET', `${TICKETS}/t/scale`, 'flighttickets.testing.example.com "t" not found'],
    ['a PUT of /scale of a kind without scale', 'PUT', `${TICKETS}/t/scale`, 'flighttickets.testing.example.com "t" not found'],
    ['/status of a kind without subresources', 'GET', `${AIRPORTS}/icn/status`, 'airports.testing.example.com "icn" not found'],
    ['a subresource no kind has', 'DELETE', `${WEBSITES}/w/logs`, 'websites.extensions.example.com "w" not found'],
  ] as const)('%s is 404', async (_what, method, url, message) => {
    const r = await call(method, url, method === 'PUT' ? {} : undefined);
    expect(r.code).toBe(404);
    expect(r.body).toMatchObject({ reason: 'NotFound', message });
  });

  it('serves /status with the object and /scale with a Scale, through the same update and patch handlers', async () => {
    const status = await call('GET', `${TICKETS}/t/status`);
    expect(status.body.kind).toBe('FlightTicket');
    const scale = await call('GET', `${WEBSITES}/w/scale`);
    expect(scale.body).toMatchObject({ kind: 'Scale', spec: { replicas: 1 } });
    const put = await call('PUT', `${WEBSITES}/w/scale`, { ...scale.body, spec: { replicas: 2 } });
    expect(put.body).toMatchObject({ kind: 'Scale', spec: { replicas: 2 } });
    const patched = await app.inject({
      method: 'PATCH',
      url: `${TICKETS}/t/status`,
      payload: { status: { booked: true } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(patched.json()).toMatchObject({ kind: 'FlightTicket', status: { booked: true } });
  });

  it('installs only the verbs a store offers: a store that can only get answers GET and refuses PUT and PATCH', async () => {
    const gv = map.groupVersions.find((g) => g.group === 'testing.example.com');
    const status = gv?.resources.get('flighttickets/status') as StatusStore;
    const readOnly = { def: status.def, gr: status.gr, get: (ns: string | undefined, name: string) => status.get(ns, name) } as unknown as RestStorage;
    const only = appOf((a) =>
      installGroupVersion(a, { group: 'testing.example.com', version: 'v1', resources: new Map([['flighttickets/status', readOnly]]) }, new WatchRegistry()),
    );
    expect((await only.inject({ method: 'GET', url: `${TICKETS}/t/status` })).statusCode).toBe(200);
    for (const method of ['PUT', 'PATCH'] as const) {
      const r = await only.inject({ method, url: `${TICKETS}/t/status`, payload: {} });
      expect([r.statusCode, r.json().message]).toEqual([
        405,
        `${method.toLowerCase()} is not supported on resources of kind "flighttickets.testing.example.com"`,
      ]);
    }
    await only.close();
  });
});
