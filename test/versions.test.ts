/**
 * Website in both served versions, v1 (stored, preferred) and v1alpha1, on a real server: one set of objects, seen
 * by each version in its own shape. Watches of either version get the same events (same types, same
 * resourceVersions) whichever version wrote; lists, selectors, tables, /status and /scale work in both; server-side
 * apply records the version each manager applied with and finds conflicts across versions; validation speaks the
 * request's version.
 */
import type { Agent } from 'undici';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAgent, call, cleanupTempDirs, startServer, type ServerProcess } from './helpers/server-process.js';

const NS = 'versions';
const G = 'extensions.example.com';
const V1 = `/apis/${G}/v1/namespaces/${NS}/websites`;
const ALPHA = `/apis/${G}/v1alpha1/namespaces/${NS}/websites`;
const REPO = 'https://github.com/luksa/kubia-website-example.git';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const PORT_ANNOTATION = 'extensions.example.com/node-port';

let server: ServerProcess;
let agent: Agent;

beforeAll(async () => {
  server = await startServer();
  agent = adminAgent(server.certDir);
}, 30_000);

afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

const v1Site = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: `${G}/v1`,
  kind: 'Website',
  metadata: { name, ...metadata },
  spec: { git: { repository: REPO }, ...spec },
});
const alphaSite = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: `${G}/v1alpha1`,
  kind: 'Website',
  metadata: { name, ...metadata },
  spec: { gitRepo: REPO, ...spec },
});

/** watchLines reads a watch until it ends (timeoutSeconds) and returns its events. */
async function watchLines(path: string, rv: string, headers: Record<string, string> = {}): Promise<any[]> {
  const res = await request(`${server.url}${path}?watch=1&resourceVersion=${rv}&timeoutSeconds=2`, { dispatcher: agent, headers });
  expect(res.statusCode).toBe(200);
  const text = await res.body.text();
  return text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('Website in v1 and v1alpha1', () => {
  it('watches of both versions see the same events, whichever version wrote, each in its own shape', async () => {
    const start = (await call(agent, `${server.url}${V1}`)).body.metadata.resourceVersion as string;
    const alphaWatch = watchLines(ALPHA, start);
    const v1Watch = watchLines(V1, start);
    const tableWatch = watchLines(ALPHA, start, TABLE);
    const created = await call(agent, `${server.url}${V1}`, 'POST', v1Site('watched', { service: { nodePort: 30200 } }));
    expect(created.status, created.text).toBe(201);
    const patched = await call(agent, `${server.url}${ALPHA}/watched`, 'PATCH', { spec: { branch: 'main' } }, MERGE);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.spec).toEqual({ gitRepo: REPO, branch: 'main', replicas: 1, syncIntervalSeconds: 60, serviceType: 'NodePort' });
    expect((await call(agent, `${server.url}${V1}/watched`, 'DELETE')).status).toBe(200);

    const [alpha, v1, table] = await Promise.all([alphaWatch, v1Watch, tableWatch]);
    const summary = (events: any[]) => events.map((e) => `${e.type} ${e.object.metadata.resourceVersion}`);
    expect(summary(alpha)).toEqual(summary(v1));
    expect(alpha.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(alpha.every((e) => e.object.apiVersion === `${G}/v1alpha1`)).toBe(true);
    expect(v1.every((e) => e.object.apiVersion === `${G}/v1`)).toBe(true);
    expect(alpha[0].object.metadata.annotations).toEqual({ [PORT_ANNOTATION]: '30200' });
    expect(alpha[1].object.spec.branch).toBe('main');
    expect(v1[1].object.spec.git).toEqual({ repository: REPO, branch: 'main', syncIntervalSeconds: 60 });
    expect(v1[1].object.spec.service).toEqual({ type: 'NodePort', nodePort: 30200 });
    expect(v1[1].object.metadata.annotations).toBeUndefined();
    // The Table watch in v1alpha1 has the columns and the cells of that version's printer.
    expect(table[0].object.columnDefinitions.map((c: any) => c.name)).toEqual([
      'Name',
      'Git-Repo',
      'Ready',
      'Type',
      'Port',
      'Status',
      'Age',
      'Branch',
      'Deployment',
    ]);
    expect(table[1].object.rows[0].cells.slice(0, 2)).toEqual(['watched', REPO]);
    expect(table[1].object.rows[0].cells[7]).toBe('main');
  });

  it('lists, selectors and tables agree across versions', async () => {
    for (const [name, tier] of [
      ['a', 'web'],
      ['b', 'db'],
      ['c', 'web'],
    ] as const) {
      expect((await call(agent, `${server.url}${ALPHA}`, 'POST', alphaSite(name, { branch: `br-${name}` }, { labels: { tier } }))).status).toBe(201);
    }
    const names = async (path: string) => ((await call(agent, `${server.url}${path}`)).body.items as any[]).map((i) => i.metadata.name);
    for (const base of [V1, ALPHA]) {
      expect(await names(`${base}?labelSelector=tier%3Dweb`)).toEqual(['a', 'c']);
      expect(await names(`${base}?fieldSelector=metadata.name%3Db`)).toEqual(['b']);
      expect(await names(`${base}?limit=2`)).toEqual(['a', 'b']);
    }
    const rows = async (path: string) =>
      ((await call(agent, `${server.url}${path}`, 'GET', undefined, TABLE)).body.rows as any[]).map((r) => r.cells.slice(0, 6));
    expect(await rows(V1)).toEqual(await rows(ALPHA));
    const v1List = (await call(agent, `${server.url}${V1}`)).body;
    const alphaList = (await call(agent, `${server.url}${ALPHA}`)).body;
    expect(v1List.apiVersion).toBe(`${G}/v1`);
    expect(alphaList.apiVersion).toBe(`${G}/v1alpha1`);
    expect(v1List.metadata.resourceVersion).toBe(alphaList.metadata.resourceVersion);
    expect(v1List.items.map((i: any) => i.spec.git.branch)).toEqual(alphaList.items.map((i: any) => i.spec.branch));
  });

  it('/status written in one version is read in the other, and /scale works in both', async () => {
    const w = (await call(agent, `${server.url}${ALPHA}/a`)).body;
    const status = {
      observedGeneration: 1,
      replicas: 1,
      readyReplicas: 1,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: '2026-11-27T00:00:00Z' }],
    };
    const put = await call(agent, `${server.url}${ALPHA}/a/status`, 'PUT', { ...w, status });
    expect(put.status, put.text).toBe(200);
    expect((await call(agent, `${server.url}${V1}/a`)).body.status).toMatchObject(status);
    const scale = await call(agent, `${server.url}${V1}/a/scale`);
    expect(scale.body).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 1 }, status: { replicas: 1 } });
    const scaled = await call(agent, `${server.url}${V1}/a/scale`, 'PATCH', { spec: { replicas: 4 } }, MERGE);
    expect(scaled.status, scaled.text).toBe(200);
    expect((await call(agent, `${server.url}${ALPHA}/a/scale`)).body.spec.replicas).toBe(4);
    expect((await call(agent, `${server.url}${ALPHA}/a`)).body.spec.replicas).toBe(4);
  });

  it("server-side apply records each manager's version and finds a conflict across versions, named in the owner's version", async () => {
    const first = await call(
      agent,
      `${server.url}${V1}/ssa?fieldManager=v1-tool`,
      'PATCH',
      v1Site('ssa', { replicas: 2, service: { nodePort: 30300 } }),
      APPLY,
    );
    expect(first.status, first.text).toBe(201);
    const conflict = await call(
      agent,
      `${server.url}${ALPHA}/ssa?fieldManager=alpha-tool`,
      'PATCH',
      alphaSite('ssa', { gitRepo: 'https://example.com/other.git' }, { annotations: { [PORT_ANNOTATION]: '30301' } }),
      APPLY,
    );
    expect(conflict.status).toBe(409);
    // The owner applied in v1: its fields are named as v1 names them (structured-merge-diff's conflict set).
    expect(conflict.body.message).toBe('Apply failed with 2 conflicts: conflicts with "v1-tool":\n- .spec.git.repository\n- .spec.service.nodePort');
    const forced = await call(
      agent,
      `${server.url}${ALPHA}/ssa?fieldManager=alpha-tool&force=true`,
      'PATCH',
      alphaSite('ssa', { gitRepo: 'https://example.com/other.git' }, { annotations: { [PORT_ANNOTATION]: '30301' } }),
      APPLY,
    );
    expect(forced.status, forced.text).toBe(200);
    const v1 = (await call(agent, `${server.url}${V1}/ssa`)).body;
    expect(v1.spec.git.repository).toBe('https://example.com/other.git');
    expect(v1.spec.service.nodePort).toBe(30301);
    const entries = Object.fromEntries((v1.metadata.managedFields as any[]).map((m) => [m.manager, m]));
    // Each entry in the version it was applied with, its fields in that version's terms.
    // v1-tool lost the two fields taken from it and keeps the one it still owns.
    expect(entries['v1-tool']).toMatchObject({ apiVersion: `${G}/v1`, fieldsV1: { 'f:spec': { 'f:replicas': {} } } });
    expect(entries['alpha-tool']).toMatchObject({
      apiVersion: `${G}/v1alpha1`,
      fieldsV1: { 'f:metadata': { 'f:annotations': { [`f:${PORT_ANNOTATION}`]: {} } }, 'f:spec': { 'f:gitRepo': {} } },
    });
  });

  it("validates in the request's version: v1 names its fields, v1alpha1 the annotation that carries the node port", async () => {
    const clusterIP = await call(agent, `${server.url}${V1}`, 'POST', v1Site('bad-port', { service: { type: 'ClusterIP', nodePort: 30400 } }));
    expect(clusterIP.status).toBe(422);
    expect(clusterIP.body.details.causes).toEqual([
      { reason: 'FieldValueForbidden', field: 'spec.service.nodePort', message: 'Forbidden: may only be set when type is NodePort or LoadBalancer' },
    ]);
    const range = await call(agent, `${server.url}${V1}`, 'POST', v1Site('low-port', { service: { nodePort: 80 } }));
    expect(range.status).toBe(422);
    expect(range.body.message).toContain('spec.service.nodePort: Invalid value: 80: spec.service.nodePort in body should be greater than or equal to 30000');
    const reserved = await call(agent, `${server.url}${V1}`, 'POST', v1Site('reserved', {}, { annotations: { [PORT_ANNOTATION]: '30500' } }));
    expect(reserved.status).toBe(422);
    expect(reserved.body.details.causes[0].field).toBe(`metadata.annotations[${PORT_ANNOTATION}]`);
    const alpha = await call(agent, `${server.url}${ALPHA}`, 'POST', alphaSite('alpha-port', {}, { annotations: { [PORT_ANNOTATION]: '99999' } }));
    expect(alpha.status).toBe(422);
    expect(alpha.body.details.causes).toEqual([expect.objectContaining({ field: `metadata.annotations[${PORT_ANNOTATION}]` })]);
    expect(alpha.body.message).toContain('must be a node port, 30000 to 32767');
    const missing = await call(agent, `${server.url}${V1}`, 'POST', { apiVersion: `${G}/v1`, kind: 'Website', metadata: { name: 'no-git' }, spec: {} });
    expect(missing.body.message).toContain('spec.git: Required value');
  });
});
