/**
 * Impersonation with a real kube-apiserver 1.37 (constrained impersonation on by default).
 *
 * Through kube-apiserver: it applies Impersonate-* itself, removes those headers (processImpersonationHeaders) and
 * forwards the impersonated user in X-Remote-* (kube-aggregator handler_proxy.go), so `kubectl --as=viewer` gets
 * exactly the viewer's rights on websites, and our server does not apply the impersonation a second time (it would
 * then ask whether the viewer may impersonate itself, and refuse).
 *
 * Straight to our port (delegated): the same headers are authorized with SubjectAccessReviews as kube-apiserver
 * authorizes them, so every answer (200, 201, 400, 403) must be the one kube-apiserver gives the same request, body
 * for body: for the admin token (system:masters), the viewer token (no impersonation rights), a client certificate
 * with legacy `impersonate` rights on one user, and one with constrained `impersonate:user-info` and
 * `impersonate-on:user-info:get|list` rights.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, issueCertificate, suffix, type CallOptions, type Endpoint } from './helpers-access.js';
import { kubectl, kubectlOk, waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';

const env = e2e();
const GROUP = 'extensions.example.com';
const RESOURCE = `websites.${GROUP}`;
const tag = suffix();
const ns = `impersonation-${tag}`;
const EDITORS = `impersonation-editors-${tag}`;
const LEGACY = `impersonator-legacy-${tag}`;
const CONSTRAINED = `impersonator-constrained-${tag}`;
/** May do everything on websites in `ns` (verbs *), nothing else: what every user is on a standalone server. */
const EVERYTHING = `websites-everything-${tag}`;
const CLUSTER_ROLES = [`${LEGACY}`, `${CONSTRAINED}`];

const admin = env.kubeconfig.admin;
const ours: Endpoint = { url: env.website.url, ca: readFileSync(env.website.servingCAFile, 'utf8'), servername: 'website-apiserver.website-system.svc' };
const kube: Endpoint = { url: env.server, ca: readFileSync(env.caFile, 'utf8') };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const clusterCA = { certPem: readFileSync(env.caFile, 'utf8'), keyPem: readFileSync(join(dirname(env.caFile), 'ca.key'), 'utf8') };
const certOf = (cn: string) => {
  const c = issueCertificate({ cn, issuer: clusterCA });
  return { cert: c.certPem, key: c.keyPem };
};
const legacyCert = certOf(LEGACY);
const constrainedCert = certOf(CONSTRAINED);
const everythingCert = certOf(EVERYTHING);

const website = (name: string) => ({
  apiVersion: `${GROUP}/v1alpha1`,
  kind: 'Website',
  metadata: { name },
  spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git' },
});
const websites = `/apis/${GROUP}/v1alpha1/namespaces/${ns}/websites`;

/** both sends the same request to kube-apiserver and to our port and returns both answers. */
async function both(path: string, o: CallOptions) {
  const [theirs, mine] = [await call(kube, path, o), await call(ours, path, o)];
  return { theirs, mine };
}

const rbac = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: ${LEGACY} }
rules:
- { apiGroups: [""], resources: [users], verbs: [impersonate], resourceNames: [viewer] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: ${LEGACY} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${LEGACY} }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: ${LEGACY} }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: ${CONSTRAINED} }
rules:
- { apiGroups: [authentication.k8s.io], resources: [users], verbs: ["impersonate:user-info"], resourceNames: [viewer] }
- { apiGroups: [${GROUP}], resources: [websites], verbs: ["impersonate-on:user-info:get", "impersonate-on:user-info:list"] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: ${CONSTRAINED} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ${CONSTRAINED} }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: ${CONSTRAINED} }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: ${EVERYTHING}, namespace: ${ns} }
rules:
- { apiGroups: [${GROUP}], resources: ["*"], verbs: ["*"] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: ${EVERYTHING}, namespace: ${ns} }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: ${EVERYTHING} }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: ${EVERYTHING} }]
`;

beforeAll(async () => {
  await kubectlOk(admin, ['create', 'namespace', ns]);
  await kubectlOk(admin, ['create', 'rolebinding', 'viewer-view', '--clusterrole', 'view', '--user', 'viewer', '-n', ns]);
  await kubectlOk(admin, ['create', 'rolebinding', 'editors-edit', '--clusterrole', 'edit', '--group', EDITORS, '-n', ns]);
  await kubectlOk(admin, ['apply', '-f', '-'], { input: rbac });
  await kubectlOk(admin, ['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(website('seed')) });
  // RBAC reaches kube-apiserver's authorizer through informers; our server caches every review 10 s, so nothing may
  // ask it before kube-apiserver itself lets each impersonator list as the viewer.
  await waitFor(
    'RBAC effective',
    async () => {
      const asViewer = { headers: { 'Impersonate-User': 'viewer' } };
      const legacy = await call(kube, websites, { ...asViewer, ...legacyCert });
      const constrained = await call(kube, websites, { ...asViewer, ...constrainedCert });
      const editors = await kubectl(admin, ['auth', 'can-i', 'create', RESOURCE, '-n', ns, '--as', 'someone', '--as-group', EDITORS]);
      const everything = await call(kube, websites, everythingCert);
      return legacy.status === 200 && constrained.status === 200 && everything.status === 200 && editors.stdout.trim() === 'yes';
    },
    30_000,
    250,
  );
});

afterAll(async () => {
  await kubectl(admin, ['delete', 'clusterrolebinding,clusterrole', ...CLUSTER_ROLES, '--ignore-not-found']);
  await kubectl(admin, ['delete', 'namespace', ns, '--wait=false']);
});

describe('kubectl --as through kube-apiserver', () => {
  it("admin --as=viewer gets the viewer's rights on websites: get yes, create no", async () => {
    const got = await kubectl(admin, ['get', 'ws', 'seed', '-n', ns, '-o', 'name', '--as', 'viewer']);
    expect(got.stderr).toBe('');
    expect(got.stdout).toBe(`website.${GROUP}/seed\n`);
    const create = await kubectl(admin, ['create', '-n', ns, '-f', '-', '--as', 'viewer'], { input: JSON.stringify(website('as-viewer')) });
    expect(create.code).toBe(1);
    expect(create.stderr.trim()).toBe(
      `Error from server (Forbidden): error when creating "STDIN": ${RESOURCE} is forbidden: User "viewer" cannot create resource "websites" in API group "${GROUP}" in the namespace "${ns}"`,
    );
  });

  it('--as-group reaches our SubjectAccessReview: a group bound to edit may create', async () => {
    const out = await kubectlOk(admin, ['create', '-n', ns, '-f', '-', '--as', 'someone', '--as-group', EDITORS], {
      input: JSON.stringify(website('as-editors')),
    });
    expect(out).toBe(`website.${GROUP}/as-editors created\n`);
    // Without the group, the same user has no rights at all.
    const alone = await kubectl(admin, ['get', 'ws', '-n', ns, '--as', 'someone']);
    expect(alone.stderr.trim()).toBe(
      `Error from server (Forbidden): ${RESOURCE} is forbidden: User "someone" cannot list resource "websites" in API group "${GROUP}" in the namespace "${ns}"`,
    );
  });
});

describe('straight to our port: the same answers as kube-apiserver', () => {
  it('the admin token (system:masters) impersonating the viewer: list 200, create 403 as the viewer', async () => {
    const as = { ...bearer(env.tokens.admin), 'Impersonate-User': 'viewer' };
    const list = await both(websites, { headers: as });
    expect(list.mine.status).toBe(200);
    expect(list.theirs.status).toBe(200);
    expect(list.mine.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toContain('seed');
    const create = await both(websites, { method: 'POST', headers: as, body: website('direct-as-viewer') });
    expect(create.mine.status).toBe(403);
    expect(create.mine.json).toEqual(create.theirs.json);
  });

  it('the viewer token may not impersonate: 403 for the impersonate-on check, the same Status', async () => {
    const r = await both(websites, { headers: { ...bearer(env.tokens.viewer), 'Impersonate-User': 'someone' } });
    expect(r.mine.status).toBe(403);
    expect(r.mine.json.message).toBe(
      `${RESOURCE} is forbidden: User "viewer" cannot impersonate-on:user-info:list resource "websites" in API group "${GROUP}" in the namespace "${ns}"`,
    );
    expect(r.mine.json).toEqual(r.theirs.json);
  });

  it("a group without a user is 400, byte for byte kube-apiserver's", async () => {
    const r = await both(websites, { headers: ['authorization', `Bearer ${env.tokens.admin}`, 'Impersonate-Group', EDITORS, 'Impersonate-Group', 'b'] });
    expect(r.mine.status).toBe(400);
    expect(r.mine.json.message).toBe(
      `requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"${EDITORS}", "b"}, Extra:map[string][]string(nil)} without impersonating a user name`,
    );
    expect(r.mine.json).toEqual(r.theirs.json);
  });

  it("legacy rights (impersonate users/viewer): the viewer's answers; another user is refused", async () => {
    const asViewer = { headers: { 'Impersonate-User': 'viewer' }, ...legacyCert };
    const list = await both(websites, asViewer);
    expect(list.mine.status).toBe(200);
    const create = await both(websites, { ...asViewer, method: 'POST', body: website('legacy-as-viewer') });
    expect(create.mine.status).toBe(403);
    expect(create.mine.json).toEqual(create.theirs.json);
    const other = await both(websites, { headers: { 'Impersonate-User': 'someone' }, ...legacyCert });
    expect(other.mine.status).toBe(403);
    expect(other.mine.json).toEqual(other.theirs.json);
  });

  it('constrained rights (impersonate:user-info + impersonate-on:user-info:get|list): read as the viewer, never write', async () => {
    const asViewer = { headers: { 'Impersonate-User': 'viewer' }, ...constrainedCert };
    const list = await both(websites, asViewer);
    expect(list.mine.status).toBe(200);
    const get = await both(`${websites}/seed`, asViewer);
    expect(get.mine.status).toBe(200);
    expect(get.mine.json.metadata.name).toBe('seed');
    // No impersonate-on:user-info:create: refused before the viewer's own rights are even asked.
    const create = await both(websites, { ...asViewer, method: 'POST', body: website('constrained-as-viewer') });
    expect(create.mine.status).toBe(403);
    expect(create.mine.json.message).toBe(
      `${RESOURCE} is forbidden: User "${CONSTRAINED}" cannot impersonate-on:user-info:create resource "websites" in API group "${GROUP}" in the namespace "${ns}"`,
    );
    expect(create.mine.json).toEqual(create.theirs.json);
    // A user it may not impersonate: the user-info check of the username answers.
    const other = await both(websites, { headers: { 'Impersonate-User': 'someone' }, ...constrainedCert });
    expect(other.mine.json.message).toBe(
      `users.authentication.k8s.io "someone" is forbidden: User "${CONSTRAINED}" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope`,
    );
    expect(other.mine.json).toEqual(other.theirs.json);
    const names = (await kubectlOk(admin, ['get', 'ws', '-n', ns, '-o', 'name'])).split('\n');
    expect(names).not.toContain(`website.${GROUP}/constrained-as-viewer`);
    expect(names).not.toContain(`website.${GROUP}/legacy-as-viewer`);
    expect(names).not.toContain(`website.${GROUP}/direct-as-viewer`);
  });

  it('a user allowed everything on websites but not impersonation: the answer a standalone server gives non-masters', async () => {
    // test/impersonation.test.ts expects this same wording from our standalone server for CN=alice.
    const r = await both(websites, { headers: { 'Impersonate-User': 'bob' }, ...everythingCert });
    expect(r.theirs.json.message).toBe(
      `users.authentication.k8s.io "bob" is forbidden: User "${EVERYTHING}" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope`,
    );
    expect(r.mine.json).toEqual(r.theirs.json);
  });
});
