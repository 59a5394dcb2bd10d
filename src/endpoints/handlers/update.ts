/**
 * @module endpoints/handlers/update
 * PUT of an object or of a subresource (handlers/update.go UpdateResource): negotiated first (a 406 leaves the
 * object as it was), then UpdateOptions, then one update; the answer in the negotiated representation. The same
 * handler serves the object, /status and /scale: what changes is the store and how its answer is rendered.
 */
import type { WriteOptions, WriteResult } from '../../registry/store.js';
import { parseWriteOptions, requestQuery } from '../query.js';
import { rawBodyOf } from '../raw-body.js';
import { sendWarnings } from '../warning-header.js';
import type { Answer, Handler } from './request.js';

/**
 * Updater is rest.Updater: what a PUT needs of a store. `raw` is the body's bytes when the route kept them (a
 * Scale is decoded from them, as Go does).
 */
export interface Updater {
  update(namespace: string | undefined, name: string, body: unknown, opts: WriteOptions, raw?: Uint8Array): Promise<WriteResult>;
}

/** update serves PUT through `store`, rendering its answer with `answer`. */
export function update(store: Updater, answer: Answer): Handler {
  return async (req, reply, call) => {
    const target = call.negotiate(true);
    const opts = parseWriteOptions(requestQuery(req), 'UpdateOptions', req.headers['user-agent']);
    const { object, warnings } = await store.update(call.namespace(), call.name, req.body, opts, rawBodyOf(req));
    sendWarnings(reply, warnings);
    return answer(object, target);
  };
}
