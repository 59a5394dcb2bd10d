/**
 * @module controllers/manager
 * Runs the reconcilers in this process (controller-runtime's manager): each kind's controller fed by our own
 * store's change feed and by the kind's own sources (informers on the children it manages); a periodic resync; and,
 * when asked (leader-election.ts), only on the replica that leads. Without a cluster only the controllers that need
 * none run (cmd/run.ts leaves the others out): each such kind's standaloneStatus is what the store records instead.
 */
import { VersionApi, type KubeConfig } from '@kubernetes/client-node';

/** RECOVERY_PROBE_MS: how often an unreachable cluster is probed (GET /version) until it answers. */
const RECOVERY_PROBE_MS = 1000;
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Storage } from '../storage/interface.js';
import { realClock, sleep } from './clock.js';
import { startController, type Controller } from './controller.js';
import { controllerMetrics } from './metrics.js';
import { objectKey, watchStoreKeys } from './store-source.js';
import type { ControllerContext, KindController, RunningController } from '../registry/kind-controller.js';
export type { ControllerContext, KindController, RunningController };

export interface ManagerOptions {
  storage: Storage;
  /** The controllers to run, each kind's from its folder (`src/kinds/<kind>/controllers/`). */
  controllers: readonly KindController[];
  /** The cluster to reconcile against; undefined in standalone mode. */
  cluster: KubeConfig | undefined;
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

/** startManager starts every kind's controller and its sources. */
export function startManager(o: ManagerOptions): Manager {
  const logger = o.logger.child({ subsystem: 'controllers' });
  const metrics = controllerMetrics(o.registry);
  let stopped = false;
  let probing = false;
  const version = o.cluster?.makeApiClient(VersionApi);
  // No HTTP status: the cluster could not be reached. Watch for its return so every key is retried then, instead of
  // each waiting out its own backoff (which grows toward 1000 s the longer the outage lasts).
  const watchForRecovery = async () => {
    if (probing || !version) return;
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
      logger.info('cluster reachable again: reconciling every object');
      for (const r of running) {
        try {
          for (const k of await r.allKeys()) r.controller.enqueue(k);
        } catch (err) {
          // The next resync or change reaches these objects anyway.
          logger.error({ err, controller: r.controller.name }, 'listing the objects to reconcile failed');
        }
      }
    } finally {
      probing = false;
    }
  };
  const running = o.controllers.map((kc) => {
    const prefix = { resource: kc.store.key('', '').resource };
    const allKeys = async () => (await o.storage.list(prefix)).items.map((obj) => objectKey(obj.metadata.namespace ?? '', obj.metadata.name ?? ''));
    const log = logger.child({ controller: kc.name });
    // The kind's controller starts right after the queue it feeds: a key reaches reconcile only once `own` is set.
    let own: RunningController | undefined;
    const controller: Controller = startController({
      name: kc.name,
      clock: realClock,
      logger: log,
      metrics,
      maxConcurrentReconciles: o.maxConcurrentReconciles,
      reconcile: async (key) => {
        try {
          return await (own as RunningController).reconcile(key);
        } catch (e) {
          if (typeof (e as { code?: unknown }).code !== 'number') void watchForRecovery();
          throw e;
        }
      },
    });
    own = kc.start({ cluster: o.cluster, enqueue: (k) => controller.enqueue(k), logger: log });
    const feed = watchStoreKeys(o.storage, prefix, (k) => controller.enqueue(k), log);
    const cancelResync = controller.resync(o.resyncPeriodMs, allKeys);
    return { controller, started: own, allKeys, feed, cancelResync };
  });
  return {
    synced: () => running.every((r) => r.started.synced()),
    async stop() {
      stopped = true;
      for (const r of running) {
        r.cancelResync();
        r.feed.stop();
      }
      await Promise.all(
        running.map(async (r) => {
          await r.controller.stop();
          await r.started.stop();
        }),
      );
    },
  };
}
