/**
 * Delegated authentication and authorization.
 *
 * Through kube-apiserver (kubectl): a user bound to `view` reads and watches websites but may not create them, a
 * user bound to `edit` may, a user with no binding may do nothing; the messages are kube's standard ones.
 *
 * Straight to our port (the acceptance points that are about our port): X-Remote-* headers count only on a
 * connection with the front-proxy certificate, and then our own SubjectAccessReview decides; bearer tokens go
 * through TokenReview; client certificates from our own CA and from the cluster's client CA still work; health
 * paths are open, /metrics is authorized as a non-resource path. Where kube-apiserver has an answer for the same
 * request, ours must be byte-for-byte the same Status.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, issueCertificate, suffix, type Endpoint } from './helpers-access.js';
import { kubectl, kubectlOk, kubectlStream, waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';

const env = e2e();
const GROUP = 'extensions.example.com';
const RESOURCE = `websites.${GROUP}`;
const tag = suffix();
/** ns: the viewer, the editor user and the editor group are bound here. */
const ns = `access-${tag}`;
/** other: nobody is bound here. */
const other = `access-${tag}-other`;
const EDITOR_USER = `access-editor-${tag}`;
const EDITOR_GROUP = `access-editors-${tag}`;
const UNBOUND_GROUP = `access-unbound-${tag}`;

const website = (name: string) => ({
  apiVersion: `${GROUP}/v1alpha1`,
  kind: 'Website',
  metadata: { name },
  spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git' },
});
const websiteYaml = (name: string) => JSON.stringify(website(name));
const websitesPath = (namespace: string) => `/apis/${GROUP}/v1alpha1/namespaces/${namespace}/websites`;

/** kube's responsewriters.forbiddenMessage for a namespaced resource request (no object name). */
const forbidden = (user: string, verb: string, resource: string, group: string, namespace: string) =>
  `User "${user}" cannot ${verb} resource "${resource}" in API group "${group}" in the namespace "${namespace}"`;

const admin = env.kubeconfig.admin;
// Our serving certificate names only the Service's DNS names; the aggregator dials with this ServerName too.
const ours: Endpoint = { url: env.website.url, ca: readFileSync(env.website.servingCAFile, 'utf8'), servername: 'website-apiserver.website-system.svc' };
const kube: Endpoint = { url: env.server, ca: readFileSync(env.caFile, 'utf8') };
const frontProxy = { cert: readFileSync(env.frontProxy.certFile), key: readFileSync(env.frontProxy.keyFile) };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** canI asks kube-apiserver (as admin, impersonating) whether a user may do something in `ns`. */
async function canI(args: string[], as: string[]): Promise<boolean> {
  const r = await kubectl(admin, ['auth', 'can-i', ...args, '-n', ns, ...as]);
  return r.stdout.trim() === 'yes';
}

beforeAll(async () => {
  await kubectlOk(admin, ['create', 'namespace', ns]);
  await kubectlOk(admin, ['create', 'namespace', other]);
  await kubectlOk(admin, ['create', 'rolebinding', 'viewer-view', '--clusterrole', 'view', '--user', 'viewer', '-n', ns]);
  await kubectlOk(admin, ['create', 'rolebinding', 'editor-edit', '--clusterrole', 'edit', '--user', EDITOR_USER, '-n', ns]);
  await kubectlOk(admin, ['create', 'rolebinding', 'editors-edit', '--clusterrole', 'edit', '--group', EDITOR_GROUP, '-n', ns]);
  await kubectlOk(admin, ['apply', '-n', ns, '-f', '-'], { input: websiteYaml('seed') });
  // RBAC reaches kube-apiserver's authorizer through an informer (and the aggregated rules through a
  // controller); our server caches denials for 10 s, so nothing may ask it before the bindings are live.
  await waitFor(
    'RBAC bindings effective',
    async () =>
      (await canI(['list', RESOURCE], ['--as', 'viewer'])) &&
      (await canI(['watch', RESOURCE], ['--as', 'viewer'])) &&
      (await canI(['create', RESOURCE], ['--as', EDITOR_USER])) &&
      (await canI(['create', RESOURCE], ['--as', 'someone', '--as-group', EDITOR_GROUP])),
    30_000,
    250,
  );
});

afterAll(async () => {
  // The namespace controller removes the websites (through our server); no need to wait for it here.
  await kubectl(admin, ['delete', 'namespace', ns, other, '--wait=false']);
});

describe('kubectl through kube-apiserver', () => {
  it('a user bound to view can get, list and watch websites', async () => {
    const one = await kubectl(env.kubeconfig.viewer, ['get', 'ws', 'seed', '-n', ns]);
    expect(one.stderr).toBe('');
    expect(one.code).toBe(0);
    expect(one.stdout).toMatch(/^NAME\s+GIT-REPO\s+READY\s+TYPE\s+PORT\s+STATUS\s+AGE\n/);
    expect(one.stdout.split('\n')[1]).toMatch(/^seed\s+https:\/\/github.com\/luksa\/kubia-website-example.git\s/);

    const list = await kubectl(env.kubeconfig.viewer, ['get', 'ws', '-n', ns, '-o', 'name']);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')).toContain(`website.${GROUP}/seed`);

    // A watch as the viewer: first the current state, then an object an admin creates afterwards.
    const w = kubectlStream(env.kubeconfig.viewer, ['get', 'ws', '-n', ns, '-w', '--no-headers']);
    try {
      await waitFor('the watch lists seed', () => w.lines.some((l) => l.startsWith('seed ')), 20_000, 100);
      await kubectlOk(admin, ['create', '-n', ns, '-f', '-'], { input: websiteYaml('watched') });
      await waitFor('the watch sees the new website', () => w.lines.some((l) => l.startsWith('watched ')), 20_000, 100);
      expect(w.stderr()).toBe('');
      expect(w.proc.exitCode).toBeNull(); // still watching
    } finally {
      w.proc.kill('SIGTERM');
    }
  });

  it('a user bound to view cannot create, with the same message kube-apiserver gives for a ConfigMap', async () => {
    const r = await kubectl(env.kubeconfig.viewer, ['create', '-n', ns, '-f', '-'], { input: websiteYaml('not-allowed') });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "STDIN": ${RESOURCE} is forbidden: ${forbidden('viewer', 'create', 'websites', GROUP, ns)}`,
    );
    // The built-in resource, same user, same shape (core group: empty API group, no group prefix).
    const cm = await kubectl(env.kubeconfig.viewer, ['create', '-n', ns, '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'not-allowed' } }),
    });
    expect(cm.code).toBe(1);
    expect(cm.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "STDIN": configmaps is forbidden: ${forbidden('viewer', 'create', 'configmaps', '', ns)}`,
    );
    const gone = await kubectl(admin, ['get', 'ws', 'not-allowed', '-n', ns]);
    expect(gone.stderr).toContain('NotFound');
  });

  it('a user bound to edit can create, update and delete websites (aggregated ClusterRoles)', async () => {
    const as = ['--as', EDITOR_USER];
    expect(await kubectlOk(admin, ['create', '-n', ns, '-f', '-', ...as], { input: websiteYaml('by-editor') })).toBe(`website.${GROUP}/by-editor created\n`);
    expect(await kubectlOk(admin, ['scale', 'ws', 'by-editor', '--replicas', '2', '-n', ns, ...as])).toBe(`website.${GROUP}/by-editor scaled\n`);
    const o = JSON.parse(await kubectlOk(admin, ['get', 'ws', 'by-editor', '-n', ns, '-o', 'json', ...as])) as { spec: { replicas: number } };
    expect(o.spec.replicas).toBe(2);
    expect(await kubectlOk(admin, ['delete', 'ws', 'by-editor', '-n', ns, ...as])).toBe(`website.${GROUP} "by-editor" deleted from ${ns} namespace\n`);
  });

  it('a user with no binding is forbidden', async () => {
    const list = await kubectl(env.kubeconfig.nobody, ['get', 'ws', '-n', ns]);
    expect(list.code).toBe(1);
    expect(list.stderr.trim()).toBe(`Error from server (Forbidden): ${RESOURCE} is forbidden: ${forbidden('nobody', 'list', 'websites', GROUP, ns)}`);
    const one = await kubectl(env.kubeconfig.nobody, ['get', 'ws', 'seed', '-n', ns]);
    expect(one.code).toBe(1);
    expect(one.stderr.trim()).toBe(`Error from server (Forbidden): ${RESOURCE} "seed" is forbidden: ${forbidden('nobody', 'get', 'websites', GROUP, ns)}`);
    const create = await kubectl(env.kubeconfig.nobody, ['create', '-n', ns, '-f', '-'], { input: websiteYaml('by-nobody') });
    expect(create.code).toBe(1);
    expect(create.stderr).toContain(forbidden('nobody', 'create', 'websites', GROUP, ns));
  });
});

describe('straight to our port: the front proxy', () => {
  const spoofed = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };

  it('ignores X-Remote-* headers without a client certificate: 401 as kube-apiserver words it', async () => {
    const list = await call(ours, websitesPath(ns), { headers: spoofed });
    expect(list.status).toBe(401);
    const create = await call(ours, websitesPath(ns), { method: 'POST', headers: spoofed, body: website('spoofed') });
    expect(create.status).toBe(401);
    // kube-apiserver's own 401 for an unauthenticated request is the reference body.
    const theirs = await call(kube, websitesPath(ns), { headers: bearer('not-a-token') });
    expect(theirs.status).toBe(401);
    expect(list.json).toEqual(theirs.json);
    expect(create.json).toEqual(theirs.json);
    expect((await kubectl(admin, ['get', 'ws', 'spoofed', '-n', ns])).stderr).toContain('NotFound');
  });

  it('trusts the same headers on a connection with the front-proxy certificate', async () => {
    const list = await call(ours, websitesPath(ns), { headers: spoofed, ...frontProxy });
    expect(list.status).toBe(200);
    expect(list.json.kind).toBe('WebsiteList');
    expect(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('seed');
    const create = await call(ours, websitesPath(ns), { method: 'POST', headers: spoofed, body: website('via-proxy'), ...frontProxy });
    expect(create.status).toBe(201);
    expect(create.json.metadata).toMatchObject({ name: 'via-proxy', namespace: ns });
    expect(await kubectlOk(admin, ['get', 'ws', 'via-proxy', '-n', ns, '-o', 'name'])).toBe(`website.${GROUP}/via-proxy\n`);
    // The identity really comes from the headers: the same user without the masters group line is not admin.
    const noGroup = await call(ours, websitesPath(ns), { method: 'POST', headers: { 'X-Remote-User': 'admin' }, body: website('via-proxy-2'), ...frontProxy });
    expect(noGroup.status).toBe(403);
    expect(noGroup.json.message).toBe(`${RESOURCE} is forbidden: ${forbidden('admin', 'create', 'websites', GROUP, ns)}`);
  });

  it('asks kube-apiserver (SubjectAccessReview) for a proxied user outside system:masters', async () => {
    const viewer = { 'X-Remote-User': 'viewer' };
    const list = await call(ours, websitesPath(ns), { headers: viewer, ...frontProxy });
    expect(list.status).toBe(200);
    expect(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('seed');
    // The namespace is part of the review: the viewer has no binding in the other one.
    const elsewhere = await call(ours, websitesPath(other), { headers: viewer, ...frontProxy });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.json.message).toBe(`${RESOURCE} is forbidden: ${forbidden('viewer', 'list', 'websites', GROUP, other)}`);

    const create = await call(ours, websitesPath(ns), { method: 'POST', headers: viewer, body: website('proxied-viewer'), ...frontProxy });
    expect(create.status).toBe(403);
    expect(create.json.message).toBe(`${RESOURCE} is forbidden: ${forbidden('viewer', 'create', 'websites', GROUP, ns)}`);
    // kube-apiserver denies the same request (viewer token, same path) with exactly this Status.
    const theirs = await call(kube, websitesPath(ns), { method: 'POST', headers: bearer(env.tokens.viewer), body: website('proxied-viewer') });
    expect(theirs.status).toBe(403);
    expect(create.json).toEqual(theirs.json);
  });

  it('reads each X-Remote-Group line as its own group, and never splits one line at commas', async () => {
    const user = `access-grouper-${tag}`;
    // Two lines: only the second group is bound to edit. A server that joined them into "a, b" would deny.
    const twoLines = await call(ours, websitesPath(ns), {
      method: 'POST',
      headers: ['X-Remote-User', user, 'X-Remote-Group', UNBOUND_GROUP, 'X-Remote-Group', EDITOR_GROUP],
      body: website('two-group-lines'),
      ...frontProxy,
    });
    expect(twoLines.status).toBe(201);
    // Without the second line the user has only the unbound group.
    const firstOnly = await call(ours, websitesPath(ns), {
      method: 'POST',
      headers: ['X-Remote-User', user, 'X-Remote-Group', UNBOUND_GROUP],
      body: website('first-group-only'),
      ...frontProxy,
    });
    expect(firstOnly.status).toBe(403);
    expect(firstOnly.json.message).toBe(`${RESOURCE} is forbidden: ${forbidden(user, 'create', 'websites', GROUP, ns)}`);
    // One line holding a comma is one (unbound) group name, as kube-apiserver reads it.
    const oneLine = await call(ours, websitesPath(ns), {
      method: 'POST',
      headers: ['X-Remote-User', user, 'X-Remote-Group', `${UNBOUND_GROUP}, ${EDITOR_GROUP}`],
      body: website('one-group-line'),
      ...frontProxy,
    });
    expect(oneLine.status).toBe(403);
    const names = (await kubectlOk(admin, ['get', 'ws', '-n', ns, '-o', 'name'])).split('\n');
    expect(names).toContain(`website.${GROUP}/two-group-lines`);
    expect(names).not.toContain(`website.${GROUP}/first-group-only`);
    expect(names).not.toContain(`website.${GROUP}/one-group-line`);
  });

  it('a user in 1,000 groups, impersonated through kube-apiserver, reaches us with every group: the last one decides', async () => {
    // The aggregator proxies one X-Remote-Group line per group (over HTTP/2); only the 1,000th is bound to edit.
    const user = `access-many-groups-${tag}`;
    const unbound = Array.from({ length: 999 }, (_, i) => `${UNBOUND_GROUP}-${String(i).padStart(4, '0')}`);
    const as = ['--as', user, ...[...unbound, EDITOR_GROUP].flatMap((g) => ['--as-group', g])];
    const created = await kubectl(admin, ['create', '-n', ns, '-f', '-', ...as], { input: websiteYaml('many-groups') });
    expect(created.code, created.stderr).toBe(0);
    expect((await kubectlOk(admin, ['get', 'ws', 'many-groups', '-n', ns, '-o', 'name'])).trim()).toBe(`website.${GROUP}/many-groups`);
    // Without the last group kube-apiserver itself refuses the create: the binding is what let it through above.
    const without = await kubectl(admin, ['create', '-n', ns, '-f', '-', '--as', user, ...unbound.flatMap((g) => ['--as-group', g])], {
      input: websiteYaml('many-groups-2'),
    });
    expect(without.code).not.toBe(0);
    expect(without.stderr).toContain('forbidden');
  });

  it('does not trust a front-proxy-client certificate from another CA, nor a front-proxy-CA certificate with a name not allowed', async () => {
    // O=system:masters as well: were it taken as an ordinary client certificate, it would be admin.
    const foreignCA = issueCertificate({ cn: 'not-the-front-proxy-ca' });
    const foreign = issueCertificate({ cn: 'front-proxy-client', orgs: ['system:masters'], issuer: foreignCA });
    const r = await call(ours, websitesPath(ns), { headers: spoofed, cert: foreign.certPem, key: foreign.keyPem });
    expect(r.status).toBe(401);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });

    // The plane keeps the front-proxy CA key next to its certificate; the allowed names are [front-proxy-client].
    const proxyCA = {
      certPem: readFileSync(env.frontProxy.caFile, 'utf8'),
      keyPem: readFileSync(join(dirname(env.frontProxy.caFile), 'front-proxy-ca.key'), 'utf8'),
    };
    const wrongName = issueCertificate({ cn: 'some-other-proxy', issuer: proxyCA });
    const r2 = await call(ours, websitesPath(ns), { headers: spoofed, cert: wrongName.certPem, key: wrongName.keyPem });
    expect(r2.status).toBe(401);
  });

  it('the front-proxy certificate alone, without X-Remote-User, is no identity', async () => {
    const r = await call(ours, websitesPath(ns), { ...frontProxy });
    expect(r.status).toBe(401);
  });
});

describe('straight to our port: bearer tokens (TokenReview)', () => {
  it('the viewer token lists in its namespace and is denied create as kube-apiserver denies it', async () => {
    const list = await call(ours, websitesPath(ns), { headers: bearer(env.tokens.viewer) });
    expect(list.status).toBe(200);
    expect(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('seed');
    const create = await call(ours, websitesPath(ns), { method: 'POST', headers: bearer(env.tokens.viewer), body: website('by-viewer-token') });
    expect(create.status).toBe(403);
    const theirs = await call(kube, websitesPath(ns), { method: 'POST', headers: bearer(env.tokens.viewer), body: website('by-viewer-token') });
    expect(create.json).toEqual(theirs.json);
    const elsewhere = await call(ours, websitesPath(other), { headers: bearer(env.tokens.viewer) });
    expect(elsewhere.status).toBe(403);
  });

  it('an invalid token is 401', async () => {
    const r = await call(ours, websitesPath(ns), { headers: bearer(`invalid-${tag}`) });
    expect(r.status).toBe(401);
    expect(r.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
  });

  it('the admin token (system:masters) may create', async () => {
    const create = await call(ours, websitesPath(ns), { method: 'POST', headers: bearer(env.tokens.admin), body: website('by-admin-token') });
    expect(create.status).toBe(201);
    const list = await call(ours, websitesPath(other), { headers: bearer(env.tokens.admin) });
    expect(list.status).toBe(200);
  });
});

describe('straight to our port: client certificates', () => {
  it('our own admin certificate (system:masters) still works in delegated mode', async () => {
    const cert = readFileSync(join(env.website.certDir, 'admin.crt'));
    const key = readFileSync(join(env.website.certDir, 'admin.key'));
    const create = await call(ours, websitesPath(ns), { method: 'POST', body: website('by-admin-cert'), cert, key });
    expect(create.status).toBe(201);
    const list = await call(ours, websitesPath(ns), { cert, key });
    expect(list.status).toBe(200);
    expect(list.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('by-admin-cert');
  });

  it('a certificate from the cluster client CA authenticates its CN, then RBAC decides', async () => {
    const clusterCA = { certPem: readFileSync(env.caFile, 'utf8'), keyPem: readFileSync(join(dirname(env.caFile), 'ca.key'), 'utf8') };
    const viewer = issueCertificate({ cn: 'viewer', issuer: clusterCA });
    const list = await call(ours, websitesPath(ns), { cert: viewer.certPem, key: viewer.keyPem });
    expect(list.status).toBe(200);
    const create = await call(ours, websitesPath(ns), { method: 'POST', body: website('by-viewer-cert'), cert: viewer.certPem, key: viewer.keyPem });
    expect(create.status).toBe(403);
    expect(create.json.message).toBe(`${RESOURCE} is forbidden: ${forbidden('viewer', 'create', 'websites', GROUP, ns)}`);
  });
});

describe('straight to our port: health and metrics', () => {
  it.each(['/healthz', '/livez', '/readyz'])('%s answers 200 without credentials', async (path) => {
    const r = await call(ours, path);
    expect(r.status).toBe(200);
    expect(r.text).toBe('ok');
  });

  it('/metrics needs credentials and authorization for the non-resource path', async () => {
    expect((await call(ours, '/metrics')).status).toBe(401);
    const viewer = await call(ours, '/metrics', { headers: bearer(env.tokens.viewer) });
    expect(viewer.status).toBe(403);
    expect(viewer.json.message).toBe('forbidden: User "viewer" cannot get path "/metrics"');
    // kube-apiserver's own /metrics denies the viewer with the same Status.
    const theirs = await call(kube, '/metrics', { headers: bearer(env.tokens.viewer) });
    expect(theirs.status).toBe(403);
    expect(viewer.json).toEqual(theirs.json);
    const adminMetrics = await call(ours, '/metrics', { headers: bearer(env.tokens.admin) });
    expect(adminMetrics.status).toBe(200);
    expect(adminMetrics.text).toContain('apiserver_request_total');
  });
});
