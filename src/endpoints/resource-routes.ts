/**
 * @module endpoints/resource-routes
 * Registers every route of one kind, generated from its ResourceStore (installer.go registerResourceHandlers).
 * Each handler is: parse options → negotiate the response → one store call → reply (a 406 never follows a write).
 * Unsupported methods answer 405.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, methodNotSupported, notFound, unsupportedMediaType } from '../apis/meta/errors.js';
import { escapeFieldValue, parseFieldSelector } from '../apis/meta/fields.js';
import type { ResourceStore, Subresource } from '../registry/store.js';
import { APPLY_PATCH_TYPE, SUPPORTED_PATCH_TYPES, type PatchType } from '../registry/patch.js';
import type { IncludeObject } from '../registry/table.js';
import { negotiate, negotiateWatch, type Target } from './negotiation.js';
import { isDryRun, parseDeleteOptions, parseListOptions, parseWriteOptions, type ListOptions, type Query } from './query.js';
import { encodedList, transformList, transformObject, parseIncludeObject } from './transform.js';
import { readListPage } from './list-page.js';
import { TableRows } from './table-rows.js';
import { serveWatch, type WatchRegistry } from './watch.js';

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Query }>;

/** sendWarnings adds `Warning: 299 - "…"` headers, as kube-apiserver does for unknown fields under fieldValidation=Warn. */
function sendWarnings(reply: FastifyReply, warnings: string[]): void {
  if (warnings.length) reply.header('warning', warnings.map((w) => `299 - ${JSON.stringify(w)}`));
}

const mediaType = (req: FastifyRequest) => (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** isApplyPatch tells a server-side apply request (handled by store.apply, main resource only). */
const isApplyPatch = (req: FastifyRequest) => mediaType(req) === APPLY_PATCH_TYPE;

// patchType returns the patch type of a non-apply PATCH, or 415 listing what this endpoint accepts.
function patchType(req: FastifyRequest, allowApply = true): Exclude<PatchType, typeof APPLY_PATCH_TYPE> {
  const ct = mediaType(req);
  const accepted = allowApply ? SUPPORTED_PATCH_TYPES : SUPPORTED_PATCH_TYPES.filter((t) => t !== APPLY_PATCH_TYPE);
  if (!(accepted as readonly string[]).includes(ct) || ct === APPLY_PATCH_TYPE) throw unsupportedMediaType(ct, [...accepted]);
  return ct as Exclude<PatchType, typeof APPLY_PATCH_TYPE>;
}

// representation adds the Table `includeObject` option (only Tables have rows that embed objects) to a target.
function representation(req: Req, target: Target): { target: Target; includeObject: IncludeObject } {
  return { target, includeObject: target.kind === 'Table' ? parseIncludeObject(req.query) : 'Metadata' };
}

/** registerResourceRoutes installs collection, item and subresource routes for one kind. */
export function registerResourceRoutes(app: FastifyInstance, store: ResourceStore, watches: WatchRegistry): void {
  const def = store.def;
  const base = `/apis/${def.group}/${def.version}`;
  const tableRows = new TableRows(def);
  const nsBase = def.namespaced ? `${base}/namespaces/:namespace/${def.plural}` : `${base}/${def.plural}`;
  const ns = (req: Req) => (def.namespaced ? req.params['namespace'] : undefined);

  // list serves a list or a watch; the representation is settled before anything is read.
  const list = async (req: Req, opts: ListOptions, reply: FastifyReply, namespace: string | undefined) => {
    if (opts.watch) {
      const { target, includeObject } = representation(req, negotiateWatch(req.headers.accept));
      reply.hijack();
      await serveWatch(reply.raw, { store, namespace, opts, target, includeObject, registry: watches });
      return reply;
    }
    const { target, includeObject } = representation(req, negotiate(req.headers.accept, false));
    // A full list is the stored objects as they are: their stored JSON text is sent without decoding it. A Table
    // is built from that text too, with rows remembered per stored version (table-rows.ts).
    const { items, encoded, meta } = await readListPage(store, namespace, opts, target.kind === 'Object' || target.kind === 'Table');
    if (encoded && target.kind === 'Table') return reply.type('application/json').send(tableRows.table(encoded, meta, { version: target.version, includeObject }));
    if (encoded) return reply.type('application/json').send(encodedList(def, meta, encoded));
    return transformList(def, items, meta, target, includeObject);
  };

  // Collection: list/watch, create, deletecollection.
  app.route<{ Params: Record<string, string>; Querystring: Query }>({
    method: [...ALL_METHODS],
    config: { resource: def.plural },
    url: nsBase,
    handler: async (req, reply) => {
      switch (req.method) {
        case 'GET':
          return list(req, parseListOptions(req.query), reply, ns(req));
        case 'POST': {
          const opts = parseWriteOptions(req.query, 'CreateOptions', req.headers['user-agent']);
          const target = negotiate(req.headers.accept, true);
          const { object, warnings } = await store.create(ns(req), req.body, opts);
          sendWarnings(reply, warnings);
          reply.code(201);
          return transformObject(def, object, target, 'Metadata');
        }
        case 'DELETE': {
          const lo = parseListOptions(req.query);
          const o = parseDeleteOptions(req.body, req.query);
          // Negotiated before deleting: a 406 must leave everything in place.
          const target = negotiate(req.headers.accept, false);
          const deleted = await store.deleteCollection(ns(req), { label: lo.label, field: lo.field }, o, isDryRun(o, 'DeleteOptions'));
          return transformList(def, deleted, { resourceVersion: String(store.currentRevision()) }, target, 'Metadata');
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
      config: { resource: def.plural },
      url: `${base}/${def.plural}`,
      handler: async (req, reply) => {
        if (req.method !== 'GET') throw methodNotSupported(store.gr, req.method === 'POST' ? 'create' : req.method.toLowerCase());
        return list(req, parseListOptions(req.query), reply, undefined);
      },
    });
  }

  // One object: get, update, patch, delete.
  app.route<{ Params: Record<string, string>; Querystring: Query }>({
    method: [...ALL_METHODS],
    config: { resource: def.plural },
    url: `${nsBase}/:name`,
    handler: async (req, reply) => {
      const name = req.params['name'] ?? '';
      const lo = req.method === 'GET' && req.query['watch'] !== undefined ? parseListOptions(req.query) : undefined;
      if (lo?.watch) {
        // A named GET-watch is a watch on metadata.name=<name>; a field selector given with it must require
        // exactly that name (get.go ListResource).
        if (!lo.field.empty && lo.field.exactName() !== name) throw badRequest("fieldSelector metadata.name doesn't match requested name");
        if (lo.field.empty) lo.field = parseFieldSelector(`metadata.name=${escapeFieldValue(name)}`);
        return list(req, lo, reply, ns(req));
      }
      if (req.method === 'POST') throw methodNotSupported(store.gr, 'post');
      // Negotiated before any write: a 406 must leave the object as it was.
      const target = negotiate(req.headers.accept, true);
      switch (req.method) {
        case 'GET': {
          const { includeObject } = representation(req, target);
          return transformObject(def, store.get(ns(req), name), target, includeObject);
        }
        case 'PUT': {
          const opts = parseWriteOptions(req.query, 'UpdateOptions', req.headers['user-agent']);
          const { object, warnings } = await store.update(ns(req), name, req.body, 'main', opts);
          sendWarnings(reply, warnings);
          return transformObject(def, object, target, 'Metadata');
        }
        case 'PATCH': {
          if (isApplyPatch(req)) {
            const opts = parseWriteOptions(req.query, 'PatchOptions', req.headers['user-agent'], true);
            const { object, warnings, created } = await store.apply(ns(req), name, req.body, opts);
            sendWarnings(reply, warnings);
            reply.code(created ? 201 : 200);
            return transformObject(def, object, target, 'Metadata');
          }
          const type = patchType(req);
          const opts = parseWriteOptions(req.query, 'PatchOptions', req.headers['user-agent']);
          const { object, warnings } = await store.patch(ns(req), name, type, req.body, 'main', opts);
          sendWarnings(reply, warnings);
          return transformObject(def, object, target, 'Metadata');
        }
        case 'DELETE': {
          const o = parseDeleteOptions(req.body, req.query);
          const r = await store.delete(ns(req), name, o, isDryRun(o, 'DeleteOptions'));
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
    config: { resource: def.plural },
    url: `${nsBase}/:name/:subresource`,
    handler: async (req, reply) => {
      const name = req.params['name'] ?? '';
      const sub = req.params['subresource'];
      const known = (sub === 'status' && def.subresources.status) || (sub === 'scale' && def.subresources.scale);
      if (!known) throw notFound(store.gr, name);
      if (req.method !== 'GET' && req.method !== 'PUT' && req.method !== 'PATCH') throw methodNotSupported(store.gr, req.method.toLowerCase());
      if (sub === 'scale') {
        if (req.method === 'GET') return store.getScale(ns(req), name);
        if (req.method === 'PUT') return store.updateScale(ns(req), name, req.body, parseWriteOptions(req.query, 'UpdateOptions', req.headers['user-agent']));
        return store.patchScale(ns(req), name, patchType(req, false), req.body, parseWriteOptions(req.query, 'PatchOptions', req.headers['user-agent']));
      }
      const target = negotiate(req.headers.accept, true);
      if (req.method === 'GET') return transformObject(def, store.get(ns(req), name), target, 'Metadata');
      const status: Subresource = 'status';
      const res = req.method === 'PUT'
        ? await store.update(ns(req), name, req.body, status, parseWriteOptions(req.query, 'UpdateOptions', req.headers['user-agent']))
        : await store.patch(ns(req), name, patchType(req, false), req.body, status, parseWriteOptions(req.query, 'PatchOptions', req.headers['user-agent']));
      sendWarnings(reply, res.warnings);
      return transformObject(def, res.object, target, 'Metadata');
    },
  });
}
