/**
 * @module observability/audit-policy
 * The audit policy: kube's audit.k8s.io/v1 Policy read from `--audit-policy-file` and evaluated per request, as
 * k8s.io/apiserver does it (pkg/audit/policy/reader.go LoadPolicyFromBytes, pkg/apis/audit/validation ValidatePolicy,
 * pkg/audit/policy/checker.go).
 *
 * Entry points: `loadPolicyFile(path)` (throws kube's startup error), `parsePolicy(text)`, and
 * `new PolicyEvaluator(policy).evaluate(user, attrs)`, which answers the first matching rule's level, omitted stages
 * (the rule's and the policy's, united) and omitManagedFields (the rule's when set, else the policy's); a request no
 * rule matches is not audited (level None).
 *
 * ## Caveats
 * - The file is decoded as kube decodes it: strictly first, and when only unknown or duplicate fields are wrong,
 *   leniently with a warning (`onWarning`). Wrongly typed fields are kube's `failed decoding: json: cannot unmarshal …`.
 * - Only audit.k8s.io/v1 is accepted (v1alpha1 and v1beta1 were removed from kube-apiserver in 1.24).
 * - A resources group `*` matches every API group (kubernetes/kubernetes#135262, in 1.35 and later).
 */
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { invalid, notSupported, required, type FieldError } from '../apis/meta/field-path.js';
import { nameIsDNSSubdomain } from '../apis/meta/validation.js';
import type { RequestAttributes } from '../auth/request-info.js';
import type { UserInfo } from '../auth/user.js';

/** Level is how much of a request is recorded (audit.k8s.io/v1 Level), from least to most. */
export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof LEVELS)[number];

/** Stage is a point of request handling at which an event may be written. */
export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

/** levelAtLeast tells whether `level` records at least as much as `min` (Level.GreaterOrEqual). */
export const levelAtLeast = (level: Level, min: Level) => LEVELS.indexOf(level) >= LEVELS.indexOf(min);

/** GroupResources selects resources of one API group. */
export interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

/** PolicyRule maps requests to a level; every non-empty field must match. */
export interface PolicyRule {
  level: Level;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: Stage[];
  /** undefined: the policy's omitManagedFields applies. */
  omitManagedFields: boolean | undefined;
}

/** Policy is a decoded audit.k8s.io/v1 Policy. */
export interface Policy {
  rules: PolicyRule[];
  omitStages: Stage[];
  omitManagedFields: boolean;
}

/** RequestAuditConfig is what the policy says about one request (audit.RequestAuditConfig). */
export interface RequestAuditConfig {
  level: Level;
  omitStages: ReadonlySet<Stage>;
  omitManagedFields: boolean;
}

/** PolicyEvaluator evaluates a policy (checker.go policyRuleEvaluator). */
export class PolicyEvaluator {
  readonly #rules: readonly { rule: PolicyRule; config: RequestAuditConfig }[];
  readonly #fallback: RequestAuditConfig;

  constructor(policy: Policy) {
    // NewPolicyRuleEvaluator: each rule omits its own stages and the policy's.
    this.#rules = policy.rules.map((rule) => ({
      rule,
      config: {
        level: rule.level,
        omitStages: new Set([...policy.omitStages, ...rule.omitStages]),
        omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
      },
    }));
    this.#fallback = { level: 'None', omitStages: new Set(policy.omitStages), omitManagedFields: policy.omitManagedFields };
  }

  /** evaluate returns the config of the first rule matching the (authenticated, not impersonated) user and request. */
  evaluate(user: UserInfo | undefined, attrs: RequestAttributes): RequestAuditConfig {
    for (const { rule, config } of this.#rules) if (ruleMatches(rule, user, attrs)) return config;
    return this.#fallback;
  }
}

function ruleMatches(r: PolicyRule, user: UserInfo | undefined, attrs: RequestAttributes): boolean {
  if (r.users.length > 0 && (!user || !r.users.includes(user.name))) return false;
  if (r.userGroups.length > 0 && !user?.groups.some((g) => r.userGroups.includes(g))) return false;
  if (r.verbs.length > 0 && !r.verbs.includes(attrs.verb)) return false;
  if (r.namespaces.length > 0 || r.resources.length > 0) return ruleMatchesResource(r, attrs);
  if (r.nonResourceURLs.length > 0) return !attrs.isResourceRequest && r.nonResourceURLs.some((spec) => pathMatches(attrs.path, spec));
  return true;
}

// pathMatches: `*`, the exact path, or a prefix ending in `*`.
function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function ruleMatchesResource(r: PolicyRule, attrs: RequestAttributes): boolean {
  if (!attrs.isResourceRequest) return false;
  // Cluster-scoped resources have the empty namespace.
  if (r.namespaces.length > 0 && !r.namespaces.includes(attrs.namespace)) return false;
  if (r.resources.length === 0) return true;
  const { resource, subresource, name } = attrs;
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const gr of r.resources) {
    if (gr.group !== attrs.apiGroup && gr.group !== '*') continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (subresource && res.startsWith('*/') && res.slice(2) === subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === resource) return true;
    }
  }
  return false;
}

/** PolicyError is a policy file kube-apiserver would refuse to start with; the message is kube's. */
export class PolicyError extends Error {}

/**
 * loadPolicyFile reads and decodes a policy file (LoadPolicyFromFile); errors read as kube-apiserver's
 * `loading audit policy file: …: from file PATH`.
 */
export function loadPolicyFile(path: string, onWarning: (msg: string) => void = () => undefined): Policy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new PolicyError(`loading audit policy file: failed to read file path ${JSON.stringify(path)}: ${goFileError(e as NodeJS.ErrnoException, path)}`);
  }
  try {
    return parsePolicy(text, onWarning);
  } catch (e) {
    if (e instanceof PolicyError) throw new PolicyError(`loading audit policy file: ${e.message}: from file ${path}`);
    throw e;
  }
}

// The text of Go's *PathError for the usual failures (os.ReadFile).
function goFileError(e: NodeJS.ErrnoException, path: string): string {
  const why: Record<string, string> = { ENOENT: 'no such file or directory', EACCES: 'permission denied', EISDIR: 'is a directory' };
  return `${e.code === 'EISDIR' ? 'read' : 'open'} ${path}: ${why[e.code ?? ''] ?? e.message}`;
}

const GROUP_VERSION = 'audit.k8s.io/v1';

/** parsePolicy decodes and validates a policy document (YAML or JSON), as LoadPolicyFromBytes. */
export function parsePolicy(text: string, onWarning: (msg: string) => void = () => undefined): Policy {
  let doc: unknown;
  try {
    doc = YAML.parse(text, { maxAliasCount: 100, uniqueKeys: false });
  } catch (e) {
    throw new PolicyError(`failed decoding: error converting YAML to JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  const d = new Decoder();
  const policy = d.policy(doc);
  if (d.strictErrors.length) onWarning(`Audit policy contains errors, falling back to lenient decoding: strict decoding error: ${d.strictErrors.join(', ')}`);
  const errs = validatePolicy(policy);
  if (errs.length) throw new PolicyError(aggregate(errs.map((e) => e.message)));
  if (policy.rules.length === 0) throw new PolicyError('loaded illegal policy with 0 rules');
  return policy;
}

// utilerrors.Aggregate's text: one message alone, several in brackets (duplicates removed).
function aggregate(msgs: string[]): string {
  const unique = [...new Set(msgs)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
}

/**
 * Decoder turns the parsed document into a Policy as encoding/json would into the Go types: a wrongly typed value is
 * a `cannot unmarshal` error, an unknown field a strict-decoding complaint (kube then decodes leniently).
 */
class Decoder {
  readonly strictErrors: string[] = [];

  policy(doc: unknown): Policy {
    if (!isObject(doc))
      throw new PolicyError(
        `failed decoding: couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonType(doc)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
      );
    const kind = doc['kind'];
    const apiVersion = doc['apiVersion'];
    if (kind === undefined || kind === '') throw new PolicyError(`failed decoding: Object 'Kind' is missing in '${JSON.stringify(doc)}'`);
    if (typeof kind !== 'string' || (typeof apiVersion !== 'string' && apiVersion !== undefined)) {
      throw new PolicyError(
        `failed decoding: couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonType(typeof kind !== 'string' ? kind : apiVersion)} into Go struct field .${typeof kind !== 'string' ? 'kind' : 'apiVersion'} of type string`,
      );
    }
    if (apiVersion !== GROUP_VERSION || kind !== 'Policy') {
      throw new PolicyError(`failed decoding: no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion ?? '')}`);
    }
    this.#unknown(doc, ['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields'], '');
    const rulesDoc = this.#array(doc['rules'], 'Policy', 'rules', '[]v1.PolicyRule');
    return {
      rules: rulesDoc.map((r, i) => this.#rule(r, `rules[${i}]`)),
      omitStages: this.#strings(doc['omitStages'], 'Policy', 'omitStages', 'v1.Stage') as Stage[],
      omitManagedFields: this.#bool(doc['omitManagedFields'], 'Policy', 'omitManagedFields') ?? false,
    };
  }

  #rule(doc: unknown, at: string): PolicyRule {
    if (doc === null) doc = {};
    if (!isObject(doc)) throw this.#typeError(doc, 'Policy', 'rules', 'v1.PolicyRule');
    this.#unknown(doc, ['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields'], `${at}.`);
    const level = doc['level'] ?? '';
    if (typeof level !== 'string') throw this.#typeError(level, 'PolicyRule', 'rules.level', 'v1.Level');
    const resources = this.#array(doc['resources'], 'PolicyRule', 'rules.resources', '[]v1.GroupResources').map((g, i) =>
      this.#groupResources(g, `${at}.resources[${i}]`),
    );
    return {
      level: level as Level,
      users: this.#strings(doc['users'], 'PolicyRule', 'rules.users'),
      userGroups: this.#strings(doc['userGroups'], 'PolicyRule', 'rules.userGroups'),
      verbs: this.#strings(doc['verbs'], 'PolicyRule', 'rules.verbs'),
      resources,
      namespaces: this.#strings(doc['namespaces'], 'PolicyRule', 'rules.namespaces'),
      nonResourceURLs: this.#strings(doc['nonResourceURLs'], 'PolicyRule', 'rules.nonResourceURLs'),
      omitStages: this.#strings(doc['omitStages'], 'PolicyRule', 'rules.omitStages', 'v1.Stage') as Stage[],
      omitManagedFields: this.#bool(doc['omitManagedFields'], 'PolicyRule', 'rules.omitManagedFields'),
    };
  }

  #groupResources(doc: unknown, at: string): GroupResources {
    if (doc === null) doc = {};
    if (!isObject(doc)) throw this.#typeError(doc, 'PolicyRule', 'rules.resources', 'v1.GroupResources');
    this.#unknown(doc, ['group', 'resources', 'resourceNames'], `${at}.`);
    const group = doc['group'] ?? '';
    if (typeof group !== 'string') throw this.#typeError(group, 'GroupResources', 'rules.resources.group', 'string');
    return {
      group,
      resources: this.#strings(doc['resources'], 'GroupResources', 'rules.resources.resources'),
      resourceNames: this.#strings(doc['resourceNames'], 'GroupResources', 'rules.resources.resourceNames'),
    };
  }

  #unknown(doc: Record<string, unknown>, known: string[], prefix: string): void {
    for (const k of Object.keys(doc)) if (!known.includes(k)) this.strictErrors.push(`unknown field ${JSON.stringify(prefix + k)}`);
  }

  #array(v: unknown, struct: string, field: string, type: string): unknown[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw this.#typeError(v, struct, field, type);
    return v;
  }

  #strings(v: unknown, struct: string, field: string, elem = 'string'): string[] {
    return this.#array(v, struct, field, `[]${elem}`).map((s) => {
      if (typeof s !== 'string') throw this.#typeError(s, struct, field, elem);
      return s;
    });
  }

  #bool(v: unknown, struct: string, field: string): boolean | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw this.#typeError(v, struct, field, 'bool');
    return v;
  }

  // encoding/json's UnmarshalTypeError text (Go 1.20+: the innermost struct, the full field path).
  #typeError(v: unknown, struct: string, field: string, type: string): PolicyError {
    return new PolicyError(`failed decoding: json: cannot unmarshal ${jsonType(v)} into Go struct field ${struct}.${field} of type ${type}`);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v === 'boolean' ? 'bool' : typeof v;
}

// Go's %#v of a []string, as field.Invalid prints slice values.
const goStringSlice = (v: string[]) => `[]string{${v.map((s) => JSON.stringify(s)).join(', ')}}`;

/** validatePolicy is ValidatePolicy (pkg/apis/audit/validation/validation.go). */
export function validatePolicy(p: Policy): FieldError[] {
  const errs: FieldError[] = [...validateOmitStages(p.omitStages, 'omitStages')];
  p.rules.forEach((rule, i) => {
    errs.push(...validateRule(rule, `rules[${i}]`));
  });
  return errs;
}

function validateRule(r: PolicyRule, at: string): FieldError[] {
  const errs: FieldError[] = [];
  if (r.level === ('' as Level)) errs.push(required(`${at}.level`));
  else if (!LEVELS.includes(r.level)) errs.push(notSupported(`${at}.level`, r.level, LEVELS));
  r.nonResourceURLs.forEach((url, i) => {
    if (url === '*') return;
    const p = `${at}.nonResourceURLs[${i}]`;
    if (!url.startsWith('/')) errs.push(invalid(p, url, "non-resource URL rules must begin with a '/' character"));
    if (url !== '' && url.slice(0, -1).includes('*')) errs.push(invalid(p, url, "non-resource URL wildcards '*' must be the final character of the rule"));
  });
  for (const gr of r.resources) {
    // The path has no index: kube's validateResources names `resources.group` for every entry.
    if (gr.group !== '' && gr.group !== '*') {
      const msgs = nameIsDNSSubdomain(gr.group, false);
      if (msgs.length) errs.push(invalid(`${at}.resources.group`, gr.group, msgs.join(',')));
    }
    if (gr.resourceNames.length > 0 && gr.resources.length === 0) {
      errs.push({
        type: 'FieldValueInvalid',
        field: `${at}.resources.resourceNames`,
        message: `${at}.resources.resourceNames: Invalid value: ${goStringSlice(gr.resourceNames)}: using resourceNames requires at least one resource`,
      });
    }
  }
  errs.push(...validateOmitStages(r.omitStages, `${at}.omitStages`));
  if (r.nonResourceURLs.length > 0 && (r.resources.length > 0 || r.namespaces.length > 0)) {
    errs.push({
      type: 'FieldValueInvalid',
      field: `${at}.nonResourceURLs`,
      message: `${at}.nonResourceURLs: Invalid value: ${goStringSlice(r.nonResourceURLs)}: rules cannot apply to both regular resources and non-resource URLs`,
    });
  }
  return errs;
}

function validateOmitStages(stages: string[], at: string): FieldError[] {
  return stages.flatMap((s, i) => ((STAGES as readonly string[]).includes(s) ? [] : [invalid(`${at}[${i}]`, s, `allowed stages are ${STAGES.join(',')}`)]));
}
