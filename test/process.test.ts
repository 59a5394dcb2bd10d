/**
 * The server as a process: authentication at the TLS edge, health endpoints, flags and their environment
 * variables, certificate handling in --cert-dir, operator-provided serving certificates, and graceful shutdown.
 */
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import forge from 'node-forge';
import { Agent, request } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { adminAgent, API, call, cleanupTempDirs, startServer, tempDir, website, type ServerProcess } from './helpers/server-process.js';

const MAIN = resolve(import.meta.dirname, '../dist/main.js');
const COLLECTION = `${API}/namespaces/default/websites`;
const FLAGS = [
  '--port',
  '--bind-address',
  '--data-dir',
  '--cert-dir',
  '--tls-cert-file',
  '--tls-private-key-file',
  '--tls-san',
  '--log-level',
  '--watch-history-events',
  '--watch-history-age',
  '--watch-bookmark-interval',
];

const running: ServerProcess[] = [];
const closers: (() => unknown)[] = [];
async function start(o: Parameters<typeof startServer>[0] = {}): Promise<ServerProcess> {
  const srv = await startServer(o);
  running.push(srv);
  return srv;
}
/** agent makes an undici Agent that is destroyed after the test. */
function agent(connect: ConstructorParameters<typeof Agent>[0]): Agent {
  const a = new Agent(connect);
  closers.push(() => a.destroy());
  return a;
}
function admin(certDir: string, withClientCert = true): Agent {
  const a = adminAgent(certDir, withClientCert);
  closers.push(() => a.destroy());
  return a;
}
afterEach(async () => {
  for (const c of closers.splice(0)) await Promise.resolve(c()).catch(() => undefined);
  for (const s of running.splice(0)) await s.stop('SIGKILL');
});
afterAll(() => cleanupTempDirs());

const read = (certDir: string, file: string) => readFileSync(join(certDir, file), 'utf8');
const sansOf = (certDir: string) => new X509Certificate(read(certDir, 'serving.crt')).subjectAltName?.split(', ') ?? [];

/** waitFor polls until cond holds or the timeout passes (process output arrives asynchronously). */
async function waitFor(cond: () => boolean, ms = 3000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return cond();
}

// ---------------------------------------------------------------------------------------------------
// Certificates made by the tests themselves (node-forge), never touching the server's cert dir.

interface Pem {
  cert: string;
  key: string;
}
type Attr = { shortName: string; value: string };
const pki = forge.pki;

function makeCert(o: {
  subject: Attr[];
  issuer?: { subject: Attr[]; key: forge.pki.rsa.PrivateKey };
  ca?: boolean;
  ext?: object[];
}): Pem & { forgeKey: forge.pki.rsa.PrivateKey } {
  const keys = pki.rsa.generateKeyPair({ bits: 2048, e: 0x10001 });
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = `0${Math.floor(Math.random() * 1e12).toString(16)}`;
  cert.validity.notBefore = new Date(Date.now() - 3_600_000);
  cert.validity.notAfter = new Date(Date.now() + 86_400_000);
  cert.setSubject(o.subject);
  cert.setIssuer(o.issuer?.subject ?? o.subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: o.ca ?? false, critical: true },
    { name: 'keyUsage', keyCertSign: o.ca ?? false, digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'subjectKeyIdentifier' },
    ...(o.ext ?? []),
  ]);
  cert.sign(o.issuer?.key ?? keys.privateKey, forge.md.sha256.create());
  return { cert: pki.certificateToPem(cert), key: pki.privateKeyToPem(keys.privateKey), forgeKey: keys.privateKey };
}

/** foreignAdminCert is an `admin`/`system:masters` client cert signed by a CA that even reuses our CA's name. */
function foreignAdminCert(): Pem {
  const caSubject = [{ shortName: 'CN', value: 'website-apiserver-ca' }];
  const otherCa = makeCert({ subject: caSubject, ca: true });
  return makeCert({
    subject: [
      { shortName: 'O', value: 'system:masters' },
      { shortName: 'CN', value: 'admin' },
    ],
    issuer: { subject: caSubject, key: otherCa.forgeKey },
    ext: [{ name: 'extKeyUsage', clientAuth: true }],
  });
}

// ---------------------------------------------------------------------------------------------------

describe('authentication at the TLS edge', () => {
  it('answers 401 with an Unauthorized Status to a request without a client certificate, on API, resource and unknown paths', async () => {
    const srv = await start();
    const anon = admin(srv.certDir, false);
    for (const path of ['/apis', COLLECTION, `${COLLECTION}/some-name`, '/no/such/path', '/openapi/v2']) {
      const res = await call(anon, `${srv.url}${path}`);
      expect(res.status, path).toBe(401);
      expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
      expect(res.body, path).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 });
    }
    // A write without credentials is refused before anything is stored.
    const post = await call(anon, `${srv.url}${COLLECTION}`, 'POST', website('sneaky'));
    expect(post.status).toBe(401);
    const list = await call(admin(srv.certDir), `${srv.url}${COLLECTION}`);
    expect(list.body.items).toEqual([]);
  });

  it('serves /healthz, /livez and /readyz without a client certificate, and lists the checks with ?verbose', async () => {
    const srv = await start();
    const anon = admin(srv.certDir, false);
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const res = await call(anon, `${srv.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.text, path).toBe('ok');
      expect(String(res.headers['content-type'])).toMatch(/^text\/plain/);
    }
    const verbose = await call(anon, `${srv.url}/readyz?verbose`);
    expect(verbose.status).toBe(200);
    expect(verbose.text).toContain('[+]ping ok');
    expect(verbose.text).toContain('[+]ping ok');
    expect(verbose.text).toContain('readyz check passed');
  });

  it('answers 401 to an admin/system:masters client certificate signed by another CA, even one named like ours', async () => {
    const srv = await start();
    const foreign = foreignAdminCert();
    const ourCa = read(srv.certDir, 'ca.crt');
    const impostor = agent({ connect: { ca: ourCa, cert: foreign.cert, key: foreign.key } });
    for (const path of ['/apis', COLLECTION]) {
      const res = await call(impostor, `${srv.url}${path}`);
      expect(res.status, path).toBe(401);
      expect(res.body).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    }
    expect((await call(impostor, `${srv.url}${COLLECTION}`, 'POST', website('impostor'))).status).toBe(401);

    // A self-signed certificate with the admin identity is no better.
    const selfSigned = makeCert({
      subject: [
        { shortName: 'O', value: 'system:masters' },
        { shortName: 'CN', value: 'admin' },
      ],
    });
    const selfie = agent({ connect: { ca: ourCa, cert: selfSigned.cert, key: selfSigned.key } });
    expect((await call(selfie, `${srv.url}/apis`)).status).toBe(401);
  });

  it('authenticates the admin client certificate from the cert dir', async () => {
    const srv = await start();
    const res = await call(admin(srv.certDir), `${srv.url}/apis`);
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe('APIGroupList');
    const created = await call(admin(srv.certDir), `${srv.url}${COLLECTION}`, 'POST', website('by-admin'));
    expect(created.status).toBe(201);
  });
});

describe('command line', () => {
  it('prints every flag and its environment variable with --help and exits 0', () => {
    const r = spawnSync(process.execPath, [MAIN, '--help'], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    for (const flag of FLAGS) {
      expect(r.stdout).toContain(flag);
      expect(r.stdout).toContain(`WEBSITE_APISERVER_${flag.slice(2).toUpperCase().replace(/-/g, '_')}`);
    }
  });

  it('exits non-zero with a message for an unknown flag, a non-numeric port and other invalid values', () => {
    const dir = tempDir('ws-bad-');
    const cases: [string[], RegExp][] = [
      [['--bogus'], /--bogus/],
      [['--port', 'abc'], /--port.*abc/],
      [['--port', '70000'], /--port/],
      [['--log-level', 'loud'], /--log-level.*loud/],
      [['--bind-address', 'not-an-ip'], /--bind-address/],
      [['--tls-cert-file', join(dir, 'x.crt')], /--tls-private-key-file/],
    ];
    for (const [args, message] of cases) {
      const r = spawnSync(process.execPath, [MAIN, '--data-dir', join(dir, 'd'), '--cert-dir', join(dir, 'c'), ...args], { encoding: 'utf8' });
      expect(r.status, args.join(' ')).not.toBe(0);
      expect(r.status, args.join(' ')).not.toBeNull();
      expect(r.stderr, args.join(' ')).toMatch(message);
    }
    // A bad value in the environment is reported the same way.
    const env = spawnSync(process.execPath, [MAIN], { encoding: 'utf8', env: { ...process.env, WEBSITE_APISERVER_PORT: 'abc' } });
    expect(env.status).not.toBe(0);
    expect(env.stderr).toMatch(/--port.*abc/);
  });

  it('exits non-zero naming the value when a --tls-san is neither a DNS name nor an IP address', async () => {
    await expect(start({ args: ['--tls-san', 'not a name!'] })).rejects.toThrow(/invalid SAN/);
  });

  it('takes the log level and SANs from WEBSITE_APISERVER_* environment variables', async () => {
    const srv = await start({ env: { WEBSITE_APISERVER_LOG_LEVEL: 'debug', WEBSITE_APISERVER_TLS_SAN: 'example.test,10.1.2.3' } });
    const sans = sansOf(srv.certDir);
    expect(sans).toContain('DNS:example.test');
    expect(sans).toContain('IP Address:10.1.2.3');
    expect(sans).toContain('DNS:localhost');
    expect(sans).toContain('IP Address:127.0.0.1');
    // Debug level logs every request.
    expect((await call(admin(srv.certDir), `${srv.url}/apis`)).status).toBe(200);
    const requestLogged = () =>
      srv
        .logs()
        .split('\n')
        .some((l) => l.includes('"msg":"request"') && l.includes('"url":"/apis"') && l.includes('"level":20'));
    expect(await waitFor(requestLogged)).toBe(true);
  });

  it('lets flags win over their environment variables', async () => {
    const srv = await start({
      args: ['--log-level', 'info', '--tls-san', 'from-flag.test'],
      env: { WEBSITE_APISERVER_LOG_LEVEL: 'debug', WEBSITE_APISERVER_TLS_SAN: 'from-env.test' },
    });
    const sans = sansOf(srv.certDir);
    expect(sans).toContain('DNS:from-flag.test');
    expect(sans).not.toContain('DNS:from-env.test');
    expect((await call(admin(srv.certDir), `${srv.url}/apis`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(srv.logs()).not.toContain('"msg":"request"');
  });
});

describe('certificates in --cert-dir', () => {
  it('adds repeated --tls-san values, reuses the certificates for the same SANs and regenerates only the serving cert for new ones', async () => {
    const certDir = tempDir('ws-certs-');
    const files = ['ca.crt', 'ca.key', 'serving.crt', 'serving.key', 'admin.crt', 'admin.key'];
    const snapshot = () => Object.fromEntries(files.map((f) => [f, read(certDir, f)]));

    const first = await start({ certDir, args: ['--tls-san', 'api.example.test', '--tls-san', '10.9.8.7', '--tls-san', 'fd00::1'] });
    const sans = sansOf(certDir);
    expect(sans).toEqual(
      expect.arrayContaining(['DNS:localhost', 'IP Address:127.0.0.1', 'DNS:api.example.test', 'IP Address:10.9.8.7', 'IP Address:FD00:0:0:0:0:0:0:1']),
    );
    expect(await first.stop()).toBe(0);
    const before = snapshot();

    // Same SANs (another order, another spelling of the IPv6 address): nothing is regenerated.
    const second = await start({ certDir, args: ['--tls-san', 'fd00:0::1', '--tls-san', '10.9.8.7', '--tls-san', 'API.example.test'] });
    expect(snapshot()).toEqual(before);
    expect((await call(admin(certDir), `${second.url}/apis`)).status).toBe(200);
    expect(await second.stop()).toBe(0);

    // Different SANs: a new serving cert from the same CA; the admin cert stays valid and unchanged.
    const third = await start({ certDir, args: ['--tls-san', 'other.example.test'] });
    const after = snapshot();
    expect(after['serving.crt']).not.toBe(before['serving.crt']);
    expect(after['ca.crt']).toBe(before['ca.crt']);
    expect(after['ca.key']).toBe(before['ca.key']);
    expect(after['admin.crt']).toBe(before['admin.crt']);
    expect(after['admin.key']).toBe(before['admin.key']);
    const newSans = sansOf(certDir);
    expect(newSans).toContain('DNS:other.example.test');
    expect(newSans).not.toContain('DNS:api.example.test');
    expect(new X509Certificate(after['serving.crt']!).checkIssued(new X509Certificate(after['ca.crt']!))).toBe(true);
    // A client that trusted the CA before still verifies the new serving cert.
    expect((await call(admin(certDir), `${third.url}/apis`)).status).toBe(200);
  });

  it('writes private keys and the kubeconfig with mode 0600, certificates with 0644, and creates the cert dir with mode 0700', async () => {
    const certDir = join(tempDir('ws-parent-'), 'nested', 'certs');
    await start({ certDir });
    expect(statSync(certDir).mode & 0o777).toBe(0o700);
    for (const f of ['ca.key', 'serving.key', 'admin.key', 'kubeconfig']) {
      expect(statSync(join(certDir, f)).mode & 0o777, f).toBe(0o600);
    }
    for (const f of ['ca.crt', 'serving.crt', 'admin.crt']) {
      expect(statSync(join(certDir, f)).mode & 0o777, f).toBe(0o644);
    }
  });

  it('serves the certificate given by --tls-cert-file and --tls-private-key-file and still accepts the admin client cert', async () => {
    const custom = makeCert({
      subject: [{ shortName: 'CN', value: 'operator-provided-serving' }],
      ext: [
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 7, ip: '127.0.0.1' },
            { type: 2, value: 'localhost' },
          ],
        },
      ],
    });
    const dir = tempDir('ws-custom-');
    writeFileSync(join(dir, 'tls.crt'), custom.cert);
    writeFileSync(join(dir, 'tls.key'), custom.key, { mode: 0o600 });
    const srv = await start({ args: ['--tls-cert-file', join(dir, 'tls.crt'), '--tls-private-key-file', join(dir, 'tls.key')] });

    const wanted = new X509Certificate(custom.cert).fingerprint256;
    const socket = await new Promise<TLSSocket>((res, rej) => {
      const s = tlsConnect({ host: '127.0.0.1', port: srv.port, ca: custom.cert }, () => res(s));
      s.once('error', rej);
    });
    try {
      expect(socket.authorized).toBe(true);
      expect(socket.getPeerCertificate().fingerprint256).toBe(wanted);
    } finally {
      socket.destroy();
    }

    // Trusting only that certificate is enough to talk to the API with the admin client cert.
    const client = agent({ connect: { ca: custom.cert, cert: read(srv.certDir, 'admin.crt'), key: read(srv.certDir, 'admin.key') } });
    expect((await call(client, `${srv.url}/apis`)).status).toBe(200);
    // Our own CA does not vouch for the operator's certificate.
    await expect(call(admin(srv.certDir), `${srv.url}/apis`)).rejects.toThrow();
    // The kubeconfig trusts the operator's certificate instead of our CA.
    const kc = YAML.parse(read(srv.certDir, 'kubeconfig')) as { clusters: { cluster: Record<string, string> }[] };
    expect(Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data']!, 'base64').toString()).toBe(custom.cert);
    expect(kc.clusters[0]!.cluster['server']).toBe(srv.url);
  });
});

describe('graceful shutdown', () => {
  /** openWatch starts a watch and resolves once headers and the first event arrived. */
  async function openWatch(srv: ServerProcess, a: Agent) {
    const res = await request(`${srv.url}${COLLECTION}?watch=true`, { dispatcher: a });
    expect(res.statusCode).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    let text = '';
    let gotFirst!: () => void;
    const first = new Promise<void>((r) => (gotFirst = r));
    const done = (async (): Promise<string> => {
      try {
        for await (const chunk of res.body) {
          text += String(chunk);
          gotFirst();
        }
        return 'end';
      } catch (e) {
        return `error: ${(e as Error).message}`;
      }
    })();
    await first;
    return { done, text: () => text };
  }

  /** idleSockets opens a TCP connection that never starts TLS and a TLS connection that never sends a request. */
  async function idleSockets(srv: ServerProcess): Promise<{ tcp: Socket; tls: TLSSocket; closed: Promise<void> }> {
    const tcp = netConnect({ host: '127.0.0.1', port: srv.port });
    await new Promise((r) => tcp.once('connect', r));
    const tls = await new Promise<TLSSocket>((res, rej) => {
      const s = tlsConnect({ host: '127.0.0.1', port: srv.port, ca: read(srv.certDir, 'ca.crt') }, () => res(s));
      s.once('error', rej);
    });
    tcp.on('error', () => undefined);
    tls.on('error', () => undefined);
    closers.push(
      () => tcp.destroy(),
      () => tls.destroy(),
    );
    const closed = Promise.all([new Promise((r) => tcp.once('close', r)), new Promise((r) => tls.once('close', r))]).then(() => undefined);
    return { tcp, tls, closed };
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`exits 0 within 5 s on ${signal} with an open watch and idle keep-alive connections, ending the watch stream cleanly`, async () => {
      const srv = await start();
      const a = admin(srv.certDir);
      expect((await call(a, `${srv.url}${COLLECTION}`, 'POST', website('watched'))).status).toBe(201);
      const watch = await openWatch(srv, a);
      expect(watch.text()).toContain('"type":"ADDED"');
      // The request above left its connection idle in the agent's keep-alive pool.
      expect((await call(a, `${srv.url}/apis`)).status).toBe(200);
      const idle = await idleSockets(srv);

      const t0 = Date.now();
      const exitCode = await srv.stop(signal);
      const elapsed = Date.now() - t0;
      expect(exitCode).toBe(0);
      expect(elapsed).toBeLessThan(5000);
      expect(await watch.done).toBe('end');
      await idle.closed;
      expect(srv.logs()).toContain(`"signal":"${signal}"`);
      console.log(`${signal}: exited ${exitCode} after ${elapsed} ms`);
    });
  }
});
