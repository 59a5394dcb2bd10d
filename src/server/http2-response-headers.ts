/**
 * @module server/http2-response-headers
 * HTTP/2 has no connection-specific header fields (RFC 9113 §8.2.2): Connection, Keep-Alive, Proxy-Connection,
 * Transfer-Encoding and Upgrade mean nothing on a stream. Node drops a `Connection` header from an HTTP/2 response
 * with a process warning (UnsupportedWarning: "The provided connection header is not valid...") and refuses the
 * others (ERR_HTTP2_INVALID_CONNECTION_HEADERS). fastify sets `Connection: close` on its own when a request body
 * fails to parse, so that HTTP/1.1 stops reading a body nobody reads; on HTTP/2 the stream's reset does that
 * (util/http-connection.ts resetUnreadBody). So every HTTP/2 reply loses them before it is written; HTTP/1.1 keeps them.
 */
import type { FastifyInstance } from 'fastify';
import { isHttp2 } from '../util/http-connection.js';

/** CONNECTION_SPECIFIC are the header fields RFC 9113 §8.2.2 forbids in HTTP/2 (TE is never a response header). */
export const CONNECTION_SPECIFIC = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'] as const;

/** installHttp2ResponseHeaders drops the connection-specific headers of every HTTP/2 reply (an onSend hook). */
export function installHttp2ResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', (req, reply, payload, done) => {
    if (isHttp2(req.raw)) {
      for (const h of CONNECTION_SPECIFIC) if (reply.hasHeader(h)) reply.removeHeader(h);
    }
    done(null, payload);
  });
}
