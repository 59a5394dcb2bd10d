/**
 * @module server/request-done
 * Calls back once per finished request, hijacked ones included: fastify runs onResponse only for replies it sends,
 * so a watch (which takes over the socket) would otherwise never be logged or counted.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** RequestDone receives a request when its response has ended. */
export type RequestDone = (req: FastifyRequest, statusCode: number, elapsedMs: number) => void;

/** onRequestDone registers `cb` for every request of `app`. */
export function onRequestDone(app: FastifyInstance, cb: RequestDone): void {
  const done = new WeakSet<FastifyRequest>();
  const finish = (req: FastifyRequest, code: number, ms: number) => {
    if (done.has(req)) return;
    done.add(req);
    cb(req, code, ms);
  };
  app.addHook('onRequest', (req, reply, next) => {
    const started = performance.now();
    // Whichever comes first reports: onResponse for replies fastify sends, the socket's close for hijacked ones.
    reply.raw.once('close', () => finish(req, reply.raw.statusCode, performance.now() - started));
    next();
  });
  app.addHook('onResponse', (req, reply, next) => {
    finish(req, reply.statusCode, reply.elapsedTime);
    next();
  });
}
