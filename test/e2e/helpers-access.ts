/**
 * @module e2e/helpers-access
 * Helpers for the tests that talk to a port directly (ours or kube-apiserver's) instead of through kubectl:
 * an HTTPS call with an explicit trust root and optional client certificate, and a small certificate issuer
 * for credentials the control plane did not hand out (a foreign CA, a not-allowed proxy name).
 */
import { randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { createCa, createLeaf } from '../../src/certs/issue.js';
import { Agent, request } from 'undici';

export interface Pem {
  certPem: string;
  keyPem: string;
}

/**
 * issueCertificate makes a self-signed CA without `issuer`, else a clientAuth leaf signed by it, with the server's
 * own issuer (src/certs/issue.ts). Subject: O=each of `orgs`, CN=`cn` (how kube maps a certificate to a user).
 */
export function issueCertificate(spec: { cn: string; orgs?: string[]; issuer?: Pem }): Pem {
  const now = new Date();
  if (!spec.issuer) return createCa(now, spec.cn, 7);
  const signer = { cert: forge.pki.certificateFromPem(spec.issuer.certPem), key: forge.pki.privateKeyFromPem(spec.issuer.keyPem) };
  const subject = [...(spec.orgs ?? []).map((value) => ({ shortName: 'O', value })), { shortName: 'CN', value: spec.cn }];
  return createLeaf(signer, now, new Date(now.getTime() + 7 * 86_400_000), { subject, extKeyUsage: { clientAuth: true } });
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
