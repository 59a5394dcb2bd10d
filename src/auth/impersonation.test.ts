/**
 * @module auth/impersonation.test
 * Impersonation as kube-apiserver 1.37 applies it (k8s.io/apiserver pkg/endpoints/filters/impersonation):
 * - kube's TestImpersonationFilter table (impersonation_test.go, which kube runs against both the legacy and the
 *   constrained filter), with its impersonateAuthorizer ported;
 * - cases of constrained_impersonation_test.go, asserting the authorization checks in kube's order and kube's messages;
 * - the 400 wording (Go's %#v of user.DefaultInfo, checked against Go's fmt), header decoding;
 * - the standalone policy (system:masters only) and the delegating authorizer (SubjectAccessReviews, cached);
 * - the server hook through app.inject: the impersonated user is the one authorized, errors are Status bodies.
 */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { StatusError } from '../apis/meta/errors.js';
import type { Authentication } from './authentication.js';
import { allowAuthenticated, delegatingAuthorizer, type Authorizer, type Decision } from './authorizer.js';
import { Impersonation, readImpersonation, type Headers } from './impersonation.js';
import { requestAttributes, type RequestAttributes } from './request-info.js';
import type { UserInfo } from './user.js';
import { createServer } from '../server/server.js';
import { MemoryStorage } from '../storage/memory-storage.js';
import { testKinds as kinds, tickets } from '../../test/kinds/index.js';

// The request info kube's tests use: GET /api/v1/namespaces/bar/pods/foo (and friends).
const getPod = requestAttributes('GET', '/api/v1/namespaces/bar/pods/foo');
const createPod: RequestAttributes = { ...getPod, verb: 'create' };
const getDeployment = requestAttributes('GET', '/apis/apps/v1/namespaces/bar/deployments/foo');
const getPodStatus = requestAttributes('GET', '/api/v1/namespaces/bar/pods/foo/status');
const healthz = requestAttributes('GET', '/healthz');
// TestImpersonationFilter's request info: get pods, no namespace or name.
const getPods: RequestAttributes = {
  isResourceRequest: true,
  verb: 'get',
  apiGroup: '',
  apiVersion: 'v1',
  namespace: '',
  resource: 'pods',
  subresource: '',
  name: '',
  path: '/api/v1/pods',
};

/** Wanted is the headers a test sends, in the shape client-go's transport writes them. */
interface Wanted {
  user?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  uid?: string;
}
function headersOf(w: Wanted): { rawHeaders: string[] } {
  const raw: string[] = [];
  if (w.user) raw.push('Impersonate-User', w.user);
  for (const g of w.groups ?? []) raw.push('Impersonate-Group', g);
  for (const [k, vs] of Object.entries(w.extra ?? {})) for (const v of vs) raw.push(`Impersonate-Extra-${k}`, v);
  if (w.uid) raw.push('Impersonate-Uid', w.uid);
  return { rawHeaders: raw };
}

/** Outcome is what a client sees: the user the request runs as, or the error's code and message. */
async function outcome(imp: Impersonation, requestor: UserInfo, w: Wanted, attrs: RequestAttributes = getPods) {
  try {
    const got = await imp.impersonate(requestor, attrs, headersOf(w));
    return { code: 200, user: got?.user ?? requestor, constraint: got?.constraint };
  } catch (e) {
    if (!(e instanceof StatusError)) throw e;
    return { code: e.code, message: e.status.message, status: e.status };
  }
}

// kube's impersonateAuthorizer (impersonation_test.go), rule for rule.
const kubeLegacyAuthorizer: Authorizer = {
  async authorize(user, a): Promise<Decision> {
    const g0 = user.groups[0];
    const g1 = user.groups[1];
    const res = a.isResourceRequest ? a : undefined;
    const is = (verb: string, resource: string) => a.verb === verb && res?.resource === resource;
    if (user.name === 'system:admin') return { allowed: true, reason: '' };
    if (user.name === 'tester') throw new Error('works on my machine');
    if (user.name === 'deny-me') return { allowed: false, reason: 'denied' };
    if (g0 === 'wheel' && is('impersonate', 'users')) return { allowed: true, reason: '' };
    if (g0 === 'sa-impersonater' && is('impersonate', 'serviceaccounts')) return { allowed: true, reason: '' };
    if (g0 === 'regular-impersonater' && is('impersonate', 'users')) return { allowed: true, reason: '' };
    if (g1 === 'group-impersonater' && is('impersonate', 'groups')) return { allowed: true, reason: '' };
    if (g1 === 'extra-setter-scopes' && is('impersonate', 'userextras') && res?.subresource === 'scopes') return { allowed: true, reason: '' };
    if (g1 === 'escaped-scopes' || g1 === 'almost-escaped-scopes') return { allowed: true, reason: '' };
    if (
      g1 === 'extra-setter-particular-scopes' &&
      is('impersonate', 'userextras') &&
      res?.subresource === 'scopes' &&
      res.name === 'scope-a' &&
      res.apiGroup === 'authentication.k8s.io'
    ) {
      return { allowed: true, reason: '' };
    }
    if (g1 === 'extra-setter-project' && is('impersonate', 'userextras') && res?.subresource === 'project' && res.apiGroup === 'authentication.k8s.io')
      return { allowed: true, reason: '' };
    if (g0 === 'everything-impersonater' && a.verb === 'impersonate' && res) {
      if (res.resource === 'users' && res.apiGroup === '') return { allowed: true, reason: '' };
      if (res.resource === 'uids' && res.name === 'some-uid' && res.apiGroup === 'authentication.k8s.io') return { allowed: true, reason: '' };
      if (res.resource === 'groups' && res.apiGroup === '') return { allowed: true, reason: '' };
      if (res.resource === 'userextras' && res.subresource === 'scopes' && res.apiGroup === 'authentication.k8s.io') return { allowed: true, reason: '' };
    }
    return { allowed: false, reason: 'deny by default' };
  },
};

const u = (name: string, groups: string[] = [], more: Partial<UserInfo> = {}): UserInfo => ({ name, groups, ...more });

describe('kube TestImpersonationFilter (impersonation_test.go), through the constrained filter', () => {
  const cases: { name: string; user: UserInfo; wanted: Wanted; code: number; expected?: UserInfo }[] = [
    { name: 'not-impersonating', user: u('tester'), wanted: {}, code: 200, expected: u('tester') },
    { name: 'impersonating-error', user: u('tester'), wanted: { user: 'anyone' }, code: 403 },
    { name: 'impersonating-group-without-user', user: u('tester'), wanted: { groups: ['some-group'] }, code: 400 },
    { name: 'impersonating-extra-without-user', user: u('tester'), wanted: { extra: { scopes: ['scope-a'] } }, code: 400 },
    { name: 'impersonating-uid-without-user', user: u('tester'), wanted: { uid: 'some-uid' }, code: 400 },
    { name: 'disallowed-group', user: u('dev', ['wheel']), wanted: { user: 'system:admin', groups: ['some-group'] }, code: 403 },
    {
      name: 'allowed-group',
      user: u('dev', ['wheel', 'group-impersonater']),
      wanted: { user: 'system:admin', groups: ['some-group'] },
      code: 200,
      expected: u('system:admin', ['some-group', 'system:authenticated']),
    },
    {
      name: 'disallowed-userextra-1',
      user: u('dev', ['wheel']),
      wanted: { user: 'system:admin', groups: ['some-group'], extra: { scopes: ['scope-a'] } },
      code: 403,
    },
    {
      name: 'disallowed-userextra-2',
      user: u('dev', ['wheel', 'extra-setter-project']),
      wanted: { user: 'system:admin', groups: ['some-group'], extra: { scopes: ['scope-a'] } },
      code: 403,
    },
    {
      name: 'disallowed-userextra-3',
      user: u('dev', ['wheel', 'extra-setter-particular-scopes']),
      wanted: { user: 'system:admin', groups: ['some-group'], extra: { scopes: ['scope-a', 'scope-b'] } },
      code: 403,
    },
    {
      name: 'allowed-userextras',
      user: u('dev', ['wheel', 'extra-setter-scopes']),
      wanted: { user: 'system:admin', extra: { scopes: ['scope-a', 'scope-b'] } },
      code: 200,
      expected: u('system:admin', ['system:authenticated'], { extra: { scopes: ['scope-a', 'scope-b'] } }),
    },
    {
      name: 'percent-escaped-userextras',
      user: u('dev', ['wheel', 'escaped-scopes']),
      wanted: { user: 'system:admin', extra: { 'example.com%2fescaped%e1%9b%84scopes': ['scope-a', 'scope-b'] } },
      code: 200,
      expected: u('system:admin', ['system:authenticated'], { extra: { 'example.com/escapedᛄscopes': ['scope-a', 'scope-b'] } }),
    },
    {
      name: 'almost-percent-escaped-userextras',
      user: u('dev', ['wheel', 'almost-escaped-scopes']),
      wanted: { user: 'system:admin', extra: { 'almost%zzpercent%xxencoded': ['scope-a', 'scope-b'] } },
      code: 200,
      expected: u('system:admin', ['system:authenticated'], { extra: { 'almost%zzpercent%xxencoded': ['scope-a', 'scope-b'] } }),
    },
    {
      name: 'allowed-users-impersonation',
      user: u('dev', ['regular-impersonater']),
      wanted: { user: 'tester' },
      code: 200,
      expected: u('tester', ['system:authenticated']),
    },
    { name: 'disallowed-impersonating', user: u('dev', ['sa-impersonater']), wanted: { user: 'tester' }, code: 403 },
    {
      name: 'allowed-sa-impersonating',
      user: u('dev', ['sa-impersonater']),
      wanted: { user: 'system:serviceaccount:foo:default' },
      code: 200,
      expected: u('system:serviceaccount:foo:default', ['system:serviceaccounts', 'system:serviceaccounts:foo', 'system:authenticated']),
    },
    {
      name: 'anonymous-username-prevents-adding-authenticated-group',
      user: u('system:admin'),
      wanted: { user: 'system:anonymous' },
      code: 200,
      expected: u('system:anonymous', ['system:unauthenticated']),
    },
    {
      name: 'unauthenticated-group-prevents-adding-authenticated-group',
      user: u('system:admin'),
      wanted: { user: 'unknown', groups: ['system:unauthenticated'] },
      code: 200,
      expected: u('unknown', ['system:unauthenticated']),
    },
    {
      name: 'unauthenticated-group-prevents-double-adding-authenticated-group',
      user: u('system:admin'),
      wanted: { user: 'unknown', groups: ['system:authenticated'] },
      code: 200,
      expected: u('unknown', ['system:authenticated']),
    },
    {
      name: 'specified-authenticated-group-prevents-double-adding-authenticated-group',
      user: u('dev', ['wheel', 'group-impersonater']),
      wanted: { user: 'system:admin', groups: ['some-group', 'system:authenticated'] },
      code: 200,
      expected: u('system:admin', ['some-group', 'system:authenticated']),
    },
    {
      name: 'anonymous-user-prevents-double-adding-unauthenticated-group',
      user: u('system:admin'),
      wanted: { user: 'system:anonymous', groups: ['system:unauthenticated'] },
      code: 200,
      expected: u('system:anonymous', ['system:unauthenticated']),
    },
    {
      name: 'allowed-user-impersonation-with-uid',
      user: u('dev', ['everything-impersonater']),
      wanted: { user: 'tester', uid: 'some-uid' },
      code: 200,
      expected: u('tester', ['system:authenticated'], { uid: 'some-uid' }),
    },
    {
      name: 'disallowed-user-impersonation-with-uid',
      user: u('dev', ['everything-impersonater']),
      wanted: { user: 'tester', uid: 'disallowed-uid' },
      code: 403,
    },
    {
      name: 'allowed-impersonation-with-all-headers',
      user: u('dev', ['everything-impersonater']),
      wanted: { user: 'tester', uid: 'some-uid', groups: ['system:authenticated'], extra: { scopes: ['scope-a', 'scope-b'] } },
      code: 200,
      expected: u('tester', ['system:authenticated'], { uid: 'some-uid', extra: { scopes: ['scope-a', 'scope-b'] } }),
    },
  ];
  // One filter for the whole table, as kube's test shares one handler (and its mode cache) across cases.
  const imp = new Impersonation(kubeLegacyAuthorizer);
  it.each(cases)('$name: $code', async (c) => {
    const got = await outcome(imp, c.user, c.wanted);
    expect(got.code).toBe(c.code);
    if (c.code === 200) expect(got.user).toEqual(c.expected);
  });
});

// The checks a fake authorizer saw, one line each: "<user> <verb> <group>/<resource>[/<sub>] [<ns>/]<name>" or a path.
function recording(allow: (user: UserInfo, a: RequestAttributes) => boolean, reason = 'deny by default') {
  const checks: string[] = [];
  const authorizer: Authorizer = {
    async authorize(user, a) {
      const what = a.isResourceRequest
        ? `${a.apiGroup}/${a.resource}${a.subresource ? `/${a.subresource}` : ''} ${a.namespace ? `${a.namespace}/` : ''}${a.name}`
        : a.path;
      const ok = allow(user, a);
      checks.push(`${ok ? 'allow' : 'deny'} ${a.verb} ${what}`);
      return { allowed: ok, reason: ok ? '' : reason };
    },
  };
  return { authorizer, checks, take: () => checks.splice(0) };
}
const verbIs = (a: RequestAttributes, ...verbs: string[]) => verbs.includes(a.verb);
const res = (a: RequestAttributes) => (a.isResourceRequest ? a : undefined);

describe('kube constrained_impersonation_test.go cases: checks in kube order, kube messages', () => {
  it('impersonating-error: allowed impersonate-on, denied the user in user-info and legacy; the first error answers', async () => {
    const r = recording((_u, a) => a.verb.startsWith('impersonate-on:'));
    const got = await outcome(new Impersonation(r.authorizer), u('tester'), { user: 'anyone' }, getPod);
    expect(r.take()).toEqual([
      'allow impersonate-on:user-info:get /pods bar/foo',
      'deny impersonate:user-info authentication.k8s.io/users anyone',
      'deny impersonate /users anyone',
    ]);
    expect(got).toMatchObject({
      code: 403,
      message:
        'users.authentication.k8s.io "anyone" is forbidden: User "tester" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope: deny by default',
      status: { reason: 'Forbidden', details: { name: 'anyone', group: 'authentication.k8s.io', kind: 'users' } },
    });
  });

  it('impersonating-user-get-allowed-create-disallowed: the mode that worked is tried first next time', async () => {
    const r = recording((_u, a) => verbIs(a, 'impersonate-on:user-info:get', 'impersonate:user-info'));
    const imp = new Impersonation(r.authorizer);
    expect(await outcome(imp, u('user-impersonater'), { user: 'anyone' }, getPod)).toMatchObject({
      code: 200,
      user: u('anyone', ['system:authenticated']),
      constraint: 'impersonate:user-info',
    });
    expect(r.take()).toEqual(['allow impersonate-on:user-info:get /pods bar/foo', 'allow impersonate:user-info authentication.k8s.io/users anyone']);
    const created = await outcome(imp, u('user-impersonater'), { user: 'anyone' }, createPod);
    expect(r.take()).toEqual(['deny impersonate-on:user-info:create /pods bar/foo', 'deny impersonate /users anyone']);
    expect(created).toMatchObject({
      code: 403,
      message:
        'pods "foo" is forbidden: User "user-impersonater" cannot impersonate-on:user-info:create resource "pods" in API group "" in the namespace "bar": deny by default',
    });
  });

  it('impersonating-sa-allowed: the serviceaccount mode, the namespace in the check, the groups filled in', async () => {
    const r = recording((_u, a) => verbIs(a, 'impersonate-on:serviceaccount:get', 'impersonate:serviceaccount'));
    const got = await outcome(new Impersonation(r.authorizer), u('sa-impersonater'), { user: 'system:serviceaccount:default:default' }, getPod);
    expect(r.take()).toEqual([
      'allow impersonate-on:serviceaccount:get /pods bar/foo',
      'allow impersonate:serviceaccount authentication.k8s.io/serviceaccounts default/default',
    ]);
    expect(got).toMatchObject({
      code: 200,
      user: u('system:serviceaccount:default:default', ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']),
    });
  });

  it('impersonating-node-not-allowed and -allowed: the arbitrary-node mode names the node, groups are system:nodes', async () => {
    const denied = recording((_u, a) => a.verb.startsWith('impersonate-on:'));
    expect(await outcome(new Impersonation(denied.authorizer), u('sa-impersonater'), { user: 'system:node:node1' }, getPod)).toMatchObject({
      code: 403,
      message:
        'nodes.authentication.k8s.io "node1" is forbidden: User "sa-impersonater" cannot impersonate:arbitrary-node resource "nodes" in API group "authentication.k8s.io" at the cluster scope: deny by default',
    });
    expect(denied.take()).toEqual([
      'allow impersonate-on:arbitrary-node:get /pods bar/foo',
      'deny impersonate:arbitrary-node authentication.k8s.io/nodes node1',
      'deny impersonate /users system:node:node1',
    ]);
    const allowed = recording((_u, a) => verbIs(a, 'impersonate-on:arbitrary-node:get', 'impersonate:arbitrary-node'));
    expect(await outcome(new Impersonation(allowed.authorizer), u('node-impersonater'), { user: 'system:node:node1' }, getPod)).toMatchObject({
      code: 200,
      user: u('system:node:node1', ['system:nodes', 'system:authenticated']),
      constraint: 'impersonate:arbitrary-node',
    });
  });

  it('impersonating-node-not-allowed-action: denied impersonate-on answers', async () => {
    const r = recording(() => false);
    expect(await outcome(new Impersonation(r.authorizer), u('node-impersonater'), { user: 'system:node:node1' }, createPod)).toMatchObject({
      code: 403,
      message:
        'pods "foo" is forbidden: User "node-impersonater" cannot impersonate-on:arbitrary-node:create resource "pods" in API group "" in the namespace "bar": deny by default',
    });
    expect(r.take()).toEqual(['deny impersonate-on:arbitrary-node:create /pods bar/foo', 'deny impersonate /users system:node:node1']);
  });

  it('disallowed-userextra-3: user, group, then the first extra value is denied', async () => {
    const r = recording((_u, a) => a.verb.startsWith('impersonate-on:') || (a.verb === 'impersonate:user-info' && res(a)?.resource !== 'userextras'));
    const got = await outcome(
      new Impersonation(r.authorizer),
      u('user-impersonater', ['group-impersonater']),
      { user: 'system:admin', groups: ['extra-setter-scopes'], extra: { 'pandas.io%2fscopes': ['scope-a', 'scope-b'] } },
      getPod,
    );
    expect(r.take()).toEqual([
      'allow impersonate-on:user-info:get /pods bar/foo',
      'allow impersonate:user-info authentication.k8s.io/users system:admin',
      'allow impersonate:user-info authentication.k8s.io/groups extra-setter-scopes',
      'deny impersonate:user-info authentication.k8s.io/userextras/pandas.io/scopes scope-a',
      'deny impersonate /users system:admin',
    ]);
    expect(got).toMatchObject({
      code: 403,
      message:
        'userextras.authentication.k8s.io "scope-a" is forbidden: User "user-impersonater" cannot impersonate:user-info resource "userextras/pandas.io/scopes" in API group "authentication.k8s.io" at the cluster scope: deny by default',
    });
  });

  it('allowed-userextras: four or more extra values try one wildcard check first, then each value', async () => {
    const r = recording((_u, a) => a.verb.startsWith('impersonate-on:') || (a.verb === 'impersonate:user-info' && res(a)?.name !== '*'));
    const values = ['scope-a', 'scope-b', '5', '4', '3', '2', '1'];
    const got = await outcome(
      new Impersonation(r.authorizer),
      u('user-impersonater', ['extra-setter-scopes']),
      { user: 'system:admin', extra: { 'pandas.io%2fscopes': values } },
      getPod,
    );
    expect(r.take()).toEqual([
      'allow impersonate-on:user-info:get /pods bar/foo',
      'allow impersonate:user-info authentication.k8s.io/users system:admin',
      'deny impersonate:user-info authentication.k8s.io/userextras/* *',
      ...values.map((v) => `allow impersonate:user-info authentication.k8s.io/userextras/pandas.io/scopes ${v}`),
    ]);
    expect(got).toMatchObject({ code: 200, user: u('system:admin', ['system:authenticated'], { extra: { 'pandas.io/scopes': values } }) });
  });

  it('many-groups-wildcard-allowed and many-extras-wildcard-allowed: one allowed wildcard check replaces the rest', async () => {
    const r = recording(() => true);
    const imp = new Impersonation(r.authorizer);
    const groups = ['group1', 'group2', 'group3', 'group4'];
    expect(await outcome(imp, u('many-groups-impersonater'), { user: 'bob', groups }, getPod)).toMatchObject({
      code: 200,
      user: u('bob', [...groups, 'system:authenticated']),
    });
    expect(r.take()).toEqual([
      'allow impersonate-on:user-info:get /pods bar/foo',
      'allow impersonate:user-info authentication.k8s.io/users bob',
      'allow impersonate:user-info authentication.k8s.io/groups *',
    ]);
    const extra = {
      'scopes.example.com%2fkey1': ['val1'],
      'scopes.example.com%2fkey2': ['val2'],
      'scopes.example.com%2fkey3': ['val3'],
      'scopes.example.com%2fkey4': ['val4'],
    };
    expect(await outcome(imp, u('many-extras-impersonater'), { user: 'alice', extra }, getPod)).toMatchObject({ code: 200 });
    expect(r.take()).toEqual([
      'allow impersonate-on:user-info:get /pods bar/foo',
      'allow impersonate:user-info authentication.k8s.io/users alice',
      'allow impersonate:user-info authentication.k8s.io/userextras/* *',
    ]);
  });

  it('mixed-groups-extras-wildcard-denied-individuals-allowed: a denied wildcard falls back to each group', async () => {
    const r = recording((_u, a) => res(a)?.name !== '*');
    const got = await outcome(
      new Impersonation(r.authorizer),
      u('mixed-impersonater'),
      { user: 'frank', groups: ['dev', 'ops', 'security', 'audit'], extra: { 'tags.io%2fenv': ['prod', 'staging', 'dev'] } },
      getPod,
    );
    expect(got).toMatchObject({
      code: 200,
      user: u('frank', ['dev', 'ops', 'security', 'audit', 'system:authenticated'], { extra: { 'tags.io/env': ['prod', 'staging', 'dev'] } }),
    });
    expect(r.take()).toEqual([
      'allow impersonate-on:user-info:get /pods bar/foo',
      'allow impersonate:user-info authentication.k8s.io/users frank',
      'deny impersonate:user-info authentication.k8s.io/groups *',
      ...['dev', 'ops', 'security', 'audit'].map((g) => `allow impersonate:user-info authentication.k8s.io/groups ${g}`),
      ...['prod', 'staging', 'dev'].map((v) => `allow impersonate:user-info authentication.k8s.io/userextras/tags.io/env ${v}`),
    ]);
  });

  it('system:masters-group-not-allowed: constrained impersonation refuses it without asking; legacy asks', async () => {
    const r = recording((_u, a) => a.verb !== 'impersonate');
    const got = await outcome(new Impersonation(r.authorizer), u('user-impersonater'), { user: 'admin-user', groups: ['system:masters'] }, getPod);
    expect(r.take()).toEqual([
      'allow impersonate-on:user-info:get /pods bar/foo',
      'allow impersonate:user-info authentication.k8s.io/users admin-user',
      'deny impersonate /users admin-user',
    ]);
    expect(got).toMatchObject({
      code: 403,
      message:
        'groups.authentication.k8s.io "system:masters" is forbidden: User "user-impersonater" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope: impersonating the system:masters group is not allowed',
    });
  });

  it('user-info refuses an extra key that is not a domain-prefixed path; legacy still may allow it', async () => {
    const r = recording((_u, a) => a.verb !== 'impersonate');
    const got = await outcome(new Impersonation(r.authorizer), u('user-impersonater'), { user: 'alice', extra: { scopes: ['a'] } }, getPod);
    expect(got).toMatchObject({
      code: 403,
      message:
        'userextras.authentication.k8s.io is forbidden: User "user-impersonater" cannot impersonate:user-info resource "userextras" in API group "authentication.k8s.io" at the cluster scope: impersonating an invalid key in extra is not allowed: extra.key: Invalid value: "scopes": must be a domain-prefixed path (such as "acme.io/foo")',
    });
    const legacy = recording((_u, a) => a.verb === 'impersonate' || a.verb.startsWith('impersonate-on:'));
    expect(await outcome(new Impersonation(legacy.authorizer), u('legacy-impersonater'), { user: 'alice', extra: { scopes: ['a'] } }, getPod)).toMatchObject({
      code: 200,
      user: u('alice', ['system:authenticated'], { extra: { scopes: ['a'] } }),
      constraint: '',
    });
  });

  it('impersonating-user-with-uid, a subresource request and a non-resource request', async () => {
    const r = recording(() => true);
    const imp = new Impersonation(r.authorizer);
    expect(await outcome(imp, u('user-impersonater', [], { uid: 'requestor-uid-123' }), { user: 'anyone', uid: 'wanted-uid-456' }, getPod)).toMatchObject({
      code: 200,
      user: u('anyone', ['system:authenticated'], { uid: 'wanted-uid-456' }),
    });
    expect(r.take()).toEqual([
      'allow impersonate-on:user-info:get /pods bar/foo',
      'allow impersonate:user-info authentication.k8s.io/users anyone',
      'allow impersonate:user-info authentication.k8s.io/uids wanted-uid-456',
    ]);
    await outcome(imp, u('user-impersonater'), { user: 'anyone' }, getPodStatus);
    expect(r.take()[0]).toBe('allow impersonate-on:user-info:get /pods/status bar/foo');
    await outcome(imp, u('user-impersonater'), { user: 'anyone' }, healthz);
    expect(r.take()[0]).toBe('allow impersonate-on:user-info:get /healthz');
  });

  it('legacy-fallback: the second request tries legacy first, one check', async () => {
    const r = recording((_u, a) => a.verb === 'impersonate' || a.verb.startsWith('impersonate-on:'));
    const imp = new Impersonation(r.authorizer);
    expect(await outcome(imp, u('legacy-impersonater'), { user: 'anyone' }, getPod)).toMatchObject({
      code: 200,
      user: u('anyone', ['system:authenticated']),
      constraint: '',
    });
    expect(r.take()).toEqual([
      'allow impersonate-on:user-info:get /pods bar/foo',
      'deny impersonate:user-info authentication.k8s.io/users anyone',
      'allow impersonate /users anyone',
    ]);
    expect(await outcome(imp, u('legacy-impersonater'), { user: 'anyone' }, getDeployment)).toMatchObject({ code: 200 });
    expect(r.take()).toEqual(['allow impersonate /users anyone']);
  });

  it('legacy with groups for a service account: the groups asked for replace the service account groups', async () => {
    const r = recording((_u, a) => a.verb === 'impersonate');
    const got = await outcome(new Impersonation(r.authorizer), u('dev'), { user: 'system:serviceaccount:foo:default', groups: ['g'] }, getPod);
    // serviceaccount and user-info modes do not apply (groups set; a service account name): only legacy runs.
    expect(r.take()).toEqual(['allow impersonate /serviceaccounts foo/default', 'allow impersonate /groups g']);
    expect(got).toMatchObject({ code: 200, user: u('system:serviceaccount:foo:default', ['g', 'system:authenticated']) });
  });

  describe('allowed-associate-node: a service account impersonates the node its token is bound to', () => {
    const sa = (node: string) =>
      u('system:serviceaccount:default:default', ['associate-node-impersonater'], { extra: { 'authentication.kubernetes.io/node-name': [node] } });
    it('the checks see the extra keys only and the node as *', async () => {
      const seen: UserInfo[] = [];
      const r = recording((user, a) => {
        seen.push(user);
        return a.verb.includes('associated-node');
      });
      const got = await outcome(new Impersonation(r.authorizer), sa('node1'), { user: 'system:node:node1' }, getPod);
      expect(got).toMatchObject({
        code: 200,
        user: u('system:node:node1', ['system:nodes', 'system:authenticated']),
        constraint: 'impersonate:associated-node',
      });
      expect(r.take()).toEqual(['allow impersonate-on:associated-node:get /pods bar/foo', 'allow impersonate:associated-node authentication.k8s.io/nodes *']);
      expect(seen[0]?.extra).toEqual({ 'authentication.kubernetes.io/associated-node-keys': ['authentication.kubernetes.io/node-name'] });
    });
    it('another node: the mode does not apply, arbitrary-node answers', async () => {
      const r = recording((_u, a) => a.verb.startsWith('impersonate-on:'));
      const got = await outcome(new Impersonation(r.authorizer), sa('node2'), { user: 'system:node:node1' }, getPod);
      expect(got.message).toBe(
        'nodes.authentication.k8s.io "node1" is forbidden: User "system:serviceaccount:default:default" cannot impersonate:arbitrary-node resource "nodes" in API group "authentication.k8s.io" at the cluster scope: deny by default',
      );
    });
    it('disallowed-associate-node-without-sa: a user with the node-name extra is not a service account', async () => {
      const r = recording((_u, a) => a.verb.startsWith('impersonate-on:'));
      const got = await outcome(
        new Impersonation(r.authorizer),
        u('user-impersonater', [], { extra: { 'authentication.kubernetes.io/node-name': ['node1'] } }),
        { user: 'system:node:node1' },
        getPod,
      );
      expect(r.take()[0]).toBe('allow impersonate-on:arbitrary-node:get /pods bar/foo');
      expect(got.code).toBe(403);
    });
  });

  it('an authorizer failure is a 403 carrying its message (checkAuthorization), not a 500', async () => {
    const failing: Authorizer = { authorize: async () => Promise.reject(new Error('SubjectAccessReview failed: connection refused')) };
    expect(await outcome(new Impersonation(failing), u('dev'), { user: 'bob' }, getPod)).toMatchObject({
      code: 403,
      message:
        'pods "foo" is forbidden: User "dev" cannot impersonate-on:user-info:get resource "pods" in API group "" in the namespace "bar": SubjectAccessReview failed: connection refused',
    });
  });
});

describe('reading the headers (processImpersonationHeaders)', () => {
  // What Node hands over for a value sent as UTF-8 bytes: one latin1 character per byte.
  const wire = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
  const read = (raw: string[]) => {
    const h: Headers = {};
    for (let i = 0; i < raw.length; i += 2) (h[(raw[i] as string).toLowerCase()] ??= []).push(raw[i + 1] as string);
    return readImpersonation(h);
  };
  const badRequestOf = (raw: string[]) => {
    try {
      read(raw);
    } catch (e) {
      return (e as StatusError).status;
    }
    throw new Error('no error');
  };

  it('no Impersonate-User (or an empty one) is no impersonation', () => {
    expect(read([])).toBeUndefined();
    expect(read(['Impersonate-User', ''])).toBeUndefined();
  });

  // The messages are Go's fmt %#v of *user.DefaultInfo (checked by printing the same values with Go).
  it.each([
    [['Impersonate-Group', 'some-group'], '&user.DefaultInfo{Name:"", UID:"", Groups:[]string{"some-group"}, Extra:map[string][]string(nil)}'],
    [
      ['Impersonate-Uid', 'some-uid', 'Impersonate-Extra-scopes', 'scope-a', 'Impersonate-Extra-scopes', 'b', 'Impersonate-Extra-a%2Fb', ''],
      '&user.DefaultInfo{Name:"", UID:"some-uid", Groups:[]string(nil), Extra:map[string][]string{"a/b":[]string{""}, "scopes":[]string{"scope-a", "b"}}}',
    ],
    [
      ['Impersonate-User', '', 'Impersonate-Group', wire('jörg\t"x\\')],
      '&user.DefaultInfo{Name:"", UID:"", Groups:[]string{"jörg\\t\\"x\\\\"}, Extra:map[string][]string(nil)}',
    ],
  ])('without a user: 400 %#', (raw, info) => {
    expect(badRequestOf(raw)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      code: 400,
      reason: 'BadRequest',
      message: `requested ${info} without impersonating a user name`,
    });
  });

  it('each Impersonate-Group line is one group (a comma is part of the name); the first User and Uid lines count', () => {
    expect(
      read([
        'Impersonate-User',
        'a',
        'Impersonate-User',
        'b',
        'Impersonate-Uid',
        'u1',
        'Impersonate-Uid',
        'u2',
        'Impersonate-Group',
        'x, y',
        'Impersonate-Group',
        'z',
      ]),
    ).toEqual({ name: 'a', uid: 'u1', groups: ['x, y', 'z'], extra: undefined });
  });

  it('header values are UTF-8 bytes, as Go reads them (Node hands them over as latin1)', () => {
    expect(read(['Impersonate-User', wire('jörg')])?.name).toBe('jörg');
  });
});

describe('standalone: only system:masters may impersonate', () => {
  const imp = new Impersonation(allowAuthenticated);
  const list = requestAttributes('GET', '/apis/extensions.example.com/v1alpha1/namespaces/default/websites');

  it('system:masters impersonates anyone, with groups, uid and extras', async () => {
    const got = await outcome(
      imp,
      u('admin', ['system:masters', 'system:authenticated']),
      { user: 'bob', groups: ['dev'], uid: '42', extra: { 'example.com%2fteam': ['a'] } },
      list,
    );
    expect(got).toMatchObject({ code: 200, user: u('bob', ['dev', 'system:authenticated'], { uid: '42', extra: { 'example.com/team': ['a'] } }) });
  });

  it('anyone else gets the 403 kube-apiserver gives a user allowed everything on websites but no impersonation', async () => {
    const alice = u('alice', ['system:authenticated']);
    expect((await outcome(imp, alice, { user: 'bob' }, list)).status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      message:
        'users.authentication.k8s.io "bob" is forbidden: User "alice" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope',
      details: { name: 'bob', group: 'authentication.k8s.io', kind: 'users' },
    });
    expect((await outcome(imp, alice, { user: 'system:serviceaccount:ns:sa' }, list)).message).toBe(
      'serviceaccounts.authentication.k8s.io "sa" is forbidden: User "alice" cannot impersonate:serviceaccount resource "serviceaccounts" in API group "authentication.k8s.io" in the namespace "ns"',
    );
    // With groups, only legacy applies to a service account: its wording names the core group.
    expect((await outcome(imp, alice, { user: 'system:serviceaccount:ns:sa', groups: ['g'] }, list)).message).toBe(
      'serviceaccounts "sa" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns"',
    );
  });

  it('allowAuthenticated denies the impersonate verbs to non-masters and nothing else', async () => {
    const alice = u('alice', ['system:authenticated']);
    const users = (verb: string): RequestAttributes => ({
      isResourceRequest: true,
      verb,
      apiGroup: '',
      apiVersion: 'v1',
      resource: 'users',
      subresource: '',
      namespace: '',
      name: 'bob',
      path: '',
    });
    expect((await allowAuthenticated.authorize(alice, users('impersonate'))).allowed).toBe(false);
    expect((await allowAuthenticated.authorize(alice, users('impersonate:user-info'))).allowed).toBe(false);
    expect((await allowAuthenticated.authorize(alice, { ...list, verb: 'impersonate-on:user-info:list' })).allowed).toBe(true);
    expect((await allowAuthenticated.authorize(alice, list)).allowed).toBe(true);
    expect((await allowAuthenticated.authorize(u('admin', ['system:masters']), users('impersonate'))).allowed).toBe(true);
  });
});

describe('delegated: each check is a SubjectAccessReview through the delegating authorizer', () => {
  it('sends kube attributes, reuses cached answers, and skips reviews for system:masters', async () => {
    const reviews: [string, RequestAttributes][] = [];
    const authz = delegatingAuthorizer(async (user, a) => {
      reviews.push([user.name, a]);
      return { allowed: a.verb === 'impersonate' || a.verb.startsWith('impersonate-on:'), reason: '' };
    });
    const imp = new Impersonation(authz);
    const list = requestAttributes('GET', '/apis/extensions.example.com/v1alpha1/namespaces/ns/websites');
    const got = await outcome(imp, u('imp', ['system:authenticated']), { user: 'viewer' }, list);
    expect(got).toMatchObject({ code: 200, user: u('viewer', ['system:authenticated']) });
    expect(reviews.map(([n, a]) => [n, a.verb, a.isResourceRequest && `${a.apiGroup}/${a.apiVersion}/${a.resource}/${a.name}`])).toEqual([
      ['imp', 'impersonate-on:user-info:list', 'extensions.example.com/v1alpha1/websites/'],
      ['imp', 'impersonate:user-info', 'authentication.k8s.io/v1/users/viewer'],
      ['imp', 'impersonate', '/v1/users/viewer'],
    ]);
    await outcome(imp, u('imp', ['system:authenticated']), { user: 'viewer' }, list);
    expect(reviews).toHaveLength(3); // legacy first (remembered), and its review is cached
    await outcome(imp, u('root', ['system:masters']), { user: 'viewer', groups: ['x'] }, list);
    expect(reviews).toHaveLength(3);
  });
});

describe('the server hook (app.inject)', () => {
  const authentication: Authentication = {
    authenticate: async (req) => {
      const who = req.headers['x-test-user'] as string | undefined;
      return who ? { name: who, groups: who === 'root' ? ['system:masters', 'system:authenticated'] : ['system:authenticated'] } : undefined;
    },
    trustedCAs: () => [],
    onTrustChange: () => {},
  };
  const seen: UserInfo[] = [];
  // Authorizes like a cluster where `imp` may impersonate (legacy) and only viewer may read (a test-only kind's objects).
  const authorizer: Authorizer = {
    async authorize(user, a) {
      if (a.verb === 'impersonate' || a.verb.startsWith('impersonate-on:')) return { allowed: user.name === 'imp', reason: '' };
      if (a.verb.startsWith('impersonate:')) return { allowed: false, reason: '' };
      seen.push(user);
      return { allowed: user.name === 'viewer' && a.verb === 'list', reason: '' };
    },
  };
  const { app } = createServer({ storage: new MemoryStorage(), kinds, logger: pino({ level: 'silent' }), authentication, authorizer });
  const url = tickets('ns');

  it('authorizes the request as the impersonated user', async () => {
    const r = await app.inject({ method: 'GET', url, headers: { 'x-test-user': 'imp', 'impersonate-user': 'viewer' } });
    expect(r.statusCode).toBe(200);
    expect(seen.at(-1)).toEqual(u('viewer', ['system:authenticated']));
    const denied = await app.inject({ method: 'POST', url, headers: { 'x-test-user': 'imp', 'impersonate-user': 'viewer' }, payload: {} });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().message).toBe(
      'flighttickets.testing.example.com is forbidden: User "viewer" cannot create resource "flighttickets" in API group "testing.example.com" in the namespace "ns"',
    );
  });

  it('answers 400 and 403 as Status bodies, and 401 before looking at the headers', async () => {
    const bad = await app.inject({ method: 'GET', url, headers: { 'x-test-user': 'imp', 'impersonate-group': 'g' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest', code: 400 });
    const no = await app.inject({ method: 'GET', url, headers: { 'x-test-user': 'nobody', 'impersonate-user': 'viewer' } });
    expect(no.statusCode).toBe(403);
    expect(no.json().message).toBe(
      'flighttickets.testing.example.com is forbidden: User "nobody" cannot impersonate-on:user-info:list resource "flighttickets" in API group "testing.example.com" in the namespace "ns"',
    );
    expect((await app.inject({ method: 'GET', url, headers: { 'impersonate-group': 'g' } })).statusCode).toBe(401);
  });
});
