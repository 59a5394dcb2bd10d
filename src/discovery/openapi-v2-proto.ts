/**
 * @module discovery/openapi-v2-proto
 * encodeOpenApiV2 turns our Swagger 2.0 JSON document into the protobuf `openapi.v2.Document` kube-openapi serves as
 * `application/com.github.proto-openapi.spec.v2.v1.0+protobuf` (handler/handler.go ToProtoBinary: gnostic's
 * ParseDocument of the JSON, then proto.Marshal). It follows gnostic's conversion (gnostic-models
 * openapiv2/OpenAPIv2.go, the New<Message> functions):
 * - object members become fields in the JSON key order; maps become repeated `Named<Message>` pairs;
 * - every `x-…` member becomes a `NamedAny` whose value is the member re-written as YAML (`Any.yaml`), as
 *   gnostic's compiler.Marshal does; `default`, `example` and `enum` values are `Any`s the same way;
 * - `type` is a TypeItem (a one-element list), `items` an ItemsItem, `additionalProperties` a schema or a boolean;
 * - a parameter is a body parameter or a header/formData/query/path sub-schema chosen by `in`; `$ref` items are
 *   JsonReferences;
 * - a member gnostic does not allow makes ParseDocument fail (kube then answers 503): here it throws, so a document
 *   that would not convert is caught by the tests instead of being served half-encoded.
 * Zero scalars are left unset, as proto3 marshals them (absent); present objects, even empty, are kept.
 */
import YAML from 'yaml';
import { OPENAPI_V2_DOCUMENT, openApiV2Types } from './gnostic-openapi-v2.js';

type Json = Record<string, unknown>;
type Message = Record<string, unknown>;
type Convert = (value: unknown, at: string) => unknown;

/** A JSON object kind: its members (JSON name → proto field and conversion), required members, and whether x- members are kept. */
interface ObjectSpec {
  fields: Record<string, readonly [field: string, convert: Convert]>;
  required?: readonly string[];
  /** The proto field that collects `x-…` members; absent where gnostic allows none. */
  extensions?: string;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(at: string, what: string): never {
  throw new Error(`openapi v2 protobuf: ${at} ${what}`);
}

// Scalars: undefined for proto3 zero values so they stay off the wire.
const str: Convert = (v, at) => (typeof v === 'string' ? v || undefined : fail(at, `is not a string: ${JSON.stringify(v)}`));
const bool: Convert = (v, at) => (typeof v === 'boolean' ? v || undefined : fail(at, `is not a boolean: ${JSON.stringify(v)}`));
const num: Convert = (v, at) => (typeof v === 'number' ? v || undefined : fail(at, `is not a number: ${JSON.stringify(v)}`));
const int: Convert = (v, at) => (Number.isInteger(v) ? (v as number) || undefined : fail(at, `is not an integer: ${JSON.stringify(v)}`));
const strings: Convert = (v, at) =>
  Array.isArray(v) && v.every((s) => typeof s === 'string') ? v : fail(at, `is not a list of strings: ${JSON.stringify(v)}`);

/** yamlOf writes a JSON value the way gnostic fills `Any.yaml`: block-style YAML text ending in a newline. */
export function yamlOf(value: unknown): string {
  return YAML.stringify(value, { lineWidth: 0 });
}

const any: Convert = (v) => ({ yaml: yamlOf(v) });
const anys: Convert = (v, at) => (Array.isArray(v) ? v.map((x) => any(x, at)) : fail(at, 'is not a list'));
const object =
  (spec: ObjectSpec): Convert =>
  (v, at) =>
    convert(v, spec, at);
const list =
  (c: Convert): Convert =>
  (v, at) =>
    Array.isArray(v) ? v.map((x, i) => c(x, `${at}[${i}]`)) : fail(at, 'is not a list');

// A JSON map as repeated `{name, value}` pairs, in key order, wrapped in a message under `field`.
const named =
  (c: Convert, field = 'additional_properties'): Convert =>
  (v, at) => {
    if (!isObject(v)) fail(at, 'is not an object');
    return { [field]: Object.entries(v).map(([name, value]) => ({ name, value: c(value, `${at}.${name}`) })) };
  };

/** convert maps one JSON object onto a message following its spec; throws on members gnostic would refuse. */
function convert(v: unknown, spec: ObjectSpec, at: string): Message {
  if (!isObject(v)) fail(at, 'is not an object');
  for (const key of spec.required ?? []) if (!(key in v)) fail(at, `is missing required property ${key}`);
  const out: Message = {};
  const extensions: Message[] = [];
  for (const [key, value] of Object.entries(v)) {
    if (key.startsWith('x-') && spec.extensions) {
      extensions.push({ name: key, value: any(value, `${at}.${key}`) });
      continue;
    }
    const f = spec.fields[key];
    if (!f) fail(at, `has invalid property ${key}`);
    const converted = f[1](value, `${at}.${key}`);
    if (converted !== undefined) out[f[0]] = converted;
  }
  if (spec.extensions && extensions.length) out[spec.extensions] = extensions;
  return out;
}

const EXT = 'vendor_extension';

const externalDocs: ObjectSpec = { fields: { description: ['description', str], url: ['url', str] }, required: ['url'], extensions: EXT };
const jsonReference: ObjectSpec = { fields: { $ref: ['_ref', str], description: ['description', str] }, required: ['$ref'] };

// The validation keywords primitives share (parameters, headers, items), by JSON name.
const primitiveFields = (items: Convert): ObjectSpec['fields'] => ({
  type: ['type', str],
  format: ['format', str],
  items: ['items', items],
  collectionFormat: ['collection_format', str],
  default: ['default', any],
  maximum: ['maximum', num],
  exclusiveMaximum: ['exclusive_maximum', bool],
  minimum: ['minimum', num],
  exclusiveMinimum: ['exclusive_minimum', bool],
  maxLength: ['max_length', int],
  minLength: ['min_length', int],
  pattern: ['pattern', str],
  maxItems: ['max_items', int],
  minItems: ['min_items', int],
  uniqueItems: ['unique_items', bool],
  enum: ['enum', anys],
  multipleOf: ['multiple_of', num],
});

const primitivesItems: ObjectSpec = { fields: {}, extensions: EXT };
primitivesItems.fields = primitiveFields(object(primitivesItems));

const header: ObjectSpec = {
  fields: { ...primitiveFields(object(primitivesItems)), description: ['description', str] },
  required: ['type'],
  extensions: EXT,
};

const schema: ObjectSpec = { fields: {}, extensions: EXT };
const schemaConv = object(schema);
const xml: ObjectSpec = {
  fields: { name: ['name', str], namespace: ['namespace', str], prefix: ['prefix', str], attribute: ['attribute', bool], wrapped: ['wrapped', bool] },
  extensions: EXT,
};
schema.fields = {
  $ref: ['_ref', str],
  format: ['format', str],
  title: ['title', str],
  description: ['description', str],
  default: ['default', any],
  multipleOf: ['multiple_of', num],
  maximum: ['maximum', num],
  exclusiveMaximum: ['exclusive_maximum', bool],
  minimum: ['minimum', num],
  exclusiveMinimum: ['exclusive_minimum', bool],
  maxLength: ['max_length', int],
  minLength: ['min_length', int],
  pattern: ['pattern', str],
  maxItems: ['max_items', int],
  minItems: ['min_items', int],
  uniqueItems: ['unique_items', bool],
  maxProperties: ['max_properties', int],
  minProperties: ['min_properties', int],
  required: ['required', strings],
  enum: ['enum', anys],
  // A schema or a boolean; a boolean is a oneof member, so `false` is still sent.
  additionalProperties: ['additional_properties', (v, at) => (typeof v === 'boolean' ? { boolean: v } : { schema: schemaConv(v, at) })],
  type: ['type', (v, at) => ({ value: typeof v === 'string' ? [v] : strings(v, at) })],
  // gnostic takes only a single schema here (NewItemsItem), kept as a one-element list.
  items: ['items', (v, at) => ({ schema: [schemaConv(v, at)] })],
  allOf: ['all_of', list(schemaConv)],
  properties: ['properties', named(schemaConv)],
  discriminator: ['discriminator', str],
  readOnly: ['read_only', bool],
  xml: ['xml', object(xml)],
  externalDocs: ['external_docs', object(externalDocs)],
  example: ['example', any],
};

const nonBodyCommon = { required: ['required', bool], in: ['in', str], description: ['description', str], name: ['name', str] } as const;
const withEmptyValue = { allowEmptyValue: ['allow_empty_value', bool] } as const;
// Which sub-schema message a non-body parameter becomes, by `in` (gnostic validates `in` against each one's enum).
const NON_BODY: Record<string, readonly [field: string, spec: ObjectSpec]> = {
  header: ['header_parameter_sub_schema', { fields: { ...nonBodyCommon, ...primitiveFields(object(primitivesItems)) }, extensions: EXT }],
  formData: [
    'form_data_parameter_sub_schema',
    { fields: { ...nonBodyCommon, ...withEmptyValue, ...primitiveFields(object(primitivesItems)) }, extensions: EXT },
  ],
  query: ['query_parameter_sub_schema', { fields: { ...nonBodyCommon, ...withEmptyValue, ...primitiveFields(object(primitivesItems)) }, extensions: EXT }],
  path: ['path_parameter_sub_schema', { fields: { ...nonBodyCommon, ...primitiveFields(object(primitivesItems)) }, required: ['required'], extensions: EXT }],
};
const bodyParameter: ObjectSpec = {
  fields: { description: ['description', str], name: ['name', str], in: ['in', str], required: ['required', bool], schema: ['schema', schemaConv] },
  required: ['in', 'name', 'schema'],
  extensions: EXT,
};

const parameter: Convert = (v, at) => {
  if (!isObject(v)) fail(at, 'is not an object');
  if (v.in === 'body') return { body_parameter: convert(v, bodyParameter, at) };
  const sub = NON_BODY[String(v.in)];
  if (!sub) fail(at, `has unexpected value for in: ${JSON.stringify(v.in)}`);
  return { non_body_parameter: { [sub[0]]: convert(v, sub[1], at) } };
};
const parametersItem: Convert = (v, at) => (isObject(v) && '$ref' in v ? { json_reference: convert(v, jsonReference, at) } : { parameter: parameter(v, at) });

const response: ObjectSpec = {
  fields: {
    description: ['description', str],
    schema: ['schema', (v, at) => ({ schema: schemaConv(v, at) })],
    headers: ['headers', named(object(header))],
    examples: ['examples', named(any)],
  },
  required: ['description'],
  extensions: EXT,
};
const responseValue: Convert = (v, at) =>
  isObject(v) && '$ref' in v ? { json_reference: convert(v, jsonReference, at) } : { response: convert(v, response, at) };

// Responses: status codes (or `default`) and x- members only.
const responses: Convert = (v, at) => {
  if (!isObject(v)) fail(at, 'is not an object');
  const codes: Message[] = [];
  const extensions: Message[] = [];
  for (const [key, value] of Object.entries(v)) {
    if (/^([0-9]{3})$|^(default)$/.test(key)) codes.push({ name: key, value: responseValue(value, `${at}.${key}`) });
    else if (key.startsWith('x-')) extensions.push({ name: key, value: any(value, at) });
    else fail(at, `has invalid property ${key}`);
  }
  return { ...(codes.length ? { response_code: codes } : {}), ...(extensions.length ? { [EXT]: extensions } : {}) };
};

const securityRequirement: Convert = named((v, at) => ({ value: strings(v, at) }));

const operation: ObjectSpec = {
  fields: {
    tags: ['tags', strings],
    summary: ['summary', str],
    description: ['description', str],
    externalDocs: ['external_docs', object(externalDocs)],
    operationId: ['operation_id', str],
    produces: ['produces', strings],
    consumes: ['consumes', strings],
    parameters: ['parameters', list(parametersItem)],
    responses: ['responses', responses],
    schemes: ['schemes', strings],
    deprecated: ['deprecated', bool],
    security: ['security', list(securityRequirement)],
  },
  required: ['responses'],
  extensions: EXT,
};
const pathItem: ObjectSpec = {
  fields: {
    $ref: ['_ref', str],
    parameters: ['parameters', list(parametersItem)],
    ...Object.fromEntries(['get', 'put', 'post', 'delete', 'options', 'head', 'patch'].map((m) => [m, [m, object(operation)] as const])),
  },
  extensions: EXT,
};

// Paths: `/…` members are path items, `x-…` members extensions.
const paths: Convert = (v, at) => {
  if (!isObject(v)) fail(at, 'is not an object');
  const items: Message[] = [];
  const extensions: Message[] = [];
  for (const [key, value] of Object.entries(v)) {
    if (key.startsWith('/')) items.push({ name: key, value: convert(value, pathItem, `${at}.${key}`) });
    else if (key.startsWith('x-')) extensions.push({ name: key, value: any(value, at) });
    else fail(at, `has invalid property ${key}`);
  }
  return { ...(extensions.length ? { [EXT]: extensions } : {}), ...(items.length ? { path: items } : {}) };
};

const scopes = named(str);
const oauth2 = (extra: ObjectSpec['fields']): ObjectSpec => ({
  fields: { type: ['type', str], flow: ['flow', str], scopes: ['scopes', scopes], description: ['description', str], ...extra },
  required: ['flow', 'type'],
  extensions: EXT,
});
const authorizationUrl = { authorizationUrl: ['authorization_url', str] } as const;
const tokenUrl = { tokenUrl: ['token_url', str] } as const;
// A security scheme becomes the message its `type` (and, for oauth2, `flow`) names.
const SECURITY_SCHEMES: Record<string, readonly [field: string, spec: ObjectSpec]> = {
  basic: ['basic_authentication_security', { fields: { type: ['type', str], description: ['description', str] }, required: ['type'], extensions: EXT }],
  apiKey: [
    'api_key_security',
    {
      fields: { type: ['type', str], name: ['name', str], in: ['in', str], description: ['description', str] },
      required: ['in', 'name', 'type'],
      extensions: EXT,
    },
  ],
  'oauth2/implicit': ['oauth2_implicit_security', oauth2(authorizationUrl)],
  'oauth2/password': ['oauth2_password_security', oauth2(tokenUrl)],
  'oauth2/application': ['oauth2_application_security', oauth2(tokenUrl)],
  'oauth2/accessCode': ['oauth2_access_code_security', oauth2({ ...authorizationUrl, ...tokenUrl })],
};
const securityScheme: Convert = (v, at) => {
  if (!isObject(v)) fail(at, 'is not an object');
  const kind = v.type === 'oauth2' ? `oauth2/${String(v.flow)}` : String(v.type);
  const scheme = SECURITY_SCHEMES[kind];
  if (!scheme) fail(at, `is not a known security scheme: ${kind}`);
  return { [scheme[0]]: convert(v, scheme[1], at) };
};

const info: ObjectSpec = {
  fields: {
    title: ['title', str],
    version: ['version', str],
    description: ['description', str],
    termsOfService: ['terms_of_service', str],
    contact: ['contact', object({ fields: { name: ['name', str], url: ['url', str], email: ['email', str] }, extensions: EXT })],
    license: ['license', object({ fields: { name: ['name', str], url: ['url', str] }, required: ['name'], extensions: EXT })],
  },
  required: ['title', 'version'],
  extensions: EXT,
};
const tag: ObjectSpec = {
  fields: { name: ['name', str], description: ['description', str], externalDocs: ['external_docs', object(externalDocs)] },
  required: ['name'],
  extensions: EXT,
};

const document: ObjectSpec = {
  fields: {
    swagger: ['swagger', str],
    info: ['info', object(info)],
    host: ['host', str],
    basePath: ['base_path', str],
    schemes: ['schemes', strings],
    consumes: ['consumes', strings],
    produces: ['produces', strings],
    paths: ['paths', paths],
    definitions: ['definitions', named(schemaConv)],
    parameters: ['parameters', named(parameter)],
    responses: ['responses', named(object(response))],
    security: ['security', list(securityRequirement)],
    securityDefinitions: ['security_definitions', named(securityScheme)],
    tags: ['tags', list(object(tag))],
    externalDocs: ['external_docs', object(externalDocs)],
  },
  required: ['info', 'paths', 'swagger'],
  extensions: EXT,
};

/** toOpenApiV2Message converts a Swagger 2.0 JSON document into a plain `openapi.v2.Document` message object. */
export function toOpenApiV2Message(doc: unknown): Message {
  return convert(doc, document, '$');
}

/** encodeOpenApiV2 returns the protobuf bytes of a Swagger 2.0 JSON document (what `/openapi/v2` serves as protobuf). */
export function encodeOpenApiV2(doc: unknown): Buffer {
  const type = openApiV2Types.lookupType(OPENAPI_V2_DOCUMENT);
  const message = toOpenApiV2Message(doc);
  const invalid = type.verify(message);
  if (invalid) throw new Error(`openapi v2 protobuf: ${invalid}`);
  return Buffer.from(type.encode(message).finish());
}
