/**
 * Websites under kube-controller-manager's namespace and garbage-collector controllers, and the namespace lifecycle
 * our server enforces itself (kube-apiserver's NamespaceLifecycle admission does not run for proxied requests).
 * Every answer for a Website is compared with what kube-apiserver says for a ConfigMap in the same situation.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { API_VERSION, GR, GROUP, apiClient, kubectlAs, table, websiteManifest } from './helpers-kubectl.js';

const env = e2e();
const k = kubectlAs(env.kubeconfig.admin);
const api = apiClient(env.server, env.caFile, env.tokens.admin);
const WEBSITES = `/apis/${API_VERSION}`;
// Every namespace of this file starts with this prefix; afterAll removes whatever is left.
const PREFIX = 'e2e-ctrl-';
const created: string[] = [];

afterAll(async () => {
  for (const ns of created) {
    // Drop test finalizers so leftover namespaces can finish even when a test failed half-way.
    const list = await k(['get', 'ws,configmaps', '-n', ns, '-o', 'name']);
    for (const name of list.stdout.split('\n').filter(Boolean)) {
      await k(['patch', name, '-n', ns, '--type', 'merge', '-p', '{"metadata":{"finalizers":null}}']);
    }
    await k(['delete', 'namespace', ns, '--wait=false', '--ignore-not-found']);
  }
  k.dispose();
  await api.close();
});

async function namespace(suffix: string): Promise<string> {
  const ns = PREFIX + suffix;
  const r = await k(['create', 'namespace', ns]);
  expect(r.stdout.trim(), r.stderr).toBe(`namespace/${ns} created`);
  created.push(ns);
  return ns;
}

/** create pipes one object to `kubectl create -f -` and insists it was created. */
async function create(ns: string, obj: Record<string, any>): Promise<any> {
  const r = await k(['create', '-n', ns, '-f', '-', '-o', 'json'], { input: JSON.stringify(obj) });
  expect(r.stderr, `create ${obj['kind']} ${obj['metadata']?.name}`).toBe('');
  return JSON.parse(r.stdout);
}

const configMap = (name: string, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...metadata },
  data: { k: 'v' },
});

/** ownedBy is an ownerReference to a Website. */
const ownedBy = (ws: any, blockOwnerDeletion = false) => ({
  apiVersion: API_VERSION,
  kind: 'Website',
  name: ws.metadata.name,
  uid: ws.metadata.uid,
  ...(blockOwnerDeletion ? { blockOwnerDeletion: true } : {}),
});

/** exists tells whether `kubectl get` finds the object (false only on NotFound). */
async function exists(kind: string, name: string, ns?: string): Promise<boolean> {
  const r = await k(['get', kind, name, ...(ns ? ['-n', ns] : []), '-o', 'name']);
  if (r.code === 0) return true;
  if (r.stderr.includes('(NotFound)')) return false;
  throw new Error(`kubectl get ${kind} ${name}: ${r.stderr}`);
}

async function getJson(kind: string, name: string, ns?: string): Promise<any> {
  const r = await k(['get', kind, name, ...(ns ? ['-n', ns] : []), '-o', 'json']);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout);
}

/** websitesIn lists, across all namespaces, the Websites that sit in `ns` (a list in one namespace would not notice a missing namespace). */
async function websitesIn(ns: string): Promise<string[]> {
  const r = await k(['get', 'ws', '-A', '-o', 'json']);
  expect(r.stderr).toBe('');
  return (JSON.parse(r.stdout).items as any[]).filter((o) => o.metadata.namespace === ns).map((o) => o.metadata.name);
}

// The garbage-collector tests come last: kube-controller-manager's GC rediscovers resources every 30 s, so on a fresh
// plane it may not watch websites yet; the tests before them use that time.
describe('controllers and namespace lifecycle through kube-apiserver', () => {
  it('deleting a namespace that holds websites completes: the namespace controller deletes them first', async () => {
    const ns = await namespace('nsdel');
    for (const n of ['a', 'b', 'c']) await create(ns, websiteManifest(n));
    await create(ns, configMap('beside'));
    expect(await websitesIn(ns)).toEqual(['a', 'b', 'c']);

    const t0 = Date.now();
    const del = await k(['delete', 'namespace', ns, '--timeout=90s'], { timeoutMs: 100_000 });
    expect(del.stderr).toBe('');
    expect(del.code).toBe(0);
    expect(del.stdout.trim()).toBe(`namespace "${ns}" deleted`);
    console.log(`namespace ${ns} with 3 websites deleted in ${Date.now() - t0} ms`);
    expect(await exists('namespace', ns)).toBe(false);
    // Had the controller skipped websites, the namespace would be gone with them still stored.
    expect(await websitesIn(ns)).toEqual([]);
  });

  it('creating in a namespace that does not exist is NotFound for the namespace, worded as kube-apiserver words it for a ConfigMap', async () => {
    const ns = `${PREFIX}missing`;
    const msg = `Error from server (NotFound): error when creating "STDIN": namespaces "${ns}" not found`;
    for (const verb of [['create'], ['apply']]) {
      const cm = await k([...verb, '-n', ns, '-f', '-'], { input: JSON.stringify(configMap('x')) });
      const ws = await k([...verb, '-n', ns, '-f', '-'], { input: JSON.stringify(websiteManifest('x')) });
      expect(cm.stderr.trim()).toBe(msg);
      expect({ code: ws.code, stdout: ws.stdout, stderr: ws.stderr }).toEqual({ code: cm.code, stdout: cm.stdout, stderr: cm.stderr });
    }
    const cmSsa = await k(['apply', '--server-side', '-n', ns, '-f', '-'], { input: JSON.stringify(configMap('x')) });
    const wsSsa = await k(['apply', '--server-side', '-n', ns, '-f', '-'], { input: JSON.stringify(websiteManifest('x')) });
    expect(cmSsa.stderr).toContain(`namespaces "${ns}" not found`);
    expect(wsSsa.stderr).toBe(cmSsa.stderr);
    expect(wsSsa.code).toBe(cmSsa.code);

    // The Status bodies themselves are identical (404, reason NotFound, details naming the namespace).
    const cmRaw = await api('POST', `/api/v1/namespaces/${ns}/configmaps`, { ...configMap('x'), metadata: { name: 'x', namespace: ns } });
    const wsRaw = await api('POST', `${WEBSITES}/namespaces/${ns}/websites`, { ...websiteManifest('x'), metadata: { name: 'x', namespace: ns } });
    expect(cmRaw.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `namespaces "${ns}" not found`,
      reason: 'NotFound',
      details: { name: ns, kind: 'namespaces' },
      code: 404,
    });
    expect(wsRaw.status).toBe(404);
    expect.soft(wsRaw.body).toEqual(cmRaw.body);
    expect(await exists('namespace', ns)).toBe(false);
  });

  it('creating in a terminating namespace is 403 Forbidden with a NamespaceTerminating cause, as for a ConfigMap; the namespace goes once the last finalizer does', async () => {
    const ns = await namespace('terminating');
    await create(ns, websiteManifest('held', {}, { finalizers: ['example.com/hold'] }));
    const del = await k(['delete', 'namespace', ns, '--wait=false']);
    expect(del.stdout.trim(), del.stderr).toBe(`namespace "${ns}" deleted`);
    expect((await getJson('namespace', ns)).status.phase).toBe('Terminating');

    // Our server learns about the deletion from its namespace informer: give it a moment, probing with dry-run creates.
    let probes = 0;
    await waitFor(
      'our server to refuse creates in the terminating namespace',
      async () => {
        probes++;
        const r = await api('POST', `${WEBSITES}/namespaces/${ns}/websites?dryRun=All`, websiteManifest('probe'));
        return r.status === 403;
      },
      10_000,
      50,
    );
    console.log(`website create refused after ${probes} dry-run probe(s)`);

    const cm = await k(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(configMap('late')) });
    const ws = await k(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(websiteManifest('late')) });
    const why = `unable to create new content in namespace ${ns} because it is being terminated`;
    expect(cm.stderr.trim()).toBe(`Error from server (Forbidden): error when creating "STDIN": configmaps "late" is forbidden: ${why}`);
    expect(ws.stderr.trim()).toBe(`Error from server (Forbidden): error when creating "STDIN": websites.${GROUP} "late" is forbidden: ${why}`);
    expect(ws.code).toBe(cm.code);

    const cmRaw = await api('POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('late'));
    const wsRaw = await api('POST', `${WEBSITES}/namespaces/${ns}/websites`, websiteManifest('late'));
    expect(cmRaw.status).toBe(403);
    expect(cmRaw.body).toMatchObject({
      reason: 'Forbidden',
      code: 403,
      details: { causes: [{ reason: 'NamespaceTerminating', field: 'metadata.namespace' }] },
    });
    expect(wsRaw.status).toBe(403);
    // Same body apart from naming the resource: one cause of type NamespaceTerminating, same message, same field.
    // (soft: a difference here should not hide whether the namespace can still finish below)
    expect.soft(wsRaw.body).toEqual({
      ...cmRaw.body,
      message: cmRaw.body.message.replace('configmaps "late"', `websites.${GROUP} "late"`),
      details: { ...cmRaw.body.details, group: GROUP, kind: 'websites' },
    });

    // The namespace controller has deleted the held Website and reports what still blocks the namespace.
    const held = await waitFor(
      'the namespace controller to delete the held Website',
      async () => {
        const o = await getJson('ws', 'held', ns);
        return o.metadata.deletionTimestamp ? o : undefined;
      },
      60_000,
      250,
    );
    expect(held.metadata.finalizers).toEqual(['example.com/hold']);
    const conditions = await waitFor(
      'namespace conditions naming websites',
      async () => {
        const c: any[] = (await getJson('namespace', ns)).status.conditions ?? [];
        const remaining = c.find((x) => x.type === 'NamespaceContentRemaining' && x.status === 'True');
        const finalizers = c.find((x) => x.type === 'NamespaceFinalizersRemaining' && x.status === 'True');
        return remaining && finalizers ? { remaining, finalizers } : undefined;
      },
      60_000,
      250,
    );
    expect(conditions.remaining.message).toBe(`Some resources are remaining: websites.${GROUP} has 1 resource instances`);
    expect(conditions.finalizers.message).toBe('Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances');
    expect(await exists('namespace', ns)).toBe(true);

    const release = await k(['patch', 'ws', 'held', '-n', ns, '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    expect(release.stdout.trim(), release.stderr).toBe(`${GR}/held patched`);
    const t0 = Date.now();
    await waitFor('the namespace to be gone', async () => !(await exists('namespace', ns)), 90_000, 250);
    console.log(`terminating namespace gone ${Date.now() - t0} ms after the last finalizer was removed`);
    expect(await websitesIn(ns)).toEqual([]);
  });
  it('a ConfigMap owned by a Website is garbage-collected after the Website is deleted', async () => {
    const ns = await namespace('gc');
    const owner = await create(ns, websiteManifest('owner'));
    const other = await create(ns, websiteManifest('other'));
    await create(ns, configMap('owned', { ownerReferences: [ownedBy(owner)] }));
    await create(ns, configMap('unrelated', { ownerReferences: [ownedBy(other)] }));

    const del = await k(['delete', 'ws', 'owner', '-n', ns]);
    expect(del.stdout.trim(), del.stderr).toBe(`${GR} "owner" deleted from ${ns} namespace`);
    const t0 = Date.now();
    await waitFor('the owned ConfigMap to be collected', async () => !(await exists('configmap', 'owned', ns)), 90_000, 250);
    console.log(`owned ConfigMap collected ${Date.now() - t0} ms after its Website was deleted`);
    // The GC acted on the missing owner only: the ConfigMap whose owner still exists stays.
    expect(await exists('configmap', 'unrelated', ns)).toBe(true);
    expect(await exists('ws', 'other', ns)).toBe(true);
  });

  it('delete --cascade=foreground keeps the Website (Terminating, foregroundDeletion) until its blocking ConfigMap dependent is gone', async () => {
    const ns = await namespace('fg');
    const owner = await create(ns, websiteManifest('fg'));
    // The dependent's own finalizer holds it, so the order of the two disappearances can be observed.
    await create(ns, configMap('fg-dep', { ownerReferences: [ownedBy(owner, true)], finalizers: ['example.com/hold'] }));

    const deleting = k.background(['delete', 'ws', 'fg', '-n', ns, '--cascade=foreground', '--timeout=90s']);
    try {
      const t0 = Date.now();
      const dep = await waitFor(
        'the GC to delete the dependent',
        async () => {
          const cm = await getJson('configmap', 'fg-dep', ns);
          return cm.metadata.deletionTimestamp ? cm : undefined;
        },
        90_000,
        250,
      );
      console.log(`GC deleted the blocking dependent ${Date.now() - t0} ms after the foreground delete`);
      expect(dep.metadata.finalizers).toEqual(['example.com/hold']);
      const ws = await getJson('ws', 'fg', ns);
      expect(ws.metadata.deletionTimestamp).toMatch(/Z$/);
      expect(ws.metadata.finalizers).toEqual(['foregroundDeletion']);
      expect(table((await k(['get', 'ws', 'fg', '-n', ns])).stdout).rows[0]?.['STATUS']).toBe('Terminating');
      expect(deleting.settled()).toBe(false);

      const release = await k(['patch', 'configmap', 'fg-dep', '-n', ns, '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
      expect(release.stdout.trim(), release.stderr).toBe('configmap/fg-dep patched');
      const r = await deleting.result;
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(`${GR} "fg" deleted from ${ns} namespace`);
    } finally {
      await deleting.stop();
    }
    expect(await exists('configmap', 'fg-dep', ns)).toBe(false);
    expect(await exists('ws', 'fg', ns)).toBe(false);
  });
});
