/**
 * @module endpoints/watch
 * Serving `?watch=true` (handlers/watch.go): headers flushed at once, one `{"type","object"}` JSON line per event,
 * initial ADDED events for RV unset/"0" or sendInitialEvents, the `k8s.io/initial-events-end` BOOKMARK, selector
 * transitions, an ERROR 410 Expired event for a resourceVersion older than the retained history, and a clean end on
 * timeoutSeconds, client disconnect or shutdown.
 */
import type { ServerResponse } from 'node:http';
import { expired } from '../apis/meta/errors.js';
import { INITIAL_EVENTS_END_ANNOTATION, type KubeObject } from '../apis/meta/types.js';
import type { ResourceStore } from '../registry/store.js';
import type { IncludeObject } from '../registry/table.js';
import { isStorageError } from '../storage/errors.js';
import type { ChangeEvent, WatchHandle } from '../storage/interface.js';
import type { Target } from './negotiation.js';
import type { ListOptions } from './query.js';
import { bookmarkObject, transformObject } from './transform.js';

// The server speaks HTTP/1.1 (the aggregator and every client accept it), so the raw response is an http one.
type RawResponse = ServerResponse;

/** WatchRegistry tracks open watch streams so shutdown can end them (fastify.close would otherwise wait forever). */
export class WatchRegistry {
  readonly #open = new Set<() => void>();
  get size(): number {
    return this.#open.size;
  }
  add(end: () => void): () => void {
    this.#open.add(end);
    return () => void this.#open.delete(end);
  }
  closeAll(): void {
    for (const end of [...this.#open]) end();
  }
}

/** WatchRequest is everything serveWatch needs. */
export interface WatchRequest {
  store: ResourceStore;
  namespace: string | undefined;
  opts: ListOptions;
  target: Target;
  includeObject: IncludeObject;
  registry: WatchRegistry;
}

// kube-apiserver picks a random timeout in [minRequestTimeout, 2×minRequestTimeout) (30–60 min) when none is given.
const defaultTimeoutSeconds = () => 1800 + Math.floor(Math.random() * 1800);

/** serveWatch streams events to an already hijacked raw response. */
export function serveWatch(res: RawResponse, w: WatchRequest): void {
  const { store, opts, target } = w;
  const def = store.def;
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
  // Flush headers now: a proxied Watch() blocks until it sees them (kubernetes/kubernetes#75837).
  res.flushHeaders();

  let ended = false;
  let handle: WatchHandle | undefined;
  let firstTable = true;
  const write = (type: string, object: unknown) => {
    if (ended || res.destroyed || res.writableEnded) return;
    res.write(`${JSON.stringify({ type, object })}\n`);
  };
  const send = (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject) => {
    write(type, transformObject(def, obj, target, w.includeObject, target.kind === 'Table' && !firstTable));
    firstTable = false;
  };
  const end = () => {
    if (ended) return;
    ended = true;
    handle?.stop();
    clearTimeout(timer);
    unregister();
    if (!res.writableEnded && !res.destroyed) res.end();
  };
  const unregister = w.registry.add(end);
  const timer = setTimeout(end, (opts.timeoutSeconds ?? defaultTimeoutSeconds()) * 1000);
  res.on('close', end);

  const sel = { label: opts.label, field: opts.field };
  const rv = opts.resourceVersion;
  // RV unset or "0" means "start with the current state"; sendInitialEvents asks for it explicitly (watch-list).
  const wantInitial = opts.sendInitialEvents ?? (rv === undefined || rv === '0');
  let from: number;
  if (wantInitial || rv === undefined || rv === '0') {
    const { items, revision } = store.list(w.namespace, sel);
    from = revision;
    if (wantInitial) for (const item of items) send('ADDED', item);
    if (opts.sendInitialEvents && opts.allowWatchBookmarks) {
      write('BOOKMARK', bookmarkObject(def, target, String(revision), { [INITIAL_EVENTS_END_ANNOTATION]: 'true' }));
    }
  } else {
    from = Number(rv);
  }

  try {
    handle = store.watch(w.namespace, from, (e) => forward(e));
  } catch (e) {
    if (!isStorageError(e, 'Expired')) throw e;
    write('ERROR', expired(e.message).status);
    end();
  }

  function forward(e: ChangeEvent): void {
    const now = store.matches(e.object, sel);
    if (e.type === 'ADDED') {
      if (now) send('ADDED', e.object);
      return;
    }
    const before = e.prevObject ? store.matches(e.prevObject, sel) : true;
    if (e.type === 'DELETED') {
      if (before) send('DELETED', e.object);
      return;
    }
    if (before && now) send('MODIFIED', e.object);
    else if (!before && now) send('ADDED', e.object);
    else if (before && !now && e.prevObject) {
      // Leaving the selection is a DELETED of the old state, stamped with the revision of the change.
      send('DELETED', { ...e.prevObject, metadata: { ...e.prevObject.metadata, resourceVersion: e.object.metadata.resourceVersion } });
    }
  }
}
