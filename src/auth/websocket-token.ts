/**
 * @module auth/websocket-token
 * A bearer token carried as a WebSocket subprotocol, as k8s.io/apiserver's delegating authenticator accepts it
 * (pkg/authentication/request/websocket/protocol.go, added beside the bearer-token authenticator in
 * authenticatorfactory/delegating.go): browsers cannot set `Authorization` on a WebSocket, so dashboards send
 * `Sec-WebSocket-Protocol: base64url.bearer.authorization.k8s.io.<unpadded base64url token>, <real protocol>`.
 * Only WebSocket requests are considered; on success the token's subprotocol is removed so the handshake echoes
 * the real one and the token is never reflected back.
 */
import type { IncomingMessage } from 'node:http';

const BEARER_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';
const PROTOCOL_HEADER = 'sec-websocket-protocol';

/** ProtocolToken is a token found in the subprotocols, with what to leave in the header once it is accepted. */
export interface ProtocolToken {
  token: string;
  /** accept removes the token's subprotocol from the request, as kube does after the token authenticated. */
  accept(): void;
}

// wsstream.IsWebSocketRequest: `Upgrade: websocket` (any case) and `upgrade` among the Connection tokens.
function isWebSocketRequest(req: IncomingMessage): boolean {
  if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return false;
  return (req.headers.connection ?? '')
    .toLowerCase()
    .split(',')
    .some((t) => t.trim() === 'upgrade');
}

const isValidUtf8 = (b: Buffer) => Buffer.from(b.toString('utf8'), 'utf8').equals(b);

/**
 * protocolToken finds the token. undefined: none offered (or not a WebSocket request), so other authenticators
 * decide. null: one was offered but is unusable (two tokens, bad encoding, no other subprotocol), which kube
 * reports as an authentication error, i.e. 401.
 */
export function protocolToken(req: IncomingMessage): ProtocolToken | null | undefined {
  if (!isWebSocketRequest(req)) return undefined;
  let token = '';
  let sawToken = false;
  const others: string[] = [];
  for (const line of req.headersDistinct[PROTOCOL_HEADER] ?? []) {
    for (const raw of line.split(',')) {
      const protocol = raw.trim();
      if (!protocol.startsWith(BEARER_PROTOCOL_PREFIX)) {
        others.push(protocol);
        continue;
      }
      if (sawToken) return null;
      sawToken = true;
      const encoded = protocol.slice(BEARER_PROTOCOL_PREFIX.length);
      // Go's RawURLEncoding: the URL alphabet, no padding; anything else is an encoding error.
      if (!/^[A-Za-z0-9_-]*$/.test(encoded) || encoded.length % 4 === 1) return null;
      const decoded = Buffer.from(encoded, 'base64url');
      if (!isValidUtf8(decoded)) return null;
      token = decoded.toString('utf8');
    }
  }
  // One other subprotocol must remain, to be echoed back instead of the token.
  if (token.length > 0 && others.length === 0) return null;
  if (token.length === 0) return undefined;
  return {
    token,
    accept() {
      const rest = others.join(',');
      req.headers[PROTOCOL_HEADER] = rest;
      req.headersDistinct[PROTOCOL_HEADER] = [rest];
    },
  };
}
