/**
 * @module endpoints/handlers/list
 * GET of a collection, in one namespace or across all (handlers/get.go ListResource): ListOptions and the
 * resourceVersion first, then either a watch (`?watch=true`: a WebSocket upgrade or the chunked stream,
 * handlers/watch.go serveWatchHandler) or one page of the list. The representation is settled before anything is
 * read. A full list is the stored objects as they are: their stored JSON text is sent without decoding it, and a
 * Table is built from that text too, with rows remembered per stored version (table-rows.ts).
 */
import type { ResourceStore } from '../../registry/store.js';
import { readListPage } from '../list-page.js';
import { negotiateWatch } from '../negotiation.js';
import { checkResourceVersion, parseListOptions, requestQuery } from '../query.js';
import { TableRows } from '../table-rows.js';
import { encodedList, transformList } from '../transform.js';
import { serveWatch, type WatchRegistry } from '../watch.js';
import { serveWatchWebSocket, webSocketUpgrade } from '../watch-websocket.js';
import { representation, type Handler } from './request.js';

/** Lister is rest.Lister and rest.Watcher: the object store, which list-page.ts and watch.ts read. */
export type Lister = ResourceStore;

/** list serves list and watch of `store`'s collection; `watches` tracks the open watches. */
export function list(store: Lister, watches: WatchRegistry): Handler {
  const def = store.def;
  const selectable = (def.selectableFields ?? []).map((f) => f.field);
  const tableRows = new TableRows(def);
  return async (req, reply, call) => {
    const opts = parseListOptions(requestQuery(req), def.namespaced, selectable);
    const namespace = call.namespace();
    checkResourceVersion(opts.resourceVersion);
    if (opts.watch) {
      const { target, includeObject } = representation(req, negotiateWatch(req.headers.accept));
      reply.hijack();
      const w = { store, namespace, opts, target, includeObject, registry: watches };
      const upgrade = webSocketUpgrade(req.raw);
      await (upgrade ? serveWatchWebSocket(upgrade, reply.raw, w) : serveWatch(reply.raw, w));
      return reply;
    }
    const { target, includeObject, noHeaders } = representation(req, call.negotiate(false));
    const { items, encoded, meta } = await readListPage(store, namespace, opts, target.kind === 'Object' || target.kind === 'Table');
    if (encoded && target.kind === 'Table') {
      return reply.type('application/json').send(tableRows.table(encoded, meta, { version: target.version, includeObject, noHeaders }));
    }
    if (encoded) return reply.type('application/json').send(encodedList(def, meta, encoded));
    return transformList(def, items, meta, target, includeObject, noHeaders);
  };
}
