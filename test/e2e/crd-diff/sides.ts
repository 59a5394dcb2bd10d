/**
 * @module e2e/crd-diff/sides
 * The two servers a step is sent to: kube-apiserver on the e2e plane (undici, the admin token) and ours in process
 * (app.inject). Both answer a Reply: the status code, the body (parsed when JSON) and the Warning headers.
 */
import type { FastifyInstance } from 'fastify';
import { Agent, request } from 'undici';
import type { Json } from './corpus.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Side = 'kube' | 'ours';

export interface Reply {
  code: number;
  body: Json;
  /** The Warning header values, in the order sent. */
  warnings: string[];
}

export interface Call {
  method: Method;
  path: string;
  body?: unknown;
  contentType?: string;
  accept?: string;
}

/** Both sides get the same User-Agent: an update without fieldManager is managed by its first segment. */
export const USER_AGENT = 'crd-differential/1.0 (e2e)';

export type Caller = (c: Call) => Promise<Reply>;

const parse = (text: string): Json => {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

const warningsOf = (h: string | string[] | undefined): string[] => (h === undefined ? [] : Array.isArray(h) ? h : [h]);
/** undici joins repeated headers with ", "; each Warning value is `299 - "…"`, so it is split before each code. */
const splitJoined = (values: string[]) => values.flatMap((v) => v.split(/, (?=\d{3} )/));

/** kubeCaller sends to kube-apiserver at `server` with a bearer token. */
export function kubeCaller(server: string, ca: string, token: string): { call: Caller; close: () => Promise<void> } {
  const agent = new Agent({ connect: { ca }, connections: 16 });
  const call: Caller = async (c) => {
    const r = await request(`${server}${c.path}`, {
      method: c.method,
      dispatcher: agent,
      headers: {
        authorization: `Bearer ${token}`,
        'user-agent': USER_AGENT,
        accept: c.accept ?? 'application/json',
        ...(c.body === undefined ? {} : { 'content-type': c.contentType ?? 'application/json' }),
      },
      ...(c.body === undefined ? {} : { body: typeof c.body === 'string' ? c.body : JSON.stringify(c.body) }),
    });
    return { code: r.statusCode, body: parse(await r.body.text()), warnings: splitJoined(warningsOf(r.headers['warning'])) };
  };
  return { call, close: () => agent.close() };
}

/** oursCaller sends to our server in process. */
export function oursCaller(app: FastifyInstance): Caller {
  return async (c) => {
    const r = await app.inject({
      method: c.method,
      url: c.path,
      headers: {
        'user-agent': USER_AGENT,
        accept: c.accept ?? 'application/json',
        ...(c.body === undefined ? {} : { 'content-type': c.contentType ?? 'application/json' }),
      },
      ...(c.body === undefined ? {} : { payload: typeof c.body === 'string' ? c.body : JSON.stringify(c.body) }),
    });
    return { code: r.statusCode, body: parse(r.body), warnings: splitJoined(warningsOf(r.headers['warning'] as string | string[] | undefined)) };
  };
}
