/**
 * @module auth/x509
 * Client certificates. The TLS layer requests (never requires) a certificate and verifies it against the union of
 * every CA we trust; which CA a chain ends at decides what it may do (a front-proxy certificate may assert
 * X-Remote-* headers, an ordinary client certificate names its user). So each pool re-checks the chain itself
 * (k8s.io/apiserver pkg/authentication/request/x509: Verifier, CommonNameUserConversion).
 */
import { X509Certificate } from 'node:crypto';
import type { TLSSocket, DetailedPeerCertificate } from 'node:tls';
import { LRUCache } from 'lru-cache';
import type { UserInfo } from './user.js';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EKU = '2.5.29.37.0';
const MAX_CHAIN = 8;

/** splitPem returns each certificate of a PEM bundle. */
export function splitPem(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

/** CertificatePool is a set of trusted CA certificates. */
export class CertificatePool {
  readonly pems: readonly string[];
  readonly #cas: X509Certificate[];

  constructor(pems: readonly string[]) {
    this.pems = pems.flatMap(splitPem);
    this.#cas = this.pems.map((p) => new X509Certificate(p));
  }

  get size(): number {
    return this.#cas.length;
  }

  /** issued tells whether one of the pool's CAs signed `cert` (or `cert` is one of them). */
  issued(cert: X509Certificate): boolean {
    return this.#cas.some((ca) => ca.fingerprint256 === cert.fingerprint256 || signedBy(cert, ca));
  }
}

// A signature check costs more than the rest of a GET, and its answer never changes for two given certificates;
// both live as long as their connection or pool, so the answer is kept with them. Validity times are still
// checked on every request.
const signatures = new WeakMap<X509Certificate, WeakMap<X509Certificate, boolean>>();

/** signedBy tells whether `issuer` issued `cert` and its key made the signature. */
function signedBy(cert: X509Certificate, issuer: X509Certificate): boolean {
  let known = signatures.get(cert);
  if (!known) signatures.set(cert, (known = new WeakMap()));
  let ok = known.get(issuer);
  if (ok === undefined) known.set(issuer, (ok = cert.checkIssued(issuer) && cert.verify(issuer.publicKey)));
  return ok;
}

/** PeerCertificate is a TLS peer's verified leaf with the intermediates it sent. */
export interface PeerCertificate {
  leaf: X509Certificate;
  intermediates: X509Certificate[];
  commonName: string;
  organizations: string[];
}

const validity = new WeakMap<X509Certificate, { from: number; to: number }>();
const valid = (c: X509Certificate, now: number) => {
  let v = validity.get(c);
  if (!v) validity.set(c, (v = { from: Date.parse(c.validFrom), to: Date.parse(c.validTo) }));
  return v.from <= now && now <= v.to;
};

// The chain of a socket never changes: parse it once per connection, not once per request.
const peers = new WeakMap<TLSSocket, PeerCertificate | null>();

// kube-apiserver's aggregator opens a new connection whenever more requests are in flight to us than it keeps idle
// (25: client-go's MaxIdleConnsPerHost over HTTP/1.1), hundreds a second under load, each presenting the same
// front-proxy chain. Chains are kept by their certificates' SHA-256 fingerprints, so a new connection reuses the
// parsed certificates and the signature checks remembered on them (validity is still checked per request).
const chains = new LRUCache<string, PeerCertificate>({ max: 256 });

/** chainKey names a presented chain by its certificates' fingerprints, leaf first; '' when one is missing. */
function chainKey(detailed: DetailedPeerCertificate): string {
  const prints: string[] = [];
  let cur: DetailedPeerCertificate | undefined = detailed;
  for (let i = 0; cur?.raw && i <= MAX_CHAIN; i++) {
    if (!cur.fingerprint256) return '';
    prints.push(cur.fingerprint256);
    if (cur.issuerCertificate === cur) break;
    cur = cur.issuerCertificate;
  }
  return prints.join('/');
}

/** peerCertificate returns the client certificate of a connection whose chain the TLS layer verified. */
export function peerCertificate(socket: TLSSocket): PeerCertificate | undefined {
  if (typeof socket.getPeerCertificate !== 'function' || socket.authorized !== true) return undefined;
  const known = peers.get(socket);
  if (known !== undefined) return known ?? undefined;
  const detailed = socket.getPeerCertificate(true);
  const key = detailed?.raw ? chainKey(detailed) : '';
  const seen = key ? chains.get(key) : undefined;
  if (seen) {
    peers.set(socket, seen);
    return seen;
  }
  let result: PeerCertificate | null = null;
  if (detailed?.raw) {
    const intermediates: X509Certificate[] = [];
    let cur: DetailedPeerCertificate | undefined = detailed.issuerCertificate;
    for (let i = 0; cur?.raw && i < MAX_CHAIN; i++) {
      intermediates.push(new X509Certificate(cur.raw));
      if (cur.issuerCertificate === cur) break;
      cur = cur.issuerCertificate;
    }
    const cn = detailed.subject?.CN;
    const o = detailed.subject?.O;
    result = {
      leaf: new X509Certificate(detailed.raw),
      intermediates,
      // Several CNs: Go's pkix.Name keeps the last one.
      commonName: (Array.isArray(cn) ? cn[cn.length - 1] : cn) ?? '',
      organizations: o === undefined ? [] : Array.isArray(o) ? [...o] : [o],
    };
  }
  peers.set(socket, result);
  if (result && key) chains.set(key, result);
  return result ?? undefined;
}

/**
 * chainsTo verifies that the peer's leaf leads, through certificates it sent, to a CA of `pool`, every link a real
 * signature within its validity, with client-auth usage on the leaf when it restricts usages.
 */
export function chainsTo(peer: PeerCertificate, pool: CertificatePool, now = Date.now()): boolean {
  if (pool.size === 0 || !valid(peer.leaf, now)) return false;
  const usages = peer.leaf.keyUsage;
  if (usages && usages.length > 0 && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_EKU)) return false;
  let cur = peer.leaf;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    if (pool.issued(cur)) return true;
    const parent = peer.intermediates.find((c) => c.ca && valid(c, now) && c !== cur && signedBy(cur, c));
    if (!parent) return false;
    cur = parent;
  }
  return false;
}

/** certificateUser is the identity of an ordinary client certificate: user = CN, groups = O. */
export function certificateUser(peer: PeerCertificate): UserInfo | undefined {
  if (!peer.commonName) return undefined;
  return { name: peer.commonName, groups: [...peer.organizations] };
}
