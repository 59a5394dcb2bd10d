/**
 * @module auth/authorizer.test
 * The delegating authorizer's cache and shortcuts (kube's webhook authorizer as DelegatingAuthorizerConfig sets it up:
 * allow and deny cached 10 s, errors not cached, AlwaysAllowGroups system:masters) and the Forbidden wording of
 * responsewriters.forbiddenMessage + apierrors.NewForbidden, checked against kube's own errors_test.go TestForbidden.
 */
import { describe, expect, it } from 'vitest';
import { forbidden } from '../apis/meta/errors.js';
import { allowAuthenticated, AUTHZ_CACHE_TTL_MS, delegatingAuthorizer, forbiddenMessage, type Decision, type ReviewAccess } from './authorizer.js';
import { requestAttributes, type RequestAttributes } from './request-info.js';
import type { UserInfo } from './user.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ALICE: UserInfo = { name: 'alice', groups: ['dev', 'system:authenticated'] };
const GET = requestAttributes('GET', '/apis/extensions.example.com/v1alpha1/namespaces/default/websites/kubia');
const LIST = requestAttributes('GET', '/apis/extensions.example.com/v1alpha1/namespaces/default/websites');

function counting(answer: (u: UserInfo, a: RequestAttributes) => Promise<Decision>): ReviewAccess & { calls: [UserInfo, RequestAttributes][] } {
  const calls: [UserInfo, RequestAttributes][] = [];
  const f: ReviewAccess = async (u, a) => {
    calls.push([u, a]);
    return answer(u, a);
  };
  return Object.assign(f, { calls });
}
const allow = async (): Promise<Decision> => ({ allowed: true, reason: 'RBAC: allowed by RoleBinding' });
const deny = async (): Promise<Decision> => ({ allowed: false, reason: 'no RBAC policy matched' });

describe('allowAuthenticated', () => {
  it('allows every request (standalone mode)', async () => {
    expect((await allowAuthenticated.authorize(ALICE, GET)).allowed).toBe(true);
  });
});

describe('delegatingAuthorizer', () => {
  it('defaults to a 10 s TTL', () => {
    expect(AUTHZ_CACHE_TTL_MS).toBe(10_000);
  });

  it('passes the user and attributes to the review and returns its decision', async () => {
    const review = counting(deny);
    const d = await delegatingAuthorizer(review).authorize(ALICE, GET);
    expect(d).toEqual({ allowed: false, reason: 'no RBAC policy matched' });
    expect(review.calls).toEqual([[ALICE, GET]]);
  });

  it('asks once within the TTL and again after it, for an allow', async () => {
    const review = counting(allow);
    const authz = delegatingAuthorizer(review, 400);
    expect((await authz.authorize(ALICE, GET)).allowed).toBe(true);
    expect((await authz.authorize(ALICE, GET)).allowed).toBe(true);
    expect(review.calls).toHaveLength(1);
    await sleep(500);
    expect((await authz.authorize(ALICE, GET)).allowed).toBe(true);
    expect(review.calls).toHaveLength(2);
  });

  it('caches a deny the same way', async () => {
    const review = counting(deny);
    const authz = delegatingAuthorizer(review, 400);
    expect((await authz.authorize(ALICE, GET)).allowed).toBe(false);
    expect((await authz.authorize(ALICE, GET)).allowed).toBe(false);
    expect(review.calls).toHaveLength(1);
    await sleep(500);
    await authz.authorize(ALICE, GET);
    expect(review.calls).toHaveLength(2);
  });

  it('does not cache an error', async () => {
    let fail = true;
    const review = counting(async () => {
      if (fail) throw new Error('SubjectAccessReview failed');
      return { allowed: true, reason: '' };
    });
    const authz = delegatingAuthorizer(review, 10_000);
    await expect(authz.authorize(ALICE, GET)).rejects.toThrow('SubjectAccessReview failed');
    fail = false;
    expect((await authz.authorize(ALICE, GET)).allowed).toBe(true);
    expect((await authz.authorize(ALICE, GET)).allowed).toBe(true);
    expect(review.calls).toHaveLength(2);
  });

  it('shares one review between concurrent identical requests', async () => {
    let release!: (d: Decision) => void;
    const review = counting(() => new Promise<Decision>((r) => (release = r)));
    const authz = delegatingAuthorizer(review, 10_000);
    const pending = [authz.authorize(ALICE, GET), authz.authorize({ ...ALICE }, requestAttributes('GET', GET.path)), authz.authorize(ALICE, GET)];
    await sleep(10);
    expect(review.calls).toHaveLength(1);
    release({ allowed: true, reason: '' });
    expect((await Promise.all(pending)).map((d) => d.allowed)).toEqual([true, true, true]);
    expect(review.calls).toHaveLength(1);
  });

  it('asks separately for other attributes, users, groups, uids and extras', async () => {
    const review = counting(allow);
    const authz = delegatingAuthorizer(review, 10_000);
    await authz.authorize(ALICE, GET);
    await authz.authorize(ALICE, LIST);
    await authz.authorize({ ...ALICE, name: 'bob' }, GET);
    await authz.authorize({ ...ALICE, groups: ['dev'] }, GET);
    await authz.authorize({ ...ALICE, uid: 'x' }, GET);
    await authz.authorize({ ...ALICE, extra: { scopes: ['a'] } }, GET);
    expect(review.calls).toHaveLength(6);
    // The order of groups does not make a different subject.
    await authz.authorize({ ...ALICE, groups: ['system:authenticated', 'dev'] }, GET);
    expect(review.calls).toHaveLength(6);
  });

  it('never asks for system:masters', async () => {
    const review = counting(deny);
    const authz = delegatingAuthorizer(review, 10_000);
    const admin: UserInfo = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
    expect((await authz.authorize(admin, GET)).allowed).toBe(true);
    expect((await authz.authorize(admin, requestAttributes('DELETE', LIST.path))).allowed).toBe(true);
    expect((await authz.authorize(admin, requestAttributes('GET', '/metrics'))).allowed).toBe(true);
    expect(review.calls).toHaveLength(0);
    // A user merely named like the group gets no shortcut.
    await authz.authorize({ name: 'system:masters', groups: [] }, GET);
    expect(review.calls).toHaveLength(1);
  });
});

describe('forbiddenMessage', () => {
  const NAME: UserInfo = { name: 'NAME', groups: [] };
  const res = (a: Partial<Extract<RequestAttributes, { isResourceRequest: true }>>): RequestAttributes => ({
    isResourceRequest: true,
    verb: 'get',
    apiGroup: '',
    apiVersion: 'v1',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    path: '/',
    ...a,
  });
  // The body the server builds: forbidden(group/resource, name, message) for resources, forbidden(undefined) otherwise.
  const statusMessage = (a: RequestAttributes) =>
    (a.isResourceRequest
      ? forbidden({ group: a.apiGroup, resource: a.resource }, a.name, forbiddenMessage(NAME, a))
      : forbidden(undefined, '', forbiddenMessage(NAME, a))
    ).status;

  it('words the cases of kube errors_test.go TestForbidden identically', () => {
    expect(statusMessage({ isResourceRequest: false, verb: 'GET', path: '/whatever' })).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'forbidden: User "NAME" cannot GET path "/whatever"',
      details: {},
    });
    expect(statusMessage(res({ resource: 'pod' }))).toMatchObject({
      message: 'pod is forbidden: User "NAME" cannot get resource "pod" in API group "" at the cluster scope',
      details: { kind: 'pod' },
    });
    expect(statusMessage(res({ resource: 'pod', name: 'mypod' }))).toMatchObject({
      message: 'pod "mypod" is forbidden: User "NAME" cannot get resource "pod" in API group "" at the cluster scope',
      details: { name: 'mypod', kind: 'pod' },
    });
    expect(statusMessage(res({ namespace: 'test', apiGroup: 'v2', resource: 'pod', subresource: 'quota' }))).toMatchObject({
      message: 'pod.v2 is forbidden: User "NAME" cannot get resource "pod/quota" in API group "v2" in the namespace "test"',
      details: { group: 'v2', kind: 'pod' },
    });
  });

  it('words our requests as kube-apiserver does', () => {
    const u: UserInfo = { name: 'jane', groups: ['system:authenticated'] };
    const G = '/apis/extensions.example.com/v1alpha1';
    const say = (method: string, url: string) => forbiddenMessage(u, requestAttributes(method, url));
    expect(say('POST', `${G}/namespaces/ns/websites`)).toBe(
      'User "jane" cannot create resource "websites" in API group "extensions.example.com" in the namespace "ns"',
    );
    expect(say('GET', `${G}/websites`)).toBe('User "jane" cannot list resource "websites" in API group "extensions.example.com" at the cluster scope');
    expect(say('GET', `${G}/namespaces/ns/websites?watch=true`)).toBe(
      'User "jane" cannot watch resource "websites" in API group "extensions.example.com" in the namespace "ns"',
    );
    expect(say('PUT', `${G}/namespaces/ns/websites/kubia/scale`)).toBe(
      'User "jane" cannot update resource "websites/scale" in API group "extensions.example.com" in the namespace "ns"',
    );
    expect(say('DELETE', `${G}/namespaces/ns/websites`)).toBe(
      'User "jane" cannot deletecollection resource "websites" in API group "extensions.example.com" in the namespace "ns"',
    );
    expect(say('GET', '/metrics')).toBe('User "jane" cannot get path "/metrics"');
    expect(say('GET', G)).toBe(`User "jane" cannot get path "${G}"`);
  });

  // Kube's Forbidden() passes the message through `sanitizer` (& < > as HTML entities; errors_test.go expects
  // `"/&lt;script&gt;"`), and forbiddenMessage quotes with Go's %q. Expected to fail until authorizer.ts does the
  // same (see the report); then drop `.fails`.
  it('escapes &, < and > as HTML entities', () => {
    expect(forbiddenMessage(NAME, { isResourceRequest: false, verb: 'get', path: '/<script>' })).toBe('User "NAME" cannot get path "/&lt;script&gt;"');
  });
  it('quotes like Go %q (a quote in a user name is escaped)', () => {
    expect(forbiddenMessage({ name: 'a"b', groups: [] }, { isResourceRequest: false, verb: 'get', path: '/x' })).toBe('User "a\\"b" cannot get path "/x"');
  });
});
