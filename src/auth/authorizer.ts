/**
 * @module auth/authorizer
 * Authorization. Standalone, every authenticated user may do everything (the only credential is a certificate from
 * our own CA) except impersonate, which only system:masters may. Delegated, each request becomes a SubjectAccessReview
 * with kube's attributes, cached 10 s per (user, attributes) for allow and deny alike; system:masters skips it, as the
 * delegating authorizer's AlwaysAllowGroups does (health paths never get here).
 */
import { LRUCache } from 'lru-cache';
import type { RequestAttributes } from './request-info.js';
import { MASTERS_GROUP, type UserInfo } from './user.js';

/** Decision is an authorizer's answer; `reason` is appended to the Forbidden message. */
export interface Decision {
  allowed: boolean;
  reason: string;
}

/** Authorizer decides whether a user may perform a request. A thrown error becomes a 500. */
export interface Authorizer {
  authorize(user: UserInfo, attrs: RequestAttributes): Promise<Decision>;
}

/**
 * allowAuthenticated is the standalone authorizer: every authenticated user may do everything this server serves,
 * as a user granted verbs `*` on it. Impersonating someone is a right over identities, not over our resources
 * (verb `impersonate`, or `impersonate:<mode>` of kube's constrained impersonation): only system:masters has it.
 * The `impersonate-on:<mode>:<verb>` checks name the request itself, so they are allowed like the request.
 */
export const allowAuthenticated: Authorizer = {
  authorize: async (user, attrs) => ({ allowed: !isImpersonateVerb(attrs.verb) || user.groups.includes(MASTERS_GROUP), reason: '' }),
};

/** isImpersonateVerb: the verbs that authorize becoming someone else (auth/impersonation). */
export const isImpersonateVerb = (verb: string) => verb === 'impersonate' || verb.startsWith('impersonate:');

/** ReviewAccess performs one SubjectAccessReview. */
export type ReviewAccess = (user: UserInfo, attrs: RequestAttributes) => Promise<Decision>;

export const AUTHZ_CACHE_TTL_MS = 10_000;

/** delegatingAuthorizer asks kube-apiserver through `review`, with a cache and the system:masters shortcut. */
export function delegatingAuthorizer(review: ReviewAccess, ttlMs = AUTHZ_CACHE_TTL_MS): Authorizer {
  const cache = new LRUCache<string, Decision>({ max: 10_000, ttl: ttlMs });
  const inflight = new Map<string, Promise<Decision>>();
  return {
    async authorize(user, attrs) {
      if (user.groups.includes(MASTERS_GROUP)) return { allowed: true, reason: '' };
      const key = JSON.stringify([user.name, user.uid ?? '', [...user.groups].sort(), user.extra ?? {}, attrs]);
      const hit = cache.get(key);
      if (hit) return hit;
      let p = inflight.get(key);
      if (!p) {
        p = review(user, attrs)
          .then((d) => {
            cache.set(key, d);
            return d;
          })
          .finally(() => inflight.delete(key));
        inflight.set(key, p);
      }
      return p;
    },
  };
}

/** forbiddenMessage words a denial as kube-apiserver's responsewriters.forbiddenMessage does. */
export function forbiddenMessage(user: UserInfo, a: RequestAttributes): string {
  const q = JSON.stringify; // close to Go's %q for the names that reach here
  if (!a.isResourceRequest) return sanitize(`User ${q(user.name)} cannot ${a.verb} path ${q(a.path)}`);
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const where = a.namespace ? `in the namespace ${q(a.namespace)}` : 'at the cluster scope';
  return sanitize(`User ${q(user.name)} cannot ${a.verb} resource ${q(resource)} in API group ${q(a.apiGroup)} ${where}`);
}

// The message echoes the request path and names: escape HTML as kube's responsewriters do (quotes are kept).
const sanitize = (m: string) => m.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
