/**
 * Wire behaviour of the resource endpoints against a real server process over HTTPS: status codes and Status
 * bodies, metadata rules, optimistic concurrency, subresources, finalizers, dry-run, selectors, content
 * negotiation and watch streams.
 */
import { request, type Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAgent, API, call, cleanupTempDirs, startServer, website, type ServerProcess } from './helpers/server-process.js';

let server: ServerProcess;
let agent: Agent;
const ns = (n: string) => `${server.url}${API}/namespaces/${n}/websites`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSONPATCH = { 'content-type': 'application/json-patch+json' };
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

beforeAll(async () => {
  server = await startServer();
  agent = adminAgent(server.certDir);
});
afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

/** watchLines opens a watch and collects parsed events until `until` returns true or the stream ends. */
async function watchEvents(url: string, until: (events: any[]) => boolean, headers: Record<string, string> = {}, during?: () => Promise<void>) {
  const res = await request(url, { dispatcher: agent, headers });
  const events: any[] = [];
  let buf = '';
  const done = (async () => {
    for await (const chunk of res.body) {
      buf += chunk.toString();
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buf.slice(0, i)));
        buf = buf.slice(i + 1);
      }
      if (until(events)) break;
    }
  })();
  await during?.();
  await Promise.race([done, new Promise((r) => setTimeout(r, 8000))]);
  res.body.destroy();
  return { status: res.statusCode, headers: res.headers, events };
}

describe('errors are metav1.Status with the right code and reason', () => {
  it.each([
    ['an unknown route', 'GET', '/apis/extensions.example.com/v1alpha1/namespaces/x/things', undefined, {}, 404, 'NotFound'],
    ['a missing object', 'GET', `${API}/namespaces/x/websites/nope`, undefined, {}, 404, 'NotFound'],
    ['malformed JSON', 'POST', `${API}/namespaces/x/websites`, '{"spec":', { 'content-type': 'application/json' }, 400, 'BadRequest'],
    ['a protobuf body', 'POST', `${API}/namespaces/x/websites`, 'xx', { 'content-type': 'application/vnd.kubernetes.protobuf' }, 415, 'UnsupportedMediaType'],
    ['a POST on an object path', 'POST', `${API}/namespaces/x/websites/a`, '{}', { 'content-type': 'application/json' }, 405, 'MethodNotAllowed'],
    ['a create across all namespaces', 'POST', `${API}/websites`, '{}', { 'content-type': 'application/json' }, 405, 'MethodNotAllowed'],
    ['an unknown subresource', 'GET', `${API}/namespaces/x/websites/a/logs`, undefined, {}, 404, 'NotFound'],
    ['a bad label selector', 'GET', `${API}/websites?labelSelector=a%20in%20(`, undefined, {}, 400, 'BadRequest'],
    ['an unsupported field selector', 'GET', `${API}/websites?fieldSelector=spec.gitRepo%3Dx`, undefined, {}, 400, 'BadRequest'],
    ['an Accept nothing can satisfy', 'GET', `${API}/websites`, undefined, { accept: 'application/vnd.kubernetes.protobuf' }, 406, 'NotAcceptable'],
    [
      'dryRun other than All',
      'POST',
      `${API}/namespaces/x/websites?dryRun=Some`,
      JSON.stringify(website('d')),
      { 'content-type': 'application/json' },
      422,
      'Invalid',
    ],
    ['sendInitialEvents on a list', 'GET', `${API}/websites?sendInitialEvents=true&resourceVersionMatch=NotOlderThan`, undefined, {}, 422, 'Invalid'],
    ['resourceVersionMatch without resourceVersion', 'GET', `${API}/websites?resourceVersionMatch=Exact`, undefined, {}, 422, 'Invalid'],
  ] as const)('%s', async (_name, method, path, body, headers, code, reason) => {
    const r = await call(agent, `${server.url}${path}`, method, body, headers);
    expect(r.status).toBe(code);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });
  });

  it('answers 413 RequestEntityTooLarge above 3 MiB and keeps serving', async () => {
    const big = JSON.stringify(website('big', {}, { annotations: { a: 'x'.repeat(3 * 1024 * 1024) } }));
    const r = await call(agent, ns('big'), 'POST', big, { 'content-type': 'application/json' });
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'RequestEntityTooLarge', code: 413 });
    expect((await call(agent, `${server.url}/readyz`)).status).toBe(200);
  });

  it('answers 415 for strategic merge patch, naming the accepted patch types', async () => {
    await call(agent, ns('smp'), 'POST', website('a'));
    const r = await call(agent, `${ns('smp')}/a`, 'PATCH', { spec: { replicas: 2 } }, { 'content-type': 'application/strategic-merge-patch+json' });
    expect(r.status).toBe(415);
    expect(r.body.message).toContain('application/json-patch+json, application/merge-patch+json');
  });
});

describe('create', () => {
  it('fills uid, creationTimestamp, generation and resourceVersion, defaults the spec and returns 201', async () => {
    const r = await call(agent, ns('create'), 'POST', website('a', {}, { uid: 'mine', generation: 7 }));
    expect(r.status).toBe(201);
    const m = r.body.metadata;
    expect(m.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(m.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(m.generation).toBe(1);
    expect(Number(m.resourceVersion)).toBeGreaterThan(0);
    expect(m.namespace).toBe('create');
    expect(r.body.spec).toMatchObject({ replicas: 1, syncIntervalSeconds: 60, serviceType: 'NodePort' });
  });

  it('ignores the status a create sends (a subresource); standalone, the server records Ready=False, reason NoCluster', async () => {
    const r = await call(agent, ns('create'), 'POST', { ...website('b'), status: { readyReplicas: 9 } });
    expect(r.status).toBe(201);
    expect(r.body.status.readyReplicas).toBeUndefined();
    expect(r.body.status.observedGeneration).toBe(1);
    expect(r.body.status.conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'False', reason: 'NoCluster' })]));
    // A spec change moves observedGeneration with the generation; a metadata-only change writes no status.
    const spec = await call(agent, `${ns('create')}/b`, 'PATCH', { spec: { replicas: 2 } }, { 'content-type': 'application/merge-patch+json' });
    expect(spec.body.metadata.generation).toBe(2);
    expect(spec.body.status.observedGeneration).toBe(2);
  });

  it('refuses a duplicate name with 409 AlreadyExists', async () => {
    await call(agent, ns('dup'), 'POST', website('a'));
    const r = await call(agent, ns('dup'), 'POST', website('a'));
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ reason: 'AlreadyExists', details: { name: 'a', group: 'extensions.example.com', kind: 'websites' } });
  });

  it('generates a name from generateName', async () => {
    const r = await call(agent, ns('gen'), 'POST', { ...website(''), metadata: { generateName: 'site-' } });
    expect(r.status).toBe(201);
    expect(r.body.metadata.name).toMatch(/^site-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('rejects a namespace in the body that differs from the URL with 400', async () => {
    const r = await call(agent, ns('here'), 'POST', website('a', {}, { namespace: 'there' }));
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('the namespace of the provided object does not match the namespace sent on the request');
  });

  it('reports every invalid field as one 422 cause with a Kubernetes field path', async () => {
    const r = await call(agent, ns('inv'), 'POST', {
      apiVersion: 'extensions.example.com/v1alpha1',
      kind: 'Website',
      metadata: { name: 'Bad_Name', labels: { 'bad key!': 'v' } },
      spec: { replicas: 500, syncIntervalSeconds: 1, serviceType: 'Ingress' },
    });
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    const fields = r.body.details.causes.map((c: any) => c.field);
    expect(fields).toEqual(
      expect.arrayContaining(['metadata.name', 'metadata.labels', 'spec.gitRepo', 'spec.replicas', 'spec.syncIntervalSeconds', 'spec.serviceType']),
    );
    const replicas = r.body.details.causes.find((c: any) => c.field === 'spec.replicas');
    expect(replicas).toMatchObject({ reason: 'FieldValueInvalid', message: 'Invalid value: 500: spec.replicas in body should be less than or equal to 100' });
    expect(r.body.message).toContain('Website.extensions.example.com "Bad_Name" is invalid');
  });

  it('rejects a gitRepo that is not a git URL', async () => {
    const r = await call(agent, ns('inv'), 'POST', website('g', { gitRepo: 'not a url' }));
    expect(r.status).toBe(422);
    expect(r.body.details.causes[0].field).toBe('spec.gitRepo');
  });

  it('handles unknown fields per fieldValidation: Strict 400, Warn header, Ignore silent; all prune', async () => {
    const body = { ...website('fv'), spec: { ...website('fv').spec, colour: 'blue' } };
    const strict = await call(agent, `${ns('fv1')}?fieldValidation=Strict`, 'POST', body);
    expect(strict.status).toBe(400);
    // kube-apiserver's transformDecodeError around the codec's strict error (handlers/rest.go).
    expect(strict.body.message).toBe('Website in version "v1alpha1" cannot be handled as a Website: strict decoding error: unknown field "spec.colour"');
    const warn = await call(agent, `${ns('fv2')}?fieldValidation=Warn`, 'POST', body);
    expect(warn.status).toBe(201);
    expect(String(warn.headers['warning'])).toContain('299 - "unknown field \\"spec.colour\\""');
    expect(warn.body.spec.colour).toBeUndefined();
    const ignore = await call(agent, `${ns('fv3')}?fieldValidation=Ignore`, 'POST', body);
    expect(ignore.status).toBe(201);
    expect(ignore.headers['warning']).toBeUndefined();
    expect((await call(agent, `${ns('fv3')}/fv`)).body.spec.colour).toBeUndefined();
  });

  it('never persists a dryRun=All create', async () => {
    const r = await call(agent, `${ns('dry')}?dryRun=All`, 'POST', website('a'));
    expect(r.status).toBe(201);
    expect(r.body.metadata.uid).toBeDefined();
    expect((await call(agent, `${ns('dry')}/a`)).status).toBe(404);
  });

  it('accepts a YAML body', async () => {
    const yaml = 'apiVersion: extensions.example.com/v1alpha1\nkind: Website\nmetadata:\n  name: y\nspec:\n  gitRepo: git@github.com:a/b.git\n';
    const r = await call(agent, ns('yaml'), 'POST', yaml, { 'content-type': 'application/yaml' });
    expect(r.status).toBe(201);
    expect(r.body.spec.gitRepo).toBe('git@github.com:a/b.git');
  });
});

describe('update, patch and generation', () => {
  it('bumps generation on spec changes only, and never on metadata-only changes', async () => {
    const c = (await call(agent, ns('gen2'), 'POST', website('a'))).body;
    const labelled = await call(agent, `${ns('gen2')}/a`, 'PATCH', { metadata: { labels: { x: 'y' } } }, MERGE);
    expect(labelled.body.metadata.generation).toBe(1);
    expect(Number(labelled.body.metadata.resourceVersion)).toBeGreaterThan(Number(c.metadata.resourceVersion));
    const spec = await call(agent, `${ns('gen2')}/a`, 'PATCH', { spec: { replicas: 3 } }, MERGE);
    expect(spec.body.metadata.generation).toBe(2);
  });

  it('does not write a patch that changes nothing (resourceVersion unchanged)', async () => {
    const c = (await call(agent, ns('noop'), 'POST', website('a'))).body;
    const r = await call(agent, `${ns('noop')}/a`, 'PATCH', { spec: { replicas: 1 } }, MERGE);
    expect(r.body.metadata.resourceVersion).toBe(c.metadata.resourceVersion);
  });

  it('answers 409 Conflict to a PUT or a patch carrying a stale resourceVersion', async () => {
    const c = (await call(agent, ns('occ'), 'POST', website('a'))).body;
    await call(agent, `${ns('occ')}/a`, 'PATCH', { spec: { replicas: 2 } }, MERGE);
    const put = await call(agent, `${ns('occ')}/a`, 'PUT', c);
    expect(put.status).toBe(409);
    expect(put.body.reason).toBe('Conflict');
    expect(put.body.message).toContain('the object has been modified; please apply your changes to the latest version and try again');
    const patch = await call(agent, `${ns('occ')}/a`, 'PATCH', { metadata: { resourceVersion: c.metadata.resourceVersion }, spec: { replicas: 4 } }, MERGE);
    expect(patch.status).toBe(409);
  });

  it('requires a resourceVersion on PUT, keeps uid and creationTimestamp, and checks the name against the URL', async () => {
    const c = (await call(agent, ns('put'), 'POST', website('a'))).body;
    const noRv = await call(agent, `${ns('put')}/a`, 'PUT', website('a', { replicas: 2 }));
    expect(noRv.status).toBe(422);
    const wrongName = await call(agent, `${ns('put')}/a`, 'PUT', { ...c, metadata: { ...c.metadata, name: 'b' } });
    expect(wrongName.status).toBe(400);
    // A uid in the body is a precondition (registry/store.go Update): another one is 409 before anything else.
    const otherUid = await call(agent, `${ns('put')}/a`, 'PUT', { ...c, metadata: { ...c.metadata, uid: 'changed' } });
    expect(otherUid.status).toBe(409);
    expect(otherUid.body.message).toContain('Precondition failed: UID in precondition: changed, UID in object meta: ');
    const ok = await call(agent, `${ns('put')}/a`, 'PUT', {
      ...c,
      metadata: { ...c.metadata, uid: undefined, creationTimestamp: null },
      spec: { ...c.spec, replicas: 5 },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.metadata.uid).toBe(c.metadata.uid);
    expect(ok.body.metadata.creationTimestamp).toBe(c.metadata.creationTimestamp);
    expect(ok.body.spec.replicas).toBe(5);
  });

  it('applies JSON patches atomically and answers 422 when a test op fails', async () => {
    await call(agent, ns('jp'), 'POST', website('a'));
    const failed = await call(
      agent,
      `${ns('jp')}/a`,
      'PATCH',
      [
        { op: 'replace', path: '/spec/replicas', value: 9 },
        { op: 'test', path: '/spec/serviceType', value: 'ClusterIP' },
      ],
      JSONPATCH,
    );
    expect(failed.status).toBe(422);
    expect((await call(agent, `${ns('jp')}/a`)).body.spec.replicas).toBe(1);
    const ok = await call(agent, `${ns('jp')}/a`, 'PATCH', [{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }], JSONPATCH);
    expect(ok.body.metadata.labels).toEqual({ a: 'b' });
  });

  it('answers 404 to a patch of a missing object', async () => {
    const r = await call(agent, `${ns('jp')}/missing`, 'PATCH', { spec: {} }, MERGE);
    expect(r.status).toBe(404);
    expect(r.body.message).toBe('websites.extensions.example.com "missing" not found');
  });

  it('never persists a dryRun=All patch', async () => {
    await call(agent, ns('drypatch'), 'POST', website('a'));
    const r = await call(agent, `${ns('drypatch')}/a?dryRun=All`, 'PATCH', { spec: { replicas: 7 } }, MERGE);
    expect(r.body.spec.replicas).toBe(7);
    expect((await call(agent, `${ns('drypatch')}/a`)).body.spec.replicas).toBe(1);
  });
});

describe('server-side apply', () => {
  const APPLY = { 'content-type': 'application/apply-patch+yaml' };
  const yaml = (name: string, extra = '') =>
    `apiVersion: extensions.example.com/v1alpha1\nkind: Website\nmetadata:\n  name: ${name}\nspec:\n  gitRepo: https://example.com/a.git\n${extra}`;

  it('creates with 201 and records the applier in managedFields', async () => {
    const r = await call(agent, `${ns('ssa')}/a?fieldManager=tool`, 'PATCH', yaml('a', '  replicas: 2\n'), APPLY);
    expect(r.status).toBe(201);
    expect(r.body.spec.replicas).toBe(2);
    expect(r.body.metadata.managedFields).toEqual([
      expect.objectContaining({
        manager: 'tool',
        operation: 'Apply',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:gitRepo': {}, 'f:replicas': {} } },
      }),
    ]);
  });

  it('requires a fieldManager and refuses force on other patch types', async () => {
    const noManager = await call(agent, `${ns('ssa')}/b`, 'PATCH', yaml('b'), APPLY);
    expect(noManager.status).toBe(422);
    expect(noManager.body.message).toContain('fieldManager');
    const force = await call(agent, `${ns('ssa')}/a?force=true`, 'PATCH', { spec: { replicas: 3 } }, MERGE);
    expect(force.status).toBe(422);
  });

  it('conflicts with 409 FieldManagerConflict when another manager owns a changed field, and force takes it over', async () => {
    await call(agent, `${ns('ssa2')}/a?fieldManager=tool`, 'PATCH', yaml('a', '  replicas: 2\n'), APPLY);
    await call(agent, `${ns('ssa2')}/a?fieldManager=editor`, 'PATCH', { spec: { replicas: 4 } }, MERGE);
    const c = await call(agent, `${ns('ssa2')}/a?fieldManager=tool`, 'PATCH', yaml('a', '  replicas: 3\n'), APPLY);
    expect(c.status).toBe(409);
    expect(c.body.reason).toBe('Conflict');
    expect(c.body.details.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "editor" using extensions.example.com/v1alpha1', field: '.spec.replicas' },
    ]);
    const f = await call(agent, `${ns('ssa2')}/a?fieldManager=tool&force=true`, 'PATCH', yaml('a', '  replicas: 3\n'), APPLY);
    expect(f.status).toBe(200);
    expect(f.body.spec.replicas).toBe(3);
    expect(f.body.metadata.managedFields.map((m: any) => m.manager)).toEqual(['tool']);
  });

  it('removes a field the applier stops applying, unless another manager owns it', async () => {
    await call(agent, `${ns('ssa3')}/a?fieldManager=tool`, 'PATCH', yaml('a', '  branch: dev\n  serviceType: ClusterIP\n'), APPLY);
    await call(agent, `${ns('ssa3')}/a?fieldManager=other`, 'PATCH', yaml('a', '  serviceType: ClusterIP\n'), APPLY);
    const r = await call(agent, `${ns('ssa3')}/a?fieldManager=tool`, 'PATCH', yaml('a'), APPLY);
    expect(r.body.spec.branch).toBeUndefined();
    expect(r.body.spec.serviceType).toBe('ClusterIP');
  });
});

describe('status and scale subresources', () => {
  it('takes only status through /status and ignores status on the main resource', async () => {
    await call(agent, ns('st'), 'POST', website('a'));
    const s = await call(agent, `${ns('st')}/a/status`, 'PATCH', { spec: { replicas: 9 }, status: { readyReplicas: 1, nodePort: 31000 } }, MERGE);
    expect(s.status).toBe(200);
    expect(s.body.status).toMatchObject({ readyReplicas: 1, nodePort: 31000 });
    expect(s.body.spec.replicas).toBe(1);
    expect(s.body.metadata.generation).toBe(1);
    const main = await call(agent, `${ns('st')}/a`, 'PATCH', { status: { readyReplicas: 5 } }, MERGE);
    expect(main.body.status.readyReplicas).toBe(1);
    const invalid = await call(agent, `${ns('st')}/a/status`, 'PATCH', { status: { readyReplicas: -1 } }, MERGE);
    expect(invalid.status).toBe(422);
    expect(invalid.body.details.causes[0].field).toBe('status.readyReplicas');
  });

  it('serves autoscaling/v1 Scale and maps its replicas onto spec.replicas', async () => {
    await call(agent, ns('sc'), 'POST', website('a'));
    const g = await call(agent, `${ns('sc')}/a/scale`);
    expect(g.body).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 1 },
      status: { replicas: 0, selector: 'app.kubernetes.io/instance=a,app.kubernetes.io/name=website' },
    });
    const p = await call(agent, `${ns('sc')}/a/scale`, 'PATCH', { spec: { replicas: 4 } }, MERGE);
    expect(p.body.spec.replicas).toBe(4);
    const obj = (await call(agent, `${ns('sc')}/a`)).body;
    expect(obj.spec.replicas).toBe(4);
    expect(obj.metadata.generation).toBe(2);
    const tooMany = await call(agent, `${ns('sc')}/a/scale`, 'PUT', { ...p.body, spec: { replicas: 101 } });
    expect(tooMany.status).toBe(422);
    const stale = await call(agent, `${ns('sc')}/a/scale`, 'PUT', { ...g.body, spec: { replicas: 2 } });
    expect(stale.status).toBe(409);
  });
});

describe('delete, finalizers and deletecollection', () => {
  it('returns a Success Status with the uid when the object is gone', async () => {
    const c = (await call(agent, ns('del'), 'POST', website('a'))).body;
    const r = await call(agent, `${ns('del')}/a`, 'DELETE', { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'a', kind: 'websites', uid: c.metadata.uid } });
    expect((await call(agent, `${ns('del')}/a`)).status).toBe(404);
  });

  it('answers 409 when a precondition does not hold', async () => {
    const c = (await call(agent, ns('pre'), 'POST', website('a'))).body;
    const uid = await call(agent, `${ns('pre')}/a`, 'DELETE', { preconditions: { uid: 'other' } });
    expect(uid.status).toBe(409);
    // rest.BeforeDelete's wording, named after the kind.
    expect(uid.body.message).toBe(
      `Operation cannot be fulfilled on Website.extensions.example.com "a": the UID in the precondition (other) does not match the UID in record (${c.metadata.uid}). The object might have been deleted and then recreated`,
    );
    const rv = await call(agent, `${ns('pre')}/a`, 'DELETE', { preconditions: { resourceVersion: '1' } });
    expect(rv.status).toBe(409);
    const ok = await call(agent, `${ns('pre')}/a`, 'DELETE', { preconditions: { uid: c.metadata.uid, resourceVersion: c.metadata.resourceVersion } });
    expect(ok.status).toBe(200);
  });

  it('marks an object with finalizers as deleting, refuses new finalizers, and deletes when the last one goes', async () => {
    await call(agent, ns('fin'), 'POST', website('a', {}, { finalizers: ['example.com/hold'] }));
    const d = await call(agent, `${ns('fin')}/a`, 'DELETE');
    expect(d.status).toBe(200);
    expect(d.body.metadata.deletionTimestamp).toBeDefined();
    expect(d.body.metadata.deletionGracePeriodSeconds).toBe(0);
    expect(d.body.metadata.generation).toBe(2);
    const add = await call(agent, `${ns('fin')}/a`, 'PATCH', { metadata: { finalizers: ['example.com/hold', 'example.com/new'] } }, MERGE);
    expect(add.status).toBe(422);
    const clearTs = await call(agent, `${ns('fin')}/a`, 'PATCH', { metadata: { deletionTimestamp: null } }, MERGE);
    expect(clearTs.body.metadata.deletionTimestamp).toBeDefined();
    const last = await call(agent, `${ns('fin')}/a`, 'PATCH', { metadata: { finalizers: null } }, MERGE);
    expect(last.status).toBe(200);
    expect((await call(agent, `${ns('fin')}/a`)).status).toBe(404);
  });

  it('adds the orphan or foregroundDeletion finalizer for those propagation policies', async () => {
    await call(agent, ns('pol'), 'POST', website('o'));
    await call(agent, ns('pol'), 'POST', website('f'));
    const o = await call(agent, `${ns('pol')}/o`, 'DELETE', { propagationPolicy: 'Orphan' });
    expect(o.body.metadata.finalizers).toEqual(['orphan']);
    const f = await call(agent, `${ns('pol')}/f?propagationPolicy=Foreground`, 'DELETE');
    expect(f.body.metadata.finalizers).toEqual(['foregroundDeletion']);
    const bad = await call(agent, `${ns('pol')}/f`, 'DELETE', { propagationPolicy: 'Sometimes' });
    expect(bad.status).toBe(422);
  });

  it('never persists a dryRun delete', async () => {
    await call(agent, ns('drydel'), 'POST', website('a'));
    const r = await call(agent, `${ns('drydel')}/a?dryRun=All`, 'DELETE');
    expect(r.status).toBe(200);
    expect((await call(agent, `${ns('drydel')}/a`)).status).toBe(200);
  });

  it('deletes a collection by label selector, leaving the rest', async () => {
    for (const [n, tier] of [
      ['a', 'web'],
      ['b', 'web'],
      ['c', 'db'],
    ] as const) {
      await call(agent, ns('dc'), 'POST', website(n, {}, { labels: { tier } }));
    }
    const r = await call(agent, `${ns('dc')}?labelSelector=tier%3Dweb`, 'DELETE');
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe('WebsiteList');
    expect(r.body.items.map((i: any) => i.metadata.name).sort()).toEqual(['a', 'b']);
    expect((await call(agent, ns('dc'))).body.items.map((i: any) => i.metadata.name)).toEqual(['c']);
  });
});

describe('list, selectors and content negotiation', () => {
  beforeAll(async () => {
    for (const [n, labels] of [
      ['a', { app: 'x', tier: 'web' }],
      ['b', { app: 'y' }],
      ['c', {}],
    ] as const) {
      await call(agent, ns('sel'), 'POST', website(n, {}, { labels }));
    }
    await call(agent, ns('sel2'), 'POST', website('a'));
  });

  it.each([
    ['app=x', ['a']],
    ['app!=x', ['b', 'c']],
    ['app in (x,y)', ['a', 'b']],
    ['app notin (x)', ['b', 'c']],
    ['app', ['a', 'b']],
    ['!app', ['c']],
    ['app,tier=web', ['a']],
  ])('selects with labelSelector %s', async (sel, names) => {
    const r = await call(agent, `${ns('sel')}?labelSelector=${encodeURIComponent(sel)}`);
    expect(r.body.items.map((i: any) => i.metadata.name)).toEqual(names);
  });

  it('selects with field selectors on metadata.name and metadata.namespace across namespaces', async () => {
    const byName = await call(agent, `${server.url}${API}/websites?fieldSelector=metadata.name%3Da`);
    expect(byName.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual(expect.arrayContaining(['sel/a', 'sel2/a']));
    const both = await call(agent, `${server.url}${API}/websites?fieldSelector=metadata.name%3Da,metadata.namespace%3Dsel2`);
    expect(both.body.items.map((i: any) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual(['sel2/a']);
  });

  it('lists with kind, apiVersion, a resourceVersion and items: [] when empty', async () => {
    const r = await call(agent, ns('empty-namespace'));
    expect(r.text).toContain('"items":[]');
    expect(r.body).toMatchObject({ kind: 'WebsiteList', apiVersion: 'extensions.example.com/v1alpha1' });
    expect(Number(r.body.metadata.resourceVersion)).toBeGreaterThan(0);
  });

  it('serves a Table with the product columns and PartialObjectMetadata rows', async () => {
    const r = await call(agent, ns('sel'), 'GET', undefined, { accept: TABLE });
    expect(r.body.kind).toBe('Table');
    expect(r.body.apiVersion).toBe('meta.k8s.io/v1');
    expect(r.body.columnDefinitions.map((c: any) => c.name)).toEqual(['Name', 'Git-Repo', 'Ready', 'Type', 'Port', 'Status', 'Age', 'Branch', 'Deployment']);
    expect(r.body.columnDefinitions.filter((c: any) => c.priority > 0).map((c: any) => c.name)).toEqual(['Branch', 'Deployment']);
    expect(r.body.rows[0].cells.slice(0, 6)).toEqual(['a', 'https://github.com/luksa/kubia-website-example.git', '0/1', 'NodePort', '<none>', 'NoCluster']);
    expect(r.body.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'a', namespace: 'sel' } });
    const none = await call(agent, `${ns('sel')}?includeObject=None`, 'GET', undefined, { accept: TABLE });
    expect(none.body.rows[0].object).toBeUndefined();
    const single = await call(agent, `${ns('sel')}/a`, 'GET', undefined, { accept: TABLE });
    expect(single.body.rows).toHaveLength(1);
  });

  it('serves PartialObjectMetadata and PartialObjectMetadataList to the metadata client Accept', async () => {
    const accept = (as: string) =>
      `application/vnd.kubernetes.protobuf;as=${as};g=meta.k8s.io;v=v1,application/json;as=${as};g=meta.k8s.io;v=v1,application/json`;
    const list = await call(agent, ns('sel'), 'GET', undefined, { accept: accept('PartialObjectMetadataList') });
    expect(list.body).toMatchObject({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' });
    expect(list.body.items[0]).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: expect.objectContaining({ name: 'a' }) });
    const one = await call(agent, `${ns('sel')}/a`, 'GET', undefined, { accept: accept('PartialObjectMetadata') });
    expect(one.body.kind).toBe('PartialObjectMetadata');
    expect(one.body.spec).toBeUndefined();
  });

  it('falls back to JSON rather than 406 when a later Accept clause is plain JSON', async () => {
    const r = await call(agent, ns('sel'), 'GET', undefined, {
      accept: 'application/vnd.kubernetes.protobuf, application/json;as=Unknown;g=x;v=y, application/json',
    });
    expect(r.status).toBe(200);
    expect(r.body.kind).toBe('WebsiteList');
  });

  it('waits for a list resourceVersion from the future, then answers 504 ResourceVersionTooLarge', async () => {
    const r = await call(agent, `${ns('sel')}?resourceVersion=99999999`);
    expect(r.status).toBe(504);
    expect(r.body.details.causes[0].reason).toBe('ResourceVersionTooLarge');
  });
});

describe('watch', () => {
  it('streams the current state then live ADDED, MODIFIED and DELETED events, with headers flushed at once', async () => {
    await call(agent, ns('w1'), 'POST', website('pre'));
    const w = await watchEvents(
      `${ns('w1')}?watch=true`,
      (e) => e.length >= 4,
      {},
      async () => {
        await call(agent, ns('w1'), 'POST', website('new'));
        await call(agent, `${ns('w1')}/new`, 'PATCH', { spec: { replicas: 2 } }, MERGE);
        await call(agent, `${ns('w1')}/new`, 'DELETE');
      },
    );
    expect(w.status).toBe(200);
    expect(w.headers['content-type']).toBe('application/json');
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED pre', 'ADDED new', 'MODIFIED new', 'DELETED new']);
    for (const e of w.events) expect(e.object).toMatchObject({ kind: 'Website', apiVersion: 'extensions.example.com/v1alpha1' });
    const rvs = w.events.slice(1).map((e) => Number(e.object.metadata.resourceVersion));
    expect([...rvs].sort((a, b) => a - b)).toEqual(rvs);
    expect(new Set(rvs).size).toBe(3);
  });

  it('resumes from a resourceVersion: only later changes, in order', async () => {
    const a = (await call(agent, ns('w2'), 'POST', website('a'))).body;
    await call(agent, ns('w2'), 'POST', website('b'));
    await call(agent, `${ns('w2')}/a`, 'PATCH', { spec: { replicas: 3 } }, MERGE);
    const w = await watchEvents(`${ns('w2')}?watch=1&resourceVersion=${a.metadata.resourceVersion}`, (e) => e.length >= 2);
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED b', 'MODIFIED a']);
  });

  it('watches one object through fieldSelector metadata.name, as kubectl wait and delete do', async () => {
    await call(agent, ns('w3'), 'POST', website('x'));
    await call(agent, ns('w3'), 'POST', website('y'));
    const w = await watchEvents(
      `${ns('w3')}?watch=true&fieldSelector=metadata.name%3Dx`,
      (e) => e.length >= 2,
      {},
      async () => {
        await call(agent, `${ns('w3')}/y`, 'DELETE');
        await call(agent, `${ns('w3')}/x`, 'DELETE');
      },
    );
    expect(w.events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED x', 'DELETED x']);
  });

  it('turns label selector transitions into ADDED and DELETED', async () => {
    await call(agent, ns('w4'), 'POST', website('a'));
    const w = await watchEvents(
      `${ns('w4')}?watch=true&labelSelector=on%3Dyes`,
      (e) => e.length >= 2,
      {},
      async () => {
        await call(agent, `${ns('w4')}/a`, 'PATCH', { metadata: { labels: { on: 'yes' } } }, MERGE);
        await call(agent, `${ns('w4')}/a`, 'PATCH', { metadata: { labels: { on: 'no' } } }, MERGE);
      },
    );
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
  });

  it('sends initial events and the initial-events-end BOOKMARK for sendInitialEvents=true', async () => {
    await call(agent, ns('w5'), 'POST', website('a'));
    await call(agent, ns('w5'), 'POST', website('b'));
    const w = await watchEvents(
      `${ns('w5')}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan`,
      (e) => e.length >= 3,
    );
    expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'BOOKMARK']);
    const b = w.events[2].object;
    expect(b).toMatchObject({
      kind: 'Website',
      apiVersion: 'extensions.example.com/v1alpha1',
      metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } },
    });
    expect(Number(b.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(w.events[1].object.metadata.resourceVersion));
  });

  it('transforms watch events into Tables, with column definitions only in the first', async () => {
    await call(agent, ns('w6'), 'POST', website('a'));
    const w = await watchEvents(
      `${ns('w6')}?watch=true`,
      (e) => e.length >= 2,
      { accept: TABLE },
      async () => {
        await call(agent, `${ns('w6')}/a`, 'PATCH', { spec: { replicas: 2 } }, MERGE);
      },
    );
    expect(w.events[0].object.kind).toBe('Table');
    expect(w.events[0].object.columnDefinitions).toHaveLength(9);
    expect(w.events[0].object.rows).toHaveLength(1);
    expect(w.events[1].object.columnDefinitions).toBeNull();
    expect(w.events[1].object.rows[0].cells[2]).toBe('0/2');
  });

  it('transforms watch events into PartialObjectMetadata for the metadata client', async () => {
    await call(agent, ns('w7'), 'POST', website('a'));
    const w = await watchEvents(`${ns('w7')}?watch=true`, (e) => e.length >= 1, {
      accept:
        'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
    });
    expect(w.events[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'a' } });
  });

  it('ends the stream after timeoutSeconds', async () => {
    const started = Date.now();
    const w = await watchEvents(`${ns('w8')}?watch=true&timeoutSeconds=1`, () => false);
    expect(w.events).toEqual([]);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('answers a watch from a resourceVersion older than the retained history with an ERROR 410 Expired event', async () => {
    // With a history of 3 changes, revision 1 falls out of the window after a few writes (and stays out after a restart).
    const other = await startServer({ args: ['--watch-history-events', '3'] });
    const a2 = adminAgent(other.certDir);
    try {
      for (const n of ['a', 'b', 'c', 'd', 'e', 'f']) await call(a2, `${other.url}${API}/namespaces/x/websites`, 'POST', website(n));
      await other.stop();
      const again = await startServer({ dataDir: other.dataDir, certDir: other.certDir, args: ['--watch-history-events', '3'] });
      try {
        const res = await request(`${again.url}${API}/websites?watch=true&resourceVersion=1`, { dispatcher: a2 });
        expect(res.statusCode).toBe(200);
        const lines = (await res.body.text())
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 } });
        expect(lines[0].object.message).toContain('too old resource version: 1');
      } finally {
        await again.stop();
      }
    } finally {
      await a2.close();
    }
  });
});

describe('negotiation comes before writes, and inputs kube-apiserver accepts', () => {
  const PROTOBUF_ONLY = { accept: 'application/vnd.kubernetes.protobuf' };

  it('answers 406 to a PUT, a patch, an apply, a delete or a deletecollection it cannot represent, and writes nothing', async () => {
    const created = (await call(agent, ns('neg'), 'POST', website('n1', { replicas: 2 }))).body;
    await call(agent, ns('neg'), 'POST', website('n2'));
    const rv = created.metadata.resourceVersion;
    const attempts: [string, string, unknown, Record<string, string>][] = [
      ['PUT', `${ns('neg')}/n1`, { ...created, spec: { ...created.spec, replicas: 5 } }, {}],
      ['PATCH', `${ns('neg')}/n1`, { spec: { replicas: 6 } }, MERGE],
      [
        'PATCH',
        `${ns('neg')}/n1?fieldManager=t`,
        { apiVersion: created.apiVersion, kind: 'Website', metadata: { name: 'n1' }, spec: { gitRepo: created.spec.gitRepo, replicas: 7 } },
        { 'content-type': 'application/apply-patch+yaml' },
      ],
      ['DELETE', `${ns('neg')}/n1`, undefined, {}],
      ['DELETE', ns('neg'), undefined, {}],
    ];
    for (const [method, url, body, headers] of attempts) {
      const r = await call(agent, url, method as never, body, { ...headers, ...PROTOBUF_ONLY });
      expect(r.status, `${method} ${url}`).toBe(406);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'NotAcceptable' });
    }
    const after = await call(agent, ns('neg'));
    expect(after.body.items.map((o: any) => o.metadata.name)).toEqual(['n1', 'n2']);
    expect(after.body.items[0].metadata.resourceVersion).toBe(rv);
    expect(after.body.items[0].spec.replicas).toBe(2);
  });

  it('keeps label keys named constructor and prototype through a merge patch', async () => {
    await call(agent, ns('proto'), 'POST', website('p1'));
    const r = await call(agent, `${ns('proto')}/p1`, 'PATCH', { metadata: { labels: { constructor: 'c', prototype: 'p' } } }, MERGE);
    expect(r.status).toBe(200);
    expect(r.body.metadata.labels).toEqual({ constructor: 'c', prototype: 'p' });
    expect((await call(agent, `${ns('proto')}/p1`)).body.metadata.labels).toEqual({ constructor: 'c', prototype: 'p' });
  });

  it('prefers the Accept clause with the highest q, as goautoneg does', async () => {
    await call(agent, ns('qsort'), 'POST', website('q1'));
    const r = await call(agent, ns('qsort'), 'GET', undefined, { accept: 'application/json;q=0.1, application/json;as=Table;v=v1;g=meta.k8s.io;q=0.9' });
    expect(r.body.kind).toBe('Table');
    const plain = await call(agent, ns('qsort'), 'GET', undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io;q=0.2, application/json' });
    expect(plain.body.kind).toBe('WebsiteList');
  });

  it('answers 400 to a gracePeriodSeconds that is not an integer', async () => {
    await call(agent, ns('grace'), 'POST', website('g1'));
    const r = await call(agent, `${ns('grace')}/g1?gracePeriodSeconds=abc`, 'DELETE');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
    expect((await call(agent, `${ns('grace')}/g1`)).status).toBe(200);
  });

  it('answers a GET with a name and ?watch=true as a get of that name, as a CRD does (verb get, GetResource)', async () => {
    const r = await call(agent, `${ns('esc')}/a%3Db?watch=true&timeoutSeconds=1`);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'websites.extensions.example.com "a=b" not found' });
  });
});

describe('metrics', () => {
  it('counts requests by kube verb, resource and code on /metrics, and reports open watches', async () => {
    await call(agent, ns('metrics'), 'POST', website('a'));
    const watch = await request(`${ns('metrics')}?watch=true`, { dispatcher: agent });
    const r = await call(agent, `${server.url}/metrics`);
    watch.body.destroy();
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/apiserver_request_total\{verb="create",resource="websites",code="201"\} [1-9]/);
    expect(r.text).toMatch(/apiserver_request_duration_seconds_count\{verb="create",resource="websites"\} [1-9]/);
    expect(r.text).toMatch(/apiserver_registered_watchers [1-9]/);
  });

  it('counts a watch (which takes over its socket) once it ends, under verb watch', async () => {
    const watch = await request(`${ns('metrics-watch')}?watch=true&timeoutSeconds=1`, { dispatcher: agent });
    expect(watch.statusCode).toBe(200);
    await watch.body.text();
    const count = async () => {
      const r = await call(agent, `${server.url}/metrics`);
      return Number(/apiserver_request_total\{verb="watch",resource="websites",code="200"\} (\d+)/.exec(r.text)?.[1] ?? 0);
    };
    // Watches of earlier tests (one was destroyed by its client) are counted when the server sees them end, which
    // may trail: the baseline is taken once the count has stopped moving.
    let before = await count();
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const now = await count();
      if (now === before) break;
      before = now;
    }
    expect(before).toBeGreaterThanOrEqual(1);
    const again = await request(`${ns('metrics-watch')}?watch=1&timeoutSeconds=1`, { dispatcher: agent });
    await again.body.text();
    // The close that reports it may trail the last byte the client read by a moment.
    for (let i = 0; i < 50 && (await count()) === before; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await count()).toBe(before + 1);
  });
});
