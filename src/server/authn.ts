/**
 * @module server/authn
 * Standalone authentication: a client certificate that verifies against our CA is the only credential
 * (user = CN, groups = O, plus system:authenticated). Anything else is 401, except the health paths.
 * The TLS layer requests certificates without requiring them, so `authorized` must be checked: an unverified
 * certificate still exposes its subject (DEPENDENCIES.md §1).
 */
import type { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';

/** UserInfo is an authenticated identity (user.Info). */
export interface UserInfo {
  name: string;
  groups: string[];
}

/** Authenticator returns the identity of a request, or undefined when it carries no valid credential. */
export type Authenticator = (req: FastifyRequest) => UserInfo | undefined;

/** ALWAYS_ALLOW_PATHS answer without credentials, as kube's delegated authz AlwaysAllowPaths. */
export const ALWAYS_ALLOW_PATHS = new Set(['/healthz', '/livez', '/readyz']);

/** clientCertificateAuthenticator trusts only certificates that the TLS handshake verified against our CA. */
export const clientCertificateAuthenticator: Authenticator = (req) => {
  const socket = req.raw.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function' || socket.authorized !== true) return undefined;
  const cert = socket.getPeerCertificate();
  const cn = cert?.subject?.CN;
  if (!cn) return undefined;
  const name = Array.isArray(cn) ? cn[0] ?? '' : cn;
  const o = cert.subject.O;
  const groups = o === undefined ? [] : Array.isArray(o) ? [...o] : [o];
  if (!groups.includes('system:authenticated')) groups.push('system:authenticated');
  return { name, groups };
};
