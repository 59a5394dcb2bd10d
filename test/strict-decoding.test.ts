/**
 * Bodies decoded as kube-apiserver decodes a custom resource, over HTTPS on a real server process: metadata as a
 * typed metav1.ObjectMeta (apiextensions-apiserver objectmeta.GetObjectMetaWithOptions), the type (apiVersion, kind),
 * the update rules of rest.BeforeUpdate and ValidateObjectMetaUpdate, a typed autoscaling/v1 Scale. Every expected
 * status, reason and message is what kube-apiserver 1.37 serving the Website CRD (test/bench/crd.mjs) answered to
 * the same request; where the text quotes the object (a patch's result) the test checks its shape and ending. Each
 * refusal is followed by a read showing that nothing changed. Last, a store written by an earlier build (objects
 * with metadata a Go client cannot decode) is repaired on start.
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeObjectMeta } from '../src/apis/meta/decode.js';
import { LmdbStorage } from '../src/storage/lmdb-storage.js';
import { Probe } from './e2e/helpers-informers.js';
import { adminAgent, API, call, startServer, tempDir, useServer, website, type ServerProcess } from './helpers/server-process.js';

let server: ServerProcess;
let agent: Agent;
const ns = (n: string) => `${server.url}${API}/namespaces/${n}/websites`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSON_PATCH = { 'content-type': 'application/json-patch+json' };
const PARTIAL_LIST = { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' };

useServer((s, a) => {
  server = s;
  agent = a;
});

const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  code,
});

/** seed creates a Website with labels and annotations and returns it as stored. */
async function seed(namespace: string, name: string): Promise<any> {
  const r = await call(agent, ns(namespace), 'POST', website(name, {}, { labels: { keep: 'me' }, annotations: { note: 'x' } }));
  expect(r.status).toBe(201);
  return r.body;
}

/** unchanged asserts the stored object is still `before`: same resourceVersion, labels and annotations. */
async function unchanged(namespace: string, before: any): Promise<void> {
  const now = await call(agent, `${ns(namespace)}/${before.metadata.name}`);
  expect(now.status).toBe(200);
  expect(now.body.metadata).toMatchObject({
    resourceVersion: before.metadata.resourceVersion,
    labels: before.metadata.labels,
    annotations: before.metadata.annotations,
  });
}

const handledAs = (err: string) => `Website in version "v1alpha1" cannot be handled as a Website: ${err}`;

describe('a create whose metadata is not a metav1.ObjectMeta is 400 and stores nothing', () => {
  it.each<[string, unknown, string]>([
    ['labels: true', { labels: true }, 'json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type map[string]string'],
    ['an annotation that is a number', { annotations: { a: 1 } }, 'json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type string'],
    ['finalizers: "x"', { finalizers: 'x' }, 'json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string'],
    [
      'ownerReferences: ""',
      { ownerReferences: '' },
      'json: cannot unmarshal string into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference',
    ],
    ['generateName: 0', { generateName: 0 }, 'json: cannot unmarshal number into Go struct field ObjectMeta.generateName of type string'],
    ['generation: "1"', { generation: '1' }, 'json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64'],
    [
      'a creationTimestamp that is not RFC 3339',
      { creationTimestamp: 'yesterday' },
      'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
    ],
    [
      'managedFields that are an object',
      { managedFields: {} },
      'json: cannot unmarshal object into Go struct field ObjectMeta.managedFields of type []v1.ManagedFieldsEntry',
    ],
    [
      'an owner name that is a number',
      { ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 1, uid: 'u' }] },
      'json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.name of type string',
    ],
  ])('%s', async (_name, extra, err) => {
    const r = await call(agent, ns('create'), 'POST', website('bad', {}, extra as Record<string, unknown>));
    expect(r.status).toBe(400);
    expect(r.body).toEqual(status(400, 'BadRequest', handledAs(err)));
    expect((await call(agent, `${ns('create')}/bad`)).status).toBe(404);
  });

  it('metadata that is a list', async () => {
    const r = await call(agent, ns('create'), 'POST', { ...website('bad'), metadata: [] });
    expect(r.body).toEqual(status(400, 'BadRequest', handledAs('json: cannot unmarshal array into Go value of type v1.ObjectMeta')));
  });

  it('a body without kind, with a kind that is not a string, or that is not an object', async () => {
    const { kind: _k, ...noKind } = website('bad');
    const r1 = await call(agent, ns('create'), 'POST', noKind);
    expect(r1.body).toEqual(
      status(
        400,
        'BadRequest',
        `the object provided is unrecognized (must be of type Website): Object 'Kind' is missing in '${JSON.stringify(noKind)}' (${JSON.stringify(noKind).slice(0, 30)} ...)`,
      ),
    );
    const r2 = await call(agent, ns('create'), 'POST', { ...website('bad'), kind: 5 });
    expect(r2.body.message).toBe(
      `the object provided is unrecognized (must be of type Website): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string (${JSON.stringify({ ...website('bad'), kind: 5 }).slice(0, 30)} ...)`,
    );
    const r3 = await call(agent, ns('create'), 'POST', '[]', { 'content-type': 'application/json' });
    expect(r3.body).toEqual(
      status(
        400,
        'BadRequest',
        'the object provided is unrecognized (must be of type Website): couldn\'t get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (5b5d)',
      ),
    );
  });

  it('another kind is 422 from ValidateTypeMeta, named after that kind; another apiVersion is 400', async () => {
    const r = await call(agent, ns('create'), 'POST', { ...website('bad'), kind: 'Other' });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe('Other.extensions.example.com "bad" is invalid: kind: Invalid value: "Other": must be Website');
    expect(r.body.details).toEqual({
      name: 'bad',
      group: 'extensions.example.com',
      kind: 'Other',
      causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: "Other": must be Website', field: 'kind' }],
    });
    const { apiVersion: _a, ...noVersion } = website('bad');
    const v = await call(agent, ns('create'), 'POST', noVersion);
    expect(v.body).toEqual(
      status(400, 'BadRequest', 'the API version in the data () does not match the expected API version (extensions.example.com/v1alpha1)'),
    );
  });

  it('stores metadata as Go writes it back: nulls are zero values, empty collections are left out', async () => {
    const r = await call(
      agent,
      ns('stored'),
      'POST',
      website(
        'n',
        {},
        {
          labels: { a: null },
          annotations: null,
          finalizers: [],
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u', controller: false }],
        },
      ),
    );
    expect(r.status).toBe(201);
    const got = (await call(agent, `${ns('stored')}/n`)).body.metadata;
    expect(got.labels).toEqual({ a: '' });
    expect(got).not.toHaveProperty('annotations');
    expect(got).not.toHaveProperty('finalizers');
    expect(got.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', uid: 'u', controller: false }]);
  });

  it('warns about (Warn) or refuses (Strict) unknown metadata fields at any depth, metadata first, the rest sorted', async () => {
    const body = { ...website('u', { zz: 1 }, { Labels: 1, ownerReferences: [{ apiVersion: 'v1', kind: 'K', name: 'n', uid: 'u', q: 1 }] }), aa: 2 };
    const strict = await call(agent, `${ns('unknown')}?fieldValidation=Strict`, 'POST', body);
    expect(strict.body).toEqual(
      status(
        400,
        'BadRequest',
        handledAs(
          'strict decoding error: unknown field "metadata.Labels", unknown field "metadata.ownerReferences[0].q", unknown field "aa", unknown field "spec.zz"',
        ),
      ),
    );
    const warn = await call(agent, `${ns('unknown')}?fieldValidation=Warn`, 'POST', body);
    expect(warn.status).toBe(201);
    expect(warn.headers['warning']).toEqual([
      '299 - "unknown field \\"metadata.Labels\\""',
      '299 - "unknown field \\"metadata.ownerReferences[0].q\\""',
      '299 - "unknown field \\"aa\\""',
      '299 - "unknown field \\"spec.zz\\""',
    ]);
    expect(warn.body.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'K', name: 'n', uid: 'u' }]);
  });
});

describe("an update or a patch keeps kube's rules and never drops metadata silently", () => {
  it.each<[string, Record<string, string>, unknown]>([
    ['a merge patch setting metadata to null', MERGE, { metadata: null }],
    ['a JSON patch removing metadata', JSON_PATCH, [{ op: 'remove', path: '/metadata' }]],
    ['a JSON patch emptying metadata', JSON_PATCH, [{ op: 'replace', path: '/metadata', value: {} }]],
  ])('%s is 400 (the name is gone: handlers checkName) and labels and annotations stay', async (_n, ct, patch) => {
    const before = await seed('nometa', `p${Math.random().toString(36).slice(2, 8)}`);
    const r = await call(agent, `${ns('nometa')}/${before.metadata.name}`, 'PATCH', patch, ct);
    expect(r.body).toEqual(
      status(400, 'BadRequest', `the name of the object (${before.metadata.name} based on URL) was undeterminable: name must be provided`),
    );
    await unchanged('nometa', before);
  });

  it("a PUT without a name in the body is 400, as kube-apiserver's update handler checks it", async () => {
    const before = await seed('nometa', 'put');
    const r = await call(agent, `${ns('nometa')}/put`, 'PUT', { ...before, metadata: { resourceVersion: before.metadata.resourceVersion } });
    expect(r.body).toEqual(status(400, 'BadRequest', 'the name of the object (put based on URL) was undeterminable: name must be provided'));
    await unchanged('nometa', before);
  });

  it.each<[string, unknown, string]>([
    ['labels: true', { metadata: { labels: true } }, 'json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type map[string]string'],
    ['a bad creationTimestamp', { metadata: { creationTimestamp: 'bad' } }, 'parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"'],
    ['metadata that is a list', { metadata: [] }, 'json: cannot unmarshal array into Go value of type v1.ObjectMeta'],
  ])('a merge patch leaving %s is 422 on field "patch" quoting the patched object (handlers/patch.go)', async (_n, patch, err) => {
    const before = await seed('typed', `t${Math.random().toString(36).slice(2, 8)}`);
    const r = await call(agent, `${ns('typed')}/${before.metadata.name}`, 'PATCH', patch, MERGE);
    expect(r.status).toBe(422);
    expect(r.body.reason).toBe('Invalid');
    expect(
      r.body.message.startsWith(
        ' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"extensions.example.com/v1alpha1\\",\\"kind\\":\\"Website\\",\\"metadata\\":',
      ),
    ).toBe(true);
    expect(r.body.message.endsWith(`}": ${err}`)).toBe(true);
    expect(r.body.details).toEqual({
      causes: [{ reason: 'FieldValueInvalid', message: r.body.message.slice(' "" is invalid: patch: '.length), field: 'patch' }],
    });
    await unchanged('typed', before);
  });

  it('a patch changing the uid is 422 "field is immutable" (once in the message, twice among the causes)', async () => {
    const before = await seed('immutable', 'uid');
    const r = await call(agent, `${ns('immutable')}/uid`, 'PATCH', { metadata: { uid: 'other' } }, MERGE);
    const cause = { reason: 'FieldValueInvalid', message: 'Invalid value: "other": field is immutable', field: 'metadata.uid' };
    expect(r.body).toEqual({
      ...status(422, 'Invalid', 'Website.extensions.example.com "uid" is invalid: metadata.uid: Invalid value: "other": field is immutable'),
      details: { name: 'uid', group: 'extensions.example.com', kind: 'Website', causes: [cause, cause] },
    });
    await unchanged('immutable', before);
  });

  it('a PUT with another uid is a failed storage precondition: 409 before anything else', async () => {
    const before = await seed('immutable', 'putuid');
    const r = await call(agent, `${ns('immutable')}/putuid`, 'PUT', { ...before, metadata: { ...before.metadata, uid: 'xx', resourceVersion: undefined } });
    expect(r.status).toBe(409);
    expect(r.body.message).toBe(
      `Operation cannot be fulfilled on websites.extensions.example.com "putuid": StorageError: invalid object, Code: 4, Key: /registry/extensions.example.com/websites/immutable/putuid, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: xx, UID in object meta: ${before.metadata.uid}`,
    );
    await unchanged('immutable', before);
  });

  it('setting deletionTimestamp or deletionGracePeriodSeconds by a write is 422; creationTimestamp and generation are ignored', async () => {
    const before = await seed('immutable', 'times');
    const dt = await call(
      agent,
      `${ns('immutable')}/times`,
      'PATCH',
      { metadata: { deletionTimestamp: '2001-01-01T00:00:00Z', deletionGracePeriodSeconds: 3 } },
      MERGE,
    );
    expect(dt.status).toBe(422);
    expect(dt.body.details.causes.map((c: { field: string }) => c.field)).toEqual([
      'metadata.deletionTimestamp',
      'metadata.deletionGracePeriodSeconds',
      'metadata.deletionTimestamp',
      'metadata.deletionGracePeriodSeconds',
    ]);
    expect(dt.body.message).toBe(
      'Website.extensions.example.com "times" is invalid: [metadata.deletionTimestamp: Invalid value: "2001-01-01T00:00:00Z": field is immutable, metadata.deletionGracePeriodSeconds: Invalid value: 3: field is immutable]',
    );
    await unchanged('immutable', before);
    const ignored = await call(
      agent,
      `${ns('immutable')}/times`,
      'PATCH',
      { metadata: { creationTimestamp: '2001-01-01T00:00:00Z', generation: 99, labels: { more: 'x' } } },
      MERGE,
    );
    expect(ignored.status).toBe(200);
    expect(ignored.body.metadata).toMatchObject({ creationTimestamp: before.metadata.creationTimestamp, generation: 1, labels: { keep: 'me', more: 'x' } });
  });

  it('a patch removing resourceVersion is refused as an unconditional update (422, named after the resource)', async () => {
    const before = await seed('immutable', 'norv');
    const r = await call(agent, `${ns('immutable')}/norv`, 'PATCH', { metadata: { resourceVersion: null } }, MERGE);
    expect(r.body).toEqual({
      ...status(
        422,
        'Invalid',
        'websites.extensions.example.com "norv" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
      ),
      details: {
        name: 'norv',
        group: 'extensions.example.com',
        kind: 'websites',
        causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be specified for an update', field: 'metadata.resourceVersion' }],
      },
    });
    await unchanged('immutable', before);
  });

  it('a PUT of the same spec without its defaulted fields does not bump the generation', async () => {
    const before = await seed('immutable', 'gen');
    const r = await call(agent, `${ns('immutable')}/gen`, 'PUT', {
      ...website('gen', {}, { labels: { keep: 'me' } }),
      metadata: { name: 'gen', resourceVersion: before.metadata.resourceVersion },
    });
    expect(r.status).toBe(200);
    expect(r.body.metadata.generation).toBe(1);
  });

  it('an update re-checks a generateName only as a path segment (upper case passes, "/" does not)', async () => {
    await seed('immutable', 'gn');
    expect((await call(agent, `${ns('immutable')}/gn`, 'PATCH', { metadata: { generateName: 'UPPER-' } }, MERGE)).status).toBe(200);
    const slash = await call(agent, `${ns('immutable')}/gn`, 'PATCH', { metadata: { generateName: 'a/b' } }, MERGE);
    expect(slash.body.message).toBe('Website.extensions.example.com "gn" is invalid: metadata.generateName: Invalid value: "a/b": may not contain \'/\'');
  });
});

describe('/status and /scale decode their bodies as typed objects too', () => {
  it('a /status PUT with labels: true is 400 and changes nothing', async () => {
    const before = await seed('sub', 'st');
    const r = await call(agent, `${ns('sub')}/st/status`, 'PUT', { ...before, metadata: { ...before.metadata, labels: true } });
    expect(r.body).toEqual(
      status(400, 'BadRequest', handledAs('json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type map[string]string')),
    );
    await unchanged('sub', before);
  });

  it('a Scale whose replicas are not an int32 is 400 (kube-apiserver: same code and reason, an unhelpful text)', async () => {
    const before = await seed('sub', 'sc');
    const scale = (spec: unknown) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'sc' }, spec });
    const r = await call(agent, `${ns('sub')}/sc/scale`, 'PUT', scale({ replicas: '3' }));
    expect(r.body).toEqual(
      status(
        400,
        'BadRequest',
        'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32',
      ),
    );
    const big = await call(agent, `${ns('sub')}/sc/scale`, 'PUT', scale({ replicas: 2 ** 40 }));
    expect(big.status).toBe(400);
    // Decoded from the bytes, as Go decodes a typed body: 2.0 is not an int32 literal.
    const float = await call(agent, `${ns('sub')}/sc/scale`, 'PUT', JSON.stringify(scale({ replicas: 1 })).replace('"replicas":1', '"replicas":2.0'), {
      'content-type': 'application/json',
    });
    expect(float.body.message).toBe(
      'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal number 2.0 into Go struct field ScaleSpec.spec.replicas of type int32',
    );
    await unchanged('sub', before);
    const patched = await call(agent, `${ns('sub')}/sc/scale`, 'PATCH', { metadata: { labels: 5 } }, MERGE);
    expect(patched.status).toBe(422);
    expect(patched.body.message.endsWith('": json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type map[string]string')).toBe(
      true,
    );
    await unchanged('sub', before);
  });

  it("a Scale without spec.replicas scales to 0, as a Go client's omitempty field means", async () => {
    await seed('sub', 'zero');
    const r = await call(agent, `${ns('sub')}/zero/scale`, 'PUT', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'zero' }, spec: {} });
    expect(r.status).toBe(200);
    expect((await call(agent, `${ns('sub')}/zero`)).body.spec.replicas).toBe(0);
  });

  it('a Scale with another uid is 409 and with no name 400', async () => {
    const before = await seed('sub', 'scuid');
    const uid = await call(agent, `${ns('sub')}/scuid/scale`, 'PUT', {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'scuid', uid: 'bogus' },
      spec: { replicas: 2 },
    });
    expect(uid.status).toBe(409);
    expect(uid.body.message).toContain('Precondition failed: UID in precondition: bogus, UID in object meta: ');
    const noName = await call(agent, `${ns('sub')}/scuid/scale`, 'PUT', { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: {}, spec: { replicas: 2 } });
    expect(noName.body).toEqual(status(400, 'BadRequest', 'the name of the object (scuid based on URL) was undeterminable: name must be provided'));
    await unchanged('sub', before);
  });
});

// The informer-probe of the e2e suite (client-go's metadata informer), when the e2e binaries are built.
function informerProbe(): string | undefined {
  const root = join(homedir(), '.cache/website-apiserver/e2e');
  if (!existsSync(root)) return undefined;
  const dir = readdirSync(root).find((d) => d.startsWith('bin-') && existsSync(join(root, d, 'informer-probe')));
  return dir ? join(root, dir, 'informer-probe') : undefined;
}

describe('a store written by an earlier build that accepted wrongly typed metadata', () => {
  let old: ServerProcess;
  let oldAgent: Agent;
  const bad = (name: string, metadata: Record<string, unknown>) => ({
    ...website(name),
    spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', replicas: 1, syncIntervalSeconds: 60, serviceType: 'NodePort' },
    metadata: { name, namespace: 'legacy', uid: `uid-${name}`, creationTimestamp: '2024-01-01T00:00:00Z', generation: 1, ...metadata },
  });

  beforeAll(async () => {
    // Written straight into lmdb, as the earlier build stored them.
    const dataDir = tempDir('ws-legacy-');
    const storage = new LmdbStorage({ path: dataDir, compactionIntervalMs: 0 });
    const key = (name: string) => ({ resource: 'extensions.example.com/websites', namespace: 'legacy', name });
    await storage.create(key('labels'), bad('labels', { labels: true, annotations: { keep: 'me' } }));
    await storage.create(key('finalizers'), bad('finalizers', { finalizers: 'x', ownerReferences: '' }));
    await storage.create(key('fine'), bad('fine', { labels: { app: 'web' } }));
    await storage.close();
    old = await startServer({ dataDir });
    oldAgent = adminAgent(old.certDir);
  }, 30_000);
  afterAll(async () => {
    await oldAgent?.close();
    await old?.stop();
  });

  it('repairs each such object once serving starts (malformed fields dropped, as kube-apiserver reads them), logs it, and leaves good ones alone', async () => {
    const lines = () =>
      old
        .logs()
        .split('\n')
        .filter((l) => l.startsWith('{') && l.includes('repaired stored'));
    for (let i = 0; i < 100 && !lines().some((l) => l.includes('"repaired":2')); i++) await new Promise((r) => setTimeout(r, 100));
    const repairs = lines().map((l) => JSON.parse(l) as { name?: string; dropped?: string[]; checked?: number; repaired?: number });
    expect(repairs.map((r) => (r.name ? [r.name, r.dropped] : [r.checked, r.repaired]))).toEqual([
      ['finalizers', ['finalizers', 'ownerReferences']],
      ['labels', ['labels']],
      [3, 2],
    ]);
    const list = await call(oldAgent, `${old.url}${API}/namespaces/legacy/websites`);
    const byName = Object.fromEntries(list.body.items.map((i: any) => [i.metadata.name, i.metadata]));
    expect(byName['labels']).toMatchObject({ uid: 'uid-labels', annotations: { keep: 'me' } });
    expect(byName['labels']).not.toHaveProperty('labels');
    expect(byName['finalizers']).not.toHaveProperty('finalizers');
    // Every object is also migrated to the storage version (v1), in the background beside the repairs: "fine" was
    // rewritten by the migration only, its labels kept (the repair logs above name only the two malformed ones).
    for (let i = 0; i < 100 && !old.logs().includes('"migrated":3'); i++) await new Promise((r) => setTimeout(r, 50));
    expect(old.logs()).toContain('"migrated":3');
    expect(byName['fine']).toMatchObject({ labels: { app: 'web' } });
  });

  it('serves a metadata list every item of which decodes as metav1.ObjectMeta', async () => {
    const list = await call(oldAgent, `${old.url}${API}/websites`, 'GET', undefined, PARTIAL_LIST);
    expect(list.body.kind).toBe('PartialObjectMetadataList');
    expect(list.body.items).toHaveLength(3);
    for (const item of list.body.items) expect(() => decodeObjectMeta(item.metadata)).not.toThrow();
  });

  it.skipIf(!informerProbe())(
    "lets client-go's metadata informer sync (the garbage collector's kind of client)",
    async () => {
      const probe = new Probe(
        'metadata',
        informerProbe() ?? '',
        ['-kubeconfig', old.kubeconfig, '-resource', 'websites.v1alpha1.extensions.example.com', '-mode', 'metadata', '-namespace', 'legacy'],
        process.env,
      );
      try {
        await probe.until('SYNCED', (ev) => ev.some((e) => e.type === 'SYNCED'), 30_000);
        expect(probe.watchErrors()).toEqual([]);
        expect(
          probe.events
            .filter((e) => e.type === 'ADDED')
            .map((e) => e.name)
            .sort(),
        ).toEqual(['finalizers', 'fine', 'labels']);
      } finally {
        await probe.stop();
      }
    },
    40_000,
  );
});
