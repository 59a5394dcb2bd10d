/**
 * Wire formats, differentially: the same requests to kube-apiserver 1.37 serving the Website CRD twin
 * (crd.example.com, test/bench/crd.mjs) and to our Website behind the same kube-apiserver (the APIService), with the
 * answers compared. kube's answers are the specification:
 * - `Accept: application/yaml`: each side's YAML is exactly its own JSON as kube renders YAML (apis/meta/go-yaml.ts,
 *   so kube's own answers check that renderer live), and the same annotations come out as the same lines;
 * - 406 and 415: the same bytes on both sides (the group names, and the newline kube's encoder ends JSON with, aside);
 * - gzip: the same decision at the 128 KiB boundary, for the same JSON length (kube's body has a trailing newline,
 *   ours none: the length compared is without it);
 * - a watch-list with Accept-Encoding gzip: gzip on both, the initial events and their BOOKMARK ending the first
 *   member; a plain watch is compressed on neither.
 * What a 415 does to an HTTP/1.1 connection cannot be seen through kube-apiserver (it holds the client's connection
 * itself): test/wire-formats.test.ts checks that on our server directly.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toGoYaml } from '../../src/apis/meta/go-yaml.js';
import { websiteCrd } from '../bench/crd.mjs';
import { suffix } from './helpers-access.js';
import { waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';

const env = e2e();
const NS = `wire-${suffix()}`;
const TWIN = 'crd.example.com';
const kube = new Agent({ connect: { ca: readFileSync(env.caFile, 'utf8') } });
const bearer = { authorization: `Bearer ${env.tokens.admin}` };
const SIDES = { kube: `/apis/${TWIN}/v1/namespaces/${NS}/websites`, ours: `/apis/extensions.example.com/v1/namespaces/${NS}/websites` };
type Side = keyof typeof SIDES;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

async function send(path: string, headers: Record<string, string> = {}, method: 'GET' | 'POST' | 'PATCH' | 'DELETE' = 'GET', body?: string): Promise<Answer> {
  // Each request on a connection of its own: kube-apiserver may close one after refusing a body it did not read.
  const r = await request(`${env.server}${path}`, {
    dispatcher: kube,
    method,
    reset: true,
    headers: { ...bearer, ...headers },
    ...(body === undefined ? {} : { body }),
  });
  return { status: r.statusCode, headers: r.headers, body: Buffer.from(await r.body.arrayBuffer()) };
}

/** same puts both sides' group in one spelling, so their answers compare. */
const same = (text: string) => text.replaceAll(TWIN, 'extensions.example.com');

const manifest = (side: Side, name: string, annotations: Record<string, string> = {}) =>
  JSON.stringify({
    apiVersion: `${side === 'kube' ? TWIN : 'extensions.example.com'}/v1`,
    kind: 'Website',
    metadata: { name, annotations },
    spec: { git: { repository: 'https://github.com/x/y' }, replicas: 1 },
  });

// Annotations that exercise go-yaml's quoting, folding, escapes and key order.
const ANNOTATIONS: Record<string, string> = {
  empty: '',
  bool: 'true',
  int: '123',
  float: '1.5',
  colon: 'a: b',
  dash: '- x',
  multi: 'line1\nline2',
  keep: 'x\n\n',
  quote: "it's",
  dq: 'say "hi"',
  null: 'null',
  yes: 'yes',
  hash: '#x',
  lead: ' lead',
  trail: 'trail ',
  date: '2026-01-01',
  hex: '0x1F',
  long: `${'long '.repeat(30)}end`,
  unicode: 'café ☃',
  emoji: 'emoji 😀',
  tab: 'tab\there',
  nel: '\u0085nel',
  a10: 'v',
  a9: 'v',
  aB: 'v',
  'a-b': 'v',
  'a.b': 'v',
  a_b: 'v',
  A: 'v',
  '123': 'v',
  base60: '1:20',
  // Over 128 bytes: a complex key (`? key`, `: value`).
  [`${'a'.repeat(60)}.${'b'.repeat(60)}.com/long`]: 'v',
};

async function installCrd(): Promise<void> {
  const r = await send(
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    { 'content-type': 'application/json' },
    'POST',
    JSON.stringify(websiteCrd(TWIN)),
  );
  if (r.status !== 201 && r.status !== 409) throw new Error(`creating the CRD: HTTP ${r.status} ${r.body.toString()}`);
  await waitFor('the twin served', async () => (await send(`/apis/${TWIN}/v1/websites?limit=1`)).status === 200, 60_000, 100);
}

beforeAll(async () => {
  await installCrd();
  expect(
    (
      await send(
        '/api/v1/namespaces',
        { 'content-type': 'application/json' },
        'POST',
        JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
      )
    ).status,
  ).toBe(201);
  for (const side of ['kube', 'ours'] as const) {
    for (const [name, ann] of [
      ['tricky', ANNOTATIONS],
      ['plain', {}],
    ] as const) {
      const r = await send(SIDES[side], { 'content-type': 'application/json' }, 'POST', manifest(side, name, ann));
      expect(r.status, `${side} ${name}: ${r.body.toString()}`).toBe(201);
    }
  }
});

afterAll(async () => {
  // The twin goes too: later files resolve `website` (kubectl explain, get) to our group only.
  await send(`/api/v1/namespaces/${NS}`, {}, 'DELETE');
  const crd = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/websites.${TWIN}`;
  await send(crd, {}, 'DELETE');
  await waitFor('the twin CRD gone', async () => (await send(crd)).status === 404, 60_000, 200);
  await kube.close();
});

// both sends one request to each side.
async function both(
  path: string,
  headers: Record<string, string> = {},
  method: 'GET' | 'POST' | 'PATCH' = 'GET',
  body?: (side: Side) => string,
): Promise<Record<Side, Answer>> {
  const one = (side: Side) =>
    send(`${SIDES[side]}${path}`, headers, method, body?.(side)).catch((e: unknown) => {
      throw new Error(`${side}: ${String(e)}`);
    });
  return { kube: await one('kube'), ours: await one('ours') };
}

// yamlAndJson reads a path as YAML and as JSON, again until nothing changed in between (our reconciler writes status).
async function yamlAndJson(side: Side, path: string, accept: string): Promise<{ yaml: string; json: unknown }> {
  return waitFor(
    `${side} ${path} unchanged between two reads`,
    async () => {
      const j1 = await send(`${SIDES[side]}${path}`, { accept });
      const y = await send(`${SIDES[side]}${path}`, { accept: accept.replace('application/json', 'application/yaml') });
      const j2 = await send(`${SIDES[side]}${path}`, { accept });
      expect(y.headers['content-type'], `${side} ${path}`).toBe('application/yaml');
      return j1.body.equals(j2.body) ? { yaml: y.body.toString(), json: JSON.parse(j1.body.toString()) } : undefined;
    },
    30_000,
    200,
  );
}

describe('Accept: application/yaml', () => {
  it.each([
    ['an object', '/tricky', 'application/json'],
    ['a list', '', 'application/json'],
    ['a Table', '', 'application/json;as=Table;v=v1;g=meta.k8s.io'],
    ['PartialObjectMetadata', '/tricky', 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io'],
  ])('%s: each side answers its JSON as kube renders YAML', async (_what, path, accept) => {
    for (const side of ['kube', 'ours'] as const) {
      const { yaml, json } = await yamlAndJson(side, path, accept);
      expect(yaml, side).toBe(toGoYaml(json));
    }
  });

  it('the same annotations come out as the same lines', async () => {
    const block = (yaml: string) => /\n {2}annotations:\n((?: {4}.*\n| {6}.*\n)+)/.exec(yaml)?.[1];
    const k = block((await yamlAndJson('kube', '/tricky', 'application/json')).yaml);
    const o = block((await yamlAndJson('ours', '/tricky', 'application/json')).yaml);
    expect(k).toBeDefined();
    expect(o).toBe(k);
  });

  it('an error Status, a 406 for a YAML watch and a create answered in YAML', async () => {
    const notFound = await both('/nothing', { accept: 'application/yaml' });
    expect(same(notFound.ours.body.toString())).toBe(same(notFound.kube.body.toString()));
    const watch = await both('?watch=true&timeoutSeconds=1', { accept: 'application/yaml, application/json' });
    expect(watch.ours.status).toBe(406);
    expect(watch.ours.headers['content-type']).toBe(watch.kube.headers['content-type']);
    expect(watch.ours.body.toString()).toBe(watch.kube.body.toString());
    const created = await both('', { accept: 'application/yaml', 'content-type': 'application/json' }, 'POST', (side) => manifest(side, 'made-in-yaml'));
    for (const side of ['kube', 'ours'] as const) {
      expect(created[side].status, side).toBe(201);
      expect(created[side].headers['content-type']).toBe('application/yaml');
      expect(created[side].body.toString()).toMatch(/^apiVersion: .*\nkind: Website\nmetadata:\n/);
    }
  });
});

describe('406 and 415', () => {
  it('are the same bytes', async () => {
    const cases: [string, Record<string, string>, 'GET' | 'POST' | 'PATCH', string, ((side: Side) => string)?][] = [
      ['a 406', { accept: 'text/yaml', 'user-agent': 'wire-test' }, 'GET', '/plain'],
      [
        'a 404 to a Table-only Accept (indented JSON)',
        { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io', 'user-agent': 'wire-test' },
        'GET',
        '/nothing',
      ],
      ['a 415 for a create', { 'content-type': 'text/plain' }, 'POST', '', (side) => manifest(side, 'never')],
      ['a 415 for CBOR', { 'content-type': 'application/cbor' }, 'POST', '', (side) => manifest(side, 'never')],
      ['a 415 for a patch', { 'content-type': 'text/plain' }, 'PATCH', '/plain', () => '{}'],
      ['a 415 in YAML', { 'content-type': 'text/plain', accept: 'application/yaml' }, 'POST', '', (side) => manifest(side, 'never')],
    ];
    for (const [what, headers, method, path, body] of cases) {
      const r = await both(path, headers, method, body).catch((e: unknown) => {
        throw new Error(`${what}: ${String(e)}`);
      });
      expect(r.ours.status, what).toBe(r.kube.status);
      expect(r.ours.headers['content-type'], what).toBe(r.kube.headers['content-type']);
      // kube's JSON encoder ends a body with a newline (WriteRawJSON's indented one has none); our JSON has none.
      expect(same(r.ours.body.toString()).replace(/\n$/, ''), what).toBe(same(r.kube.body.toString()).replace(/\n$/, ''));
    }
  });
});

describe('gzip', () => {
  // setJsonLength pads an annotation until the JSON answer, without a trailing newline, is `length` bytes long.
  async function setJsonLength(side: Side, length: number): Promise<void> {
    let pad = 100;
    for (let i = 0; i < 6; i++) {
      const p = await send(
        `${SIDES[side]}/big`,
        { 'content-type': 'application/merge-patch+json' },
        'PATCH',
        JSON.stringify({ metadata: { annotations: { pad: 'x'.repeat(pad) } } }),
      );
      expect(p.status, p.body.toString().slice(0, 300)).toBe(200);
      const got = (await send(`${SIDES[side]}/big`, { accept: 'application/json' })).body.toString().replace(/\n$/, '').length;
      if (got === length) return;
      pad += length - got;
    }
    throw new Error(`${side}: could not make the object ${length} bytes long`);
  }

  it('the same decision at 128 KiB, counted as kube counts it', async () => {
    for (const side of ['kube', 'ours'] as const) {
      expect((await send(SIDES[side], { 'content-type': 'application/json' }, 'POST', manifest(side, 'big'))).status).toBe(201);
    }
    for (const length of [131071, 131072]) {
      const encodings: Record<string, unknown> = {};
      for (const side of ['kube', 'ours'] as const) {
        await setJsonLength(side, length);
        const r = await send(`${SIDES[side]}/big`, { accept: 'application/json', 'accept-encoding': 'gzip' });
        encodings[side] = r.headers['content-encoding'];
        if (r.headers['content-encoding'] === 'gzip') expect(JSON.parse(gunzipSync(r.body).toString()).metadata.name).toBe('big');
      }
      expect(encodings['ours'], `${length} bytes`).toBe(encodings['kube']);
    }
    // 131072 bytes of JSON are 131073 with kube's newline: compressed.
    const r = await both('/big', { 'accept-encoding': 'gzip' });
    expect(r.kube.headers['content-encoding']).toBe('gzip');
    expect(r.ours.headers['vary']).toEqual(r.kube.headers['vary']);
  });

  it('a watch-list is gzip members on both sides, a plain watch on neither', async () => {
    const WATCH_LIST =
      '?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=2&labelSelector=wire%3Dlist';
    for (const side of ['kube', 'ours'] as const) {
      const body = manifest(side, 'listed').replace('"annotations":{}', '"annotations":{},"labels":{"wire":"list"}');
      expect((await send(SIDES[side], { 'content-type': 'application/json' }, 'POST', body)).status).toBe(201);
    }
    const r = await both(WATCH_LIST, { 'accept-encoding': 'gzip' });
    for (const side of ['kube', 'ours'] as const) {
      expect(r[side].headers['content-encoding'], side).toBe('gzip');
      const first = firstMember(r[side].body)
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name?: string } } });
      expect(
        first.map((e) => `${e.type} ${e.object.metadata.name ?? ''}`),
        side,
      ).toEqual(['ADDED listed', 'BOOKMARK ']);
    }
    const plain = await both('?watch=true&timeoutSeconds=1', { 'accept-encoding': 'gzip' });
    expect(plain.ours.headers['content-encoding']).toBe(plain.kube.headers['content-encoding']);
    expect(plain.kube.headers['content-encoding']).toBeUndefined();
  });
});

// firstMember decompresses the first gzip member of a stream of them.
function firstMember(body: Buffer): string {
  for (let end = 18; end <= body.length; end++) {
    try {
      return gunzipSync(body.subarray(0, end)).toString();
    } catch {
      // not a whole member yet
    }
  }
  throw new Error('no whole gzip member');
}
