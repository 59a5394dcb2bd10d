/**
 * @module kinds/website
 * The Website kind as the server registers it: stored and preferred in v1, also served in v1alpha1 (converted in
 * code, `conversion.ts`), the status the server writes itself when no cluster is configured (the NoCluster status
 * its controllers would otherwise replace), and its controllers (`controllers/registration.ts`).
 */
import type { Kind } from '../../registry/kind-controller.js';
import type { ResourceDefinition } from '../../registry/resource.js';
import { v1alpha1Conversion } from './conversion.js';
import { websiteControllers } from './controllers/registration.js';
import { noClusterStatus } from './controllers/status.js';
import { websiteDefinition as v1, type Website } from './v1.js';
import { websiteDefinition as v1alpha1 } from './v1alpha1.js';

/** websiteV1 is the storage version's definition, with the status written without a cluster. */
export const websiteV1: ResourceDefinition<Website> = { ...v1, standaloneStatus: (w) => noClusterStatus(w) };

/** website is the Website kind, ready for the kinds list. */
export const website: Kind<Website> = {
  storage: websiteV1,
  converted: [{ definition: v1alpha1, conversion: v1alpha1Conversion }],
  controllers: websiteControllers,
};
