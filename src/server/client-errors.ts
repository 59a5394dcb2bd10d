/**
 * @module server/client-errors
 * A metav1.Status for everything a client can send that the routes never see, where kube-apiserver (Go's net/http)
 * answers on its own with a text body or nothing:
 *
 * | request                                            | kube-apiserver                         | here (Status)              |
 * |----------------------------------------------------|----------------------------------------|----------------------------|
 * | request line + headers over 1 MiB (a long URL too) | 431, text (MaxHeaderBytes 1 << 20)     | 431                        |
 * | malformed request line, header, chunk, length      | 400, text (`400 Bad Request[: why]`)   | 400 BadRequest             |
 * | a method Node cannot parse (`FOO`, `get`)          | 405 MethodNotAllowed on a resource     | 405 MethodNotAllowed       |
 * | a method no route serves (PROPFIND, TRACE, OPTIONS, CONNECT) on a resource | 405 ` is not supported on resources of kind "websites.…"` | the same |
 * | a bad escape in the path (`%zz`)                   | 400, text                              | 400 BadRequest             |
 * | an escape of bytes that are no UTF-8 (`%ff`)       | 404 (no object has such a name)        | 404 NotFound               |
 * | HTTP/1.1 without Host                              | 400 `missing required Host header`     | 400 BadRequest             |
 * | a version other than HTTP/1.x                      | 505 `unsupported protocol version`     | 505                        |
 * | `Expect:` other than 100-continue                  | 417, text                              | 417                        |
 * | headers not received in time                       | connection closed                      | 408, closed                |
 *
 * metav1 names no reason for 408, 414, 417, 431 or 505: those Status carry the code and no reason, which is what
 * client-go itself assigns a response it cannot decode with such a code (errors.NewGenericServerResponse).
 *
 * A response that ends a connection the client is still sending on (a body too large, a request timed out) would
 * make the kernel reset it, and the client could lose the answer it has not read yet: closeGently lets the rest of
 * the request drain for a moment after the answer, as Go's server does (closeWriteAndWait, rstAvoidanceDelay).
 */
import { ServerResponse, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { badRequest, methodNotSupported, notFoundPath, StatusError, timeout } from '../apis/meta/errors.js';
import { requestAttributes } from '../auth/request-info.js';
import { dropBody, isHttp2, resetUnreadBody, type RawRequest } from '../util/http-connection.js';
import { answerRaw } from '../util/raw-answer.js';
import type { Http2ServerResponse } from 'node:http2';

/** MAX_HEADER_BYTES is kube-apiserver's MaxHeaderBytes (secure_serving.go: 1 << 20) plus Go's 4096 bytes of slack. */
export const MAX_HEADER_BYTES = (1 << 20) + 4096;

/** How long a connection being closed keeps reading (and discarding) what the client still sends. */
const LINGER_MS = 2000;

/** httpParserOptions are the options of Node's HTTPS server that make its parser as lenient as Go's, no more. */
export const httpParserOptions = { maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: false };

/** largeUnreadBody: Go's server closes rather than drains more than maxPostHandlerReadBytes (256 KiB) of body. */
export function largeUnreadBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  return Number(req.headers['content-length'] ?? 0) > 256 * 1024;
}

// A Status with only a code and a message, for codes metav1 names no reason for.
const plainStatus = (code: number, message: string) => new StatusError({ code, message });

const lingering = new WeakSet<Socket>();

/**
 * closeGently makes the socket's coming close (Node ends a `Connection: close` response with destroySoon) a
 * half-close: the answer and a FIN go out, what the client still sends is read and dropped, and the socket is
 * destroyed once the client closes or LINGER_MS have passed.
 */
export function closeGently(socket: Socket | null | undefined): void {
  if (!socket || lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  socket.destroySoon = function destroySoonGently(this: Socket) {
    if (this.destroyed) return;
    this.end();
    this.resume();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
  };
}

// writeRawStatus answers on a socket no HTTP response object is attached to, then closes it gently.
function writeRawStatus(socket: Duplex, error: StatusError): void {
  const body = JSON.stringify(error.status);
  const head = `HTTP/1.1 ${error.code} ${STATUS_CODES[error.code] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`;
  socket.end(head + body);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

// A request line as Go reads it: a method token, a target, a version.
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/\d\.\d\r?$/m;

// statusForParseError is the answer to a request Node's HTTP parser refused (err.code is llhttp's).
function statusForParseError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): StatusError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return plainStatus(431, 'Request Header Fields Too Large');
    case 'HPE_INVALID_METHOD': {
      // A well-formed request with a method Node does not know (Go accepts any token): MethodNotAllowed.
      const line = err.rawPacket?.subarray(0, 8192).toString('latin1').split('\n')[0] ?? '';
      if (REQUEST_LINE.test(line))
        return new StatusError({ code: 405, reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource' });
      return badRequest('malformed HTTP request');
    }
    case 'HPE_INVALID_VERSION':
      // Node refuses what it cannot read as a version (`HTTP/1.10`, a bare LF after it): Go says malformed.
      return badRequest('malformed HTTP version');
    case 'HPE_INVALID_HEADER_TOKEN':
      return badRequest('invalid header name');
    case 'HPE_INVALID_CHUNK_SIZE':
      return badRequest('invalid byte in chunk length');
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return badRequest('bad Content-Length');
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return badRequest('invalid Transfer-Encoding');
    default:
      return badRequest('malformed HTTP request');
  }
}

/**
 * clientErrorHandler is fastify's clientErrorHandler: the answer to a request Node's HTTP parser refused or timed
 * out, written straight to the socket (no response object exists for it).
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // Only HTTP-level errors can be answered in HTTP: a TLS failure (a handshake that never completes) just closes.
  if (err.code !== 'ERR_HTTP_REQUEST_TIMEOUT' && !err.code?.startsWith('HPE_')) {
    socket.destroy();
    return;
  }
  const res = (socket as Carrying)[IN_FLIGHT];
  this.log.debug({ err }, 'client error');
  if (res) {
    // The request's headers were fine; its body is what failed (a bad chunk) or never ended (the request timeout's
    // backstop). Once its answer has begun, only ending the connection is left.
    const req = res.req;
    if (res.headersSent) {
      socket.destroy();
      return;
    }
    const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? requestTimedOut() : statusForParseError(err);
    // A body being read fails with the Status, so the route's error handler answers it; else it is answered here.
    if (req.listenerCount('error') > 0) {
      req.emit('error', status);
      return;
    }
    closeGently(socket as Socket);
    // Past fastify's reply (no onSend runs for it): answerRaw records it for the audit log.
    answerRaw(res, status.code, status.status, true);
    return;
  }
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // Headers that never came: kube closes silently; a slow client gets a Status first.
  writeRawStatus(socket, err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? plainStatus(408, 'the request headers did not arrive in time') : statusForParseError(err));
}

// The response in flight on each socket, so an error in its body is answered through it, never beside it: a property
// of the socket, cleared by one listener shared by all responses (no closure or table entry per request).
const IN_FLIGHT = Symbol('response in flight on this socket');
type Carrying = Duplex & { [IN_FLIGHT]?: ServerResponse | undefined };
function clearInFlight(this: ServerResponse): void {
  const socket = this.req.socket as Carrying;
  if (socket[IN_FLIGHT] === this) socket[IN_FLIGHT] = undefined;
}

/** requestTimedOut is kube's answer to a request past its deadline (pkg/server/filters/timeout.go). */
export const requestTimedOut = () => timeout('request did not complete within the allotted timeout');

/**
 * frameworkErrors answers what fastify's router refuses before any hook: a malformed escape in the path is Go's 400
 * (url.ParseRequestURI: `invalid URL escape "%zz"`); well-formed escapes of bytes that are no UTF-8 (`%ff`) are a
 * name or namespace kube-apiserver looks up and does not find, so 404.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  let status: StatusError;
  if (err.code === 'FST_ERR_BAD_URL') {
    const bad = /%(?![0-9A-Fa-f]{2}).{0,2}/s.exec(req.url.split('?')[0] ?? '');
    status = bad ? badRequest(`invalid URL escape ${JSON.stringify(bad[0])}`) : notFoundPath();
  } else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') status = plainStatus(414, 'URI Too Long');
  else status = badRequest(err.message);
  reply.code(status.code).type('application/json').send(status.status);
}

const SERVED_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** ResourceKind is what unsupportedMethod needs of a resource. */
export interface ResourceKind {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

/**
 * unsupportedMethod is kube's answer to a method no route serves, on the path of one of `kinds` (a collection
 * in a namespace, an object or a subresource): 405 with the empty verb RequestInfo gives such a method
 * (` is not supported on resources of kind "websites.extensions.example.com"`). Elsewhere: undefined (404).
 */
export function unsupportedMethod(req: FastifyRequest, kinds: readonly ResourceKind[]): StatusError | undefined {
  if (SERVED_METHODS.has(req.method)) return undefined;
  const a = requestAttributes(req.method, req.url);
  if (!a.isResourceRequest) return undefined;
  const def = kinds.find((k) => k.group === a.apiGroup && k.version === a.apiVersion && k.plural === a.resource);
  if (!def || (def.namespaced && a.namespace === '')) return undefined;
  return methodNotSupported({ group: def.group, resource: def.plural }, '');
}

/**
 * installClientErrors wires what fastify leaves to Node: CONNECT requests go through the router (hooks included,
 * so they are authenticated first) instead of being dropped; checks Go's server makes before any handler (Host,
 * protocol version) run first among the onRequest hooks; unknown `Expect:` values get a Status. A HEAD is served
 * as the GET it stands for (kube-apiserver answers it like a GET without a body; a watch is never served on one).
 */
export function installClientErrors(app: FastifyInstance): void {
  app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // HTTP/1.x only: an HTTP/2 request's socket is the connection's, shared by its streams, and its errors are the stream's.
    if (req.httpVersionMajor !== 1) return;
    (req.socket as Carrying)[IN_FLIGHT] = res;
    res.on('close', clearInFlight);
  });
  app.server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    const res = new ServerResponse(req);
    res.assignSocket(socket as Socket);
    res.shouldKeepAlive = false;
    res.on('finish', () => socket.end());
    app.routing(req, res);
  });
  app.server.on('checkExpectation', (req: RawRequest, res: ServerResponse) => {
    const e = plainStatus(417, 'Expectation Failed');
    // HTTP/2: the stream is reset once answered, the connection stays; HTTP/1.1: the connection closes.
    if (!resetUnreadBody(req)) closeGently(res.socket as Socket);
    res.writeHead(417, { 'content-type': 'application/json', ...(isHttp2(req) ? {} : { connection: 'close' }) }).end(JSON.stringify(e.status));
  });
  app.addHook('onRequest', (req, reply, done) => {
    const raw = req.raw;
    // HTTP/2 came through ALPN (h2); its :authority stands for Host and may be absent, as Go's server allows.
    const http2 = isHttp2(raw);
    if (!http2 && raw.httpVersionMajor !== 1) return done(plainStatus(505, 'unsupported protocol version'));
    if (!http2 && raw.httpVersionMinor >= 1 && !raw.headers.host) return done(badRequest('missing required Host header'));
    if (raw.method === 'HEAD' && requestAttributes('GET', req.url).verb !== 'watch') {
      raw.method = 'GET';
      if (http2) dropBody(reply.raw as unknown as Http2ServerResponse);
    }
    done();
  });
}
