/**
 * @module observability/audit-policy.test
 * Policy matching with the cases of kube's k8s.io/apiserver pkg/audit/policy/checker_test.go (TestChecker,
 * TestCheckerPolicyOmitStages, TestOmitManagedFields; the group `*` of kubernetes#135262), and policy files decoded and
 * validated as reader.go / validation.go refuse them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RequestAttributes } from '../auth/request-info.js';
import type { UserInfo } from '../auth/user.js';
import { loadPolicyFile, parsePolicy, PolicyEvaluator, type Level, type Policy, type PolicyRule, type Stage } from './audit-policy.js';

const tim: UserInfo = { name: 'tim@k8s.io', groups: ['humans', 'developers'] };

type Req = { user: UserInfo | undefined; attrs: RequestAttributes };
const resource = (user: UserInfo | undefined, a: Partial<Extract<RequestAttributes, { isResourceRequest: true }>>): Req => ({
  user,
  attrs: { isResourceRequest: true, verb: 'get', apiGroup: '', apiVersion: 'v1', namespace: '', resource: '', subresource: '', name: '', path: '', ...a },
});
const requests: Record<string, Req> = {
  namespaced: resource(tim, { namespace: 'default', resource: 'pods', name: 'busybox', path: '/api/v1/namespaces/default/pods/busybox' }),
  cluster: resource(tim, {
    apiGroup: 'rbac.authorization.k8s.io',
    apiVersion: 'v1beta1',
    resource: 'clusterroles',
    name: 'edit',
    path: '/apis/rbac.authorization.k8s.io/v1beta1/clusterroles/edit',
  }),
  nonResource: { user: tim, attrs: { isResourceRequest: false, verb: 'get', path: '/logs/kubelet.log' } },
  subresource: resource(tim, { namespace: 'default', resource: 'pods', subresource: 'log', name: 'busybox', path: '/api/v1/namespaces/default/pods/busybox' }),
  Unauthorized: resource(undefined, { namespace: 'default', resource: 'pods', name: 'busybox', path: '/api/v1/namespaces/default/pods/busybox' }),
  // kubernetes#135262's case: an update of a cluster-scoped object of a named group.
  ClusterRoleUpdate: resource(tim, {
    verb: 'update',
    apiGroup: 'rbac.authorization.k8s.io',
    apiVersion: 'v1',
    resource: 'clusterroles',
    name: 'edit',
    path: '/apis/rbac.authorization.k8s.io/v1/clusterroles/edit',
  }),
};

const rule = (level: Level, r: Partial<PolicyRule> = {}): PolicyRule => ({
  level,
  users: [],
  userGroups: [],
  verbs: [],
  resources: [],
  namespaces: [],
  nonResourceURLs: [],
  omitStages: [],
  omitManagedFields: undefined,
  ...r,
});
const gr = (resources: string[], group = '', resourceNames: string[] = []) => ({ group, resources, resourceNames });
const rules: Record<string, PolicyRule> = {
  default: rule('Metadata'),
  create: rule('Request', { verbs: ['create'] }),
  tims: rule('Metadata', { users: ['tim@k8s.io'] }),
  humans: rule('Metadata', { userGroups: ['humans'] }),
  serviceAccounts: rule('Request', { userGroups: ['system:serviceaccounts'] }),
  getPods: rule('RequestResponse', { verbs: ['get'], resources: [gr(['pods'])] }),
  getPodLogs: rule('Request', { verbs: ['get'], resources: [gr(['pods/log'])] }),
  getPodWildcardMatching: rule('Request', { verbs: ['get'], resources: [gr(['*'])] }),
  getPodResourceWildcardMatching: rule('Request', { verbs: ['get'], resources: [gr(['*/log'])] }),
  getPodSubResourceWildcardMatching: rule('Request', { verbs: ['get'], resources: [gr(['pods/*'])] }),
  getClusterRoles: rule('RequestResponse', { verbs: ['get'], resources: [gr(['clusterroles'], 'rbac.authorization.k8s.io')], namespaces: [''] }),
  getLogs: rule('RequestResponse', { verbs: ['get'], nonResourceURLs: ['/logs*'] }),
  getMetrics: rule('Request', { verbs: ['get'], nonResourceURLs: ['/metrics'] }),
  clusterRoleEdit: rule('Request', { resources: [gr(['clusterroles'], 'rbac.authorization.k8s.io', ['edit'])] }),
  'omit RequestReceived': rule('Request', { omitStages: ['RequestReceived'] }),
  'only audit panic': rule('Request', { omitStages: ['RequestReceived', 'ResponseStarted', 'ResponseComplete'] }),
  anyGroupUpdates: rule('None', { verbs: ['update'], resources: [gr(['*'], '*')] }),
};

function check(req: string, policyStages: Stage[], ...ruleNames: string[]) {
  const policy: Policy = { rules: ruleNames.map((n) => rules[n] as PolicyRule), omitStages: policyStages, omitManagedFields: false };
  const r = requests[req] as Req;
  const c = new PolicyEvaluator(policy).evaluate(r.user, r.attrs);
  return { level: c.level, stages: [...c.omitStages].sort() };
}

// testAuditLevel: [request, expected level, rules...]
const LEVEL_CASES: [string, Level, ...string[]][] = [
  ['namespaced', 'Metadata', 'default'],
  ['namespaced', 'None', 'create'],
  ['namespaced', 'Metadata', 'tims'],
  ['namespaced', 'Metadata', 'humans'],
  ['namespaced', 'None', 'serviceAccounts'],
  ['namespaced', 'RequestResponse', 'getPods'],
  ['namespaced', 'None', 'getClusterRoles'],
  ['namespaced', 'None', 'getLogs'],
  ['namespaced', 'None', 'getMetrics'],
  ['namespaced', 'Metadata', 'getMetrics', 'serviceAccounts', 'default'],
  ['namespaced', 'RequestResponse', 'getMetrics', 'getPods', 'default'],
  ['namespaced', 'RequestResponse', 'getPodLogs', 'getPods'],
  ['cluster', 'Metadata', 'default'],
  ['cluster', 'None', 'create'],
  ['cluster', 'Metadata', 'tims'],
  ['cluster', 'Metadata', 'humans'],
  ['cluster', 'None', 'serviceAccounts'],
  ['cluster', 'None', 'getPods'],
  ['cluster', 'RequestResponse', 'getClusterRoles'],
  ['cluster', 'Request', 'clusterRoleEdit', 'getClusterRoles'],
  ['cluster', 'None', 'getLogs'],
  ['cluster', 'None', 'getMetrics'],
  ['cluster', 'Metadata', 'getMetrics', 'serviceAccounts', 'default'],
  ['cluster', 'RequestResponse', 'getMetrics', 'getClusterRoles', 'default'],
  ['cluster', 'None', 'getPodLogs', 'getPods'],
  ['nonResource', 'Metadata', 'default'],
  ['nonResource', 'None', 'create'],
  ['nonResource', 'Metadata', 'tims'],
  ['nonResource', 'Metadata', 'humans'],
  ['nonResource', 'None', 'serviceAccounts'],
  ['nonResource', 'None', 'getPods'],
  ['nonResource', 'None', 'getClusterRoles'],
  ['nonResource', 'RequestResponse', 'getLogs'],
  ['nonResource', 'None', 'getMetrics'],
  ['nonResource', 'Metadata', 'getMetrics', 'serviceAccounts', 'default'],
  ['nonResource', 'RequestResponse', 'getLogs', 'getClusterRoles', 'default'],
  ['nonResource', 'None', 'getPodLogs', 'getPods'],
  ['subresource', 'Request', 'getPodLogs', 'getPods'],
  ['subresource', 'Request', 'getPodWildcardMatching'],
  ['subresource', 'Request', 'getPodResourceWildcardMatching'],
  ['subresource', 'Request', 'getPodSubResourceWildcardMatching'],
  ['Unauthorized', 'None', 'tims'],
  ['Unauthorized', 'Metadata', 'tims', 'default'],
  ['Unauthorized', 'None', 'humans'],
  ['Unauthorized', 'Metadata', 'humans', 'default'],
  // group "*" (kubernetes#135262): the first rule matches an update in any group, get falls through.
  ['ClusterRoleUpdate', 'None', 'anyGroupUpdates', 'default'],
  ['cluster', 'Metadata', 'anyGroupUpdates', 'default'],
];

describe('PolicyEvaluator (checker_test.go)', () => {
  for (const stages of [[], ['RequestReceived', 'ResponseStarted']] as Stage[][]) {
    describe(`policy omitStages [${stages.join(',')}]`, () => {
      it.each(LEVEL_CASES)('%s is audited at %s by rules %s…', (req, level, ...names) => {
        expect(check(req, stages, ...names)).toEqual({ level, stages: [...stages].sort() });
      });
    });
  }

  it.each([
    // TestChecker: a rule's stages alone.
    ['namespaced', [], ['omit RequestReceived', 'getPods', 'default'], 'Request', ['RequestReceived']],
    ['namespaced', [], ['only audit panic', 'getPods', 'default'], 'Request', ['RequestReceived', 'ResponseComplete', 'ResponseStarted']],
    ['cluster', [], ['omit RequestReceived', 'getPods', 'default'], 'Request', ['RequestReceived']],
    ['nonResource', [], ['only audit panic', 'getPods', 'default'], 'Request', ['RequestReceived', 'ResponseComplete', 'ResponseStarted']],
    // TestCheckerPolicyOmitStages: the union of the policy's and the rule's.
    ['namespaced', ['RequestReceived', 'ResponseStarted'], ['omit RequestReceived', 'getPods', 'default'], 'Request', ['RequestReceived', 'ResponseStarted']],
    [
      'cluster',
      ['RequestReceived', 'ResponseStarted'],
      ['only audit panic', 'getPods', 'default'],
      'Request',
      ['RequestReceived', 'ResponseComplete', 'ResponseStarted'],
    ],
    ['nonResource', ['RequestReceived', 'ResponseStarted'], ['default', 'omit RequestReceived', 'getPods'], 'Metadata', ['RequestReceived', 'ResponseStarted']],
  ] as [string, Stage[], string[], Level, Stage[]][])('%s with policy stages %j and rules %j: %s omitting %j', (req, policyStages, names, level, stages) => {
    expect(check(req, policyStages, ...names)).toEqual({ level, stages });
  });

  it.each([
    ['global false, rule unset', false, undefined, false],
    ['global true, rule unset', true, undefined, true],
    ['global true, rule false', true, false, false],
    ['global false, rule true', false, true, true],
  ] as [string, boolean, boolean | undefined, boolean][])('omitManagedFields: %s (TestOmitManagedFields)', (_name, global, ruleValue, want) => {
    const policy: Policy = { rules: [rule('RequestResponse', { verbs: ['get'], omitManagedFields: ruleValue })], omitStages: [], omitManagedFields: global };
    expect(new PolicyEvaluator(policy).evaluate(tim, requests['cluster']!.attrs).omitManagedFields).toBe(want);
  });

  it('a request no rule matches is None, with the policy-wide stages and managed-fields default', () => {
    const c = new PolicyEvaluator({ rules: [rules['create'] as PolicyRule], omitStages: ['Panic'], omitManagedFields: true }).evaluate(
      tim,
      requests['namespaced']!.attrs,
    );
    expect(c).toEqual({ level: 'None', omitStages: new Set(['Panic']), omitManagedFields: true });
  });

  it('namespaces restrict resource requests only, "" meaning cluster scope', () => {
    const p = (namespaces: string[]) => new PolicyEvaluator({ rules: [rule('Metadata', { namespaces })], omitStages: [], omitManagedFields: false });
    expect(p(['default']).evaluate(tim, requests['namespaced']!.attrs).level).toBe('Metadata');
    expect(p(['other']).evaluate(tim, requests['namespaced']!.attrs).level).toBe('None');
    expect(p(['']).evaluate(tim, requests['cluster']!.attrs).level).toBe('Metadata');
    expect(p(['default']).evaluate(tim, requests['nonResource']!.attrs).level).toBe('None');
  });
});

describe('parsePolicy (reader.go, validation.go)', () => {
  const header = 'apiVersion: audit.k8s.io/v1\nkind: Policy\n';

  it('decodes every field of the v1 Policy', () => {
    const p = parsePolicy(`${header}omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: RequestResponse
  users: [alice]
  userGroups: [devs]
  verbs: [create, patch]
  resources:
  - group: extensions.example.com
    resources: [websites, websites/status]
    resourceNames: [kubia]
  namespaces: [default]
  omitStages: [ResponseStarted]
  omitManagedFields: false
- level: Metadata
  nonResourceURLs: [/healthz*, /version]
`);
    expect(p).toEqual({
      omitStages: ['RequestReceived'],
      omitManagedFields: true,
      rules: [
        rule('RequestResponse', {
          users: ['alice'],
          userGroups: ['devs'],
          verbs: ['create', 'patch'],
          namespaces: ['default'],
          omitStages: ['ResponseStarted'],
          omitManagedFields: false,
          resources: [gr(['websites', 'websites/status'], 'extensions.example.com', ['kubia'])],
        }),
        rule('Metadata', { nonResourceURLs: ['/healthz*', '/version'] }),
      ],
    });
  });

  it.each([
    ['no rules', `${header}rules: []\n`, 'loaded illegal policy with 0 rules'],
    ['a missing level', `${header}rules:\n- verbs: [get]\n`, 'rules[0].level: Required value'],
    [
      'an unknown level',
      `${header}rules:\n- level: Everything\n`,
      'rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"',
    ],
    [
      'a relative non-resource URL',
      `${header}rules:\n- level: None\n  nonResourceURLs: [healthz]\n`,
      `rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character`,
    ],
    [
      'a wildcard inside a URL',
      `${header}rules:\n- level: None\n  nonResourceURLs: ["/a*/b"]\n`,
      `rules[0].nonResourceURLs[0]: Invalid value: "/a*/b": non-resource URL wildcards '*' must be the final character of the rule`,
    ],
    [
      'resources and URLs in one rule',
      `${header}rules:\n- level: None\n  namespaces: [a]\n  nonResourceURLs: [/x]\n`,
      'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs',
    ],
    [
      'a group with a version',
      `${header}rules:\n- level: None\n  resources: [{group: rbac.authorization.k8s.io/v1}]\n`,
      'rules[0].resources.group: Invalid value: "rbac.authorization.k8s.io/v1": a lowercase RFC 1123 subdomain must consist of',
    ],
    [
      'resourceNames without resources',
      `${header}rules:\n- level: None\n  resources: [{resourceNames: [a]}]\n`,
      'rules[0].resources.resourceNames: Invalid value: []string{"a"}: using resourceNames requires at least one resource',
    ],
    [
      'an unknown rule stage',
      `${header}rules:\n- level: None\n  omitStages: [Done]\n`,
      'rules[0].omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic',
    ],
    [
      'an unknown policy stage',
      `${header}omitStages: [Done]\nrules:\n- level: None\n`,
      'omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic',
    ],
    [
      'two errors',
      `${header}rules:\n- level: X\n- {}\n`,
      '[rules[0].level: Unsupported value: "X": supported values: "None", "Metadata", "Request", "RequestResponse", rules[1].level: Required value]',
    ],
    [
      'a wrongly typed field',
      `${header}rules:\n- level: None\n  users: alice\n`,
      'failed decoding: json: cannot unmarshal string into Go struct field PolicyRule.rules.users of type []string',
    ],
    [
      'another version',
      'apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]\n',
      'failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1"',
    ],
    ['no kind', 'apiVersion: audit.k8s.io/v1\nrules: [{level: None}]\n', "failed decoding: Object 'Kind' is missing in"],
  ])('refuses %s', (_name, text, message) => {
    expect(() => parsePolicy(text)).toThrow(message);
  });

  it('unknown fields are a warning and the policy is decoded leniently, as kube falls back', () => {
    const warnings: string[] = [];
    const p = parsePolicy(`${header}rules:\n- level: Metadata\n  verb: [get]\n`, (w) => warnings.push(w));
    expect(p.rules[0]?.verbs).toEqual([]);
    expect(warnings).toEqual(['Audit policy contains errors, falling back to lenient decoding: strict decoding error: unknown field "rules[0].verb"']);
  });

  it('a group "*" is valid (kubernetes#135262)', () => {
    expect(parsePolicy(`${header}rules:\n- level: None\n  resources: [{group: "*", resources: ["*/status"]}]\n`).rules[0]?.resources[0]?.group).toBe('*');
  });

  describe('loadPolicyFile', () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-policy-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("names the file in kube-apiserver's startup error", () => {
      const f = join(dir, 'empty.yaml');
      writeFileSync(f, `${header}rules: []\n`);
      expect(() => loadPolicyFile(f)).toThrow(`loading audit policy file: loaded illegal policy with 0 rules: from file ${f}`);
      expect(() => loadPolicyFile(join(dir, 'missing.yaml'))).toThrow(
        `loading audit policy file: failed to read file path "${join(dir, 'missing.yaml')}": open ${join(dir, 'missing.yaml')}: no such file or directory`,
      );
    });
  });
});
