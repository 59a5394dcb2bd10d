import { describe, expect, it } from 'vitest';
import type { Website } from '../v1.js';
import { noClusterStatus, websiteStatus, type ObservedDeployment } from './status.js';

const site = (status?: Website['status']): Website => ({
  apiVersion: 'extensions.example.com/v1', kind: 'Website',
  metadata: { name: 'kubia', namespace: 'team', uid: 'u', generation: 4 },
  spec: { replicas: 2, git: { repository: 'https://example.com/r.git', syncIntervalSeconds: 60 }, service: { type: 'NodePort' } },
  ...(status ? { status } : {}),
});
const deployment = (ready: number, updated = 2, extra: Partial<NonNullable<ObservedDeployment['status']>> = {}): ObservedDeployment => ({
  metadata: { generation: 7 }, spec: { replicas: 2 },
  status: { observedGeneration: 7, replicas: 2, readyReplicas: ready, updatedReplicas: updated, ...extra },
});
const service = { spec: { type: 'NodePort', ports: [{ nodePort: 30123 }] } };
const cond = (s: ReturnType<typeof websiteStatus>, type: string) => s.conditions?.find((c) => c.type === type);
const T0 = new Date('2026-11-21T10:00:00.123Z');
const T1 = new Date('2026-11-21T10:05:00Z');

describe('Website status', () => {
  it('reports generation, replicas, selector, children and the nodePort', () => {
    const s = websiteStatus(site(), { deployment: deployment(2), service }, T0);
    expect(s).toMatchObject({ observedGeneration: 4, replicas: 2, readyReplicas: 2, deployment: 'kubia-website', service: 'kubia-website', nodePort: 30123, selector: 'app.kubernetes.io/instance=kubia,app.kubernetes.io/name=website' });
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
    expect(cond(websiteStatus(site(), { deployment: deployment(2), service, error: 'boom' }, T0), 'Degraded')).toMatchObject({ status: 'True', reason: 'ReconcileError', message: 'boom' });
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

  it('standalone: Ready=False with reason NoCluster', () => {
    const s = noClusterStatus(site(), T0);
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'NoCluster' });
    expect(s.observedGeneration).toBe(4);
  });
});
