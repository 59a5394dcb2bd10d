/**
 * @module certs/issue
 * Issues X.509 certificates with node-forge: a self-signed CA, and leaves it signs (serving or client). Shared by
 * the server's own certificates (self-signed.ts) and the manifests' serving certificate (manifests/serving-cert.ts).
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type forgeModule from 'node-forge';

// node-forge (a large library) is loaded the first time a certificate is issued, not at every start: a restart
// reuses the files it wrote. It is CommonJS, so require loads it synchronously, as the callers need.
let loaded: typeof forgeModule | undefined;
const forge = (): typeof forgeModule => (loaded ??= createRequire(import.meta.url)('node-forge') as typeof forgeModule);
const DAY_MS = 86_400_000;
// Backdating absorbs small clock differences between the machine that issues and the one that verifies.
const BACKDATE_MS = 5 * 60_000;

/** San is one subject alternative name. */
export interface San {
  type: 'DNS' | 'IP';
  value: string;
}

/** ForgeSigner is a certificate with its key, able to sign others. */
export interface ForgeSigner {
  cert: forgeModule.pki.Certificate;
  key: forgeModule.pki.rsa.PrivateKey;
}

/** forgeSigner reads a CA's PEM files into a signer (forge signs with RSA keys only: others throw). */
export function forgeSigner(certPem: string, keyPem: string): ForgeSigner {
  const { pki } = forge();
  return { cert: pki.certificateFromPem(certPem), key: pki.privateKeyFromPem(keyPem) };
}

/** Pem is an issued certificate and key, as PEM (forge's CRLF line ends), plus the signer for further use. */
export interface Pem {
  certPem: string;
  keyPem: string;
  signer: ForgeSigner;
}

type Attr = { shortName: string; value: string };

/** LeafSpec describes a leaf certificate. */
export interface LeafSpec {
  subject: Attr[];
  extKeyUsage: { serverAuth?: boolean; clientAuth?: boolean };
  sans?: San[];
}

/** newKeyPair: with no prng option and bits in range, forge delegates to crypto.generateKeyPairSync. */
function newKeyPair(): forgeModule.pki.rsa.KeyPair {
  return forge().pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 });
}

/** randomSerial is a positive 16-byte serial (RFC 5280: positive, at most 20 octets). */
function randomSerial(): string {
  const b = randomBytes(16);
  // A first byte in 0x01..0x7f keeps the DER INTEGER positive and minimally encoded.
  b[0] = (b[0]! % 0x7f) + 1;
  return b.toString('hex');
}

/** createCa issues a self-signed CA valid for `days`. */
export function createCa(now: Date, commonName: string, days: number): Pem {
  const { pki, md } = forge();
  const keys = newKeyPair();
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = new Date(now.getTime() + days * DAY_MS);
  const subject: Attr[] = [{ shortName: 'CN', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(keys.privateKey, md.sha256.create());
  return { certPem: pki.certificateToPem(cert), keyPem: pki.privateKeyToPem(keys.privateKey), signer: { cert, key: keys.privateKey } };
}

/** createLeaf issues a certificate signed by `ca`, valid until `notAfter`. */
export function createLeaf(ca: ForgeSigner, now: Date, notAfter: Date, spec: LeafSpec): Pem {
  const { pki, md } = forge();
  const keys = newKeyPair();
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = randomSerial();
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = notAfter;
  cert.setSubject(spec.subject);
  cert.setIssuer(ca.cert.subject.attributes);
  const extensions: object[] = [
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', ...spec.extKeyUsage },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.cert.generateSubjectKeyIdentifier().getBytes() },
  ];
  if (spec.sans !== undefined) {
    // GeneralName tags: 2 = dNSName, 7 = iPAddress (forge encodes both IPv4 and IPv6).
    const altNames = spec.sans.map((s) => (s.type === 'IP' ? { type: 7, ip: s.value } : { type: 2, value: s.value }));
    extensions.push({ name: 'subjectAltName', altNames });
  }
  cert.setExtensions(extensions);
  cert.sign(ca.key, md.sha256.create());
  return { certPem: pki.certificateToPem(cert), keyPem: pki.privateKeyToPem(keys.privateKey), signer: { cert, key: keys.privateKey } };
}
