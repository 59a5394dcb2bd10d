/**
 * @module endpoints/watch-websocket
 * Watch over WebSocket, as kube-apiserver serves it (k8s.io/apiserver pkg/endpoints/handlers/watch.go: a watch
 * request for which wsstream.IsWebSocketRequest holds is answered by golang.org/x/net/websocket's Handler, and
 * HandleWS sends each event as one message). Java clients (fabric8) and browser dashboards watch this way.
 *
 * ## Upgrade requests
 * Node hands every request carrying `Connection: upgrade` + `Upgrade` to the server's 'upgrade' listener instead
 * of the normal request path. routeUpgrades dispatches them through fastify's router all the same, so every
 * onRequest hook (authentication, authorization) and every route answers them exactly as it answers any request.
 * Only a watch upgrades; anything else gets its normal answer (kube ignores the Upgrade header outside watches),
 * with `Connection: close` since no HTTP parser is left on the connection.
 *
 * ## The handshake (x/net/websocket server.go newServerConn, hybi.go, Handler's checkOrigin)
 * After the request passed authentication, authorization and validation, in x/net's order: an empty
 * Sec-WebSocket-Key is 400 `mismatch challenge/response`; a Sec-WebSocket-Version other than 13 is 400
 * `missing or bad WebSocket Version` with `Sec-WebSocket-Version: 13`; no Origin header, or one that is not a
 * request URI, is 403 with an empty body; more than one subprotocol is 400 with an empty body. Those answers are
 * raw status lines, then the connection closes. Otherwise 101, echoing the one subprotocol offered, whatever it
 * is (`base64.binary.k8s.io`, `binary.k8s.io`, anything): x/net does not interpret it.
 *
 * ## Frames (watch.go HandleWS, websocketFramer)
 * One event per message, the exact bytes of the HTTP stream's line (`{"type":…,"object":…}` and a newline), in a
 * text frame (JSON encodes as text), whatever the subprotocol: the watch handler never base64-encodes. Messages
 * from the client are ignored (wsstream.IgnoreReceives). The server closes with 1000 on timeoutSeconds, after an
 * ERROR event (410 Expired and the like), and on shutdown, then ends the connection; a client's close ends the watch.
 *
 * Known differences, both for requests no conforming client sends: ws refuses (400) a Sec-WebSocket-Key that is not
 * 16 base64-encoded bytes and a subprotocol that is not an RFC 7230 token, where x/net upgrades anyway.
 *
 * ## Backpressure
 * The sink reports full while more than HIGH_WATER_BYTES of sent messages are not yet written to the socket: the
 * WatchStream then queues at most maxBufferedEvents and cuts the client off with 410, as for HTTP.
 */
import { STATUS_CODES, ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough, type Duplex, type Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocket, WebSocketServer } from 'ws';
import { streamWatch, type OpenSink, type WatchRequest } from './watch.js';

/** PendingUpgrade is the connection of a request that came through the 'upgrade' event. */
interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
  /** The server's WebSocket endpoint (one per server, so shutdown reaches exactly its own connections). */
  endpoint: Endpoint;
}

const upgrades = new WeakMap<IncomingMessage, PendingUpgrade>();

/** Bytes handed to a WebSocket but not yet to the OS beyond which the sink reports full (a socket's high-water mark). */
export const HIGH_WATER_BYTES = 64 * 1024;
/** On shutdown, how long a WebSocket may take to answer the server's close frame before it is dropped. */
const SHUTDOWN_GRACE_MS = 2000;
/** Client messages are ignored; this only bounds what one may make us buffer. */
const MAX_CLIENT_MESSAGE_BYTES = 64 * 1024;

// First value of a header, as Go's Header.Get reads it.
const first = (req: IncomingMessage, name: string): string | undefined => req.headersDistinct[name]?.[0];

// wsstream connectionUpgradeRegex: `upgrade` as one of the Connection tokens.
const CONNECTION_UPGRADE = /(^|.*,\s*)upgrade($|\s*,)/;

/** isWebSocketRequest is wsstream.IsWebSocketRequest: `Upgrade: websocket` (any case) and `Connection: …upgrade…`. */
export function isWebSocketRequest(req: IncomingMessage): boolean {
  if ((first(req, 'upgrade') ?? '').toLowerCase() !== 'websocket') return false;
  return CONNECTION_UPGRADE.test((first(req, 'connection') ?? '').toLowerCase());
}

/**
 * routeUpgrades sends the server's upgrade requests through fastify's router (hooks included) with a response
 * bound to their socket, and gives such requests their Content-Length body (Node leaves it on the socket).
 */
export function routeUpgrades(app: FastifyInstance): void {
  const endpoint = newEndpoint();
  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node removed its own listeners from this socket: a reset must not become an uncaught error.
    socket.on('error', () => socket.destroy());
    upgrades.set(req, { socket, head, endpoint });
    const res = new ServerResponse(req);
    res.assignSocket(socket as Socket);
    // No HTTP parser reads this connection any more: one answer, then it ends.
    res.shouldKeepAlive = false;
    res.on('finish', () => socket.end());
    app.routing(req, res);
  });
  app.addHook('preParsing', (request, _reply, payload, done) => done(null, upgradeBody(request.raw) ?? payload));
  // Shutdown ends every watch (preClose: WatchRegistry.closeAll), so each WebSocket gets its close frame. Node's
  // closeAllConnections skips upgraded sockets and server.close() waits for them: drop those that do not answer.
  app.addHook('preClose', async () => {
    if (endpoint.wss.clients.size === 0) return;
    setTimeout(() => {
      for (const ws of endpoint.wss.clients) ws.terminate();
    }, SHUTDOWN_GRACE_MS).unref();
  });
}

// upgradeBody is the Content-Length body of an upgrade request: what Node read past the headers, then the socket.
// A chunked body is not decoded (no client sends one with an Upgrade header); the route then sees an empty body.
function upgradeBody(req: IncomingMessage): Readable | undefined {
  const u = upgrades.get(req);
  const length = Number(req.headers['content-length'] ?? 0);
  if (!u || !Number.isSafeInteger(length) || length <= 0) return undefined;
  const body = new PassThrough();
  let left = length;
  const take = (chunk: Buffer) => {
    const part = chunk.subarray(0, left);
    left -= part.length;
    body.write(part);
    if (left === 0) finish();
  };
  const finish = () => {
    u.socket.off('data', take);
    u.socket.off('end', finish);
    u.socket.pause();
    body.end();
  };
  if (u.head.length) take(u.head);
  if (left > 0) {
    u.socket.on('data', take);
    u.socket.on('end', finish);
  }
  return body;
}

/** webSocketUpgrade returns the connection to upgrade when `req` is a WebSocket request that came as an upgrade. */
export function webSocketUpgrade(req: IncomingMessage): PendingUpgrade | undefined {
  const u = upgrades.get(req);
  return u && isWebSocketRequest(req) ? u : undefined;
}

/** Handshake is x/net/websocket's verdict on a request: the subprotocol to echo, or the raw error answer. */
export type Handshake = { ok: true; protocol: string | undefined } | { ok: false; code: number; headers: string[]; body: string };

/** checkHandshake applies x/net/websocket's server checks, in its order (ReadHandshake, checkOrigin, AcceptHandshake). */
export function checkHandshake(req: IncomingMessage): Handshake {
  if (!first(req, 'sec-websocket-key')) return { ok: false, code: 400, headers: [], body: 'mismatch challenge/response' };
  if (first(req, 'sec-websocket-version') !== '13') {
    return { ok: false, code: 400, headers: ['Sec-WebSocket-Version: 13'], body: 'missing or bad WebSocket Version' };
  }
  const offered = (first(req, 'sec-websocket-protocol') ?? '').trim();
  const protocols = offered === '' ? [] : offered.split(',').map((p) => p.trim());
  const origin = first(req, 'origin') ?? '';
  // websocket.Handler's checkOrigin: a missing Origin is "null origin", a malformed one a parse error; both 403.
  if (origin === '' || !isRequestURI(origin)) return { ok: false, code: 403, headers: [], body: '' };
  if (protocols.length > 1) return { ok: false, code: 400, headers: [], body: '' };
  return { ok: true, protocol: protocols[0] };
}

// isRequestURI approximates Go's url.ParseRequestURI: `*`, an absolute path, or an absolute URL with a scheme.
function isRequestURI(s: string): boolean {
  if (/[\x00-\x1f\x7f]/.test(s) || /%(?![0-9A-Fa-f]{2})/.test(s)) return false;
  if (s === '*' || s.startsWith('/')) return true;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(s);
  if (!scheme) return false;
  if (!s.slice(scheme[0].length).startsWith('//')) return true;
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

/** Endpoint is a server's ws endpoint, with the protocol chosen and the refusal reason of each request. */
interface Endpoint {
  wss: WebSocketServer;
  chosenProtocol: WeakMap<IncomingMessage, string>;
  refused: WeakMap<IncomingMessage, string>;
}

function newEndpoint(): Endpoint {
  const chosenProtocol = new WeakMap<IncomingMessage, string>();
  const refused = new WeakMap<IncomingMessage, string>();
  const wss = new WebSocketServer({
    noServer: true,
    // x/net negotiates no extension; compression would also hide how much a client has yet to read.
    perMessageDeflate: false,
    maxPayload: MAX_CLIENT_MESSAGE_BYTES,
    // x/net echoes the first line's single protocol as it is, whether or not it means anything to us.
    handleProtocols: (_offered, req) => chosenProtocol.get(req) ?? false,
  });
  // With a listener, ws leaves the answer to a handshake it refuses to us (it is stricter than x/net about the key).
  wss.on('wsClientError', (err, _socket, req) => refused.set(req, err.message));
  return { wss, chosenProtocol, refused };
}

// rawAnswer writes a bare status line, headers and body, as x/net does on a failed handshake, and closes.
function rawAnswer(socket: Duplex, code: number, headers: string[], body: string): void {
  socket.end(`HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n${body}`);
}

/**
 * serveWatchWebSocket completes the handshake of a watch and streams its events as WebSocket messages; it
 * resolves once the stream is live or ended. `res` is the request's response, kept for its status in the logs.
 */
export async function serveWatchWebSocket(u: PendingUpgrade, res: ServerResponse, w: WatchRequest): Promise<void> {
  const req = res.req;
  const verdict = checkHandshake(req);
  if (!verdict.ok) {
    res.statusCode = verdict.code;
    rawAnswer(u.socket, verdict.code, verdict.headers, verdict.body);
    return;
  }
  const { wss, chosenProtocol, refused } = u.endpoint;
  if (verdict.protocol !== undefined) chosenProtocol.set(req, verdict.protocol);
  let ws: WebSocket | undefined;
  // Without an asynchronous verifyClient, ws completes (or refuses) the handshake before handleUpgrade returns.
  wss.handleUpgrade(req, u.socket, u.head, (socket) => (ws = socket));
  if (!ws) {
    res.statusCode = 400;
    const why = refused.get(req);
    if (why !== undefined) rawAnswer(u.socket, 400, [], why);
    else u.socket.destroy();
    return;
  }
  res.statusCode = 101;
  await streamWatch(webSocketSink(ws, u.socket), w);
}

/**
 * webSocketSink sends each event as one text message on `ws` (whose connection is `socket`) and reports full while
 * the socket has not taken them.
 */
export function webSocketSink(ws: WebSocket, socket: Duplex): OpenSink {
  return (events) => {
    let unwritten = 0;
    let full = false;
    ws.on('close', () => events.closed());
    // ws closes the connection itself on a protocol or socket error; 'close' follows.
    ws.on('error', () => undefined);
    return {
      send(line) {
        const bytes = Buffer.byteLength(line);
        unwritten += bytes;
        ws.send(line, { binary: false }, () => {
          unwritten -= bytes;
          if (full && unwritten === 0) {
            full = false;
            events.drain();
          }
        });
        if (unwritten > HIGH_WATER_BYTES) full = true;
        return !full;
      },
      get closed() {
        return ws.readyState !== WebSocket.OPEN;
      },
      close() {
        if (ws.readyState !== WebSocket.OPEN) return;
        // x/net's Close sends close 1000 and closes the connection without waiting for the client's answer. Ending
        // the socket flushes what is still buffered first: a slow client still reads everything sent before, the
        // ERROR event of a cut-off included (ws destroys the connection 30 s later if the client never finishes).
        ws.close(1000);
        socket.end();
      },
    };
  };
}
