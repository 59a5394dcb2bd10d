/**
 * @module manifests/serving-cert
 * The serving certificate of an in-cluster install: a fresh CA and a serverAuth leaf whose SANs are the
 * Service's DNS names, so kube-aggregator can verify us through the APIService `caBundle` (it dials with
 * ServerName `website-apiserver.<namespace>.svc`).
 *
 * The CA key is used once and thrown away: the cluster only needs the CA certificate (caBundle, ca.crt),
 * and a key that is never stored cannot mint further certificates. Renewal therefore makes a new CA too.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createCa, createLeaf } from '../certs/issue.js';
import { CA_VALIDITY_DAYS, LEAF_VALIDITY_DAYS, RENEW_BEFORE_DAYS } from '../certs/self-signed.js';

const DAY_MS = 86_400_000;

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
  // The namespace in the CN tells apart the CAs of several installs in a trust store or a log.
  const ca = createCa(now, `${SERVICE_NAME}-ca.${namespace}`, CA_VALIDITY_DAYS);
  const sans = servingCertificateSans(namespace);
  const leaf = createLeaf(ca.signer, now, new Date(now.getTime() + LEAF_VALIDITY_DAYS * DAY_MS), {
    subject: [{ shortName: 'CN', value: sans[0]! }],
    extKeyUsage: { serverAuth: true },
    sans: sans.map((value) => ({ type: 'DNS', value })),
  });
  // forge ends PEM lines with CRLF; LF keeps the decoded Secret and caBundle plain text.
  const lf = (pem: string): string => pem.replace(/\r\n/g, '\n');
  return { cert: lf(leaf.certPem), key: lf(leaf.keyPem), caCert: lf(ca.certPem) };
}

/**
 * servingCertificateProblem says why `sc` cannot be kept for `namespace` (undefined: it can): unparsable,
 * key not matching, not signed by the CA, a SAN missing, or not valid for RENEW_BEFORE_DAYS more days.
 */
export function servingCertificateProblem(sc: ServingCertificate, namespace: string, opts: { now?: Date } = {}): string | undefined {
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
  for (const [what, x] of [
    ['tls.crt', leaf],
    ['ca.crt', ca],
  ] as const) {
    if (new Date(x.validFrom).getTime() > now) return `${what} is not valid before ${x.validFrom}`;
    if (new Date(x.validTo).getTime() - now < RENEW_BEFORE_DAYS * DAY_MS) {
      return `${what} expires ${x.validTo} (within ${RENEW_BEFORE_DAYS} days)`;
    }
  }
  return undefined;
}
