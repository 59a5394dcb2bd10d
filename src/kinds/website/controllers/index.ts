/**
 * @module kinds/website/controllers
 * Website's controller as the manager runs it: the reconciler (reconciler.ts) over informers on the Deployments,
 * Services and pods it manages (cluster-children.ts). Loaded only when there is a cluster to reconcile against
 * (registration.ts declares it so).
 */
import type { KindController } from '../../../registry/kind-controller.js';
import type { ResourceStore } from '../../../registry/store.js';
import type { Images } from './children.js';
import { clusterChildren } from './cluster-children.js';
import { websiteReconciler } from './reconciler.js';

/** websiteController reconciles the Websites of `store` into nginx + git-sync Deployments and Services. */
export function websiteController(store: ResourceStore, images: Images): KindController {
  return {
    name: 'website',
    store,
    start: ({ cluster, enqueue, logger }) => {
      if (!cluster) throw new Error('the website controller needs a cluster');
      const children = clusterChildren(cluster, enqueue, logger);
      return {
        reconcile: websiteReconciler({ store, cluster: children, images, logger }),
        synced: () => children.synced(),
        stop: () => children.stop(),
      };
    },
  };
}
