/**
 * @module controllers/standalone-status
 * What the store records in place of the reconcilers when no cluster is configured. Kept apart from the manager
 * so that a standalone server never loads the cluster client.
 */
import type { Website } from '../apis/website/v1alpha1.js';
import type { SystemStatus } from '../registry/store.js';
import { noClusterStatus } from './website/status.js';

/** standaloneStatus is the status each kind gets from the server itself when no cluster is configured. */
export const standaloneStatus: SystemStatus = (obj) => (obj.kind === 'Website' ? noClusterStatus(obj as Website) : undefined);
