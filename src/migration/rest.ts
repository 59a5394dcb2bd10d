/**
 * @module migration/rest
 * A small JSON client for the two servers a migration talks to: kube-apiserver (with the user's kubeconfig) and this
 * server directly (its own CA, the same credentials). Calls answer the status and the decoded body rather than
 * throwing on a Kubernetes error, because the migration decides on codes (404 absent, 409 conflict, 429 frozen).
 * A watch streams decoded events to a callback until it ends or is aborted.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Agent, request, type Dispatcher } from 'undici';

/** Answer is a call's status, headers and decoded JSON body (undefined when empty). */
export interface Answer<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

/** Credentials is how a client authenticates and which CA it trusts. */
export interface Credentials {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
  headers?: Record<string, string>;
  insecure?: boolean;
  /**
   * The name the server's certificate is checked against, when not the URL's host: this server reached through a
   * port-forward is checked as the Service kube-apiserver verifies (`<name>.<namespace>.svc`).
   */
  servername?: string;
}

/** credentialsOf reads the kubeconfig's current user and cluster CA (client-node's own reading of the file). */
export async function credentialsOf(kc: KubeConfig): Promise<Credentials> {
  const opts: { ca?: Buffer; cert?: Buffer; key?: Buffer; headers?: Record<string, string>; rejectUnauthorized?: boolean } = {};
  await kc.applyToHTTPSOptions(opts);
  return {
    ...(opts.ca ? { ca: opts.ca } : {}),
    ...(opts.cert ? { cert: opts.cert } : {}),
    ...(opts.key ? { key: opts.key } : {}),
    ...(opts.headers ? { headers: opts.headers } : {}),
    ...(opts.rejectUnauthorized === false ? { insecure: true } : {}),
  };
}

/** Rest calls one server. */
export class Rest {
  readonly base: string;
  readonly #agent: Dispatcher;
  readonly #headers: Record<string, string>;

  constructor(base: string, creds: Credentials) {
    this.base = base.replace(/\/+$/, '');
    this.#headers = creds.headers ?? {};
    this.#agent = new Agent({
      connect: {
        ...(creds.ca ? { ca: creds.ca } : {}),
        ...(creds.cert ? { cert: creds.cert } : {}),
        ...(creds.key ? { key: creds.key } : {}),
        rejectUnauthorized: creds.insecure !== true,
        ...(creds.servername ? { servername: creds.servername } : {}),
      },
    });
  }

  /** call sends one request; a body is JSON unless `contentType` says another patch type. */
  async call<T = unknown>(method: Dispatcher.HttpMethod, path: string, body?: unknown, contentType = 'application/json'): Promise<Answer<T>> {
    const res = await request(`${this.base}${path}`, {
      method,
      dispatcher: this.#agent,
      headers: { ...this.#headers, accept: 'application/json', ...(body !== undefined ? { 'content-type': contentType } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.body.text();
    let decoded: unknown;
    try {
      decoded = text ? JSON.parse(text) : undefined;
    } catch {
      decoded = text;
    }
    return { status: res.statusCode, headers: res.headers, body: decoded as T };
  }

  /** ok is call, throwing a readable error unless the status is one of `accept` (default: 2xx). */
  async ok<T = unknown>(method: Dispatcher.HttpMethod, path: string, body?: unknown, contentType?: string, accept?: number[]): Promise<Answer<T>> {
    const a = await this.call<T>(method, path, body, contentType);
    const fine = accept ? accept.includes(a.status) : a.status >= 200 && a.status < 300;
    if (!fine) throw new RestError(method, `${this.base}${path}`, a);
    return a;
  }

  /**
   * watch streams a watch's events to `onEvent` (in order, each awaited) until the server ends it or `signal`
   * aborts; resolves how it ended. An ERROR event is handed over like the others.
   */
  async watch(path: string, onEvent: (e: { type: string; object: Record<string, unknown> }) => Promise<void> | void, signal: AbortSignal): Promise<void> {
    const res = await request(`${this.base}${path}`, {
      method: 'GET',
      dispatcher: this.#agent,
      headers: { ...this.#headers, accept: 'application/json' },
      signal,
    });
    if (res.statusCode !== 200) {
      const text = await res.body.text();
      throw new RestError('GET', `${this.base}${path}`, { status: res.statusCode, headers: res.headers, body: text });
    }
    let buffered = '';
    try {
      for await (const chunk of res.body) {
        buffered += (chunk as Buffer).toString('utf8');
        let nl = buffered.indexOf('\n');
        while (nl >= 0) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (line) await onEvent(JSON.parse(line));
          nl = buffered.indexOf('\n');
        }
      }
    } catch (e) {
      if (!signal.aborted) throw e;
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/** RestError is a call answered with a status it did not expect; its message quotes the server's. */
class RestError extends Error {
  readonly status: number;
  readonly body: unknown;
  constructor(method: string, url: string, a: Answer) {
    const why = typeof a.body === 'object' && a.body !== null && 'message' in a.body ? String((a.body as { message: unknown }).message) : String(a.body ?? '');
    super(`${method} ${url}: ${a.status}${why ? ` ${why}` : ''}`);
    this.status = a.status;
    this.body = a.body;
  }
}
