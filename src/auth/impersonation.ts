/**
 * @module auth/impersonation
 * Impersonation: `Impersonate-User`, `-Group` (repeatable), `-Uid` and `-Extra-<key>` headers, applied between
 * authentication and authorization exactly as kube-apiserver 1.37 does. There the ConstrainedImpersonation feature
 * gate is beta and on by default, so the filter is k8s.io/apiserver pkg/endpoints/filters/impersonation
 * WithConstrainedImpersonation (KEP-5284): it tries the modes associated-node, arbitrary-node, serviceaccount,
 * user-info and finally legacy (the `impersonate` verb kube has had since 1.3); the first that allows the request
 * wins, and when none does the first error met is the answer.
 *
 * Entry point: `new Impersonation(authorizer).impersonate(requestor, attrs, req.raw)` returns the user the request
 * runs as from then on (undefined when no Impersonate-User is set: the requestor stays).
 *
 * ## Guarantees
 * - Header combinations kube refuses are kube's 400 (`requested &user.DefaultInfo{…} without impersonating a user name`).
 * - Every check goes through the server's Authorizer: delegated, a SubjectAccessReview per attribute (cached, and
 *   system:masters allowed without one, as kube's delegating authorizer); standalone, see `allowAuthenticated`.
 * - A denial is kube's 403 (responsewriters.ForbiddenStatusError) for the attributes that were denied.
 *
 * ## Caveats
 * - kube also keeps two 10 s caches of successful impersonations per mode; our authorizer caches every review for
 *   10 s instead, which gives the same answers, only through more (cached) authorizer calls.
 * - kube checks extra keys in Go map order (random); we check them in header order.
 */
import { LRUCache } from 'lru-cache';
import { badRequest, forbidden, StatusError } from '../apis/meta/errors.js';
import { invalid, required, type FieldError } from '../apis/meta/field-path.js';
import { isDNS1123Subdomain, nameIsDNSLabel, nameIsDNSSubdomain } from '../apis/meta/validation.js';
import { forbiddenMessage, type Authorizer } from './authorizer.js';
import type { RequestAttributes } from './request-info.js';
import { ANONYMOUS_USER, AUTHENTICATED_GROUP, MASTERS_GROUP, UNAUTHENTICATED_GROUP, type UserInfo } from './user.js';

/** The header names (k8s.io/api authentication/v1 types.go), lower-case as Node gives them. */
export const IMPERSONATE_USER_HEADER = 'impersonate-user';
export const IMPERSONATE_GROUP_HEADER = 'impersonate-group';
export const IMPERSONATE_UID_HEADER = 'impersonate-uid';
export const IMPERSONATE_EXTRA_PREFIX = 'impersonate-extra-';

const SA_PREFIX = 'system:serviceaccount:';
const NODE_PREFIX = 'system:node:';
const NODES_GROUP = 'system:nodes';
const NODE_NAME_KEY = 'authentication.kubernetes.io/node-name';
const ASSOCIATED_NODE_KEYS = 'authentication.kubernetes.io/associated-node-keys';
// Constrained modes try one wildcard check before this many individual ones (manyAuthorizationChecksInLoop).
const MANY_CHECKS = 4;

/** Headers is every request header by lower-case name, one entry per line (IncomingMessage.headersDistinct). */
export type Headers = Record<string, string[] | undefined>;

/** HeaderSource is the request's headers: IncomingMessage (app.inject's request has only `rawHeaders`). */
export interface HeaderSource {
  headersDistinct?: Headers;
  rawHeaders: string[];
}

/** distinctHeaders gives every header line by lower-case name. */
export function distinctHeaders(src: HeaderSource): Headers {
  if (src.headersDistinct) return src.headersDistinct;
  const out: Headers = Object.create(null) as Headers;
  for (let i = 0; i + 1 < src.rawHeaders.length; i += 2) (out[(src.rawHeaders[i] as string).toLowerCase()] ??= []).push(src.rawHeaders[i + 1] as string);
  return out;
}

/** WantedUser is what the headers ask for, before any defaulting (processImpersonationHeaders). */
export interface WantedUser {
  name: string;
  uid: string;
  /** undefined when no Impersonate-Group line was sent (Go's nil slice). */
  groups: string[] | undefined;
  /** undefined when no Impersonate-Extra-* line carried a value (Go's nil map); keys in header order. */
  extra: Map<string, string[]> | undefined;
}

/**
 * readImpersonation reads the Impersonate-* headers: undefined when no user is asked for, a 400 when a group, uid or
 * extra is asked for without one. Only the first Impersonate-User and Impersonate-Uid lines count (Header.Get).
 */
export function readImpersonation(headers: Headers): WantedUser | undefined {
  const name = headerText(headers[IMPERSONATE_USER_HEADER]?.[0] ?? '');
  const uid = headerText(headers[IMPERSONATE_UID_HEADER]?.[0] ?? '');
  const groupLines = headers[IMPERSONATE_GROUP_HEADER];
  const groups = groupLines && groupLines.length > 0 ? groupLines.map(headerText) : undefined;
  let hasExtra = false;
  let extra: Map<string, string[]> | undefined;
  for (const [header, values] of Object.entries(headers)) {
    if (!header.startsWith(IMPERSONATE_EXTRA_PREFIX)) continue;
    hasExtra = true;
    if (!values || values.length === 0) continue;
    const key = unescapeExtraKey(header.slice(IMPERSONATE_EXTRA_PREFIX.length));
    extra ??= new Map();
    extra.set(key, [...(extra.get(key) ?? []), ...values.map(headerText)]);
  }
  const wanted: WantedUser = { name, uid, groups, extra };
  if (!name && (uid || groups || hasExtra)) throw badRequest(`requested ${goDefaultInfo(wanted)} without impersonating a user name`);
  return name ? wanted : undefined;
}

// Node reads header bytes as latin1; Go keeps them as bytes, which are UTF-8 from every client that matters. A value
// with a character above U+00FF did not come off the wire (app.inject) and is already text.
function headerText(v: string): string {
  return /^[\u0000-\u007f]*$/.test(v) || /[^\u0000-\u00ff]/.test(v) ? v : Buffer.from(v, 'latin1').toString('utf8');
}

// Extra keys travel %-escaped in the header name (unescapeExtraKey: url.PathUnescape, the raw key when malformed).
function unescapeExtraKey(encoded: string): string {
  if (/%(?![0-9a-fA-F]{2})/.test(encoded)) return encoded;
  const bytes: number[] = [];
  for (let i = 0; i < encoded.length; i++) {
    if (encoded[i] === '%') {
      bytes.push(parseInt(encoded.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(encoded[i] as string, 'latin1'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** goQuote is Go's strconv.Quote (%q / %#v of a string) for the characters a header can carry. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c === 0x07) out += '\\a';
    else if (c === 0x08) out += '\\b';
    else if (c === 0x0c) out += '\\f';
    else if (c === 0x0a) out += '\\n';
    else if (c === 0x0d) out += '\\r';
    else if (c === 0x09) out += '\\t';
    else if (c === 0x0b) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if (c >= 0x80 && c < 0xa0) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

// Go's %#v of the *user.DefaultInfo the 400 names (fields in declaration order, map keys sorted).
function goDefaultInfo(u: WantedUser): string {
  const slice = (v: string[]) => `[]string{${v.map(goQuote).join(', ')}}`;
  const groups = u.groups ? slice(u.groups) : '[]string(nil)';
  const extra = u.extra
    ? `map[string][]string{${[...u.extra.keys()]
        .sort()
        .map((k) => `${goQuote(k)}:${slice(u.extra?.get(k) ?? [])}`)
        .join(', ')}}`
    : 'map[string][]string(nil)';
  return `&user.DefaultInfo{Name:${goQuote(u.name)}, UID:${goQuote(u.uid)}, Groups:${groups}, Extra:${extra}}`;
}

/** splitServiceAccount is serviceaccount.SplitUsername: `system:serviceaccount:<ns>:<name>` with valid names. */
export function splitServiceAccount(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const parts = username.slice(SA_PREFIX.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts as [string, string];
  if (nameIsDNSLabel(namespace, false).length || nameIsDNSSubdomain(name, false).length) return undefined;
  return { namespace, name };
}

/** nodeName is the node a `system:node:<name>` username names, when that name is a valid node name. */
export function nodeName(username: string): string | undefined {
  if (!username.startsWith(NODE_PREFIX)) return undefined;
  const name = username.slice(NODE_PREFIX.length);
  return nameIsDNSSubdomain(name, false).length ? undefined : name;
}

const onlyUsername = (w: WantedUser) => !w.uid && !w.groups?.length && !w.extra?.size;

// The attributes of one impersonation check (impersonationAttributes): a resource request with no path.
function checkAttrs(verb: string, group: string, resource: string, name: string, namespace = '', subresource = ''): RequestAttributes {
  return { isResourceRequest: true, verb, apiGroup: group, apiVersion: 'v1', namespace, resource, subresource, name, path: '' };
}

// ForbiddenStatusError(attributes, reason) for a denied check.
function denied(user: UserInfo, a: RequestAttributes, reason: string): StatusError {
  const why = forbiddenMessage(user, a) + (reason ? `: ${reason}` : '');
  return a.isResourceRequest ? forbidden({ group: a.apiGroup, resource: a.resource }, a.name, why) : forbidden(undefined, '', why);
}

/** Check authorizes one set of attributes for the requestor: resolves when allowed, rejects with the 403 otherwise. */
type Check = (user: UserInfo, a: RequestAttributes) => Promise<void>;

// checkAuthorization: allowed wins; an authorizer failure is a 403 carrying its message, as kube words it.
function checker(authorizer: Authorizer): Check {
  return async (user, a) => {
    let allowed: boolean;
    let reason: string;
    try {
      ({ allowed, reason } = await authorizer.authorize(user, a));
    } catch (e) {
      if (e instanceof StatusError && e.code === 403) throw e;
      throw denied(user, a, (e as Error).message);
    }
    if (!allowed) throw denied(user, a, reason);
  };
}

/** Impersonated is the user a mode allows, with the verb that allowed it (empty for legacy), for logs. */
export interface Impersonated {
  user: UserInfo;
  constraint: string;
}

/**
 * Mode is one impersonation mode: undefined when it does not apply to this wanted user, the user when it allows,
 * a rejection (403) when it applies and denies.
 */
interface Mode {
  verb: string;
  check(requestor: UserInfo, wanted: WantedUser, attrs: RequestAttributes): Promise<Impersonated | undefined>;
}

/**
 * modeState holds the checks common to every mode (impersonationModeState): the username, then the uid, the groups,
 * the extras, each authorized with `verb`; constrained modes name users and groups in authentication.k8s.io, refuse
 * the empty and system:masters groups and malformed extras, and try one wildcard check before many single ones.
 */
function modeState(check: Check, verb: string, constrained: boolean) {
  const userGroup = constrained ? 'authentication.k8s.io' : '';
  const constraint = constrained ? verb : '';
  return async (requestor: UserInfo, wanted: WantedUser): Promise<Impersonated> => {
    let groups = wanted.groups ? [...wanted.groups] : [];
    // The username.
    let attrs = checkAttrs(verb, userGroup, 'users', wanted.name);
    const node = constrained ? nodeName(wanted.name) : undefined;
    if (node !== undefined) {
      attrs = checkAttrs(verb, userGroup, 'nodes', node);
      if (wanted.groups?.length) throw denied(requestor, attrs, `when impersonating a node, cannot impersonate groups ${goStrings(wanted.groups)}`);
      groups = [NODES_GROUP]; // a node's groups are fixed in constrained impersonation
    }
    const sa = splitServiceAccount(wanted.name);
    if (sa) {
      attrs = checkAttrs(verb, userGroup, 'serviceaccounts', sa.name, sa.namespace);
      if (constrained && wanted.groups?.length) {
        throw denied(requestor, attrs, `when impersonating a service account, cannot impersonate groups ${goStrings(wanted.groups)}`);
      }
      // A service account's groups are a fixed mapping (serviceaccount.MakeGroupNames) unless groups were asked for.
      if (!wanted.groups?.length) groups = ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`];
    }
    await check(requestor, attrs);
    // The uid.
    if (wanted.uid) await check(requestor, checkAttrs(verb, 'authentication.k8s.io', 'uids', wanted.uid));
    // The groups.
    if (wanted.groups?.length) {
      if (constrained && wanted.groups.includes('')) {
        throw denied(requestor, checkAttrs(verb, userGroup, 'groups', ''), 'impersonating the empty string group is not allowed');
      }
      if (constrained && wanted.groups.includes(MASTERS_GROUP)) {
        throw denied(requestor, checkAttrs(verb, userGroup, 'groups', MASTERS_GROUP), 'impersonating the system:masters group is not allowed');
      }
      if (!(constrained && wanted.groups.length >= MANY_CHECKS && (await allows(check, requestor, checkAttrs(verb, userGroup, 'groups', '*'))))) {
        for (const g of wanted.groups) await check(requestor, checkAttrs(verb, userGroup, 'groups', g));
      }
    }
    // The extras.
    if (wanted.extra?.size) {
      if (constrained) {
        const problem = extraProblem(wanted.extra);
        if (problem) throw denied(requestor, checkAttrs(verb, 'authentication.k8s.io', 'userextras', ''), problem);
      }
      const wildcard = checkAttrs(verb, 'authentication.k8s.io', 'userextras', '*', '', '*');
      if (!(constrained && largeExtra(wanted.extra) && (await allows(check, requestor, wildcard)))) {
        for (const [key, values] of wanted.extra) {
          for (const v of values) await check(requestor, checkAttrs(verb, 'authentication.k8s.io', 'userextras', v, '', key));
        }
      }
    }
    // system:authenticated unless the user is anonymous or asked to be unauthenticated.
    if (wanted.name === ANONYMOUS_USER) {
      if (!groups.includes(UNAUTHENTICATED_GROUP)) groups.push(UNAUTHENTICATED_GROUP);
    } else if (!groups.includes(UNAUTHENTICATED_GROUP) && !groups.includes(AUTHENTICATED_GROUP)) {
      groups.push(AUTHENTICATED_GROUP);
    }
    const extra = wanted.extra?.size ? Object.fromEntries([...wanted.extra].map(([k, v]) => [k, [...v]])) : undefined;
    return { user: { name: wanted.name, ...(wanted.uid ? { uid: wanted.uid } : {}), groups, ...(extra ? { extra } : {}) }, constraint };
  };
}

const allows = (check: Check, user: UserInfo, a: RequestAttributes) =>
  check(user, a).then(
    () => true,
    () => false,
  );
const goStrings = (v: string[]) => `[${v.map(goQuote).join(' ')}]`;

function largeExtra(extra: Map<string, string[]>): boolean {
  if (extra.size >= MANY_CHECKS) return true;
  let count = 0;
  for (const values of extra.values()) if ((count += values.length) >= MANY_CHECKS) return true;
  return false;
}

// validateExtra: keys must be lower-case domain-prefixed paths, values non-empty.
const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH = new RegExp(`^${HTTP_PATH_FMT}$`);
function extraProblem(extra: Map<string, string[]>): string | undefined {
  for (const [key, values] of extra) {
    if (key === '') return 'impersonating the empty string key in extra is not allowed';
    const errs = domainPrefixedPath('extra.key', key);
    if (errs.length) return `impersonating an invalid key in extra is not allowed: ${aggregate(errs.map((e) => e.message))}`;
    if (key !== key.toLowerCase()) return `impersonating a non-lowercase key in extra is not allowed: ${goQuote(key)}`;
    if (values.length === 0) return 'impersonating empty values in extra is not allowed';
    if (values.includes('')) return 'impersonating the empty string value in extra is not allowed';
  }
  return undefined;
}

// utilvalidation.IsDomainPrefixedPath.
function domainPrefixedPath(field: string, p: string): FieldError[] {
  if (p === '') return [required(field)];
  const slash = p.indexOf('/');
  const host = slash < 0 ? '' : p.slice(0, slash);
  const rest = slash < 0 ? '' : p.slice(slash + 1);
  if (slash < 0 || host === '' || rest === '') return [invalid(field, p, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs = isDNS1123Subdomain(host).map((m) => invalid(field, host, m));
  if (!HTTP_PATH.test(rest)) errs.push(invalid(field, rest, `Invalid path (regex used for validation is '${HTTP_PATH_FMT}')`));
  return errs;
}

// utilerrors.NewAggregate(...).Error(): one message alone, several de-duplicated in brackets.
function aggregate(msgs: string[]): string {
  const seen = [...new Set(msgs)];
  return seen.length === 1 ? (seen[0] as string) : `[${seen.join(', ')}]`;
}

// A constrained mode (constrainedImpersonationModeState): the filter says whether it applies, then the requestor must
// be allowed `impersonate-on:<mode>:<verb>` on the request itself, then `impersonate:<mode>` on what it asks for.
function constrainedMode(check: Check, mode: string, applies: (w: WantedUser, requestor: UserInfo) => boolean): Mode {
  const verb = `impersonate:${mode}`;
  const state = modeState(check, verb, true);
  return {
    verb,
    async check(requestor, wanted, attrs) {
      if (!applies(wanted, requestor)) return undefined;
      await check(requestor, { ...attrs, verb: `impersonate-on:${mode}:${attrs.verb}` });
      return state(requestor, wanted);
    },
  };
}

/**
 * associatedNodeMode lets a service account impersonate the node its token is bound to. Its checks see the requestor
 * with its extra values replaced by the list of their keys, and the node name as `*` (kube's cache key ignores both).
 */
function associatedNodeMode(check: Check): Mode {
  const verb = 'impersonate:associated-node';
  const wrapped: Check = (user, a) => {
    const keys = Object.keys(user.extra ?? {}).sort();
    const masked: UserInfo = { ...user, extra: { [ASSOCIATED_NODE_KEYS]: keys } };
    return check(masked, a.isResourceRequest && a.verb === verb ? { ...a, name: '*' } : a);
  };
  return constrainedMode(wrapped, 'associated-node', (w, requestor) => {
    const node = nodeName(w.name);
    const bound = requestor.extra?.[NODE_NAME_KEY];
    return onlyUsername(w) && node !== undefined && splitServiceAccount(requestor.name) !== undefined && bound?.length === 1 && bound[0] === node;
  });
}

/** allModes are kube's modes in kube's order (allImpersonationModes). */
function allModes(check: Check): Mode[] {
  const legacy = modeState(check, 'impersonate', false);
  return [
    associatedNodeMode(check),
    constrainedMode(check, 'arbitrary-node', (w) => onlyUsername(w) && nodeName(w.name) !== undefined),
    constrainedMode(check, 'serviceaccount', (w) => onlyUsername(w) && splitServiceAccount(w.name) !== undefined),
    // The other users: neither nodes nor service accounts, and every field may be set.
    constrainedMode(check, 'user-info', (w) => nodeName(w.name) === undefined && splitServiceAccount(w.name) === undefined),
    { verb: 'impersonate', check: (requestor, wanted) => legacy(requestor, wanted) },
  ];
}

/**
 * Impersonation applies the Impersonate-* headers of requests. It remembers, per requestor name, the last mode that
 * succeeded and tries it first (kube's modeIndexCache, 10 000 entries); the others follow in order.
 */
export class Impersonation {
  readonly #modes: Mode[];
  readonly #lastMode = new LRUCache<string, number>({ max: 10_000 });

  constructor(authorizer: Authorizer) {
    this.#modes = allModes(checker(authorizer));
  }

  /**
   * impersonate returns the user the request asks to run as and the verb that allowed it; undefined when no
   * Impersonate-User is set. Throws a StatusError: 400 for an invalid combination of headers, 403 when no mode allows.
   */
  async impersonate(requestor: UserInfo, attrs: RequestAttributes, request: HeaderSource): Promise<Impersonated | undefined> {
    // Most requests carry no Impersonate-* header: a scan of the raw names spares building the per-line map.
    if (!request.rawHeaders.some((h, i) => i % 2 === 0 && h.length > 12 && h.slice(0, 12).toLowerCase() === 'impersonate-')) return undefined;
    const wanted = readImpersonation(distinctHeaders(request));
    if (!wanted) return undefined;
    const cached = this.#lastMode.get(requestor.name);
    let firstErr: unknown;
    const attempt = async (i: number) => {
      try {
        return await this.#modes[i]?.check(requestor, wanted, attrs);
      } catch (e) {
        firstErr ??= e;
        return undefined;
      }
    };
    if (cached !== undefined) {
      const got = await attempt(cached);
      if (got) return got;
    }
    for (let i = 0; i < this.#modes.length; i++) {
      if (i === cached) continue;
      const got = await attempt(i);
      if (got) {
        this.#lastMode.set(requestor.name, i);
        return got;
      }
    }
    if (firstErr) throw firstErr;
    throw new Error('all impersonation modes failed');
  }
}
