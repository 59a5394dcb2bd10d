/**
 * Sends hostile cases to a server and judges each answer. Most go through a few keep-alive undici connections
 * (`Dispatcher.request` with a raw `path`, so nothing is normalised on the way); what undici refuses to send
 * (non-Latin-1 header bytes, spaces or raw UTF-8 in the request target, CONNECT, broken framing) goes over a
 * fresh TLS socket as hand-written bytes. The judge is the same for both: a 4xx answer is a metav1.Status whose
 * code equals the HTTP status and whose reason is one of kube's StatusReasons (k8s.io/apimachinery/pkg/apis/meta/v1/
 * types.go), never a 5xx, and no JavaScript error text anywhere in the answer.
 */
import { connect as tlsConnect } from 'node:tls';
import { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import type { HostileCase, Step } from './cases.js';

/** Tls is what a client presents and trusts. */
export interface Tls {
  ca: string;
  cert: string;
  key: string;
}

/** Target is the server under test. */
export interface Target {
  url: string;
  tls: Tls;
}

/** Answer is what came back for one step (status 0: no HTTP answer at all). */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  error?: string;
}

/** Failure is one step whose answer broke the rules. */
export interface Failure {
  cls: string;
  name: string;
  request: string;
  answer: string;
  expected: string;
  problem: string;
}

// Every metav1.StatusReason constant ("" is StatusReasonUnknown, omitted from JSON as omitempty).
const STATUS_REASONS = new Set([
  '',
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Gone',
  'Invalid',
  'ServerTimeout',
  'StoreReadError',
  'Timeout',
  'TooManyRequests',
  'BadRequest',
  'MethodNotAllowed',
  'NotAcceptable',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'InternalError',
  'Expired',
  'ServiceUnavailable',
]);
// The reason each code carries when kube's errors package builds it (NewBadRequest, NewInvalid, ...).
const REASON_OF_CODE: Record<number, string[]> = {
  400: ['BadRequest', ''],
  401: ['Unauthorized'],
  403: ['Forbidden'],
  404: ['NotFound'],
  405: ['MethodNotAllowed'],
  406: ['NotAcceptable'],
  409: ['Conflict', 'AlreadyExists'],
  410: ['Gone', 'Expired'],
  413: ['RequestEntityTooLarge'],
  415: ['UnsupportedMediaType'],
  422: ['Invalid'],
  429: ['TooManyRequests'],
};

/** JS_ERROR matches what a JavaScript exception or a fastify/Node default answer would leak. */
export const JS_ERROR =
  /Cannot read prop|Cannot set prop|undefined is not|null is not|is not a function|is not defined|is not iterable|Unexpected token|Unexpected end of JSON|Unexpected non-whitespace|Maximum call stack|TypeError|ReferenceError|RangeError|SyntaxError|at Object\.|at async |node:internal|FST_ERR|Body cannot be empty|\[object Object\]/;

const BODYLESS = new Set(['HEAD']);

const statusMessage = (text: string): string => {
  try {
    const m = (JSON.parse(text) as { message?: unknown }).message;
    return typeof m === 'string' ? m : '';
  } catch {
    return '';
  }
};

/** judge returns what is wrong with an answer, or undefined when it is right. */
export function judge(step: Step, a: Answer): string | undefined {
  if (a.status === 0) return `no HTTP answer (${a.error})`;
  // 505 HTTP Version Not Supported is the one 5xx a client causes on purpose (kube-apiserver answers it too), and
  // 500 where kube-apiserver itself answers it: an applied configuration it cannot type (a list map item without its
  // key, a duplicate), `failed to create typed patch object`, as test/e2e/apply-differential.test.ts shows.
  const allowed5xx =
    (a.status === 505 && step.expect.includes(505)) ||
    (a.status === 500 && step.expect.includes(500) && /^failed to create typed patch object /.test(statusMessage(a.text)));
  if (a.status >= 500 && !allowed5xx) return `${a.status} is a server error`;
  // (A 2xx body may say anything: the OpenAPI document itself holds "is not defined".)
  const leaked = [a.status >= 400 ? a.text : '', ...Object.values(a.headers).flat().map(String)].find((t) => JS_ERROR.test(t));
  if (leaked !== undefined) return `JavaScript error text in the answer: ${JSON.stringify(JS_ERROR.exec(leaked)?.[0])}`;
  if (!step.expect.includes(a.status)) return `code ${a.status} not in the expected ${step.expect.join('|')}`;
  if (BODYLESS.has(step.method.toUpperCase())) return undefined;
  if (a.status >= 400) {
    let s: any;
    try {
      s = JSON.parse(a.text);
    } catch {
      return 'the error body is not JSON';
    }
    if (!/^application\/json/.test(String(a.headers['content-type']))) return `error Content-Type ${a.headers['content-type']}`;
    if (s?.kind !== 'Status' || s.apiVersion !== 'v1') return 'the error body is not a v1 Status';
    if (s.status !== 'Failure') return `Status.status is ${JSON.stringify(s.status)}`;
    if (s.code !== a.status) return `Status.code ${s.code} differs from HTTP ${a.status}`;
    const reason = s.reason ?? '';
    if (!STATUS_REASONS.has(reason)) return `reason ${JSON.stringify(reason)} is not a StatusReason`;
    const want = REASON_OF_CODE[a.status];
    if (want && !want.includes(reason)) return `reason ${JSON.stringify(reason)} for code ${a.status}`;
    if (typeof s.message !== 'string') return 'Status.message is not a string';
    return undefined;
  }
  if (a.status >= 200 && a.status < 300 && a.text !== '' && /^application\/json/.test(String(a.headers['content-type']))) {
    try {
      JSON.parse(a.text);
    } catch {
      if (!step.watch) return 'a 2xx body that is not JSON';
    }
  }
  return step.check?.(a);
}

/** Client sends steps to one target: a pool of keep-alive connections plus raw sockets. */
export class Client {
  private agent: Agent;
  constructor(
    private readonly target: Target,
    connections = 4,
  ) {
    const { ca, cert, key } = target.tls;
    this.agent = new Agent({ connections, pipelining: 1, connect: { ca, cert, key }, keepAliveTimeout: 30_000 });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** alone is a client with one keep-alive connection of its own, for cases about what a connection survives. */
  alone(): Client {
    return new Client(this.target, 1);
  }

  /** send performs one step and never throws: a transport failure is status 0. */
  async send(step: Step): Promise<Answer> {
    try {
      if (step.freshRv && step.body !== undefined) step = await this.withFreshRv(step, step.freshRv);
      // A request head past Node's 16 KiB header limit makes the server drop the connection after its 431; on a
      // shared keep-alive connection that would fail whichever case comes next, so it gets a socket of its own.
      const head = step.path.length + Object.entries(step.headers ?? {}).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
      return step.raw || (head > 12 * 1024 && !step.keepConnection) ? await this.sendRaw(step) : await this.sendUndici(step);
    } catch (e) {
      return { status: 0, headers: {}, text: '', error: (e as Error).message || String(e) };
    }
  }

  private async withFreshRv(step: Step, fresh: { path: string; rv: string }): Promise<Step> {
    const current = await this.sendUndici({ method: 'GET', path: fresh.path, expect: [] });
    let rv: unknown;
    try {
      rv = (JSON.parse(current.text) as { metadata?: { resourceVersion?: unknown } }).metadata?.resourceVersion;
    } catch {
      rv = undefined;
    }
    if (typeof rv !== 'string' || rv === fresh.rv) return step;
    const body = Buffer.from(step.body as string | Uint8Array)
      .toString('utf8')
      .replace(`"resourceVersion":"${fresh.rv}"`, `"resourceVersion":"${rv}"`);
    return { ...step, body };
  }

  private async sendUndici(step: Step): Promise<Answer> {
    const timeout = step.timeoutMs ?? 15_000;
    let body: Dispatcher.DispatchOptions['body'];
    if (step.body !== undefined) body = step.chunked ? Readable.from(chunks(step.body)) : step.body;
    const res = await this.agent.request({
      origin: this.target.url,
      path: step.path,
      method: step.method as Dispatcher.HttpMethod,
      headers: step.headers ?? {},
      body,
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  }

  private sendRaw(step: Step): Promise<Answer> {
    const u = new URL(this.target.url);
    const body = step.body === undefined ? Buffer.alloc(0) : Buffer.from(step.body);
    let head = step.rawHead;
    if (head === undefined) {
      const lines = [`${step.method} ${step.path} HTTP/1.1`, `Host: ${u.host}`];
      for (const [k, v] of Object.entries(step.headers ?? {})) lines.push(`${k}: ${v}`);
      if (step.body !== undefined && !Object.keys(step.headers ?? {}).some((k) => /^(content-length|transfer-encoding)$/i.test(k))) {
        lines.push(`Content-Length: ${body.length}`);
      }
      lines.push('Connection: close', '', '');
      head = Buffer.from(lines.join('\r\n'), 'utf8');
    }
    const timeout = step.timeoutMs ?? 15_000;
    return new Promise<Answer>((resolve) => {
      const got: Buffer[] = [];
      let settled = false;
      const sock = tlsConnect({ host: u.hostname, port: Number(u.port), ca: this.target.tls.ca, cert: this.target.tls.cert, key: this.target.tls.key });
      const finish = (error?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        sock.destroy();
        const parsed = parseResponse(Buffer.concat(got));
        resolve(parsed ?? { status: 0, headers: {}, text: '', error: error ?? 'connection closed without an answer' });
      };
      const timer = setTimeout(() => finish(`no complete answer in ${timeout} ms`), timeout);
      sock.on('secureConnect', () => sock.write(Buffer.concat([head as Buffer, body])));
      sock.on('data', (b: Buffer) => {
        got.push(b);
        if (parseResponse(Buffer.concat(got), true)) finish();
      });
      sock.on('error', (e) => finish(e.message));
      sock.on('end', () => finish());
      sock.on('close', () => finish());
    });
  }
}

function* chunks(body: string | Uint8Array): Generator<Buffer> {
  const b = Buffer.from(body);
  for (let i = 0; i < b.length; i += 64 * 1024) yield b.subarray(i, i + 64 * 1024);
}

// parseResponse reads an HTTP/1.1 answer from raw bytes; with `complete` it returns undefined until the body is whole.
function parseResponse(buf: Buffer, complete = false): Answer | undefined {
  // An interim answer (100 Continue) precedes the real one.
  while (/^HTTP\/1\.[01] 1\d\d /.test(buf.subarray(0, 16).toString('latin1'))) {
    const interim = buf.indexOf('\r\n\r\n');
    if (interim < 0) return undefined;
    buf = buf.subarray(interim + 4);
  }
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) return complete ? undefined : { status: 0, headers: {}, text: '', error: `not HTTP: ${JSON.stringify(lines[0]?.slice(0, 80))}` };
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let rest = buf.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const out: Buffer[] = [];
    for (;;) {
      const nl = rest.indexOf('\r\n');
      if (nl < 0) return complete ? undefined : { status: Number(m[1]), headers, text: Buffer.concat(out).toString('utf8') };
      const size = parseInt(rest.subarray(0, nl).toString('latin1'), 16);
      if (size === 0) break;
      if (rest.length < nl + 2 + size) return complete ? undefined : { status: Number(m[1]), headers, text: Buffer.concat(out).toString('utf8') };
      out.push(rest.subarray(nl + 2, nl + 2 + size));
      rest = rest.subarray(nl + 4 + size);
    }
    return { status: Number(m[1]), headers, text: Buffer.concat(out).toString('utf8') };
  }
  const len = headers['content-length'];
  if (len !== undefined) {
    if (complete && rest.length < Number(len)) return undefined;
    return { status: Number(m[1]), headers, text: rest.subarray(0, Number(len)).toString('utf8') };
  }
  if (complete) return undefined;
  return { status: Number(m[1]), headers, text: rest.toString('utf8') };
}

/** Tally counts answers per class: the status code histogram and the failures. */
export class Tally {
  readonly perClass = new Map<string, { cases: number; codes: Map<string, number>; failures: number }>();
  readonly failures: Failure[] = [];

  record(c: HostileCase, step: Step, a: Answer, problem: string | undefined): void {
    let t = this.perClass.get(c.cls);
    if (!t) this.perClass.set(c.cls, (t = { cases: 0, codes: new Map(), failures: 0 }));
    const code = a.status === 0 ? 'none' : String(a.status);
    t.codes.set(code, (t.codes.get(code) ?? 0) + 1);
    if (!problem) return;
    t.failures++;
    this.failures.push({
      cls: c.cls,
      name: c.name,
      request: describeStep(step),
      answer: a.status === 0 ? `no answer: ${a.error}` : `${a.status} ${a.text.slice(0, 1500)}`,
      expected: step.expect.join('|'),
      problem,
    });
  }

  countCase(c: HostileCase): void {
    const t = this.perClass.get(c.cls);
    if (t) t.cases++;
  }

  /** summary is the table the closing note quotes: cases and answers per class. */
  summary(): string {
    const rows = [...this.perClass.entries()].map(([cls, t]) => {
      const codes = [...t.codes.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([c, n]) => `${c}×${n}`)
        .join(' ');
      return `${cls.padEnd(18)} ${String(t.cases).padStart(6)} cases  failures ${String(t.failures).padStart(5)}  ${codes}`;
    });
    const total = [...this.perClass.values()].reduce((s, t) => s + t.cases, 0);
    return [...rows, `${'total'.padEnd(18)} ${String(total).padStart(6)} cases  failures ${String(this.failures.length).padStart(5)}`].join('\n');
  }
}

/** describeStep prints a request compactly: method, path (cut), the headers that matter, the body's start. */
export function describeStep(s: Step): string {
  const path = s.path.length > 160 ? `${s.path.slice(0, 160)}…(${s.path.length} chars)` : s.path;
  const hdrs = Object.entries(s.headers ?? {})
    .map(([k, v]) => `${k}: ${v.length > 60 ? `${v.slice(0, 60)}…(${v.length})` : v}`)
    .join('; ');
  let body = '';
  if (s.body !== undefined) {
    const b = Buffer.from(s.body);
    const t = b
      .subarray(0, 160)
      .toString('utf8')
      .replace(/[\u0000-\u001f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
    body = ` body(${b.length}B${s.chunked ? ', chunked' : ''}): ${t}${b.length > 160 ? '…' : ''}`;
  }
  return `${s.raw ? 'raw ' : ''}${s.method} ${path}${hdrs ? ` [${hdrs}]` : ''}${body}`;
}

/** runCases runs cases with `concurrency` workers; a multi-step case runs its steps in order on one worker. */
export async function runCases(client: Client, cases: HostileCase[], tally: Tally, concurrency = 8): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++] as HostileCase;
      let counted = false;
      const own = c.ownConnection ? client.alone() : client;
      for (const step of c.steps) {
        const a = await own.send(step);
        const problem = judge(step, a);
        tally.record(c, step, a, problem);
        if (!counted) {
          tally.countCase(c);
          counted = true;
        }
        if (problem) break;
      }
      if (own !== client) await own.close();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
