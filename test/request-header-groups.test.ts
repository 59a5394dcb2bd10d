/**
 * A user in a thousand groups, through the front proxy: kube-apiserver's aggregator sends one X-Remote-Group line per
 * group, and kube-apiserver 1.37 itself takes any number of lines within 1 MiB (Go's MaxHeaderBytes; HTTP/2: 1 MiB +
 * 320 bytes of header list). Node's defaults dropped every line past the 1,000th on HTTP/1.1 (the user silently lost
 * groups) and reset HTTP/2 streams of more than 128 fields.
 *
 * A real server process with delegated authentication and authorization against a fake kube-apiserver
 * (test/helpers/fake-kube.ts) that publishes a front-proxy CA in kube-system/extension-apiserver-authentication and
 * records every SubjectAccessReview: the review's groups are the groups the server read. Requests go over real TLS
 * sockets holding the front proxy's client certificate, on HTTP/1.1 (raw bytes) and HTTP/2.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCert, type TestCert } from './helpers/auth-certs.js';
import { startFakeKube, type FakeKube } from './helpers/fake-kube.js';
import { h2Request, openH2 } from './helpers/h2-client.js';
import { rawRequest } from './helpers/raw-tls.js';
import { API, cleanupTempDirs, startServer, tempDir, type ServerProcess } from './helpers/server-process.js';

const SARS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const CONFIGMAPS = '/api/v1/namespaces/kube-system/configmaps';
const COLLECTION = `${API}/namespaces/default/websites`;
/** kube-apiserver's limits (HTTP/1.1 request line and headers; HTTP/2 header list as RFC 7541 counts it). */
const MAX_HEADER_BYTES = 1 << 20;
const MAX_HEADER_LIST_SIZE = (1 << 20) + 320;

interface Review {
  spec: { user: string; groups?: string[]; resourceAttributes?: Record<string, string> };
}

let kube: FakeKube;
let server: ServerProcess;
let proxyCA: TestCert;
let proxy: TestCert;

/** groups is `n` distinct group names of 40 bytes each, as a directory's group names might be. */
const groups = (n: number, user: string) => Array.from({ length: n }, (_, i) => `${user}-group-${String(i).padStart(40 - user.length - 7, '0')}`);

/** reviewOf is the SubjectAccessReview the server asked for `user`. */
function reviewOf(user: string): Review {
  const r = kube
    .posted(SARS)
    .map((b) => b as Review)
    .filter((b) => b.spec.user === user);
  expect(r).toHaveLength(1);
  return r[0] as Review;
}

/** serverCA is the CA of the server's serving certificate. */
const serverCA = () => readFileSync(join(server.certDir, 'ca.crt'), 'utf8');

/** http1 is a GET of the collection as `user` in `gs`, one X-Remote-Group line per group. */
const http1 = (user: string, gs: readonly string[]) =>
  `GET ${COLLECTION} HTTP/1.1\r\nHost: localhost\r\nX-Remote-User: ${user}\r\n${gs.map((g) => `X-Remote-Group: ${g}\r\n`).join('')}\r\n`;

beforeAll(async () => {
  proxyCA = makeCert({ cn: 'front-proxy-ca', ca: true });
  proxy = makeCert({ cn: 'front-proxy-client', issuer: proxyCA });
  kube = await startFakeKube();
  kube.collection('/api/v1/namespaces', 'NamespaceList').items.set('default', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'default', resourceVersion: '1' },
    status: { phase: 'Active' },
  });
  kube.collection(CONFIGMAPS, 'ConfigMapList').items.set('extension-apiserver-authentication', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'extension-apiserver-authentication', namespace: 'kube-system', resourceVersion: '2' },
    data: {
      'requestheader-client-ca-file': proxyCA.pem,
      'requestheader-allowed-names': '["front-proxy-client"]',
      'requestheader-username-headers': '["X-Remote-User"]',
      'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
    },
  });
  kube.onPost(SARS, (body) => ({ code: 201, body: { ...(body as object), status: { allowed: true } } }));
  const dir = tempDir('ws-groups-');
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kube.kubeconfig.exportConfig());
  server = await startServer({
    args: ['--kubeconfig', kubeconfig, '--authentication-mode', 'delegated', '--authorization-mode', 'delegated', '--enable-reconcilers', 'false'],
  });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await kube?.close();
  cleanupTempDirs();
});

describe('a user in 1,000 groups through the front proxy', () => {
  it('HTTP/1.1: every X-Remote-Group line arrives, in order', async () => {
    const gs = groups(1000, 'alice');
    const r = await rawRequest(server, http1('alice', gs), { identity: { cert: proxy.pem, key: proxy.keyPem }, firstResponse: true, waitMs: 10_000 });
    expect(r.status, r.body).toBe(200);
    const review = reviewOf('alice');
    expect(review.spec.groups).toEqual([...gs, 'system:authenticated']);
    expect(review.spec.resourceAttributes).toMatchObject({ verb: 'list', resource: 'websites', namespace: 'default' });
  });

  it('HTTP/2: every x-remote-group field arrives, in order', async () => {
    const gs = groups(1000, 'bob');
    const session = await openH2(server.url, { ca: serverCA(), cert: proxy.pem, key: proxy.keyPem });
    try {
      const r = await h2Request(session, { ':method': 'GET', ':path': COLLECTION, 'x-remote-user': 'bob', 'x-remote-group': gs });
      expect(r.status, `${r.text} rst ${r.rstCode}`).toBe(200);
    } finally {
      session.close();
    }
    expect(reviewOf('bob').spec.groups).toEqual([...gs, 'system:authenticated']);
  });

  it('HTTP/1.1 takes as many lines as fit in 1 MiB, as kube-apiserver does (12,000 groups: 660 KiB)', async () => {
    const gs = groups(12_000, 'carol');
    const r = await rawRequest(server, http1('carol', gs), { identity: { cert: proxy.pem, key: proxy.keyPem }, firstResponse: true, waitMs: 20_000 });
    expect(r.status, r.body).toBe(200);
    expect(reviewOf('carol').spec.groups).toHaveLength(12_001);
  });
});

describe("headers over kube-apiserver's limit still get its 431", () => {
  it('HTTP/1.1: more than 1 MiB of X-Remote-Group lines is 431, and no review is asked for', async () => {
    const gs = groups(Math.ceil(MAX_HEADER_BYTES / 56) + 1000, 'dave');
    const r = await rawRequest(server, http1('dave', gs), { identity: { cert: proxy.pem, key: proxy.keyPem }, firstResponse: true, waitMs: 20_000 });
    expect(r.status).toBe(431);
    expect(r.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Request Header Fields Too Large', code: 431 });
    expect(kube.posted(SARS).some((b) => (b as Review).spec.user === 'dave')).toBe(false);
  });

  it('HTTP/2: a header list over 1 MiB + 320 bytes is 431, and the session serves on', async () => {
    // One value repeated: HPACK sends it once, so the block stays small on the wire while its list is over the limit.
    const same = 'x'.repeat(40);
    const count = Math.ceil(MAX_HEADER_LIST_SIZE / (same.length + 'x-remote-group'.length + 32)) + 10;
    const session = await openH2(server.url, { ca: serverCA(), cert: proxy.pem, key: proxy.keyPem });
    try {
      const r = await h2Request(session, { ':method': 'GET', ':path': COLLECTION, 'x-remote-user': 'erin', 'x-remote-group': Array(count).fill(same) });
      expect(r.status, `rst ${r.rstCode}`).toBe(431);
      expect(r.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Request Header Fields Too Large', code: 431 });
      // Just under the limit is served.
      const under = await h2Request(session, {
        ':method': 'GET',
        ':path': COLLECTION,
        'x-remote-user': 'frank',
        'x-remote-group': Array(count - 200).fill(same),
      });
      expect(under.status, `rst ${under.rstCode}`).toBe(200);
    } finally {
      session.close();
    }
    expect(kube.posted(SARS).some((b) => (b as Review).spec.user === 'erin')).toBe(false);
  });
});
