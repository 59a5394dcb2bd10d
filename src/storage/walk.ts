/**
 * @module storage/walk
 * A walk over every current object under a prefix, page by page, for the passes that run beside serving (storage
 * version migration, metadata repair).
 */
import type { KubeObject } from '../apis/meta/types.js';
import type { KeyPrefix, Storage } from './interface.js';

/**
 * currentPages yields the objects under `prefix` a page of `pageSize` at a time, each page read at the then current
 * revision (an object written during the walk may be seen in its new state or not at all if it moved before the
 * position), until the end or until `stopped()`. No page asks for `remaining`: counting what follows every page
 * would make the walk quadratic. A turn of the event loop passes between pages: an embedded store answers at once,
 * and the walk would otherwise hold off every request (and the server's listen) until it has read every object.
 */
export async function* currentPages(storage: Storage, prefix: KeyPrefix, pageSize: number, stopped: () => boolean): AsyncGenerator<KubeObject[]> {
  let after: { namespace: string; name: string } | undefined;
  while (!stopped()) {
    const page = await storage.list(prefix, { limit: pageSize, noRemaining: true, ...(after ? { after } : {}) });
    yield page.items;
    if (!page.more || !page.last) return;
    after = { namespace: page.last.namespace, name: page.last.name };
    await new Promise((r) => setImmediate(r));
  }
}
