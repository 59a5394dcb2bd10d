/**
 * Raw HTTP/1.1 over TLS, for requests no ordinary client will send (malformed request lines, unknown methods, huge
 * headers, bodies that trickle in) and for watching exactly how and when the server answers and closes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';

/** RawResponse is the first response read from a connection, and how the connection ended. */
export interface RawResponse {
  /** 0 when no response arrived. */
  status: number;
  headers: Record<string, string[]>;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json: any;
  /** How the read ended: the server closed ('end'), reset ('error ...') or we stopped waiting ('timeout'). */
  ended: string;
  /** Milliseconds from connecting until the response was complete (or the connection ended without one). */
  ms: number;
  /** Everything received, as bytes. */
  raw: Buffer;
}

/** RawOptions: how long to wait, and whether to stop at the first complete response. */
export interface RawOptions {
  waitMs?: number;
  /** Resolve as soon as one response is complete instead of waiting for the connection to end. */
  firstResponse?: boolean;
  /** Present the admin client certificate (default true). */
  clientCert?: boolean;
  /** Present this client certificate and key (PEM) instead of the admin's: a front proxy's, say. */
  identity?: { cert: string; key: string };
}

/** TlsTarget is where to connect and the certificate directory of that server. */
export interface TlsTarget {
  port: number;
  certDir: string;
}

function connect(t: TlsTarget, clientCert: boolean, identity?: { cert: string; key: string }): tls.TLSSocket {
  const ca = readFileSync(join(t.certDir, 'ca.crt'), 'utf8');
  const auth =
    identity ?? (clientCert ? { cert: readFileSync(join(t.certDir, 'admin.crt'), 'utf8'), key: readFileSync(join(t.certDir, 'admin.key'), 'utf8') } : {});
  return tls.connect({ host: '127.0.0.1', port: t.port, ca, servername: 'localhost', ALPNProtocols: ['http/1.1'], ...auth });
}

/** parseResponse reads one HTTP/1.1 response from the start of `raw`; undefined while incomplete. */
export function parseResponse(raw: Buffer): { status: number; headers: Record<string, string[]>; body: Buffer; length: number } | undefined {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const lines = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
  const headers: Record<string, string[]> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    const k = l.slice(0, i).trim().toLowerCase();
    (headers[k] ??= []).push(l.slice(i + 1).trim());
  }
  let at = headEnd + 4;
  if (headers['transfer-encoding']?.[0] === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = raw.indexOf('\r\n', at);
      if (lineEnd < 0) return undefined;
      const size = parseInt(raw.subarray(at, lineEnd).toString('latin1'), 16);
      if (raw.length < lineEnd + 2 + size + 2) return undefined;
      if (size === 0) return { status, headers, body: Buffer.concat(parts), length: lineEnd + 4 };
      parts.push(raw.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const length = Number(headers['content-length']?.[0] ?? 0);
  if (raw.length < at + length) return undefined;
  return { status, headers, body: raw.subarray(at, at + length), length: at + length };
}

/**
 * rawRequest opens a TLS connection, sends `request` (bytes, or a function that writes on the socket at its own
 * pace), and reads until the server closes, `waitMs` passes, or (firstResponse) one response is complete.
 */
export function rawRequest(t: TlsTarget, request: string | Buffer | ((s: tls.TLSSocket) => void), o: RawOptions = {}): Promise<RawResponse> {
  const waitMs = o.waitMs ?? 5000;
  return new Promise((resolve) => {
    const s = connect(t, o.clientCert ?? true, o.identity);
    const started = Date.now();
    let raw = Buffer.alloc(0);
    let doneAt: number | undefined;
    let settled = false;
    const finish = (ended: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      const r = parseResponse(raw);
      const body = r ? r.body.toString('utf8') : '';
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      resolve({ status: r?.status ?? 0, headers: r?.headers ?? {}, body, json, ended, ms: (doneAt ?? Date.now()) - started, raw });
    };
    const timer = setTimeout(() => finish('timeout'), waitMs);
    s.on('secureConnect', () => {
      if (typeof request === 'function') request(s);
      else s.write(request);
    });
    s.on('data', (b: Buffer) => {
      raw = Buffer.concat([raw, b]);
      if (doneAt === undefined && parseResponse(raw)) {
        doneAt = Date.now();
        if (o.firstResponse) finish('response');
      }
    });
    s.on('end', () => finish('end'));
    s.on('error', (e: NodeJS.ErrnoException) => finish(`error ${e.code ?? e.message}`));
    s.on('close', () => finish('close'));
  });
}

/** httpRequest builds a request's bytes: method, path, headers (Host added) and an optional body with its length. */
export function httpRequest(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): string | Buffer {
  const h: Record<string, string> = { host: 'localhost', ...headers };
  if (body !== undefined && h['transfer-encoding'] === undefined) h['content-length'] = String(Buffer.byteLength(body));
  const head = `${method} ${path} HTTP/1.1\r\n${Object.entries(h)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  return body === undefined ? head : Buffer.concat([Buffer.from(head, 'latin1'), Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8')]);
}
