/**
 * @module cluster/reviews.test
 * The TokenReview and SubjectAccessReview calls against a fake API server: the request bodies kube's webhook
 * authenticator/authorizer send (k8s.io/apiserver plugin/pkg/authenticator/token/webhook, plugin/pkg/authorizer/webhook)
 * and how their answers become identities and decisions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeKube, type FakeKube } from '../../test/helpers/fake-kube.js';
import { requestAttributes } from '../auth/request-info.js';
import { accessReviewer, tokenReviewer } from './reviews.js';

const TOKENREVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
const SARS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const JANE = { name: 'jane', uid: 'u-7', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a', 'b'] } };

let kube: FakeKube;
beforeAll(async () => {
  kube = await startFakeKube();
});
afterAll(async () => {
  await kube?.close();
});

/** sarAnswer makes the fake API server answer every SubjectAccessReview with `status`. */
const sarAnswer = (status: Record<string, unknown>) => kube.onPost(SARS, (body) => ({ code: 201, body: { ...(body as object), status } }));

describe('tokenReviewer', () => {
  it('sends the token and maps an authenticated user', async () => {
    kube.onPost(TOKENREVIEWS, (body) => ({
      code: 201,
      body: {
        ...(body as object),
        status: {
          authenticated: true,
          user: { username: 'system:serviceaccount:mon:prom', uid: 'sa-1', groups: ['system:serviceaccounts'], extra: { k: ['v'] } },
        },
      },
    }));
    expect(await tokenReviewer(kube.kubeconfig)('tok-123')).toEqual({
      name: 'system:serviceaccount:mon:prom',
      uid: 'sa-1',
      groups: ['system:serviceaccounts'],
      extra: { k: ['v'] },
    });
    expect(kube.posted(TOKENREVIEWS)).toEqual([
      expect.objectContaining({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'tok-123' } }),
    ]);
  });

  it('returns no user for a token that is not authenticated', async () => {
    kube.onPost(TOKENREVIEWS, (body) => ({ code: 201, body: { ...(body as object), status: { authenticated: false, error: 'invalid token' } } }));
    expect(await tokenReviewer(kube.kubeconfig)('nope')).toBeUndefined();
  });

  it('throws when the review itself fails', async () => {
    kube.onPost(TOKENREVIEWS, () => ({
      code: 500,
      body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: 'etcd down' },
    }));
    await expect(tokenReviewer(kube.kubeconfig)('tok')).rejects.toThrow();
  });
});

describe('accessReviewer', () => {
  it('sends the user and the resource attributes of the request', async () => {
    sarAnswer({ allowed: true, reason: 'RBAC: allowed by RoleBinding "edit/ns"' });
    const attrs = requestAttributes('PUT', '/apis/extensions.example.com/v1alpha1/namespaces/ns/websites/kubia/scale');
    expect(await accessReviewer(kube.kubeconfig)(JANE, attrs)).toEqual({ allowed: true, reason: 'RBAC: allowed by RoleBinding "edit/ns"' });
    const [sent] = kube.posted(SARS).slice(-1) as { spec: unknown }[];
    expect(sent).toMatchObject({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview' });
    expect(sent?.spec).toEqual({
      user: 'jane',
      uid: 'u-7',
      groups: ['dev', 'system:authenticated'],
      extra: { scopes: ['a', 'b'] },
      resourceAttributes: {
        namespace: 'ns',
        verb: 'update',
        group: 'extensions.example.com',
        version: 'v1alpha1',
        resource: 'websites',
        subresource: 'scale',
        name: 'kubia',
      },
    });
  });

  it('sends non-resource attributes for other paths', async () => {
    sarAnswer({ allowed: true });
    await accessReviewer(kube.kubeconfig)({ name: 'prom', groups: [] }, requestAttributes('GET', '/metrics'));
    const [sent] = kube.posted(SARS).slice(-1) as { spec: unknown }[];
    expect(sent?.spec).toEqual({ user: 'prom', groups: [], nonResourceAttributes: { path: '/metrics', verb: 'get' } });
  });

  it('denies when the review does not allow, passing the reason on', async () => {
    sarAnswer({ allowed: false, reason: 'no RBAC policy matched' });
    expect(await accessReviewer(kube.kubeconfig)(JANE, requestAttributes('POST', '/apis/extensions.example.com/v1alpha1/namespaces/ns/websites'))).toEqual({
      allowed: false,
      reason: 'no RBAC policy matched',
    });
    sarAnswer({ allowed: false, denied: true, reason: 'explicitly denied' });
    expect((await accessReviewer(kube.kubeconfig)(JANE, requestAttributes('GET', '/metrics'))).allowed).toBe(false);
  });

  it('allows despite an evaluation error when the review allows (kube checks the decision first)', async () => {
    sarAnswer({ allowed: true, evaluationError: 'one binding refers to a missing role' });
    expect((await accessReviewer(kube.kubeconfig)(JANE, requestAttributes('GET', '/metrics'))).allowed).toBe(true);
  });

  it('throws when the review itself fails', async () => {
    kube.onPost(SARS, () => ({
      code: 500,
      body: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 500, reason: 'InternalError', message: 'boom' },
    }));
    await expect(accessReviewer(kube.kubeconfig)(JANE, requestAttributes('GET', '/metrics'))).rejects.toThrow();
  });

  // webhook.go Authorize ignores status.evaluationError: not allowed and not denied is NoOpinion with status.reason,
  // which WithAuthorization answers with 403 Forbidden (and the webhook caches it). reviews.ts throws instead, which
  // the server turns into a 500 and the authorizer does not cache. Expected to fail until fixed; then drop `.fails`.
  it('treats an evaluation error without allow as a deny with the reason', async () => {
    sarAnswer({ allowed: false, reason: 'RBAC: role "x" not found', evaluationError: 'role.rbac.authorization.k8s.io "x" not found' });
    expect(await accessReviewer(kube.kubeconfig)(JANE, requestAttributes('GET', '/metrics'))).toEqual({ allowed: false, reason: 'RBAC: role "x" not found' });
  });
});
