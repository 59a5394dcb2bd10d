/**
 * @module auth/token-review
 * Bearer tokens authenticated by kube-apiserver through TokenReview (callers that bypass the aggregator, such as a
 * Prometheus scraping /metrics). Answers are cached 10 s either way, as the delegating authenticator does, so a
 * token costs at most one review per 10 s; the cache keeps a hash of the token, never the token.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { UserInfo } from './user.js';

/** ReviewToken asks the cluster who a token belongs to; undefined when it is not authenticated. */
export type ReviewToken = (token: string) => Promise<UserInfo | undefined>;

export const TOKEN_CACHE_TTL_MS = 10_000;

/** cachedTokenReview wraps a TokenReview call with a 10 s cache of both outcomes (errors are not cached). */
export function cachedTokenReview(review: ReviewToken, ttlMs = TOKEN_CACHE_TTL_MS): ReviewToken {
  const cache = new LRUCache<string, { user: UserInfo | null }>({ max: 10_000, ttl: ttlMs });
  const inflight = new Map<string, Promise<UserInfo | undefined>>();
  return async (token) => {
    const key = createHash('sha256').update(token).digest('base64');
    const hit = cache.get(key);
    if (hit) return hit.user ?? undefined;
    let p = inflight.get(key);
    if (!p) {
      p = review(token)
        .then((user) => {
          cache.set(key, { user: user ?? null });
          return user;
        })
        .finally(() => inflight.delete(key));
      inflight.set(key, p);
    }
    return p;
  };
}

/** bearerToken extracts the token of `Authorization: Bearer <token>`. */
export function bearerToken(authorization: string | undefined): string | undefined {
  // k8s.io/apiserver pkg/authentication/request/bearertoken: trim, split on single spaces, take the second part.
  const parts = (authorization ?? '').trim().split(' ');
  if (parts.length < 2 || parts[0]?.toLowerCase() !== 'bearer') return undefined;
  return parts[1] || undefined;
}
