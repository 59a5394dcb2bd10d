/**
 * @module cluster/informer
 * A client-node ListWatch that keeps itself running. client-node stops an informer on any error other than 410 and
 * expects the caller to restart it (DEPENDENCIES.md §2); this restarts with backoff (1 s doubling to 30 s) and
 * records whether a list has ever succeeded, which readiness checks use.
 */
import { ListWatch, Watch, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';

/** RunningInformer is a started, self-restarting informer. */
export interface RunningInformer<T extends KubernetesObject> {
  cache: ListWatch<T>;
  /** synced is true once a list has succeeded (stays true across later restarts: the cache is still served). */
  synced(): boolean;
  /** whenSynced resolves at the first successful list. */
  whenSynced: Promise<void>;
  stop(): Promise<void>;
}

export interface InformerOptions<T extends KubernetesObject> {
  kc: KubeConfig;
  path: string;
  list: () => Promise<KubernetesListObject<T>>;
  fieldSelector?: string;
  labelSelector?: string;
  name: string;
  logger: Logger;
  onChange?: (obj: T) => void;
}

const MAX_BACKOFF_MS = 30_000;

/** startInformer starts the informer and keeps it running until stop(). */
export function startInformer<T extends KubernetesObject>(o: InformerOptions<T>): RunningInformer<T> {
  let stopped = false;
  let synced = false;
  let backoff = 1000;
  let timer: NodeJS.Timeout | undefined;
  let resolveSynced!: () => void;
  const whenSynced = new Promise<void>((r) => (resolveSynced = r));
  const list = async () => {
    const l = await o.list();
    backoff = 1000;
    // ListWatch fills its cache from the list right after this returns: report synced once that has run.
    if (!synced) {
      setImmediate(() => {
        synced = true;
        resolveSynced();
      });
    }
    return l;
  };
  const lw = new ListWatch<T>(o.path, new Watch(o.kc), list, false, o.labelSelector, o.fieldSelector);
  if (o.onChange) for (const verb of ['add', 'update', 'delete'] as const) lw.on(verb, o.onChange);
  lw.on('error', (err: unknown) => {
    if (stopped) return; // stop() itself reports an AbortError
    o.logger.warn({ informer: o.name, err: (err as Error)?.message ?? String(err), retryInMs: backoff }, 'informer failed; restarting');
    timer = setTimeout(() => {
      if (!stopped) lw.start().catch(() => undefined);
    }, backoff);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  });
  lw.start().catch(() => undefined);
  return {
    cache: lw,
    synced: () => synced,
    whenSynced,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await lw.stop().catch(() => undefined);
    },
  };
}
