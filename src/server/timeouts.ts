/**
 * @module server/timeouts
 * kube-apiserver's time limits, for one fastify server:
 *
 * - Every request but a watch must be answered within `--request-timeout` (default 1m), counted from when its
 *   headers arrived, body upload included; a client's `?timeout=` shortens it (k8s.io/apiserver pkg/endpoints/
 *   filters/request_deadline.go: an unparsable one is 400 `invalid timeout specified in the request URL - time:
 *   invalid duration "x"`). Past it the client gets kube's 504 (pkg/server/filters/timeout.go:
 *   errors.NewTimeoutError("request did not complete within the allotted timeout", 0)) and the connection closes,
 *   since the handler may still be reading the body; a response already begun is cut, as kube aborts it. Unlike
 *   kube-apiserver, whose timeout filter blocks behind a body that trickles in (Go's server drains the body before
 *   writing its answer), the 504 goes out on time: a slow body cannot hold a connection open.
 * - Request headers must arrive within `--read-header-timeout` (kube: ReadHeaderTimeout 32s in pkg/server/
 *   secure_serving.go; it also bounds the TLS handshake there, as here): the connection is closed.
 * - An idle keep-alive connection is closed after `--keep-alive-timeout` (kube: IdleTimeout 90s, "matches
 *   http.DefaultTransport keep-alive timeout", which client-go uses).
 *
 * Watches (HTTP and WebSocket) are long-running (filters.BasicLongRunningRequestCheck: verb watch) and only end by
 * their own timeoutSeconds or min-request-timeout.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { badRequest, StatusError } from '../apis/meta/errors.js';
import { first, queryOf } from '../apis/meta/parameter-codec.js';
import { requestAttributes } from '../auth/request-info.js';
import { closeGently, requestTimedOut } from './client-errors.js';
import { onResponseClosed } from '../util/request-done.js';
import { resetUnreadBody } from '../util/http-connection.js';
import { answerRaw } from '../util/raw-answer.js';

/**
 * isTimeout tells a 504 Timeout Status: a deadline the client set or waits under (`?timeout=`, --request-timeout, a
 * resourceVersion the store has not reached in time) ran out. An answer, not a server failure: it is not logged as
 * an error.
 */
export function isTimeout(e: unknown): boolean {
  return e instanceof StatusError && e.code === 504 && e.status.reason === 'Timeout';
}

/** TimeoutSettings are the server's time limits in milliseconds. */
export interface TimeoutSettings {
  /** --request-timeout: how long a request other than a watch may take. */
  requestTimeoutMs: number;
  /** --read-header-timeout: how long a client may take to send a request's headers (and its TLS handshake). */
  readHeaderTimeoutMs: number;
  /** --keep-alive-timeout: how long an idle keep-alive connection is kept. */
  keepAliveTimeoutMs: number;
}

/** DEFAULT_TIMEOUTS are kube-apiserver's: --request-timeout 1m, ReadHeaderTimeout 32s, IdleTimeout 90s. */
export const DEFAULT_TIMEOUTS: TimeoutSettings = { requestTimeoutMs: 60_000, readHeaderTimeoutMs: 32_000, keepAliveTimeoutMs: 90_000 };

/**
 * nodeTimeoutOptions are the options of Node's HTTPS server that enforce the connection-level limits. Node checks
 * its timers every connectionsCheckingInterval, so that interval is a fraction of the shortest limit. Its own
 * requestTimeout (the whole request received) only backs up the request timeout above, for what it does not cover:
 * a body nobody reads (a GET's) trickling in forever.
 */
export function nodeTimeoutOptions(t: TimeoutSettings): { https: Record<string, number>; fastify: { keepAliveTimeout: number; requestTimeout: number } } {
  const check = Math.max(10, Math.min(30_000, Math.floor(Math.min(t.readHeaderTimeoutMs, t.requestTimeoutMs) / 8)));
  const backstop = t.requestTimeoutMs + 1000 + check;
  return {
    https: {
      headersTimeout: Math.min(t.readHeaderTimeoutMs, backstop),
      requestTimeout: backstop,
      connectionsCheckingInterval: check,
      handshakeTimeout: t.readHeaderTimeoutMs,
    },
    fastify: { keepAliveTimeout: t.keepAliveTimeoutMs, requestTimeout: backstop },
  };
}

/**
 * installRequestTimeout adds the onRequest hook that bounds every request but a watch. Register it before
 * authentication: an unparsable `?timeout=` is refused before anything else, as in kube's handler chain.
 */
export function installRequestTimeout(app: FastifyInstance, t: TimeoutSettings): void {
  onResponseClosed(app, (req) => clearTimeout((req as Timed)[TIMER]));
  app.addHook('onRequest', (req, reply, done) => {
    if (isLongRunning(req)) return done();
    let requested: number | undefined;
    try {
      requested = requestedTimeoutMs(req.url);
    } catch (e) {
      return done(e as Error);
    }
    const ms = requested !== undefined && requested > 0 && requested < t.requestTimeoutMs ? requested : t.requestTimeoutMs;
    (req as Timed)[TIMER] = setTimeout(timeOut, ms, req, reply);
    done();
  });
}

const TIMER = Symbol('request timeout');
type Timed = FastifyRequest & { [TIMER]?: NodeJS.Timeout };

// isLongRunning is BasicLongRunningRequestCheck for this server: a watch (the only long-running verb it serves).
function isLongRunning(req: FastifyRequest): boolean {
  if (!req.url.includes('watch')) return false;
  const a = requestAttributes(req.method, req.url);
  return a.verb === 'watch';
}

// requestedTimeoutMs is request_deadline.go parseTimeout: the `timeout` query parameter, a Go duration.
function requestedTimeoutMs(url: string): number | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const value = first(queryOf(url), 'timeout');
  if (value === undefined || value === '') return undefined;
  const ns = parseGoDuration(value);
  if (typeof ns === 'string') throw badRequest(`invalid timeout specified in the request URL - ${ns}`);
  return Number(ns / 1_000_000n);
}

// timeOut answers 504 unless the response has begun (then it is cut, as kube's ErrAbortHandler cuts it). The
// handler may still be reading the body or running: its own answer is dropped (the reply is hijacked) and the
// connection closes once the 504 is out.
function timeOut(req: FastifyRequest, reply: FastifyReply): void {
  const res = reply.raw;
  if (res.writableEnded || reply.sent) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  reply.hijack();
  // The timeout itself is no error: the request line reports the 504 (server.ts), as kube's httplog line does, with
  // no stack (its timeout filter turns the stack trace off for it).
  const quiet = postTimeoutLogger(req.log);
  req.log = quiet;
  (reply as { log: typeof quiet }).log = quiet;
  // HTTP/2: only this stream ends (reset once the 504 is out if its body is still coming); the connection is shared.
  const http2 = resetUnreadBody(req.raw);
  if (!http2) closeGently(req.raw.socket as Socket);
  // No onSend runs for this answer: answerRaw records it for the audit log (else it would log the 504 as a 200 whose
  // client went away, "Connection closed early").
  answerRaw(res, 504, requestTimedOut().status, !http2);
}

/**
 * postTimeoutLogger logs what the handler still does once its request timed out, errors only (kube logs its
 * post-timeout activity the same way). A Timeout the handler ends in (a wait for a resourceVersion, cut short by the
 * request's deadline) is that same deadline seen late: not logged (fastify would log it as an error with a stack).
 */
function postTimeoutLogger(log: FastifyBaseLogger): FastifyBaseLogger {
  const quiet = log.child({ timedOut: true }, { level: 'error' });
  const error = quiet.error.bind(quiet) as (...args: unknown[]) => void;
  quiet.error = ((...args: unknown[]) => {
    if (isTimeout((args[0] as { err?: unknown } | null | undefined)?.err)) return;
    error(...args);
  }) as typeof quiet.error;
  return quiet;
}

// Go's time.ParseDuration units, in nanoseconds.
const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const MAX_DURATION = (1n << 63n) - 1n;

// goQuote of package time (quote): ASCII as is with `"` and `\` escaped, every other byte as \xNN.
function timeQuote(s: string): string {
  let out = '"';
  for (const b of Buffer.from(s, 'utf8')) {
    if (b >= 0x80 || b < 0x20) out += `\\x${b.toString(16).padStart(2, '0')}`;
    else {
      const c = String.fromCharCode(b);
      out += c === '"' || c === '\\' ? `\\${c}` : c;
    }
  }
  return `${out}"`;
}

/** parseGoDuration is time.ParseDuration: nanoseconds (negative allowed), or Go's error text. */
export function parseGoDuration(orig: string): bigint | string {
  const invalid = `time: invalid duration ${timeQuote(orig)}`;
  let s = orig;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return invalid;
  let total = 0n;
  while (s !== '') {
    if (!/^[0-9.]/.test(s)) return invalid;
    const int = /^[0-9]*/.exec(s)?.[0] ?? '';
    s = s.slice(int.length);
    let v = int === '' ? 0n : BigInt(int);
    if (v > 1n << 63n) return invalid;
    let frac = '';
    let post = false;
    if (s.startsWith('.')) {
      frac = /^[0-9]*/.exec(s.slice(1))?.[0] ?? '';
      s = s.slice(1 + frac.length);
      post = frac !== '';
    }
    if (int === '' && !post) return invalid;
    const unitText = /^[^0-9.]*/.exec(s)?.[0] ?? '';
    if (unitText === '') return `time: missing unit in duration ${timeQuote(orig)}`;
    s = s.slice(unitText.length);
    const unit = UNITS[unitText];
    if (unit === undefined) return `time: unknown unit ${timeQuote(unitText)} in duration ${timeQuote(orig)}`;
    if (v > (1n << 63n) / unit) return invalid;
    v *= unit;
    if (frac !== '') {
      // leadingFraction keeps the digits that fit; their value times the unit, truncated.
      const digits = frac.slice(0, 18);
      v += (BigInt(digits) * unit) / 10n ** BigInt(digits.length);
      if (v > 1n << 63n) return invalid;
    }
    total += v;
    if (total > 1n << 63n) return invalid;
  }
  if (neg) return -total;
  if (total > MAX_DURATION) return invalid;
  return total;
}
