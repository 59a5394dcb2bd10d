/**
 * @module kinds/website/controllers/reconciler
 * One reconcile of one Website (controller-runtime semantics: level-based, idempotent, errors retried with backoff):
 *   deleted?  → delete both children, wait until they are gone, then drop our finalizer (the store deletes it);
 *   otherwise → finalizer first, server-side apply of the Deployment and the Service (force: drift is reverted),
 *               status written through /status only when it changed, Events for what changed.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { KubeObject } from '../../../apis/meta/types.js';
import type { Website } from '../v1.js';
import type { ResourceStore } from '../../../registry/store.js';
import { splitKey } from '../../../controllers/store-source.js';
import { childName, desiredDeployment, desiredService, FIELD_MANAGER, type Images } from './children.js';
import { websiteStatus, type ObservedDeployment, type ObservedPod, type ObservedService } from './status.js';
import { isNotFound } from '../../../apis/meta/errors.js';

export const CLEANUP_FINALIZER = 'extensions.example.com/cleanup';

/** Child is what the cluster returns for an applied or read child. */
export type Child = KubeObject & ObservedDeployment & ObservedService;

/** ChildClient is the reconciler's view of the cluster (client-node in production, a fake in unit tests). */
export interface ChildClient {
  /** cached returns the child as the informer last saw it (undefined if absent). */
  cached(kind: 'Deployment' | 'Service', namespace: string, name: string): Child | undefined;
  apply(kind: 'Deployment' | 'Service', body: object): Promise<Child>;
  /** pods returns the Website's pods as the informer last saw them. */
  pods(namespace: string, website: string): ObservedPod[];
  /** remove deletes the child; resolves true once it is gone (a 404 counts as gone). */
  remove(kind: 'Deployment' | 'Service', namespace: string, name: string): Promise<boolean>;
  event(w: Website, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void>;
}

export interface WebsiteReconcilerOptions {
  store: ResourceStore;
  cluster: ChildClient;
  images: Images;
  logger: Logger;
  /** How soon to look again while children are being deleted. */
  deletePollMs?: number;
}

const WRITE = { dryRun: false, fieldValidation: 'Ignore' as const, manager: FIELD_MANAGER };
const MERGE = 'application/merge-patch+json';

/** ReconcileResult asks for a later look without counting as a failure. */
// biome-ignore lint/suspicious/noConfusingVoidType: a reconciler that never requeues is a plain async function returning nothing
export type ReconcileResult = { requeueAfter?: number } | void;

/** websiteReconciler returns the reconcile function for keys `namespace/name`. */
export function websiteReconciler(o: WebsiteReconcilerOptions): (key: string) => Promise<ReconcileResult> {
  const { store, cluster } = o;
  const read = async (ns: string, name: string): Promise<Website | undefined> => {
    try {
      return (await store.get(ns, name)) as Website;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  };
  // A PUT of /status replaces the whole status (a field that no longer applies, like nodePort, goes) and carries the
  // resourceVersion read, so a stale write is a conflict the queue retries.
  const writeStatus = async (w: Website, status: Website['status']) => {
    if (isDeepStrictEqual(w.status, status)) return;
    await store.update(w.metadata.namespace, w.metadata.name ?? '', { ...w, status }, 'status', WRITE);
  };
  const setFinalizers = async (w: Website, finalizers: string[]) =>
    (
      await store.patch(
        w.metadata.namespace,
        w.metadata.name ?? '',
        MERGE,
        { metadata: { finalizers, resourceVersion: w.metadata.resourceVersion } },
        'main',
        WRITE,
      )
    ).object as Website;

  return async (key) => {
    const { namespace, name } = splitKey(key);
    let w = await read(namespace, name);
    if (!w) return; // gone: its children are gone too (finalizer), or the garbage collector takes them
    const finalizers = w.metadata.finalizers ?? [];
    const child = childName(w);
    if (w.metadata.deletionTimestamp) {
      if (!finalizers.includes(CLEANUP_FINALIZER)) return;
      const [deploymentGone, serviceGone] = await Promise.all([cluster.remove('Deployment', namespace, child), cluster.remove('Service', namespace, child)]);
      if (!deploymentGone || !serviceGone) return { requeueAfter: o.deletePollMs ?? 1000 };
      await cluster.event(w, 'Normal', 'DeletedChildren', `Deployment and Service ${child} deleted`);
      await setFinalizers(
        w,
        finalizers.filter((f) => f !== CLEANUP_FINALIZER),
      );
      return;
    }
    // The finalizer goes on before any child exists, so no child can outlive its Website.
    if (!finalizers.includes(CLEANUP_FINALIZER)) w = await setFinalizers(w, [...finalizers, CLEANUP_FINALIZER]);
    try {
      const before = { d: cluster.cached('Deployment', namespace, child), s: cluster.cached('Service', namespace, child) };
      const deployment = await cluster.apply('Deployment', desiredDeployment(w, o.images));
      const service = await cluster.apply('Service', desiredService(w));
      for (const [kind, prev, now] of [
        ['Deployment', before.d, deployment],
        ['Service', before.s, service],
      ] as const) {
        if (!prev) await cluster.event(w, 'Normal', `Created${kind}`, `${kind} ${child} created`);
        else if (!isDeepStrictEqual((prev as { spec?: unknown }).spec, (now as { spec?: unknown }).spec)) {
          await cluster.event(w, 'Normal', `Updated${kind}`, `${kind} ${child} updated`);
        }
      }
      await writeStatus(w, websiteStatus(w, { deployment, service, pods: cluster.pods(namespace, name) }));
    } catch (e) {
      // fetch failures say only "fetch failed"; the cause (ECONNREFUSED, a TLS error) is what an operator needs.
      const cause = (e as { cause?: { message?: string } }).cause?.message;
      const message = `${(e as Error).message ?? String(e)}${cause ? `: ${cause}` : ''}`;
      o.logger.warn({ key, err: message }, 'reconcile failed');
      await cluster.event(w, 'Warning', 'ReconcileFailed', message).catch(() => undefined);
      const current = await read(namespace, name);
      if (current) {
        await writeStatus(
          current,
          websiteStatus(current, {
            deployment: cluster.cached('Deployment', namespace, child),
            service: cluster.cached('Service', namespace, child),
            pods: cluster.pods(namespace, name),
            error: message,
          }),
        ).catch(() => undefined);
      }
      throw e;
    }
  };
}
