/**
 * @module endpoints/handlers/patch
 * PATCH of an object or of a subresource (handlers/patch.go PatchResource): negotiated first (a 406 leaves the
 * object as it was); a server-side apply (application/apply-patch+yaml) with its PatchOptions (force allowed) goes
 * to the store's apply, 201 when it created the object; any other type is checked (415) before its options and goes
 * to the store's patch. The same handler serves the object, /status and /scale (applyPatcher with the
 * subresource's field manager).
 */
import type { ApplyOptions, WriteOptions, WriteResult } from '../../registry/store.js';
import type { PatchType } from '../../registry/patch.js';
import { parseWriteOptions, requestQuery } from '../query.js';
import { sendWarnings } from '../warning-header.js';
import { isApplyPatch, patchType, type Answer, type Handler } from './request.js';

/** Patcher is rest.Patcher: what a PATCH needs of a store, server-side apply included. */
export interface Patcher {
  patch(namespace: string | undefined, name: string, type: PatchType, patch: unknown, opts: WriteOptions): Promise<WriteResult>;
  apply(namespace: string | undefined, name: string, body: unknown, opts: ApplyOptions): Promise<WriteResult & { created: boolean }>;
}

/** patch serves PATCH through `store`, rendering its answer with `answer`. */
export function patch(store: Patcher, answer: Answer): Handler {
  return async (req, reply, call) => {
    const target = call.negotiate(true);
    const ua = req.headers['user-agent'];
    if (isApplyPatch(req)) {
      const opts = parseWriteOptions(requestQuery(req), 'PatchOptions', ua, true);
      const { object, warnings, created } = await store.apply(call.namespace(), call.name, req.body, opts);
      sendWarnings(reply, warnings);
      reply.code(created ? 201 : 200);
      return answer(object, target);
    }
    const type = patchType(req);
    const opts = parseWriteOptions(requestQuery(req), 'PatchOptions', ua);
    const { object, warnings } = await store.patch(call.namespace(), call.name, type, req.body, opts);
    sendWarnings(reply, warnings);
    return answer(object, target);
  };
}
