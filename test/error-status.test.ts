/**
 * Every error is a metav1.Status with kube-apiserver's code, including what Node's HTTP parser and fastify's router
 * used to answer on their own, over raw TLS where no ordinary client can send the request: malformed requests,
 * unknown methods, oversized URLs, headers and bodies, bodies that do not parse in each content type, nesting
 * beyond the depth limit, YAML alias bombs, numbers beyond float64, and Warning headers with any text. The server
 * keeps serving after each, and nothing a client sent is ever a 500 or carries a JavaScript message. The expected
 * texts were measured on kube-apiserver 1.37 serving the Website CRD (test/bench/crd.mjs).
 */
import { request, type Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_NESTING_DEPTH } from '../src/apis/meta/json-syntax.js';
import { adminAgent, API, call, cleanupTempDirs, startServer, website, type ServerProcess } from './helpers/server-process.js';
import { httpRequest, rawRequest, type RawResponse } from './helpers/raw-tls.js';

let server: ServerProcess;
let agent: Agent;
const COLL = `${API}/namespaces/default/websites`;
const JSON_CT = { 'content-type': 'application/json' };

beforeAll(async () => {
  server = await startServer();
  agent = adminAgent(server.certDir);
  const r = await call(agent, `${server.url}${COLL}`, 'POST', website('existing'));
  expect(r.status, r.text).toBe(201);
});
afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

// Messages that would betray a JavaScript exception rather than an answer.
const JS_MESSAGE = /Cannot read properties|Unexpected token|is not a function|is not defined|Maximum call stack|undefined|\bat position\b|RangeError|TypeError/;

/** expectStatus checks a raw or decoded answer is the Status kube-apiserver gives: code, reason, Failure. */
function expectStatus(r: { status: number; json?: any; body?: any }, code: number, reason?: string, message?: string | RegExp): any {
  const s = 'json' in r ? r.json : r.body;
  expect(r.status, JSON.stringify(s)).toBe(code);
  expect(s).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code });
  expect(s.reason).toBe(reason);
  expect(s.message).not.toMatch(JS_MESSAGE);
  if (typeof message === 'string') expect(s.message).toBe(message);
  else if (message) expect(s.message).toMatch(message);
  return s;
}

const raw = (req: string | Buffer, o: { waitMs?: number } = {}) => rawRequest(server, req, { firstResponse: true, waitMs: o.waitMs ?? 5000 });

/** stillServing asserts the server answers an ordinary request afterwards. */
async function stillServing(): Promise<void> {
  const r = await call(agent, `${server.url}${COLL}/existing`);
  expect(r.status, r.text).toBe(200);
}

describe('requests Node or the router used to answer on their own', () => {
  it.each<[string, string | Buffer, number, string | undefined, string | RegExp]>([
    ['a bad escape in the path', httpRequest('GET', `${COLL}/%zz`), 400, 'BadRequest', 'invalid URL escape "%zz"'],
    ['an escape of a byte that is no UTF-8', httpRequest('GET', `${COLL}/x%ff`), 404, 'NotFound', 'the server could not find the requested resource'],
    ['an unknown method', httpRequest('FOO', COLL), 405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource'],
    ['a lower-case method', httpRequest('get', COLL), 405, 'MethodNotAllowed', /does not allow this method/],
    ['a request line that is not HTTP', 'hello\r\n\r\n', 400, 'BadRequest', 'malformed HTTP request'],
    ['an invalid header name', `GET ${COLL} HTTP/1.1\r\nHost: x\r\nBad Header: x\r\n\r\n`, 400, 'BadRequest', 'invalid header name'],
    ['a Content-Length that is no number', `POST ${COLL} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`, 400, 'BadRequest', 'bad Content-Length'],
    // kube-apiserver answers 500 `invalid byte in chunk length` here: the client's fault is a 400.
    [
      'a malformed chunk',
      `POST ${COLL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      400,
      'BadRequest',
      'invalid byte in chunk length',
    ],
    ['HTTP/1.1 without Host', `GET ${COLL} HTTP/1.1\r\n\r\n`, 400, 'BadRequest', 'missing required Host header'],
    ['an HTTP/2.0 request line', `GET ${COLL} HTTP/2.0\r\nHost: x\r\n\r\n`, 505, undefined, 'unsupported protocol version'],
    // Go reads bare LF line ends; Node does not, and a 400 says so (never a 5xx).
    ['a request with bare LF line ends', `GET ${COLL} HTTP/1.1\nHost: x\n\n`, 400, 'BadRequest', /^malformed HTTP/],
    ['an Expect other than 100-continue', httpRequest('GET', COLL, { expect: 'something' }), 417, undefined, 'Expectation Failed'],
    [
      'a URL over 1 MiB (kube: MaxHeaderBytes 1 << 20)',
      httpRequest('GET', `${COLL}/${'a'.repeat(1_100_000)}`),
      431,
      undefined,
      'Request Header Fields Too Large',
    ],
    ['headers over 1 MiB', httpRequest('GET', COLL, { 'x-big': 'a'.repeat(1_100_000) }), 431, undefined, 'Request Header Fields Too Large'],
  ])('%s', async (_what, req, code, reason, message) => {
    const r = await raw(req);
    expectStatus(r, code, reason, message);
    expect(r.headers['content-type']?.[0]).toMatch(/^application\/json/);
    await stillServing();
  });

  it('takes headers up to 1 MiB, as kube-apiserver does (Node alone stops at 16 KiB)', async () => {
    const r = await raw(httpRequest('GET', `${COLL}/existing`, { 'x-big': 'a'.repeat(200_000) }));
    expect(r.status).toBe(200);
    expect(r.json.metadata.name).toBe('existing');
  });

  it.each([
    ['PROPFIND', COLL],
    ['TRACE', `${COLL}/existing`],
    ['OPTIONS', COLL],
    ['PROPFIND', `${COLL}/existing/status`],
    ['CONNECT', COLL],
  ])('%s on %s: 405 with the empty verb kube-apiserver reports for a method it does not map', async (method, path) => {
    const r = await raw(httpRequest(method, path));
    const s = expectStatus(r, 405, 'MethodNotAllowed', ' is not supported on resources of kind "websites.extensions.example.com"');
    expect(s.details).toEqual({ group: 'extensions.example.com', kind: 'websites' });
    await stillServing();
  });

  it('a method no route serves elsewhere is 404, and CONNECT is authenticated like any request', async () => {
    expectStatus(await raw(httpRequest('PROPFIND', '/no/such/path')), 404, 'NotFound');
    expectStatus(await raw('CONNECT localhost:443 HTTP/1.1\r\nHost: localhost\r\n\r\n'), 404, 'NotFound');
    const anonymous = await rawRequest(server, httpRequest('CONNECT', COLL), { firstResponse: true, clientCert: false });
    expectStatus(anonymous, 401, 'Unauthorized');
  });

  it('HEAD is served as the GET it stands for, without a body', async () => {
    const r = await raw(httpRequest('HEAD', `${COLL}/existing`));
    expect(r.status).toBe(200);
    expect(r.body).toBe('');
  });
});

describe("bodies that do not parse: kube-apiserver's words for each content type", () => {
  const unrecognized = (why: string, summary: string) =>
    `the object provided is unrecognized (must be of type Website): couldn't get version/kind; json parse error: ${why} (${summary})`;
  it.each<[string, string, string]>([
    ['{', 'unexpected end of JSON input', '{'],
    ['{"a":}', "invalid character '}' looking for beginning of value", '{"a":}'],
    ['[', 'unexpected end of JSON input', '5b'],
    [
      '{"apiVersion":"extensions.example.com/v1alpha1","kind":"Website",}',
      "invalid character '}' looking for beginning of object key string",
      '{"apiVersion":"extensions.exam ...',
    ],
    ['nul\u0000l', "invalid character '\\x00' in literal null (expecting 'l')", '6e756c006c'],
    ['\uFEFF{}', "invalid character 'ï' looking for beginning of value", 'efbbbf7b7d'],
  ])('create with %j', async (body, why, summary) => {
    const r = await raw(httpRequest('POST', COLL, JSON_CT, body));
    expectStatus(r, 400, 'BadRequest', unrecognized(why, summary));
  });

  it('an update, a status update and a scale update name the type they expect', async () => {
    expectStatus(await raw(httpRequest('PUT', `${COLL}/existing`, JSON_CT, '{')), 400, 'BadRequest', unrecognized('unexpected end of JSON input', '{'));
    expectStatus(await raw(httpRequest('PUT', `${COLL}/existing/status`, JSON_CT, '{')), 400, 'BadRequest', unrecognized('unexpected end of JSON input', '{'));
    expectStatus(
      await raw(httpRequest('PUT', `${COLL}/existing/scale`, JSON_CT, '{')),
      400,
      'BadRequest',
      /^the object provided is unrecognized \(must be of type Scale\)/,
    );
  });

  it('a DELETE body, a merge patch, a JSON patch and an apply patch', async () => {
    expectStatus(
      await raw(httpRequest('DELETE', `${COLL}/nothing`, JSON_CT, '{')),
      400,
      'BadRequest',
      "couldn't get version/kind; json parse error: unexpected end of JSON input",
    );
    expectStatus(
      await raw(httpRequest('PATCH', `${COLL}/existing`, { 'content-type': 'application/merge-patch+json' }, '{')),
      400,
      'BadRequest',
      'invalid JSON patch',
    );
    expectStatus(
      await raw(httpRequest('PATCH', `${COLL}/existing`, { 'content-type': 'application/json-patch+json' }, '{')),
      400,
      'BadRequest',
      'invalid JSON patch',
    );
    expectStatus(
      await raw(httpRequest('PATCH', `${COLL}/existing?fieldManager=m`, { 'content-type': 'application/apply-patch+yaml' }, 'a: [')),
      400,
      'BadRequest',
      /^error encoding patch: yaml: line 1: /,
    );
    expectStatus(await raw(httpRequest('DELETE', `${COLL}/nothing`, { 'content-type': 'application/yaml' }, 'a: [')), 400, 'BadRequest', /^yaml: line 1: /);
  });

  it('a YAML create', async () => {
    const r = await raw(httpRequest('POST', COLL, { 'content-type': 'application/yaml' }, 'a: ['));
    expectStatus(r, 400, 'BadRequest', /^the object provided is unrecognized \(must be of type Website\): yaml: line 1: .* \(613a205b\)$/);
  });

  it.each([
    'text/plain',
    'application/apply-patch+yaml',
    'application/merge-patch+json',
    'application/json; charset',
    'application/json;a=1;a=2',
    'application/json, text/plain',
  ])("a create with Content-Type %j is 415, as kube-apiserver's negotiation (mime.ParseMediaType) refuses it", async (ct) => {
    const r = await raw(httpRequest('POST', COLL, { 'content-type': ct }, JSON.stringify(website('never'))));
    expectStatus(
      r,
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    );
  });

  it('parameters Go reads are fine', async () => {
    const r = await raw(httpRequest('POST', COLL, { 'content-type': 'application/json ; charset = "utf-8";' }, JSON.stringify(website('with-params'))));
    expect(r.status, r.body).toBe(201);
  });

  it('a number beyond float64 is refused as Go refuses it, never stored as null', async () => {
    const body = JSON.stringify(website('huge')).replace('"spec":{', '"spec":{"replicas":1e999,');
    expectStatus(
      await raw(httpRequest('POST', COLL, JSON_CT, body)),
      400,
      'BadRequest',
      'Website in version "v1alpha1" cannot be handled as a Website: json: cannot unmarshal number 1e999 into Go value of type float64',
    );
    expectStatus(
      await raw(httpRequest('PATCH', `${COLL}/existing`, { 'content-type': 'application/merge-patch+json' }, '{"spec":{"replicas":1e999}}')),
      400,
      'BadRequest',
      'error decoding patch: json: cannot unmarshal number 1e999 into Go value of type float64',
    );
    expectStatus(
      await raw(
        httpRequest('PATCH', `${COLL}/existing`, { 'content-type': 'application/json-patch+json' }, '[{"op":"add","path":"/spec/replicas","value":1e999}]'),
      ),
      400,
      'BadRequest',
      'error decoding patch: json: cannot unmarshal number 1e999 into Go struct field jsonPatchOp.value of type float64',
    );
    expectStatus(
      await raw(
        httpRequest(
          'PATCH',
          `${COLL}/existing?fieldManager=m`,
          { 'content-type': 'application/apply-patch+yaml' },
          'apiVersion: extensions.example.com/v1alpha1\nkind: Website\nmetadata: {name: existing}\nspec: {replicas: .inf}\n',
        ),
      ),
      400,
      'BadRequest',
      'error encoding patch: json: unsupported value: +Inf',
    );
    const r = await call(agent, `${server.url}${COLL}/existing`);
    expect(r.body.spec.replicas).toBe(1);
  });
});

describe(`nesting deeper than ${MAX_NESTING_DEPTH} levels is refused before anything recursive reads it`, () => {
  const arrays = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const withExtra = (name: string, extra: string) => JSON.stringify(website(name)).replace(/}$/, `,"extra":${extra}}`);

  it("a JSON create at the limit is taken; one level more, or 10000 (kube's own limit), is kube's 400", async () => {
    // The object itself is one level: MAX - 1 arrays inside it is exactly MAX.
    const ok = await raw(httpRequest('POST', COLL, JSON_CT, withExtra('deep-ok', arrays(MAX_NESTING_DEPTH - 1))));
    expect(ok.status, ok.body).toBe(201);
    for (const n of [MAX_NESTING_DEPTH, 10_000, 1_000_000]) {
      const r = await raw(httpRequest('POST', COLL, JSON_CT, withExtra('deep', arrays(n))));
      expectStatus(r, 400, 'BadRequest', /json parse error: invalid character '\[' exceeded max depth \(\{"apiVersion":"extensions.exam \.\.\.\)$/);
    }
    await stillServing();
  });

  it('patches, YAML and apply bodies', async () => {
    const deep = arrays(10_000);
    expectStatus(
      await raw(httpRequest('PATCH', `${COLL}/existing`, { 'content-type': 'application/merge-patch+json' }, `{"extra":${deep}}`)),
      400,
      'BadRequest',
      'invalid JSON patch',
    );
    expectStatus(
      await raw(httpRequest('PATCH', `${COLL}/existing`, { 'content-type': 'application/json-patch+json' }, `[{"op":"add","path":"/extra","value":${deep}}]`)),
      400,
      'BadRequest',
      'invalid JSON patch',
    );
    expectStatus(
      await raw(httpRequest('PATCH', `${COLL}/existing?fieldManager=m`, { 'content-type': 'application/apply-patch+yaml' }, withExtra('existing', deep))),
      400,
      'BadRequest',
      `error decoding patch: error converting YAML to JSON: yaml: exceeded max depth of ${MAX_NESTING_DEPTH}`,
    );
    const yaml = `apiVersion: extensions.example.com/v1alpha1\nkind: Website\nmetadata: {name: deepy}\nspec: {gitRepo: "https://x/y"}\nextra: ${deep}\n`;
    expectStatus(
      await raw(httpRequest('POST', COLL, { 'content-type': 'application/yaml' }, yaml)),
      400,
      'BadRequest',
      new RegExp(`^the object provided is unrecognized \\(must be of type Website\\): yaml: line 5: exceeded max depth of ${MAX_NESTING_DEPTH} \\(`),
    );
    // Block nesting: each level only one more space of indentation, or `- ` after `- ` on one line.
    let block = '';
    for (let i = 0; i < MAX_NESTING_DEPTH + 5; i++) block += `${' '.repeat(i)}a:\n`;
    expectStatus(await raw(httpRequest('POST', COLL, { 'content-type': 'application/yaml' }, block)), 400, 'BadRequest', /exceeded max depth/);
    expectStatus(
      await raw(httpRequest('POST', COLL, { 'content-type': 'application/yaml' }, `${'- '.repeat(100_000)}x`)),
      400,
      'BadRequest',
      /exceeded max depth/,
    );
    await stillServing();
  });

  it('aliases cannot build a value deeper than the text (each alias repeats its anchor one level further down)', async () => {
    const lines = [`a0: &a0 ${arrays(200)}`];
    for (let i = 1; i < 5; i++) lines.push(`a${i}: &a${i} ${'['.repeat(150)}*a${i - 1}${']'.repeat(150)}`);
    const r = await raw(httpRequest('POST', COLL, { 'content-type': 'application/yaml' }, `${lines.join('\n')}\n`));
    expectStatus(r, 400, 'BadRequest', /exceeded max depth/);
    await stillServing();
  });

  it("a billion-laughs YAML document is refused at once, in go-yaml's words", async () => {
    const laughs = ['apiVersion: extensions.example.com/v1alpha1', 'kind: Website', 'metadata: {name: lol}', 'l0: &l0 "lol"'];
    for (let i = 1; i <= 9; i++)
      laughs.push(
        `l${i}: &l${i} [${Array(9)
          .fill(`*l${i - 1}`)
          .join(', ')}]`,
      );
    const started = Date.now();
    const r = await raw(httpRequest('POST', COLL, { 'content-type': 'application/yaml' }, laughs.join('\n')));
    expectStatus(r, 400, 'BadRequest', /^the object provided is unrecognized \(must be of type Website\): yaml: document contains excessive aliasing \(/);
    expect(Date.now() - started).toBeLessThan(5000);
    const apply = await raw(
      httpRequest(
        'PATCH',
        `${COLL}/existing?fieldManager=m`,
        { 'content-type': 'application/apply-patch+yaml' },
        laughs.join('\n').replace('name: lol', 'name: existing'),
      ),
    );
    expectStatus(apply, 400, 'BadRequest', 'error encoding patch: yaml: document contains excessive aliasing');
    await stillServing();
  });
});

describe('bodies over 3 MiB: the client reads its 413, not a reset', () => {
  const TOO_LARGE = 'Request entity too large: limit is 3145728';
  const big = 'x'.repeat(4 * 1024 * 1024);

  it.each([
    ['a declared 4 MiB body, sent in full', httpRequest('POST', COLL, JSON_CT, big)],
    ['a declared 4 MiB merge patch', httpRequest('PATCH', `${COLL}/existing`, { 'content-type': 'application/merge-patch+json' }, big)],
    ['a chunked 4 MiB body', httpRequest('POST', COLL, { ...JSON_CT, 'transfer-encoding': 'chunked' }, `${big.length.toString(16)}\r\n${big}\r\n0\r\n\r\n`)],
    [
      'a declared 100 MiB body never sent',
      `POST ${COLL} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`,
    ],
  ])('%s', async (_what, req) => {
    // A reset would lose the answer only now and then (when it beats the client's read): try a few times.
    for (let i = 0; i < 5; i++) {
      const r = await raw(req, { waitMs: 15_000 });
      expectStatus(r, 413, 'RequestEntityTooLarge', TOO_LARGE);
      expect(r.headers['connection']?.[0]).toBe('close');
    }
    await stillServing();
  });

  it('an ordinary client uploading 4 MiB gets the 413', async () => {
    const res = await request(`${server.url}${COLL}`, { dispatcher: agent, method: 'POST', headers: JSON_CT, body: big });
    const body = (await res.body.json()) as any;
    expectStatus({ status: res.statusCode, body }, 413, 'RequestEntityTooLarge', TOO_LARGE);
  });
});

describe('Warning headers are written as kube-apiserver writes them, after the object is stored', () => {
  it('an unknown field whose name is not Latin-1 is warned about in UTF-8, and the create succeeds', async () => {
    const body = JSON.stringify(website('warned', { 日本語: 1, 'a"b\\c': 2 }));
    const r: RawResponse = await raw(httpRequest('POST', COLL, JSON_CT, body));
    expect(r.status, r.body).toBe(201);
    // The header block holds the UTF-8 bytes of the text, `"` and `\` escaped (util/net NewWarningHeader).
    const head = r.raw.subarray(0, r.raw.indexOf('\r\n\r\n')).toString('utf8');
    const warnings = head
      .split('\r\n')
      .filter((l) => /^warning:/i.test(l))
      .map((l) => l.slice(l.indexOf(':') + 1).trim());
    expect(warnings.some((w) => w.startsWith('299 - "unknown field \\"spec.') && w.includes('日本語'))).toBe(true);
    expect(warnings.length).toBe(2);
    const got = await call(agent, `${server.url}${COLL}/warned`);
    expect(got.status).toBe(200);
  });
});
