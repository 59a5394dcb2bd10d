/**
 * The wire formats kube-apiserver 1.37 answers in, as measured on it serving the Website CRD (test/bench/crd.mjs;
 * test/e2e/wire-formats.test.ts compares the two live): `Accept: application/yaml` for every answer but a watch,
 * the wording of 406 and 415, a 415 that leaves an HTTP/1.1 connection usable and names the body types in an
 * `Accept` header, gzip for bodies over 128 KiB, and gzip members per flush for a watch-list.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Agent } from 'undici';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { adminAgent, API, call, cleanupTempDirs, startServer, website, type ServerProcess } from './helpers/server-process.js';
import { httpRequest, parseResponse, rawRequest } from './helpers/raw-tls.js';
import { h2Request, openH2 } from './helpers/h2-client.js';

let server: ServerProcess;
let agent: Agent;
const COLL = `${API}/namespaces/default/websites`;
const KUBE_TYPES = 'application/json, application/yaml, application/vnd.kubernetes.protobuf';

beforeAll(async () => {
  server = await startServer();
  agent = adminAgent(server.certDir);
  expect((await call(agent, `${server.url}${COLL}`, 'POST', website('one', {}, { labels: { a: 'b' } }))).status).toBe(201);
});
afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

/** get sends a request and returns status, headers and the raw body bytes (never decompressed). */
async function get(path: string, headers: Record<string, string>, method: 'GET' | 'POST' | 'PUT' | 'PATCH' = 'GET', body?: string) {
  const res = await request(`${server.url}${path}`, { dispatcher: agent, method, headers, ...(body === undefined ? {} : { body }) });
  return { status: res.statusCode, headers: res.headers, body: Buffer.from(await res.body.arrayBuffer()) };
}

describe('Accept: application/yaml', () => {
  it('answers an object, a list, a Table and PartialObjectMetadata in YAML, the same values as in JSON', async () => {
    for (const [path, accept] of [
      [`${COLL}/one`, 'application/yaml'],
      [COLL, 'application/yaml'],
      [COLL, 'application/yaml;as=Table;v=v1;g=meta.k8s.io'],
      [`${COLL}/one`, 'application/yaml;as=PartialObjectMetadata;v=v1;g=meta.k8s.io'],
      [COLL, 'application/yaml, application/json'],
    ] as const) {
      const y = await get(path, { accept });
      expect(y.status, path).toBe(200);
      expect(y.headers['content-type']).toBe('application/yaml');
      const j = await get(path, { accept: accept.replace('application/yaml', 'application/json').replace(', application/json, application/json', '') });
      expect(YAML.parse(y.body.toString())).toEqual(JSON.parse(j.body.toString()));
      // kube's key order, not the JSON's: sigs.k8s.io/yaml marshals maps with sorted keys.
      expect(y.body.toString()).toMatch(/^apiVersion: /);
    }
  });

  it('takes JSON when it ranks higher', async () => {
    const r = await get(`${COLL}/one`, { accept: 'application/yaml;q=0.5, application/json' });
    expect(r.headers['content-type']).toMatch(/^application\/json/);
  });

  it('answers a create, an update and a patch in YAML, and takes a YAML body', async () => {
    const manifest = 'apiVersion: extensions.example.com/v1alpha1\nkind: Website\nmetadata:\n  name: two\nspec:\n  gitRepo: https://github.com/a/b.git\n';
    const c = await get(COLL, { accept: 'application/yaml', 'content-type': 'application/yaml' }, 'POST', manifest);
    expect(c.status, c.body.toString()).toBe(201);
    expect(c.headers['content-type']).toBe('application/yaml');
    const created = YAML.parse(c.body.toString());
    expect(created.metadata.name).toBe('two');
    const u = await get(
      `${COLL}/two`,
      { accept: 'application/yaml', 'content-type': 'application/json' },
      'PUT',
      JSON.stringify({ ...created, metadata: { ...created.metadata, labels: { x: 'y' } } }),
    );
    expect(u.status, u.body.toString()).toBe(200);
    expect(YAML.parse(u.body.toString()).metadata.labels).toEqual({ x: 'y' });
    const p = await get(
      `${COLL}/two`,
      { accept: 'application/yaml', 'content-type': 'application/merge-patch+json' },
      'PATCH',
      '{"metadata":{"labels":{"x":"z"}}}',
    );
    expect(p.headers['content-type']).toBe('application/yaml');
    expect(YAML.parse(p.body.toString()).metadata.labels).toEqual({ x: 'z' });
  });

  it('answers an error Status in YAML', async () => {
    const r = await get(`${COLL}/nothing`, { accept: 'application/yaml' });
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toBe('application/yaml');
    expect(r.body.toString()).toBe(
      'apiVersion: v1\ncode: 404\ndetails:\n  group: extensions.example.com\n  kind: websites\n  name: nothing\nkind: Status\n' +
        'message: websites.extensions.example.com "nothing" not found\nmetadata: {}\nreason: NotFound\nstatus: Failure\n',
    );
  });

  it("refuses a watch in YAML with kube's 406, itself in YAML, even when JSON comes later in the header", async () => {
    for (const accept of ['application/yaml', 'application/yaml, application/json']) {
      const r = await get(`${COLL}?watch=true&timeoutSeconds=1`, { accept });
      expect(r.status).toBe(406);
      expect(r.headers['content-type']).toBe('application/yaml');
      expect(r.body.toString()).toBe(
        "apiVersion: v1\ncode: 406\nkind: Status\nmessage: 'only the following media types are accepted: application/json;stream=watch,\n" +
          "  application/vnd.kubernetes.protobuf;stream=watch'\nmetadata: {}\nreason: NotAcceptable\nstatus: Failure\n",
      );
    }
  });
});

describe('406 and 415 as kube words them', () => {
  it("a 406 nothing in the header fits is indented JSON (WriteRawJSON) naming kube's media types", async () => {
    for (const accept of ['text/yaml', 'application/x-yaml']) {
      const r = await get(`${COLL}/one`, { accept });
      expect(r.status).toBe(406);
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.body.toString()).toBe(`{
  "kind": "Status",
  "apiVersion": "v1",
  "metadata": {},
  "status": "Failure",
  "message": "only the following media types are accepted: ${KUBE_TYPES}",
  "reason": "NotAcceptable",
  "code": 406
}`);
    }
  });

  it("a 415 has no details, names kube's types, and lists ours in an Accept header", async () => {
    for (const ct of ['text/plain', 'application/x-yaml', 'application/vnd.kubernetes.protobuf', 'application/cbor']) {
      const r = await get(COLL, { 'content-type': ct }, 'POST', JSON.stringify(website('never')));
      expect(r.status, ct).toBe(415);
      expect(JSON.parse(r.body.toString())).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        code: 415,
        reason: 'UnsupportedMediaType',
        message: `the body of the request was in an unknown format - accepted media types include: ${KUBE_TYPES}`,
      });
      expect(r.headers['accept']).toBe('application/json, application/yaml');
    }
  });

  it('a PATCH of an unknown type names the patch types, in the message and the Accept header', async () => {
    const r = await get(`${COLL}/one`, { 'content-type': 'text/plain' }, 'PATCH', '{}');
    expect(r.status).toBe(415);
    const types = 'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml';
    expect(JSON.parse(r.body.toString()).message).toBe(`the body of the request was in an unknown format - accepted media types include: ${types}`);
    expect(r.headers['accept']).toBe(types);
  });

  it('a 415 leaves the HTTP/1.1 connection open: a second request on the same socket is answered', async () => {
    for (const [method, path, ct] of [
      ['POST', COLL, 'text/plain'],
      ['PUT', `${COLL}/one`, 'application/cbor'],
      ['PATCH', `${COLL}/one`, 'text/plain'],
    ]) {
      const first = httpRequest(method as string, path as string, { 'content-type': ct as string }, JSON.stringify(website('one')));
      const second = httpRequest('GET', `${COLL}/one`);
      const r = await rawRequest(
        server,
        (s) => {
          s.write(first);
          s.once('data', () => setTimeout(() => s.write(second), 50));
        },
        { waitMs: 1500 },
      );
      const a = parseResponse(r.raw);
      expect(a?.status, `${method} ${ct}`).toBe(415);
      expect(a?.headers['connection']).not.toEqual(['close']);
      const b = parseResponse(r.raw.subarray(a?.length ?? 0));
      expect(b?.status, `${method} ${ct}: the second request`).toBe(200);
    }
  });
});

describe('gzip', () => {
  // setBodyLength pads an annotation until the object's JSON answer is exactly `length` bytes.
  async function setBodyLength(name: string, length: number): Promise<void> {
    let pad = 100;
    for (let i = 0; i < 5; i++) {
      const r = await call(agent, `${server.url}${COLL}/${name}`, 'PATCH', JSON.stringify({ metadata: { annotations: { pad: 'x'.repeat(pad) } } }), {
        'content-type': 'application/merge-patch+json',
      });
      expect(r.status, r.text).toBe(200);
      const got = (await get(`${COLL}/${name}`, {})).body.length;
      if (got === length) return;
      pad += length - got;
    }
    throw new Error(`could not make ${name} ${length} bytes long`);
  }

  it('compresses a body of more than 128 KiB as kube counts it (with the newline its encoder ends it with)', async () => {
    expect((await call(agent, `${server.url}${COLL}`, 'POST', website('big'))).status).toBe(201);
    // kube's JSON is ours plus "\n": 131071 bytes here are 131072 there, not compressed; one more is.
    await setBodyLength('big', 131071);
    const below = await get(`${COLL}/big`, { 'accept-encoding': 'gzip' });
    expect(below.headers['content-encoding']).toBeUndefined();
    expect(below.body.length).toBe(131071);
    await setBodyLength('big', 131072);
    const above = await get(`${COLL}/big`, { 'accept-encoding': 'gzip, deflate' });
    expect(above.headers['content-encoding']).toBe('gzip');
    expect(above.headers['vary']).toMatch(/Accept-Encoding/);
    const plain = gunzipSync(above.body);
    expect(plain.length).toBe(131072);
    expect(JSON.parse(plain.toString()).metadata.name).toBe('big');
    // Without gzip among the tokens (or only with parameters, which kube does not read), nothing is compressed.
    for (const ae of [undefined, 'deflate', 'gzip;q=1', 'GZIP']) {
      const r = await get(`${COLL}/big`, ae === undefined ? {} : { 'accept-encoding': ae });
      expect(r.headers['content-encoding'], ae).toBeUndefined();
    }
  });

  it('compresses a list, a Table and a YAML answer over the threshold', async () => {
    for (const accept of ['application/json', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/yaml']) {
      const r = await get(`${COLL}?includeObject=Object`, { accept, 'accept-encoding': 'gzip' });
      expect(r.headers['content-encoding'], accept).toBe('gzip');
      const text = gunzipSync(r.body).toString();
      expect(
        accept.includes('yaml') ? YAML.parse(text).items.length : JSON.parse(text)[accept.includes('Table') ? 'rows' : 'items'].length,
      ).toBeGreaterThanOrEqual(2);
    }
    const small = await get(`${COLL}/one`, { 'accept-encoding': 'gzip' });
    expect(small.headers['content-encoding']).toBeUndefined();
  });

  it('compresses over HTTP/2 too', async () => {
    const session = await openH2(server.url, {
      ca: readFileSync(join(server.certDir, 'ca.crt')),
      cert: readFileSync(join(server.certDir, 'admin.crt')),
      key: readFileSync(join(server.certDir, 'admin.key')),
    });
    try {
      const r = await h2Request(session, { ':path': `${COLL}/big`, 'accept-encoding': 'gzip' });
      const answer = { headers: r.headers, body: r.raw };
      expect(answer.headers['content-encoding']).toBe('gzip');
      expect(JSON.parse(gunzipSync(answer.body).toString()).metadata.name).toBe('big');
    } finally {
      session.close();
    }
  });
});

describe('a watch-list is gzipped, one member per flush', () => {
  // A namespace of small objects: a batch of more than 128 KiB would be split into more members.
  const WL = `${API}/namespaces/watch-list/websites`;
  const WATCH_LIST = `${WL}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2`;
  beforeAll(async () => {
    for (const name of ['a', 'b']) expect((await call(agent, `${server.url}${WL}`, 'POST', website(name))).status).toBe(201);
  });

  // members splits a body into its gzip members and returns each one's text. Each must end as kube's
  // perFlushGzipWriter ends one, Flush then Close: an empty stored block (the sync flush, 00 00 ff ff), the final
  // empty block (03 00), then CRC and size. Without the flush Go's gzip.Reader holds a member's last events back until
  // the next member's header arrives (client-go's informers then miss the initial-events-end BOOKMARK).
  function members(body: Buffer): string[] {
    const out: string[] = [];
    let rest = body;
    while (rest.length > 0) {
      expect([rest[0], rest[1]]).toEqual([0x1f, 0x8b]);
      // Find the shortest prefix that is one whole member.
      let end = 18;
      for (; end <= rest.length; end++) {
        try {
          out.push(gunzipSync(rest.subarray(0, end)).toString());
          break;
        } catch {
          // not yet a whole member
        }
      }
      expect([...rest.subarray(end - 14, end - 8)]).toEqual([0x00, 0x00, 0xff, 0xff, 0x03, 0x00]);
      rest = rest.subarray(end);
    }
    return out;
  }

  it('the initial events and their BOOKMARK in one member, a later event in its own', async () => {
    const res = await request(`${server.url}${WATCH_LIST}`, { dispatcher: agent, headers: { 'accept-encoding': 'gzip' } });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['vary']).toBe('Accept-Encoding');
    setTimeout(() => void call(agent, `${server.url}${WL}`, 'POST', website('later')), 300);
    const parts = members(Buffer.from(await res.body.arrayBuffer()));
    const events = parts.map((p) =>
      p
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name?: string; annotations?: object } } }),
    );
    expect(events.map((m) => m.map((e) => `${e.type} ${e.object.metadata.name ?? ''}`))).toEqual([['ADDED a', 'ADDED b', 'BOOKMARK '], ['ADDED later']]);
    expect(events[0]![2]!.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
  });

  it('over HTTP/2 too', async () => {
    const session = await openH2(server.url, {
      ca: readFileSync(join(server.certDir, 'ca.crt')),
      cert: readFileSync(join(server.certDir, 'admin.crt')),
      key: readFileSync(join(server.certDir, 'admin.key')),
    });
    try {
      const r = await h2Request(session, { ':path': WATCH_LIST, 'accept-encoding': 'gzip' });
      const answer = { headers: r.headers, body: r.raw };
      expect(answer.headers['content-encoding']).toBe('gzip');
      const first = members(answer.body)[0]!
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { type: string }).type);
      expect(first.at(-1)).toBe('BOOKMARK');
    } finally {
      session.close();
    }
  });

  it('a plain watch, or a client without gzip, gets no compression', async () => {
    for (const [path, ae] of [
      [`${WL}?watch=true&timeoutSeconds=1`, 'gzip'],
      [`${WL}?watch=true&resourceVersion=0&timeoutSeconds=1`, 'gzip'],
      [WATCH_LIST, 'deflate'],
    ]) {
      const res = await request(`${server.url}${path}`, { dispatcher: agent, headers: { 'accept-encoding': ae as string } });
      expect(res.headers['content-encoding'], path).toBeUndefined();
      await res.body.text();
    }
  });
});
