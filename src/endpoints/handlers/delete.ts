/**
 * @module endpoints/handlers/delete
 * DELETE of one object (handlers/delete.go DeleteResource): negotiated first (a 406 leaves the object in place),
 * DeleteOptions from the body or the query, and for ignoreStoreReadErrorWithClusterBreakingPotential the valid
 * options, kube's audit annotation and the extra verb before anything is read. The answer is the object while
 * finalizers hold it (200, or 202 when orphanDependents is false), else a Success Status.
 */
import type { GroupResource } from '../../apis/meta/errors.js';
import type { DeleteOptions, DeleteResult } from '../../registry/store.js';
import type { ResourceDefinition } from '../../registry/resource.js';
import { isDryRun, parseDeleteOptions, requestQuery } from '../query.js';
import { rawBodyOf } from '../raw-body.js';
import { transformObject } from '../transform.js';
import { authorizeUnsafeDelete, markUnsafeDelete } from '../unsafe-delete.js';
import type { Handler } from './request.js';

/** GracefulDeleter is rest.GracefulDeleter: what a DELETE of one object needs of a store. */
export interface GracefulDeleter {
  readonly def: ResourceDefinition;
  readonly gr: GroupResource;
  validateDeleteOptions(o: DeleteOptions): void;
  delete(namespace: string | undefined, name: string, options: DeleteOptions, dryRun: boolean): Promise<DeleteResult>;
}

/** deleteObject serves DELETE of one object. */
export function deleteObject(store: GracefulDeleter): Handler {
  return async (req, reply, call) => {
    const target = call.negotiate(true);
    const o = parseDeleteOptions(req.body, requestQuery(req), rawBodyOf(req));
    const unsafe = o.ignoreStoreReadErrorWithClusterBreakingPotential === true;
    if (unsafe) {
      store.validateDeleteOptions(o);
      markUnsafeDelete(req);
      await authorizeUnsafeDelete(req, store.gr, call.name);
    }
    const r = await store.delete(call.namespace(), call.name, o, isDryRun(o));
    if (unsafe && !isDryRun(o)) {
      req.log.warn(
        { resource: store.gr.resource, namespace: call.namespace(), name: call.name, user: req.user?.name },
        'deleted an object whose stored data did not decode (ignoreStoreReadErrorWithClusterBreakingPotential)',
      );
    }
    reply.code(r.code);
    const body = r.body as { kind?: string };
    return body.kind === 'Status' ? r.body : transformObject(store.def, r.body as never, target, 'Metadata');
  };
}
