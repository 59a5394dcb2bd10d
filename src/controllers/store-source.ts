/**
 * @module controllers/store-source
 * Feeds a controller from our own store's change feed, in process: no HTTP round trip to ourselves and no
 * serialization. Every object present at start is enqueued, then every change; if the feed ever ends with an
 * error (compacted past), it starts over from a fresh list, as a reflector re-lists.
 *
 * ## Errors
 * - Expired, whether the storage throws it from watch() or reports it later through the sink's onError (a remote
 *   engine learns of compaction only when it answers), and any other end of the feed: listed again at once.
 * - A list or watch that fails outright (the storage unreachable): logged, and tried again after RETRY_MS.
 */
import type { Logger } from 'pino';
import { isStorageError } from '../storage/errors.js';
import type { KeyPrefix, Storage, WatchHandle } from '../storage/interface.js';

/** How long to wait before listing again after a list or watch that failed outright. */
const RETRY_MS = 1000;

/** objectKey is the work-queue key of an object: `namespace/name` (just `name` when cluster-scoped). */
export const objectKey = (namespace: string, name: string) => (namespace ? `${namespace}/${name}` : name);

/** splitKey reverses objectKey. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** watchStoreKeys calls `onKey` for every object under `prefix` now and on every later change, until stop(). */
export function watchStoreKeys(storage: Storage, prefix: KeyPrefix, onKey: (key: string) => void, logger: Logger): { stop(): void } {
  let handle: WatchHandle | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  // The feed ended (Expired, thrown or reported): list again, as a reflector does.
  const relist = (err: Error) => {
    if (stopped) return;
    logger.warn({ err: err.message }, 'store feed ended; listing again');
    setImmediate(run);
  };
  const start = async () => {
    const { items, revision } = await storage.list(prefix);
    if (stopped) return;
    for (const o of items) onKey(objectKey(o.metadata.namespace ?? '', o.metadata.name ?? ''));
    try {
      handle = storage.watch(prefix, revision, {
        onEvent: (e) => onKey(objectKey(e.key.namespace, e.key.name)),
        onError: relist,
      });
    } catch (e) {
      // Compacted past the list's revision while it was read: the same as the feed reporting it.
      if (!isStorageError(e, 'Expired')) throw e;
      relist(e);
    }
  };
  const run = () => {
    if (stopped) return;
    start().catch((err: unknown) => {
      if (stopped) return;
      logger.error({ err }, 'store feed failed; listing again shortly');
      retry = setTimeout(run, RETRY_MS);
    });
  };
  run();
  return {
    stop() {
      stopped = true;
      clearTimeout(retry);
      handle?.stop();
    },
  };
}
