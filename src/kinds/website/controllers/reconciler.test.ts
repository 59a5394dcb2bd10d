import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { websiteDefinition, type Website } from '../v1.js';
import { ResourceStore } from '../../../registry/store.js';
import { MemoryStorage } from '../../../storage/memory-storage.js';
import { DEFAULT_IMAGES } from './children.js';
import { CLEANUP_FINALIZER, websiteReconciler, type Child, type ChildClient } from './reconciler.js';
import type { ObservedPod } from './status.js';

// A cluster in memory: applied children are stored (SSA semantics reduced to "replace"), deletes can be held.
function fakeCluster() {
  const objects = new Map<string, Child>();
  const events: string[] = [];
  let rv = 0;
  let failApply: string | undefined;
  const held = new Set<string>();
  const pods = new Map<string, ObservedPod[]>();
  const id = (kind: string, ns: string, name: string) => `${kind}/${ns}/${name}`;
  const client: ChildClient = {
    cached: (kind, ns, name) => objects.get(id(kind, ns, name)),
    pods: (ns, website) => pods.get(`${ns}/${website}`) ?? [],
    async apply(kind, body) {
      if (failApply) throw new Error(failApply);
      const b = structuredClone(body) as Child;
      b.metadata.resourceVersion = String(++rv);
      if (kind === 'Service') (b as { spec: { ports: { nodePort?: number }[] } }).spec.ports[0]!.nodePort = 30080;
      objects.set(id(kind, b.metadata.namespace ?? '', b.metadata.name ?? ''), b);
      return b;
    },
    async remove(kind, ns, name) {
      if (held.has(id(kind, ns, name))) return false;
      objects.delete(id(kind, ns, name));
      return true;
    },
    async event(_w, type, reason) {
      events.push(`${type}/${reason}`);
    },
  };
  return {
    client,
    objects,
    events,
    hold: (k: string) => held.add(k),
    release: (k: string) => held.delete(k),
    failApply: (m?: string) => (failApply = m),
    setPods: (key: string, p: ObservedPod[]) => pods.set(key, p),
  };
}

const setup = () => {
  const store = new ResourceStore(websiteDefinition, new MemoryStorage());
  const cluster = fakeCluster();
  const reconcile = websiteReconciler({ store, cluster: cluster.client, images: DEFAULT_IMAGES, logger: pino({ level: 'silent' }), deletePollMs: 10 });
  const opts = { dryRun: false, fieldValidation: 'Strict' as const, manager: 'test' };
  const create = (name: string) =>
    store.create(
      'ns',
      { apiVersion: 'extensions.example.com/v1', kind: 'Website', metadata: { name }, spec: { git: { repository: 'https://example.com/r.git' } } },
      opts,
    );
  const get = async (name: string) => (await store.get('ns', name)) as Website;
  return { store, cluster, reconcile, create, get, opts };
};

describe('websiteReconciler', () => {
  it('adds the finalizer, applies both children, writes status once and records Created events', async () => {
    const t = setup();
    await t.create('a');
    await t.reconcile('ns/a');
    const w = await t.get('a');
    expect(w.metadata.finalizers).toEqual([CLEANUP_FINALIZER]);
    expect([...t.cluster.objects.keys()].sort()).toEqual(['Deployment/ns/a-website', 'Service/ns/a-website']);
    expect(w.status).toMatchObject({ observedGeneration: 1, nodePort: 30080, deployment: 'a-website' });
    expect(t.cluster.events).toEqual(['Normal/CreatedDeployment', 'Normal/CreatedService']);
    // Level-based and idempotent: a second run with nothing changed writes nothing.
    const rv = w.metadata.resourceVersion;
    await t.reconcile('ns/a');
    expect((await t.get('a')).metadata.resourceVersion).toBe(rv);
    expect(t.cluster.events).toHaveLength(2);
  });

  it('on failure marks the Website Degraded with the error, records a Warning event and throws for a retry', async () => {
    const t = setup();
    await t.create('b');
    t.cluster.failApply('apiserver unreachable');
    await expect(t.reconcile('ns/b')).rejects.toThrow('apiserver unreachable');
    const w = await t.get('b');
    expect(w.status?.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ReconcileError',
      message: 'apiserver unreachable',
    });
    expect(t.cluster.events).toContain('Warning/ReconcileFailed');
    t.cluster.failApply(undefined);
    await t.reconcile('ns/b');
    expect((await t.get('b')).status?.conditions?.find((c) => c.type === 'Degraded')?.status).toBe('False');
  });

  it('on deletion removes both children first and only then the finalizer (the store then deletes the Website)', async () => {
    const t = setup();
    await t.create('c');
    await t.reconcile('ns/c');
    await t.store.delete('ns', 'c', {}, false);
    expect((await t.get('c')).metadata.deletionTimestamp).toBeDefined();
    t.cluster.hold('Deployment/ns/c-website');
    expect(await t.reconcile('ns/c')).toEqual({ requeueAfter: 10 });
    expect((await t.get('c')).metadata.finalizers).toEqual([CLEANUP_FINALIZER]);
    t.cluster.release('Deployment/ns/c-website');
    await t.reconcile('ns/c');
    await expect(t.get('c')).rejects.toThrow(/not found/);
    expect(t.cluster.objects.size).toBe(0);
  });

  it("reports git-sync giving up in a pod as Degraded=True GitSyncFailed with git-sync's error, and clears it once the pod is ready", async () => {
    const t = setup();
    await t.create('d');
    const logLine = JSON.stringify({
      logger: '',
      ts: '2026-11-24 09:40:01.123',
      caller: { file: 'main.go', line: 925 },
      msg: 'too many failures, aborting',
      error:
        'Run(git ls-remote -q git://10.201.0.1/nope.git HEAD): exit status 128: { stdout: "", stderr: "fatal: remote error: access denied or repository not exported: /nope.git" }',
      failCount: 6,
    });
    const failing: ObservedPod = {
      metadata: { name: 'd-website-5d8f-abcde' },
      status: {
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [
          { name: 'nginx', ready: false, restartCount: 0 },
          {
            name: 'git-sync',
            ready: false,
            restartCount: 1,
            lastState: { terminated: { exitCode: 1, reason: 'Error', message: `{"msg":"error syncing repo, will retry","error":"x"}\n${logLine}\n` } },
          },
        ],
      },
    };
    t.cluster.setPods('ns/d', [failing]);
    await t.reconcile('ns/d');
    const degraded = (await t.get('d')).status?.conditions?.find((c) => c.type === 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'GitSyncFailed' });
    expect(degraded?.message).toBe(`git-sync in pod d-website-5d8f-abcde exited with code 1: too many failures, aborting: ${JSON.parse(logLine).error}`);
    expect((await t.get('d')).status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');

    // The fixed repository rolls out a new pod that syncs and turns ready; the old one is gone.
    t.cluster.setPods('ns/d', [
      {
        metadata: { name: 'd-website-77aa-fghij' },
        status: { conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'git-sync', ready: true, restartCount: 0 }] },
      },
    ]);
    await t.reconcile('ns/d');
    expect((await t.get('d')).status?.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });
  });

  it('owns only Ready, Progressing and Degraded: a condition a client wrote through /status survives the next spec change', async () => {
    const t = setup();
    await t.create('e');
    await t.reconcile('ns/e');
    const w = await t.get('e');
    const custom = {
      type: 'Custom',
      status: 'True' as const,
      reason: 'ByHand',
      message: 'set by a client',
      lastTransitionTime: '2026-11-20T10:00:00Z',
      observedGeneration: 1,
    };
    await t.store.update('ns', 'e', { ...w, status: { ...w.status, conditions: [custom, ...(w.status?.conditions ?? [])] } }, 'status', t.opts);
    const changed = await t.store.patch('ns', 'e', 'application/merge-patch+json', { spec: { replicas: 3 } }, 'main', t.opts);
    expect((changed.object as Website).metadata.generation).toBe(2);
    await t.reconcile('ns/e');
    const status = (await t.get('e')).status;
    expect(status?.observedGeneration).toBe(2);
    expect(status?.conditions?.map((c) => c.type)).toEqual(['Custom', 'Ready', 'Progressing', 'Degraded']);
    expect(status?.conditions?.[0]).toEqual(custom);
    expect(status?.conditions?.find((c) => c.type === 'Ready')?.observedGeneration).toBe(2);
  });

  it('does nothing for a Website that no longer exists', async () => {
    const t = setup();
    await expect(t.reconcile('ns/ghost')).resolves.toBeUndefined();
    expect(t.cluster.objects.size).toBe(0);
  });
});
