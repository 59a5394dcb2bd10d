/**
 * @module discovery/routes
 * Fastify routes for the non-resource endpoints: `/apis` (legacy or aggregated v2 by Accept), `/apis/<g>`,
 * `/apis/<g>/<v>`, `/version`, `/openapi/v2`, `/openapi/v3` and `/openapi/v3/apis/<g>/<v>`.
 * Every document is built and serialized once at registration; handlers only pick bytes and set caching headers
 * (ETag/If-None-Match as kube's aggregated/etag.go and kube-openapi handler/handler3 do). `/openapi/v2` is also
 * served as protobuf (client-go's OpenAPISchema asks only for that). Errors are thrown as StatusError for the app's
 * error handler, except the OpenAPI 406, which kube-openapi sends without a body.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { notAcceptable, notFoundPath } from '../apis/meta/errors.js';
import type { ResourceDefinition } from '../registry/resource.js';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  DISCOVERY_V2_CONTENT_TYPE,
  groupVersions,
  serializeDocument,
  versionInfo,
  type SerializedDocument,
} from './discovery.js';
import { isJsonRange, parseAccept } from '../endpoints/negotiation.js';
import { openApiV2, openApiV3Discovery, openApiV3GroupVersion, openApiV3Path, openApiV3URL } from './openapi.js';
import { negotiateOpenApi, type OpenApiOffer } from './openapi-accept.js';

/**
 * discoveryFormat decides what `GET /apis` answers: the first satisfiable clause wins (API-CONVENTIONS §2.4).
 * A JSON range asking for a conversion (`as`/`g`/`v`) is satisfiable only as apidiscovery.k8s.io/v2
 * APIGroupDiscoveryList (v2beta1 is not served); other params such as `profile=nopeer` are tolerated.
 * Returns undefined when no clause is satisfiable (406); an empty header means legacy JSON.
 */
export function discoveryFormat(accept: string | undefined): 'v2' | 'legacy' | undefined {
  if (!accept || accept.trim() === '') return 'legacy';
  for (const r of parseAccept(accept)) {
    if (r.q <= 0 || !isJsonRange(r)) continue;
    const as = r.params.get('as');
    const g = r.params.get('g');
    const v = r.params.get('v');
    if (as === undefined && g === undefined && v === undefined) return 'legacy';
    if (as === 'APIGroupDiscoveryList' && g === 'apidiscovery.k8s.io' && v === 'v2') return 'v2';
  }
  return undefined;
}

/** OPENAPI_V2_PROTOBUF is the Content-Type of `/openapi/v2` in protobuf, whichever of its two spellings was asked for. */
export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

// What kube-openapi handler.go offers, in its order: JSON, then the protobuf spelling client-go sends (`@v1.0`,
// deprecated), then the current one.
const OPENAPI_V2_OFFERS: readonly OpenApiOffer<'json' | 'protobuf'>[] = [
  { type: 'application', subtype: 'json', format: 'json' },
  { type: 'application', subtype: 'com.github.proto-openapi.spec.v2@v1.0+protobuf', format: 'protobuf' },
  { type: 'application', subtype: 'com.github.proto-openapi.spec.v2.v1.0+protobuf', format: 'protobuf' },
];
// The v3 documents are served as JSON only (kube also offers protobuf there; no client we know needs it).
const OPENAPI_V3_OFFERS: readonly OpenApiOffer<'json'>[] = [{ type: 'application', subtype: 'json', format: 'json' }];

/** openApiV2Format is what `/openapi/v2` answers an Accept header with: JSON, protobuf, or undefined for 406. */
export const openApiV2Format = (accept: string | undefined) => negotiateOpenApi(accept, OPENAPI_V2_OFFERS);

/** ifNoneMatchHits tells whether an If-None-Match header matches a quoted ETag (weak comparison, `*`, lists). */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((raw) => {
    const tag = raw.trim();
    return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
  });
}

// Sending the pre-encoded Buffer keeps Content-Type exactly as set (fastify appends `; charset=utf-8` to string
// payloads with a JSON type) and avoids any re-serialization.
function sendDocument(reply: FastifyReply, doc: SerializedDocument, contentType = 'application/json'): FastifyReply {
  return reply.type(contentType).send(doc.body);
}

// ETag + If-None-Match → 304, else the document.
function sendCached(reply: FastifyReply, ifNoneMatch: string | undefined, doc: SerializedDocument, contentType?: string): FastifyReply {
  reply.header('etag', doc.etag);
  if (ifNoneMatchHits(ifNoneMatch, doc.etag)) return reply.code(304).send();
  return sendDocument(reply, doc, contentType);
}

const single = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);

const DISCOVERY_TYPES = ['application/json', DISCOVERY_V2_CONTENT_TYPE];

/** registerDiscoveryRoutes installs the discovery, version and OpenAPI routes for the given kinds. */
export function registerDiscoveryRoutes(app: FastifyInstance, kinds: readonly ResourceDefinition[]): void {
  const legacyList = serializeDocument(apiGroupList(kinds));
  const aggregated = serializeDocument(aggregatedDiscovery(kinds));
  const version = serializeDocument(versionInfo());
  const swaggerDoc = openApiV2(kinds);
  const swagger = serializeDocument(swaggerDoc);
  // Same ETag as the JSON: kube-openapi derives it from the JSON bytes for both representations. Encoded on first
  // use (protobufjs and the gnostic schema cost about 165 ms of a cold start that few clients need).
  let swaggerPb: Promise<SerializedDocument> | undefined;
  const protobufSwagger = () => (swaggerPb ??= import('./openapi-v2-proto.js').then((m) => ({ ...swagger, body: m.encodeOpenApiV2(swaggerDoc) })));
  const groups = new Map<string, SerializedDocument>();
  const resourceLists = new Map<string, SerializedDocument>();
  const v3Docs = new Map<string, SerializedDocument>();
  for (const { group, version: v } of groupVersions(kinds)) {
    if (!groups.has(group)) groups.set(group, serializeDocument(apiGroup(kinds, group)));
    resourceLists.set(`${group}/${v}`, serializeDocument(apiResourceList(kinds, group, v)));
    v3Docs.set(openApiV3Path(group, v), serializeDocument(openApiV3GroupVersion(kinds, group, v)));
  }
  const v3Hashes = new Map([...v3Docs].map(([key, doc]) => [key, doc.hash]));
  const v3Index = serializeDocument(openApiV3Discovery(kinds, v3Hashes));

  app.get('/apis', async (req, reply) => {
    // The representation depends on Accept, so caches must key on it.
    reply.header('vary', 'Accept');
    const format = discoveryFormat(req.headers.accept);
    if (format === undefined) throw notAcceptable(DISCOVERY_TYPES);
    if (format === 'legacy') return sendDocument(reply, legacyList);
    // What aggregated/etag.go sets: the aggregator re-polls every minute with If-None-Match.
    reply.header('cache-control', 'public');
    return sendCached(reply, req.headers['if-none-match'], aggregated, DISCOVERY_V2_CONTENT_TYPE);
  });

  app.get<{ Params: { group: string } }>('/apis/:group', async (req, reply) => {
    const doc = groups.get(req.params.group);
    if (!doc) throw notFoundPath();
    return sendDocument(reply, doc);
  });

  app.get<{ Params: { group: string; version: string } }>('/apis/:group/:version', async (req, reply) => {
    const doc = resourceLists.get(`${req.params.group}/${req.params.version}`);
    if (!doc) throw notFoundPath();
    return sendDocument(reply, doc);
  });

  app.get('/version', async (_req, reply) => sendDocument(reply, version));

  app.get('/openapi/v2', async (req, reply) => {
    reply.header('vary', 'Accept');
    const format = openApiV2Format(req.headers.accept);
    if (format === undefined) return reply.code(406).send();
    if (format === 'protobuf') return sendCached(reply, req.headers['if-none-match'], await protobufSwagger(), OPENAPI_V2_PROTOBUF);
    return sendCached(reply, req.headers['if-none-match'], swagger);
  });

  app.get('/openapi/v3', async (req, reply) => sendCached(reply, req.headers['if-none-match'], v3Index));

  app.get<{ Params: { group: string; version: string }; Querystring: { hash?: string | string[] } }>('/openapi/v3/apis/:group/:version', async (req, reply) => {
    const { group, version: v } = req.params;
    const doc = v3Docs.get(openApiV3Path(group, v));
    if (!doc) throw notFoundPath();
    reply.header('vary', 'Accept');
    if (negotiateOpenApi(req.headers.accept, OPENAPI_V3_OFFERS) === undefined) return reply.code(406).send();
    reply.header('etag', doc.etag);
    const hash = single(req.query.hash);
    if (hash) {
      // A stale hash (e.g. kubectl's disk cache after an upgrade) is redirected to the current immutable URL.
      if (hash !== doc.hash)
        return reply
          .code(301)
          .header('location', openApiV3URL(group, v, doc.hash))
          .send();
      const expires = new Date();
      expires.setUTCFullYear(expires.getUTCFullYear() + 1);
      reply.header('cache-control', 'public, immutable');
      reply.header('expires', expires.toUTCString());
    }
    if (ifNoneMatchHits(req.headers['if-none-match'], doc.etag)) return reply.code(304).send();
    return sendDocument(reply, doc);
  });
}
