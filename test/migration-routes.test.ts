/**
 * The server's side of moving a CRD's objects here and back (endpoints/migration-routes.ts), on an in-process server
 * over lmdb, as a client sees it:
 * - objects put through /migration/v1 are served exactly as given (uid, creationTimestamp, generation, managedFields,
 *   finalizers, deletionTimestamp, ownerReferences, status), with our own resourceVersion; a bad one is a 400 and
 *   nothing of its batch is written; a replayed batch changes nothing;
 * - after a seal, a watch from before it (the resourceVersions another server gave out) is 410 Expired, the list
 *   still answers, open watches of the resource end, and a watch from the list's resourceVersion gets new writes;
 * - a frozen resource answers writes 429 with Retry-After (reads go on), and a thaw lets them through;
 * - a released resource's watches end with 410, and new ones get 410 as their one ERROR event, until it is thawed;
 * - the freeze webhook refuses any AdmissionReview with the 429 kube-apiserver passes on, without credentials.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authentication } from '../src/auth/authentication.js';
import { website } from '../src/kinds/website/index.js';
import { createServer } from '../src/server/server.js';
import { LmdbStorage } from '../src/storage/lmdb-storage.js';

const authentication: Authentication = {
  authenticate: async (req) =>
    req.headers.authorization === 'Bearer admin' ? { name: 'admin', groups: ['system:masters', 'system:authenticated'] } : undefined,
  trustedCAs: () => [],
  onTrustChange: () => {},
};
const dir = mkdtempSync(join(tmpdir(), 'migration-routes-'));
const storage = new LmdbStorage({ path: dir });
const srv = createServer({ storage, kinds: [website], logger: pino({ level: 'silent' }), authentication, standalone: true });
let base = '';
const V1 = '/apis/extensions.example.com/v1';
const M = '/migration/v1/resources/extensions.example.com/websites';

async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, auth = true) {
  const res = await request(`${base}${path}`, {
    method,
    headers: { ...(auth ? { authorization: 'Bearer admin' } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

// A Website as kube-apiserver would have stored it: system metadata of its own, a finalizer, two managers.
const moved = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'extensions.example.com/v1',
  kind: 'Website',
  metadata: {
    name,
    namespace: 'team-a',
    uid: `0000-${name}`,
    resourceVersion: '987654',
    generation: 7,
    creationTimestamp: '2026-01-02T03:04:05Z',
    labels: { app: name },
    finalizers: ['example.com/keep'],
    ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: 'cm-uid-1' }],
    managedFields: [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'extensions.example.com/v1',
        time: '2026-01-02T03:04:05Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:git': { 'f:repository': {} } } },
      },
      {
        manager: 'ctrl',
        operation: 'Update',
        apiVersion: 'extensions.example.com/v1',
        time: '2026-01-02T03:04:06Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:status': {} },
        subresource: 'status',
      },
    ],
    ...extra,
  },
  spec: { git: { repository: 'https://github.com/luksa/kubia-website-example.git' } },
  status: { phase: 'Serving' },
});
const withoutVersion = (o: { metadata: Record<string, unknown> }) => {
  const { resourceVersion: _rv, ...metadata } = o.metadata;
  return { ...o, metadata };
};

beforeAll(async () => {
  await srv.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(srv.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await srv.app.close();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('moving objects in', () => {
  it('serves put objects exactly as given except resourceVersion; a replay changes nothing; deletes remove', async () => {
    const deleting = moved('b', { deletionTimestamp: '2026-01-03T00:00:00Z', deletionGracePeriodSeconds: 0 });
    const put = await call('POST', `${M}/objects`, { put: [moved('a'), deleting] });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ created: 2, updated: 0, unchanged: 0, deleted: 0 });
    const got = await call('GET', `${V1}/namespaces/team-a/websites/a`);
    expect(withoutVersion(got.body)).toEqual(withoutVersion(moved('a')));
    expect(got.body.metadata.resourceVersion).not.toBe('987654');
    const b = await call('GET', `${V1}/namespaces/team-a/websites/b`);
    expect(b.body.metadata.deletionTimestamp).toBe('2026-01-03T00:00:00Z');
    const again = await call('POST', `${M}/objects`, { put: [moved('a'), deleting] });
    expect(again.body).toMatchObject({ created: 0, updated: 0, unchanged: 2 });
    const gone = await call('POST', `${M}/objects`, {
      delete: [
        { namespace: 'team-a', name: 'b' },
        { namespace: 'team-a', name: 'never' },
      ],
    });
    expect(gone.body).toMatchObject({ deleted: 1 });
    expect((await call('GET', `${V1}/namespaces/team-a/websites/b`)).status).toBe(404);
  });

  it('refuses a batch with an object of another kind, scope or without its uid, writing nothing of it', async () => {
    const bad = [
      { ...moved('c'), kind: 'Other' },
      { ...moved('c'), metadata: { ...moved('c').metadata, uid: undefined } },
      { ...moved('c'), metadata: { ...moved('c').metadata, namespace: undefined } },
      { ...moved('c'), metadata: { ...moved('c').metadata, labels: true } },
    ];
    for (const o of bad) {
      const r = await call('POST', `${M}/objects`, { put: [moved('d'), o] });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    }
    expect((await call('GET', `${V1}/namespaces/team-a/websites/d`)).status).toBe(404);
    expect((await call('GET', '/migration/v1/resources/extensions.example.com/nothings/objects')).status).toBe(404);
    expect((await call('POST', `${M}/objects`, { put: [] }, false)).status).toBe(401);
  });
});

describe('seal', () => {
  it('expires watches from before it, ends the open ones, and serves the history from it on', async () => {
    const list = await call('GET', `${V1}/websites`);
    const before = list.body.metadata.resourceVersion;
    const open = request(`${base}${V1}/websites?watch=true&resourceVersion=${before}`, { headers: { authorization: 'Bearer admin' } });
    const sealed = await call('POST', `${M}/seal`, { minResourceVersion: '5000000' });
    expect(sealed.status).toBe(200);
    expect(Number(sealed.body.resourceVersion)).toBeGreaterThanOrEqual(5000000);
    // The open watch ended (its client comes back with its resourceVersion and meets the 410 below).
    const ended = await open;
    await ended.body.text();
    expect(sealed.body.endedWatches).toBe(1);
    const old = await request(`${base}${V1}/websites?watch=true&resourceVersion=${before}`, { headers: { authorization: 'Bearer admin' } });
    const lines = (await old.body.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      {
        type: 'ERROR',
        object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired', message: expect.stringContaining('too old resource version') }),
      },
    ]);
    // A list at a resourceVersion the client had is no older than what it saw: served.
    const relist = await call('GET', `${V1}/websites?resourceVersion=${before}`);
    expect(relist.status).toBe(200);
    expect(relist.body.metadata.resourceVersion).toBe(sealed.body.resourceVersion);
    expect(relist.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(['a']);
    // An exact read of a snapshot from before the seal is gone.
    expect((await call('GET', `${V1}/websites?resourceVersion=${before}&resourceVersionMatch=Exact`)).status).toBe(410);
    // A watch from the list's resourceVersion gets the next write.
    const watch = request(`${base}${V1}/websites?watch=true&resourceVersion=${relist.body.metadata.resourceVersion}&timeoutSeconds=2`, {
      headers: { authorization: 'Bearer admin' },
    });
    const label = await call('POST', `${M}/objects`, { put: [{ ...moved('a'), metadata: { ...moved('a').metadata, labels: { app: 'a', moved: 'yes' } } }] });
    expect(label.body).toMatchObject({ updated: 1 });
    const events = (await (await watch).body.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e: { type: string; object: { metadata: { labels: Record<string, string> } } }) => [e.type, e.object.metadata.labels])).toEqual([
      ['MODIFIED', { app: 'a', moved: 'yes' }],
    ]);
    const state = await call('GET', '/migration/v1/resources');
    expect(state.body.resources).toContainEqual(
      expect.objectContaining({ group: 'extensions.example.com', resource: 'websites', sealedResourceVersion: sealed.body.resourceVersion }),
    );
  });
});

describe('freeze', () => {
  it('answers writes 429 with Retry-After while frozen, reads as usual, and writes again once thawed', async () => {
    expect((await call('PUT', `${M}/freeze`, { frozen: true })).body).toEqual({ frozen: true });
    const patch = await request(`${base}${V1}/namespaces/team-a/websites/a`, {
      method: 'PATCH',
      headers: { authorization: 'Bearer admin', 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { labels: { x: 'y' } } }),
    });
    expect(patch.statusCode).toBe(429);
    expect(patch.headers['retry-after']).toBe('1');
    expect(await patch.body.json()).toMatchObject({ kind: 'Status', code: 429, reason: 'TooManyRequests', details: { retryAfterSeconds: 1 } });
    expect((await call('DELETE', `${V1}/namespaces/team-a/websites/a`)).status).toBe(429);
    expect((await call('GET', `${V1}/namespaces/team-a/websites/a`)).status).toBe(200);
    await call('PUT', `${M}/freeze`, { frozen: false });
    const after = await request(`${base}${V1}/namespaces/team-a/websites/a`, {
      method: 'PATCH',
      headers: { authorization: 'Bearer admin', 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { labels: { x: 'y' } } }),
    });
    const text = await after.body.text();
    expect(after.statusCode, text).toBe(200);
  });

  it('end-watches ends open watches with 410 and refuses new ones with a 410 ERROR event until the resource is thawed', async () => {
    await call('PUT', `${M}/freeze`, { frozen: true });
    const open = request(`${base}${V1}/websites?watch=true`, { headers: { authorization: 'Bearer admin' } });
    await new Promise((r) => setTimeout(r, 200));
    const ended = await call('POST', `${M}/end-watches`);
    expect(ended.body).toEqual({ endedWatches: 1 });
    const lines = (await (await open).body.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.at(-1)).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    // A new watch is refused as kube's cacher refuses one it cannot serve: 200, then one ERROR event.
    const refused = await request(`${base}${V1}/websites?watch=1`, { headers: { authorization: 'Bearer admin' } });
    expect(refused.statusCode).toBe(200);
    expect(
      (await refused.body.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: 410, reason: 'Expired', message: expect.stringContaining('re-list') }) },
    ]);
    // Lists and gets still answer; a thaw ends the release.
    expect((await call('GET', `${V1}/websites`)).status).toBe(200);
    await call('PUT', `${M}/freeze`, { frozen: false });
    const watch = await request(`${base}${V1}/websites?watch=true&timeoutSeconds=1`, { headers: { authorization: 'Bearer admin' } });
    expect(watch.statusCode).toBe(200);
    await watch.body.text();
  });

  it('the webhook refuses any AdmissionReview with 429 and Retry-After, without credentials', async () => {
    const r = await call(
      'POST',
      '/migration/v1/admission/freeze',
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'u-1' } },
      false,
    );
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid: 'u-1',
        allowed: false,
        status: { code: 429, reason: 'TooManyRequests', message: expect.any(String), details: { retryAfterSeconds: 1 } },
      },
    });
  });
});
