/**
 * @module registry/kind-controller
 * What a kind declares about its controllers (controller-runtime's "controllers added to the manager"), so the
 * generic manager, the command line and the manifests can run, configure and authorize them without knowing the
 * kind: a name, whether they need a cluster, their flags, the RBAC rules their work needs, and a lazy loader.
 * The controller code itself stays in the kind's folder and is imported only when it runs.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { KubeObject } from '../apis/meta/types.js';
import type { KindDefinition } from './resource.js';
import type { ResourceStore } from './store.js';

/** ControllerContext is what the manager gives a kind's controller when it starts. */
export interface ControllerContext {
  /** The cluster to reconcile against; undefined in standalone mode (only controllers that need none run then). */
  cluster: KubeConfig | undefined;
  /** enqueue asks for a reconcile of `namespace/name` (`name` for a cluster-scoped kind): the kind's own sources. */
  enqueue(key: string): void;
  logger: Logger;
}

/** RunningController is a kind's started controller: its reconcile function and its own sources. */
export interface RunningController {
  /** reconcile brings one object to its desired state; `requeueAfter` (ms) asks for a later look. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a reconciler that never requeues is a plain async function returning nothing
  reconcile(key: string): Promise<{ requeueAfter?: number } | void>;
  /** synced: the controller's own sources have listed. */
  synced(): boolean;
  stop(): Promise<void>;
}

/**
 * KindController is one kind's controller as the manager runs it: the manager feeds it the keys of the kind's
 * objects (from the store's change feed, a periodic resync and, once an unreachable cluster answers again, all of
 * them), with controller-runtime's queue semantics; the kind supplies the reconcile function.
 */
export interface KindController {
  /** name of the controller in logs and metrics (`website`). */
  name: string;
  /** store of the kind whose objects it reconciles (its storage version). */
  store: ResourceStore;
  start(ctx: ControllerContext): RunningController;
}

/** KindFlag is a command-line flag a kind's controllers take (`--nginx-image`); its environment variable follows. */
export interface KindFlag {
  name: string;
  default: string;
  help: string;
}

/** PolicyRule is an RBAC rule (rbac.authorization.k8s.io/v1). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * Kind is a kind as the kinds list registers it: its versions (KindDefinition: what the API serves) and its
 * controllers, which the manager runs on objects of the storage version.
 */
export interface Kind<Hub extends KubeObject = KubeObject> extends KindDefinition<Hub> {
  controllers?: ControllerRegistration;
}

/** ControllerRegistration is a kind's controllers as registered with the kind. */
export interface ControllerRegistration {
  /** name in logs and metrics. */
  name: string;
  /** needsCluster: they reconcile against a real cluster; without one they do not run (the kind's standaloneStatus stands in). */
  needsCluster: boolean;
  /** Their flags, registered on the command line beside the server's. */
  flags?: readonly KindFlag[];
  /** The rules their work needs in the cluster: the server's ClusterRole in the manifests grants them. */
  clusterRules?: readonly PolicyRule[];
  /** load imports the controller code (only when it runs) and returns how to build it for the kind's store. */
  load(): Promise<(store: ResourceStore, flags: ReadonlyMap<string, string>) => KindController>;
}
