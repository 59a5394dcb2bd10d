/**
 * @module util/raw-answer
 * An answer written straight on the raw response, past fastify's reply: the request timeout's 504 (its reply is
 * hijacked, so the handler's late answer is dropped) and a request body that failed while nothing read it. fastify
 * runs no onSend for those, so whoever reports each request's outcome (the audit log) finds the Status here:
 * `answerRaw` writes the answer and records it in one step, so no such answer goes unrecorded.
 */
import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';

const ANSWER = Symbol('Status answered on the raw response');

type RawResponse = ServerResponse | Http2ServerResponse;

/** RawAnswer is a Status written by answerRaw: the object, and the JSON text the client got. */
export interface RawAnswer {
  status: Record<string, unknown>;
  body: string;
}

type Noted = RawResponse & { [ANSWER]?: RawAnswer };

/**
 * answerRaw writes `status` (a Status) on `res` as its JSON answer with `code`, and `connection: close` when `close`
 * (HTTP/1.1 only: an HTTP/2 stream ends alone). rawAnswerOf(res) gives it back.
 */
export function answerRaw(res: RawResponse, code: number, status: object, close: boolean): void {
  const body = JSON.stringify(status);
  (res as Noted)[ANSWER] = { status: status as Record<string, unknown>, body };
  (res as ServerResponse).writeHead(code, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(body);
}

/** rawAnswerOf is the answer answerRaw wrote on `res`, if it wrote one. */
export function rawAnswerOf(res: RawResponse): RawAnswer | undefined {
  return (res as Noted)[ANSWER];
}
