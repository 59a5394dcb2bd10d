/**
 * @module endpoints/resource-routes
 * Registers every route of one kind, generated from its ResourceStore (installer.go registerResourceHandlers).
 * Each handler is: parse options → negotiate the response → one store call → reply (a 406 never follows a write).
 * Unsupported methods answer 405.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { methodNotSupported, notFound, notFoundPath, unsupportedMediaType } from '../apis/meta/errors.js';
import type { ResourceStore, Subresource } from '../registry/store.js';
import { APPLY_PATCH_TYPE, SUPPORTED_PATCH_TYPES, type PatchType } from '../registry/patch.js';
import type { IncludeObject } from '../registry/table.js';
import { negotiate, negotiateWatch, type Target } from './negotiation.js';
import { answerInYaml, installResponseEncoding } from './response-encoding.js';
import {
  checkResourceVersion, isDryRun, parseDeleteOptions, parseGetOptions, parseListOptions, parseTableOptions, parseWriteOptions,
  requestQuery, type ListOptions, type Query,
} from './query.js';
import { encodedList, transformList, transformObject } from './transform.js';
import { keepRawBody, rawBodyOf } from './raw-body.js';
import { readListPage } from './list-page.js';
import { TableRows } from './table-rows.js';
import { sendWarnings, warningBytes } from './warning-header.js';
import { serveWatch, type WatchRegistry } from './watch.js';
import { authorizeUnsafeDelete, logSkippedUnreadable, markUnsafeDelete } from './unsafe-delete.js';
import { serveWatchWebSocket, webSocketUpgrade } from './watch-websocket.js';

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Query }>;

const mediaType = (req: FastifyRequest) => (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** isApplyPatch tells a server-side apply request (store.apply, applyScale): the object, /status and /scale take it. */
const isApplyPatch = (req: FastifyRequest) => mediaType(req) === APPLY_PATCH_TYPE;

// patchType returns the patch type of a non-apply PATCH, or 415 listing what every endpoint accepts (CRDs give
// /status and /scale the same list as the object: customresource_handler.go serveStatus, serveScale).
function patchType(req: FastifyRequest): Exclude<PatchType, typeof APPLY_PATCH_TYPE> {
  const ct = mediaType(req);
  // negotiation.NewUnsupportedMediaTypeError: a Status with the accepted list and no details.
  if (!(SUPPORTED_PATCH_TYPES as readonly string[]).includes(ct) || ct === APPLY_PATCH_TYPE) throw unsupportedMediaType(SUPPORTED_PATCH_TYPES);
  return ct as Exclude<PatchType, typeof APPLY_PATCH_TYPE>;
}

// negotiated negotiates the answer and records the format it goes out in (response-encoding.ts converts it).
function negotiated(req: FastifyRequest, single: boolean): Target {
  const target = negotiate(req.headers.accept, single);
  if (target.yaml) answerInYaml(req);
  return target;
}

// representation adds the Table options (`includeObject`, `-` for noHeaders) to a target, read only for a Table
// (handlers/response.go optionsForTransform).
function representation(req: Req, target: Target): { target: Target; includeObject: IncludeObject; noHeaders: boolean } {
  return { target, ...(target.kind === 'Table' ? parseTableOptions(requestQuery(req)) : { includeObject: 'Metadata', noHeaders: false }) };
}

/** registerResourceRoutes installs collection, item and subresource routes for one kind. */
export function registerResourceRoutes(app: FastifyInstance, store: ResourceStore, watches: WatchRegistry): void {
  const def = store.def;
  const selectable = (def.selectableFields ?? []).map((f) => f.field);
  warningBytes(app);
  installResponseEncoding(app);
  const base = `/apis/${def.group}/${def.version}`;
  const tableRows = new TableRows(def);
  // What hooks and body parsers read of a route: the resource it serves, in which version.
  const routeConfig = { resource: def.plural, group: def.group, version: def.version };
  // A deprecated version warns on every request to it, before any other warning (customresource_handler.go).
  const deprecationWarning = def.deprecationWarning;
  const deprecation = deprecationWarning
    ? { onRequest: (_req: FastifyRequest, reply: FastifyReply, done: () => void) => { sendWarnings(reply, [deprecationWarning]); done(); } }
    : {};
  const nsBase = def.namespaced ? `${base}/namespaces/:namespace/${def.plural}` : `${base}/${def.plural}`;
  // `.` and `..` are not path segment names (IsValidPathSegmentName): such a URL names no namespace, so no resource.
  const ns = (req: Req) => {
    if (!def.namespaced) return undefined;
    const namespace = req.params['namespace'];
    if (namespace === '.' || namespace === '..') throw notFoundPath();
    return namespace;
  };

  // Objects stored by builds that did not decode metadata as a typed ObjectMeta are repaired once serving starts, so
  // no Go client (a metadata informer of the garbage collector, say) meets one for longer than the scan takes.
  let closing = false;
  app.addHook('onClose', async () => {
    closing = true;
  });
  // One pass per kind: the storage version's store makes it (the objects are the same in every version).
  if (def.storageVersion === undefined || def.storageVersion === def.version) app.addHook('onReady', async () => {
    const log = app.log.child({ resource: store.gr.resource });
    store.repairStoredMetadata(
      (r) => log.warn({ namespace: r.namespace, name: r.name, dropped: r.dropped }, 'repaired stored metadata a Go client could not decode: dropped its malformed fields'),
      () => closing,
      // An object that does not decode at all is named once and passed over; the repair goes on past it.
      (o) => logSkippedUnreadable(log, 'checking stored metadata', `${def.group}/${def.version}`, o),
    ).then((done) => {
      if (done.repaired > 0) log.warn(done, 'repaired stored objects whose metadata a Go client could not decode');
    }, (err: unknown) => {
      if (!closing) log.error({ err }, 'checking stored metadata failed');
    });
  });

  // list serves a list or a watch; the representation is settled before anything is read.
  const list = async (req: Req, opts: ListOptions, reply: FastifyReply, namespace: string | undefined) => {
    checkResourceVersion(opts.resourceVersion);
    if (opts.watch) {
      const { target, includeObject } = representation(req, negotiateWatch(req.headers.accept));
      reply.hijack();
      const w = { store, namespace, opts, target, includeObject, registry: watches };
      // A WebSocket request is upgraded, any other gets the chunked stream (handlers/watch.go serveWatchHandler).
      const upgrade = webSocketUpgrade(req.raw);
      await (upgrade ? serveWatchWebSocket(upgrade, reply.raw, w) : serveWatch(reply.raw, w));
      return reply;
    }
    const { target, includeObject, noHeaders } = representation(req, negotiated(req, false));
    // A full list is the stored objects as they are: their stored JSON text is sent without decoding it. A Table
    // is built from that text too, with rows remembered per stored version (table-rows.ts).
    const { items, encoded, meta } = await readListPage(store, namespace, opts, target.kind === 'Object' || target.kind === 'Table');
    if (encoded && target.kind === 'Table') {
      const tableOpts = { version: target.version, includeObject, noHeaders };
      return reply.type('application/json').send(tableRows.table(encoded, meta, tableOpts));
    }
    if (encoded) return reply.type('application/json').send(encodedList(def, meta, encoded));
    return transformList(def, items, meta, target, includeObject, noHeaders);
  };

  // DeleteOptions and a Scale are decoded from their bytes, as Go does (raw-body.ts).
  const typedBody = keepRawBody((req) => req.method === 'DELETE' || (req.method === 'PUT' && req.url.split('?')[0]?.endsWith('/scale') === true));

  // Collection: list/watch, create, deletecollection.
  app.route<{ Params: Record<string, string>; Querystring: Query }>({
    method: [...ALL_METHODS],
    config: routeConfig,
    ...deprecation,
    url: nsBase,
    preParsing: typedBody,
    handler: async (req, reply) => {
      switch (req.method) {
        case 'GET':
          return list(req, parseListOptions(requestQuery(req), def.namespaced, selectable), reply, ns(req));
        case 'POST': {
          const opts = parseWriteOptions(requestQuery(req), 'CreateOptions', req.headers['user-agent']);
          const target = negotiated(req, true);
          const { object, warnings } = await store.create(ns(req), req.body, opts);
          sendWarnings(reply, warnings);
          reply.code(201);
          return transformObject(def, object, target, 'Metadata');
        }
        case 'DELETE': {
          const lo = parseListOptions(requestQuery(req), def.namespaced, selectable);
          const o = parseDeleteOptions(req.body, requestQuery(req), rawBodyOf(req));
          // Negotiated before deleting: a 406 must leave everything in place.
          const target = negotiated(req, false);
          // The collection is read with the request's ListOptions, as a list would be (a bad resourceVersion or
          // continue token fails before anything is deleted); later pages follow the token alone.
          const page = async (token: string | undefined) => {
            if (token === undefined) checkResourceVersion(lo.resourceVersion);
            const opts = token === undefined ? lo : { ...lo, continueToken: token, resourceVersion: undefined, resourceVersionMatch: undefined };
            return readListPage(store, ns(req), opts);
          };
          const r = await store.deleteCollection(o, isDryRun(o), lo.limit !== undefined, page);
          return transformList(def, r.items, r.meta, target, 'Metadata');
        }
        default:
          throw methodNotSupported(store.gr, req.method.toLowerCase());
      }
    },
  });

  // All namespaces: list and watch only.
  if (def.namespaced) {
    app.route<{ Params: Record<string, string>; Querystring: Query }>({
      method: [...ALL_METHODS],
      config: routeConfig,
    ...deprecation,
      url: `${base}/${def.plural}`,
      handler: async (req, reply) => {
        if (req.method !== 'GET') throw methodNotSupported(store.gr, req.method === 'POST' ? 'create' : req.method.toLowerCase());
        return list(req, parseListOptions(requestQuery(req), def.namespaced, selectable), reply, undefined);
      },
    });
  }

  // One object: get, update, patch, delete.
  app.route<{ Params: Record<string, string>; Querystring: Query }>({
    method: [...ALL_METHODS],
    config: routeConfig,
    ...deprecation,
    url: `${nsBase}/:name`,
    preParsing: typedBody,
    handler: async (req, reply) => {
      const name = req.params['name'] ?? '';
      // A GET with a name is a get whatever its query says (`?watch=true` included): RequestInfoFactory makes it
      // verb get, and a CRD serves verb get with GetResource (customresource_handler.go serveResource). One object
      // is watched with fieldSelector=metadata.name=<name> on the collection.
      if (req.method === 'POST') throw methodNotSupported(store.gr, 'post');
      // Negotiated before any write: a 406 must leave the object as it was.
      const target = negotiated(req, true);
      switch (req.method) {
        case 'GET': {
          parseGetOptions(requestQuery(req));
          const { includeObject, noHeaders } = representation(req, target);
          return transformObject(def, await store.get(ns(req), name), target, includeObject, noHeaders);
        }
        case 'PUT': {
          const opts = parseWriteOptions(requestQuery(req), 'UpdateOptions', req.headers['user-agent']);
          const { object, warnings } = await store.update(ns(req), name, req.body, 'main', opts);
          sendWarnings(reply, warnings);
          return transformObject(def, object, target, 'Metadata');
        }
        case 'PATCH': {
          if (isApplyPatch(req)) {
            const opts = parseWriteOptions(requestQuery(req), 'PatchOptions', req.headers['user-agent'], true);
            const { object, warnings, created } = await store.apply(ns(req), name, req.body, opts);
            sendWarnings(reply, warnings);
            reply.code(created ? 201 : 200);
            return transformObject(def, object, target, 'Metadata');
          }
          const type = patchType(req);
          const opts = parseWriteOptions(requestQuery(req), 'PatchOptions', req.headers['user-agent']);
          const { object, warnings } = await store.patch(ns(req), name, type, req.body, 'main', opts);
          sendWarnings(reply, warnings);
          return transformObject(def, object, target, 'Metadata');
        }
        case 'DELETE': {
          const o = parseDeleteOptions(req.body, requestQuery(req), rawBodyOf(req));
          const unsafe = o.ignoreStoreReadErrorWithClusterBreakingPotential === true;
          if (unsafe) {
            // Valid options first, then kube's audit annotation and the extra verb, before anything is read
            // (handlers/delete.go).
            store.validateDeleteOptions(o);
            markUnsafeDelete(req);
            await authorizeUnsafeDelete(req, store.gr, name);
          }
          const r = await store.delete(ns(req), name, o, isDryRun(o));
          if (unsafe && !isDryRun(o)) {
            req.log.warn({ resource: store.gr.resource, namespace: ns(req), name, user: req.user?.name }, 'deleted an object whose stored data did not decode (ignoreStoreReadErrorWithClusterBreakingPotential)');
          }
          reply.code(r.code);
          const body = r.body as { kind?: string };
          return body.kind === 'Status' ? r.body : transformObject(def, r.body as never, target, 'Metadata');
        }
        default:
          throw methodNotSupported(store.gr, req.method.toLowerCase());
      }
    },
  });

  // Subresources: status and scale.
  app.route<{ Params: Record<string, string>; Querystring: Query }>({
    method: [...ALL_METHODS],
    config: routeConfig,
    ...deprecation,
    url: `${nsBase}/:name/:subresource`,
    preParsing: typedBody,
    handler: async (req, reply) => {
      const name = req.params['name'] ?? '';
      const sub = req.params['subresource'];
      const known = (sub === 'status' && def.subresources.status) || (sub === 'scale' && def.subresources.scale);
      if (!known) throw notFound(store.gr, name);
      if (req.method !== 'GET' && req.method !== 'PUT' && req.method !== 'PATCH') throw methodNotSupported(store.gr, req.method.toLowerCase());
      const q = requestQuery(req);
      const ua = req.headers['user-agent'];
      if (req.method === 'GET') parseGetOptions(q);
      // Server-side apply on /status and /scale as on the object (handlers/patch.go applyPatcher with the
      // subresource's field manager); the patch type is checked before the options (arguments run in order).
      const apply = req.method === 'PATCH' && isApplyPatch(req);
      const writeOpts = () => (req.method === 'PUT' ? parseWriteOptions(q, 'UpdateOptions', ua) : parseWriteOptions(q, 'PatchOptions', ua, apply));
      if (sub === 'scale') {
        // A Scale is answered as itself, in JSON or YAML as negotiated.
        negotiated(req, true);
        if (req.method === 'GET') return store.getScale(ns(req), name);
        if (apply) return store.applyScale(ns(req), name, req.body, writeOpts());
        const scaled = req.method === 'PUT'
          ? await store.updateScale(ns(req), name, req.body, writeOpts(), rawBodyOf(req))
          : await store.patchScale(ns(req), name, patchType(req), req.body, writeOpts());
        sendWarnings(reply, scaled.warnings);
        return scaled.object;
      }
      const target = negotiated(req, true);
      if (req.method === 'GET') return transformObject(def, await store.get(ns(req), name), target, 'Metadata');
      const status: Subresource = 'status';
      const res = req.method === 'PUT'
        ? await store.update(ns(req), name, req.body, status, writeOpts())
        : apply
          ? await store.apply(ns(req), name, req.body, writeOpts(), status)
          : await store.patch(ns(req), name, patchType(req), req.body, status, writeOpts());
      sendWarnings(reply, res.warnings);
      return transformObject(def, res.object, target, 'Metadata');
    },
  });
}
