/**
 * @module certs/self-signed.test
 * Unit tests for ensureCertificates, describeCertificate and renderKubeconfig, including real TLS handshakes.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import forge from 'node-forge';
import { parse } from 'yaml';
import { renderKubeconfig } from './kubeconfig.js';
import { describeCertificate, ensureCertificates, type CertificateBundle } from './self-signed.js';

const SERVER = 'https://127.0.0.1:8443';
const DAY_MS = 86_400_000;
const OID_SERVER_AUTH = '1.3.6.1.5.5.7.3.1';
const OID_CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ALL = ['ca', 'serving', 'admin', 'kubeconfig'];

const tempDirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(`${os.tmpdir()}/certs-`);
  tempDirs.push(d);
  return d;
}

// One generated directory shared by all tests; tests that mutate files work on a copy, which keeps the
// suite fast (each RSA key plus signature costs ~100-200 ms).
let baseDir: string;
let base: CertificateBundle;
beforeAll(() => {
  baseDir = tempDir();
  base = ensureCertificates({ certDir: baseDir, serverUrl: SERVER });
});
afterAll(() => {
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
});

function copyOfBase(): string {
  const d = tempDir();
  fs.cpSync(baseDir, d, { recursive: true });
  return d;
}

const read = (dir: string, name: string): string => fs.readFileSync(path.join(dir, name), 'utf8');
const mode = (p: string): number => fs.statSync(p).mode & 0o777;

/** makeCert builds a cert with forge directly, independent of the code under test. */
function makeCert(o: {
  cn: string;
  isCa?: boolean;
  issuer?: { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey };
  ipSans?: string[];
  client?: boolean;
}): { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey; certPem: string; keyPem: string } {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = '01';
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 365 * DAY_MS);
  cert.setSubject([{ shortName: 'CN', value: o.cn }]);
  cert.setIssuer((o.issuer?.cert ?? cert).subject.attributes);
  const ext: object[] = [{ name: 'basicConstraints', cA: o.isCa === true, critical: true }];
  if (o.isCa) ext.push({ name: 'keyUsage', keyCertSign: true, digitalSignature: true, critical: true });
  else ext.push({ name: 'extKeyUsage', serverAuth: !o.client, clientAuth: o.client === true });
  if (o.ipSans) ext.push({ name: 'subjectAltName', altNames: o.ipSans.map((ip) => ({ type: 7, ip })) });
  cert.setExtensions(ext);
  cert.sign(o.issuer?.key ?? keys.privateKey, forge.md.sha256.create());
  return {
    cert,
    key: keys.privateKey,
    certPem: forge.pki.certificateToPem(cert),
    keyPem: forge.pki.privateKeyToPem(keys.privateKey),
  };
}

interface Seen {
  authorized: boolean;
  error?: string;
  cn?: string;
  o?: string;
}

/** handshake serves one HTTPS request and reports how the server saw the client certificate. */
async function handshake(server: { key: string; cert: string; ca: string }, client: { ca: string; cert?: string; key?: string }): Promise<Seen> {
  const srv = https.createServer({ key: server.key, cert: server.cert, ca: server.ca, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const s = req.socket as TLSSocket;
    const peer = s.getPeerCertificate();
    const seen: Seen = { authorized: s.authorized, error: s.authorizationError?.toString() };
    if (peer.subject) Object.assign(seen, { cn: peer.subject.CN, o: peer.subject.O });
    res.end(JSON.stringify(seen));
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  try {
    return await new Promise<Seen>((resolve, reject) => {
      // The client verifies the server too (default rejectUnauthorized), including the 127.0.0.1 IP SAN.
      const req = https.request({ host: '127.0.0.1', port, path: '/', agent: false, ...client }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(JSON.parse(body) as Seen));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  } finally {
    srv.closeAllConnections();
    await new Promise((resolve) => srv.close(resolve));
  }
}

describe('ensureCertificates: first start', () => {
  it('generates the CA, serving and admin certs and the kubeconfig', () => {
    expect(base.generated).toEqual(ALL);
    for (const f of ['ca.crt', 'ca.key', 'serving.crt', 'serving.key', 'admin.crt', 'admin.key', 'kubeconfig']) {
      expect(fs.existsSync(path.join(baseDir, f)), f).toBe(true);
    }
    expect(read(baseDir, 'ca.crt')).toBe(base.caCert);
    expect(read(baseDir, 'serving.key')).toBe(base.servingKey);
    expect(base.kubeconfigPath).toBe(path.join(baseDir, 'kubeconfig'));
  });

  it('creates a missing, nested certDir with mode 0700', () => {
    const nested = path.join(tempDir(), 'a', 'b');
    expect(ensureCertificates({ certDir: nested, serverUrl: SERVER }).generated).toEqual(ALL);
    expect(mode(nested)).toBe(0o700);
  });

  it('writes keys and kubeconfig with mode 0600 and certificates with 0644', () => {
    for (const f of ['ca.key', 'serving.key', 'admin.key', 'kubeconfig']) expect(mode(path.join(baseDir, f)), f).toBe(0o600);
    for (const f of ['ca.crt', 'serving.crt', 'admin.crt']) expect(mode(path.join(baseDir, f)), f).toBe(0o644);
  });

  it('makes a 10-year CA with CN website-apiserver-ca and a positive serial of at most 20 bytes', () => {
    const ca = new X509Certificate(base.caCert);
    expect(ca.ca).toBe(true);
    expect(ca.subject).toBe('CN=website-apiserver-ca');
    expect(ca.verify(ca.publicKey)).toBe(true);
    const years = (new Date(ca.validTo).getTime() - Date.now()) / (365 * DAY_MS);
    expect(years).toBeGreaterThan(9.9);
    expect(years).toBeLessThan(10.1);
    for (const pem of [base.caCert, base.servingCert, base.adminCert]) {
      const serial = new X509Certificate(pem).serialNumber;
      expect(serial.length).toBeLessThanOrEqual(40);
      expect(parseInt(serial.slice(0, 2), 16)).toBeGreaterThan(0);
      expect(parseInt(serial.slice(0, 2), 16)).toBeLessThan(0x80);
    }
  });

  it('makes a 1-year serving cert with all required SANs and serverAuth, signed by the CA', () => {
    const ca = new X509Certificate(base.caCert);
    const serving = new X509Certificate(base.servingCert);
    const sans = serving.subjectAltName!.split(', ');
    expect(sans).toEqual(
      expect.arrayContaining(['DNS:localhost', 'IP Address:127.0.0.1', 'IP Address:0:0:0:0:0:0:0:1', 'DNS:website-apiserver.website-system.svc']),
    );
    expect(sans).toHaveLength(4);
    expect(serving.checkHost('website-apiserver.website-system.svc')).toBeDefined();
    expect(serving.checkIP('::1')).toBe('::1');
    expect(serving.keyUsage).toEqual([OID_SERVER_AUTH]);
    expect(serving.ca).toBe(false);
    expect(serving.checkIssued(ca)).toBe(true);
    expect(serving.verify(ca.publicKey)).toBe(true);
    const days = (new Date(serving.validTo).getTime() - Date.now()) / DAY_MS;
    expect(days).toBeGreaterThan(364);
    expect(days).toBeLessThan(366);
    expect(describeCertificate(base.servingCert).sans).toEqual(['DNS:localhost', 'IP:127.0.0.1', 'IP:::1', 'DNS:website-apiserver.website-system.svc']);
  });

  it('makes an admin client cert with CN admin, O system:masters and clientAuth, signed by the CA', () => {
    const ca = new X509Certificate(base.caCert);
    const admin = new X509Certificate(base.adminCert);
    expect(admin.subject.split('\n').sort()).toEqual(['CN=admin', 'O=system:masters']);
    expect(describeCertificate(base.adminCert).subject).toBe('O=system:masters, CN=admin');
    expect(admin.keyUsage).toEqual([OID_CLIENT_AUTH]);
    expect(admin.checkIssued(ca)).toBe(true);
    expect(admin.verify(ca.publicKey)).toBe(true);
  });

  it('writes a kubeconfig that parses and embeds the CA, admin cert and key', () => {
    const kc = parse(read(baseDir, 'kubeconfig')) as Record<string, any>;
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    expect(kc.apiVersion).toBe('v1');
    expect(kc.kind).toBe('Config');
    expect(kc['current-context']).toBe('website-apiserver');
    expect(kc.contexts).toEqual([{ name: 'website-apiserver', context: { cluster: 'website-apiserver', user: 'website-apiserver' } }]);
    expect(kc.clusters[0]).toEqual({
      name: 'website-apiserver',
      cluster: { server: SERVER, 'certificate-authority-data': b64(base.caCert) },
    });
    expect(kc.users[0]).toEqual({
      name: 'website-apiserver',
      user: { 'client-certificate-data': b64(base.adminCert), 'client-key-data': b64(base.adminKey) },
    });
  });
});

describe('ensureCertificates: later starts', () => {
  it('reuses everything on a second call', () => {
    const dir = copyOfBase();
    const again = ensureCertificates({ certDir: dir, serverUrl: SERVER });
    expect(again.generated).toEqual([]);
    expect(again).toMatchObject({
      caCert: base.caCert,
      caKey: base.caKey,
      servingCert: base.servingCert,
      servingKey: base.servingKey,
      adminCert: base.adminCert,
      adminKey: base.adminKey,
    });
  });

  it('regenerates only the serving cert when the SANs change, ignoring order, case and duplicates', () => {
    const dir = copyOfBase();
    const b = ensureCertificates({ certDir: dir, serverUrl: SERVER, extraSans: ['10.1.2.3', 'API.example.com', 'fd00::10'] });
    expect(b.generated).toEqual(['serving']);
    expect(b.reasons.serving).toMatch(/SANs changed/);
    expect(b.servingCert).not.toBe(base.servingCert);
    expect(b.caCert).toBe(base.caCert);
    expect(b.adminCert).toBe(base.adminCert);
    expect(describeCertificate(b.servingCert).sans).toEqual(expect.arrayContaining(['IP:10.1.2.3', 'DNS:api.example.com', 'IP:fd00::10', 'DNS:localhost']));
    expect(new X509Certificate(b.servingCert).checkIP('fd00::10')).toBe('fd00::10');

    const same = ensureCertificates({
      certDir: dir,
      serverUrl: SERVER,
      extraSans: ['fd00:0:0::10', 'api.example.com.', '10.1.2.3', 'localhost', '10.1.2.3'],
    });
    expect(same.generated).toEqual([]);
    expect(same.servingCert).toBe(b.servingCert);

    expect(ensureCertificates({ certDir: dir, serverUrl: SERVER }).generated).toEqual(['serving']);
  });

  it('rejects an extra SAN that is neither an IP address nor a DNS name', () => {
    expect(() => ensureCertificates({ certDir: copyOfBase(), serverUrl: SERVER, extraSans: ['bad name'] })).toThrow(/invalid SAN/);
  });

  it('regenerates the admin cert when admin.key is deleted', () => {
    const dir = copyOfBase();
    fs.rmSync(path.join(dir, 'admin.key'));
    const b = ensureCertificates({ certDir: dir, serverUrl: SERVER });
    expect(b.generated).toEqual(['admin', 'kubeconfig']);
    expect(b.adminCert).not.toBe(base.adminCert);
    expect(b.caCert).toBe(base.caCert);
    expect(b.servingCert).toBe(base.servingCert);
    expect(new X509Certificate(b.adminCert).verify(new X509Certificate(b.caCert).publicKey)).toBe(true);
    expect(mode(path.join(dir, 'admin.key'))).toBe(0o600);
  });

  it('forces mode 0600 on an existing key file that is rewritten', () => {
    const dir = copyOfBase();
    // A garbage key with loose permissions: writeFileSync's mode alone would keep 0644.
    fs.writeFileSync(path.join(dir, 'serving.key'), 'garbage');
    fs.chmodSync(path.join(dir, 'serving.key'), 0o644);
    const b = ensureCertificates({ certDir: dir, serverUrl: SERVER });
    expect(b.generated).toEqual(['serving']);
    expect(b.reasons.serving).toMatch(/cannot parse/);
    expect(mode(path.join(dir, 'serving.key'))).toBe(0o600);
  });

  it('regenerates an unparsable certificate', () => {
    const dir = copyOfBase();
    fs.writeFileSync(path.join(dir, 'serving.crt'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    expect(ensureCertificates({ certDir: dir, serverUrl: SERVER }).generated).toEqual(['serving']);
  });

  it('regenerates a cert whose key does not match', () => {
    const dir = copyOfBase();
    fs.copyFileSync(path.join(dir, 'admin.key'), path.join(dir, 'serving.key'));
    const b = ensureCertificates({ certDir: dir, serverUrl: SERVER });
    expect(b.generated).toEqual(['serving']);
    expect(b.reasons.serving).toMatch(/does not match/);
  });

  it('keeps leaves with more than 30 days left and regenerates those expiring within 30 days', () => {
    const dir = copyOfBase();
    const soon = new Date(Date.now() + 300 * DAY_MS);
    expect(ensureCertificates({ certDir: dir, serverUrl: SERVER, now: soon }).generated).toEqual([]);

    const later = new Date(Date.now() + 340 * DAY_MS);
    const b = ensureCertificates({ certDir: dir, serverUrl: SERVER, now: later });
    expect(b.generated).toEqual(['serving', 'admin', 'kubeconfig']);
    expect(b.reasons.serving).toMatch(/within 30 days/);
    expect(b.caCert).toBe(base.caCert);
    for (const pem of [b.servingCert, b.adminCert]) {
      expect(new X509Certificate(pem).verify(new X509Certificate(base.caCert).publicKey)).toBe(true);
      expect(describeCertificate(pem).validTo.getTime()).toBeGreaterThan(later.getTime() + 360 * DAY_MS);
    }
  });

  it('regenerates every leaf when the CA is regenerated', () => {
    const dir = copyOfBase();
    fs.rmSync(path.join(dir, 'ca.key'));
    const b = ensureCertificates({ certDir: dir, serverUrl: SERVER });
    expect(b.generated).toEqual(ALL);
    expect(b.reasons.serving).toBe('CA regenerated');
    const ca = new X509Certificate(b.caCert);
    expect(b.caCert).not.toBe(base.caCert);
    expect(new X509Certificate(b.servingCert).verify(ca.publicKey)).toBe(true);
    expect(new X509Certificate(b.adminCert).verify(ca.publicKey)).toBe(true);
  });

  it('regenerates leaves that no longer verify against the current CA', () => {
    const dir = copyOfBase();
    const foreign = makeCert({ cn: 'other-ca', isCa: true });
    fs.writeFileSync(path.join(dir, 'ca.crt'), foreign.certPem);
    fs.writeFileSync(path.join(dir, 'ca.key'), foreign.keyPem);
    const b = ensureCertificates({ certDir: dir, serverUrl: SERVER });
    expect(b.generated).toEqual(['serving', 'admin', 'kubeconfig']);
    expect(b.reasons.admin).toBe('not signed by current CA');
    expect(b.caCert).toBe(foreign.certPem);
    expect(new X509Certificate(b.servingCert).verify(new X509Certificate(foreign.certPem).publicKey)).toBe(true);
  });

  it('rewrites only the kubeconfig when the server URL changes', () => {
    const dir = copyOfBase();
    const b = ensureCertificates({ certDir: dir, serverUrl: 'https://127.0.0.1:9443' });
    expect(b.generated).toEqual(['kubeconfig']);
    expect(b.servingCert).toBe(base.servingCert);
    const kc = parse(read(dir, 'kubeconfig')) as { clusters: { cluster: { server: string } }[] };
    expect(kc.clusters[0]!.cluster.server).toBe('https://127.0.0.1:9443');
    expect(mode(path.join(dir, 'kubeconfig'))).toBe(0o600);
  });
});

describe('ensureCertificates: provided serving cert', () => {
  it('uses tlsCertFile/tlsKeyFile and trusts that cert in the kubeconfig', () => {
    const dir = copyOfBase();
    const own = makeCert({ cn: 'provided', isCa: false, ipSans: ['127.0.0.1'] });
    const certFile = path.join(dir, 'provided.crt');
    const keyFile = path.join(dir, 'provided.key');
    fs.writeFileSync(certFile, own.certPem);
    fs.writeFileSync(keyFile, own.keyPem);
    const b = ensureCertificates({ certDir: dir, serverUrl: SERVER, tlsCertFile: certFile, tlsKeyFile: keyFile });
    expect(b.generated).toEqual(['kubeconfig']);
    expect(b.servingCert).toBe(own.certPem);
    expect(b.servingKey).toBe(own.keyPem);
    expect(b.caCert).toBe(base.caCert);
    expect(b.adminCert).toBe(base.adminCert);
    expect(read(dir, 'serving.crt')).toBe(base.servingCert); // our generated one is left alone
    const kc = parse(read(dir, 'kubeconfig')) as { clusters: { cluster: Record<string, string> }[] };
    expect(Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data']!, 'base64').toString()).toBe(own.certPem);
  });

  it('rejects a key that does not belong to the provided cert, or only one of the two files', () => {
    const dir = copyOfBase();
    const certFile = path.join(dir, 'serving.crt');
    const keyFile = path.join(dir, 'admin.key');
    expect(() => ensureCertificates({ certDir: dir, serverUrl: SERVER, tlsCertFile: certFile, tlsKeyFile: keyFile })).toThrow(/not the private key/);
    expect(() => ensureCertificates({ certDir: dir, serverUrl: SERVER, tlsCertFile: certFile })).toThrow(/together/);
  });
});

describe('TLS with the generated certificates', () => {
  it('authenticates the admin client certificate', async () => {
    const seen = await handshake(
      { key: base.servingKey, cert: base.servingCert, ca: base.caCert },
      { ca: base.caCert, cert: base.adminCert, key: base.adminKey },
    );
    expect(seen).toMatchObject({ authorized: true, cn: 'admin', o: 'system:masters' });
  });

  it('does not authorize a client certificate from another CA', async () => {
    const otherCa = makeCert({ cn: 'evil-ca', isCa: true });
    const intruder = makeCert({ cn: 'admin', issuer: otherCa, client: true });
    const seen = await handshake(
      { key: base.servingKey, cert: base.servingCert, ca: base.caCert },
      { ca: base.caCert, cert: intruder.certPem, key: intruder.keyPem },
    );
    expect(seen.authorized).toBe(false);
    expect(seen.error).toBeTruthy();
  });
});

describe('renderKubeconfig', () => {
  it('uses the given name for cluster, user and context', () => {
    const kc = parse(renderKubeconfig({ server: 'https://x:1', caPem: 'ca', clientCertPem: 'c', clientKeyPem: 'k', name: 'dev' })) as Record<string, any>;
    expect(kc['current-context']).toBe('dev');
    expect(kc.clusters[0].name).toBe('dev');
    expect(kc.users[0].name).toBe('dev');
    expect(kc.contexts[0]).toEqual({ name: 'dev', context: { cluster: 'dev', user: 'dev' } });
    expect(kc.users[0].user['client-key-data']).toBe(Buffer.from('k').toString('base64'));
  });
});
