/**
 * @module endpoints/handlers/create
 * POST to a collection (handlers/create.go createHandler): CreateOptions, then the answer is negotiated (a 406 never
 * follows a write), then the store's create pipeline; 201 with the stored (or dry-run) object.
 */
import type { WriteOptions, WriteResult } from '../../registry/store.js';
import type { ResourceDefinition } from '../../registry/resource.js';
import { parseWriteOptions, requestQuery } from '../query.js';
import { transformObject } from '../transform.js';
import { sendWarnings } from '../warning-header.js';
import type { Handler } from './request.js';

/** Creater is rest.Creater: what a POST needs of a store. */
export interface Creater {
  readonly def: ResourceDefinition;
  create(namespace: string | undefined, body: unknown, opts: WriteOptions): Promise<WriteResult>;
}

/** create serves POST to a collection. */
export function create(store: Creater): Handler {
  return async (req, reply, call) => {
    const opts = parseWriteOptions(requestQuery(req), 'CreateOptions', req.headers['user-agent']);
    const target = call.negotiate(true);
    const { object, warnings } = await store.create(call.namespace(), req.body, opts);
    sendWarnings(reply, warnings);
    reply.code(201);
    return transformObject(store.def, object, target, 'Metadata');
  };
}
