/**
 * @module server/graceful-shutdown
 * The graceful termination of k8s.io/apiserver (pkg/server/genericapiserver.go RunWithContext and the filters
 * WithWaitGroup, WithRetryAfter, WithWatchTerminationDuringShutdown), for one fastify server. GracefulShutdown is
 * installed before every other onRequest hook and run once on SIGTERM; its steps, in kube's order:
 *
 * 1. ShutdownInitiated: `/readyz` fails its `shutdown` check at once (`/livez` and `/healthz` stay ok); requests are
 *    served normally for `--shutdown-delay-duration` (default 0), so a load balancer can stop sending new ones. The
 *    pre-shutdown hooks (the reconcilers drain, then the Lease is released) run meanwhile.
 * 2. AfterShutdownDelayDuration: with `--shutdown-send-retry-after`, every new request is refused with kube's
 *    429, `Retry-After: 5`, `Connection: close` (text/plain, filters/with_retry_after.go), the listener stays open.
 * 3. NotAcceptingNewRequest (after the delay and the hooks): a new request, watches included, is refused with kube's
 *    `503 apiserver is shutting down`, `Retry-After: 1` (filters/waitgroup.go); by default the listener closes
 *    (a new connection is refused) and idle keep-alive connections are ended. Open watches get a clean end of
 *    stream (the terminating chunk; close 1000 on a WebSocket) so clients re-watch elsewhere, paced like kube's
 *    WatchRequestWaitGroup when `--shutdown-watch-termination-grace-period` is set.
 * 4. InFlightRequestsDrained: requests already begun run to their answer, each with `Connection: close`, bounded by
 *    ShutdownTimeout, which kube sets to `--request-timeout` (config.go New). With send-retry-after the listener
 *    closes only now.
 * 5. The storage closes: writes already begun commit and answer first, later ones fail, and it is flushed.
 *
 * Health probes and `/metrics` are never refused, nor is the User-Agent `kube-apiserver/…` (isRequestExemptFromRetryAfter).
 *
 * ## Guarantees
 * - A request that got past step 3 is answered, or it never reached storage: at the bound, the storage is closed to
 *   new writes before any connection is dropped, and writes already begun finish and answer first.
 * - Connections are ended (a TLS close_notify and FIN after whatever was written), never reset while a response is
 *   still being written: Node's closeIdleConnections (which server.close() calls) can destroy a socket whose last
 *   response is still in its buffer, so the listener is closed with net.Server's own close instead.
 *
 * ## Caveats (differences from kube-apiserver, each on purpose)
 * - kube ends watches on shutdown only with a watch grace period; by default they hold the HTTP server until its
 *   ShutdownTimeout and are then cut. Here they always get their clean end at step 3.
 * - A new watch after step 3 is refused with the 503 even without a watch grace period (kube serves it, and it then
 *   holds the shutdown).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2Session } from 'node:http2';
import { Server as NetServer, type Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { StatusError } from '../apis/meta/errors.js';
import { requestAttributes } from '../auth/request-info.js';
import type { WatchRegistry } from '../endpoints/watch.js';
import type { Storage } from '../storage/interface.js';
import { InFlightList, type Linked } from '../util/in-flight-list.js';
import type { HealthCheck } from './health.js';
import { onResponseClosed } from '../util/request-done.js';
import { connectionOf, goAway, isHttp2, markConnections, sessionOf } from '../util/http-connection.js';

/** ShutdownSettings are kube-apiserver's shutdown flags. */
export interface ShutdownSettings {
  /** --shutdown-delay-duration: how long requests are still served after SIGTERM, with /readyz failing (kube: 0). */
  delayMs?: number;
  /** --shutdown-send-retry-after: refuse new requests with 429 and keep listening until drained (kube: false). */
  sendRetryAfter?: boolean;
  /** --shutdown-watch-termination-grace-period: over how long open watches are ended (kube: 0, all at once here). */
  watchGraceMs?: number;
  /** ShutdownTimeout, kube's --request-timeout (1m): how long requests already begun may take to finish. */
  drainTimeoutMs?: number;
}

/** DEFAULT_DRAIN_TIMEOUT_MS is kube-apiserver's --request-timeout default, its ShutdownTimeout. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 60_000;
/** Past the drain bound: how long answers of writes that committed as the storage closed may take to be sent. */
const ANSWER_GRACE_MS = 1000;
/** How long an ended connection may take to close before it is dropped (kube gives http.Server.Shutdown 2 s). */
const CONNECTION_CLOSE_GRACE_MS = 2000;
/** How long a watch ended by the server may take to close its connection (a client not reading holds it). */
const WATCH_CLOSE_GRACE_MS = 2000;
/** kube's floor for the pace at which watches are ended (genericapiserver.go: at least 200 per second). */
const MIN_WATCH_END_RATE = 200;
const TICK_MS = 20;

/** Phase is how far the shutdown got, in kube's lifecycle signals. */
export type Phase = 'serving' | 'initiated' | 'afterDelay' | 'notAccepting' | 'drained' | 'stopped';
const ORDER: readonly Phase[] = ['serving', 'initiated', 'afterDelay', 'notAccepting', 'drained', 'stopped'];

/** ShutdownReport is what one shutdown did, for the log and the tests. */
export interface ShutdownReport {
  /** Requests in flight (watches included) when new ones stopped being accepted. */
  inFlightAtStop: number;
  /** Of those, watches ended by the server. */
  watchesEnded: number;
  /** Requests answered after the shutdown began, refusals excluded. */
  answered: number;
  /** Requests refused with 429 (send-retry-after) or 503 (after step 3). */
  refused429: number;
  refused503: number;
  /** Requests still unanswered at the drain bound, then dropped (they never reached storage). */
  cutOff: number;
  /** Milliseconds from SIGTERM to not accepting, to drained, to storage closed. */
  msToNotAccepting: number;
  msToDrained: number;
  msTotal: number;
}

/** ExemptPaths are never refused during shutdown (with_retry_after.go pathPrefixesExemptFromRetryAfter). */
const EXEMPT_PREFIXES = ['/readyz', '/livez', '/healthz', '/metrics'];

const RETRY_AFTER_MESSAGE = 'The apiserver is shutting down, please try again later.';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** InFlight is a request not yet finished, with its connection (undefined for app.inject's stand-in socket). */
interface InFlight extends Linked<InFlight> {
  req: IncomingMessage;
  res: ServerResponse;
  socket: Socket | undefined;
  /** The HTTP/2 session the request is a stream of (undefined on HTTP/1.x). */
  session: Http2Session | undefined;
}

const ENTRY = Symbol('in-flight entry of this request');
type Tracked = FastifyRequest & { [ENTRY]?: InFlight };

/** GracefulShutdown tracks requests and connections of a server and runs kube's shutdown sequence over them. */
export class GracefulShutdown {
  readonly #app: FastifyInstance;
  readonly #watches: WatchRegistry;
  readonly #storage: Storage;
  readonly #logger: Logger;
  readonly #settings: Required<ShutdownSettings>;
  #phase: Phase = 'serving';
  /** Requests not yet finished, with their connection (a list, not a Map: util/in-flight-list says why). */
  readonly #inFlight = new InFlightList<InFlight>();
  /** Open connections (TLS sockets once their handshake is done). */
  readonly #sockets = new Set<Socket>();
  readonly #ending = new WeakSet<Socket>();
  /** Wake-ups of #until callers, run on every request or connection end. */
  readonly #waiters = new Set<() => void>();
  #running: Promise<ShutdownReport> | undefined;
  /** Set once the paced ending of watches is over: from then on a watch is ended as soon as it registers. */
  #sweepWatches = false;
  readonly #counts = { answered: 0, refused429: 0, refused503: 0 };

  /** readyCheck is kube's readyz `shutdown` check: it fails from the moment the shutdown begins. */
  readonly readyCheck: HealthCheck = { name: 'shutdown', check: () => this.#phase === 'serving' };

  /** Install the tracking and refusal hooks; call before any other onRequest hook so nothing runs ahead of them. */
  constructor(app: FastifyInstance, watches: WatchRegistry, storage: Storage, logger: Logger, settings: ShutdownSettings = {}) {
    this.#app = app;
    this.#watches = watches;
    this.#storage = storage;
    this.#logger = logger;
    this.#settings = {
      delayMs: settings.delayMs ?? 0,
      sendRetryAfter: settings.sendRetryAfter ?? false,
      watchGraceMs: settings.watchGraceMs ?? 0,
      drainTimeoutMs: settings.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS,
    };
    const server = app.server as NetServer;
    markConnections(server);
    server.on(server instanceof TlsServer ? 'secureConnection' : 'connection', (s: Socket) => {
      this.#sockets.add(s);
      s.once('close', () => {
        this.#sockets.delete(s);
        this.#notify();
      });
      if (this.#reached('notAccepting') && !this.#settings.sendRetryAfter) this.#endSocket(s);
    });
    // Before the hook below: a request it refuses is still untracked when its response closes.
    onResponseClosed(app, (req) => {
      const entry = (req as Tracked)[ENTRY];
      if (entry) this.#untrack(entry);
    });
    // Callback-style hooks here and in the other per-request hooks: no promise and no microtask per request.
    app.addHook('onRequest', (req, reply, done) => {
      let answered: boolean;
      try {
        answered = this.#admit(req, reply);
      } catch (e) {
        done(e as Error);
        return;
      }
      // A request answered here goes no further (fastify: a callback hook that replies does not call done).
      if (!answered) done();
    });
  }

  /**
   * run performs the shutdown once (later calls share it): `preShutdown` runs during the delay (kube's
   * PreShutdownHooks); the storage is closed at the end. The caller closes the fastify app afterwards.
   */
  run(preShutdown?: () => Promise<void>): Promise<ShutdownReport> {
    this.#running ??= this.#run(preShutdown);
    return this.#running;
  }

  async #run(preShutdown: (() => Promise<void>) | undefined): Promise<ShutdownReport> {
    const t0 = performance.now();
    const s = this.#settings;
    this.#phase = 'initiated';
    const hooks = (preShutdown?.() ?? Promise.resolve()).catch((err: unknown) => this.#logger.error({ err }, 'pre-shutdown hook failed'));
    if (s.delayMs > 0) await sleep(s.delayMs);
    this.#phase = 'afterDelay';
    await hooks;

    this.#phase = 'notAccepting';
    const msToNotAccepting = performance.now() - t0;
    const inFlightAtStop = this.#inFlight.size;
    const openWatches = this.#watches.size;
    // Every answer from now on closes its connection (Go's http.Server does the same once Shutdown began).
    // On HTTP/2 the connection gets its GOAWAY now: the streams begun finish, new ones go elsewhere.
    for (const { res, session } of this.#inFlight) {
      if (!res.headersSent) res.shouldKeepAlive = false;
      goAway(session);
    }
    if (!s.sendRetryAfter) this.#stopListening();
    const watchesDone = this.#endWatches();
    const drained = await this.#drain(s.drainTimeoutMs);
    await watchesDone;
    const msToDrained = performance.now() - t0;
    this.#phase = 'drained';
    if (s.sendRetryAfter) this.#stopListening();

    // The storage stops taking writes before anything still running could be cut off; writes begun finish first.
    const cutOff = drained ? 0 : this.#inFlight.size;
    if (!drained)
      this.#logger.warn({ inFlight: cutOff, drainTimeoutMs: s.drainTimeoutMs }, 'requests still running at the shutdown bound: storage closes to them');
    await this.#storage.close();
    if (!drained) await this.#drain(ANSWER_GRACE_MS);
    for (const sock of this.#sockets) this.#endSocket(sock);
    await this.#until(() => this.#sockets.size === 0, CONNECTION_CLOSE_GRACE_MS);
    this.#phase = 'stopped';
    return {
      inFlightAtStop,
      watchesEnded: openWatches,
      ...this.#counts,
      cutOff,
      msToNotAccepting: Math.round(msToNotAccepting),
      msToDrained: Math.round(msToDrained),
      msTotal: Math.round(performance.now() - t0),
    };
  }

  // #admit tracks a request and refuses it when the shutdown has got far enough (in kube's filter order:
  // WithRetryAfter runs ahead of WithWaitGroup).
  #admit(req: FastifyRequest, reply: FastifyReply): boolean {
    const res = reply.raw;
    const entry = this.#track(res, req.raw);
    (req as Tracked)[ENTRY] = entry;
    if (this.#phase === 'serving' || isExempt(req.raw)) {
      if (this.#reached('notAccepting')) this.#lastOnConnection(entry);
      return false;
    }
    if (this.#settings.sendRetryAfter && this.#reached('afterDelay')) {
      this.#counts.refused429++;
      // with_retry_after.go: http.Error, so text/plain and not a Status. `Connection: close` on HTTP/1.1; on HTTP/2
      // a GOAWAY, which is what Go's http2 server makes of that header.
      if (entry.session) goAway(entry.session);
      else reply.header('connection', 'close');
      reply.code(429).header('retry-after', '5').header('x-content-type-options', 'nosniff').type('text/plain; charset=utf-8').send(`${RETRY_AFTER_MESSAGE}\n`);
      return true;
    }
    if (this.#reached('notAccepting')) {
      this.#counts.refused503++;
      this.#lastOnConnection(entry);
      reply.header('retry-after', '1').header('x-content-type-options', 'nosniff');
      // waitgroup.go waitGroupWriteRetryAfterToResponse: errors.NewServiceUnavailable("apiserver is shutting down").
      throw new StatusError({ code: 503, reason: 'ServiceUnavailable', message: 'apiserver is shutting down' });
    }
    return false;
  }

  // #lastOnConnection: the request's answer is the last on its connection (HTTP/1.1: `Connection: close`; HTTP/2: GOAWAY).
  #lastOnConnection(entry: InFlight): void {
    entry.res.shouldKeepAlive = false;
    goAway(entry.session);
  }

  #track(res: ServerResponse, req: IncomingMessage): InFlight {
    // Only connections the server accepted (app.inject's requests have a stand-in socket); on HTTP/2 the TLS socket
    // of the session the request is a stream of.
    const own = connectionOf(req);
    const socket = this.#sockets.has(own) ? own : undefined;
    const session = isHttp2(req) ? req.stream.session : undefined;
    const entry: InFlight = { req, res, socket, session, prev: undefined, next: undefined };
    this.#inFlight.add(entry);
    return entry;
  }

  // #untrack is the end of a tracked request (its response closed).
  #untrack(entry: InFlight): void {
    this.#inFlight.remove(entry);
    const { res, socket } = entry;
    if (this.#phase !== 'serving' && res.statusCode !== 429 && res.statusCode !== 503) this.#counts.answered++;
    // A hijacked response (a watch) keeps its connection alive after its end: close it once nothing else runs on it.
    if (socket && this.#reached('notAccepting') && !this.#busy(socket)) this.#endSocket(socket);
    this.#notify();
  }

  #busy(socket: Socket): boolean {
    for (const r of this.#inFlight) if (r.socket === socket) return true;
    return false;
  }

  // #stopListening closes the listener only: server.close() would also call closeIdleConnections, which may destroy
  // a connection whose last response is still being written. Idle connections are ended on the next turn of the
  // event loop, once requests that already reached them have been read: those get their 503 rather than a dropped
  // connection.
  #stopListening(): void {
    const server = this.#app.server as NetServer;
    if (server.listening) NetServer.prototype.close.call(server);
    setImmediate(() => {
      for (const s of this.#sockets) if (!this.#busy(s)) this.#endSocket(s);
    });
  }

  // #endSocket ends a connection after what was written to it (an HTTP/2 one with a GOAWAY), and drops it if the
  // client does not close its side.
  #endSocket(s: Socket): void {
    if (this.#ending.has(s) || s.destroyed) return;
    this.#ending.add(s);
    const session = sessionOf(s);
    if (session) goAway(session);
    else s.end();
    setTimeout(() => s.destroy(), CONNECTION_CLOSE_GRACE_MS).unref();
  }

  // #endWatches ends the open watches (#paceWatchEnds), then drops the connections of those whose client did not
  // take the end within WATCH_CLOSE_GRACE_MS (a WebSocket that never answers the close frame, a stalled reader).
  async #endWatches(): Promise<void> {
    await this.#paceWatchEnds();
    const watchRequests = () => [...this.#inFlight].filter((r) => requestAttributes(r.req.method ?? 'GET', r.req.url ?? '/').verb === 'watch');
    await this.#until(() => watchRequests().length === 0, WATCH_CLOSE_GRACE_MS);
    // An HTTP/2 watch is one stream of a shared connection: only the stream is reset.
    for (const r of watchRequests()) (r.session ? r.res : (r.socket ?? r.res)).destroy();
  }

  // #paceWatchEnds ends the open watches: all at once, or at kube's pace over the watch grace period (at least
  // MIN_WATCH_END_RATE per second), the rest when the period is over.
  async #paceWatchEnds(): Promise<void> {
    const grace = this.#settings.watchGraceMs;
    if (grace <= 0 || this.#watches.size === 0) {
      this.#sweepWatches = true;
      this.#watches.closeAll();
      return;
    }
    const perSecond = Math.max(this.#watches.size / (grace / 1000), MIN_WATCH_END_RATE);
    const deadline = performance.now() + grace;
    let budget = 0;
    while (this.#watches.size > 0 && performance.now() < deadline) {
      budget += (perSecond * TICK_MS) / 1000;
      const n = Math.floor(budget);
      if (n > 0) {
        budget -= n;
        this.#watches.closeSome(n);
      }
      await sleep(TICK_MS);
    }
    this.#sweepWatches = true;
    this.#watches.closeAll();
  }

  // #drain waits until no request runs any more, at most `ms`; a watch that began before step 3 but registered
  // after it is ended as it appears (once the paced ending is over). Resolves with whether everything finished.
  async #drain(ms: number): Promise<boolean> {
    return this.#until(() => {
      if (this.#sweepWatches && this.#watches.size > 0) this.#watches.closeAll();
      return this.#inFlight.size === 0;
    }, ms);
  }

  // #until resolves true once done() holds (checked on every request or connection end and every tick), false at the bound.
  async #until(done: () => boolean, ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    while (!done()) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await new Promise<void>((r) => {
        const wake = () => {
          clearTimeout(t);
          this.#waiters.delete(wake);
          r();
        };
        const t = setTimeout(wake, Math.min(left, 100));
        this.#waiters.add(wake);
      });
    }
    return true;
  }

  #notify(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  #reached(p: Phase): boolean {
    return ORDER.indexOf(this.#phase) >= ORDER.indexOf(p);
  }
}

// isExempt is with_retry_after.go isRequestExemptFromRetryAfter: kube-apiserver's own loopback client, health
// probes and metrics scraping.
function isExempt(req: IncomingMessage): boolean {
  if ((req.headers['user-agent'] ?? '').startsWith('kube-apiserver/')) return true;
  const path = (req.url ?? '').split('?')[0] ?? '';
  return EXEMPT_PREFIXES.some((p) => path.startsWith(p));
}

/** shutdownDeadlineMs is how long a whole shutdown may take before the process gives up and exits 1. */
export function shutdownDeadlineMs(s: ShutdownSettings): number {
  return (s.delayMs ?? 0) + (s.watchGraceMs ?? 0) + (s.drainTimeoutMs ?? DEFAULT_DRAIN_TIMEOUT_MS) + ANSWER_GRACE_MS + CONNECTION_CLOSE_GRACE_MS + 15_000;
}
