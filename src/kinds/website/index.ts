/**
 * @module kinds/website
 * The Website kind as the server registers it: its served version (v1alpha1: types, schema, printer columns,
 * validation) and what the server does for it itself when no cluster is configured (the NoCluster status its
 * controllers would otherwise replace). Its controllers are in `controllers/`.
 */
import { noClusterStatus } from './controllers/status.js';
import { websiteDefinition, type Website } from './v1alpha1.js';
import type { ResourceDefinition } from '../../registry/resource.js';

/** website is the Website kind, ready for the kinds list. */
export const website: ResourceDefinition<Website> = {
  ...websiteDefinition,
  standaloneStatus: (w) => noClusterStatus(w),
};
