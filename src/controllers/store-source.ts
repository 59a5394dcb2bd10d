/**
 * @module controllers/store-source
 * Feeds a controller from our own store's change feed, in process: no HTTP round trip to ourselves and no
 * serialization. Every object present at start is enqueued, then every change; if the feed ever ends with an
 * error (compacted past), it starts over from a fresh list, as a reflector re-lists.
 */
import type { Logger } from 'pino';
import type { KeyPrefix, Storage, WatchHandle } from '../storage/interface.js';

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
  const start = () => {
    if (stopped) return;
    const { items, revision } = storage.list(prefix);
    for (const o of items) onKey(objectKey(o.metadata.namespace ?? '', o.metadata.name ?? ''));
    handle = storage.watch(prefix, revision, {
      onEvent: (e) => onKey(objectKey(e.key.namespace, e.key.name)),
      onError: (err) => {
        logger.warn({ err: err.message }, 'store feed ended; listing again');
        setImmediate(start);
      },
    });
  };
  start();
  return {
    stop() {
      stopped = true;
      handle?.stop();
    },
  };
}
