/**
 * @module server/request-done
 * The end of every request, hijacked ones included: fastify runs onResponse only for replies it sends, so a watch
 * (which takes over the socket) would otherwise never be logged, counted or untracked.
 *
 * Entry points: installRequestEnd (first among the onRequest hooks), onResponseClosed (when the raw response
 * closes: answered, cut or hijacked and ended), onRequestDone (once per request, with its status and duration).
 *
 * One listener per request for all of them: a `close` listener that is the same function for every request, the
 * reply found through a property of the raw response, instead of four modules each adding a closure, a `once`
 * wrapper and a weak-collection entry per request (with util/in-flight-list, this took a GET's CPU time from 64 to
 * 52 µs: `node test/bench/ab.mjs` against 254219b).
 */
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** RequestDone receives a request when its response has ended. */
export type RequestDone = (req: FastifyRequest, statusCode: number, elapsedMs: number) => void;

/** ResponseClosed receives a request when its raw response closes. */
export type ResponseClosed = (req: FastifyRequest) => void;

const REPLY = Symbol('fastify reply of this raw response');
const REPORTED = Symbol('onRequestDone callbacks ran');

type Tracked = ServerResponse & { [REPLY]?: FastifyReply };
type Reported = FastifyRequest & { [REPORTED]?: boolean };

interface Callbacks {
  done: RequestDone[];
  closed: ResponseClosed[];
}

// Per app, not per request.
const installed = new WeakMap<FastifyInstance, Callbacks>();

/**
 * installRequestEnd adds the hooks that call back at every request's end. Call it before any other onRequest hook:
 * a hook before it that answers (a refusal) would leave that request without its end.
 */
export function installRequestEnd(app: FastifyInstance): void {
  callbacksOf(app);
}

/** onResponseClosed registers `cb` for the close of every request's raw response. */
export function onResponseClosed(app: FastifyInstance, cb: ResponseClosed): void {
  callbacksOf(app).closed.push(cb);
}

/** onRequestDone registers `cb` for every request of `app`, once per request. */
export function onRequestDone(app: FastifyInstance, cb: RequestDone): void {
  callbacksOf(app).done.push(cb);
}

function callbacksOf(app: FastifyInstance): Callbacks {
  const known = installed.get(app);
  if (known) return known;
  const cbs: Callbacks = { done: [], closed: [] };
  installed.set(app, cbs);
  const report = (req: FastifyRequest, code: number, ms: number) => {
    const r = req as Reported;
    if (r[REPORTED]) return;
    r[REPORTED] = true;
    for (const cb of cbs.done) cb(req, code, ms);
  };
  // The one `close` listener of every request (`this` is the raw response).
  function closed(this: Tracked): void {
    const reply = this[REPLY];
    if (!reply) return;
    for (const cb of cbs.closed) cb(reply.request);
    // Whichever comes first reports: onResponse for replies fastify sends, the close for hijacked ones.
    report(reply.request, this.statusCode, reply.elapsedTime);
  }
  app.addHook('onRequest', (_req, reply, next) => {
    const res = reply.raw as Tracked;
    res[REPLY] = reply;
    res.on('close', closed);
    next();
  });
  app.addHook('onResponse', (req, reply, next) => {
    report(req, reply.statusCode, reply.elapsedTime);
    next();
  });
  return cbs;
}
