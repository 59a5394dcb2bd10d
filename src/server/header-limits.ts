/**
 * @module server/header-limits
 * How many request headers the server takes: as many as fit in kube-apiserver's limit, whatever their number. The
 * front proxy (kube-apiserver's aggregator) sends one X-Remote-Group line per group of the user, so a user in a
 * thousand groups is a thousand header lines (kubernetes#142607: users with ~500 groups got 431 from kube-apiserver
 * itself until it raised its limit). kube-apiserver 1.37 bounds headers by bytes only: Go's MaxHeaderBytes, 1 MiB,
 * on HTTP/1.1 (measured: 3,000 and 12,000 groups of 40 bytes arrive whole, 20,000 are 431), and on HTTP/2 the
 * SETTINGS_MAX_HEADER_LIST_SIZE it advertises, 1 MiB + 320 bytes (x/net/http2 maxHeaderListSize), counted as
 * RFC 7541 §4.1 counts a header list: each field's name and value plus 32.
 *
 * Node counts lines as well, and its defaults are far lower:
 * - HTTP/1.1 hands a request's first 1,000 header lines to its handlers (server.maxHeadersCount, 2,000 names and
 *   values) and silently drops the rest, so a user's last groups went missing. Here no count applies;
 *   MAX_HEADER_BYTES (client-errors.ts) does.
 * - HTTP/2 resets a stream of more than 128 fields (maxHeaderListPairs) with ENHANCE_YOUR_CALM. Here the pair limit
 *   lies beyond what fits in the byte limit (each field costs at least 32 bytes), so only bytes count.
 * - Over the limit, kube-apiserver answers HTTP/2 431 (or, far over it, ends the connection); Node would reset the
 *   stream. So Node is let take twice the limit, and what is over the limit gets a 431 Status here, as HTTP/1.1's
 *   does (client-errors.ts); beyond twice the limit Node resets the stream. nghttp2 also refuses one header field
 *   whose encoded value exceeds 64 KiB (COMPRESSION_ERROR), which Go would take.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Server as NetServer } from 'node:net';
import { StatusError } from '../apis/meta/errors.js';
import { isHttp2, resetUnreadBody } from '../util/http-connection.js';

/** HEADER_FIELD_OVERHEAD is what RFC 7541 §4.1 adds to each field's name and value in a header list's size. */
export const HEADER_FIELD_OVERHEAD = 32;

/** MAX_HEADER_LIST_SIZE is kube-apiserver's HTTP/2 limit: MaxHeaderBytes (1 MiB) + 10 typical fields × 32. */
export const MAX_HEADER_LIST_SIZE = (1 << 20) + 10 * HEADER_FIELD_OVERHEAD;

/**
 * MAX_FRAME_SIZE is kube-apiserver's SETTINGS_MAX_FRAME_SIZE (secure_serving.go: MaxReadFrameSize 256 KiB). It
 * bounds headers too: nghttp2 ends the connection when a header block runs past 8 CONTINUATION frames (its defence
 * against CONTINUATION floods, not configurable from Node), so at the default 16 KiB frames a block could not pass
 * ~144 KiB encoded (about 4,000 groups of 40 bytes). Go's client (kube-apiserver's proxy) cuts its blocks at the
 * frame size its peer allows once it has the peer's SETTINGS: at 256 KiB, 9 frames hold more than the limit
 * (measured: 24,000 groups; the first request of a new connection still goes out in 16 KiB frames).
 */
export const MAX_FRAME_SIZE = 256 * 1024;

/** http2HeaderOptions are the options of Node's HTTP/2 server that let the byte limit alone decide (see above). */
export function http2HeaderOptions(): { maxHeaderListPairs: number; settings: { maxHeaderListSize: number; maxFrameSize: number } } {
  const accepted = 2 * MAX_HEADER_LIST_SIZE;
  return { maxHeaderListPairs: Math.ceil(accepted / HEADER_FIELD_OVERHEAD), settings: { maxHeaderListSize: accepted, maxFrameSize: MAX_FRAME_SIZE } };
}

/** liftHeaderCount removes Node's count of HTTP/1.1 header lines (the byte limit stays). */
export function liftHeaderCount(server: NetServer): void {
  (server as unknown as { maxHeadersCount: number }).maxHeadersCount = 0;
}

/** headerListSize is an HTTP/2 request's header list size as RFC 7541 counts it, pseudo-headers included. */
export function headerListSize(rawHeaders: readonly string[]): number {
  let size = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    size += Buffer.byteLength(rawHeaders[i] as string, 'latin1') + Buffer.byteLength(rawHeaders[i + 1] as string, 'latin1') + HEADER_FIELD_OVERHEAD;
  }
  return size;
}

/**
 * answerTooLarge answers an HTTP/2 request whose headers exceed MAX_HEADER_LIST_SIZE with HTTP/1.1's 431 Status and
 * returns true; any other request is left alone (false). Its unread body is refused with the stream's reset.
 */
export function answerTooLarge(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): boolean {
  if (!isHttp2(req) || headerListSize(req.rawHeaders) <= MAX_HEADER_LIST_SIZE) return false;
  const body = JSON.stringify(new StatusError({ code: 431, message: 'Request Header Fields Too Large' }).status);
  resetUnreadBody(req);
  (res as Http2ServerResponse).writeHead(431, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  return true;
}
