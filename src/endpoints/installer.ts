/**
 * @module endpoints/installer
 * Installs the routes of the REST map (k8s.io/apiserver endpoints/installer.go registerResourceHandlers): one
 * fastify plugin per group/version, and for each resource path the verbs its store offers, chosen by what the
 * store can do (a Getter gets GET, an Updater PUT, a Patcher PATCH, ...). The handlers are in handlers/.
 *
 *   <plural>                         GET list/watch, POST create, DELETE deletecollection (in a namespace when namespaced)
 *   <plural> across all namespaces   GET list/watch (namespaced kinds)
 *   <plural>/<name>                  GET, PUT, PATCH, DELETE
 *   <plural>/<name>/status|scale     GET, PUT, PATCH (when the kind has them)
 *   <plural>/<name>/<other>          404
 *
 * A method a path does not serve answers 405 naming its verb; on an object the answer is negotiated first (a POST
 * excepted), as it always has been. A deprecated version warns on every request to it, before any other warning.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { methodNotSupported, notFound, notFoundPath, type StatusError } from '../apis/meta/errors.js';
import type { GroupVersionResources, RestMap, RestStorage } from '../registry/rest-map.js';
import type { ResourceDefinition } from '../registry/resource.js';
import { ScaleStore } from '../registry/scale-store.js';
import type { ResourceStore } from '../registry/store.js';
import { create } from './handlers/create.js';
import { deleteCollection } from './handlers/delete-collection.js';
import { deleteObject } from './handlers/delete.js';
import { getObject, getSubresource } from './handlers/get.js';
import { list } from './handlers/list.js';
import { patch } from './handlers/patch.js';
import { asIs, negotiated, transformed, type Call, type Handler, type Req } from './handlers/request.js';
import { update } from './handlers/update.js';
import type { Query } from './query.js';
import { keepRawBody } from './raw-body.js';
import { installResponseEncoding } from './response-encoding.js';
import { sendWarnings, warningBytes } from './warning-header.js';
import type { WatchRegistry } from './watch.js';
import type { WriteFreeze } from './write-freeze.js';

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Verbs maps the methods a path serves to their handlers. */
type Verbs = Partial<Record<(typeof ALL_METHODS)[number], Handler>>;

/**
 * installRestMap installs every resource of `map`, one plugin per group/version. A write to a resource `freeze` holds
 * is refused with a 429 its client retries (write-freeze.ts), after authorization and before anything else.
 */
export function installRestMap(app: FastifyInstance, map: RestMap, watches: WatchRegistry, freeze?: WriteFreeze): void {
  for (const gv of map.groupVersions) void app.register(async (scope) => installGroupVersion(scope, gv, watches, freeze));
}

/** installGroupVersion installs the routes of one group/version's resources. */
export function installGroupVersion(app: FastifyInstance, gv: GroupVersionResources, watches: WatchRegistry, freeze?: WriteFreeze): void {
  warningBytes(app);
  installResponseEncoding(app);
  if (freeze) {
    app.addHook('preHandler', async (req) => {
      const { resource, group } = req.routeOptions.config as { resource?: string; group?: string };
      if (req.method !== 'GET' && resource !== undefined && group !== undefined) freeze.check(group, resource);
    });
  }
  for (const [path, rest] of gv.resources) {
    const [, sub] = path.split('/');
    if (sub === undefined) {
      if ('list' in rest) installObject(app, rest, watches);
    } else installSubresource(app, rest, sub);
  }
}

// What a store can do, as installer.go asks of rest.Storage (storage.(rest.Getter) and so on).
const canGet = (s: RestStorage) => typeof s.get === 'function';
const canUpdate = (s: RestStorage) => 'update' in s && typeof s.update === 'function';
const canPatch = (s: RestStorage) => 'patch' in s && 'apply' in s;
const canDelete = (s: RestStorage) => 'delete' in s && typeof s.delete === 'function';
const canList = (s: RestStorage) => 'list' in s && 'watch' in s;
const canCreate = (s: RestStorage) => 'create' in s && typeof s.create === 'function';
const canDeleteCollection = (s: RestStorage) => 'deleteCollection' in s && typeof s.deleteCollection === 'function';

/** installObject installs a kind's collection, all-namespaces, object and unknown-subresource routes. */
function installObject(app: FastifyInstance, store: ResourceStore, watches: WatchRegistry): void {
  const { def, gr } = store;
  const base = routeBase(def);
  const collection = collectionPath(def);
  const lister = canList(store) ? list(store, watches) : undefined;
  const collectionVerbs: Verbs = {};
  if (lister) collectionVerbs.GET = lister;
  if (canCreate(store)) collectionVerbs.POST = create(store);
  if (canDeleteCollection(store)) collectionVerbs.DELETE = deleteCollection(store);
  route(app, { ...base, url: collection, preParsing: typedBody }, def, false, collectionVerbs, (req) => methodNotSupported(gr, req.method.toLowerCase()));
  // All namespaces: list and watch only.
  if (def.namespaced) {
    route(app, { ...base, url: `/apis/${def.group}/${def.version}/${def.plural}` }, def, false, lister ? { GET: lister } : {}, (req) =>
      methodNotSupported(gr, req.method === 'POST' ? 'create' : req.method.toLowerCase()),
    );
  }
  const verbs: Verbs = {};
  if (canGet(store)) verbs.GET = getObject(store);
  if (canUpdate(store)) verbs.PUT = update(store, transformed(def));
  if (canPatch(store)) verbs.PATCH = patch(store, transformed(def));
  if (canDelete(store)) verbs.DELETE = deleteObject(store);
  // An object is never POSTed to (405 at once); any other method it does not serve is refused once negotiated.
  route(app, { ...base, url: `${collection}/:name`, preParsing: typedBody }, def, false, verbs, (req, call) => {
    if (req.method !== 'POST') call.negotiate(true);
    return methodNotSupported(gr, req.method.toLowerCase());
  });
  // A subresource the kind does not have (its own are installed beside, as static paths) is not found.
  app.route<{ Params: Record<string, string>; Querystring: Query }>({
    ...base,
    method: [...ALL_METHODS],
    url: `${collection}/:name/:subresource`,
    preParsing: typedBody,
    handler: async (req) => {
      throw notFound(gr, req.params['name'] ?? '');
    },
  });
}

/** installSubresource installs /status or /scale: GET, PUT and PATCH as its store offers them, anything else 405. */
function installSubresource(app: FastifyInstance, rest: RestStorage, sub: string): void {
  const { def, gr } = rest;
  // A Scale is answered as itself; /status answers the object.
  const answer = rest instanceof ScaleStore ? asIs : transformed(def);
  const verbs: Verbs = {};
  if (canGet(rest)) verbs.GET = getSubresource(rest, answer);
  if (canUpdate(rest)) verbs.PUT = update(rest, answer);
  if (canPatch(rest)) verbs.PATCH = patch(rest, answer);
  route(app, { ...routeBase(def), url: `${collectionPath(def)}/:name/${sub}`, preParsing: typedBody }, def, true, verbs, (req) =>
    methodNotSupported(gr, req.method.toLowerCase()),
  );
}

type RouteBase = ReturnType<typeof routeBase> & { url: string; preParsing?: typeof typedBody };

/**
 * route installs one path for every method: the ones in `verbs` go to their handler, the others get `refuse`'s
 * answer. `subresource`: the namespace is checked as soon as the answer is negotiated (these routes' order).
 */
function route(
  app: FastifyInstance,
  base: RouteBase,
  def: ResourceDefinition,
  subresource: boolean,
  verbs: Verbs,
  refuse: (req: Req, call: Call) => StatusError,
): void {
  app.route<{ Params: Record<string, string>; Querystring: Query }>({
    ...base,
    method: [...ALL_METHODS],
    handler: async (req, reply) => {
      const call = callOf(req, def, subresource);
      const handler = verbs[req.method as keyof Verbs];
      if (!handler) throw refuse(req, call);
      return handler(req, reply, call);
    },
  });
}

// callOf is the request's Call: its name, its namespace (read when asked), and the negotiation of its answer.
function callOf(req: Req, def: ResourceDefinition, subresource: boolean): Call {
  const namespace = () => {
    if (!def.namespaced) return undefined;
    const ns = req.params['namespace'];
    if (ns === '.' || ns === '..') throw notFoundPath();
    return ns;
  };
  return {
    name: req.params['name'] ?? '',
    namespace,
    negotiate(single) {
      const target = negotiated(req, single);
      if (subresource) namespace();
      return target;
    },
  };
}

// routeBase is what every route of a version shares: what hooks and body parsers read of a route (the resource it
// serves, in which version), and the deprecated version's Warning (customresource_handler.go).
function routeBase(def: ResourceDefinition) {
  const warning = def.deprecationWarning;
  const deprecation = warning
    ? {
        onRequest: (_req: FastifyRequest, reply: FastifyReply, done: () => void) => {
          sendWarnings(reply, [warning]);
          done();
        },
      }
    : {};
  return { config: { resource: def.plural, group: def.group, version: def.version }, ...deprecation };
}

// collectionPath is a kind's collection path, with the namespace as a parameter when namespaced.
function collectionPath(def: ResourceDefinition): string {
  const base = `/apis/${def.group}/${def.version}`;
  return def.namespaced ? `${base}/namespaces/:namespace/${def.plural}` : `${base}/${def.plural}`;
}

// DeleteOptions and a Scale are decoded from their bytes, as Go does (raw-body.ts).
const typedBody = keepRawBody((req) => req.method === 'DELETE' || (req.method === 'PUT' && req.url.split('?')[0]?.endsWith('/scale') === true));
