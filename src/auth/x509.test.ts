/**
 * @module auth/x509.test
 * chainsTo must accept exactly the chains Go's x509 Verify accepts with kube's DefaultVerifyOptions (KeyUsages
 * clientAuth, peer-sent certificates as intermediates; k8s.io/apiserver pkg/authentication/request/x509/x509.go), and
 * certificateUser is CommonNameUserConversion (CN → user, O → groups, no CN → no opinion).
 */
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import { beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS, makeCA, makeClient, peerOf, type TestCert } from '../../test/helpers/auth-certs.js';
import { certificateUser, chainsTo, CertificatePool, peerCertificate, splitPem } from './x509.js';

let rootA: TestCert;
let rootB: TestCert;
let pool: CertificatePool;
beforeAll(() => {
  rootA = makeCA('root-a');
  rootB = makeCA('root-b');
  pool = new CertificatePool([rootA.pem]);
});

describe('splitPem and CertificatePool', () => {
  it('reads every certificate of a bundle, in order, ignoring text around them', () => {
    const bundle = `# comment\n${rootA.pem}\nnoise\n${rootB.pem}`;
    expect(splitPem(bundle)).toHaveLength(2);
    expect(splitPem(bundle)[1]).toBe(rootB.pem.trim());
    expect(splitPem('')).toEqual([]);
    const both = new CertificatePool([bundle]);
    expect(both.size).toBe(2);
    expect(both.pems).toEqual([rootA.pem.trim(), rootB.pem.trim()]);
  });

  it('trusts a leaf signed by any CA of a bundle', () => {
    const both = new CertificatePool([`${rootA.pem}${rootB.pem}`]);
    expect(chainsTo(peerOf(makeClient(rootA, 'a')), both)).toBe(true);
    expect(chainsTo(peerOf(makeClient(rootB, 'b')), both)).toBe(true);
  });

  it('trusts nothing with an empty pool', () => {
    const empty = new CertificatePool([]);
    expect(empty.size).toBe(0);
    expect(chainsTo(peerOf(makeClient(rootA, 'a')), empty)).toBe(false);
  });
});

describe('chainsTo', () => {
  it('trusts a client leaf signed by a CA of the pool', () => {
    expect(chainsTo(peerOf(makeClient(rootA, 'alice')), pool)).toBe(true);
  });

  it('does not trust a leaf of another CA, whatever its name', () => {
    expect(chainsTo(peerOf(makeClient(rootB, 'alice')), pool)).toBe(false);
  });

  it('does not trust a leaf outside its validity period', () => {
    const now = Date.now();
    const expired = makeClient(rootA, 'old', { notBefore: new Date(now - 48 * HOUR_MS), notAfter: new Date(now - HOUR_MS) });
    const future = makeClient(rootA, 'early', { notBefore: new Date(now + HOUR_MS), notAfter: new Date(now + 48 * HOUR_MS) });
    expect(chainsTo(peerOf(expired), pool)).toBe(false);
    expect(chainsTo(peerOf(future), pool)).toBe(false);
    // The same valid leaf, judged at a time after it expired.
    const leaf = makeClient(rootA, 'now');
    expect(chainsTo(peerOf(leaf), pool, now)).toBe(true);
    expect(chainsTo(peerOf(leaf), pool, now + 48 * HOUR_MS)).toBe(false);
  });

  it('requires client-auth usage when the leaf restricts its extended key usages', () => {
    expect(chainsTo(peerOf(makeClient(rootA, 'srv', { eku: { serverAuth: true } })), pool)).toBe(false);
    expect(chainsTo(peerOf(makeClient(rootA, 'both', { eku: { serverAuth: true, clientAuth: true } })), pool)).toBe(true);
    // Go: a certificate without the extension, or with anyExtendedKeyUsage, is good for every usage.
    expect(chainsTo(peerOf(makeClient(rootA, 'none', { eku: null })), pool)).toBe(true);
    expect(chainsTo(peerOf(makeClient(rootA, 'any', { eku: { anyExtendedKeyUsage: true } })), pool)).toBe(true);
  });

  it('trusts a leaf signed by an intermediate the peer sent, and only if it sent it', () => {
    const inter = makeCA('intermediate', { issuer: rootA });
    const leaf = makeClient(inter, 'bob');
    expect(chainsTo(peerOf(leaf, [inter]), pool)).toBe(true);
    expect(chainsTo(peerOf(leaf), pool)).toBe(false);
    // Two intermediates deep, sent in either order.
    const inter2 = makeCA('intermediate-2', { issuer: inter });
    const deep = makeClient(inter2, 'carol');
    expect(chainsTo(peerOf(deep, [inter2, inter]), pool)).toBe(true);
    expect(chainsTo(peerOf(deep, [inter, inter2]), pool)).toBe(true);
    expect(chainsTo(peerOf(deep, [inter2]), pool)).toBe(false);
  });

  it('does not trust an intermediate that is not a CA, or has expired', () => {
    // A leaf used as a signer: its basicConstraints say cA false, so Go refuses it as an intermediate.
    const notCa = makeClient(rootA, 'not-a-ca');
    const signedByLeaf = makeClient(notCa, 'victim');
    expect(chainsTo(peerOf(signedByLeaf, [notCa]), pool)).toBe(false);
    const now = Date.now();
    const oldInter = makeCA('old-intermediate', { issuer: rootA, notBefore: new Date(now - 48 * HOUR_MS), notAfter: new Date(now - HOUR_MS) });
    expect(chainsTo(peerOf(makeClient(oldInter, 'dave'), [oldInter]), pool)).toBe(false);
  });

  it('does not trust a forged chain: the pool CA sent as an "intermediate" of a leaf another CA signed', () => {
    // The forger names the trusted CA as issuer (same subject) but signs with its own key.
    const forgerCA = makeCA('root-a');
    const forged = makeClient(rootA, 'front-proxy-client', { signWith: forgerCA.key });
    expect(forged.x509.checkIssued(rootA.x509)).toBe(true); // names match: only the signature gives it away
    expect(chainsTo(peerOf(forged), pool)).toBe(false);
    expect(chainsTo(peerOf(forged, [rootA]), pool)).toBe(false);
    expect(chainsTo(peerOf(forged, [forgerCA, rootA]), pool)).toBe(false);
    // A leaf honestly issued by another CA, with the pool CA and that CA sent along.
    const other = makeClient(rootB, 'front-proxy-client');
    expect(chainsTo(peerOf(other, [rootA]), pool)).toBe(false);
    expect(chainsTo(peerOf(other, [rootB, rootA]), pool)).toBe(false);
    // An intermediate claiming the pool CA as issuer, signed by the forger.
    const fakeInter = makeCA('intermediate', { issuer: rootA, signWith: forgerCA.key });
    expect(chainsTo(peerOf(makeClient(fakeInter, 'eve'), [fakeInter, rootA]), pool)).toBe(false);
  });

  it('trusts a pool CA presented as the client certificate itself, as Go does for a leaf in the roots', () => {
    const caAsClient = makeCA('self-ca');
    expect(chainsTo(peerOf(caAsClient), new CertificatePool([caAsClient.pem]))).toBe(true);
    expect(chainsTo(peerOf(caAsClient), pool)).toBe(false);
  });
});

describe('certificateUser', () => {
  it('takes the user from CN and the groups from every O', () => {
    const leaf = makeClient(rootA, 'jane', { o: ['dev', 'system:masters'] });
    expect(certificateUser(peerOf(leaf))).toEqual({ name: 'jane', groups: ['dev', 'system:masters'] });
    expect(certificateUser(peerOf(makeClient(rootA, 'solo')))).toEqual({ name: 'solo', groups: [] });
  });

  it('has no opinion on a certificate without a CN', () => {
    expect(certificateUser({ ...peerOf(makeClient(rootA, 'x')), commonName: '' })).toBeUndefined();
  });
});

/**
 * connectionPresenting is what Node's TLS socket answers for a verified connection whose client sent `chain` (leaf
 * first), the parts peerCertificate reads; `calls` counts the parses asked of it.
 */
function connectionPresenting(chain: TestCert[], authorized = true) {
  const detailed = chain.map(
    (c) => ({ raw: c.x509.raw, fingerprint256: c.x509.fingerprint256, subject: { CN: c.cn, O: c.o } }) as unknown as DetailedPeerCertificate,
  );
  detailed.forEach((d, i) => {
    Object.assign(d, { issuerCertificate: detailed[i + 1] ?? d });
  });
  const socket = {
    authorized,
    calls: 0,
    getPeerCertificate: () => {
      socket.calls++;
      return detailed[0];
    },
  };
  return socket as typeof socket & TLSSocket;
}

describe('peerCertificate', () => {
  it('reads the leaf, the certificates sent with it, CN and O', () => {
    const inter = makeCA('inter-a', { issuer: rootA });
    const leaf = makeClient(inter, 'front-proxy-client', { o: ['proxies'] });
    const peer = peerCertificate(connectionPresenting([leaf, inter]));
    expect(peer?.leaf.fingerprint256).toBe(leaf.x509.fingerprint256);
    expect(peer?.intermediates.map((c) => c.fingerprint256)).toEqual([inter.x509.fingerprint256]);
    expect([peer?.commonName, peer?.organizations]).toEqual(['front-proxy-client', ['proxies']]);
    expect(chainsTo(peer!, pool)).toBe(true);
  });

  it('parses a connection once, however many requests it carries', () => {
    const conn = connectionPresenting([makeClient(rootA, 'alice')]);
    const first = peerCertificate(conn);
    expect(peerCertificate(conn)).toBe(first);
    expect(conn.calls).toBe(1);
  });

  it('shares the parsed chain between connections presenting the same certificates (the aggregator reconnecting)', () => {
    const proxy = makeClient(rootA, 'front-proxy-client');
    const first = peerCertificate(connectionPresenting([proxy]));
    const again = peerCertificate(connectionPresenting([proxy]));
    expect(again).toBe(first);
    // Other certificates, or the same leaf sent with another chain, are parsed for themselves.
    const other = peerCertificate(connectionPresenting([makeClient(rootA, 'front-proxy-client')]));
    expect(other).not.toBe(first);
    expect(other?.leaf.fingerprint256).not.toBe(first?.leaf.fingerprint256);
    const withChain = peerCertificate(connectionPresenting([proxy, rootA]));
    expect(withChain).not.toBe(first);
    expect(withChain?.intermediates).toHaveLength(1);
  });

  it('gives nothing for a connection the TLS layer did not verify, even with a known chain', () => {
    const proxy = makeClient(rootA, 'known');
    expect(peerCertificate(connectionPresenting([proxy]))).toBeDefined();
    expect(peerCertificate(connectionPresenting([proxy], false))).toBeUndefined();
  });
});
