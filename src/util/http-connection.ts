/**
 * @module util/http-connection
 * The server speaks HTTP/2 (ALPN `h2`) and HTTP/1.1 on one port (server/connections.ts). What differs between the
 * two for code that reaches below fastify, and the helpers that hide it:
 *
 * - On HTTP/2 a request's `socket` is a proxy (one per stream) of the connection's TLS socket: connectionOf gives the
 *   TLS socket itself, the same object for every stream of the connection (what 'secureConnection' gave).
 * - HTTP/2 has no `Connection` header (Node throws ERR_HTTP2_INVALID_CONNECTION_HEADERS on one). Where an answer
 *   closes its connection on HTTP/1.1 (`Connection: close`), on HTTP/2 the connection gets a GOAWAY instead: streams
 *   already begun finish, new ones go to another connection. Go's http2 server does the same with a handler's
 *   `Connection: close` (x/net/http2 server.go writeChunk: startGracefulShutdown).
 * - An answer given before the request body was all read ends the stream with RST_STREAM(NO_ERROR) once the answer
 *   is out (RFC 9113 §8.1), rather than closing a connection other requests share.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants as h2, type Http2ServerRequest, type Http2ServerResponse, type Http2Session, type ServerHttp2Session } from 'node:http2';
import type { Server as NetServer, Socket } from 'node:net';

/** RawRequest and RawResponse are what fastify's req.raw and reply.raw are on either protocol. */
export type RawRequest = IncomingMessage | Http2ServerRequest;
export type RawResponse = ServerResponse | Http2ServerResponse;

const OWN = Symbol('the TLS socket itself');
const SESSION = Symbol('the HTTP/2 session on this socket');
type Marked = Socket & { [OWN]?: Socket; [SESSION]?: ServerHttp2Session };

const marked = new WeakSet<object>();

/**
 * markConnections lets connectionOf and sessionOf find a request's connection and a connection's HTTP/2 session.
 * Once per server (later calls do nothing); call it before any of those are needed.
 */
export function markConnections(server: NetServer): void {
  if (marked.has(server)) return;
  marked.add(server);
  // Node's own 'secureConnection' listener (registered first) creates the session and emits 'session' before the
  // listener below runs: a property set through the session's socket proxy lands on the TLS socket.
  server.on('session', (session: ServerHttp2Session) => {
    (session.socket as Marked)[SESSION] = session;
  });
  server.on('secureConnection', (s: Marked) => {
    s[OWN] = s;
  });
}

/**
 * isHttp2 tells whether a request came over HTTP/2: a stream of a session. (Not its version: an HTTP/1 connection
 * may carry a request line saying HTTP/2.0, which is refused with 505.)
 */
export function isHttp2(raw: RawRequest): raw is Http2ServerRequest {
  return (raw as Partial<Http2ServerRequest>).stream !== undefined;
}

/** connectionOf is the connection's socket of a request: the TLS socket on both protocols (the stand-in of app.inject too). */
export function connectionOf(raw: RawRequest): Socket {
  const s = raw.socket as Marked;
  return s?.[OWN] ?? s;
}

/** sessionOf is the HTTP/2 session running over a connection's socket (undefined on HTTP/1.x). */
export function sessionOf(socket: Socket): ServerHttp2Session | undefined {
  return (socket as Marked)[SESSION];
}

/** goAway sends an HTTP/2 session its GOAWAY: streams begun finish, then the connection closes. */
export function goAway(session: Http2Session | undefined): void {
  if (session && !session.closed && !session.destroyed) session.close();
}

/**
 * resetUnreadBody: on HTTP/2, once the answer is out, the stream ends with RST_STREAM(NO_ERROR) when the client is
 * still sending a body nobody will read (HTTP/1.1 closes the connection instead), as Go's http2 server does when a
 * handler returns with the stream still open on the client's side. A client that already ended its side gets no
 * reset: a reset racing the end of the answer can cost a client (Go's) the answer. Returns whether it applied
 * (HTTP/2), whatever it had to do.
 */
export function resetUnreadBody(raw: RawRequest): boolean {
  if (!isHttp2(raw)) return false;
  const stream = raw.stream;
  if (raw.complete || stream.endAfterHeaders || stream.closed || stream.destroyed || stream.state?.remoteClose) return true;
  // close(NO_ERROR) on a stream whose writable side is ending waits for it to finish, then sends the RST_STREAM.
  const reset = () => {
    if (!stream.closed && !stream.destroyed && !stream.state?.remoteClose) stream.close(h2.NGHTTP2_NO_ERROR);
  };
  if (stream.writableEnded) reset();
  else stream.once('finish', reset);
  return true;
}

/**
 * announcesBody tells whether a request comes with a body: on HTTP/1.x a Transfer-Encoding or a Content-Length
 * above 0; on HTTP/2, where a body may come without Content-Length (DATA frames until END_STREAM), also any
 * request whose HEADERS did not end its stream.
 */
export function announcesBody(raw: RawRequest): boolean {
  const h = raw.headers;
  if (h['transfer-encoding'] !== undefined) return true;
  const length = h['content-length'];
  if (length !== undefined) return Number(length) > 0;
  return isHttp2(raw) && !raw.stream.endAfterHeaders;
}

/**
 * dropBody makes an HTTP/2 response to a HEAD served as a GET send its headers only: Node's HTTP/1 response drops a
 * HEAD's body on its own, its HTTP/2 one ends the stream with the headers and would fail the body's writes.
 */
export function dropBody(res: Http2ServerResponse): void {
  type Cb = (err?: Error | null) => void;
  const end = res.end.bind(res) as (cb?: Cb) => Http2ServerResponse;
  res.write = ((_chunk: unknown, encoding?: unknown, cb?: unknown) => {
    const done = (typeof encoding === 'function' ? encoding : cb) as Cb | undefined;
    if (done) process.nextTick(done);
    return true;
  }) as Http2ServerResponse['write'];
  res.end = ((chunk?: unknown, encoding?: unknown, cb?: unknown) => {
    const done = [chunk, encoding, cb].find((a) => typeof a === 'function') as Cb | undefined;
    return end(done);
  }) as Http2ServerResponse['end'];
}
