/**
 * The unsafe delete of an object whose stored data does not decode, authorized as kube-apiserver authorizes it
 * (k8s.io/apiserver handlers/delete.go authorizeUnsafeDelete) and audited as it audits it: a real server process with
 * delegated authorization (--kubeconfig of a fake kube-apiserver answering SubjectAccessReviews, test/helpers/
 * fake-kube.ts; standalone authentication, so users are client certificates from the server's CA), driven over HTTPS.
 * - A user allowed `delete` on websites but not `unsafe-delete-ignore-read-errors` gets kube's 403
 *   (`... is forbidden: not permitted to do "unsafe-delete-ignore-read-errors", reason: ...`) and the object stays.
 * - A user allowed both deletes it; the second SubjectAccessReview asks exactly for the extra verb on the object.
 * - The audit event of every delete that asked for ignoreStoreReadErrorWithClusterBreakingPotential, refused or
 *   done, carries `apiserver.k8s.io/unsafe-delete-ignore-read-error: ""`; a plain delete's does not.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLeaf } from '../src/certs/issue.js';
import { openLayout } from '../src/storage/lmdb-storage.js';
import { startFakeKube, type FakeKube } from './helpers/fake-kube.js';
import { adminAgent, API, call, cleanupTempDirs, startServer, tempDir, website, type ServerProcess } from './helpers/server-process.js';

const SARS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const GROUP = 'extensions.example.com';
const COLLECTION = `${API}/namespaces/default/websites`;
const UNSAFE = 'ignoreStoreReadErrorWithClusterBreakingPotential=true';
const UNSAFE_VERB = 'unsafe-delete-ignore-read-errors';
const ANNOTATION = 'apiserver.k8s.io/unsafe-delete-ignore-read-error';
/** The reason the fake authorizer gives for a denial (passed on as kube's webhook authorizer passes it). */
const DENIED = 'no rule grants it';

/** What each user may do on websites (admin is system:masters: never asked). */
const GRANTS: Record<string, string[]> = {
  deleter: ['get', 'delete'],
  breaker: ['get', 'delete', UNSAFE_VERB],
};

interface Review {
  spec: { user: string; resourceAttributes?: Record<string, string> };
}

let kube: FakeKube;
let server: ServerProcess;
let admin: Agent;
const users: Record<string, Agent> = {};
let auditLog: string;

type AuditEvent = Record<string, any>;

/** eventOf waits for the ResponseComplete event of the request with this Audit-Id. */
async function eventOf(id: unknown): Promise<AuditEvent> {
  expect(typeof id).toBe('string');
  const deadline = Date.now() + 10_000;
  for (;;) {
    const text = readFileSync(auditLog, 'utf8');
    const lines = text
      .slice(0, text.lastIndexOf('\n') + 1)
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent);
    const done = lines.find((e) => e['auditID'] === id && e['stage'] === 'ResponseComplete');
    if (done) return done;
    if (Date.now() > deadline) throw new Error(`no ResponseComplete audit event for ${String(id)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** agentFor is an HTTPS client with a certificate from the server's CA for `user` (no groups). */
function agentFor(certDir: string, user: string): Agent {
  const caPem = readFileSync(join(certDir, 'ca.crt'), 'utf8');
  const ca = { cert: forge.pki.certificateFromPem(caPem), key: forge.pki.privateKeyFromPem(readFileSync(join(certDir, 'ca.key'), 'utf8')) };
  const now = new Date();
  const leaf = createLeaf(ca, now, new Date(now.getTime() + 86_400_000), { subject: [{ shortName: 'CN', value: user }], extKeyUsage: { clientAuth: true } });
  return new Agent({ connect: { ca: caPem, cert: leaf.certPem, key: leaf.keyPem } });
}

beforeAll(async () => {
  kube = await startFakeKube();
  kube.collection('/api/v1/namespaces', 'NamespaceList').items.set('default', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'default', resourceVersion: '1' },
    status: { phase: 'Active' },
  });
  kube.onPost(SARS, (body) => {
    const r = body as Review;
    const a = r.spec.resourceAttributes;
    const allowed = !!a && a.group === GROUP && a.resource === 'websites' && (GRANTS[r.spec.user] ?? []).includes(a.verb ?? '');
    return { code: 201, body: { ...(body as object), status: { allowed, ...(allowed ? {} : { reason: DENIED }) } } };
  });
  const dir = tempDir('ws-unsafe-authz-');
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kube.kubeconfig.exportConfig());
  writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
  const args = (log: string) => [
    '--kubeconfig',
    kubeconfig,
    '--authentication-mode',
    'standalone',
    '--authorization-mode',
    'delegated',
    '--enable-reconcilers',
    'false',
    '--audit-policy-file',
    join(dir, 'policy.yaml'),
    '--audit-log-path',
    join(dir, log),
  ];

  // Three websites; then, the server stopped, default/b's stored bytes are cut short (they no longer decode).
  const first = await startServer({ args: args('first.log') });
  const firstAdmin = adminAgent(first.certDir);
  for (const n of ['a', 'b', 'c']) expect((await call(firstAdmin, `${first.url}${COLLECTION}`, 'POST', website(n))).status).toBe(201);
  await firstAdmin.close();
  expect(await first.stop()).toBe(0);
  const layout = openLayout(first.dataDir);
  await layout.objectsText.put([`${GROUP}/websites`, 'default', 'b'], Buffer.from('{"apiVersion":"extensions.example.com/v1","metadata":{"na'));
  await layout.root.close();

  auditLog = join(dir, 'second.log');
  server = await startServer({ dataDir: first.dataDir, certDir: first.certDir, args: args('second.log') });
  admin = adminAgent(server.certDir);
  for (const u of Object.keys(GRANTS)) users[u] = agentFor(server.certDir, u);
}, 60_000);

afterAll(async () => {
  await admin?.close();
  for (const a of Object.values(users)) await a.close();
  await server?.stop();
  await kube?.close();
  cleanupTempDirs();
});

describe('the unsafe delete, authorized through SubjectAccessReviews', () => {
  it('is 403 for a user allowed delete but not unsafe-delete-ignore-read-errors, worded as kube-apiserver words it, and the object stays', async () => {
    const deleter = users['deleter'] as Agent;
    const before = kube.posted(SARS).length;
    const r = await call(deleter, `${server.url}${COLLECTION}/b?${UNSAFE}`, 'DELETE');
    expect(r.status).toBe(403);
    expect(r.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `websites.${GROUP} "b" is forbidden: not permitted to do "${UNSAFE_VERB}", reason: ${DENIED}`,
      reason: 'Forbidden',
      details: { name: 'b', group: GROUP, kind: 'websites' },
      code: 403,
    });
    // Two reviews: the request's own verb, allowed; then the extra verb on the same object, denied.
    const reviews = (kube.posted(SARS).slice(before) as Review[]).map((x) => x.spec);
    expect(reviews).toEqual([
      expect.objectContaining({
        user: 'deleter',
        resourceAttributes: expect.objectContaining({ verb: 'delete', namespace: 'default', group: GROUP, resource: 'websites', name: 'b' }),
      }),
      expect.objectContaining({
        user: 'deleter',
        resourceAttributes: expect.objectContaining({
          verb: UNSAFE_VERB,
          namespace: 'default',
          group: GROUP,
          version: 'v1alpha1',
          resource: 'websites',
          name: 'b',
        }),
      }),
    ]);
    expect(reviews[1]?.resourceAttributes?.['subresource'] ?? '').toBe('');

    // The object is still there, still undecodable; the same user's plain delete reaches the store (its 500).
    const get = await call(admin, `${server.url}${COLLECTION}/b`);
    expect(get.status).toBe(500);
    expect(get.body.message).toMatch(
      /^Internal error occurred: StorageError: corrupt object, Code: 7, Key: \/registry\/extensions.example.com\/websites\/default\/b, /,
    );
    const plain = await call(deleter, `${server.url}${COLLECTION}/b`, 'DELETE');
    expect(plain.status).toBe(500);
    expect(plain.body.reason).toBe('InternalError');

    // Audit: the refused attempt carries kube's annotation (added before the extra verb is asked), beside the
    // request's own authorization decision; the plain delete's event does not.
    const refused = await eventOf(r.headers['audit-id']);
    expect(refused).toMatchObject({
      verb: 'delete',
      user: { username: 'deleter' },
      objectRef: { resource: 'websites', namespace: 'default', name: 'b' },
      responseStatus: { code: 403 },
    });
    expect(refused['annotations']).toEqual({ 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '', [ANNOTATION]: '' });
    const plainEvent = await eventOf(plain.headers['audit-id']);
    expect(plainEvent['responseStatus']).toMatchObject({ code: 500 });
    expect(plainEvent['annotations']).not.toHaveProperty(ANNOTATION);
  });

  it('deletes it for a user allowed both verbs, and the audit event of the forced delete carries the annotation', async () => {
    const breaker = users['breaker'] as Agent;
    const before = kube.posted(SARS).length;
    const r = await call(breaker, `${server.url}${COLLECTION}/b?${UNSAFE}`, 'DELETE');
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'b', kind: 'Website' }, code: 200 });
    expect((kube.posted(SARS).slice(before) as Review[]).map((x) => x.spec.resourceAttributes?.['verb'])).toEqual(['delete', UNSAFE_VERB]);
    expect((await call(admin, `${server.url}${COLLECTION}/b`)).status).toBe(404);
    const list = await call(admin, `${server.url}${COLLECTION}`);
    expect(list.status).toBe(200);
    expect(list.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(['a', 'c']);

    const forced = await eventOf(r.headers['audit-id']);
    expect(forced).toMatchObject({
      level: 'Metadata',
      verb: 'delete',
      user: { username: 'breaker', groups: ['system:authenticated'] },
      objectRef: { resource: 'websites', namespace: 'default', name: 'b', apiGroup: GROUP, apiVersion: 'v1alpha1' },
      responseStatus: { code: 200 },
    });
    expect(forced['annotations']).toEqual({ 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '', [ANNOTATION]: '' });
  });

  it("asks nothing more, and annotates nothing, for the request's own verb denied first", async () => {
    // A user with no grant at all: the request's own `delete` is refused before the option is looked at.
    const nobody = agentFor(server.certDir, 'nobody');
    try {
      const r = await call(nobody, `${server.url}${COLLECTION}/a?${UNSAFE}`, 'DELETE');
      expect(r.status).toBe(403);
      expect(r.body.message).toBe(
        `websites.${GROUP} "a" is forbidden: User "nobody" cannot delete resource "websites" in API group "${GROUP}" in the namespace "default": ${DENIED}`,
      );
      const ev = await eventOf(r.headers['audit-id']);
      expect(ev['annotations']).toEqual({ 'authorization.k8s.io/decision': 'forbid', 'authorization.k8s.io/reason': DENIED });
    } finally {
      await nobody.close();
    }
    expect((await call(admin, `${server.url}${COLLECTION}/a`)).status).toBe(200);
  });
});
