/**
 * The Website reconciler against a real kube-apiserver (issue 5): children appear with the right shape, follow the
 * spec, are repaired when someone changes or deletes them, and are cleaned up before the Website goes. No kubelet
 * runs here, so readiness is simulated by writing the Deployment's status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubectl, kubectlOk, waitFor } from './harness/kubectl.js';
import { reconcilersOff, reconcilersOn } from './harness/reconcilers.js';
import { e2e } from './harness/state.js';

const env = e2e();
const NS = `reconciler-${Date.now().toString(36)}`;
const k = (args: string[], input?: string) => kubectlOk(env.kubeconfig.admin, args, input === undefined ? {} : { input });
const json = async (args: string[]) => JSON.parse(await k([...args, '-o', 'json']));
const site = (name: string, spec: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: 'extensions.example.com/v1alpha1',
    kind: 'Website',
    metadata: { name, namespace: NS },
    spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', ...spec },
  });
const exists = async (kind: string, name: string, ns = NS) => (await kubectl(env.kubeconfig.admin, ['get', kind, name, '-n', ns, '-o', 'name'])).code === 0;
const deployment = (name: string) => json(['get', 'deployment', `${name}-website`, '-n', NS]);
const condition = (w: { status?: { conditions?: { type: string; status: string; reason?: string }[] } }, type: string) =>
  w.status?.conditions?.find((c) => c.type === type);

beforeAll(async () => {
  await reconcilersOn(env);
  await k(['create', 'namespace', NS]);
});
afterAll(async () => {
  // With the reconcilers still on, so our finalizer is honoured and the namespace really goes.
  await kubectl(env.kubeconfig.admin, ['delete', 'namespace', NS, '--timeout=90s'], { timeoutMs: 100_000 });
  await reconcilersOff(env);
});

describe('Website reconciler through a real cluster', () => {
  it('creates a Deployment (nginx + git-sync sharing a volume) and a NodePort Service, owned by the Website, and reports status', async () => {
    await k(['apply', '-f', '-'], site('kubia', { branch: 'master', replicas: 2 }));
    const d = await waitFor('the Deployment', async () => (await exists('deployment', 'kubia-website')) && deployment('kubia'), 30_000);
    const labels = { 'app.kubernetes.io/name': 'website', 'app.kubernetes.io/instance': 'kubia', 'app.kubernetes.io/managed-by': 'website-apiserver' };
    expect(d.metadata.labels).toMatchObject(labels);
    const w = await json(['get', 'ws', 'kubia', '-n', NS]);
    // The reconciler reads Websites in the storage version, v1, and names that version as the owner's.
    expect(d.metadata.ownerReferences).toEqual([
      { apiVersion: 'extensions.example.com/v1', kind: 'Website', name: 'kubia', uid: w.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(w.metadata.finalizers).toContain('extensions.example.com/cleanup');
    expect(d.spec.replicas).toBe(2);
    const containers = d.spec.template.spec.containers;
    expect(containers.map((c: { name: string }) => c.name)).toEqual(['nginx', 'git-sync']);
    const volume = d.spec.template.spec.volumes[0];
    expect(volume.emptyDir).toBeDefined();
    for (const c of containers) expect(c.volumeMounts.map((m: { name: string }) => m.name)).toContain(volume.name);
    expect(containers[1].args).toEqual(expect.arrayContaining(['--repo=https://github.com/luksa/kubia-website-example.git', '--ref=master']));
    // Server-side apply with our field manager.
    const withFields = await json(['get', 'deployment', 'kubia-website', '-n', NS, '--show-managed-fields']);
    expect(withFields.metadata.managedFields.map((m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`)).toContain(
      'website-apiserver/Apply',
    );

    const svc = await waitFor(
      'the Service',
      async () => (await exists('service', 'kubia-website')) && json(['get', 'service', 'kubia-website', '-n', NS]),
      30_000,
    );
    expect(svc.spec.type).toBe('NodePort');
    expect(svc.spec.ports[0]).toMatchObject({ port: 80 });
    expect(svc.metadata.labels).toMatchObject(labels);
    const nodePort = svc.spec.ports[0].nodePort;
    expect(nodePort).toBeGreaterThan(0);

    const status = await waitFor(
      'status with the nodePort',
      async () => {
        const o = await json(['get', 'ws', 'kubia', '-n', NS]);
        return o.status?.nodePort === nodePort && o.status.observedGeneration === o.metadata.generation && o;
      },
      30_000,
    );
    expect(status.status).toMatchObject({
      deployment: 'kubia-website',
      service: 'kubia-website',
      selector: 'app.kubernetes.io/instance=kubia,app.kubernetes.io/name=website',
    });
    expect(condition(status, 'Ready')).toMatchObject({ status: 'False' });
    const events = await k(['get', 'events', '-n', NS, '--field-selector', 'involvedObject.name=kubia', '-o', 'jsonpath={.items[*].reason}']);
    expect(events.split(' ')).toEqual(expect.arrayContaining(['CreatedDeployment', 'CreatedService']));
  });

  it('turns Ready when the Deployment reports its replicas ready (no kubelet here: the status is written by hand)', async () => {
    const d = await deployment('kubia');
    await k([
      'patch',
      'deployment',
      'kubia-website',
      '-n',
      NS,
      '--subresource=status',
      '--type',
      'merge',
      '-p',
      JSON.stringify({ status: { observedGeneration: d.metadata.generation, replicas: 2, readyReplicas: 2, updatedReplicas: 2, availableReplicas: 2 } }),
    ]);
    const w = await waitFor(
      'Ready=True',
      async () => {
        const o = await json(['get', 'ws', 'kubia', '-n', NS]);
        return condition(o, 'Ready')?.status === 'True' && o;
      },
      30_000,
    );
    expect(w.status).toMatchObject({ readyReplicas: 2, replicas: 2 });
    expect((await k(['get', 'ws', 'kubia', '-n', NS, '--no-headers'])).split(/\s+/)).toEqual(expect.arrayContaining(['2/2', 'Ready']));
  });

  it('follows spec.branch and replicas, and kubectl scale', async () => {
    await k(['patch', 'ws', 'kubia', '-n', NS, '--type', 'merge', '-p', '{"spec":{"git":{"branch":"gh-pages"},"replicas":3}}']);
    await waitFor(
      'the Deployment to follow the spec',
      async () => {
        const d = await deployment('kubia');
        return d.spec.replicas === 3 && d.spec.template.spec.containers[1].args.includes('--ref=gh-pages');
      },
      30_000,
    );
    await k(['scale', 'ws', 'kubia', '-n', NS, '--replicas=1']);
    await waitFor('the Deployment to follow kubectl scale', async () => (await deployment('kubia')).spec.replicas === 1, 30_000);
    const scale = JSON.parse(await k(['get', '--raw', `/apis/extensions.example.com/v1alpha1/namespaces/${NS}/websites/kubia/scale`]));
    expect(scale.spec.replicas).toBe(1);
    expect(scale.status.selector).toBe('app.kubernetes.io/instance=kubia,app.kubernetes.io/name=website');
    const w = await waitFor(
      'observedGeneration to catch up',
      async () => {
        const o = await json(['get', 'ws', 'kubia', '-n', NS]);
        return o.status.observedGeneration === o.metadata.generation && o;
      },
      30_000,
    );
    expect(w.metadata.generation).toBeGreaterThanOrEqual(3);
  });

  it('repairs drift: a deleted Service comes back, a hand-patched replica count is reverted', async () => {
    const before = await json(['get', 'service', 'kubia-website', '-n', NS]);
    await k(['delete', 'service', 'kubia-website', '-n', NS]);
    const after = await waitFor(
      'the Service to come back',
      async () => {
        if (!(await exists('service', 'kubia-website'))) return false;
        const s = await json(['get', 'service', 'kubia-website', '-n', NS]);
        return s.metadata.uid !== before.metadata.uid && s;
      },
      30_000,
    );
    expect(after.spec.type).toBe('NodePort');
    await k(['patch', 'deployment', 'kubia-website', '-n', NS, '--type', 'merge', '-p', '{"spec":{"replicas":7}}']);
    await waitFor('the replica count to be reverted', async () => (await deployment('kubia')).spec.replicas === 1, 30_000);
  });

  it('owns only Ready, Progressing and Degraded: a condition a client wrote through /status outlives its next status write', async () => {
    const w = await json(['get', 'ws', 'kubia', '-n', NS]);
    const custom = { type: 'Custom', status: 'True', reason: 'ByHand', message: 'written by a client', lastTransitionTime: '2026-11-20T10:00:00Z' };
    await k(['replace', '--subresource=status', '-f', '-'], JSON.stringify({ ...w, status: { ...w.status, conditions: [...w.status.conditions, custom] } }));
    // A spec change: the reconciler writes the status of the new generation.
    await k(['patch', 'ws', 'kubia', '-n', NS, '--type', 'merge', '-p', '{"spec":{"git":{"branch":"custom-conditions"}}}']);
    const after = await waitFor(
      'the status of the new generation',
      async () => {
        const o = await json(['get', 'ws', 'kubia', '-n', NS]);
        return o.metadata.generation > w.metadata.generation && o.status.observedGeneration === o.metadata.generation && o;
      },
      30_000,
    );
    expect(after.status.conditions.map((c: { type: string }) => c.type)).toEqual(['Ready', 'Progressing', 'Degraded', 'Custom']);
    expect(condition(after, 'Custom')).toEqual(custom);
    expect(condition(after, 'Ready')).toMatchObject({ observedGeneration: after.metadata.generation });
  });

  it('deletes the children before the Website: the Website stays Terminating while a child cannot go', async () => {
    // A foreign finalizer on the Deployment holds it, and with it the Website.
    await k(['patch', 'deployment', 'kubia-website', '-n', NS, '--type', 'merge', '-p', '{"metadata":{"finalizers":["example.com/hold"]}}']);
    await k(['delete', 'ws', 'kubia', '-n', NS, '--wait=false']);
    await waitFor('the Service to be deleted', async () => !(await exists('service', 'kubia-website')), 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    const held = await json(['get', 'ws', 'kubia', '-n', NS]);
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(held.metadata.finalizers).toContain('extensions.example.com/cleanup');
    await k(['patch', 'deployment', 'kubia-website', '-n', NS, '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    await waitFor('the Website to go once its children are gone', async () => !(await exists('ws', 'kubia')), 30_000);
    expect(await exists('deployment', 'kubia-website')).toBe(false);
  });

  it("reconciles under leader election: the Lease in the server's namespace names this server", async () => {
    const lease = await json(['get', 'lease', 'website-apiserver', '-n', env.namespace]);
    expect(lease.spec.holderIdentity).toMatch(/_/);
    expect(lease.spec.leaseDurationSeconds).toBe(15);
    // renewTime is a MicroTime: kube-apiserver accepted six fractional digits.
    expect(lease.spec.renewTime).toMatch(/\.\d{6}Z$/);
  });

  it('does not block deleting a namespace that holds a Website', async () => {
    const ns = `${NS}-gone`;
    await k(['create', 'namespace', ns]);
    await k(['apply', '-f', '-'], site('doomed').replace(`"namespace":"${NS}"`, `"namespace":"${ns}"`));
    await waitFor('its Deployment', () => exists('deployment', 'doomed-website', ns), 30_000);
    const r = await kubectl(env.kubeconfig.admin, ['delete', 'namespace', ns, '--timeout=90s'], { timeoutMs: 100_000 });
    expect(r.code, r.stderr).toBe(0);
    expect((await kubectl(env.kubeconfig.admin, ['get', 'namespace', ns])).code).not.toBe(0);
  });
});
