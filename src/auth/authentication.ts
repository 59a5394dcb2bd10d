/**
 * @module auth/authentication
 * The authenticator chain, in kube's delegating order (authenticatorfactory/delegating.go): a trusted front proxy's
 * X-Remote-* headers → a client certificate (our own CA, or the cluster's client CA when delegated) → a bearer
 * token through TokenReview (delegated only), from `Authorization` or a WebSocket subprotocol. The result gets
 * system:authenticated. No credential: undefined, and the server answers 401 (anonymous requests are only served on
 * the health paths).
 */
import type { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';
import type { AuthConfigSource } from './delegated-config.js';
import { headerUser, isIdentityHeader, trustedProxy } from './request-header.js';
import { bearerToken, type ReviewToken } from './token-review.js';
import { protocolToken } from './websocket-token.js';
import { withAuthenticatedGroup, type UserInfo } from './user.js';
import { certificateUser, chainsTo, CertificatePool, peerCertificate } from './x509.js';
import { distinctHeaders } from './impersonation.js';
import { connectionOf } from '../util/http-connection.js';

/** Authentication authenticates requests and says which CAs the TLS layer should accept certificates from. */
export interface Authentication {
  authenticate(req: FastifyRequest): Promise<UserInfo | undefined>;
  /** trustedCAs are the PEM CA certificates client certificates may chain to. */
  trustedCAs(): string[];
  /** onTrustChange is called when trustedCAs changes (CA rotation). */
  onTrustChange(cb: () => void): void;
}

/** standaloneAuthentication accepts only client certificates from our own CA. */
export function standaloneAuthentication(ownCA: string): Authentication {
  const pool = new CertificatePool([ownCA]);
  return {
    async authenticate(req) {
      const peer = peerCertificate(connectionOf(req.raw) as TLSSocket);
      if (!peer || !chainsTo(peer, pool)) return undefined;
      const u = certificateUser(peer);
      return u && withAuthenticatedGroup(u);
    },
    trustedCAs: () => [...pool.pems],
    onTrustChange: () => undefined,
  };
}

/** delegatedAuthentication follows the cluster's settings and keeps accepting our own CA's certificates. */
export function delegatedAuthentication(ownCA: string, source: AuthConfigSource, reviewToken: ReviewToken): Authentication {
  const own = new CertificatePool([ownCA]);
  return {
    async authenticate(req) {
      const cfg = source.current();
      const peer = peerCertificate(connectionOf(req.raw) as TLSSocket);
      const rh = cfg?.requestHeader;
      if (rh && trustedProxy(peer, rh)) {
        const u = headerUser(distinctHeaders(req.raw), rh);
        // The identity headers are consumed here; nothing downstream may read them as client input.
        for (const h of Object.keys(req.headers)) if (isIdentityHeader(h, rh)) delete req.headers[h];
        if (u) return withAuthenticatedGroup(u);
      }
      if (peer && (chainsTo(peer, own) || (cfg && chainsTo(peer, cfg.clientCA)))) {
        const u = certificateUser(peer);
        if (u) return withAuthenticatedGroup(u);
      }
      const token = bearerToken(req.headers.authorization);
      if (token) {
        const u = await reviewToken(token);
        if (u) return withAuthenticatedGroup(u);
      }
      // A WebSocket client's token as a subprotocol (browsers cannot send Authorization on a WebSocket).
      const ws = protocolToken(req.raw);
      if (ws) {
        const u = await reviewToken(ws.token);
        if (u) {
          ws.accept();
          return withAuthenticatedGroup(u);
        }
      }
      return undefined;
    },
    trustedCAs: () => {
      const cfg = source.current();
      return [...own.pems, ...(cfg?.clientCA.pems ?? []), ...(cfg?.requestHeader?.ca.pems ?? [])];
    },
    onTrustChange: (cb) => source.onChange(() => cb()),
  };
}
