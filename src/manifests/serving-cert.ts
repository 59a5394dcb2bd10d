/**
 * @module manifests/serving-cert
 * The serving certificate of an in-cluster install: a fresh CA and a serverAuth leaf whose SANs are the
 * Service's DNS names, so kube-aggregator can verify us through the APIService `caBundle` (it dials with
 * ServerName `website-apiserver.<namespace>.svc`).
 *
 * The CA key is used once and thrown away: the cluster only needs the CA certificate (caBundle, ca.crt),
 * and a key that is never stored cannot mint further certificates. Renewal therefore makes a new CA too.
 *
 * certs/self-signed.ts has similar forge code, but its helpers are private; this is the minimal copy.
 */
import { X509Certificate, createPrivateKey, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { CA_VALIDITY_DAYS, LEAF_VALIDITY_DAYS, RENEW_BEFORE_DAYS } from '../certs/self-signed.js';

const pki = forge.pki;
const DAY_MS = 86_400_000;
// Backdated so a node whose clock runs a little slow still accepts a certificate made just now.
const BACKDATE_MS = 5 * 60_000;

/** SERVICE_NAME is the name of the Service (and of most other objects) of the install. */
export const SERVICE_NAME = 'website-apiserver';

/** ServingCertificate is the PEM material stored in the serving-certificate Secret. */
export interface ServingCertificate {
  /** cert is the serving certificate (tls.crt). */
  cert: string;
  /** key is its private key (tls.key), PKCS#1 PEM. */
  key: string;
  /** caCert is the CA that signed cert (ca.crt); its base64 is the APIService caBundle. */
  caCert: string;
}

/** servingCertificateSans lists the DNS names the serving certificate must carry for a namespace. */
export function servingCertificateSans(namespace: string): string[] {
  return [
    `${SERVICE_NAME}.${namespace}.svc`, // what the aggregator verifies
    `${SERVICE_NAME}.${namespace}.svc.cluster.local`,
    `${SERVICE_NAME}.${namespace}`,
    SERVICE_NAME,
  ];
}

/**
 * generateServingCertificate makes a new CA and a serving certificate for the Service in `namespace`.
 * The CA is valid CA_VALIDITY_DAYS, the leaf LEAF_VALIDITY_DAYS (both from certs/self-signed).
 */
export function generateServingCertificate(namespace: string, opts: { now?: Date } = {}): ServingCertificate {
  const now = opts.now ?? new Date();
  const notBefore = new Date(now.getTime() - BACKDATE_MS);

  const caKeys = pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 }); // native keygen through forge
  const ca = pki.createCertificate();
  ca.publicKey = caKeys.publicKey;
  ca.serialNumber = randomSerial();
  ca.validity.notBefore = notBefore;
  ca.validity.notAfter = new Date(now.getTime() + CA_VALIDITY_DAYS * DAY_MS);
  // The namespace in the CN tells apart the CAs of several installs in a trust store or a log.
  const caSubject = [{ shortName: 'CN', value: `${SERVICE_NAME}-ca.${namespace}` }];
  ca.setSubject(caSubject);
  ca.setIssuer(caSubject);
  ca.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());

  const keys = pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 });
  const leaf = pki.createCertificate();
  leaf.publicKey = keys.publicKey;
  leaf.serialNumber = randomSerial();
  leaf.validity.notBefore = notBefore;
  leaf.validity.notAfter = new Date(now.getTime() + LEAF_VALIDITY_DAYS * DAY_MS);
  const sans = servingCertificateSans(namespace);
  leaf.setSubject([{ shortName: 'CN', value: sans[0]! }]);
  leaf.setIssuer(caSubject);
  leaf.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
    { name: 'subjectAltName', altNames: sans.map((value) => ({ type: 2, value })) }, // 2 = dNSName
  ]);
  leaf.sign(caKeys.privateKey, forge.md.sha256.create());

  // forge ends PEM lines with CRLF; LF keeps the decoded Secret and caBundle plain text.
  const lf = (pem: string): string => pem.replace(/\r\n/g, '\n');
  return {
    cert: lf(pki.certificateToPem(leaf)),
    key: lf(pki.privateKeyToPem(keys.privateKey)),
    caCert: lf(pki.certificateToPem(ca)),
  };
}

/**
 * servingCertificateProblem says why `sc` cannot be kept for `namespace` (undefined: it can): unparsable,
 * key not matching, not signed by the CA, a SAN missing, or not valid for RENEW_BEFORE_DAYS more days.
 */
export function servingCertificateProblem(
  sc: ServingCertificate,
  namespace: string,
  opts: { now?: Date } = {},
): string | undefined {
  const now = (opts.now ?? new Date()).getTime();
  let leaf: X509Certificate;
  let ca: X509Certificate;
  try {
    leaf = new X509Certificate(sc.cert);
    ca = new X509Certificate(sc.caCert);
    if (!leaf.checkPrivateKey(createPrivateKey(sc.key))) return 'tls.key does not match tls.crt';
  } catch (e) {
    return `cannot parse the certificate or key: ${(e as Error).message}`;
  }
  if (!ca.ca || !ca.verify(ca.publicKey)) return 'ca.crt is not a self-signed CA certificate';
  if (!leaf.checkIssued(ca) || !leaf.verify(ca.publicKey)) return 'tls.crt is not signed by ca.crt';
  const have = new Set((leaf.subjectAltName ?? '').split(', '));
  const missing = servingCertificateSans(namespace).filter((n) => !have.has(`DNS:${n}`));
  if (missing.length > 0) return `tls.crt lacks SAN ${missing.join(', ')}`;
  for (const [what, x] of [['tls.crt', leaf], ['ca.crt', ca]] as const) {
    if (new Date(x.validFrom).getTime() > now) return `${what} is not valid before ${x.validFrom}`;
    if (new Date(x.validTo).getTime() - now < RENEW_BEFORE_DAYS * DAY_MS) {
      return `${what} expires ${x.validTo} (within ${RENEW_BEFORE_DAYS} days)`;
    }
  }
  return undefined;
}

/** randomSerial is a positive serial of 16 bytes (RFC 5280: positive, at most 20 octets). */
function randomSerial(): string {
  const b = randomBytes(16);
  b[0] = (b[0]! % 0x7f) + 1; // first byte 0x01..0x7f: positive and minimally encoded
  return b.toString('hex');
}
