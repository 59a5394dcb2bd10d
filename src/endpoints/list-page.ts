/**
 * @module endpoints/list-page
 * One LIST response's items and list metadata (api-concepts "semantics for get and list", storage/etcd3 GetList):
 * - `continue` → the token's snapshot, after the token's key (410 Expired once compacted away);
 * - resourceVersion unset or "0" → the most recent;
 * - N with NotOlderThan (or no match and no limit) → wait up to 3 s until the store reaches N (else 504
 *   ResourceVersionTooLarge), then the most recent;
 * - N with Exact (or, for compatibility, no match but a limit) → exactly the snapshot at N, rebuilt from the
 *   history (410 Expired when N is older than the retained window);
 * - a limited list that stopped early carries a continue token for the same snapshot, and `remainingItemCount`
 *   when it has no selector.
 */
import { badRequest, expired, StatusError, tooLargeResourceVersion } from '../apis/meta/errors.js';
import type { KubeObject, ListMeta } from '../apis/meta/types.js';
import type { ResourceStore } from '../registry/store.js';
import type { ListRequest } from '../storage/interface.js';
import { decodeContinue, encodeContinue, listScope } from './continue-token.js';
import type { ListOptions } from './query.js';

const WAIT_MS = 3000;

/** waitForRevision waits (up to 3 s, as kube-apiserver does) until the store has committed `wanted`; false if it never did. */
export function waitForRevision(store: ResourceStore, wanted: number): Promise<boolean> {
  return store.currentRevision() >= wanted ? Promise.resolve(true) : store.waitForRevision(wanted, WAIT_MS);
}

/** readListPage reads the page the options ask for, waiting or failing as the semantics say. */
export async function readListPage(
  store: ResourceStore,
  namespace: string | undefined,
  opts: ListOptions,
  encoded = false,
): Promise<{ items: KubeObject[]; encoded?: Uint8Array[]; meta: ListMeta }> {
  const scope = listScope(store.gr.group, store.gr.resource, namespace);
  const page = { ...(await pageRequest(store, opts, scope)), ...(encoded ? { encoded } : {}) };
  const sel = { label: opts.label, field: opts.field };
  let r: Awaited<ReturnType<typeof store.list>>;
  try {
    r = await store.list(namespace, sel, page);
  } catch (e) {
    // Same 410, but telling a pager's user what to do about a token rather than about a resourceVersion.
    if (opts.continueToken !== undefined && e instanceof StatusError && e.code === 410) {
      throw expired('The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.');
    }
    throw e;
  }
  const meta: ListMeta = { resourceVersion: String(r.revision) };
  if (r.more && r.last) {
    const counted = r.position !== undefined ? { counted: { n: r.position, scope } } : {};
    meta.continue = encodeContinue({ revision: r.revision, namespace: r.last.namespace, name: r.last.name, ...counted });
    if (r.remaining !== undefined) meta.remainingItemCount = r.remaining;
  }
  return { items: r.items, ...(r.encoded ? { encoded: r.encoded } : {}), meta };
}

// pageRequest turns ListOptions into the storage request: which snapshot, from where, how many.
async function pageRequest(store: ResourceStore, opts: ListOptions, scope: string): Promise<Omit<ListRequest, 'filter'>> {
  const limit = opts.limit && opts.limit > 0 ? opts.limit : undefined;
  const page: Omit<ListRequest, 'filter'> = limit ? { limit } : {};
  if (opts.continueToken !== undefined) {
    if (opts.resourceVersion !== undefined && opts.resourceVersion !== '0') {
      throw badRequest('specifying resource version is not allowed when using continue');
    }
    const pos = decodeContinue(opts.continueToken);
    if (pos.revision > store.currentRevision()) throw badRequest('continue key is not valid: its resourceVersion is newer than this server has');
    // The count goes with the position only into a list of the collection it was counted in.
    const position = pos.counted?.scope === scope ? { position: pos.counted.n } : {};
    return { ...page, revision: pos.revision, after: { namespace: pos.namespace, name: pos.name }, ...position };
  }
  const rv = opts.resourceVersion;
  if (rv === undefined || rv === '0') return page;
  const wanted = Number(rv);
  if (!(await waitForRevision(store, wanted))) throw tooLargeResourceVersion(rv, String(store.currentRevision()));
  const exact = opts.resourceVersionMatch === 'Exact' || (opts.resourceVersionMatch === undefined && limit !== undefined);
  return exact ? { ...page, revision: wanted } : page;
}
