/**
 * @module auth/user
 * The identity a request is served as (k8s.io/apiserver pkg/authentication/user.Info).
 */

/** UserInfo is an authenticated identity. */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export const AUTHENTICATED_GROUP = 'system:authenticated';
export const MASTERS_GROUP = 'system:masters';
export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

/**
 * withAuthenticatedGroup adds system:authenticated, as AuthenticatedGroupAdder does: the aggregator's discovery and
 * OpenAPI fetches arrive as system:kube-aggregator with no groups and are only allowed through system:discovery.
 */
export function withAuthenticatedGroup(u: UserInfo): UserInfo {
  // The anonymous user (which a proxy may forward when the cluster allows anonymous requests) stays unauthenticated.
  if (u.name === ANONYMOUS_USER || u.groups.includes(UNAUTHENTICATED_GROUP) || u.groups.includes(AUTHENTICATED_GROUP)) return u;
  return { ...u, groups: [...u.groups, AUTHENTICATED_GROUP] };
}
