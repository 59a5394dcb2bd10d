/**
 * @module util/raw-answer
 * An answer written straight on the raw response, past fastify's reply: the request timeout's 504 (its reply is
 * hijacked, so the handler's late answer is dropped) and a request body that failed while nothing read it. fastify
 * runs no onSend for those, so whoever reports each request's outcome (the audit log) finds the Status here.
 */
import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';

const ANSWER = Symbol('Status answered on the raw response');

type RawResponse = ServerResponse | Http2ServerResponse;
type Noted = RawResponse & { [ANSWER]?: Record<string, unknown> };

/** noteRawAnswer records the Status about to be written on `res` by hand (call it before writing). */
export function noteRawAnswer(res: RawResponse, status: object): void {
  (res as Noted)[ANSWER] = status as Record<string, unknown>;
}

/** rawAnswerOf is the Status noteRawAnswer recorded for `res`, if one was. */
export function rawAnswerOf(res: RawResponse): Record<string, unknown> | undefined {
  return (res as Noted)[ANSWER];
}
