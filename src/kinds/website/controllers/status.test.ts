import { describe, expect, it } from 'vitest';
import type { Website } from '../v1.js';
import { websiteV1 } from '../index.js';
import { ResourceStore } from '../../../registry/store.js';
import { MemoryStorage } from '../../../storage/memory-storage.js';
import { noClusterStatus, websiteStatus, type ObservedDeployment } from './status.js';

const site = (status?: Website['status']): Website => ({
  apiVersion: 'extensions.example.com/v1',
  kind: 'Website',
  metadata: { name: 'kubia', namespace: 'team', uid: 'u', generation: 4 },
  spec: { replicas: 2, git: { repository: 'https://example.com/r.git', syncIntervalSeconds: 60 }, service: { type: 'NodePort' } },
  ...(status ? { status } : {}),
});
const deployment = (ready: number, updated = 2, extra: Partial<NonNullable<ObservedDeployment['status']>> = {}): ObservedDeployment => ({
  metadata: { generation: 7 },
  spec: { replicas: 2 },
  status: { observedGeneration: 7, replicas: 2, readyReplicas: ready, updatedReplicas: updated, ...extra },
});
const service = { spec: { type: 'NodePort', ports: [{ nodePort: 30123 }] } };
const cond = (s: ReturnType<typeof websiteStatus>, type: string) => s.conditions?.find((c) => c.type === type);
const T0 = new Date('2026-11-21T10:00:00.123Z');
const T1 = new Date('2026-11-21T10:05:00Z');

describe('Website status', () => {
  it('reports generation, replicas, selector, children and the nodePort', () => {
    const s = websiteStatus(site(), { deployment: deployment(2), service }, T0);
    expect(s).toMatchObject({
      observedGeneration: 4,
      replicas: 2,
      readyReplicas: 2,
      deployment: 'kubia-website',
      service: 'kubia-website',
      nodePort: 30123,
      selector: 'app.kubernetes.io/instance=kubia,app.kubernetes.io/name=website',
    });
    expect(cond(s, 'Ready')).toMatchObject({ status: 'True', reason: 'Available', observedGeneration: 4, lastTransitionTime: '2026-11-21T10:00:00Z' });
    expect(cond(s, 'Progressing')).toMatchObject({ status: 'False', reason: 'RolloutComplete' });
    expect(cond(s, 'Degraded')).toMatchObject({ status: 'False' });
  });

  it('is not Ready while replicas are not ready, and Progressing while the rollout runs', () => {
    const s = websiteStatus(site(), { deployment: deployment(1, 1), service }, T0);
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'ReplicasNotReady', message: '1/2 replicas ready' });
    expect(cond(s, 'Progressing')).toMatchObject({ status: 'True', reason: 'RollingOut' });
  });

  it('says which child is missing, and is Degraded on a reconcile error or a stalled rollout', () => {
    expect(cond(websiteStatus(site(), { deployment: undefined, service }, T0), 'Ready')).toMatchObject({ status: 'False', reason: 'ChildrenMissing' });
    expect(cond(websiteStatus(site(), { deployment: deployment(2), service, error: 'boom' }, T0), 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ReconcileError',
      message: 'boom',
    });
    const stalled = deployment(0, 0, { conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'too slow' }] });
    expect(cond(websiteStatus(site(), { deployment: stalled, service }, T0), 'Degraded')).toMatchObject({ status: 'True', reason: 'ProgressDeadlineExceeded' });
  });

  it('keeps lastTransitionTime while a condition keeps its status, and moves it when the status flips', () => {
    const first = websiteStatus(site(), { deployment: deployment(2), service }, T0);
    const same = websiteStatus(site(first), { deployment: deployment(2), service }, T1);
    expect(cond(same, 'Ready')?.lastTransitionTime).toBe('2026-11-21T10:00:00Z');
    const flipped = websiteStatus(site(first), { deployment: deployment(0), service }, T1);
    expect(cond(flipped, 'Ready')?.lastTransitionTime).toBe('2026-11-21T10:05:00Z');
  });

  it("sets only its own condition types on the current list, keeping a client's in place", () => {
    const custom = {
      type: 'Custom',
      status: 'False' as const,
      reason: 'Waiting',
      message: 'm',
      lastTransitionTime: '2026-11-20T09:00:00Z',
      observedGeneration: 3,
    };
    const s = websiteStatus(site({ conditions: [custom] }), { deployment: deployment(2), service }, T0);
    expect(s.conditions?.map((c) => c.type)).toEqual(['Custom', 'Ready', 'Progressing', 'Degraded']);
    expect(s.conditions?.[0]).toEqual(custom);
    expect(noClusterStatus(site({ conditions: [custom] }), T0).conditions?.[0]).toEqual(custom);
  });

  it('drops the nodePort once the Service has none', () => {
    const s = websiteStatus(site({ nodePort: 30123 }), { deployment: deployment(2), service: { spec: { type: 'ClusterIP', ports: [{}] } } }, T0);
    expect(s.nodePort).toBeUndefined();
  });

  it('standalone: a spec change rewrites NoCluster and keeps a condition a client wrote through /status', async () => {
    const store = new ResourceStore(websiteV1, new MemoryStorage(), { standalone: true });
    const opts = { dryRun: false, fieldValidation: 'Strict' as const, manager: 'test' };
    await store.create(
      'ns',
      { apiVersion: 'extensions.example.com/v1', kind: 'Website', metadata: { name: 'w' }, spec: { git: { repository: 'https://example.com/r.git' } } },
      opts,
    );
    const w = (await store.get('ns', 'w')) as Website;
    expect(w.status?.conditions?.map((c) => c.type)).toEqual(['Ready', 'Progressing', 'Degraded']);
    const custom = {
      type: 'Custom',
      status: 'True' as const,
      reason: 'ByHand',
      message: 'set by a client',
      lastTransitionTime: '2026-11-20T10:00:00Z',
      observedGeneration: 1,
    };
    await store.update('ns', 'w', { ...w, status: { ...w.status, conditions: [...(w.status?.conditions ?? []), custom] } }, 'status', opts);
    await store.patch('ns', 'w', 'application/merge-patch+json', { spec: { replicas: 2 } }, 'main', opts);
    const after = (await store.get('ns', 'w')) as Website;
    expect(after.status?.observedGeneration).toBe(2);
    expect(after.status?.conditions?.map((c) => c.type)).toEqual(['Ready', 'Progressing', 'Degraded', 'Custom']);
    expect(after.status?.conditions?.find((c) => c.type === 'Custom')).toEqual(custom);
    expect(after.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ reason: 'NoCluster', observedGeneration: 2 });
  });

  it('standalone: Ready=False with reason NoCluster', () => {
    const s = noClusterStatus(site(), T0);
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'NoCluster' });
    expect(s.observedGeneration).toBe(4);
  });
});
