import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { protocolToken } from './websocket-token.js';

// Cases after k8s.io/apiserver pkg/authentication/request/websocket/protocol_test.go.
function request(headers: Record<string, string>, protocols: string[] = []): IncomingMessage {
  const h: Record<string, string | undefined> = { ...headers };
  const distinct: Record<string, string[]> = {};
  if (protocols.length) {
    h['sec-websocket-protocol'] = protocols.join(', ');
    distinct['sec-websocket-protocol'] = protocols;
  }
  return { headers: h, headersDistinct: distinct } as unknown as IncomingMessage;
}
const ws = { connection: 'Upgrade', upgrade: 'websocket' };
const enc = (t: string) => `base64url.bearer.authorization.k8s.io.${Buffer.from(t).toString('base64url')}`;

describe('protocolToken (websocket/protocol.go)', () => {
  it('ignores requests that are not WebSocket upgrades', () => {
    expect(protocolToken(request({}, [enc('tok'), 'x']))).toBeUndefined();
    expect(protocolToken(request({ connection: 'keep-alive', upgrade: 'websocket' }, [enc('tok'), 'x']))).toBeUndefined();
  });

  it('finds no token when none is offered, or an empty one', () => {
    expect(protocolToken(request(ws, ['base64.binary.k8s.io']))).toBeUndefined();
    expect(protocolToken(request(ws, ['base64url.bearer.authorization.k8s.io.', 'x']))).toBeUndefined();
  });

  it('decodes the token and, once accepted, leaves only the other subprotocols', () => {
    const req = request({ connection: 'keep-alive, Upgrade', upgrade: 'WebSocket' }, ['a', enc('my-token'), 'b']);
    const t = protocolToken(req);
    expect(t?.token).toBe('my-token');
    expect(req.headersDistinct['sec-websocket-protocol']).toEqual(['a', enc('my-token'), 'b']);
    t?.accept();
    expect(req.headers['sec-websocket-protocol']).toBe('a,b');
    expect(req.headersDistinct['sec-websocket-protocol']).toEqual(['a,b']);
  });

  it('refuses two tokens, a bad encoding, invalid UTF-8 and a token with no other subprotocol', () => {
    expect(protocolToken(request(ws, [enc('a'), enc('b'), 'x']))).toBeNull();
    expect(protocolToken(request(ws, ['base64url.bearer.authorization.k8s.io.dG9rZW4=', 'x']))).toBeNull();
    expect(protocolToken(request(ws, ['base64url.bearer.authorization.k8s.io.a+b/', 'x']))).toBeNull();
    expect(protocolToken(request(ws, [`base64url.bearer.authorization.k8s.io.${Buffer.from([0xff, 0xfe]).toString('base64url')}`, 'x']))).toBeNull();
    expect(protocolToken(request(ws, [enc('tok')]))).toBeNull();
  });
});
