/**
 * @module kinds/website/controllers/status
 * What a Website's status says, computed from its children as observed in the cluster. Conditions follow
 * metav1.Condition rules: lastTransitionTime moves only when a condition's status changes.
 */
import { mergeConditions, type NewCondition } from '../../../apis/meta/conditions.js';
import type { Website, WebsiteStatus } from '../v1.js';
import { rfc3339 } from '../../../apis/meta/go-time.js';
import { childName, selectorString } from './children.js';

/** ObservedDeployment is the part of an apps/v1 Deployment the status reads. */
export interface ObservedDeployment {
  metadata?: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/** ObservedService is the part of a v1 Service the status reads. */
export interface ObservedService {
  spec?: { type?: string; ports?: { nodePort?: number }[] };
}

/** ContainerTermination is a v1 ContainerStateTerminated. */
interface ContainerTermination {
  exitCode?: number;
  reason?: string;
  message?: string;
}

/** ObservedPod is the part of a v1 Pod the status reads. */
export interface ObservedPod {
  metadata?: { name?: string; deletionTimestamp?: string };
  status?: {
    conditions?: { type: string; status: string }[];
    containerStatuses?: {
      name: string;
      ready?: boolean;
      restartCount?: number;
      state?: { terminated?: ContainerTermination };
      lastState?: { terminated?: ContainerTermination };
    }[];
  };
}

/** Observed is what the reconciler saw; `error` is the failure of this reconcile, if any. */
export interface Observed {
  deployment: ObservedDeployment | undefined;
  service: ObservedService | undefined;
  /** The Website's pods (their git-sync containers say why content is missing). */
  pods?: ObservedPod[];
  error?: string;
}

const MAX_MESSAGE = 1024;

/**
 * gitSyncError turns git-sync's last log lines (the termination message kubelet keeps with FallbackToLogsOnError) into
 * one line: git-sync logs JSON objects, and the last one with an `error` says what failed.
 */
export function gitSyncError(message: string): string {
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  for (const line of [...lines].reverse()) {
    try {
      const o = JSON.parse(line) as { msg?: unknown; error?: unknown };
      if (typeof o.error === 'string' && o.error !== '') {
        const text = typeof o.msg === 'string' && o.msg !== '' ? `${o.msg}: ${o.error}` : o.error;
        return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 3)}...` : text;
      }
    } catch {
      // not a JSON line
    }
  }
  const last = lines.at(-1) ?? '';
  return last.length > MAX_MESSAGE ? `${last.slice(0, MAX_MESSAGE - 3)}...` : last;
}

/**
 * gitSyncFailure is git-sync's own account of a persistent failure, from a pod that is not ready (no content to
 * serve) and whose git-sync container last exited with an error; undefined when no pod is in that state.
 */
export function gitSyncFailure(pods: ObservedPod[] | undefined): string | undefined {
  for (const pod of pods ?? []) {
    if (pod.metadata?.deletionTimestamp) continue;
    if (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
    const cs = pod.status?.containerStatuses?.find((c) => c.name === 'git-sync');
    const term = cs?.state?.terminated ?? cs?.lastState?.terminated;
    if (!term?.exitCode) continue;
    const why = gitSyncError(term.message ?? '') || term.reason || `exit code ${term.exitCode}`;
    return `git-sync in pod ${pod.metadata?.name ?? ''} exited with code ${term.exitCode}: ${why}`;
  }
  return undefined;
}

type Cond = NewCondition;

/** conditionsFor derives Ready, Progressing and Degraded. */
export function conditionsFor(w: Website, o: Observed): Cond[] {
  const d = o.deployment;
  const want = w.spec.replicas;
  const ready = d?.status?.readyReplicas ?? 0;
  const updated = d?.status?.updatedReplicas ?? 0;
  const caughtUp = !!d && (d.status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0);
  const rolledOut = caughtUp && updated >= want && ready >= want && (d?.status?.replicas ?? 0) <= want;
  const stalled = d?.status?.conditions?.find(
    (c) => (c.type === 'Progressing' && c.status === 'False') || (c.type === 'ReplicaFailure' && c.status === 'True'),
  );
  const isReady = !!d && !!o.service && ready >= want && !o.error;
  const syncFailure = gitSyncFailure(o.pods);
  const degraded: Cond = o.error
    ? { type: 'Degraded', status: 'True', reason: 'ReconcileError', message: o.error }
    : syncFailure
      ? { type: 'Degraded', status: 'True', reason: 'GitSyncFailed', message: syncFailure }
      : stalled
        ? { type: 'Degraded', status: 'True', reason: stalled.reason ?? 'DeploymentFailing', message: stalled.message ?? '' }
        : { type: 'Degraded', status: 'False', reason: 'AsExpected', message: 'the Deployment and Service are as specified' };
  return [
    isReady
      ? { type: 'Ready', status: 'True', reason: 'Available', message: `${ready}/${want} replicas ready` }
      : {
          type: 'Ready',
          status: 'False',
          reason: !d || !o.service ? 'ChildrenMissing' : 'ReplicasNotReady',
          message: !d || !o.service ? 'the Deployment or Service does not exist yet' : `${ready}/${want} replicas ready`,
        },
    rolledOut
      ? { type: 'Progressing', status: 'False', reason: 'RolloutComplete', message: `${updated} updated replicas` }
      : { type: 'Progressing', status: 'True', reason: 'RollingOut', message: `${updated}/${want} replicas updated, ${ready} ready` },
    degraded,
  ];
}

/**
 * websiteStatus is the status to write through /status: the fields the reconciler computes, and its three condition
 * types set on the current list. Anything else a client wrote through /status (another condition type) stays.
 */
export function websiteStatus(w: Website, o: Observed, now: Date = new Date()): WebsiteStatus {
  const generation = w.metadata.generation ?? 0;
  const nodePort = o.service?.spec?.ports?.[0]?.nodePort;
  // nodePort is ours too: it goes when the Service no longer has one.
  const others: WebsiteStatus = { ...w.status };
  delete others.nodePort;
  return {
    ...others,
    observedGeneration: generation,
    replicas: o.deployment?.status?.replicas ?? 0,
    readyReplicas: o.deployment?.status?.readyReplicas ?? 0,
    selector: selectorString(w),
    deployment: childName(w),
    service: childName(w),
    ...(nodePort ? { nodePort } : {}),
    conditions: mergeConditions(w.status?.conditions, conditionsFor(w, o), generation, rfc3339(now)),
  };
}

/**
 * noClusterStatus is the status of every Website when no cluster is configured (standalone): observedGeneration and
 * the three NoCluster conditions; every other field and condition stays as it was.
 */
export function noClusterStatus(w: Website, now: Date = new Date()): WebsiteStatus {
  const generation = w.metadata.generation ?? 0;
  const message = 'no cluster is configured (standalone mode): nothing runs this website';
  return {
    ...w.status,
    observedGeneration: generation,
    conditions: mergeConditions(
      w.status?.conditions,
      [
        { type: 'Ready', status: 'False', reason: 'NoCluster', message },
        { type: 'Progressing', status: 'False', reason: 'NoCluster', message },
        { type: 'Degraded', status: 'False', reason: 'NoCluster', message },
      ],
      generation,
      rfc3339(now),
    ),
  };
}
