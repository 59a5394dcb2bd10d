/**
 * @module auth/authentication.test
 * The authenticator chain over real TLS connections (a fastify HTTPS server that requests client certificates and
 * trusts the union of CAs, as the real server does): front-proxy headers only behind a verified front-proxy
 * certificate, client certificates from our CA or the cluster's client CA, bearer tokens through TokenReview,
 * system:authenticated added, nothing else authenticated.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCA, makeCert, makeClient, type TestCert } from '../../test/helpers/auth-certs.js';
import type { AuthConfigSource, DelegatedAuthConfig } from './delegated-config.js';
import { delegatedAuthentication, standaloneAuthentication, type Authentication } from './authentication.js';
import type { ReviewToken } from './token-review.js';
import type { UserInfo } from './user.js';
import { CertificatePool } from './x509.js';

let ownCA: TestCert;
let clientCA: TestCert;
let proxyCA: TestCert;
let otherCA: TestCert;
let serving: TestCert;
let proxy: TestCert;

/** A configmap source whose content the test sets. */
let cfg: DelegatedAuthConfig | undefined;
const listeners: ((c: DelegatedAuthConfig) => void)[] = [];
const source: AuthConfigSource = {
  current: () => cfg,
  onChange: (cb) => listeners.push(cb),
  loaded: () => cfg !== undefined,
  whenLoaded: Promise.resolve(),
  stop: async () => undefined,
};
const configFor = (proxyCa: TestCert, allowedNames = ['front-proxy-client']): DelegatedAuthConfig => ({
  clientCA: new CertificatePool([clientCA.pem]),
  requestHeader: {
    ca: new CertificatePool([proxyCa.pem]),
    allowedNames,
    usernameHeaders: ['X-Remote-User'],
    uidHeaders: ['X-Remote-Uid'],
    groupHeaders: ['X-Remote-Group'],
    extraHeaderPrefixes: ['X-Remote-Extra-'],
  },
});

const tokens: string[] = [];
const reviewToken: ReviewToken = async (token) => {
  tokens.push(token);
  if (token === 'good-token') return { name: 'system:serviceaccount:monitoring:prometheus', uid: 'sa-1', groups: ['system:serviceaccounts'] };
  return undefined;
};

interface Seen {
  user: UserInfo | null;
  /** Identity headers the route handler could still read. */
  identityHeaders: string[];
}

/** serve starts an HTTPS server that reports who `auth` says the caller is. */
async function serve(auth: Authentication): Promise<{ app: FastifyInstance; port: number }> {
  const app = Fastify({
    https: { key: serving.keyPem, cert: serving.pem, ca: auth.trustedCAs(), requestCert: true, rejectUnauthorized: false },
  }) as unknown as FastifyInstance;
  app.get('/whoami', async (req): Promise<Seen> => {
    const user = (await auth.authenticate(req)) ?? null;
    return { user, identityHeaders: Object.keys(req.headers).filter((h) => h.startsWith('x-remote-')) };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as AddressInfo).port };
}

/** whoami sends one request on a fresh connection with the given client certificate (chain) and headers. */
function whoami(port: number, client: { cert?: string; key?: string }, headers: Record<string, string | string[]> = {}): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: '/whoami', agent: false, ca: ownCA.pem, headers, ...client }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body) as Seen) : reject(new Error(`${res.statusCode}: ${body}`))));
    });
    req.on('error', reject);
    req.end();
  });
}
const as = (c: TestCert, chain: TestCert[] = []) => ({ cert: [c, ...chain].map((x) => x.pem).join(''), key: c.keyPem });

const servers: FastifyInstance[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
});

beforeAll(() => {
  ownCA = makeCA('website-apiserver-ca');
  clientCA = makeCA('kubernetes-client-ca');
  proxyCA = makeCA('front-proxy-ca');
  otherCA = makeCA('unrelated-ca');
  serving = makeCert({ cn: 'website-apiserver', issuer: ownCA, eku: { serverAuth: true }, ipSans: ['127.0.0.1'] });
  proxy = makeClient(proxyCA, 'front-proxy-client');
});

describe('delegatedAuthentication over TLS', () => {
  let port: number;
  let auth: Authentication;
  beforeAll(async () => {
    cfg = configFor(proxyCA);
    auth = delegatedAuthentication(ownCA.pem, source, reviewToken);
    const s = await serve(auth);
    servers.push(s.app);
    port = s.port;
  });

  it('ignores a spoofed X-Remote-User without a front-proxy certificate', async () => {
    const seen = await whoami(port, {}, { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' });
    expect(seen.user).toBeNull();
  });

  it('ignores X-Remote-User from an ordinary client certificate: the certificate names the user', async () => {
    const jane = makeClient(clientCA, 'jane', { o: ['dev'] });
    const seen = await whoami(port, as(jane), { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' });
    expect(seen.user).toEqual({ name: 'jane', groups: ['dev', 'system:authenticated'] });
  });

  it('ignores X-Remote-User from a certificate with the allowed CN but the wrong CA', async () => {
    const spoof = makeClient(clientCA, 'front-proxy-client');
    const seen = await whoami(port, as(spoof), { 'X-Remote-User': 'admin' });
    expect(seen.user?.name).toBe('front-proxy-client');
  });

  it('ignores X-Remote-User from the front-proxy CA with a CN that is not allowed', async () => {
    const seen = await whoami(port, as(makeClient(proxyCA, 'not-the-proxy')), { 'X-Remote-User': 'admin' });
    expect(seen.user).toBeNull();
  });

  it('accepts the identity from the front-proxy certificate, with repeated group lines as separate groups', async () => {
    const seen = await whoami(port, as(proxy), {
      'X-Remote-User': 'alice',
      'X-Remote-Uid': 'uid-42',
      'X-Remote-Group': ['dev', 'team, with comma'],
      'X-Remote-Extra-Scopes': ['read', 'write'],
      'X-Remote-Extra-Example.org%2fProject': 'p1',
    });
    expect(seen.user).toEqual({
      name: 'alice',
      uid: 'uid-42',
      groups: ['dev', 'team, with comma', 'system:authenticated'],
      extra: { scopes: ['read', 'write'], 'example.org/project': ['p1'] },
    });
    // The identity headers are consumed: the handler cannot read them as client input.
    expect(seen.identityHeaders).toEqual([]);
  });

  it('does not add system:authenticated twice', async () => {
    const seen = await whoami(port, as(proxy), { 'X-Remote-User': 'bob', 'X-Remote-Group': ['system:authenticated'] });
    expect(seen.user?.groups).toEqual(['system:authenticated']);
  });

  // AuthenticatedGroupAdder (k8s.io/apiserver pkg/authentication/group/authenticated_group_adder.go) adds nothing for
  // system:anonymous or for a user already in system:unauthenticated. kube-apiserver with anonymous auth proxies
  // anonymous requests as exactly that, and user.ts withAuthenticatedGroup would make them system:authenticated for our
  // SubjectAccessReview. Expected to fail until fixed (see the report); then drop `.fails`.
  it('does not make the proxied anonymous user system:authenticated', async () => {
    const seen = await whoami(port, as(proxy), { 'X-Remote-User': 'system:anonymous', 'X-Remote-Group': 'system:unauthenticated' });
    expect(seen.user).toEqual({ name: 'system:anonymous', groups: ['system:unauthenticated'] });
  });
  it('does not add system:authenticated to a user in system:unauthenticated', async () => {
    const seen = await whoami(port, as(proxy), { 'X-Remote-User': 'someone', 'X-Remote-Group': 'system:unauthenticated' });
    expect(seen.user?.groups).toEqual(['system:unauthenticated']);
  });

  it('accepts a front-proxy leaf signed by an intermediate sent in the handshake', async () => {
    const inter = makeCA('front-proxy-intermediate', { issuer: proxyCA });
    const leaf = makeClient(inter, 'front-proxy-client');
    const seen = await whoami(port, as(leaf, [inter]), { 'X-Remote-User': 'carol' });
    expect(seen.user).toEqual({ name: 'carol', groups: ['system:authenticated'] });
  });

  it('does not authenticate the front-proxy certificate itself when no username header is sent', async () => {
    expect((await whoami(port, as(proxy), { 'X-Remote-Group': 'system:masters' })).user).toBeNull();
  });

  it("authenticates our own CA's certificates (the standalone admin kubeconfig keeps working)", async () => {
    const admin = makeClient(ownCA, 'admin', { o: ['system:masters'] });
    expect((await whoami(port, as(admin))).user).toEqual({ name: 'admin', groups: ['system:masters', 'system:authenticated'] });
  });

  it('rejects a certificate no trusted CA signed', async () => {
    expect((await whoami(port, as(makeClient(otherCA, 'mallory', { o: ['system:masters'] })))).user).toBeNull();
  });

  it('authenticates a bearer token through TokenReview', async () => {
    tokens.length = 0;
    const seen = await whoami(port, {}, { Authorization: 'Bearer good-token' });
    expect(seen.user).toEqual({ name: 'system:serviceaccount:monitoring:prometheus', uid: 'sa-1', groups: ['system:serviceaccounts', 'system:authenticated'] });
    expect((await whoami(port, {}, { Authorization: 'Bearer bad-token' })).user).toBeNull();
    expect(tokens).toEqual(['good-token', 'bad-token']);
  });

  it('prefers the front-proxy identity over a bearer token, without asking TokenReview', async () => {
    tokens.length = 0;
    const seen = await whoami(port, as(proxy), { 'X-Remote-User': 'alice', Authorization: 'Bearer good-token' });
    expect(seen.user?.name).toBe('alice');
    expect(tokens).toEqual([]);
  });

  it('trusts no front-proxy headers before the configmap is loaded, but still our own CA', async () => {
    const saved = cfg;
    cfg = undefined;
    try {
      expect((await whoami(port, as(proxy), { 'X-Remote-User': 'alice' })).user).toBeNull();
      expect((await whoami(port, as(makeClient(clientCA, 'jane')))).user).toBeNull();
      expect((await whoami(port, as(makeClient(ownCA, 'admin')))).user?.name).toBe('admin');
    } finally {
      cfg = saved;
    }
  });

  it('follows a rotated front-proxy CA at once', async () => {
    const saved = cfg;
    const newProxyCA = makeCA('front-proxy-ca-2');
    cfg = configFor(newProxyCA);
    try {
      // The TLS layer still accepts the old chain (its CA list is fixed for this server), but headers need the new CA.
      expect((await whoami(port, as(proxy), { 'X-Remote-User': 'alice' })).user).toBeNull();
    } finally {
      cfg = saved;
    }
    expect((await whoami(port, as(proxy), { 'X-Remote-User': 'alice' })).user?.name).toBe('alice');
  });

  // Go's pkix.Name.FillFromRDNSequence assigns CommonName for every CN attribute, so the last one wins; x509.ts takes
  // the first. Expected to fail until peerCertificate does the same (see the report); then drop `.fails`.
  it('names the user after the last CN of a subject with several', async () => {
    const twoCNs = makeClient(clientCA, 'first', { extraSubject: [{ shortName: 'CN', value: 'last' }] });
    expect((await whoami(port, as(twoCNs))).user?.name).toBe('last');
  });

  it('accepts any CN from the front-proxy CA when requestheader-allowed-names is empty', async () => {
    const saved = cfg;
    cfg = configFor(proxyCA, []);
    try {
      expect((await whoami(port, as(makeClient(proxyCA, 'whoever')), { 'X-Remote-User': 'dave' })).user?.name).toBe('dave');
    } finally {
      cfg = saved;
    }
  });
});

describe('delegatedAuthentication: trust', () => {
  it('offers TLS the union of our CA, the client CA and the front-proxy CA, and reports rotations', () => {
    cfg = configFor(proxyCA);
    const auth = delegatedAuthentication(ownCA.pem, source, reviewToken);
    expect(auth.trustedCAs()).toEqual([ownCA.pem.trim(), clientCA.pem.trim(), proxyCA.pem.trim()]);
    let changes = 0;
    auth.onTrustChange(() => changes++);
    const rotated = configFor(otherCA);
    cfg = rotated;
    for (const l of listeners) l(rotated);
    expect(changes).toBe(1);
    expect(auth.trustedCAs()).toContain(otherCA.pem.trim());
    expect(auth.trustedCAs()).not.toContain(proxyCA.pem.trim());
    cfg = undefined;
    expect(auth.trustedCAs()).toEqual([ownCA.pem.trim()]);
  });
});

describe('standaloneAuthentication over TLS', () => {
  let port: number;
  beforeAll(async () => {
    const s = await serve(standaloneAuthentication(ownCA.pem));
    servers.push(s.app);
    port = s.port;
  });

  it("authenticates our CA's certificates only, and never headers", async () => {
    const admin = makeClient(ownCA, 'admin', { o: ['system:masters'] });
    expect((await whoami(port, as(admin))).user).toEqual({ name: 'admin', groups: ['system:masters', 'system:authenticated'] });
    expect((await whoami(port, as(makeClient(clientCA, 'jane')))).user).toBeNull();
    expect((await whoami(port, {}, { 'X-Remote-User': 'admin' })).user).toBeNull();
    expect((await whoami(port, as(proxy), { 'X-Remote-User': 'admin' })).user).toBeNull();
    expect((await whoami(port, {}, { Authorization: 'Bearer good-token' })).user).toBeNull();
  });

  it('offers TLS only our CA', () => {
    expect(standaloneAuthentication(ownCA.pem).trustedCAs()).toEqual([ownCA.pem.trim()]);
  });
});
