/**
 * @module discovery/openapi-v2-proto.test
 * `/openapi/v2` in protobuf, as kube-openapi handler/handler.go serves it: the gnostic openapi.v2.Document encoding
 * (checked byte for byte on a small document, then decoded back and compared with our JSON document field by field),
 * and the Accept negotiation (goautoneg order, both protobuf spellings, one ETag for both, 304, bare 406).
 */
import type { FastifyInstance } from 'fastify';
import { discoveryApp } from '../../test/helpers/discovery-app.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { kinds } from '../kinds/index.js';
import { servedDefinitions } from '../registry/resource.js';
import { OPENAPI_V2_DOCUMENT, openApiV2Types } from './gnostic-openapi-v2.js';
import { openApiV2, type OpenAPISchema, type SwaggerDocument } from './openapi.js';
import { goautonegClauses } from './openapi-accept.js';
import { encodeOpenApiV2, yamlOf } from './openapi-v2-proto.js';
import { OPENAPI_V2_PROTOBUF } from './routes.js';

// What client-go's discovery client sends (discovery_client.go openAPIV2mimePb) and the current spelling.
const CLIENT_GO_PB = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const CURRENT_PB = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const WEBSITE = 'com.example.extensions.v1alpha1.Website';

type Msg = Record<string, any>;
const DocumentType = openApiV2Types.lookupType(OPENAPI_V2_DOCUMENT);
const decode = (bytes: Uint8Array): Msg => DocumentType.toObject(DocumentType.decode(bytes), { oneofs: true, longs: Number });

// Named pairs back to a JSON-ordered object.
const pairs = (list: { name: string; value: unknown }[] | undefined, f: (v: any) => unknown = (v) => v) =>
  Object.fromEntries((list ?? []).map((p) => [p.name, f(p.value)]));
const extensions = (m: Msg) => pairs(m.vendor_extension, (v) => YAML.parse(v.yaml));

// A decoded Schema message back to Swagger JSON, for the members our documents use.
function schemaJson(m: Msg): OpenAPISchema {
  const out: Record<string, unknown> = {};
  if (m._ref) out.$ref = m._ref;
  if (m.description) out.description = m.description;
  if (m.type) out.type = m.type.value.length === 1 ? m.type.value[0] : m.type.value;
  if (m.format) out.format = m.format;
  if (m.required?.length) out.required = m.required;
  if (m.enum?.length) out.enum = m.enum.map((a: Msg) => YAML.parse(a.yaml));
  if (m.default) out.default = YAML.parse(m.default.yaml);
  for (const k of ['minimum', 'maximum', 'pattern'] as const) if (m[k]) out[k] = m[k];
  if (m.max_length) out.maxLength = m.max_length;
  if (m.min_length) out.minLength = m.min_length;
  if (m.properties) out.properties = pairs(m.properties.additional_properties, schemaJson);
  if (m.items) out.items = schemaJson(m.items.schema[0]);
  if (m.additional_properties) {
    out.additionalProperties = m.additional_properties.oneof === 'boolean' ? m.additional_properties.boolean : schemaJson(m.additional_properties.schema);
  }
  return { ...out, ...extensions(m) } as OpenAPISchema;
}

// A zero number is a proto3 zero value: not on the wire, in kube's encoding as in ours.
function dropZeroBounds(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropZeroBounds);
  if (!v || typeof v !== 'object') return v;
  const bounds = new Set(['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems']);
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k, x]) => !(bounds.has(k) && x === 0))
      .map(([k, x]) => [k, dropZeroBounds(x)]),
  );
}

// Key order does not matter to a reader of the JSON; compare sorted.
function sortDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortDeep);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortDeep((v as Record<string, unknown>)[k])]),
    );
  return v;
}

describe('encodeOpenApiV2', () => {
  it('writes the gnostic field numbers: a small document byte for byte', () => {
    const doc = {
      swagger: '2.0',
      info: { title: 't', version: 'v' },
      paths: {},
      definitions: { A: { description: 'd', type: 'object', 'x-k': true } },
    };
    // Fields go out in field-number order, as Go's proto.Marshal writes them:
    // Document swagger=1 (0a) · info=2 (12: Info title=1, version=2) · paths=8 (42, present though empty) ·
    // definitions=9 (4a: Definitions additional_properties=1 → NamedSchema name=1, value=2 → Schema
    //   description=4 (22) · type=22 (b2 01: TypeItem value=1) · vendor_extension=31 (fa 01: NamedAny name=1,
    //   value=2 → Any yaml=2 "true\n")).
    const expected = [
      '0a03322e30',
      '12060a0174120176',
      '4200',
      '4a26',
      '0a24',
      '0a0141',
      '121f',
      '220164',
      'b201080a066f626a656374',
      'fa010e0a03782d6b12071205747275650a',
    ].join('');
    expect(encodeOpenApiV2(doc).toString('hex')).toBe(expected);
  });

  it('keeps a present empty object and a false additionalProperties, drops zero scalars (proto3, as Go marshals)', () => {
    const doc = {
      swagger: '2.0',
      info: { title: 't', version: 'v' },
      paths: {},
      definitions: { A: { properties: {}, additionalProperties: false, minimum: 0, description: '' } },
    };
    const a = decode(encodeOpenApiV2(doc)).definitions.additional_properties[0].value;
    expect(a.properties).toEqual({});
    expect(a.additional_properties).toMatchObject({ oneof: 'boolean', boolean: false });
    expect(a.minimum).toBeUndefined();
    expect(Object.keys(DocumentType.decode(encodeOpenApiV2(doc)).toJSON().definitions.additional_properties[0].value).sort()).toEqual([
      'additional_properties',
      'properties',
    ]);
  });

  it('refuses a member gnostic would refuse (kube would fail to convert and answer 503)', () => {
    const doc = { swagger: '2.0', info: { title: 't', version: 'v' }, paths: {}, definitions: { A: { type: 'string', nullable: true } } };
    expect(() => encodeOpenApiV2(doc)).toThrow(/definitions\.A has invalid property nullable/);
    expect(() => encodeOpenApiV2({ swagger: '2.0', paths: {} })).toThrow(/missing required property info/);
  });

  it('writes vendor extensions and Any values as YAML that reads back to the JSON value', () => {
    const gvk = [{ group: 'extensions.example.com', version: 'v1alpha1', kind: 'Website' }];
    expect(yamlOf(gvk)).toBe('- group: extensions.example.com\n  version: v1alpha1\n  kind: Website\n');
    expect(yamlOf('get')).toBe('get\n');
    for (const v of [true, 0, '', 'True', '0', 'a: b', {}, [], 'x'.repeat(200), 'two\nlines']) expect(YAML.parse(yamlOf(v))).toEqual(v);
  });
});

describe('our Swagger document in protobuf', () => {
  const json = JSON.parse(JSON.stringify(openApiV2(servedDefinitions(kinds)))) as SwaggerDocument;
  const message = decode(encodeOpenApiV2(json));

  it('carries the header, security and definitions of the JSON document, in its order', () => {
    expect(message.swagger).toBe('2.0');
    expect(message.info).toEqual({ title: json.info.title, version: json.info.version });
    // `BearerToken: []`: a present StringArray with no values.
    expect(message.security).toEqual([{ additional_properties: [{ name: 'BearerToken', value: {} }] }]);
    expect(message.security_definitions.additional_properties[0]).toMatchObject({
      name: 'BearerToken',
      value: { oneof: 'api_key_security', api_key_security: { type: 'apiKey', name: 'authorization', in: 'header' } },
    });
    expect(message.definitions.additional_properties.map((d: Msg) => d.name)).toEqual(Object.keys(json.definitions));
  });

  it('decodes every definition back to the JSON schema (what kubectl explain reads)', () => {
    const back = pairs(message.definitions.additional_properties, schemaJson);
    expect(sortDeep(back)).toEqual(sortDeep(dropZeroBounds(json.definitions)));
    // The fields explain prints: the spec's field descriptions and the GVK that finds the kind.
    const site = message.definitions.additional_properties.find((d: Msg) => d.name === WEBSITE).value;
    expect(extensions(site)['x-kubernetes-group-version-kind']).toEqual([{ group: 'extensions.example.com', version: 'v1alpha1', kind: 'Website' }]);
    const spec = pairs(site.properties.additional_properties).spec as Msg;
    expect(pairs(spec.properties.additional_properties, (s) => s.description).gitRepo).toMatch(/^GitRepo is the URL/);
  });

  it('decodes every path, operation, parameter and response back to the JSON paths', () => {
    expect(message.paths.path.map((p: Msg) => p.name)).toEqual(Object.keys(json.paths));
    for (const { name, value: item } of message.paths.path as { name: string; value: Msg }[]) {
      const jsonItem = json.paths[name] as Record<string, any>;
      const param = (p: Msg) => {
        if (p.parameter.oneof === 'body_parameter') {
          const b = p.parameter.body_parameter;
          return { name: b.name, in: b.in, ...(b.required ? { required: true } : {}), schema: schemaJson(b.schema) };
        }
        const nb = p.parameter.non_body_parameter;
        const s = nb[nb.oneof];
        expect(nb.oneof).toBe(`${s.in}_parameter_sub_schema`);
        return { uniqueItems: s.unique_items, type: s.type, description: s.description, name: s.name, in: s.in, ...(s.required ? { required: true } : {}) };
      };
      expect(sortDeep(item.parameters.map(param))).toEqual(sortDeep(jsonItem.parameters));
      for (const method of ['get', 'put', 'post', 'delete', 'patch']) {
        const op = item[method] as Msg | undefined;
        expect(Boolean(op), `${name} ${method}`).toBe(Boolean(jsonItem[method]));
        if (!op) continue;
        const j = jsonItem[method];
        expect(op.operation_id).toBe(j.operationId);
        expect(op.description).toBe(j.description);
        expect(op.consumes).toEqual(j.consumes);
        expect(op.produces).toEqual(j.produces);
        expect(op.schemes).toEqual(j.schemes);
        expect(op.tags).toEqual(j.tags);
        expect(extensions(op)).toEqual({
          'x-kubernetes-action': j['x-kubernetes-action'],
          'x-kubernetes-group-version-kind': j['x-kubernetes-group-version-kind'],
        });
        expect(sortDeep((op.parameters ?? []).map(param))).toEqual(sortDeep(j.parameters ?? []));
        const responses = pairs(op.responses.response_code, (r) => ({
          description: r.response.description,
          ...(r.response.schema ? { schema: schemaJson(r.response.schema.schema) } : {}),
        }));
        expect(responses).toEqual(j.responses);
      }
    }
  });
});

describe('goautonegClauses', () => {
  it('orders by q, then concrete before wildcard, keeping header order otherwise (goautoneg.ParseAccept)', () => {
    const order = (h: string) => goautonegClauses(h).map((c) => `${c.type}/${c.subtype};${c.q}`);
    expect(order('text/*;q=0.5, application/json, */*;q=0.1')).toEqual(['application/json;1', 'text/*;0.5', '*/*;0.1']);
    // Less never answers false for a lower q, so Go's insertion sort lets a concrete q=0.5 pass a wildcard q=0.8.
    expect(order('*/*;q=0.8, application/json;q=0.5, text/*, application/x')).toEqual(['application/x;1', 'text/*;1', 'application/json;0.5', '*/*;0.8']);
    expect(order('a/b, c/d')).toEqual(['a/b;1', 'c/d;1']);
    expect(order('a/b;q=x, *')).toEqual(['*/*;1', 'a/b;0']);
    expect(order('bogus, a/b/c, ,x/y')).toEqual(['x/y;1']);
  });
});

describe('GET /openapi/v2 negotiation', () => {
  let app: FastifyInstance;
  let jsonEtag: string;
  const get = (headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: '/openapi/v2', headers });

  beforeAll(async () => {
    app = await discoveryApp();
    jsonEtag = (await get({ accept: 'application/json' })).headers.etag as string;
  });
  afterAll(() => app.close());

  it.each([
    ['client-go (the deprecated @v1.0 spelling)', CLIENT_GO_PB],
    ['the current spelling', CURRENT_PB],
    ['protobuf preferred by q', `application/json;q=0.5, ${CLIENT_GO_PB}`],
    ['protobuf before a wildcard', `*/*, ${CURRENT_PB}`],
  ])('serves protobuf to %s, labelled with the current spelling and the JSON ETag', async (_what, accept) => {
    const res = await get({ accept });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(OPENAPI_V2_PROTOBUF);
    expect(res.headers.vary).toBe('Accept');
    expect(res.headers.etag).toBe(jsonEtag);
    const doc = decode(res.rawPayload);
    expect(doc.swagger).toBe('2.0');
    expect(doc.definitions.additional_properties.some((d: Msg) => d.name === WEBSITE)).toBe(true);
  });

  it.each([
    ['no Accept', undefined],
    ['*/*', '*/*'],
    ['application/*', 'application/*'],
    ['JSON listed first among equals', `application/json, ${CLIENT_GO_PB}`],
    ['JSON with parameters (ignored)', 'application/json;as=Table;g=meta.k8s.io;v=v1'],
  ])('serves JSON to %s', async (_what, accept) => {
    const res = await get(accept === undefined ? {} : { accept });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json().swagger).toBe('2.0');
  });

  it('answers If-None-Match with the shared ETag by 304 in either representation', async () => {
    for (const accept of [CLIENT_GO_PB, 'application/json']) {
      const res = await get({ accept, 'if-none-match': jsonEtag });
      expect(res.statusCode, accept).toBe(304);
      expect(res.body).toBe('');
    }
  });

  it('answers an Accept it cannot serve with a bare 406, as kube-openapi does', async () => {
    const res = await get({ accept: 'application/vnd.kubernetes.protobuf, text/plain' });
    expect(res.statusCode).toBe(406);
    expect(res.body).toBe('');
    expect(res.headers.vary).toBe('Accept');
  });
});
