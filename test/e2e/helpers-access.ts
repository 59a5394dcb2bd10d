/**
 * @module e2e/helpers-access
 * Helpers for the tests that talk to a port directly (ours or kube-apiserver's) instead of through kubectl:
 * an HTTPS call with an explicit trust root and optional client certificate, and a small certificate issuer
 * for credentials the control plane did not hand out (a foreign CA, a not-allowed proxy name).
 */
import { randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { Agent, request } from 'undici';

export interface Pem {
  certPem: string;
  keyPem: string;
}

/**
 * issueCertificate makes an RSA key and a certificate: a self-signed CA without `issuer`, else a clientAuth
 * leaf signed by it. Subject: O=each of `orgs`, CN=`cn` (how kube maps a certificate to user and groups).
 */
export function issueCertificate(spec: { cn: string; orgs?: string[]; issuer?: Pem }): Pem {
  const pki = forge.pki;
  const keys = pki.rsa.generateKeyPair({ bits: 2048 });
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  // A positive serial: Go (kube-apiserver) and OpenSSL both reject a negative DER integer.
  cert.serialNumber = '01' + randomBytes(12).toString('hex');
  // Backdated a little so clock skew between processes cannot make it "not yet valid".
  cert.validity.notBefore = new Date(Date.now() - 60 * 60_000);
  cert.validity.notAfter = new Date(Date.now() + 7 * 86_400_000);
  const subject = [...(spec.orgs ?? []).map((value) => ({ shortName: 'O', value })), { shortName: 'CN', value: spec.cn }];
  cert.setSubject(subject);
  if (spec.issuer) {
    const issuerCert = pki.certificateFromPem(spec.issuer.certPem);
    cert.setIssuer(issuerCert.subject.attributes);
    cert.setExtensions([
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
      { name: 'authorityKeyIdentifier', keyIdentifier: issuerCert.generateSubjectKeyIdentifier().getBytes() },
    ]);
    cert.sign(pki.privateKeyFromPem(spec.issuer.keyPem), forge.md.sha256.create());
  } else {
    cert.setIssuer(subject);
    cert.setExtensions([
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ]);
    cert.sign(keys.privateKey, forge.md.sha256.create());
  }
  return { certPem: pki.certificateToPem(cert), keyPem: pki.privateKeyToPem(keys.privateKey) };
}

/** Endpoint is an HTTPS server and what a client needs to verify it. */
export interface Endpoint {
  url: string;
  /** PEM CA(s) trusted for the server certificate. */
  ca: string;
  /** TLS server name to verify (our serving certificate has DNS SANs only, no 127.0.0.1). */
  servername?: string;
}

export interface CallOptions {
  method?: string;
  /** Object form, or a flat [name, value, name, value, …] list so one header can be sent on several lines. */
  headers?: Record<string, string> | string[];
  body?: unknown;
  /** client certificate (PEM) and key */
  cert?: string | Buffer;
  key?: string | Buffer;
}

export interface CallResult {
  status: number;
  text: string;
  /** the body parsed as JSON, or undefined when it is not JSON */
  json: any;
}

/** call makes one request on a fresh connection (a new Agent), so credentials never leak between calls. */
export async function call(ep: Endpoint, path: string, o: CallOptions = {}): Promise<CallResult> {
  const agent = new Agent({
    connect: {
      ca: ep.ca,
      ...(ep.servername !== undefined ? { servername: ep.servername } : {}),
      ...(o.cert !== undefined ? { cert: o.cert } : {}),
      ...(o.key !== undefined ? { key: o.key } : {}),
    },
  });
  try {
    let headers = o.headers ?? {};
    let body: string | undefined;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers = Array.isArray(headers) ? [...headers, 'content-type', 'application/json'] : { ...headers, 'content-type': 'application/json' };
    }
    const r = await request(ep.url + path, {
      dispatcher: agent,
      method: (o.method ?? 'GET') as 'GET',
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await r.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: r.statusCode, text, json };
  } finally {
    await agent.close();
  }
}

/** suffix is a short random tag for unique object names per run. */
export const suffix = (): string => randomBytes(3).toString('hex');
