/**
 * @module observability/audit
 * Kube-style audit logging (`--audit-policy-file`, `--audit-log-path`): for each request the policy decides a level,
 * and events in audit.k8s.io/v1 form are written at the stages kube-apiserver writes them
 * (k8s.io/apiserver pkg/endpoints/filters/audit.go WithAudit, authn_audit.go, audit_init.go; pkg/audit/request.go).
 *
 * Entry point: `createAuditor(options, logger)` (loads the policy, opens the log), then in createServer
 * `auditor.install(app)` before the authentication hook, and the hook's calls in kube's filter order:
 * `authenticated` (the policy is evaluated with the authenticated user; RequestReceived), `impersonated`,
 * `authorized` (annotations `authorization.k8s.io/decision` and `…/reason`); or `failedAuthentication` (401) or
 * `unauthenticatedPath` (health paths). A handler adds its own annotations with `addAuditAnnotation` (the unsafe
 * delete's `apiserver.k8s.io/unsafe-delete-ignore-read-error`, endpoints/unsafe-delete.ts).
 *
 * ## Stages
 * - RequestReceived once the user is known; then ResponseComplete when the response has ended.
 * - Watches (long-running): ResponseStarted when the headers go out (code 101 once a WebSocket upgrade begins, as
 *   kube's Hijack reports it), ResponseComplete when the stream ends.
 * - A request failing authentication: one ResponseStarted event, user empty (WithFailedAuthenticationAudit).
 * - An exception that is a bug of the program (a TypeError, ReferenceError or RangeError: what Go's runtime panics
 *   on), kube's panic: Panic with `APIServer panic'd: …` instead of ResponseComplete. Any other failure is an
 *   answer, ResponseComplete with the Status the client got: a Status, a storage error, and also a plain Error from a
 *   dependency (lmdb's `MDB_READERS_FULL`, a lost etcd connection), which Go would return as an error value.
 * - An answer written on the raw response past fastify's reply (the request timeout's 504): its Status, as the
 *   client got it (util/raw-answer), in ResponseComplete when the 504 is out. Not kube's: its timeout filter wraps
 *   WithAudit (DefaultBuildHandlerChain), writes the 504 beneath it (server/filters/timeout.go), and the event is
 *   written once the handler returns, with the code the handler wrote to its discarded writer, or 200 "Connection
 *   closed early" if it wrote none. Here the event says what the client got.
 * - A request whose connection closed before any answer: `Connection closed early` with code 200, as kube fakes it.
 *
 * ## Always, audit on or off
 * Every response carries `Audit-Id` (audit_init.go): the request's own `Audit-ID` header when it has one (so the ID
 * kube-apiserver's proxy forwards, pkg/util/proxy NewRequestForProxy, is kept across both servers), else a new UUID.
 * Through the aggregator the client then gets it twice (kube-apiserver's own, and ours its proxy copies), as from any
 * k8s.io/apiserver-based server.
 *
 * ## Caveats
 * - requestObject is the body as the client sent it (decoded); kube's CRD decoder logs it after pruning and
 *   defaulting. Patches are logged as sent (an apply YAML patch as its JSON), as kube does since 1.37.
 * - responseObject is logged for resource requests and for Status answers (kube logs every object written through its
 *   negotiated writer, e.g. discovery documents, which we do not).
 * - Health paths are served without authentication here, so they are audited as `system:anonymous`.
 * - kube's latency annotations (`apiserver.latency.k8s.io/*`) are not written.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Decision } from '../auth/authorizer.js';
import { requestAttributes, type RequestAttributes } from '../auth/request-info.js';
import { ANONYMOUS_USER, UNAUTHENTICATED_GROUP, type UserInfo } from '../auth/user.js';
import { distinctHeaders } from '../auth/impersonation.js';
import { StatusError } from '../apis/meta/errors.js';
import { goMarshal, type GoValue } from '../apis/meta/go-json.js';
import { JsonPatchBody } from '../registry/patch.js';
import { isStorageError } from '../storage/errors.js';
import { rawAnswerOf } from '../util/raw-answer.js';
import { AuditLog, type AuditLogOptions } from './audit-log.js';
import { encodeEvent, jsonText, nowMicros, sourceIPs, type AuditUser, type EventData } from './audit-event.js';
import { levelAtLeast, loadPolicyFile, PolicyEvaluator, type RequestAuditConfig, type Stage } from './audit-policy.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's audit state (observability/audit); undefined for requests the policy does not audit. */
    audit: RequestAudit | undefined;
  }
}

/** AUDIT_ID_HEADER is auditinternal.HeaderAuditID (sent as Go writes it, `Audit-Id`). */
export const AUDIT_ID_HEADER = 'Audit-Id';
const DECISION_ANNOTATION = 'authorization.k8s.io/decision';
const REASON_ANNOTATION = 'authorization.k8s.io/reason';
// pkg/audit/request.go maybeTruncateUserAgent.
const MAX_USER_AGENT = 1024;
const ANONYMOUS: UserInfo = { name: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };

/** AuditOptions are the --audit-* flags. */
export interface AuditOptions {
  policyFile: string | undefined;
  log: AuditLogOptions | undefined;
}

/**
 * createAuditor loads the policy and opens the log. A policy without a log path is still validated (kube refuses to
 * start with an invalid one); either alone records nothing. Throws kube's startup errors.
 */
export async function createAuditor(o: AuditOptions, logger: Logger): Promise<Auditor> {
  const policy = o.policyFile ? loadPolicyFile(o.policyFile, (msg) => logger.warn(msg)) : undefined;
  if (!o.log) return new Auditor(undefined, undefined, logger);
  const log = await AuditLog.open(o.log, logger);
  if (!policy) {
    logger.info('No audit policy file provided, no events will be recorded for log backend');
    await log.close();
    return new Auditor(undefined, undefined, logger);
  }
  logger.info({ path: o.log.path, policy: o.policyFile, rules: policy.rules.length }, 'audit logging');
  return new Auditor(new PolicyEvaluator(policy), log, logger);
}

/** RequestAudit is one audited request: its event so far and what has been written. */
export class RequestAudit {
  readonly event: EventData;
  readonly config: RequestAuditConfig;
  readonly longRunning: boolean;
  readonly reply: FastifyReply;
  /** Set when a 401 ends the request: the single event is ResponseStarted. */
  failedAuthentication = false;
  codeProcessed = false;
  /** The route handler was reached: a bug thrown from then on is kube's panic. */
  inHandler = false;
  /** A thrown bug (isPanic): the last event is Panic. */
  panic: Error | undefined;
  done = false;

  constructor(event: EventData, config: RequestAuditConfig, longRunning: boolean, reply: FastifyReply) {
    this.event = event;
    this.config = config;
    this.longRunning = longRunning;
    this.reply = reply;
  }
}

// Set on every request by the first hook: arrival time (when auditing), audit ID and reply.
const RECEIVED = Symbol('audit received timestamp');
const ID = Symbol('audit id');
const REPLY = Symbol('audit reply');
type Stamped = FastifyRequest & { [RECEIVED]?: number; [ID]?: string; [REPLY]?: FastifyReply };

/** Auditor writes the events of every request; without a policy and a log it only sends Audit-Id. */
export class Auditor {
  readonly #policy: PolicyEvaluator | undefined;
  readonly #log: AuditLog | undefined;
  readonly #logger: Logger;
  #events = 0;
  readonly #levels = new Map<string, number>();

  constructor(policy: PolicyEvaluator | undefined, log: AuditLog | undefined, logger: Logger) {
    this.#policy = policy;
    this.#log = log;
    this.#logger = logger;
  }

  /** enabled tells whether events are written at all. */
  get enabled(): boolean {
    return this.#policy !== undefined && this.#log !== undefined;
  }

  /** install adds the hooks; call it before the authentication hook so the audit ID and arrival time come first. */
  install(app: FastifyInstance): void {
    app.decorateRequest('audit', undefined);
    // A callback hook (no promise): it runs on every request, audited or not.
    app.addHook('onRequest', (req, reply, done) => {
      const r = req as Stamped;
      if (this.enabled) r[RECEIVED] = nowMicros();
      // withAuditInit: the client's Audit-ID as it is, else a new one, echoed on the response.
      let id = firstHeader(req, 'audit-id') || randomUUID();
      try {
        reply.raw.setHeader(AUDIT_ID_HEADER, id);
      } catch {
        id = randomUUID();
        reply.raw.setHeader(AUDIT_ID_HEADER, id);
      }
      r[ID] = id;
      r[REPLY] = reply;
      done();
    });
    if (!this.enabled) return;
    app.addHook('preHandler', async (req) => {
      if (req.audit) req.audit.inHandler = true;
    });
    app.addHook('onError', async (req, _reply, err: FastifyError | Error) => {
      const a = req.audit;
      // Only a bug escaping a handler is a panic (isPanic). A failing authorizer, before the handler, is kube's
      // InternalError answer, not a panic.
      if (a?.inHandler && isPanic(err)) a.panic = err;
    });
    app.addHook('onSend', async (req, reply, payload) => {
      const a = req.audit;
      if (a && !a.done) this.#guard(() => this.#beforeSend(req, a, reply.statusCode, payload));
      return payload;
    });
    app.addHook('onResponse', async (req) => {
      const a = req.audit;
      if (a) this.#guard(() => this.#complete(a));
    });
    app.addHook('onClose', async () => {
      // Streams ended by the shutdown report their completion on the next turns of the event loop.
      await new Promise((r) => setImmediate(r));
      await this.#log?.close();
    });
  }

  /** registerMetrics adds kube's audit counters to the registry /metrics serves. */
  registerMetrics(registry: Registry): void {
    if (!this.enabled) return;
    const log = this.#log as AuditLog;
    // collect() is called with the metric as `this`.
    const self = this;
    new Counter({
      name: 'apiserver_audit_event_total',
      help: 'Counter of audit events generated and sent to the audit backend.',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(self.#events);
      },
    });
    new Counter({
      name: 'apiserver_audit_error_total',
      help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
      labelNames: ['plugin'],
      registers: [registry],
      collect() {
        this.reset();
        this.inc({ plugin: 'buffered' }, log.stats.dropped);
        this.inc({ plugin: 'log' }, log.stats.failed);
      },
    });
    new Counter({
      name: 'apiserver_audit_level_total',
      help: 'Counter of policy levels for audit events (1 per request).',
      labelNames: ['level'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [level, n] of self.#levels) this.inc({ level }, n);
      },
    });
  }

  /** authenticated evaluates the policy for the authenticated user and writes RequestReceived (WithAudit). */
  authenticated(req: FastifyRequest, user: UserInfo, attrs: RequestAttributes): void {
    if (this.enabled) this.#guard(() => this.#start(req, user, attrs, 'RequestReceived'));
  }

  /** failedAuthentication starts the single event of a request refused with 401 (WithFailedAuthenticationAudit). */
  failedAuthentication(req: FastifyRequest): void {
    if (!this.enabled) return;
    this.#guard(() => {
      const a = this.#start(req, undefined, requestAttributes(req.method, req.url), undefined);
      if (a) a.failedAuthentication = true;
    });
  }

  /** unauthenticatedPath audits a health path, served to anyone, as the anonymous user kube would see there. */
  unauthenticatedPath(req: FastifyRequest): void {
    if (!this.enabled) return;
    this.#guard(() => {
      const a = this.#start(req, ANONYMOUS, requestAttributes(req.method, req.url), 'RequestReceived');
      if (a) annotate(a, DECISION_ANNOTATION, 'allow', REASON_ANNOTATION, '');
    });
  }

  /** impersonated records the user the request runs as (LogImpersonatedUser), and the constrained verb that allowed it. */
  impersonated(req: FastifyRequest, user: UserInfo, constraint: string): void {
    const a = req.audit;
    if (!a) return;
    a.event.impersonatedUser = auditUser(user);
    if (constraint) a.event.impersonationConstraint = constraint;
  }

  /** authorized adds the authorizer's decision (filters/authorization.go); `undefined` when the authorizer failed. */
  authorized(req: FastifyRequest, decision: Decision | undefined): void {
    const a = req.audit;
    if (!a) return;
    if (!decision) annotate(a, REASON_ANNOTATION, 'internal error');
    else annotate(a, DECISION_ANNOTATION, decision.allowed ? 'allow' : 'forbid', REASON_ANNOTATION, decision.reason);
  }

  // evaluatePolicyAndCreateAuditEvent + LogRequestMetadata, then the first stage.
  #start(req: FastifyRequest, user: UserInfo | undefined, attrs: RequestAttributes, first: Stage | undefined): RequestAudit | undefined {
    const config = (this.#policy as PolicyEvaluator).evaluate(user, attrs);
    this.#levels.set(config.level, (this.#levels.get(config.level) ?? 0) + 1);
    if (config.level === 'None') return undefined;
    const r = req as Stamped;
    const raw = req.raw;
    const ua = firstHeader(req, 'user-agent');
    const event: EventData = {
      level: config.level,
      auditID: r[ID] ?? randomUUID(),
      requestURI: req.url,
      verb: attrs.verb,
      user: user ? auditUser(user) : {},
      sourceIPs: sourceIPs(firstHeader(req, 'x-forwarded-for'), firstHeader(req, 'x-real-ip'), raw.socket?.remoteAddress),
      userAgent: ua.length > MAX_USER_AGENT ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED` : ua,
      requestReceivedTimestamp: r[RECEIVED] ?? nowMicros(),
    };
    if (attrs.isResourceRequest) {
      event.objectRef = {
        resource: attrs.resource,
        namespace: attrs.namespace,
        name: attrs.name,
        apiGroup: attrs.apiGroup,
        apiVersion: attrs.apiVersion,
        subresource: attrs.subresource,
      };
    }
    const reply = r[REPLY];
    if (!reply) return undefined;
    // BasicLongRunningRequestCheck: watch (and proxy, which we do not serve).
    const a = new RequestAudit(event, config, attrs.isResourceRequest && attrs.verb === 'watch', reply);
    req.audit = a;
    if (first) this.#emit(a, first);
    if (a.longRunning) this.#watchResponseStart(a);
    a.reply.raw.once('close', () => this.#guard(() => this.#complete(a)));
    return a;
  }

  // The long-running request's ResponseStarted: when its headers are written, or, for a WebSocket, when the handler
  // takes the connection over (kube's Hijack reports 101 before x/net answers the handshake).
  #watchResponseStart(a: RequestAudit): void {
    const res = a.reply.raw as ServerResponse & { statusCode: number };
    const writeHead = res.writeHead;
    res.writeHead = ((...args: Parameters<typeof writeHead>) => {
      this.#guard(() => this.#processCode(a, args[0]));
      return writeHead.apply(res, args);
    }) as typeof writeHead;
    let code = res.statusCode;
    Object.defineProperty(res, 'statusCode', {
      configurable: true,
      enumerable: true,
      get: () => code,
      set: (v: number) => {
        code = v;
        if (a.reply.sent && !res.headersSent) this.#guard(() => this.#processCode(a, 101));
      },
    });
  }

  // auditResponseWriter.processCode: the first code written; long-running requests write ResponseStarted then.
  #processCode(a: RequestAudit, code: number): void {
    if (a.codeProcessed) return;
    a.codeProcessed = true;
    a.event.responseStatus = { ...(a.event.responseStatus ?? {}), code };
    if (a.longRunning) this.#emit(a, 'ResponseStarted');
  }

  // What the handler logs (LogRequestObject/LogRequestPatch, LogResponseObject), then the code being written.
  #beforeSend(req: FastifyRequest, a: RequestAudit, code: number, payload: unknown): void {
    const body = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : undefined;
    const text = body !== undefined && String(a.reply.getHeader('content-type') ?? '').includes('json') ? body : undefined;
    // An object that cannot be encoded is left out of the event, which is still written (LogRequestObject).
    this.#guard(() => this.#logRequest(req, a));
    if (text !== undefined) {
      const parsed = code >= 400 || text.startsWith('{"kind":"Status"') ? tryParse(text) : undefined;
      if (isObject(parsed) && parsed['kind'] === 'Status') this.#recordStatus(a, parsed, undefined, text);
      else if (a.event.objectRef !== undefined) this.#recordResponseObject(a, text);
    }
    if (a.failedAuthentication) {
      a.event.responseStatus = { ...(a.event.responseStatus ?? { message: authMethods(req) }), code };
      this.#emit(a, 'ResponseStarted');
      a.codeProcessed = true;
      a.done = true;
      return;
    }
    this.#processCode(a, code);
  }

  // LogResponseObject of a Status: its fields in responseStatus, and the Status itself at RequestResponse. `code`
  // stands in for a Status without one.
  #recordStatus(a: RequestAudit, status: Record<string, unknown>, code: number | undefined, text: string): void {
    a.event.responseStatus = {
      status: str(status['status']),
      message: str(status['message']),
      reason: str(status['reason']),
      ...(isObject(status['details']) ? { details: status['details'] } : {}),
      code: typeof status['code'] === 'number' ? status['code'] : (code ?? 0),
    };
    this.#recordResponseObject(a, text);
  }

  #recordResponseObject(a: RequestAudit, text: string): void {
    if (!levelAtLeast(a.config.level, 'RequestResponse')) return;
    this.#guard(() => (a.event.responseObject = a.config.omitManagedFields ? withoutManagedFields(text) : jsonText(text)));
  }

  // The request body, for the verbs whose handlers log it.
  #logRequest(req: FastifyRequest, a: RequestAudit): void {
    const body = req.body;
    if (body === undefined || a.event.objectRef === undefined) return;
    const verb = a.event.verb;
    const atRequest = levelAtLeast(a.config.level, 'Request');
    if (verb === 'patch') {
      // LogRequestPatch: the patch itself (no objectRef completion).
      if (!atRequest) return;
      if (body instanceof JsonPatchBody) a.event.requestObject = jsonText(goMarshalInOrder(body.json));
      else if (isObject(body) && req.headers['content-type']?.startsWith('application/apply-patch+yaml')) a.event.requestObject = goMarshal(body);
      else if (isObject(body)) a.event.requestObject = jsonText(JSON.stringify(body));
      return;
    }
    if (verb !== 'create' && verb !== 'update' && verb !== 'delete' && verb !== 'deletecollection') return;
    if (!isObject(body)) return;
    // LogRequestObject: the object reference is completed from the object's metadata, already at Metadata level.
    const meta = body['metadata'];
    if (isObject(meta)) {
      const ref = a.event.objectRef;
      ref.namespace ||= str(meta['namespace']);
      ref.name ||= str(meta['name']);
      ref.uid ||= str(meta['uid']);
      ref.resourceVersion ||= str(meta['resourceVersion']);
    }
    if (!atRequest) return;
    a.event.requestObject = goMarshal(a.config.omitManagedFields ? stripManagedFields(body) : body);
  }

  #complete(a: RequestAudit): void {
    if (a.done) return;
    a.done = true;
    // An answer written on the raw response (the request timeout's 504) is what the client got, whatever onSend saw
    // before it, and without it the event would say 200 "Connection closed early" (issue 24).
    const raw = rawAnswerOf(a.reply.raw);
    if (raw) {
      this.#guard(() => this.#recordStatus(a, raw.status, a.reply.raw.statusCode, raw.body));
      a.codeProcessed = true;
      a.panic = undefined;
    }
    if (a.panic) {
      a.event.responseStatus = { code: 500, status: 'Failure', reason: 'InternalError', message: `APIServer panic'd: ${a.panic.message}` };
      this.#emit(a, 'Panic');
      return;
    }
    if (!a.event.responseStatus) {
      // Nothing was written (the client went away first): kube fakes a success.
      a.event.responseStatus = { code: 200, status: 'Success', message: 'Connection closed early' };
      if (a.longRunning) this.#emit(a, 'ResponseStarted');
    }
    this.#emit(a, 'ResponseComplete');
  }

  // ProcessEventStage: omitted stages write nothing; the rest is encoded now (a snapshot) and buffered.
  #emit(a: RequestAudit, stage: Stage): void {
    if (a.config.omitStages.has(stage)) return;
    const ts = stage === 'RequestReceived' ? a.event.requestReceivedTimestamp : Math.max(nowMicros(), a.event.requestReceivedTimestamp);
    const line = encodeEvent(a.event, stage, ts);
    this.#events++;
    (this.#log as AuditLog).enqueue(line);
  }

  // Auditing must never fail a request: anything thrown here is logged and the request goes on.
  #guard(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.#logger.error({ err: e }, 'audit event failed');
    }
  }
}

/**
 * isPanic tells a bug of the program, kube's panic, from a failure answered as a Status. Go's runtime panics on a nil
 * dereference, an index out of range, a bad conversion: JavaScript throws TypeError, ReferenceError, RangeError
 * there. Everything else thrown is what Go returns as an error value, answered with a ResponseComplete event: a
 * StatusError, a StorageError, and a plain Error from a dependency (kube answers the last one 500 with an empty
 * reason and the error's text, responsewriters.ErrorToAPIStatus; server.ts toStatusError answers it 500 InternalError
 * `Internal error occurred: …`; either way the event records what was sent). That last case was the
 * bug of issue 24: lmdb's `MDB_READERS_FULL` (a plain Error from the storage, answered 500) was audited as a Panic,
 * so those requests had no ResponseComplete and their event did not say what the client got.
 */
function isPanic(err: unknown): boolean {
  if (err instanceof StatusError || isStorageError(err)) return false;
  const code = (err as FastifyError | undefined)?.statusCode;
  if (code !== undefined && code < 500) return false;
  return !(err instanceof Error) || err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError;
}

/**
 * addAuditAnnotation is kube's audit.AddAuditAnnotation for a handler: the annotation goes on the request's event
 * (every level but None; a key keeps its first value). Nothing happens for a request that is not audited.
 */
export function addAuditAnnotation(req: FastifyRequest, key: string, value: string): void {
  const a = req.audit;
  if (a) annotate(a, key, value);
}

function annotate(a: RequestAudit, ...kv: string[]): void {
  // logAnnotation: only at Metadata and above (always true here), and a key keeps its first value.
  a.event.annotations ??= new Map();
  for (let i = 0; i + 1 < kv.length; i += 2) if (!a.event.annotations.has(kv[i] as string)) a.event.annotations.set(kv[i] as string, kv[i + 1] as string);
}

/** auditUser is authentication/v1 UserInfo of a user. */
export function auditUser(u: UserInfo): AuditUser {
  return { username: u.name, ...(u.uid ? { uid: u.uid } : {}), groups: u.groups, ...(u.extra ? { extra: u.extra } : {}) };
}

// Go's Header.Get: the first line of a header. Node joins repeated unknown headers with ", ", so a value with a comma
// is looked up line by line (headersDistinct is built on first use: only then).
function firstHeader(req: FastifyRequest, name: string): string {
  const v = req.headers[name];
  if (v === undefined) return '';
  if (typeof v === 'string' && !v.includes(',')) return v;
  // The first line as sent (HTTP/2's request has no headersDistinct: distinctHeaders reads its raw lines).
  return distinctHeaders(req.raw)[name]?.[0] ?? '';
}

// getAuthMethods (authn_audit.go): what the client tried, for a 401 whose body is not a Status.
function authMethods(req: FastifyRequest): string {
  const methods: string[] = [];
  const auth = (req.headers.authorization ?? '').trim();
  if (/^basic /i.test(auth)) methods.push('basic');
  const parts = auth.split(' ');
  if (parts.length > 1 && parts[0]?.toLowerCase() === 'bearer') methods.push('bearer');
  if (new URLSearchParams(req.url.split('?')[1] ?? '').get('access_token')?.trim()) methods.push('access_token');
  const sock = req.raw.socket as TLSSocket;
  if (typeof sock.getPeerCertificate === 'function' && Object.keys(sock.getPeerCertificate() ?? {}).length) methods.push('x509');
  return methods.length ? `Authentication failed, attempted: ${methods.join(', ')}` : 'Authentication failed, no credentials provided';
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// copyWithoutManagedFields: an object, each item of a list, each row object of a Table.
function stripManagedFields(v: Record<string, unknown>): Record<string, unknown> {
  const strip = (o: unknown) => {
    if (isObject(o) && isObject(o['metadata']) && 'managedFields' in o['metadata']) {
      return { ...o, metadata: Object.fromEntries(Object.entries(o['metadata']).filter(([k]) => k !== 'managedFields')) };
    }
    return o;
  };
  let out = strip(v) as Record<string, unknown>;
  if (Array.isArray(out['items'])) out = { ...out, items: out['items'].map(strip) };
  if (Array.isArray(out['rows'])) out = { ...out, rows: out['rows'].map((row) => (isObject(row) ? { ...row, object: strip(row['object']) } : row)) };
  return out;
}

function withoutManagedFields(text: string): string {
  const parsed = tryParse(text);
  return isObject(parsed) ? jsonText(JSON.stringify(stripManagedFields(parsed))) : jsonText(text);
}

// A JSON patch as the client wrote it (members in order, numbers and strings as written), compacted.
function goMarshalInOrder(v: GoValue): string {
  if (v === null) return 'null';
  switch (v.kind) {
    case 'array':
      return `[${v.items.map(goMarshalInOrder).join(',')}]`;
    case 'object':
      return `{${v.entries.map(([k, x]) => `${JSON.stringify(k)}:${goMarshalInOrder(x)}`).join(',')}}`;
    default:
      return v.raw;
  }
}
