/**
 * Query parameters on the wire, decoded as kube-apiserver 1.37 decodes them for a CRD (one real server process over
 * HTTPS). Every expected status, reason and message below is what kube-apiserver serving the Website CRD
 * (test/bench/crd.mjs) answered to the same request: url.ParseQuery, the ParameterCodec conversions of
 * k8s.io/apimachinery/pkg/runtime/conversion.go and meta/v1 zz_generated.conversion.go, the option validations of
 * meta/v1/validation and internalversion/validation, and the handlers in k8s.io/apiserver pkg/endpoints/handlers.
 * The verb the request is authorized for (request-info, visible in /metrics) agrees with what is served.
 */
import { request, type Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAgent, API, call, cleanupTempDirs, startServer, website, type ServerProcess } from './helpers/server-process.js';

let server: ServerProcess;
let agent: Agent;
const ns = (n: string) => `${server.url}${API}/namespaces/${n}/websites`;
const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const MERGE = { 'content-type': 'application/merge-patch+json' };

// The exact Status body kube-apiserver sends for an error.
const status = (code: number, reason: string | undefined, message: string, details?: object) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  ...(reason ? { reason } : {}),
  ...(details ? { details } : {}),
  code,
});
// errors.NewInvalid(GroupKind{meta.k8s.io, kind}, "", errs): no name in the details.
const invalid = (kind: string, summary: string, causes: object[]) =>
  status(422, 'Invalid', `${kind}.meta.k8s.io "" is invalid: ${summary}`, { group: 'meta.k8s.io', kind, causes });

beforeAll(async () => {
  server = await startServer();
  agent = adminAgent(server.certDir);
  for (const name of ['a', 'b']) expect((await call(agent, ns('q'), 'POST', website(name))).status).toBe(201);
});
afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

/** get reads a whole response: a watch ends after timeoutSeconds=1. */
async function get(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { dispatcher: agent, headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

/** watchCount is the request counter /metrics keeps under the verb request-info gave the request. */
async function verbCount(verb: string): Promise<number> {
  const r = await call(agent, `${server.url}/metrics`);
  return Number(new RegExp(`apiserver_request_total\\{verb="${verb}",resource="websites",code="200"\\} (\\d+)`).exec(r.text)?.[1] ?? 0);
}

async function eventuallyEqual(f: () => Promise<number>, want: number): Promise<void> {
  for (let i = 0; i < 100 && (await f()) !== want; i++) await new Promise((r) => setTimeout(r, 20));
  expect(await f()).toBe(want);
}

describe('watch and other booleans: false only for 0 and case-insensitive false (Convert_Slice_string_To_bool)', () => {
  it.each(['watch=True', 'watch=', 'watch', 'watch=yes', 'watch=1&watch=false'])('?%s is a watch, authorized and counted as verb watch', async (q) => {
    const before = await verbCount('watch');
    const r = await get(`${ns('q')}?${q}&timeoutSeconds=1`);
    expect(r.status).toBe(200);
    // A watch stream: one JSON event per line (the two objects, as initial ADDED events), not a list.
    const events = r.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED a', 'ADDED b']);
    await eventuallyEqual(() => verbCount('watch'), before + 1);
  });

  it.each(['watch=FALSE', 'watch=0', 'watch=false&watch=true', 'watch=1;x=1', 'watch=%zz', 'foo=bar&unknown'])(
    '?%s is a list, authorized and counted as verb list',
    async (q) => {
      const before = await verbCount('list');
      const r = await call(agent, `${ns('q')}?${q}`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ kind: 'WebsiteList', items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }] });
      await eventuallyEqual(() => verbCount('list'), before + 1);
    },
  );

  it('a GET with a name is a get even with ?watch=true: the object, as a CRD serves verb get (GetResource)', async () => {
    const r = await call(agent, `${ns('q')}/a?watch=true`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: 'Website', metadata: { name: 'a' } });
  });

  it('sendInitialEvents= is set (a pointer is unset only when absent): forbidden on a list, needs NotOlderThan on a watch', async () => {
    expect((await call(agent, `${ns('q')}?sendInitialEvents=`)).body).toEqual(
      invalid('ListOptions', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list', [
        { reason: 'FieldValueForbidden', message: 'Forbidden: sendInitialEvents is forbidden for list', field: 'sendInitialEvents' },
      ]),
    );
    const w = await call(agent, `${ns('q')}?watch=1&sendInitialEvents=&timeoutSeconds=1`);
    expect(w.status).toBe(422);
    expect(w.body.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    );
  });
});

describe("integers are strconv.ParseInt: a bad one is 400 BadRequest with Go's error text", () => {
  it.each([
    ['limit=abc', 'strconv.ParseInt: parsing "abc": invalid syntax'],
    ['limit=', 'strconv.ParseInt: parsing "": invalid syntax'],
    // An unescaped + is a space in a query.
    ['limit=+1', 'strconv.ParseInt: parsing " 1": invalid syntax'],
    ['limit=99999999999999999999', 'strconv.ParseInt: parsing "99999999999999999999": value out of range'],
    ['limit=%C3%A9%01%22', 'strconv.ParseInt: parsing "é\\x01\\"": invalid syntax'],
    ['watch=1&timeoutSeconds=', 'strconv.ParseInt: parsing "": invalid syntax'],
    // timeoutSeconds is converted before limit, and both before the selectors.
    ['limit=x&timeoutSeconds=1x&labelSelector=a%20in%20(', 'strconv.ParseInt: parsing "1x": invalid syntax'],
  ])('?%s', async (q, message) => {
    const r = await call(agent, `${ns('q')}?${q}`);
    expect(r.status).toBe(400);
    expect(r.body).toEqual(status(400, 'BadRequest', message));
  });

  it('gracePeriodSeconds on a delete too, and nothing is deleted', async () => {
    const r = await call(agent, `${ns('q')}/a?gracePeriodSeconds=`, 'DELETE');
    expect(r.body).toEqual(status(400, 'BadRequest', 'strconv.ParseInt: parsing "": invalid syntax'));
    expect((await call(agent, `${ns('q')}/a`)).status).toBe(200);
  });

  it('limit=%2B1 is one item; a negative limit lists everything (paging only when limit > 0)', async () => {
    const one = await call(agent, `${ns('q')}?limit=%2B1`);
    expect(one.body.items).toHaveLength(1);
    expect(one.body.metadata.continue).toBeTruthy();
    const all = await call(agent, `${ns('q')}?limit=-1`);
    expect(all.status).toBe(200);
    expect(all.body.items).toHaveLength(2);
    expect(all.body.metadata.continue).toBeUndefined();
  });

  it('timeoutSeconds=0 is the default (long) timeout, a negative one ends the watch at once (handleWatch)', async () => {
    const negative = await get(`${ns('q')}?watch=1&timeoutSeconds=-5`);
    expect(negative.status).toBe(200);
    const res = await request(`${ns('q')}?watch=1&timeoutSeconds=0`, { dispatcher: agent });
    expect(res.statusCode).toBe(200);
    let ended = false;
    const done = res.body.text().then(
      () => (ended = true),
      () => (ended = true),
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(ended).toBe(false);
    res.body.destroy();
    await done;
  });

  it('a resourceVersion that is not a uint64 is 400 (APIObjectVersioner), for a watch too (kube: 500, a deliberate difference)', async () => {
    expect((await call(agent, `${ns('q')}?resourceVersion=abc`)).body).toEqual(
      status(400, 'BadRequest', 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'),
    );
    expect((await call(agent, `${ns('q')}?resourceVersion=99999999999999999999999`)).body.message).toBe(
      'invalid resource version: resourceVersion: Invalid value: "99999999999999999999999": strconv.ParseUint: parsing "99999999999999999999999": value out of range',
    );
    expect((await call(agent, `${ns('q')}?watch=1&resourceVersion=abc`)).body).toEqual(
      status(400, 'BadRequest', 'invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'),
    );
  });
});

describe("selectors, validation and the CRD field-label conversion, in the handler's order", () => {
  it('a field other than metadata.name or metadata.namespace is a CRD\'s "field label not supported"', async () => {
    expect((await call(agent, `${ns('q')}?fieldSelector=spec.gitRepo%3Dx`)).body).toEqual(status(400, 'BadRequest', 'field label not supported: spec.gitRepo'));
  });

  it('validation (422) comes before the field-label conversion (400)', async () => {
    const r = await call(agent, `${ns('q')}?fieldSelector=spec.gitRepo%3Dx&resourceVersionMatch=Foo`);
    expect(r.body).toEqual(
      invalid(
        'ListOptions',
        '[resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""]',
        [
          {
            reason: 'FieldValueForbidden',
            message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
            field: 'resourceVersionMatch',
          },
          {
            reason: 'FieldValueNotSupported',
            message: 'Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""',
            field: 'resourceVersionMatch',
          },
        ],
      ),
    );
  });

  it("a label selector that does not parse is 400 with labels.Parse's text", async () => {
    expect((await call(agent, `${ns('q')}?labelSelector=a%20in%20(&fieldSelector=x`)).body).toEqual(
      status(400, 'BadRequest', "unable to parse requirement: found '', expected: ',', ')' or identifier"),
    );
  });
});

describe('Table options and GetOptions', () => {
  it('"-" is TableOptions.noHeaders (its json tag): the Table has no column definitions', async () => {
    const without = await call(agent, `${ns('q')}?-=true`, 'GET', undefined, TABLE);
    expect(without.body.kind).toBe('Table');
    expect(without.body.columnDefinitions).toBeNull();
    expect(without.body.rows).toHaveLength(2);
    expect((await call(agent, `${ns('q')}?-=0`, 'GET', undefined, TABLE)).body.columnDefinitions.length).toBeGreaterThan(0);
    expect((await call(agent, `${ns('q')}/a?-`, 'GET', undefined, TABLE)).body.columnDefinitions).toBeNull();
  });

  it("a bad includeObject is ValidateTableOptions's Invalid, only when a Table is asked for", async () => {
    expect((await call(agent, `${ns('q')}?includeObject=Bogus`, 'GET', undefined, TABLE)).body).toEqual(
      status(
        400,
        'BadRequest',
        "Unable to convert to Table as requested: includeObject: Invalid value: \"Bogus\": must be 'Metadata', 'Object', 'None', or empty",
      ),
    );
    expect((await call(agent, `${ns('q')}?includeObject=Bogus`)).status).toBe(200);
  });

  it('export=true (or empty) is refused on a get, export=0 is fine (handlers/get.go)', async () => {
    for (const q of ['export=true', 'export=']) {
      expect((await call(agent, `${ns('q')}/a?${q}`)).body).toEqual(
        status(400, 'BadRequest', 'the export parameter, deprecated since v1.14, is no longer supported'),
      );
    }
    expect((await call(agent, `${ns('q')}/a?export=0`)).status).toBe(200);
  });
});

describe('Create/Update/PatchOptions validation (meta/v1/validation)', () => {
  const long = 'm'.repeat(130);

  it("dryRun values, fieldValidation and fieldManager, in ValidateCreateOptions's order", async () => {
    const r = await call(agent, `${ns('q')}?fieldValidation=bogus&dryRun=x&fieldManager=${long}`, 'POST', website('c'));
    expect(r.body).toEqual(
      invalid(
        'CreateOptions',
        '[fieldManager: Too long: may not be more than 128 bytes, dryRun: Unsupported value: ["x"]: supported values: "All", fieldValidation: Unsupported value: "bogus": supported values: "", "Ignore", "Strict", "Warn"]',
        [
          { reason: 'FieldValueTooLong', message: 'Too long: may not be more than 128 bytes', field: 'fieldManager' },
          { reason: 'FieldValueNotSupported', message: 'Unsupported value: ["x"]: supported values: "All"', field: 'dryRun' },
          {
            reason: 'FieldValueNotSupported',
            message: 'Unsupported value: "bogus": supported values: "", "Ignore", "Strict", "Warn"',
            field: 'fieldValidation',
          },
        ],
      ),
    );
    expect((await call(agent, `${ns('q')}/c`)).status).toBe(404);
  });

  it('every unprintable rune of a fieldManager is reported at its byte position', async () => {
    const r = await call(agent, `${ns('q')}/a?fieldManager=a%01b%7F%F0%9F%98%80`, 'PUT', {});
    expect(r.body.message).toBe(
      'UpdateOptions.meta.k8s.io "" is invalid: [fieldManager: Invalid value: "a\\x01b\\x7f😀": invalid character U+0001 (at position 1), fieldManager: Invalid value: "a\\x01b\\x7f😀": invalid character U+007F (at position 3)]',
    );
  });

  it('force, even empty, is forbidden on a non-apply patch; fieldManager is required for apply', async () => {
    expect((await call(agent, `${ns('q')}/a?force=`, 'PATCH', {}, MERGE)).body).toEqual(
      invalid('PatchOptions', 'force: Forbidden: may not be specified for non-apply patch', [
        { reason: 'FieldValueForbidden', message: 'Forbidden: may not be specified for non-apply patch', field: 'force' },
      ]),
    );
    const apply = await call(agent, `${ns('q')}/a?fieldManager=&force=1`, 'PATCH', '{}', { 'content-type': 'application/apply-patch+yaml' });
    expect(apply.body.message).toBe('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  });

  it('fieldValidation= is the default (Warn)', async () => {
    const r = await call(agent, `${ns('q')}?fieldValidation=&dryRun=All`, 'POST', { ...website('c'), spec: { gitRepo: 'https://example.com/a.git', zz: 1 } });
    expect(r.status).toBe(201);
    expect(r.headers['warning']).toBe('299 - "unknown field \\"spec.zz\\""');
  });
});

describe('DeleteOptions (ValidateDeleteOptions; AllowUnsafeMalformedObjectDeletion is on in 1.37)', () => {
  it('propagationPolicy= is the empty policy, refused; dryRun values are reported as one list', async () => {
    expect((await call(agent, `${ns('q')}/a?propagationPolicy=&dryRun=x&dryRun=All`, 'DELETE')).body).toEqual(
      invalid(
        'DeleteOptions',
        '[propagationPolicy: Unsupported value: "": supported values: "Foreground", "Background", "Orphan", "nil", dryRun: Unsupported value: ["x","All"]: supported values: "All"]',
        [
          {
            reason: 'FieldValueNotSupported',
            message: 'Unsupported value: "": supported values: "Foreground", "Background", "Orphan", "nil"',
            field: 'propagationPolicy',
          },
          { reason: 'FieldValueNotSupported', message: 'Unsupported value: ["x","All"]: supported values: "All"', field: 'dryRun' },
        ],
      ),
    );
  });

  it('orphanDependents= is set, so it conflicts with a propagationPolicy', async () => {
    const r = await call(agent, `${ns('q')}/a?orphanDependents=&propagationPolicy=Orphan`, 'DELETE');
    expect(r.body.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
    );
  });

  it('ignoreStoreReadErrorWithClusterBreakingPotential: refused with other options, on a collection, and on a readable object', async () => {
    const combined = await call(
      agent,
      `${ns('q')}/a?ignoreStoreReadErrorWithClusterBreakingPotential=true&propagationPolicy=Orphan&gracePeriodSeconds=3`,
      'DELETE',
    );
    expect(combined.body.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: [ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .propagationPolicy, ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .gracePeriodSeconds]',
    );
    expect((await call(agent, `${ns('q')}?ignoreStoreReadErrorWithClusterBreakingPotential=true`, 'DELETE')).body).toEqual(
      invalid(
        'DeleteOptions',
        'ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option',
        [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option',
            field: 'ignoreStoreReadErrorWithClusterBreakingPotential',
          },
        ],
      ),
    );
    expect((await call(agent, `${ns('q')}/a?ignoreStoreReadErrorWithClusterBreakingPotential=true`, 'DELETE')).body).toEqual(
      status(
        409,
        'Conflict',
        'Operation cannot be fulfilled on websites.extensions.example.com "a": StorageError: invalid object, Code: 4, Key: /registry/extensions.example.com/websites/q/a, ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage',
        { name: 'a', group: 'extensions.example.com', kind: 'websites' },
      ),
    );
    expect((await call(agent, `${ns('q')}/nope?ignoreStoreReadErrorWithClusterBreakingPotential=true`, 'DELETE')).status).toBe(404);
    expect((await call(agent, `${ns('q')}/a`)).status).toBe(200);
  });

  it('a negative gracePeriodSeconds is accepted (BeforeDelete makes it 1), and ignoreStore...=0 is no unsafe delete', async () => {
    expect((await call(agent, `${ns('q')}/a?gracePeriodSeconds=-5&dryRun=All&ignoreStoreReadErrorWithClusterBreakingPotential=0`, 'DELETE')).status).toBe(200);
    expect((await call(agent, `${ns('q')}/a`)).status).toBe(200);
  });

  it('a DeleteOptions body is validated the same way; a JSON null is an unset option', async () => {
    const bad = await call(agent, `${ns('q')}/a`, 'DELETE', { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: '', dryRun: ['x'] });
    expect(bad.body.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: [propagationPolicy: Unsupported value: "": supported values: "Foreground", "Background", "Orphan", "nil", dryRun: Unsupported value: ["x"]: supported values: "All"]',
    );
    const ok = await call(agent, `${ns('q')}/a`, 'DELETE', {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: null,
      orphanDependents: true,
      dryRun: ['All'],
    });
    expect(ok.status).toBe(200);
  });
});
