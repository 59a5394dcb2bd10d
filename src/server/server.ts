/**
 * @module server/server
 * createServer assembles the HTTPS API server. The request path, in order:
 *   onRequest: audit ID (Audit-Id header) → Go's own request checks and the request deadline (client-errors.ts,
 *   timeouts.ts: 400/505, `?timeout=`, 504 past --request-timeout) → authentication (401 without a credential) → impersonation
 *   (Impersonate-* headers: 400/403) → authorization (403), health paths exempt from all three; each step reports to
 *   the Auditor (observability/audit.ts) as kube's filters report to the audit context →
 *   content-type parsing (JSON, merge/json patch, YAML, read by body-decoding.ts with kube's errors and a depth
 *   limit; 415 otherwise; 413 over 3 MiB) →
 *   route: discovery | OpenAPI | resource handlers, installed from the REST map (endpoints/installer.ts →
 *   endpoints/handlers → registry → storage → watch) →
 *   error handler: every failure becomes a metav1.Status.
 * Shutdown follows kube-apiserver's graceful termination (graceful-shutdown.ts), ahead of every hook above.
 */
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  badRequest,
  forbidden,
  internalError,
  notFoundPath,
  serviceUnavailable,
  StatusError,
  tooLarge,
  unauthorized,
  unsupportedMediaType,
} from '../apis/meta/errors.js';
import type { Authentication } from '../auth/authentication.js';
import { allowAuthenticated, forbiddenMessage, type Authorizer } from '../auth/authorizer.js';
import { Impersonation } from '../auth/impersonation.js';
import { requestAttributes, type RequestAttributes } from '../auth/request-info.js';
import type { UserInfo } from '../auth/user.js';
import { registerDiscoveryRoutes } from '../discovery/routes.js';
import { registerStandaloneCoreRoutes } from '../discovery/core-routes.js';
import { WatchRegistry, type WatchSettings } from '../endpoints/watch.js';
import { routeUpgrades } from '../endpoints/watch-websocket.js';
import { decodeJsonPatchBody } from '../registry/patch.js';
import { servedDefinitions, type KindDefinition, type ResourceDefinition } from '../registry/resource.js';
import type { CreateAdmission, ResourceStore } from '../registry/store.js';
import { buildRestMap, type RestMap } from '../registry/rest-map.js';
import { installRestMap } from '../endpoints/installer.js';
import { FREEZE_WEBHOOK_PATH, registerMigrationRoutes } from '../endpoints/migration-routes.js';
import { WriteFreeze } from '../endpoints/write-freeze.js';
import { sendWarnings } from '../endpoints/warning-header.js';
import { isStorageError } from '../storage/errors.js';
import { storageStatus } from '../registry/storage-status.js';
import type { Storage } from '../storage/interface.js';
import { GracefulShutdown, type ShutdownReport, type ShutdownSettings } from './graceful-shutdown.js';
import {
  clientErrorHandler,
  closeGently,
  frameworkErrors,
  httpParserOptions,
  installClientErrors,
  largeUnreadBody,
  unsupportedMethod,
} from './client-errors.js';
import { createDualServer, HTTP2_MAX_STREAMS } from './connections.js';
import { installHttp2ResponseHeaders } from './http2-response-headers.js';
import { liftHeaderCount } from './header-limits.js';
import { markConnections, resetUnreadBody } from '../util/http-connection.js';
import { DEFAULT_TIMEOUTS, installRequestTimeout, isTimeout, nodeTimeoutOptions, type TimeoutSettings } from './timeouts.js';
import { bodyRoleOf, checkJsonPatch, decodeJsonBody, decodeYamlBody, undecodedType, unsupportedBody } from './body-decoding.js';
import { BODY_MEDIA_TYPES, KUBE_MEDIA_TYPES } from '../endpoints/media-types.js';
import { registerHealthRoutes, type HealthCheck } from './health.js';
import { installRequestEnd, onRequestDone } from '../util/request-done.js';
import { createMetrics, registerMetrics } from '../observability/metrics.js';
import { hasStoreResources, registerStorageMetrics } from '../observability/storage-metrics.js';
import { Auditor } from '../observability/audit.js';

declare module 'fastify' {
  interface FastifyRequest {
    user: UserInfo | undefined;
    /** The request's kube attributes, set by the authorization hook (undefined on the health paths). */
    attributes: RequestAttributes | undefined;
  }
}

/** BODY_LIMIT is kube-apiserver's request body limit (3 MiB). */
export const BODY_LIMIT = 3 * 1024 * 1024;

/** TlsConfig is the serving key pair (the CAs client certificates may chain to come from the Authentication). */
export interface TlsConfig {
  key: string;
  cert: string;
}

/**
 * ALWAYS_ALLOW_PATHS are served without credentials: the health paths, as kube's delegated authz AlwaysAllowPaths,
 * and the freeze webhook kube-apiserver calls anonymously (it can only refuse; endpoints/migration-routes.ts).
 */
export const ALWAYS_ALLOW_PATHS = new Set(['/healthz', '/livez', '/readyz', FREEZE_WEBHOOK_PATH]);

/** ServerConfig is what createServer needs. */
export interface ServerConfig {
  /** Serve HTTPS with these; omit only in tests that use app.inject(). */
  tls?: TlsConfig;
  storage: Storage;
  /** The kinds to serve, each in every version it has. */
  kinds: readonly KindDefinition[];
  logger: Logger;
  authentication: Authentication;
  /** Defaults to allowing every authenticated user (standalone). */
  authorizer?: Authorizer;
  /** Extra /readyz checks (delegated settings loaded, namespace cache synced). */
  readiness?: HealthCheck[];
  /** Extra /livez checks (also on /readyz and /healthz): the storage needing a restart. */
  liveness?: HealthCheck[];
  /** Runs before anything is created (namespace lifecycle when delegated). */
  admission?: CreateAdmission;
  /** Bookmark interval and per-watcher buffer bound. */
  watch?: WatchSettings;
  /**
   * No cluster is configured: answer `/api`, `/api/v1` and namespace reads ourselves (kube-apiserver does otherwise),
   * and each kind's standaloneStatus stands in for the controllers that will not run.
   */
  standalone?: boolean;
  /** kube-apiserver's shutdown flags (delay, send-retry-after, watch grace period, ShutdownTimeout). */
  shutdown?: ShutdownSettings;
  /** Audit logging (--audit-policy-file, --audit-log-path); without it only the Audit-Id header is sent. */
  audit?: Auditor;
  /** --request-timeout, --read-header-timeout, --keep-alive-timeout (kube-apiserver's defaults when omitted). */
  timeouts?: Partial<TimeoutSettings>;
  /**
   * --enable-http2 (default on: HTTP/2 and HTTP/1.1 on the one port, connections.ts) and
   * --http2-max-streams-per-connection (0 or omitted: k8s.io/apiserver's 100).
   */
  http2?: { enabled?: boolean; maxStreamsPerConnection?: number };
}

/** ApiServer is the assembled server. */
export interface ApiServer {
  app: FastifyInstance;
  /** registry is the Prometheus registry /metrics serves (the controllers add theirs to it). */
  registry: Registry;
  /** restMap is every served resource and its store, built before any route (the routes are installed from it). */
  restMap: RestMap;
  /** storeOf is a served kind's store in its storage version (the one its controllers read and write). */
  storeOf(kind: KindDefinition): ResourceStore;
  /**
   * shutdown is kube-apiserver's graceful termination: /readyz fails, `preShutdown` runs during the shutdown delay,
   * then new requests are refused, watches end cleanly, requests begun are answered, and the storage is flushed.
   */
  shutdown(preShutdown?: () => Promise<void>): Promise<ShutdownReport>;
  /** setServingCertificate serves a new key pair to new connections (a renewed --self-managed-tls certificate). */
  setServingCertificate(key: string, cert: string): void;
}

/** createServer builds the fastify app with every route registered. */
export function createServer(cfg: ServerConfig): ApiServer {
  const timeouts: TimeoutSettings = { ...DEFAULT_TIMEOUTS, ...cfg.timeouts };
  const nodeTimeouts = nodeTimeoutOptions(timeouts);
  const opts: FastifyServerOptions & { https?: object } = {
    loggerInstance: cfg.logger,
    bodyLimit: BODY_LIMIT,
    // Per-request lines come from our own onResponse hook at debug level, not fastify's info-level pair.
    logController: new LogController({ disableRequestLogging: true }),
    // New requests during a shutdown get kube's answers from GracefulShutdown, not fastify's 503.
    return503OnClosing: false,
    // By the time close() runs GracefulShutdown has drained and ended every connection: drop any left.
    forceCloseConnections: true,
    // kube-apiserver bounds no path segment on its own (names go to 253 characters, percent-escaped up to three
    // times that); only the limit on the request line applies, so the router's 100-character default goes.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: Number.MAX_SAFE_INTEGER },
    // What Node and the router answer on their own becomes a Status (client-errors.ts); idle keep-alive and the
    // whole-request backstop as kube-apiserver's (timeouts.ts).
    clientErrorHandler,
    frameworkErrors,
    ...nodeTimeouts.fastify,
  };
  if (cfg.tls) {
    // Client certificates are asked for, never required: authentication decides (and /livez needs none).
    const tls = { key: cfg.tls.key, cert: cfg.tls.cert, ca: cfg.authentication.trustedCAs(), requestCert: true, rejectUnauthorized: false };
    if (cfg.http2?.enabled === false) {
      opts.https = { ...tls, ...httpParserOptions, ...nodeTimeouts.https };
    } else {
      // HTTP/2 and HTTP/1.1 on the one port (connections.ts), HTTP/1.1 as Node's HTTPS server would serve it.
      const h2tls = { ...tls, handshakeTimeout: nodeTimeouts.https['handshakeTimeout'] };
      const { headersTimeout = 0, requestTimeout = 0, connectionsCheckingInterval = 0 } = nodeTimeouts.https;
      const http1 = { ...httpParserOptions, headersTimeout, requestTimeout, connectionsCheckingInterval, keepAliveTimeout: timeouts.keepAliveTimeoutMs };
      const maxStreams = cfg.http2?.maxStreamsPerConnection || HTTP2_MAX_STREAMS;
      Object.assign(opts, {
        http2: true,
        https: h2tls,
        serverFactory: (handler: Parameters<typeof createDualServer>[3]) => createDualServer(h2tls, http1, maxStreams, handler),
      });
    }
  }
  const app = Fastify(opts) as unknown as FastifyInstance;
  markConnections(app.server);
  liftHeaderCount(app.server);
  const watches = new WatchRegistry(cfg.watch);
  // Upgrade requests (WebSocket watches) take the normal path through hooks and routes; only a watch upgrades.
  routeUpgrades(app);

  // First of the onRequest hooks: every request's end is reported (request-done.ts), refused ones included; then a
  // request refused during a shutdown runs nothing else.
  installRequestEnd(app);
  const graceful = new GracefulShutdown(app, watches, cfg.storage, cfg.logger, cfg.shutdown);
  // Audit-Id and the arrival time, before authentication (kube's WithAuditInit); events at each step below.
  const auditor = cfg.audit ?? new Auditor(undefined, undefined, cfg.logger);
  auditor.install(app);
  // Before authentication, as kube's WithRequestDeadline: Go's own checks (Host, version), then the request timeout.
  installClientErrors(app);
  installHttp2ResponseHeaders(app);
  installRequestTimeout(app, timeouts);
  app.decorateRequest('user', undefined);
  app.decorateRequest('attributes', undefined);
  app.decorateRequest('authorizeVerb', undefined);
  const authorizer = cfg.authorizer ?? allowAuthenticated;
  const impersonation = new Impersonation(authorizer);
  app.addHook('onRequest', async (req) => {
    if (ALWAYS_ALLOW_PATHS.has(req.url.split('?')[0] ?? '')) return auditor.unauthenticatedPath(req);
    const requestor = await cfg.authentication.authenticate(req);
    if (!requestor) {
      auditor.failedAuthentication(req);
      throw unauthorized();
    }
    const attrs = requestAttributes(req.method, req.url);
    req.attributes = attrs;
    auditor.authenticated(req, requestor, attrs);
    // Impersonate-* headers (400/403 as kube), then everything below sees the impersonated user, as in kube's chain.
    const impersonated = await impersonation.impersonate(requestor, attrs, req.raw);
    if (impersonated) req.log.debug({ requestor: requestor.name, user: impersonated.user.name, constraint: impersonated.constraint }, 'impersonating');
    if (impersonated) auditor.impersonated(req, impersonated.user, impersonated.constraint);
    const user = impersonated?.user ?? requestor;
    req.user = user;
    const decision = await authorizer.authorize(user, attrs).catch((e: unknown) => {
      auditor.authorized(req, undefined);
      throw e;
    });
    auditor.authorized(req, decision);
    // A second verb on the same request (endpoints/unsafe-delete.ts), asked of the same authorizer.
    if (attrs.isResourceRequest) req.authorizeVerb = (verb) => authorizer.authorize(user, { ...attrs, verb, subresource: '' });
    if (!decision.allowed) {
      const why = forbiddenMessage(user, attrs) + (decision.reason ? `: ${decision.reason}` : '');
      throw attrs.isResourceRequest ? forbidden({ group: attrs.apiGroup, resource: attrs.resource }, attrs.name, why) : forbidden(undefined, '', why);
    }
  });
  onRequestDone(app, (req, code, ms) => {
    const line = { method: req.method, url: req.url, code, user: req.user?.name, ms };
    // A 504 (a request past its deadline, a resourceVersion not reached in time) shows at the default level, as one
    // plain line: the client's wait ran out, nothing in the server failed (timeouts.ts).
    if (code === 504) cfg.logger.info(line, 'request');
    else cfg.logger.debug(line, 'request');
  });

  const served = servedDefinitions(cfg.kinds);
  registerBodyParsers(app, served);

  app.setErrorHandler((err: FastifyError | StatusError, req, reply) => {
    const status = toStatusError(err as Error);
    // Answered before a large body was all read (413 above all): like Go's server (more than 256 KiB unread), the
    // connection closes rather than reading the rest; the client may still be sending, so it drains a moment first
    // and the client reads this answer, not a reset. A small rest is read and dropped, and the connection kept.
    // On HTTP/2 whatever the client still sends is refused with the stream's reset once the answer is out (flow
    // control would hold the rest back, and the stream open, for good); the connection, shared, stays.
    if (!req.raw.complete && !resetUnreadBody(req.raw) && (status.code === 413 || largeUnreadBody(req.raw))) {
      reply.header('connection', 'close');
      closeGently(req.raw.socket);
    }
    if (status.code >= 500 && !isTimeout(status)) req.log.error({ err }, 'request failed');
    if (status.status.details?.retryAfterSeconds) reply.header('retry-after', String(status.status.details.retryAfterSeconds));
    // A 415 names the body types taken here in an Accept header too (RFC 9110 §15.5.16), for clients that fall back.
    if (status.acceptedMediaTypes) reply.header('accept', status.acceptedMediaTypes.join(', '));
    if (status.warnings) sendWarnings(reply, status.warnings);
    reply.code(status.code).type('application/json').send(status.status);
  });
  app.setNotFoundHandler((req, reply) => {
    const e = unsupportedMethod(req, served) ?? notFoundPath();
    reply.code(e.code).type('application/json').send(e.status);
  });

  registerHealthRoutes(app, cfg.readiness ?? [], [graceful.readyCheck], cfg.liveness ?? []);
  const metrics = createMetrics(watches);
  registerMetrics(app, metrics);
  auditor.registerMetrics(metrics.registry);
  if (hasStoreResources(cfg.storage)) registerStorageMetrics(metrics.registry, cfg.storage);
  registerDiscoveryRoutes(app, served);
  if (cfg.standalone) registerStandaloneCoreRoutes(app, served, cfg.storage);
  // The REST map is built apart from HTTP; the routes are installed from it, one plugin per group/version.
  const restMap = buildRestMap(cfg.kinds, cfg.storage, { admission: cfg.admission, standalone: cfg.standalone });
  const freeze = new WriteFreeze();
  installRestMap(app, restMap, watches, freeze);
  registerMigrationRoutes(app, { kinds: cfg.kinds, storage: cfg.storage, watches, freeze });
  // Its start-up tasks (storage version migrations, stored metadata repairs) run in the background once serving
  // starts, so a large store does not delay readiness, and stop when the server closes (kube's post-start hooks).
  let closing = false;
  app.addHook('onClose', async () => {
    closing = true;
  });
  app.addHook('onReady', async () => {
    for (const task of restMap.startupTasks) {
      void task.run({ closing: () => closing, log: app.log });
      // Started a microtask apart, as the route plugins' onReady hooks started them before: a kind's migration and
      // its metadata repair walk the same objects and meet in the order they always did.
      await Promise.resolve();
    }
  });

  // closeAllConnections only knows connections that finished the TLS handshake; one that never does (a TCP probe,
  // a port scanner, a stalled client) would keep close() waiting for the 120 s handshake timeout. Track those by
  // their remote address and port (the same on the raw socket and its TLSSocket) so shutdown can drop them.
  const handshaking = new Map<string, Socket>();
  if (cfg.tls) {
    // A rotated cluster CA applies to new connections at once (existing ones keep the chain they verified).
    const tls = cfg.tls;
    cfg.authentication.onTrustChange(() => {
      (app.server as unknown as { setSecureContext(o: object): void }).setSecureContext({ key: tls.key, cert: tls.cert, ca: cfg.authentication.trustedCAs() });
    });
    const peer = (s: Socket) => `${s.remoteAddress}|${s.remotePort}`;
    app.server.on('connection', (s: Socket) => {
      const k = peer(s);
      handshaking.set(k, s);
      s.once('close', () => {
        if (handshaking.get(k) === s) handshaking.delete(k);
      });
    });
    app.server.on('secureConnection', (t: Socket) => handshaking.delete(peer(t)));
  }

  // Open watches would keep close() waiting forever: end them first, clients re-watch elsewhere or later.
  app.addHook('preClose', async () => {
    watches.closeAll();
    for (const s of handshaking.values()) s.destroy();
    handshaking.clear();
  });

  return {
    app,
    registry: metrics.registry,
    restMap,
    storeOf: (kind) => restMap.storeOf(kind),
    setServingCertificate(key, cert) {
      if (!cfg.tls) return;
      cfg.tls.key = key;
      cfg.tls.cert = cert;
      (app.server as unknown as { setSecureContext(o: object): void }).setSecureContext({ key, cert, ca: cfg.authentication.trustedCAs() });
    },
    async shutdown(preShutdown) {
      // The start-up tasks stop now: the storage closes before app.close() runs the onClose hooks, and a walk still
      // reading would fail on a closed store.
      closing = true;
      const report = await graceful.run(preShutdown);
      await app.close();
      return report;
    },
  };
}

function registerBodyParsers(app: FastifyInstance, kinds: readonly ResourceDefinition[]): void {
  type Done = (err: Error | null, body?: unknown) => void;
  // secure-json-parse underneath: __proto__ and constructor keys are refused (400).
  const json = app.getDefaultJsonParser('error', 'error') as unknown as (req: FastifyRequest, body: string, done: Done) => void;
  const parseWith =
    (req: FastifyRequest) =>
    (text: string): unknown => {
      let out: { err: Error | null; value?: unknown } = { err: null };
      json(req, text, (err, value) => (out = { err, value }));
      if (out.err) throw out.err;
      return out.value;
    };
  // Bodies are read with kube-apiserver's answers for text it cannot read, bounded in depth (body-decoding.ts),
  // once their Content-Type passed kube's negotiation.
  const roleOf = bodyRoleOf(kinds);
  app.addHook('preParsing', (req, _reply, payload, done) => {
    // No route: the not-found handler's 404 comes first, whatever the body (kube routes before it decodes). A large
    // body of a type not decoded is refused unread, as kube does (and Go closes an HTTP/1.1 connection rather than
    // read more than 256 KiB of it); a small one is read first, below, so the connection and an HTTP/2 stream stay.
    const ct = req.headers['content-type'];
    const refused = req.is404
      ? undefined
      : (unsupportedBody(req.method, ct, KUBE_MEDIA_TYPES, BODY_MEDIA_TYPES) ??
        (largeUnreadBody(req.raw) ? undecodedType(req.method, ct, KUBE_MEDIA_TYPES, BODY_MEDIA_TYPES) : undefined));
    done(refused ?? null, payload);
  });
  const decodeJson = (req: FastifyRequest, body: string | Buffer, done: Done) => {
    try {
      done(null, decodeJsonBody(body.toString(), roleOf(req, 'json'), parseWith(req)));
    } catch (e) {
      done(e as Error, undefined);
    }
  };
  app.removeContentTypeParser('application/json');
  // fastify reads text/plain on its own; kube-apiserver refuses it (415) like any type it does not decode.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, decodeJson);
  // Any non-apply patch that is not JSON (an empty body included) is refused before the object is read:
  // kube-apiserver's validateAndTranscodePatch (handlers/patch.go) answers 400 "invalid JSON patch".
  app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (req, body, done) => {
    if (req.is404) return done(null, undefined);
    if ((body as string).trim() === '') return done(badRequest('invalid JSON patch'), undefined);
    try {
      done(null, decodeJsonBody(body as string, roleOf(req, 'merge-patch'), parseWith(req)));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
  // A JSON patch keeps its JSON text (values are compared by it) and is refused before the object is read when it
  // is not JSON, as kube-apiserver does (registry/patch.ts).
  app.addContentTypeParser('application/json-patch+json', { parseAs: 'buffer' }, (_req, body, done) => {
    try {
      checkJsonPatch(body as Buffer);
      done(null, decodeJsonPatchBody(body as Buffer));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
  // Parsed only so the handler can answer 415 with the list of supported patch types, as for a CRD.
  app.addContentTypeParser('application/strategic-merge-patch+json', { parseAs: 'string' }, (_r, body, done) => done(null, body));
  // YAML bodies: create/update in YAML, and server-side apply (whose JSON bodies are YAML too).
  // application/x-yaml is no YAML to kube-apiserver (its serializer knows only application/yaml): a 415 below.
  app.addContentTypeParser(['application/yaml', 'application/apply-patch+yaml'], { parseAs: 'string' }, (req, body, done) => {
    try {
      const apply = (req.headers['content-type'] ?? '').toLowerCase().startsWith('application/apply-patch+yaml');
      done(null, decodeYamlBody(body as string, roleOf(req, apply ? 'apply' : 'yaml')));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
  // No Content-Type at all is taken as JSON (kube-apiserver consumes */*); any other type is 415.
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    // No route (e.g. kubectl create namespace sends protobuf to /api/v1/namespaces): the not-found handler's 404 wins.
    if (req.is404) return done(null, undefined);
    const ct = req.headers['content-type'];
    if (ct === undefined || ct === '' || ct.startsWith('*/*')) return decodeJson(req, body, done);
    // A PATCH's type is its handler's to refuse, with the patch types in its 415 (handlers/patch.go).
    if (req.method === 'PATCH') return done(null, undefined);
    // Refused by the hook below rather than as a parser error, which would make fastify close the connection.
    done(null, UNDECODED_BODY);
  });
  app.addHook('preHandler', async (req) => {
    if (req.body === UNDECODED_BODY) throw unsupportedMediaType(KUBE_MEDIA_TYPES, BODY_MEDIA_TYPES);
  });
}

/** UNDECODED_BODY stands for a body read but of a type nothing here decodes (a 415). */
const UNDECODED_BODY = Symbol('undecoded body');

/** The Retry-After of a write refused on a disk fault: kube's hint for an unreachable store (storage/errors NewServerTimeout). */
const STORAGE_RETRY_AFTER_SECONDS = 2;

/** toStatusError maps any error to a StatusError: fastify's own errors to their Kubernetes equivalents, the rest to 500. */
export function toStatusError(err: Error): StatusError {
  if (err instanceof StatusError) return err;
  // A disk fault: nothing was stored and a retry is safe, so 503 with Retry-After (client-go retries it) rather than
  // the 500 kube-apiserver gives for etcd's "database space exceeded" (docs/operations.md, Faults of the disk).
  if (isStorageError(err, 'Unavailable')) return serviceUnavailable(err.message, STORAGE_RETRY_AFTER_SECONDS);
  // A stored object that does not decode, or a damaged store: kube's 500, never a decoding error of the request's body.
  const storage = storageStatus(err);
  if (storage) return storage;
  const fe = err as FastifyError;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge(`Request entity too large: limit is ${BODY_LIMIT}`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return unsupportedMediaType(KUBE_MEDIA_TYPES, BODY_MEDIA_TYPES);
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest(`error decoding request body: ${fe.message}`);
    default:
  }
  if (err instanceof SyntaxError || fe.statusCode === 400) return badRequest(`error decoding request body: ${err.message}`);
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new StatusError({ code: fe.statusCode, reason: 'BadRequest', message: err.message });
  }
  return internalError(err.message);
}
