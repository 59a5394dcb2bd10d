/**
 * @module certs/self-signed
 * ensureCertificates: a private CA, a serving certificate and an `admin` client certificate in a directory,
 * generated on first start and reused until they expire, stop matching the requested SANs, or stop
 * chaining to the CA. Also writes a kubeconfig that uses the admin certificate.
 *
 * Certificates are created with node-forge (Node cannot sign certificates); existing files are inspected
 * with Node's X509Certificate, which is faster and stricter than forge's parser.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { createCa, createLeaf, forgeSigner, type ForgeSigner, type LeafSpec, type San } from './issue.js';
import { renderKubeconfig } from './kubeconfig.js';

const DAY_MS = 86_400_000;

/** CA_COMMON_NAME is the subject CN of the generated CA. */
export const CA_COMMON_NAME = 'website-apiserver-ca';
/** SERVICE_DNS_NAME is the in-cluster Service name the aggregator uses to reach us. */
export const SERVICE_DNS_NAME = 'website-apiserver.website-system.svc';
/** DEFAULT_SERVING_SANS are always in the serving certificate, before any extra SANs. */
export const DEFAULT_SERVING_SANS: readonly string[] = ['localhost', '127.0.0.1', '::1', SERVICE_DNS_NAME];
/** ADMIN_USER and ADMIN_GROUP are the identity of the admin client certificate (CN and O). */
export const ADMIN_USER = 'admin';
/** ADMIN_GROUP gives the admin client full access under standalone authorization. */
export const ADMIN_GROUP = 'system:masters';
/** CA_VALIDITY_DAYS is how long a new CA is valid. */
export const CA_VALIDITY_DAYS = 3650;
/** LEAF_VALIDITY_DAYS is how long new serving and client certificates are valid (capped at the CA's end). */
export const LEAF_VALIDITY_DAYS = 365;
/** RENEW_BEFORE_DAYS: a certificate with less validity than this left is regenerated. */
export const RENEW_BEFORE_DAYS = 30;

/** GeneratedFile names one artifact ensureCertificates may (re)write. */
export type GeneratedFile = 'ca' | 'serving' | 'admin' | 'kubeconfig';

/** CertificateOptions configures ensureCertificates. */
export interface CertificateOptions {
  /** certDir holds ca.*, serving.*, admin.* and kubeconfig; created (mode 0700) if missing. */
  certDir: string;
  /** extraSans are added to the serving certificate: IPs if they parse as IPv4/IPv6, else DNS names. */
  extraSans?: string[];
  /** serverUrl is written into the kubeconfig, e.g. `https://127.0.0.1:8443`. */
  serverUrl: string;
  /** tlsCertFile is a serving cert (PEM, may be a chain) to use instead of generating one; needs tlsKeyFile. */
  tlsCertFile?: string;
  /** tlsKeyFile is the private key of tlsCertFile. */
  tlsKeyFile?: string;
  /** now overrides the current time (tests); used both for expiry checks and for new validity periods. */
  now?: Date;
  /**
   * serving is a serving key pair held elsewhere (--self-managed-tls's Secret) with the CA that signed it: used instead
   * of generating one, and that CA goes into the kubeconfig. Excludes tlsCertFile.
   */
  serving?: { certPem: string; keyPem: string; caPem: string };
}

/** CertificateBundle is the PEM material in effect after ensureCertificates. */
export interface CertificateBundle {
  /** caCert is our CA; it signs the admin cert and (unless tlsCertFile is used) the serving cert. */
  caCert: string;
  caKey: string;
  /** servingCert is the generated serving cert, or the content of tlsCertFile. */
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  kubeconfigPath: string;
  /** generated lists which artifacts were (re)written this call, in the order ca, serving, admin, kubeconfig. */
  generated: GeneratedFile[];
  /** reasons says why each generated artifact was (re)written, for logging. */
  reasons: Partial<Record<GeneratedFile, string>>;
}

/** CertificateDescription is a summary of one certificate, for logs and tests. */
export interface CertificateDescription {
  /** subject is the subject DN as Node prints it, with RDNs joined by ", " (e.g. `O=system:masters, CN=admin`). */
  subject: string;
  /** sans are the subject alternative names as `DNS:<name>` / `IP:<canonical address>`. */
  sans: string[];
  validTo: Date;
}

/** describeCertificate summarizes the first certificate in a PEM string. */
export function describeCertificate(pem: string): CertificateDescription {
  const x = new X509Certificate(pem);
  return {
    subject: x.subject.split('\n').join(', '),
    sans: parseCertSans(x.subjectAltName),
    validTo: new Date(x.validTo),
  };
}

/**
 * ensureCertificates makes sure certDir holds a usable CA, serving cert, admin client cert and kubeconfig,
 * reusing what is there when still valid. A regenerated CA forces new leaves (they would no longer verify).
 * Synchronous on purpose: it runs once at startup, and forge's synchronous RSA keygen uses Node's native
 * implementation (~100 ms per key).
 */
export function ensureCertificates(opts: CertificateOptions): CertificateBundle {
  const now = opts.now ?? new Date();
  if ((opts.tlsCertFile === undefined) !== (opts.tlsKeyFile === undefined)) {
    throw new Error('tlsCertFile and tlsKeyFile must be given together');
  }
  const dir = opts.certDir;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = (name: string): string => join(dir, name);
  const generated: GeneratedFile[] = [];
  const reasons: Partial<Record<GeneratedFile, string>> = {};
  const regenerated = (what: GeneratedFile, why: string): void => {
    generated.push(what);
    reasons[what] = why;
  };

  // CA: reused only if it is a self-signed CA with a matching key that forge can sign with.
  let ca: Pair;
  // Read into forge only when a leaf is issued: a restart that reuses every file never loads forge.
  let caSigner: () => ForgeSigner;
  const reusableCa = reuseCa(loadPair(file('ca.crt'), file('ca.key')), now);
  if (typeof reusableCa === 'string') {
    const made = createCa(now, CA_COMMON_NAME, CA_VALIDITY_DAYS);
    writePair(file('ca.crt'), file('ca.key'), made.certPem, made.keyPem);
    ca = toPair(made.certPem, made.keyPem);
    caSigner = () => made.signer;
    regenerated('ca', reusableCa);
  } else {
    ({ pair: ca, signer: caSigner } = reusableCa);
  }
  const caRenewed = generated.includes('ca');
  // Leaves never outlive the CA, so they all come up for renewal together with it.
  const leafNotAfter = new Date(Math.min(now.getTime() + LEAF_VALIDITY_DAYS * DAY_MS, new Date(ca.x509.validTo).getTime()));

  /** leaf reuses certDir/<name>.{crt,key} unless a check fails, else signs a new one with the CA. */
  const leaf = (name: 'serving' | 'admin', extraCheck: (p: Pair) => string | undefined, spec: LeafSpec): { certPem: string; keyPem: string } => {
    const certPath = file(`${name}.crt`);
    const keyPath = file(`${name}.key`);
    const existing = loadPair(certPath, keyPath);
    let why: string | undefined;
    if (caRenewed) why = 'CA regenerated';
    else if (typeof existing === 'string') why = existing;
    else why = leafProblem(existing, ca, now) ?? extraCheck(existing);
    if (why === undefined && typeof existing !== 'string') return existing;
    const made = createLeaf(caSigner(), now, leafNotAfter, spec);
    writePair(certPath, keyPath, made.certPem, made.keyPem);
    regenerated(name, why ?? 'unusable');
    return made;
  };

  // Serving certificate: either the operator's files, or ours.
  let serving: { certPem: string; keyPem: string };
  if (opts.serving !== undefined) {
    serving = { certPem: opts.serving.certPem, keyPem: opts.serving.keyPem };
  } else if (opts.tlsCertFile !== undefined && opts.tlsKeyFile !== undefined) {
    serving = { certPem: readFileSync(opts.tlsCertFile, 'utf8'), keyPem: readFileSync(opts.tlsKeyFile, 'utf8') };
    // Fail at startup rather than on the first TLS handshake.
    if (!new X509Certificate(serving.certPem).checkPrivateKey(createPrivateKey(serving.keyPem))) {
      throw new Error(`${opts.tlsKeyFile} is not the private key of ${opts.tlsCertFile}`);
    }
  } else {
    const wanted = normalizeSans([...DEFAULT_SERVING_SANS, ...(opts.extraSans ?? [])]);
    serving = leaf(
      'serving',
      (p) => {
        const have = parseCertSans(p.x509.subjectAltName);
        return sameSet(have, wanted.map(sanKey)) ? undefined : `SANs changed (had ${have.join(', ')})`;
      },
      { subject: [{ shortName: 'CN', value: SERVICE_DNS_NAME }], extKeyUsage: { serverAuth: true }, sans: wanted },
    );
  }

  // Admin client certificate: always ours, since standalone authentication trusts only our CA.
  const admin = leaf('admin', () => undefined, {
    subject: [
      { shortName: 'O', value: ADMIN_GROUP },
      { shortName: 'CN', value: ADMIN_USER },
    ],
    extKeyUsage: { clientAuth: true },
  });

  // With operator-provided serving files our CA did not sign the serving cert, so kubectl must trust the
  // provided PEM (chain) itself: that verifies a self-signed cert, and Go's verifier accepts a leaf that
  // is in its root pool. The admin client cert is still ours.
  const kubeconfigPath = file('kubeconfig');
  const kubeconfig = renderKubeconfig({
    server: opts.serverUrl,
    caPem: opts.serving !== undefined ? opts.serving.caPem : opts.tlsCertFile !== undefined ? serving.certPem : ca.certPem,
    clientCertPem: admin.certPem,
    clientKeyPem: admin.keyPem,
  });
  // Compare content, so a changed port or rotated cert rewrites it but a plain restart does not.
  const currentKubeconfig = tryRead(kubeconfigPath);
  if (currentKubeconfig !== kubeconfig) {
    writeSecure(kubeconfigPath, kubeconfig, 0o600); // embeds the admin key
    regenerated('kubeconfig', currentKubeconfig === undefined ? 'missing' : 'content changed');
  }

  return {
    caCert: ca.certPem,
    caKey: ca.keyPem,
    servingCert: serving.certPem,
    servingKey: serving.keyPem,
    adminCert: admin.certPem,
    adminKey: admin.keyPem,
    kubeconfigPath,
    generated,
    reasons,
  };
}

// ---------------------------------------------------------------------------------------------------
// Inspecting existing files

interface Pair {
  certPem: string;
  keyPem: string;
  x509: X509Certificate;
  key: KeyObject;
}

function tryRead(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined; // missing or unreadable: both mean "regenerate"
  }
}

function toPair(certPem: string, keyPem: string): Pair {
  return { certPem, keyPem, x509: new X509Certificate(certPem), key: createPrivateKey(keyPem) };
}

/** loadPair returns the parsed cert and key, or a reason why they cannot be used. */
function loadPair(certPath: string, keyPath: string): Pair | string {
  const certPem = tryRead(certPath);
  if (certPem === undefined) return `${certPath} missing or unreadable`;
  const keyPem = tryRead(keyPath);
  if (keyPem === undefined) return `${keyPath} missing or unreadable`;
  let pair: Pair;
  try {
    pair = toPair(certPem, keyPem);
  } catch (e) {
    return `cannot parse ${certPath} or ${keyPath}: ${(e as Error).message}`;
  }
  if (!pair.x509.checkPrivateKey(pair.key)) return `${keyPath} does not match ${certPath}`;
  return pair;
}

/** timeProblem reports a certificate that is not yet valid or expires within RENEW_BEFORE_DAYS. */
function timeProblem(x: X509Certificate, now: Date): string | undefined {
  if (new Date(x.validFrom).getTime() > now.getTime()) return `not valid before ${x.validFrom}`;
  if (new Date(x.validTo).getTime() - now.getTime() < RENEW_BEFORE_DAYS * DAY_MS) {
    return `expires ${x.validTo} (within ${RENEW_BEFORE_DAYS} days)`;
  }
  return undefined;
}

/** reuseCa returns the existing CA with a (lazy) forge signer for it, or why it must be regenerated. */
function reuseCa(loaded: Pair | string, now: Date): { pair: Pair; signer: () => ForgeSigner } | string {
  if (typeof loaded === 'string') return loaded;
  if (!loaded.x509.ca || !loaded.x509.verify(loaded.x509.publicKey)) return 'not a self-signed CA certificate';
  const t = timeProblem(loaded.x509, now);
  if (t !== undefined) return t;
  // forge signs RSA only; a foreign CA with another key type is replaced rather than failing later.
  if (loaded.key.asymmetricKeyType !== 'rsa') return `CA not usable for signing: a ${loaded.key.asymmetricKeyType} key (forge signs with RSA keys only)`;
  let signer: ForgeSigner | undefined;
  return { pair: loaded, signer: () => (signer ??= forgeSigner(loaded.certPem, loaded.keyPem)) };
}

function leafProblem(leaf: Pair, ca: Pair, now: Date): string | undefined {
  // checkIssued compares names and key identifiers; verify checks the signature itself.
  if (!leaf.x509.checkIssued(ca.x509) || !leaf.x509.verify(ca.x509.publicKey)) return 'not signed by current CA';
  return timeProblem(leaf.x509, now);
}

// ---------------------------------------------------------------------------------------------------
// Subject alternative names

// Hostname labels; `_` is tolerated (seen in real service names) and a leading `*.` wildcard is allowed.
const DNS_NAME = /^(\*\.)?[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** canonicalIp makes equal addresses compare equal (Node prints IPv6 SANs uncompressed). */
function canonicalIp(ip: string): string {
  if (isIP(ip) === 4) return ip;
  // The WHATWG URL parser compresses and lower-cases IPv6 addresses.
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}

/** InvalidSan refuses a --tls-san that is neither an IP address nor a DNS name; its message is one line. */
export class InvalidSan extends Error {}

function parseSan(raw: string): San {
  const v = raw.trim();
  if (isIP(v) !== 0) {
    try {
      return { type: 'IP', value: canonicalIp(v) };
    } catch {
      throw new InvalidSan(`invalid SAN ${JSON.stringify(raw)}: IP address not usable in a certificate`);
    }
  }
  const name = v.toLowerCase().replace(/\.$/, '');
  if (name.length === 0 || name.length > 253 || !DNS_NAME.test(name)) {
    throw new InvalidSan(`invalid SAN ${JSON.stringify(raw)}: neither an IP address nor a DNS name`);
  }
  return { type: 'DNS', value: name };
}

const sanKey = (s: San): string => `${s.type}:${s.value}`;

/** normalizeSans parses, canonicalizes and de-duplicates requested SANs, keeping first-seen order. */
function normalizeSans(raw: readonly string[]): San[] {
  const seen = new Map<string, San>();
  for (const r of raw) {
    const s = parseSan(r);
    if (!seen.has(sanKey(s))) seen.set(sanKey(s), s);
  }
  return [...seen.values()];
}

/**
 * parseCertSans turns X509Certificate.subjectAltName ("DNS:a, IP Address:1.2.3.4") into sanKey form.
 * Other entry types are kept verbatim, so a cert carrying them never matches a requested set.
 */
function parseCertSans(subjectAltName: string | undefined): string[] {
  if (!subjectAltName) return [];
  return subjectAltName.split(', ').map((entry) => {
    if (entry.startsWith('DNS:')) return `DNS:${entry.slice(4).toLowerCase()}`;
    if (entry.startsWith('IP Address:')) {
      try {
        return `IP:${canonicalIp(entry.slice(11))}`;
      } catch {
        return entry;
      }
    }
    return entry;
  });
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

// ---------------------------------------------------------------------------------------------------
// Creating certificates

// ---------------------------------------------------------------------------------------------------
// Writing files

/** writeSecure writes a file and forces its mode: writeFileSync's mode only applies to new files. */
function writeSecure(path: string, content: string, mode: number): void {
  writeFileSync(path, content, { mode });
  chmodSync(path, mode);
}

function writePair(certPath: string, keyPath: string, certPem: string, keyPem: string): void {
  writeSecure(keyPath, keyPem, 0o600);
  writeSecure(certPath, certPem, 0o644);
}
