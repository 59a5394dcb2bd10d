/**
 * @module auth/request-header
 * Identity asserted by an authenticating proxy (kube-apiserver's aggregator) in X-Remote-* headers
 * (k8s.io/apiserver pkg/authentication/request/headerrequest/requestheader.go). Trusted only from a connection whose
 * client certificate chains to the request-header CA and, when names are configured, has an allowed CN.
 * Header values are read one line at a time: Node's joined `req.headers` would merge two groups into "a, b".
 */
import { chainsTo, type CertificatePool, type PeerCertificate } from './x509.js';
import type { UserInfo } from './user.js';

/** RequestHeaderConfig is the requestheader-* part of kube-system/extension-apiserver-authentication. */
export interface RequestHeaderConfig {
  ca: CertificatePool;
  allowedNames: string[];
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
}

/** Headers is every request header by lower-case name, each line separately (IncomingMessage.headersDistinct). */
export type Headers = Record<string, string[] | undefined>;

/** trustedProxy tells whether the connection's certificate may assert identities in headers. */
export function trustedProxy(peer: PeerCertificate | undefined, cfg: RequestHeaderConfig): boolean {
  if (!peer || !chainsTo(peer, cfg.ca)) return false;
  return cfg.allowedNames.length === 0 || cfg.allowedNames.includes(peer.commonName);
}

const first = (h: Headers, names: string[]) => {
  for (const n of names) {
    const v = h[n.toLowerCase()]?.[0];
    if (v) return v;
  }
  return '';
};

// Extra keys are sent %-escaped (they may hold '/' and upper case, which header names cannot): lower-case, then unescape.
function extraKey(raw: string): string {
  try {
    return decodeURIComponent(raw.toLowerCase());
  } catch {
    return raw.toLowerCase();
  }
}

/** headerUser reads the identity from the headers; undefined when no username header is set. */
export function headerUser(h: Headers, cfg: RequestHeaderConfig): UserInfo | undefined {
  const name = first(h, cfg.usernameHeaders);
  if (!name) return undefined;
  const groups: string[] = [];
  for (const g of cfg.groupHeaders) for (const v of h[g.toLowerCase()] ?? []) if (v) groups.push(v);
  const extra: Record<string, string[]> = {};
  for (const prefix of cfg.extraHeaderPrefixes) {
    const p = prefix.toLowerCase();
    for (const [header, values] of Object.entries(h)) {
      if (!header.startsWith(p) || header.length === p.length || !values) continue;
      const key = extraKey(header.slice(p.length));
      (extra[key] ??= []).push(...values);
    }
  }
  const uid = first(h, cfg.uidHeaders);
  return { name, groups, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
}

/** headerNames lists every header the config reads, to strip them before the request goes on. */
export function isIdentityHeader(header: string, cfg: RequestHeaderConfig): boolean {
  const h = header.toLowerCase();
  return (
    [...cfg.usernameHeaders, ...cfg.uidHeaders, ...cfg.groupHeaders].some((n) => n.toLowerCase() === h) ||
    cfg.extraHeaderPrefixes.some((p) => h.startsWith(p.toLowerCase()))
  );
}
