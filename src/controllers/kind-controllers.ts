/**
 * @module controllers/kind-controllers
 * Which kinds' controllers run in this process and their construction: with a cluster all of them, without one
 * those that need none (the others' kinds get the status the server writes itself), none with
 * --enable-reconcilers=false. Each controller's code is imported only here, when it runs.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Kind, KindController } from '../registry/kind-controller.js';
import type { ResourceStore } from '../registry/store.js';

/** KindControllersOptions says what the process has: a cluster or not, the switch, the stores and the flag values. */
export interface KindControllersOptions {
  cluster: KubeConfig | undefined;
  enabled: boolean;
  /** storeOf is the kind's store in its storage version (the server's own). */
  storeOf(kind: Kind): ResourceStore;
  flags: ReadonlyMap<string, string>;
}

/** kindControllers builds the controllers to run and says why each other one does not. */
export async function kindControllers(
  kinds: readonly Kind[],
  o: KindControllersOptions,
): Promise<{ controllers: KindController[]; off: { controller: string; kind: string; why: string }[] }> {
  const controllers: KindController[] = [];
  const off: { controller: string; kind: string; why: string }[] = [];
  for (const kind of kinds) {
    const reg = kind.controllers;
    if (!reg) continue;
    if (!o.enabled) off.push({ controller: reg.name, kind: kind.storage.kind, why: '--enable-reconcilers=false' });
    else if (reg.needsCluster && !o.cluster) off.push({ controller: reg.name, kind: kind.storage.kind, why: 'no cluster is configured (standalone mode)' });
    else controllers.push((await reg.load())(o.storeOf(kind), o.flags));
  }
  return { controllers, off };
}
