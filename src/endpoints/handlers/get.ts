/**
 * @module endpoints/handlers/get
 * GET of one object (handlers/get.go GetResource), in any representation, and of a subresource (/status answers
 * the object, /scale its Scale). A GET with a name is a get whatever its query says (`?watch=true` included):
 * RequestInfoFactory makes it verb get, and a CRD serves verb get with GetResource (customresource_handler.go
 * serveResource); one object is watched with fieldSelector=metadata.name=<name> on the collection.
 */
import type { KubeObject } from '../../apis/meta/types.js';
import type { ResourceDefinition } from '../../registry/resource.js';
import { parseGetOptions, requestQuery } from '../query.js';
import { transformObject } from '../transform.js';
import { representation, type Answer, type Handler } from './request.js';

/** Getter is rest.Getter: what a GET needs of a store. */
export interface Getter {
  readonly def: ResourceDefinition;
  get(namespace: string | undefined, name: string): Promise<KubeObject>;
}

/** getObject serves GET of one object: negotiated first (406 before anything else), then its options and Table options. */
export function getObject(store: Getter): Handler {
  return async (req, _reply, call) => {
    const target = call.negotiate(true);
    parseGetOptions(requestQuery(req));
    const { includeObject, noHeaders } = representation(req, target);
    return transformObject(store.def, await store.get(call.namespace(), call.name), target, includeObject, noHeaders);
  };
}

/**
 * getSubresource serves GET of a subresource: its options are read before the answer is negotiated (the order
 * these routes always had), and a Table of /status takes no Table options.
 */
export function getSubresource(store: Getter, answer: Answer): Handler {
  return async (req, _reply, call) => {
    parseGetOptions(requestQuery(req));
    const target = call.negotiate(true);
    return answer(await store.get(call.namespace(), call.name), target);
  };
}
