/**
 * @module endpoints/unsafe-delete
 * The extra authorization of a delete with ignoreStoreReadErrorWithClusterBreakingPotential, as handlers/delete.go
 * authorizeUnsafeDelete does it once the options are valid and before anything is read: the user must also be
 * allowed the verb `unsafe-delete-ignore-read-errors` on the object (same group, resource, namespace and name). The
 * server's authorization hook gives each request `authorizeVerb`, which asks the server's authorizer (standalone:
 * every authenticated user; delegated: a SubjectAccessReview) about the request with another verb.
 */
import type { FastifyRequest } from 'fastify';
import { forbidden, internalError, type GroupResource } from '../apis/meta/errors.js';
import type { Decision } from '../auth/authorizer.js';
import { addAuditAnnotation } from '../observability/audit.js';
import { UNSAFE_DELETE_VERB } from '../registry/delete-options.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** authorizeVerb asks the authorizer about this resource request with `verb` in place of its own. */
    authorizeVerb?: (verb: string) => Promise<Decision>;
  }
}

export { UNSAFE_DELETE_QUERY, UNSAFE_DELETE_VERB } from '../registry/delete-options.js';

/**
 * UNSAFE_DELETE_AUDIT_ANNOTATION is the audit annotation (empty value) handlers/delete.go adds to the event of every
 * delete that asks for ignoreStoreReadErrorWithClusterBreakingPotential once its options are valid, before the extra
 * verb is authorized: a refused attempt is marked as well as one that deleted.
 */
export const UNSAFE_DELETE_AUDIT_ANNOTATION = 'apiserver.k8s.io/unsafe-delete-ignore-read-error';

/** markUnsafeDelete adds UNSAFE_DELETE_AUDIT_ANNOTATION to the request's audit event. */
export function markUnsafeDelete(req: FastifyRequest): void {
  addAuditAnnotation(req, UNSAFE_DELETE_AUDIT_ANNOTATION, '');
}

/** authorizeUnsafeDelete refuses (403, worded as admission.NewForbidden) a user not allowed UNSAFE_DELETE_VERB. */
export async function authorizeUnsafeDelete(req: FastifyRequest, gr: GroupResource, name: string): Promise<void> {
  if (!req.authorizeVerb) throw internalError('no authorizer provided, unable to authorize unsafe delete');
  let decision: Decision;
  try {
    decision = await req.authorizeVerb(UNSAFE_DELETE_VERB);
  } catch (e) {
    throw forbidden(gr, name, `error while checking permission for "${UNSAFE_DELETE_VERB}", ${(e as Error).message}`);
  }
  if (!decision.allowed) throw forbidden(gr, name, `not permitted to do "${UNSAFE_DELETE_VERB}", reason: ${decision.reason}`);
}
