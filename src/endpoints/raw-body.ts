/**
 * @module endpoints/raw-body
 * A copy of a request body's bytes, for the typed decoders that must see JSON as Go does: kube-apiserver decodes a
 * DeleteOptions or an autoscaling/v1 Scale straight from the bytes, so a literal such as `1e3` or
 * `-9223372036854775809` is not an int64 there, while the parsed body only has the number it rounds to.
 * Entry points: keepRawBody (a route's preParsing hook), rawBodyOf.
 */
import { PassThrough, type Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { announcesBody } from '../util/http-connection.js';

// Past the body limit the parser refuses the request anyway (413); the copy stops there.
const MAX_COPY_BYTES = 3 * 1024 * 1024 + 1;

const copies = new WeakMap<FastifyRequest, Buffer[]>();

/**
 * keepRawBody returns a preParsing hook that keeps the bytes of the bodies `wanted` picks (the stream flows on).
 * A request that announces no body (no Content-Length above 0, no Transfer-Encoding, on HTTP/2 a stream ended with
 * its headers) has nothing to keep.
 */
export function keepRawBody(wanted: (req: FastifyRequest) => boolean) {
  return (req: FastifyRequest, _reply: unknown, payload: Readable, done: (err: Error | null, body?: Readable) => void): void => {
    if (!announcesBody(req.raw) || !wanted(req)) return done(null, payload);
    const chunks: Buffer[] = [];
    let size = 0;
    copies.set(req, chunks);
    payload.on('data', (c: Buffer) => {
      if (size < MAX_COPY_BYTES) chunks.push(c);
      size += c.length;
    });
    const tee = new PassThrough();
    payload.on('error', (e) => tee.destroy(e));
    done(null, payload.pipe(tee));
  };
}

/** rawBodyOf is the kept copy of a request's body (undefined when none was kept). */
export function rawBodyOf(req: FastifyRequest): Buffer | undefined {
  const chunks = copies.get(req);
  return chunks ? Buffer.concat(chunks) : undefined;
}
