/**
 * @module registry/metadata-repair
 * The repair of stored objects whose metadata a Go client could not decode into metav1.ObjectMeta (what
 * ResourceStore.repairStoredMetadata runs over one kind).
 */
import { objectMetaDecodes, repairObjectMeta } from '../apis/meta/decode.js';
import type { UnreadableObject } from '../storage/corrupt-object.js';
import type { KeyPrefix, ObjectKey, Storage } from '../storage/interface.js';
import { currentPages } from '../storage/walk.js';

/** MetadataRepair is one repaired object: where it is and the malformed fields dropped from its metadata. */
export interface MetadataRepair {
  namespace: string;
  name: string;
  dropped: string[];
}

// How many stored objects repairStoredMetadata reads before yielding to requests.
const REPAIR_PAGE_SIZE = 500;

/**
 * repairStoredMetadata rewrites every object under `objects` whose metadata does not decode: malformed fields
 * dropped, name and namespace (for a `namespaced` kind) from the key, each an ordinary write to `key(namespace,
 * name)`. Reads a page at a time, yielding between pages; `stopped` ends it early, `onRepair` hears of each repair.
 * An object whose stored data does not decode at all is passed over (it stays for the unsafe delete), `onUnreadable`
 * hears of it once, and the walk goes on; any other failure ends it. A pass that checked every object and found
 * none unreadable is marked in the store (Storage.mark): every object written since decodes (admission sees to
 * it), so later starts skip the pass (`skipped`).
 */
export async function repairStoredMetadata(
  storage: Storage,
  objects: KeyPrefix,
  key: (namespace: string, name: string) => ObjectKey,
  namespaced: boolean,
  onRepair: (r: MetadataRepair) => void,
  stopped: () => boolean,
  onUnreadable: (o: UnreadableObject) => void = () => undefined,
): Promise<{ checked: number; repaired: number; unreadable: number; skipped?: true }> {
  const mark = `metadata-repaired/${objects.resource}`;
  if (storage.marked?.(mark)) return { checked: 0, repaired: 0, unreadable: 0, skipped: true };
  let checked = 0;
  let repaired = 0;
  let unreadable = 0;
  const skipped = (o: UnreadableObject) => {
    unreadable++;
    onUnreadable(o);
  };
  for await (const items of currentPages(storage, objects, REPAIR_PAGE_SIZE, stopped, skipped)) {
    for (const item of items) {
      checked++;
      if (objectMetaDecodes(item.metadata)) continue;
      const namespace = namespaced && typeof item.metadata?.namespace === 'string' ? item.metadata.namespace : '';
      const name = typeof item.metadata?.name === 'string' ? item.metadata.name : '';
      let dropped: string[] = [];
      await storage.update(key(namespace, name), (cur) => {
        if (objectMetaDecodes(cur.metadata)) return null;
        const r = repairObjectMeta(cur.metadata);
        dropped = r.dropped;
        return { ...cur, metadata: { ...r.meta, name, ...(namespaced ? { namespace } : {}) } };
      });
      repaired++;
      onRepair({ namespace, name, dropped });
    }
  }
  if (!stopped() && unreadable === 0) await storage.mark?.(mark);
  return { checked, repaired, unreadable };
}
