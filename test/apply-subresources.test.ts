/**
 * Server-side apply on /status and /scale, and the apply errors kube-apiserver 1.37 gives for a CRD, on the wire (one
 * real server process over HTTPS). Expected answers were taken from kube-apiserver serving the Website CRD
 * (test/bench/crd.mjs): k8s.io/apiserver pkg/endpoints/handlers/patch.go (applyPatcher), the field manager of
 * k8s.io/apimachinery pkg/util/managedfields/internal (versioncheck.go, structuredmerge.go, conflict.go, scalehandler.go)
 * and the CRD strategies' reset fields (apiextensions-apiserver pkg/registry/customresource status_strategy.go).
 */
import type { Agent } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import { API, call, type ServerProcess, useServer, website } from './helpers/server-process.js';

let server: ServerProcess;
let agent: Agent;
const ns = (n: string) => `${server.url}${API}/namespaces/${n}/websites`;
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const GV = 'extensions.example.com/v1alpha1';
// The repository website() creates objects with: applying the same value is no conflict with their creator.
const REPO = website('x').spec.gitRepo;

const badRequest = (message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'BadRequest', code: 400 });
/** entries lists managedFields without their times. */
const entries = (obj: any) => (obj.metadata.managedFields as any[]).map(({ time: _t, ...e }) => e);

useServer((s, a) => {
  server = s;
  agent = a;
});

describe("apply on /status (what controller-runtime's Status().Apply sends)", () => {
  it("applies only status: spec and labels in the body are ignored, the entry is the manager's Apply under subresource status", async () => {
    expect((await call(agent, ns('st'), 'POST', website('a'), { 'user-agent': 'creator/1.0' })).status).toBe(201);
    const body = {
      apiVersion: GV,
      kind: 'Website',
      metadata: { name: 'a', namespace: 'st', labels: { x: 'y' } },
      spec: { replicas: 9 },
      status: { replicas: 3, deployment: 'd1' },
    };
    const r = await call(agent, `${ns('st')}/a/status?fieldManager=ctrl&force=true`, 'PATCH', JSON.stringify(body), APPLY);
    expect(r.status).toBe(200);
    expect(r.body.status).toMatchObject({ replicas: 3, deployment: 'd1' });
    expect(r.body.spec.replicas).toBe(1);
    expect(r.body.metadata.labels).toBeUndefined();
    expect(r.body.metadata.generation).toBe(1);
    // Apply entries come before Update ones (sortEncodedManagedFields).
    expect(entries(r.body)).toEqual([
      {
        manager: 'ctrl',
        operation: 'Apply',
        apiVersion: GV,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:status': { 'f:replicas': {}, 'f:deployment': {} } },
        subresource: 'status',
      },
      expect.objectContaining({ manager: 'creator', operation: 'Update' }),
    ]);
    const stored = await call(agent, `${ns('st')}/a`);
    expect(stored.body.status).toMatchObject({ replicas: 3, deployment: 'd1' });
    expect(stored.body.metadata.managedFields).toEqual(r.body.metadata.managedFields);
  });

  it("a field the applier stops applying is removed; another manager's status field conflicts unless forced", async () => {
    const apply = (status: object, query = '') =>
      call(
        agent,
        `${ns('st')}/a/status?fieldManager=ctrl${query}`,
        'PATCH',
        JSON.stringify({ apiVersion: GV, kind: 'Website', metadata: { name: 'a' }, status }),
        APPLY,
      );
    const dropped = await apply({ replicas: 3 });
    expect(dropped.status).toBe(200);
    expect(dropped.body.status.deployment).toBeUndefined();
    // Another manager writes status.replicas through a merge patch of /status (an Update entry for subresource status).
    expect((await call(agent, `${ns('st')}/a/status?fieldManager=other`, 'PATCH', { status: { replicas: 5 } }, MERGE)).status).toBe(200);
    const c = await apply({ replicas: 4 });
    expect(c.status).toBe(409);
    expect(c.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      message: `Apply failed with 1 conflict: conflict with "other" with subresource "status" using ${GV}: .status.replicas`,
      // errors.NewApplyConflict: causes only, no name, group or kind.
      details: {
        causes: [{ reason: 'FieldManagerConflict', message: `conflict with "other" with subresource "status" using ${GV}`, field: '.status.replicas' }],
      },
    });
    const forced = await apply({ replicas: 4 }, '&force=true');
    expect(forced.status).toBe(200);
    expect(forced.body.status.replicas).toBe(4);
    expect(entries(forced.body).map((e) => `${e.manager}/${e.operation}/${e.subresource ?? ''}`)).toEqual(['ctrl/Apply/status', 'creator/Update/']);
  });

  it('on a missing object is 404 NotFound and creates nothing (the status store never creates)', async () => {
    const r = await call(
      agent,
      `${ns('st')}/missing/status?fieldManager=ctrl`,
      'PATCH',
      JSON.stringify({ apiVersion: GV, kind: 'Website', metadata: { name: 'missing' }, status: { replicas: 1 } }),
      APPLY,
    );
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ reason: 'NotFound', message: 'websites.extensions.example.com "missing" not found' });
    expect((await call(agent, `${ns('st')}/missing`)).status).toBe(404);
  });

  it('a main-resource apply of the same object still owns spec, and never status', async () => {
    const r = await call(
      agent,
      `${ns('st')}/a?fieldManager=ctrl`,
      'PATCH',
      JSON.stringify({ apiVersion: GV, kind: 'Website', metadata: { name: 'a' }, spec: { gitRepo: REPO }, status: { replicas: 7 } }),
      APPLY,
    );
    expect(r.status).toBe(200);
    expect(r.body.status.replicas).toBe(4);
    expect(entries(r.body).find((e) => e.manager === 'ctrl' && !e.subresource)).toMatchObject({
      operation: 'Apply',
      fieldsV1: { 'f:spec': { 'f:gitRepo': {} } },
    });
  });
});

describe('apply on /scale (the body is an autoscaling/v1 Scale)', () => {
  const scale = (replicas: number, name = 'a') => JSON.stringify({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name }, spec: { replicas } });

  it("conflicts with the creator, in the Scale's terms (ScaleHandler: autoscaling/v1, .spec.replicas)", async () => {
    expect((await call(agent, ns('sc'), 'POST', website('a'), { 'user-agent': 'creator/1.0' })).status).toBe(201);
    const r = await call(agent, `${ns('sc')}/a/scale?fieldManager=hpa`, 'PATCH', scale(4), APPLY);
    expect(r.status).toBe(409);
    expect(r.body.message).toBe('Apply failed with 1 conflict: conflict with "creator" using autoscaling/v1: .spec.replicas');
    expect(r.body.details).toEqual({
      causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "creator" using autoscaling/v1', field: '.spec.replicas' }],
    });
  });

  it('an unchanged value is no conflict; force takes the field: the Scale back, spec.replicas set, an entry under subresource scale', async () => {
    const same = await call(agent, `${ns('sc')}/a/scale?fieldManager=other`, 'PATCH', scale(1), APPLY);
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 1 } });
    const r = await call(agent, `${ns('sc')}/a/scale?fieldManager=hpa&force=true`, 'PATCH', scale(4), APPLY);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 'a' }, spec: { replicas: 4 } });
    const obj = (await call(agent, `${ns('sc')}/a`)).body;
    expect(obj.spec.replicas).toBe(4);
    expect(obj.metadata.generation).toBe(2);
    expect(entries(obj)).toContainEqual({
      manager: 'hpa',
      operation: 'Apply',
      apiVersion: GV,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      subresource: 'scale',
    });
    // Forcing took .spec.replicas from everyone else: the creator keeps the rest, "other" is left with nothing.
    expect(
      entries(obj)
        .map((e) => e.manager)
        .sort(),
    ).toEqual(['creator', 'hpa']);
    expect(entries(obj).find((e) => e.manager === 'creator').fieldsV1['f:spec']['f:replicas']).toBeUndefined();
  });

  it("a merge patch of /scale is an Update entry under subresource scale, and the same manager's main-resource apply is another manager", async () => {
    expect((await call(agent, `${ns('sc')}/a/scale?fieldManager=kubectl-scale`, 'PATCH', { spec: { replicas: 2 } }, MERGE)).status).toBe(200);
    const obj = (await call(agent, `${ns('sc')}/a`)).body;
    expect(entries(obj)).toContainEqual(
      expect.objectContaining({ manager: 'kubectl-scale', operation: 'Update', subresource: 'scale', fieldsV1: { 'f:spec': { 'f:replicas': {} } } }),
    );
    const r = await call(agent, `${ns('sc')}/a/scale?fieldManager=kubectl-scale`, 'PATCH', scale(3), APPLY);
    expect(r.body.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-scale" with subresource "scale" using autoscaling/v1: .spec.replicas');
  });

  it('on a missing object is 404; replicas must be a non-negative integer', async () => {
    expect((await call(agent, `${ns('sc')}/nope/scale?fieldManager=hpa`, 'PATCH', scale(1, 'nope'), APPLY)).status).toBe(404);
    const neg = await call(agent, `${ns('sc')}/a/scale?fieldManager=hpa&force=true`, 'PATCH', scale(-1), APPLY);
    expect(neg.status).toBe(422);
    expect(neg.body.details.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'spec.replicas' },
    ]);
  });
});

describe('what the field manager refuses before applying (400 BadRequest)', () => {
  beforeAll(async () => {
    expect((await call(agent, ns('bad'), 'POST', website('a'))).status).toBe(201);
  });

  it.each([
    ['the object', '/a', { apiVersion: GV, kind: 'Website', metadata: { name: 'a', managedFields: [{ manager: 'x', operation: 'Apply' }] } }],
    ['the object, an empty list', '/a', { apiVersion: GV, kind: 'Website', metadata: { name: 'a', managedFields: [] } }],
    ['a new object', '/new', { apiVersion: GV, kind: 'Website', metadata: { name: 'new', managedFields: [{ manager: 'x' }] }, spec: { gitRepo: REPO } }],
    ['/status', '/a/status', { apiVersion: GV, kind: 'Website', metadata: { name: 'a', managedFields: [{ manager: 'x' }] }, status: { replicas: 1 } }],
    ['/scale', '/a/scale', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'a', managedFields: [] }, spec: { replicas: 2 } }],
  ])('managedFields in the applied object of %s: "metadata.managedFields must be nil"', async (_what, path, body) => {
    const r = await call(agent, `${ns('bad')}${path}?fieldManager=x`, 'PATCH', JSON.stringify(body), APPLY);
    expect(r.body).toEqual(badRequest('metadata.managedFields must be nil'));
    expect((await call(agent, `${ns('bad')}/new`)).status).toBe(404);
    expect((await call(agent, `${ns('bad')}/a`)).body.spec.replicas).toBe(1);
  });

  it('managedFields: null is no managedFields at all', async () => {
    const body = { apiVersion: GV, kind: 'Website', metadata: { name: 'a', managedFields: null }, spec: { gitRepo: REPO } };
    expect((await call(agent, `${ns('bad')}/a?fieldManager=x`, 'PATCH', JSON.stringify(body), APPLY)).status).toBe(200);
  });

  it.each([
    ['/a', { kind: 'Website', metadata: { name: 'a' } }, 'invalid object type: /, Kind=Website'],
    ['/a', { apiVersion: 'v1', kind: 'Website' }, 'invalid object type: /v1, Kind=Website'],
    ['/a', { apiVersion: 'a/b/c', kind: 'Website' }, 'invalid object type: /, Kind='],
    ['/a/status', { apiVersion: GV, kind: 'Foo' }, `invalid object type: ${GV}, Kind=Foo`],
    ['/a/scale', { spec: { replicas: 5 } }, 'invalid object type: /, Kind='],
    ['/a/scale', { apiVersion: GV, kind: 'Website', spec: { replicas: 5 } }, `invalid object type: ${GV}, Kind=Website`],
  ])('%s with %j: %s (versionCheckManager)', async (path, body, message) => {
    expect((await call(agent, `${ns('bad')}${path}?fieldManager=x`, 'PATCH', JSON.stringify(body), APPLY)).body).toEqual(badRequest(message));
  });

  it('several conflicts are grouped by manager (conflict.go getConflictMessage)', async () => {
    await call(agent, `${ns('bad')}/a?fieldManager=one`, 'PATCH', { spec: { branch: 'x' } }, MERGE);
    const two = await call(
      agent,
      `${ns('bad')}/a?fieldManager=two&force=true`,
      'PATCH',
      JSON.stringify({ apiVersion: GV, kind: 'Website', metadata: { name: 'a' }, spec: { serviceType: 'ClusterIP' } }),
      APPLY,
    );
    expect(two.status).toBe(200);
    const body = { apiVersion: GV, kind: 'Website', metadata: { name: 'a' }, spec: { gitRepo: REPO, branch: 'y', serviceType: 'NodePort' } };
    const r = await call(agent, `${ns('bad')}/a?fieldManager=three`, 'PATCH', JSON.stringify(body), APPLY);
    expect(r.status).toBe(409);
    expect(r.body.message).toBe(`Apply failed with 2 conflicts: conflicts with "one" using ${GV}:\n- .spec.branch\nconflicts with "two":\n- .spec.serviceType`);
  });
});

describe('patch types of /status and /scale', () => {
  it.each(['/a', '/a/status', '/a/scale'])('%s: 415 lists the same three types, apply included, with no details', async (path) => {
    await call(agent, ns('types'), 'POST', website('a'));
    const r = await call(agent, `${ns('types')}${path}`, 'PATCH', '{}', { 'content-type': 'application/strategic-merge-patch+json' });
    expect(r.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason: 'UnsupportedMediaType',
      code: 415,
      message:
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    });
  });

  it('the OpenAPI documents advertise what the routes accept', async () => {
    const v2 = await call(agent, `${server.url}/openapi/v2`, 'GET', undefined, { accept: 'application/json' });
    for (const sub of ['status', 'scale']) {
      expect(v2.body.paths[`${API}/namespaces/{namespace}/websites/{name}/${sub}`].patch.consumes).toContain('application/apply-patch+yaml');
    }
  });
});
