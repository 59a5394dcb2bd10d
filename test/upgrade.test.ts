/**
 * Upgrading from the release that stored Websites as v1alpha1: a data directory written as that release wrote it
 * (v1alpha1 objects with their managedFields, status, finalizers and the annotation v1 now reads as its node port)
 * is served by this build in both versions. Before serving, every object is migrated to the storage version (v1),
 * once; v1alpha1 clients read back exactly what they wrote; field ownership recorded in v1alpha1 holds in v1.
 */
import type { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/apis/meta/types.js';
import { LmdbStorage } from '../src/storage/lmdb-storage.js';
import { adminAgent, call, cleanupTempDirs, startServer, tempDir, type ServerProcess } from './helpers/server-process.js';

const NS = 'upgraded';
const ALPHA = `/apis/extensions.example.com/v1alpha1/namespaces/${NS}/websites`;
const V1 = `/apis/extensions.example.com/v1/namespaces/${NS}/websites`;
const REPO = 'https://github.com/luksa/kubia-website-example.git';
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

// What the earlier release stored for a Website kubectl had applied (server-side) in v1alpha1.
function stored(name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}, status?: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'extensions.example.com/v1alpha1',
    kind: 'Website',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      generation: 2,
      creationTimestamp: '2026-11-01T10:00:00Z',
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'extensions.example.com/v1alpha1',
          time: '2026-11-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:spec': Object.fromEntries(
              Object.keys(spec)
                .filter((k) => k !== 'syncIntervalSeconds' && k !== 'serviceType')
                .map((k) => [`f:${k}`, {}]),
            ),
          },
        },
      ],
      ...metadata,
    },
    spec: { syncIntervalSeconds: 60, serviceType: 'NodePort', ...spec },
    ...(status ? { status } : {}),
  };
}

const OLD: KubeObject[] = [
  stored('plain', { gitRepo: REPO, replicas: 2 }),
  stored(
    'branch',
    { gitRepo: REPO, branch: 'gh-pages', replicas: 1, secretRef: { name: 'creds' } },
    { labels: { tier: 'web' }, finalizers: ['example.com/keep'] },
  ),
  stored(
    'port',
    { gitRepo: REPO, replicas: 1 },
    { annotations: { 'extensions.example.com/node-port': '30080', note: 'kept' } },
    {
      observedGeneration: 2,
      replicas: 1,
      readyReplicas: 1,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', message: 'ok', lastTransitionTime: '2026-11-01T10:01:00Z', observedGeneration: 2 }],
    },
  ),
  // The earlier release let any text into this annotation: v1 cannot read it as a port, so it stays an annotation.
  stored('odd-annotation', { gitRepo: REPO, replicas: 1 }, { annotations: { 'extensions.example.com/node-port': 'eighty' } }),
];

let server: ServerProcess;
let agent: Agent;
let dataDir: string;
let certDir: string;
const written = new Map<string, KubeObject>();

beforeAll(async () => {
  dataDir = tempDir('ws-upgrade-');
  certDir = tempDir('ws-upgrade-certs-');
  const storage = new LmdbStorage({ path: dataDir });
  for (const o of OLD) {
    const w = await storage.create({ resource: 'extensions.example.com/websites', namespace: NS, name: o.metadata.name ?? '' }, o);
    written.set(o.metadata.name ?? '', w);
  }
  await storage.close();
  server = await startServer({ dataDir, certDir });
  agent = adminAgent(server.certDir);
}, 30_000);

afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

describe('a data directory written by the v1alpha1 release', () => {
  it('serves v1 at once, whether the migration has finished or not: a v1 list right after the start is all v1', async () => {
    const list = await call(agent, `${server.url}${V1}`);
    expect(list.status).toBe(200);
    expect((list.body.items as any[]).map((i) => [i.apiVersion, typeof i.spec.git?.repository])).toEqual(
      Array(4).fill(['extensions.example.com/v1', 'string']),
    );
  });

  it('is migrated to v1 in the background once serving starts, every object, logged', async () => {
    const migrated = /"checked":4,"migrated":4,"storageVersion":"extensions.example.com\/v1".*migrated stored objects to the storage version/;
    for (let i = 0; i < 100 && !migrated.test(server.logs()); i++) await new Promise((r) => setTimeout(r, 50));
    expect(server.logs()).toMatch(migrated);
  });

  it('reads back in v1alpha1 exactly as it was stored, resourceVersion included (the migration changes nothing a client sees)', async () => {
    const list = await call(agent, `${server.url}${ALPHA}`);
    expect(list.status).toBe(200);
    const items = list.body.items as any[];
    expect(items.map((i) => i.metadata.name)).toEqual(['branch', 'odd-annotation', 'plain', 'port']);
    for (const item of items) {
      const before = written.get(item.metadata.name);
      expect(item, item.metadata.name).toEqual(before);
    }
  });

  it('reads in v1 with the fields where v1 keeps them, the node port included', async () => {
    const port = (await call(agent, `${server.url}${V1}/port`)).body;
    expect(port.apiVersion).toBe('extensions.example.com/v1');
    expect(port.spec).toEqual({ replicas: 1, git: { repository: REPO, syncIntervalSeconds: 60 }, service: { type: 'NodePort', nodePort: 30080 } });
    expect(port.metadata.annotations).toEqual({ note: 'kept' });
    expect(port.status.conditions[0]).toMatchObject({ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-01T10:01:00Z' });
    const branch = (await call(agent, `${server.url}${V1}/branch`)).body;
    expect(branch.spec.git).toEqual({ repository: REPO, branch: 'gh-pages', syncIntervalSeconds: 60, secretRef: { name: 'creds' } });
    expect(branch.metadata).toMatchObject({ labels: { tier: 'web' }, finalizers: ['example.com/keep'], uid: 'uid-branch', generation: 2 });
    const odd = (await call(agent, `${server.url}${V1}/odd-annotation`)).body;
    expect(odd.spec.service).toEqual({ type: 'NodePort' });
    expect(odd.metadata.annotations).toEqual({ 'extensions.example.com/node-port': 'eighty' });
    // The managedFields entry keeps the version it was written with and its fields in that version's terms.
    expect(port.metadata.managedFields).toEqual(written.get('port')?.metadata.managedFields);
  });

  it('keeps the v1alpha1 field owner: a v1 apply of another repository conflicts with kubectl, on the field as v1alpha1 names it', async () => {
    const body = {
      apiVersion: 'extensions.example.com/v1',
      kind: 'Website',
      metadata: { name: 'plain' },
      spec: { git: { repository: 'https://example.com/other.git' } },
    };
    const r = await call(agent, `${server.url}${V1}/plain?fieldManager=newcomer`, 'PATCH', body, APPLY);
    expect(r.status).toBe(409);
    expect(r.body.message).toBe('Apply failed with 1 conflict: conflict with "kubectl": .spec.gitRepo');
    // The same manager applying its v1alpha1 configuration again changes nothing and conflicts with nobody.
    const same = await call(
      agent,
      `${server.url}${ALPHA}/plain?fieldManager=kubectl`,
      'PATCH',
      { apiVersion: 'extensions.example.com/v1alpha1', kind: 'Website', metadata: { name: 'plain' }, spec: { gitRepo: REPO, replicas: 2 } },
      APPLY,
    );
    expect(same.status, same.text).toBe(200);
    expect(same.body.metadata.generation).toBe(2);
  });

  it('is stored as v1 afterwards, and a restart migrates nothing more', async () => {
    await server.stop();
    const storage = new LmdbStorage({ path: dataDir });
    try {
      const all = await storage.list({ resource: 'extensions.example.com/websites' });
      expect(all.items.map((o) => o.apiVersion)).toEqual(Array(4).fill('extensions.example.com/v1'));
    } finally {
      await storage.close();
    }
    server = await startServer({ dataDir, certDir });
    await agent.close();
    agent = adminAgent(server.certDir);
    expect(server.logs()).not.toContain('migrated stored objects');
    expect((await call(agent, `${server.url}${ALPHA}/port`)).body.metadata.annotations).toEqual({ 'extensions.example.com/node-port': '30080', note: 'kept' });
  }, 30_000);
});
