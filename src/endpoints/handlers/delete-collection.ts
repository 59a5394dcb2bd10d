/**
 * @module endpoints/handlers/delete-collection
 * DELETE of a collection (handlers/delete.go DeleteCollection): the request's ListOptions and DeleteOptions, then
 * the answer is negotiated before anything is deleted (a 406 leaves everything in place); the store deletes page by
 * page and the answer lists what it deleted.
 */
import type { ResourceStore } from '../../registry/store.js';
import { readListPage } from '../list-page.js';
import { checkResourceVersion, isDryRun, parseDeleteOptions, parseListOptions, requestQuery } from '../query.js';
import { rawBodyOf } from '../raw-body.js';
import { transformList } from '../transform.js';
import type { Handler } from './request.js';

/** CollectionDeleter is rest.CollectionDeleter: the object store, whose pages list-page.ts reads. */
export type CollectionDeleter = ResourceStore;

/** deleteCollection serves DELETE of a collection. */
export function deleteCollection(store: CollectionDeleter): Handler {
  const def = store.def;
  const selectable = (def.selectableFields ?? []).map((f) => f.field);
  return async (req, _reply, call) => {
    const lo = parseListOptions(requestQuery(req), def.namespaced, selectable);
    const o = parseDeleteOptions(req.body, requestQuery(req), rawBodyOf(req));
    const target = call.negotiate(false);
    // The collection is read with the request's ListOptions, as a list would be (a bad resourceVersion or continue
    // token fails before anything is deleted); later pages follow the token alone.
    const page = async (token: string | undefined) => {
      if (token === undefined) checkResourceVersion(lo.resourceVersion);
      const opts = token === undefined ? lo : { ...lo, continueToken: token, resourceVersion: undefined, resourceVersionMatch: undefined };
      return readListPage(store, call.namespace(), opts);
    };
    const r = await store.deleteCollection(o, isDryRun(o), lo.limit !== undefined, page);
    return transformList(def, r.items, r.meta, target, 'Metadata');
  };
}
