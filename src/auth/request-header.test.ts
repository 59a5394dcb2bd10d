/**
 * @module auth/request-header.test
 * The front-proxy authenticator as kube's headerrequest.requestHeaderAuthRequestHandler wrapped in x509.Verifier
 * (k8s.io/apiserver pkg/authentication/request/headerrequest/requestheader.go, request/x509/x509.go): who may assert
 * identities (chain to the request-header CA, client-auth usage, allowed CN) and how the headers are read.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS, makeCA, makeClient, peerOf, type TestCert } from '../../test/helpers/auth-certs.js';
import { headerUser, isIdentityHeader, trustedProxy, type Headers, type RequestHeaderConfig } from './request-header.js';
import { CertificatePool } from './x509.js';

// The values kube-apiserver publishes in extension-apiserver-authentication (canonical header case, as there).
const HEADERS = {
  usernameHeaders: ['X-Remote-User'],
  uidHeaders: ['X-Remote-Uid'],
  groupHeaders: ['X-Remote-Group'],
  extraHeaderPrefixes: ['X-Remote-Extra-'],
};

let proxyCA: TestCert;
let clientCA: TestCert;
let cfg: RequestHeaderConfig;
let proxy: TestCert;
beforeAll(() => {
  proxyCA = makeCA('front-proxy-ca');
  clientCA = makeCA('client-ca');
  cfg = { ca: new CertificatePool([proxyCA.pem]), allowedNames: ['front-proxy-client'], ...HEADERS };
  proxy = makeClient(proxyCA, 'front-proxy-client');
});

describe('trustedProxy', () => {
  it('trusts the front-proxy certificate with an allowed CN', () => {
    expect(trustedProxy(peerOf(proxy), cfg)).toBe(true);
    expect(trustedProxy(peerOf(makeClient(proxyCA, 'aggregator')), { ...cfg, allowedNames: ['x', 'aggregator'] })).toBe(true);
  });

  it('does not trust a connection without a certificate', () => {
    expect(trustedProxy(undefined, cfg)).toBe(false);
  });

  it('does not trust a CN outside the allowed names, even from the front-proxy CA', () => {
    expect(trustedProxy(peerOf(makeClient(proxyCA, 'someone-else')), cfg)).toBe(false);
    // Exact match: no case folding or prefix matching.
    expect(trustedProxy(peerOf(makeClient(proxyCA, 'Front-Proxy-Client')), cfg)).toBe(false);
    expect(trustedProxy(peerOf(makeClient(proxyCA, 'front-proxy-client-2')), cfg)).toBe(false);
  });

  it('accepts any CN from the front-proxy CA when the allowed names are empty', () => {
    const open = { ...cfg, allowedNames: [] };
    expect(trustedProxy(peerOf(makeClient(proxyCA, 'anything')), open)).toBe(true);
    // ...but still only from that CA.
    expect(trustedProxy(peerOf(makeClient(clientCA, 'anything')), open)).toBe(false);
  });

  it('does not trust a certificate from another CA with an allowed CN', () => {
    expect(trustedProxy(peerOf(makeClient(clientCA, 'front-proxy-client')), cfg)).toBe(false);
  });

  it('does not trust an expired front-proxy certificate', () => {
    const expired = makeClient(proxyCA, 'front-proxy-client', { notBefore: new Date(Date.now() - 48 * HOUR_MS), notAfter: new Date(Date.now() - HOUR_MS) });
    expect(trustedProxy(peerOf(expired), cfg)).toBe(false);
  });

  it('does not trust a front-proxy certificate made for serving only (EKU serverAuth)', () => {
    expect(trustedProxy(peerOf(makeClient(proxyCA, 'front-proxy-client', { eku: { serverAuth: true } })), cfg)).toBe(false);
  });

  it('trusts a front-proxy leaf signed by an intermediate the peer sent', () => {
    const inter = makeCA('front-proxy-intermediate', { issuer: proxyCA });
    const leaf = makeClient(inter, 'front-proxy-client');
    expect(trustedProxy(peerOf(leaf, [inter]), cfg)).toBe(true);
    expect(trustedProxy(peerOf(leaf), cfg)).toBe(false);
  });

  it('does not trust a forged chain: the front-proxy CA sent as "intermediate" of a leaf another CA signed', () => {
    const forger = makeCA('front-proxy-ca'); // same subject as the real CA, different key
    const forged = makeClient(proxyCA, 'front-proxy-client', { signWith: forger.key });
    expect(trustedProxy(peerOf(forged, [proxyCA]), cfg)).toBe(false);
    expect(trustedProxy(peerOf(forged, [forger, proxyCA]), cfg)).toBe(false);
    const byClientCA = makeClient(clientCA, 'front-proxy-client');
    expect(trustedProxy(peerOf(byClientCA, [proxyCA]), cfg)).toBe(false);
    expect(trustedProxy(peerOf(byClientCA, [clientCA, proxyCA]), cfg)).toBe(false);
  });
});

describe('headerUser', () => {
  const read = (h: Headers) => headerUser(h, cfg);

  it('reads user, uid, groups and extra', () => {
    expect(
      read({
        'x-remote-user': ['alice'],
        'x-remote-uid': ['uid-1'],
        'x-remote-group': ['dev', 'ops'],
        'x-remote-extra-scopes': ['read', 'write'],
        accept: ['application/json'],
      }),
    ).toEqual({ name: 'alice', uid: 'uid-1', groups: ['dev', 'ops'], extra: { scopes: ['read', 'write'] } });
  });

  it('has no opinion without a username, whatever else is set', () => {
    expect(read({ 'x-remote-group': ['system:masters'], 'x-remote-uid': ['1'] })).toBeUndefined();
    expect(read({ 'x-remote-user': [''] })).toBeUndefined();
    expect(read({})).toBeUndefined();
  });

  it('keeps each repeated group line as its own group, and a comma inside a value as part of one group', () => {
    expect(read({ 'x-remote-user': ['u'], 'x-remote-group': ['a', 'b, c', 'd,e'] })?.groups).toEqual(['a', 'b, c', 'd,e']);
  });

  it('skips empty group lines and returns no groups when none are sent', () => {
    expect(read({ 'x-remote-user': ['u'], 'x-remote-group': ['', 'g', ''] })?.groups).toEqual(['g']);
    expect(read({ 'x-remote-user': ['u'] })).toEqual({ name: 'u', groups: [] });
  });

  it('takes the first non-empty username header in configured order, and the first line of it', () => {
    const two = { ...cfg, usernameHeaders: ['X-Remote-User', 'X-Forwarded-User'] };
    expect(headerUser({ 'x-remote-user': [''], 'x-forwarded-user': ['bob'] }, two)?.name).toBe('bob');
    expect(headerUser({ 'x-forwarded-user': ['bob'] }, two)?.name).toBe('bob');
    expect(headerUser({ 'x-remote-user': ['alice'], 'x-forwarded-user': ['bob'] }, two)?.name).toBe('alice');
    // http.Header.Get returns the first line of a repeated header.
    expect(read({ 'x-remote-user': ['alice', 'mallory'] })?.name).toBe('alice');
  });

  it('collects groups from every group header, in configured order', () => {
    const two = { ...cfg, groupHeaders: ['X-Remote-Group', 'X-Other-Group'] };
    expect(headerUser({ 'x-remote-user': ['u'], 'x-other-group': ['o1'], 'x-remote-group': ['r1', 'r2'] }, two)?.groups).toEqual(['r1', 'r2', 'o1']);
  });

  it('takes the uid from the first uid header with a value, and leaves it out when there is none', () => {
    const u = read({ 'x-remote-user': ['u'], 'x-remote-uid': ['abc', 'def'] });
    expect(u?.uid).toBe('abc');
    expect(read({ 'x-remote-user': ['u'], 'x-remote-uid': [''] })).not.toHaveProperty('uid');
  });

  it('lower-cases extra keys and then %-unescapes them', () => {
    const u = read({
      'x-remote-user': ['u'],
      // Node lower-cases header names; the escape's hex digits may come in either case.
      'x-remote-extra-example.org%2fproject': ['p1'],
      'x-remote-extra-acme.com%2Fteam': ['t1'],
      // Lower-casing happens first, so an escaped upper-case letter survives as upper case.
      'x-remote-extra-a%41b': ['v'],
      'x-remote-extra-scopes': ['s1', 's2'],
    });
    expect(u?.extra).toEqual({ 'example.org/project': ['p1'], 'acme.com/team': ['t1'], aAb: ['v'], scopes: ['s1', 's2'] });
  });

  it('keeps a malformed escape verbatim (lower-cased) instead of dropping the value', () => {
    expect(read({ 'x-remote-user': ['u'], 'x-remote-extra-bad%zz': ['v'] })?.extra).toEqual({ 'bad%zz': ['v'] });
  });

  it('keeps empty extra values and has no extra property when no extra header is sent', () => {
    expect(read({ 'x-remote-user': ['u'], 'x-remote-extra-k': ['', 'x'] })?.extra).toEqual({ k: ['', 'x'] });
    expect(read({ 'x-remote-user': ['u'] })).not.toHaveProperty('extra');
  });

  it('matches configured header names case-insensitively', () => {
    const odd = { ...cfg, usernameHeaders: ['x-REMOTE-user'], groupHeaders: ['X-REMOTE-GROUP'], extraHeaderPrefixes: ['X-Remote-EXTRA-'] };
    expect(headerUser({ 'x-remote-user': ['u'], 'x-remote-group': ['g'], 'x-remote-extra-k': ['v'] }, odd)).toEqual({
      name: 'u',
      groups: ['g'],
      extra: { k: ['v'] },
    });
  });
});

describe('isIdentityHeader', () => {
  it('names every header the front-proxy configuration reads, in any case', () => {
    for (const h of ['x-remote-user', 'X-Remote-User', 'x-remote-uid', 'x-remote-group', 'x-remote-extra-scopes', 'X-REMOTE-EXTRA-a%2fb']) {
      expect(isIdentityHeader(h, cfg), h).toBe(true);
    }
    for (const h of ['authorization', 'x-remote-users', 'x-remote', 'impersonate-user', 'x-remote-groups']) {
      expect(isIdentityHeader(h, cfg), h).toBe(false);
    }
  });
});
