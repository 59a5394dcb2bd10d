/**
 * @module kinds/website/controllers/registration
 * Website's controllers as registered with the kind: they need a cluster (they run Deployments and Services in it),
 * take the images of the pods they create as flags, and need these rules in the cluster. The controller code
 * (and @kubernetes/client-node's informers) loads only when it runs.
 */
import type { ControllerRegistration } from '../../../registry/kind-controller.js';
import { DEFAULT_IMAGES } from './children.js';

const READ = ['get', 'list', 'watch'];

/** websiteControllers is the registration the Website kind carries. */
export const websiteControllers: ControllerRegistration = {
  name: 'website',
  needsCluster: true,
  flags: [
    { name: 'nginx-image', default: DEFAULT_IMAGES.nginx, help: 'Image of the nginx container serving each website.' },
    { name: 'git-sync-image', default: DEFAULT_IMAGES.gitSync, help: "Image of the git-sync sidecar that keeps each website's content up to date." },
  ],
  clusterRules: [
    // One Deployment and one Service per Website, in the Website's namespace, written with server-side apply
    // (patch) and deleted when the Website goes.
    { apiGroups: ['apps'], resources: ['deployments'], verbs: [...READ, 'create', 'update', 'patch', 'delete'] },
    // Read-only: git-sync failures show only in the pods' container statuses, which become Degraded's reason.
    { apiGroups: [''], resources: ['pods'], verbs: READ },
    { apiGroups: [''], resources: ['services'], verbs: [...READ, 'create', 'update', 'patch', 'delete'] },
    // Events on Websites; client-go's recorder patches the count of a repeated event.
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch', 'update'] },
  ],
  load: async () => {
    const { websiteController } = await import('./index.js');
    return (store, flags) =>
      websiteController(store, {
        nginx: flags.get('nginx-image') ?? DEFAULT_IMAGES.nginx,
        gitSync: flags.get('git-sync-image') ?? DEFAULT_IMAGES.gitSync,
      });
  },
};
