/**
 * A bare node:http2 client for tests that need HTTP/2 as it is on the wire: repeated header lines, headers past
 * what ordinary clients send, and a stream reset reported rather than thrown.
 */
import { connect, type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders, type SecureClientSessionOptions } from 'node:http2';

/** H2Answer is a stream's answer: its status (0 when the server reset the stream instead) and body. */
export interface H2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body's bytes as they came (a compressed body stays compressed). */
  raw: Buffer;
  body: any;
  /** The RST_STREAM code the stream ended with, when it was reset before an answer. */
  rstCode?: number;
}

/**
 * openH2 connects a session with `tls` (ca, cert, key) and waits for the handshake. The client's own limits are
 * lifted so that it sends whatever headers a test gives it: the server's limits are under test, not Node's client's.
 */
export async function openH2(url: string, tls: SecureClientSessionOptions): Promise<ClientHttp2Session> {
  const session = connect(url, { ...tls, maxHeaderListPairs: 1 << 20, maxSendHeaderBlockLength: 64 << 20 });
  session.on('error', () => undefined);
  await new Promise<void>((res, rej) => {
    session.once('connect', () => res());
    session.once('error', rej);
  });
  return session;
}

/** h2Request sends one request as a stream of `session` and reads the whole answer. */
export function h2Request(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body?: string): Promise<H2Answer> {
  return new Promise((res) => {
    const stream = session.request(headers);
    let status = 0;
    let got: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      got = h;
      status = Number(h[':status']);
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    const done = () => {
      const raw = Buffer.concat(chunks);
      const text = raw.toString();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      res({ status, headers: got, text, raw, body: parsed, ...(status === 0 ? { rstCode: stream.rstCode } : {}) });
    };
    stream.on('close', done);
    stream.on('error', () => undefined);
    stream.end(body);
  });
}
