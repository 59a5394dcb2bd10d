/**
 * @module kinds/website/controllers/cluster-children
 * The Website reconciler's cluster side with @kubernetes/client-node: informers on the Deployments, Services and pods it
 * manages (label app.kubernetes.io/managed-by=website-apiserver, all namespaces) that enqueue their owner when they
 * change (so drift is repaired), server-side apply, deletes and Events.
 */
import { hostname } from 'node:os';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig, type V1Deployment, type V1Pod, type V1Service } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { startInformer, type RunningInformer } from '../../../cluster/informer.js';
import { objectKey } from '../../../controllers/store-source.js';
import { FIELD_MANAGER, MANAGED_BY } from './children.js';
import type { Child, ChildClient } from './reconciler.js';
import type { ObservedPod } from './status.js';
import { isNotFound } from '../../../apis/meta/errors.js';

const SELECTOR = `app.kubernetes.io/managed-by=${MANAGED_BY}`;
const INSTANCE = 'app.kubernetes.io/instance';
const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

/** ClusterChildren is the ChildClient plus its informers' lifecycle. */
export interface ClusterChildren extends ChildClient {
  synced(): boolean;
  stop(): Promise<void>;
}

/** clusterChildren starts the informers; `enqueue` receives `namespace/website` keys of changed children. */
export function clusterChildren(kc: KubeConfig, enqueue: (key: string) => void, logger: Logger): ClusterChildren {
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const owner = (o: V1Deployment | V1Service | V1Pod) => {
    const instance = o.metadata?.labels?.[INSTANCE];
    if (instance && o.metadata?.namespace) enqueue(objectKey(o.metadata.namespace, instance));
  };
  const deployments: RunningInformer<V1Deployment> = startInformer<V1Deployment>({
    kc,
    name: 'website-deployments',
    path: '/apis/apps/v1/deployments',
    labelSelector: SELECTOR,
    logger,
    onChange: owner,
    list: () => apps.listDeploymentForAllNamespaces({ labelSelector: SELECTOR }),
  });
  const services: RunningInformer<V1Service> = startInformer<V1Service>({
    kc,
    name: 'website-services',
    path: '/api/v1/services',
    labelSelector: SELECTOR,
    logger,
    onChange: owner,
    list: () => core.listServiceForAllNamespaces({ labelSelector: SELECTOR }),
  });
  // Pods only for their status: git-sync's failures show nowhere else. Enqueuing on every change is cheap (the
  // queue dedupes) and is what turns Degraded on when git-sync gives up.
  const pods: RunningInformer<V1Pod> = startInformer<V1Pod>({
    kc,
    name: 'website-pods',
    path: '/api/v1/pods',
    labelSelector: SELECTOR,
    logger,
    onChange: owner,
    list: () => core.listPodForAllNamespaces({ labelSelector: SELECTOR }),
  });
  const reporter = hostname();
  return {
    cached(kind, namespace, name) {
      return (kind === 'Deployment' ? deployments : services).cache.get(name, namespace) as Child | undefined;
    },
    async apply(kind, body) {
      const b = body as { metadata: { name: string; namespace: string } };
      const args = { name: b.metadata.name, namespace: b.metadata.namespace, fieldManager: FIELD_MANAGER, force: true };
      const out =
        kind === 'Deployment'
          ? await apps.patchNamespacedDeployment({ ...args, body: body as V1Deployment }, apply)
          : await core.patchNamespacedService({ ...args, body: body as V1Service }, apply);
      return out as unknown as Child;
    },
    pods(namespace, website) {
      return pods.cache.list(namespace).filter((p) => p.metadata?.labels?.[INSTANCE] === website) as ObservedPod[];
    },
    async remove(kind, namespace, name) {
      try {
        if (kind === 'Deployment') await apps.deleteNamespacedDeployment({ name, namespace, propagationPolicy: 'Background' });
        else await core.deleteNamespacedService({ name, namespace, propagationPolicy: 'Background' });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
      try {
        if (kind === 'Deployment') await apps.readNamespacedDeployment({ name, namespace });
        else await core.readNamespacedService({ name, namespace });
        return false;
      } catch (e) {
        if (isNotFound(e)) return true;
        throw e;
      }
    },
    async event(w, type, reason, message) {
      const now = new Date();
      try {
        await core.createNamespacedEvent({
          namespace: w.metadata.namespace ?? 'default',
          body: {
            metadata: { generateName: `${w.metadata.name}.`, namespace: w.metadata.namespace },
            involvedObject: {
              apiVersion: w.apiVersion,
              kind: 'Website',
              name: w.metadata.name,
              namespace: w.metadata.namespace,
              uid: w.metadata.uid,
              resourceVersion: w.metadata.resourceVersion,
            },
            type,
            reason,
            message,
            count: 1,
            firstTimestamp: now,
            lastTimestamp: now,
            source: { component: MANAGED_BY },
            reportingComponent: MANAGED_BY,
            reportingInstance: reporter,
          },
        });
      } catch (e) {
        // Events are best effort, as client-go's recorder treats them.
        logger.warn({ reason, err: (e as Error).message }, 'could not record an Event');
      }
    },
    synced: () => deployments.synced() && services.synced() && pods.synced(),
    async stop() {
      await Promise.all([deployments.stop(), services.stop(), pods.stop()]);
    },
  };
}
