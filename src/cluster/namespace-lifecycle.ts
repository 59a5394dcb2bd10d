/**
 * @module cluster/namespace-lifecycle
 * What kube-apiserver's NamespaceLifecycle admission does for built-in resources, which proxied requests skip:
 * nothing is created in a namespace that does not exist (404) or is being deleted (403 NamespaceTerminating).
 * Namespaces come from an informer, not a call per request; a namespace the informer has not seen yet (created a
 * moment ago) is looked up once live before the create is refused, as the admission plugin does.
 */
import { CoreV1Api, type KubeConfig, type V1Namespace } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { forbidden, notFound, type GroupResource } from '../apis/meta/errors.js';
import { startInformer, type RunningInformer } from './informer.js';
import { isNotFound } from '../apis/meta/errors.js';

/** NamespaceLifecycle guards creates; `synced` feeds readiness. */
export interface NamespaceLifecycle {
  admitCreate(namespace: string, gr: GroupResource, name: string): Promise<void>;
  synced(): boolean;
  stop(): Promise<void>;
}

/** NAMESPACE_TERMINATING_CAUSE is corev1.NamespaceTerminatingCause. */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

/** namespaceLifecycle starts the namespace informer. */
export function namespaceLifecycle(kc: KubeConfig, logger: Logger): NamespaceLifecycle {
  const core = kc.makeApiClient(CoreV1Api);
  const informer: RunningInformer<V1Namespace> = startInformer<V1Namespace>({
    kc,
    name: 'namespaces',
    path: '/api/v1/namespaces',
    list: () => core.listNamespace(),
    logger,
  });
  const lookup = async (namespace: string): Promise<V1Namespace | undefined> => {
    const cached = informer.cache.get(namespace);
    if (cached) return cached;
    try {
      return await core.readNamespace({ name: namespace });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  };
  return {
    async admitCreate(namespace, gr, name) {
      const ns = await lookup(namespace);
      if (!ns) throw notFound({ group: '', resource: 'namespaces' }, namespace);
      if (ns.status?.phase === 'Terminating' || ns.metadata?.deletionTimestamp) {
        const message = `unable to create new content in namespace ${namespace} because it is being terminated`;
        throw forbidden(gr, name, message, [
          { reason: NAMESPACE_TERMINATING_CAUSE, message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' },
        ]);
      }
    },
    synced: informer.synced,
    stop: informer.stop,
  };
}
