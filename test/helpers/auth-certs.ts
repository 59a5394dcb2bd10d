/**
 * Certificates for the authentication unit tests (src/auth/*.test.ts), made with node-forge independently of the code
 * under test: CAs, intermediates and client leaves with chosen names, validity, key usages and signer, and the
 * PeerCertificate a TLS connection presenting them would yield.
 */
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import type { PeerCertificate } from '../../src/auth/x509.js';

const pki = forge.pki;
export const HOUR_MS = 3_600_000;

/** TestCert is one certificate with its key, in every form the tests need. */
export interface TestCert {
  pem: string;
  keyPem: string;
  x509: X509Certificate;
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
  /** cn and o as written into the subject. */
  cn: string;
  o: string[];
}

// RSA keys are the slow part: 1024-bit keys (enough for tests, still accepted by Node's TLS) take ~10 ms instead of
// 100-500 ms. Leaves share one key; each CA gets its own (a signature must not verify under another CA's key, or the
// forged-chain tests would prove nothing).
let leafKeys: forge.pki.rsa.KeyPair | undefined;
function newKeys(): forge.pki.rsa.KeyPair {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 1024,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const key = pki.privateKeyFromPem(privateKey);
  return { privateKey: key, publicKey: pki.setRsaPublicKey(key.n, key.e) };
}

let serial = 1;

export interface CertSpec {
  cn: string;
  o?: string[];
  /** Signer; self-signed when absent. */
  issuer?: TestCert;
  ca?: boolean;
  /** Extended key usages; `null` leaves the extension out (any usage). Default clientAuth for leaves. */
  eku?: { clientAuth?: boolean; serverAuth?: boolean; anyExtendedKeyUsage?: boolean } | null;
  notBefore?: Date;
  notAfter?: Date;
  /** Extra subject attributes after CN and O (e.g. a second CN). */
  extraSubject?: { shortName: string; value: string }[];
  ipSans?: string[];
  /** Sign with this key instead of the issuer's (a forgery: the issuer's name, someone else's signature). */
  signWith?: forge.pki.rsa.PrivateKey;
}

/** makeCert creates a certificate as described; CAs get fresh keys, leaves share one. */
export function makeCert(spec: CertSpec): TestCert {
  const ca = spec.ca === true;
  const keys = ca ? newKeys() : (leafKeys ??= newKeys());
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = (serial++).toString(16).padStart(4, '0');
  cert.validity.notBefore = spec.notBefore ?? new Date(Date.now() - HOUR_MS);
  cert.validity.notAfter = spec.notAfter ?? new Date(Date.now() + 24 * HOUR_MS);
  const subject = [{ shortName: 'CN', value: spec.cn }, ...(spec.o ?? []).map((value) => ({ shortName: 'O', value })), ...(spec.extraSubject ?? [])];
  cert.setSubject(subject);
  cert.setIssuer(spec.issuer ? spec.issuer.cert.subject.attributes : subject);
  const ext: object[] = [{ name: 'basicConstraints', cA: ca, critical: true }];
  if (ca) ext.push({ name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true });
  else ext.push({ name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true });
  const eku = spec.eku === undefined ? (ca ? null : { clientAuth: true }) : spec.eku;
  if (eku) ext.push({ name: 'extKeyUsage', ...eku });
  if (spec.ipSans) ext.push({ name: 'subjectAltName', altNames: spec.ipSans.map((ip) => ({ type: 7, ip })) });
  cert.setExtensions(ext);
  cert.sign(spec.signWith ?? spec.issuer?.key ?? keys.privateKey, forge.md.sha256.create());
  const pem = pki.certificateToPem(cert);
  return { pem, keyPem: pki.privateKeyToPem(keys.privateKey), x509: new X509Certificate(pem), cert, key: keys.privateKey, cn: spec.cn, o: spec.o ?? [] };
}

/** makeCA is a self-signed CA (or one signed by `issuer`: an intermediate). */
export const makeCA = (cn: string, more: Omit<CertSpec, 'cn' | 'ca'> = {}) => makeCert({ cn, ca: true, ...more });

/** makeClient is a client-auth leaf signed by `issuer`. */
export const makeClient = (issuer: TestCert, cn: string, more: Omit<CertSpec, 'cn' | 'issuer'> = {}) => makeCert({ cn, issuer, ...more });

/** peerOf is what a connection presenting `leaf` followed by `sent` would give the authenticators. */
export function peerOf(leaf: TestCert, sent: TestCert[] = []): PeerCertificate {
  return { leaf: leaf.x509, intermediates: sent.map((c) => c.x509), commonName: leaf.cn, organizations: [...leaf.o] };
}
