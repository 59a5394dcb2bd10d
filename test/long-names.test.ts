/**
 * Names of 101 to 253 characters (the DNS-1123 subdomain limit of object names) work on every path, over HTTPS on a
 * real server process: the router bounds no path segment on its own, as kube-apiserver does not (the URL as a whole
 * is what is bounded). A longer name is refused by validation on create (422) and simply not found elsewhere (404),
 * which is what kube-apiserver serving the Website CRD answers; never 414.
 */
import { request, type Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { API, call, useServer, website, type ServerProcess } from './helpers/server-process.js';

let server: ServerProcess;
let agent: Agent;
const NS = 'long';
const base = () => `${server.url}${API}/namespaces/${NS}/websites`;
const MERGE = { 'content-type': 'application/merge-patch+json' };

/** longName builds a valid DNS subdomain of exactly n characters: 63-character labels joined by dots. */
function longName(n: number, seed: string): string {
  let s = '';
  while (s.length < n) s += (s ? '.' : '') + `${seed}${'a'.repeat(62)}`.slice(0, Math.min(63, n - s.length - (s ? 1 : 0)));
  return s;
}

useServer((s, a) => {
  server = s;
  agent = a;
});

describe.each([101, 200, 253])('a name of %i characters', (n) => {
  const name = longName(n, String.fromCharCode(97 + (n % 26)));
  const item = () => `${base()}/${name}`;

  it('is a valid name of that length', () => {
    expect(name).toHaveLength(n);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
  });

  it('is created, read, updated, patched and applied by name', async () => {
    expect((await call(agent, base(), 'POST', website(name))).status).toBe(201);
    const got = await call(agent, item());
    expect(got.status).toBe(200);
    expect(got.body.metadata.name).toBe(name);
    const put = await call(agent, item(), 'PUT', { ...got.body, spec: { ...got.body.spec, branch: 'main' } });
    expect(put.status).toBe(200);
    expect((await call(agent, item(), 'PATCH', { metadata: { labels: { a: 'b' } } }, MERGE)).status).toBe(200);
    expect(
      (await call(agent, item(), 'PATCH', [{ op: 'replace', path: '/spec/replicas', value: 2 }], { 'content-type': 'application/json-patch+json' })).status,
    ).toBe(200);
    const applied = await call(agent, `${item()}?fieldManager=t`, 'PATCH', JSON.stringify({ ...website(name), metadata: { name } }), {
      'content-type': 'application/apply-patch+yaml',
    });
    expect(applied.status).toBe(200);
  });

  it('has its /status and /scale', async () => {
    expect((await call(agent, `${item()}/status`)).status).toBe(200);
    expect((await call(agent, `${item()}/status`, 'PATCH', { status: { replicas: 1 } }, MERGE)).status).toBe(200);
    expect((await call(agent, `${item()}/scale`)).body).toMatchObject({ kind: 'Scale', metadata: { name } });
    const scaled = await call(agent, `${item()}/scale`, 'PATCH', { spec: { replicas: 3 } }, MERGE);
    expect(scaled.body).toMatchObject({ kind: 'Scale', spec: { replicas: 3 } });
    const put = await call(agent, `${item()}/scale`, 'PUT', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name }, spec: { replicas: 4 } });
    expect(put.body).toMatchObject({ kind: 'Scale', spec: { replicas: 4 } });
  });

  it('is listed and watched by fieldSelector=metadata.name', async () => {
    const sel = `fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`;
    const list = await call(agent, `${base()}?${sel}`);
    expect(list.body.items.map((i: any) => i.metadata.name)).toEqual([name]);
    const res = await request(`${base()}?watch=true&timeoutSeconds=1&${sel}`, { dispatcher: agent });
    expect(res.statusCode).toBe(200);
    const events = (await res.body.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([['ADDED', name]]);
  });

  it('is deleted by name', async () => {
    const d = await call(agent, item(), 'DELETE');
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ status: 'Success', details: { name } });
    expect((await call(agent, item())).status).toBe(404);
  });
});

describe('names beyond 253 characters', () => {
  it("are refused on create with the name validation's 422 and are not found elsewhere (404, not 414)", async () => {
    const tooLong = longName(254, 'z');
    const c = await call(agent, base(), 'POST', website(tooLong));
    expect(c.status).toBe(422);
    expect(c.body.details.causes[0]).toMatchObject({ field: 'metadata.name', message: expect.stringContaining('must be no more than 253 characters') });
    // Longer than any storage key can be (lmdb's are bounded): still just not found, never a 500.
    const huge = 'b'.repeat(4000);
    for (const [method, path, body, ct] of [
      ['GET', huge],
      ['DELETE', huge],
      ['GET', `${huge}/status`],
      ['GET', `${huge}/scale`],
      ['PUT', huge, { ...website(huge), metadata: { name: huge, resourceVersion: '1' } }],
      ['PATCH', huge, { spec: { replicas: 2 } }, 'application/merge-patch+json'],
      ['PATCH', `${huge}/scale`, { spec: { replicas: 2 } }, 'application/merge-patch+json'],
    ] as const) {
      const r = await call(agent, `${base()}/${path}`, method, body, ct ? { 'content-type': ct } : {});
      expect(r.status, `${method} ${path.slice(-10)}`).toBe(404);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'NotFound', message: `websites.extensions.example.com "${huge}" not found` });
    }
    // An apply would create it: the name validation refuses it.
    const applied = await call(agent, `${base()}/${huge}?fieldManager=t`, 'PATCH', JSON.stringify({ ...website(huge), metadata: { name: huge } }), {
      'content-type': 'application/apply-patch+yaml',
    });
    expect(applied.status).toBe(422);
  });

  it('a namespace no object can be in (longer than 63) lists empty and is watched without error', async () => {
    const other = `${server.url}${API}/namespaces/${'n'.repeat(4000)}/websites`;
    const list = await call(agent, other);
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([]);
    const res = await request(`${other}?watch=true&timeoutSeconds=1`, { dispatcher: agent });
    expect(res.statusCode).toBe(200);
    expect((await res.body.text()).trim()).toBe('');
    expect((await call(agent, `${other}/x`)).status).toBe(404);
  });
});
