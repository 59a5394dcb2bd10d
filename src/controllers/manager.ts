/**
 * @module controllers/manager
 * Runs the reconcilers in this process (controller-runtime's manager): the Website controller fed by our own
 * store's change feed and, with a cluster, by informers on the children it manages; a periodic resync; and, when
 * asked, leader election so that only one replica reconciles. Without a cluster nothing runs: each kind's
 * standaloneStatus is what the store records instead.
 */
import { VersionApi, type KubeConfig } from '@kubernetes/client-node';

/** RECOVERY_PROBE_MS: how often an unreachable cluster is probed (GET /version) until it answers. */
const RECOVERY_PROBE_MS = 1000;
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ResourceStore } from '../registry/store.js';
import type { Storage } from '../storage/interface.js';
import { realClock, sleep } from './clock.js';
import { startController, type Controller } from './controller.js';
import { controllerMetrics } from './metrics.js';
import { objectKey, watchStoreKeys } from './store-source.js';
import type { Images } from '../kinds/website/controllers/children.js';
import { clusterChildren, type ClusterChildren } from '../kinds/website/controllers/cluster-children.js';
import { websiteReconciler } from '../kinds/website/controllers/reconciler.js';

export interface ManagerOptions {
  storage: Storage;
  /** The Website store (its own ResourceStore instance over the same storage). */
  websites: ResourceStore;
  cluster: KubeConfig;
  images: Images;
  maxConcurrentReconciles: number;
  resyncPeriodMs: number;
  registry: Registry;
  logger: Logger;
}

/** Manager is the running set of controllers. */
export interface Manager {
  /** synced: the children informers have listed (always true without a cluster). */
  synced(): boolean;
  stop(): Promise<void>;
}

/** startManager starts the Website controller and its sources. */
export function startManager(o: ManagerOptions): Manager {
  const logger = o.logger.child({ subsystem: 'controllers' });
  const prefix = { resource: o.websites.key('', '').resource };
  const controller: Controller = startController({
    name: 'website',
    clock: realClock,
    logger,
    metrics: controllerMetrics(o.registry),
    maxConcurrentReconciles: o.maxConcurrentReconciles,
    reconcile: async (key) => {
      try {
        return await reconcile(key);
      } catch (e) {
        // No HTTP status: the cluster could not be reached. Watch for its return so every key is retried then,
        // instead of each waiting out its own backoff (which grows toward 1000 s the longer the outage lasts).
        if (typeof (e as { code?: unknown }).code !== 'number') void watchForRecovery();
        throw e;
      }
    },
  });
  let stopped = false;
  let probing = false;
  const version = o.cluster.makeApiClient(VersionApi);
  const watchForRecovery = async () => {
    if (probing) return;
    probing = true;
    try {
      for (;;) {
        await sleep(realClock, RECOVERY_PROBE_MS);
        if (stopped) return;
        try {
          await version.getCode();
          break;
        } catch {
          // still unreachable
        }
      }
      logger.info('cluster reachable again: reconciling every Website');
      for (const k of allKeys()) controller.enqueue(k);
    } finally {
      probing = false;
    }
  };
  const allKeys = () => o.storage.list(prefix).items.map((w) => objectKey(w.metadata.namespace ?? '', w.metadata.name ?? ''));
  const children: ClusterChildren = clusterChildren(o.cluster, (k) => controller.enqueue(k), logger);
  const reconcile = websiteReconciler({ store: o.websites, cluster: children, images: o.images, logger });
  const feed = watchStoreKeys(o.storage, prefix, (k) => controller.enqueue(k), logger);
  const cancelResync = controller.resync(o.resyncPeriodMs, allKeys);
  return {
    synced: () => children.synced(),
    async stop() {
      stopped = true;
      cancelResync();
      feed.stop();
      await controller.stop();
      await children.stop();
    },
  };
}
