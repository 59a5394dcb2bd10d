/**
 * @module server/connections
 * The server speaks HTTP/2 (ALPN `h2`) and HTTP/1.1 on one port, as kube-apiserver does, so kube-apiserver's
 * aggregator proxy multiplexes its requests to us over few connections instead of opening one TLS connection per
 * request in flight. What differs between the two below fastify is handled by util/http-connection.ts.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2, { type Http2ServerRequest, type Http2ServerResponse, type Http2Stream, type ServerHttp2Session } from 'node:http2';
import type { Server as NetServer } from 'node:net';
import { goAway } from '../util/http-connection.js';
import { answerTooLarge, http2HeaderOptions } from './header-limits.js';

/** HTTP2_MAX_STREAMS is k8s.io/apiserver's default MaxConcurrentStreams (secure_serving.go, without --http2-max-streams-per-connection). */
export const HTTP2_MAX_STREAMS = 100;

/** Http1Options are what Node's HTTPS server takes for HTTP/1.x and its HTTP/2 server does not read from its options. */
export interface Http1Options {
  maxHeaderSize: number;
  requireHostHeader: boolean;
  headersTimeout: number;
  requestTimeout: number;
  connectionsCheckingInterval: number;
  keepAliveTimeout: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * createDualServer is the HTTPS server of both protocols: Node's HTTP/2 server with HTTP/1.1 still offered in ALPN
 * (and taken by a client that offers no ALPN). Its HTTP/1.1 connections behave as those of Node's HTTPS server with
 * the same options: the HTTP/2 server reads the HTTP/1 options from its own properties, not its options, so they
 * are set there. An HTTP/2 connection idle (no stream open) for keepAliveTimeout gets a GOAWAY, as Go's
 * http2.Server IdleTimeout. closeAllConnections drops every connection of either protocol. HTTP/2 headers are
 * bounded as kube-apiserver bounds them (header-limits.ts): a request over the limit gets its 431 here.
 */
export function createDualServer(tlsOptions: Record<string, unknown>, http1: Http1Options, maxStreams: number, handler: Handler): NetServer {
  const headers = http2HeaderOptions();
  const server = http2.createSecureServer(
    {
      noDelay: true,
      ...tlsOptions,
      allowHTTP1: true,
      maxHeaderListPairs: headers.maxHeaderListPairs,
      settings: { maxConcurrentStreams: maxStreams, ...headers.settings },
    },
    ((req: Http2ServerRequest, res: Http2ServerResponse) => {
      if (!answerTooLarge(req, res)) handler(req as unknown as IncomingMessage, res as unknown as ServerResponse);
    }) as (req: Http2ServerRequest, res: Http2ServerResponse) => void,
  );
  Object.assign(server, http1);
  const sessions = new Set<ServerHttp2Session>();
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    let open = 0;
    session.on('stream', (stream: Http2Stream) => {
      open++;
      stream.once('close', () => open--);
    });
    session.setTimeout(http1.keepAliveTimeout, () => {
      if (open === 0) goAway(session);
    });
  });
  const closeHttp1 = (http.Server.prototype as unknown as { closeAllConnections(this: unknown): void }).closeAllConnections;
  Object.defineProperty(server, 'closeAllConnections', {
    value: function closeAllConnections(this: unknown) {
      closeHttp1.call(this);
      for (const s of sessions) s.destroy();
    },
  });
  return server as unknown as NetServer;
}
