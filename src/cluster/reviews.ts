/**
 * @module cluster/reviews
 * TokenReview and SubjectAccessReview calls to kube-apiserver (the server's service account needs
 * system:auth-delegator). Attributes are sent exactly as kube's delegating authorizer sends them.
 */
import { AuthenticationV1Api, AuthorizationV1Api, type KubeConfig, type V1SubjectAccessReviewSpec } from '@kubernetes/client-node';
import type { ReviewAccess } from '../auth/authorizer.js';
import type { ReviewToken } from '../auth/token-review.js';

/** tokenReviewer authenticates a bearer token with the cluster (no audiences: the API server's own). */
export function tokenReviewer(kc: KubeConfig): ReviewToken {
  const api = kc.makeApiClient(AuthenticationV1Api);
  return async (token) => {
    const r = await api.createTokenReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } } });
    const s = r.status;
    if (!s?.authenticated || !s.user?.username) return undefined;
    return {
      name: s.user.username,
      groups: s.user.groups ?? [],
      ...(s.user.uid ? { uid: s.user.uid } : {}),
      ...(s.user.extra ? { extra: s.user.extra } : {}),
    };
  };
}

/** accessReviewer asks the cluster whether a user may perform a request. */
export function accessReviewer(kc: KubeConfig): ReviewAccess {
  const api = kc.makeApiClient(AuthorizationV1Api);
  return async (user, a) => {
    const spec: V1SubjectAccessReviewSpec = {
      user: user.name,
      groups: user.groups,
      ...(user.uid ? { uid: user.uid } : {}),
      ...(user.extra ? { extra: user.extra } : {}),
      ...(a.isResourceRequest
        ? {
            resourceAttributes: {
              namespace: a.namespace,
              verb: a.verb,
              group: a.apiGroup,
              version: a.apiVersion,
              resource: a.resource,
              subresource: a.subresource,
              name: a.name,
            },
          }
        : { nonResourceAttributes: { path: a.path, verb: a.verb } }),
    };
    const r = await api.createSubjectAccessReview({ body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec } });
    // As kube's webhook authorizer: allowed wins, evaluationError is only informational, the reason is passed on.
    const s = r.status;
    return { allowed: !!s?.allowed, reason: s?.reason ?? '' };
  };
}
