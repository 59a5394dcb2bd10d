/**
 * JSON patch (application/json-patch+json) over the wire, answered as kube-apiserver answers for a CRD
 * (k8s.io/apiserver handlers/patch.go with gopkg.in/evanphx/json-patch.v4). Every expected answer below was taken
 * from kube-apiserver 1.37.2 serving the Website CRD (test/bench/crd.mjs) with the same requests.
 */
import type { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { API, call, type ServerProcess, useServer, website } from './helpers/server-process.js';

let server: ServerProcess;
let agent: Agent;
const JSON_PATCH = { 'content-type': 'application/json-patch+json' };
const url = (name: string, query = '') => `${server.url}${API}/namespaces/jp/websites/${name}${query}`;
const patch = (name: string, body: unknown, query = '') =>
  call(agent, url(name, query), 'PATCH', typeof body === 'string' ? body : JSON.stringify(body), JSON_PATCH);

async function create(name: string, metadata: Record<string, unknown> = {}) {
  const r = await call(agent, `${server.url}${API}/namespaces/jp/websites`, 'POST', website(name, {}, metadata));
  expect(r.status, r.text).toBe(201);
  return r.body;
}

// errors.NewGenericServerResponse(422, ...) keeps no detail of which operation failed.
const REJECTED = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server rejected our request due to an error in our request',
  reason: 'Invalid',
  details: {},
  code: 422,
};

useServer((s, a) => {
  server = s;
  agent = a;
});

describe('JSON patch semantics (evanphx/json-patch v4)', () => {
  it('adds a finalizer the way kube-rs does: test of the missing list against null, then add', async () => {
    await create('finalizer');
    const ops = [
      { op: 'test', path: '/metadata/finalizers', value: null },
      { op: 'add', path: '/metadata/finalizers', value: ['kube-rs.example.com/cleanup'] },
    ];
    const r = await patch('finalizer', ops);
    expect(r.status, r.text).toBe(200);
    expect(r.body.metadata.finalizers).toEqual(['kube-rs.example.com/cleanup']);
    expect((await call(agent, url('finalizer'))).body.metadata.finalizers).toEqual(['kube-rs.example.com/cleanup']);
    // Once the list exists the same test fails, so a second controller cannot overwrite it.
    const again = await patch('finalizer', ops);
    expect(again.status).toBe(422);
    expect(again.body).toEqual(REJECTED);
  });

  it('answers a failing test with the bare 422 and leaves the object as it was', async () => {
    const before = await create('failing');
    const r = await patch('failing', [
      { op: 'replace', path: '/spec/replicas', value: 5 },
      { op: 'test', path: '/spec/gitRepo', value: 'nope' },
    ]);
    expect(r.status).toBe(422);
    expect(r.body).toEqual(REJECTED);
    const after = (await call(agent, url('failing'))).body;
    expect(after.spec.replicas).toBe(1);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('compares values by their JSON text, adds a missing member on replace, and never creates parents', async () => {
    await create('texts', { annotations: { link: 'https://example.com/?a=1&b=2' } });
    // The server writes "&" as \u0026 and 1 as 1, so neither of these tests passes on kube-apiserver.
    expect((await patch('texts', [{ op: 'test', path: '/metadata/annotations/link', value: 'https://example.com/?a=1&b=2' }])).body).toEqual(REJECTED);
    expect((await patch('texts', '[{"op":"test","path":"/spec/replicas","value":1.0}]')).body).toEqual(REJECTED);
    expect((await patch('texts', '[{"op":"test","path":"/spec/replicas","value":1}]')).status).toBe(200);
    const replaced = await patch('texts', [{ op: 'replace', path: '/metadata/labels', value: { tier: 'web' } }]);
    expect(replaced.status).toBe(200);
    expect(replaced.body.metadata.labels).toEqual({ tier: 'web' });
    expect((await patch('texts', [{ op: 'add', path: '/metadata/missing/child', value: 'x' }])).body).toEqual(REJECTED);
  });

  it('refuses copies adding more than 3 MiB (AccumulatedCopySizeLimit) before any validation', async () => {
    await create('copies', { annotations: { big: 'A'.repeat(200_000) } });
    const copies = (n: number) => Array.from({ length: n }, (_, k) => ({ op: 'copy', from: '/metadata/annotations/big', path: `/metadata/annotations/c${k}` }));
    // 16 copies of 200002 bytes exceed 3145728 bytes: the patch itself fails.
    expect((await patch('copies', copies(16))).body).toEqual(REJECTED);
    // 15 fit: the patch applies and the annotations are then too long for validation.
    const fifteen = await patch('copies', copies(15));
    expect(fifteen.status).toBe(422);
    expect(fifteen.body.message).toContain('metadata.annotations: Too long');
  });

  it('patches the scale and status subresources with JSON patches too', async () => {
    await create('subresources');
    const scale = await call(agent, url('subresources/scale'), 'PATCH', JSON.stringify([{ op: 'replace', path: '/spec/replicas', value: 3 }]), JSON_PATCH);
    expect(scale.status, scale.text).toBe(200);
    expect(scale.body.spec.replicas).toBe(3);
    const status = (value: number) =>
      call(agent, url('subresources/status'), 'PATCH', JSON.stringify([{ op: 'test', path: '/spec/replicas', value }]), JSON_PATCH);
    expect((await status(3)).status).toBe(200);
    expect((await status(1)).body).toEqual(REJECTED);
  });
});

describe('decoding the patch (handlers/patch.go)', () => {
  it('answers 400 invalid JSON patch to a body that is not JSON, before looking for the object', async () => {
    await create('malformed');
    for (const [name, body] of [
      ['malformed', '[{"op":"add",}]'],
      ['malformed', ''],
      ['no-such-object', '[{'],
    ] as const) {
      const r = await patch(name, body);
      expect(r.status).toBe(400);
      expect(r.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'invalid JSON patch',
        reason: 'BadRequest',
        code: 400,
      });
    }
  });

  it('answers the same 400 to a merge patch that is not JSON, also before looking for the object', async () => {
    await create('malformed-merge');
    for (const [name, body] of [
      ['malformed-merge', '{"spec":'],
      ['malformed-merge', ''],
      ['no-such-object', '{'],
    ] as const) {
      const r = await call(agent, url(name), 'PATCH', body, { 'content-type': 'application/merge-patch+json' });
      expect(r.status, r.text).toBe(400);
      expect(r.body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'invalid JSON patch',
        reason: 'BadRequest',
        code: 400,
      });
    }
    const ok = await call(agent, url('malformed-merge'), 'PATCH', '{"metadata":{"labels":{"a":"b"}}}', { 'content-type': 'application/merge-patch+json' });
    expect(ok.status, ok.text).toBe(200);
  });

  it('answers 404 for a missing object before decoding operations, then 400 for JSON of the wrong shape', async () => {
    expect((await patch('no-such-object', '{"op":"add"}')).status).toBe(404);
    await create('shapes');
    const cases = [
      ['{"op":"add"}', '', 'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp'],
      ['{"op":"add"}', '?fieldValidation=Ignore', 'json: cannot unmarshal object into Go value of type jsonpatch.Patch'],
      ['[1]', '', 'error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp'],
      ['[1]', '?fieldValidation=Ignore', 'json: cannot unmarshal number into Go value of type jsonpatch.Operation'],
      ['[{"op":1,"path":"/a"}]', '', 'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string'],
    ] as const;
    for (const [body, query, message] of cases) {
      const r = await patch('shapes', body, query);
      expect(r.status, body + query).toBe(400);
      expect(r.body).toMatchObject({ reason: 'BadRequest', message });
    }
    // Without the typed decoding, an op that is not a string is an unknown kind: the patch fails to apply.
    expect((await patch('shapes', '[{"op":1,"path":"/a"}]', '?fieldValidation=Ignore')).body).toEqual(REJECTED);
    expect((await patch('shapes', '[{"op":"frob","path":"/a"}]')).body).toEqual(REJECTED);
    expect((await patch('shapes', 'null')).status).toBe(200);
  });

  it('answers 413 above 10000 operations', async () => {
    await create('many');
    const ops = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/spec/replicas', value: 1 }));
    const r = await patch('many', ops);
    expect(r.status).toBe(413);
    expect(r.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
      reason: 'RequestEntityTooLarge',
      code: 413,
    });
    expect((await patch('many', ops.slice(1))).status).toBe(200);
  });

  it('reports duplicate members as kube-apiserver 1.37 answered for the Website CRD: warnings, or strict decoding errors', async () => {
    const body = (n: string) =>
      `{"apiVersion":"extensions.example.com/v1alpha1","kind":"Website","metadata":{"name":"${n}"},"spec":{"gitRepo":"bad"},"spec":{"gitRepo":"https://github.com/luksa/kubia-website-example.git"}}`;
    const collection = `${server.url}${API}/namespaces/jp/websites`;
    const strict = await call(agent, `${collection}?fieldValidation=Strict`, 'POST', body('dup-strict'), { 'content-type': 'application/json' });
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe('Website in version "v1alpha1" cannot be handled as a Website: strict decoding error: duplicate field "spec"');
    const warned = await call(agent, collection, 'POST', body('dup-warn'), { 'content-type': 'application/json' });
    expect(warned.status).toBe(201);
    expect(warned.headers['warning']).toBe('299 - "duplicate field \\"spec\\""');
    const merge = (q: string, b: string) => call(agent, url('dup-warn', q), 'PATCH', b, { 'content-type': 'application/merge-patch+json' });
    const mw = await merge('', '{"metadata":{"labels":{"a":"1","a":"2"}}}');
    expect(mw.status).toBe(200);
    expect(mw.headers['warning']).toBe('299 - "duplicate field \\"metadata.labels.a\\""');
    expect(mw.body.metadata.labels).toEqual({ a: '2' });
    const ms = await merge('?fieldValidation=Strict', '{"metadata":{"labels":{"x":"1","x":"2"}}}');
    expect(ms.status).toBe(422);
    expect(ms.body.message).toMatch(/^ "" is invalid: patch: Invalid value: ".*": strict decoding error: duplicate field "metadata\.labels\.x"$/);
  });

  it('warns, as kube-apiserver does for a custom resource, about each finalizer a write adds without a domain', async () => {
    // apiextensions-apiserver customresource strategy.go generateWarningsFromObj / validator.go validateKubeFinalizerName.
    const created = await call(
      agent,
      `${server.url}${API}/namespaces/jp/websites`,
      'POST',
      website('finalizers', {}, { finalizers: ['x', 'example.com/ok', 'a.b', 'orphan'] }),
    );
    expect(created.status, created.text).toBe(201);
    expect(created.headers['warning']).toEqual([
      '299 - "metadata.finalizers: \\"a.b\\": prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"',
      '299 - "metadata.finalizers: \\"x\\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"',
    ]);
    // Only what this write adds is reported: x is kept, y is new.
    const r = await patch('finalizers', [{ op: 'add', path: '/metadata/finalizers/-', value: 'y' }]);
    expect(r.status, r.text).toBe(200);
    expect(r.headers['warning']).toBe(
      '299 - "metadata.finalizers: \\"y\\": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"',
    );
    expect((await patch('finalizers', [{ op: 'replace', path: '/metadata/finalizers', value: [] }])).headers['warning']).toBeUndefined();
  });

  it('warns about unknown and duplicate members of operations, and refuses them under fieldValidation=Strict', async () => {
    await create('strict');
    const body =
      '[{"op":"add","path":"/metadata/labels","value":{"a":"b"},"foo":1,"path":"/metadata/labels"},{"Op":"x","op":"test","path":"/spec/replicas","value":1}]';
    const warned = await patch('strict', body);
    expect(warned.status, warned.text).toBe(200);
    expect(warned.headers['warning']).toEqual([
      '299 - "json patch unknown field \\"[0].foo\\""',
      '299 - "json patch duplicate field \\"[0].path\\""',
      '299 - "json patch unknown field \\"[1].Op\\""',
    ]);
    expect(warned.body.metadata.labels).toEqual({ a: 'b' });
    expect((await patch('strict', body, '?fieldValidation=Ignore')).headers['warning']).toBeUndefined();
    // A value with a duplicate key: reported in the patch, and again in the patched object, which keeps it.
    const dup = await patch('strict', '[{"op":"add","path":"/metadata/labels","value":{"a":"b","a":"c"},"foo":1,"path":"/metadata/labels"}]');
    expect(dup.headers['warning']).toEqual([
      '299 - "json patch duplicate field \\"[0].value.a\\""',
      '299 - "json patch unknown field \\"[0].foo\\""',
      '299 - "json patch duplicate field \\"[0].path\\""',
      '299 - "duplicate field \\"metadata.labels.a\\""',
    ]);
    expect(dup.body.metadata.labels).toEqual({ a: 'c' });
    await patch('strict', [{ op: 'replace', path: '/metadata/labels', value: { a: 'b' } }]);
    const refused = await patch('strict', '[{"op":"add","path":"/metadata/labels","value":{"a":"c"},"foo":1}]', '?fieldValidation=Strict');
    expect(refused.status).toBe(422);
    expect(refused.body.reason).toBe('Invalid');
    expect(refused.body.message).toMatch(
      /^ "" is invalid: patch: Invalid value: "\{\\"apiVersion\\":\\"extensions.example.com\/v1alpha1\\",\\"kind\\":\\"Website\\",\\"metadata\\":\{.*\\"labels\\":\{\\"a\\":\\"c\\"\}.*": strict decoding error: json patch unknown field "\[0\].foo"$/,
    );
    expect(refused.body.details.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'patch', message: refused.body.message.slice(' "" is invalid: patch: '.length) },
    ]);
    expect((await call(agent, url('strict'))).body.metadata.labels).toEqual({ a: 'b' });
  });
});
