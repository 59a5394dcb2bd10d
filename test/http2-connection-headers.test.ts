/**
 * HTTP/2 responses carry no connection-specific headers (RFC 9113 §8.2.2). fastify sets `Connection: close` on a
 * body that fails to parse; on an HTTP/2 stream Node dropped it with a process warning on stderr
 * ("UnsupportedWarning: The provided connection header is not valid..."). HTTP/1.1 keeps the header and its close.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { h2Request, openH2 } from './helpers/h2-client.js';
import { httpRequest, rawRequest } from './helpers/raw-tls.js';
import { API, useServer, type ServerProcess } from './helpers/server-process.js';

const COLLECTION = `${API}/namespaces/default/websites`;

describe('connection-specific headers', () => {
  let srv: ServerProcess;
  useServer((s) => {
    srv = s;
  });
  const tls = () => ({
    ca: readFileSync(join(srv.certDir, 'ca.crt'), 'utf8'),
    cert: readFileSync(join(srv.certDir, 'admin.crt'), 'utf8'),
    key: readFileSync(join(srv.certDir, 'admin.key'), 'utf8'),
  });

  it('an HTTP/2 answer to a body that does not parse has no Connection header, and the server prints no warning', async () => {
    const session = await openH2(srv.url, tls());
    try {
      for (const body of ['{"kind":', 'not json at all']) {
        const r = await h2Request(session, { ':method': 'POST', ':path': COLLECTION, 'content-type': 'application/json' }, body);
        expect(r.status, r.text).toBe(400);
        expect(r.body).toMatchObject({ kind: 'Status', code: 400 });
        expect(r.headers['connection']).toBeUndefined();
      }
      // The session still serves (no GOAWAY for a stream's bad body).
      expect((await h2Request(session, { ':method': 'GET', ':path': COLLECTION })).status).toBe(200);
    } finally {
      session.close();
    }
    // Node writes its process warnings to stderr as they happen; give the pipe a moment.
    await new Promise((r) => setTimeout(r, 200));
    expect(srv.logs()).not.toMatch(/Warning|connection header/i);
  });

  it('HTTP/1.1 keeps `Connection: close` on the same answer', async () => {
    const r = await rawRequest(srv, httpRequest('POST', COLLECTION, { 'content-type': 'application/json' }, '{"kind":'), { waitMs: 5000 });
    expect(r.status).toBe(400);
    expect(r.headers['connection']).toEqual(['close']);
  });
});
