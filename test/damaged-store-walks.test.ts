/**
 * The walks a server makes over every stored object once serving starts (the metadata repair, registry/
 * metadata-repair.ts; the storage version migration, registry/versioned-storage.ts) go on past an object whose
 * stored data does not decode: each names it once in the log with the request that deletes it, and every other
 * object is still repaired and migrated. A client's list still fails on it (kube's StoreReadError).
 */
import { describe, expect, it, vi } from 'vitest';
import { API, call, serversPerTest, tempDir } from './helpers/server-process.js';
import { LmdbStorage, openLayout } from '../src/storage/lmdb-storage.js';

const start = serversPerTest();
const RESOURCE = 'extensions.example.com/websites';
const KEY = '/registry/extensions.example.com/websites/legacy/b';
const DELETE_PATH = '/apis/extensions.example.com/v1/namespaces/legacy/websites/b?ignoreStoreReadErrorWithClusterBreakingPotential=true';

/** legacy is an object as an earlier build stored it: in v1alpha1, with `metadata` fields merged in. */
const legacy = (name: string, metadata: Record<string, unknown>) => ({
  apiVersion: 'extensions.example.com/v1alpha1',
  kind: 'Website',
  metadata: { name, namespace: 'legacy', uid: `uid-${name}`, creationTimestamp: '2024-01-01T00:00:00Z', generation: 1, ...metadata },
  spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', replicas: 1, syncIntervalSeconds: 60, serviceType: 'NodePort' },
});

type Line = Record<string, any>;

describe('the walks at start over a store holding an object that does not decode', () => {
  it('pass over it, naming it once each with how to delete it, and repair and migrate every other object', async () => {
    // a and c need their metadata repaired, all four a migration to v1; b, between them, is then cut short.
    const dataDir = tempDir('ws-walks-');
    const storage = new LmdbStorage({ path: dataDir, compactionIntervalMs: 0 });
    const key = (name: string) => ({ resource: RESOURCE, namespace: 'legacy', name });
    await storage.create(key('a'), legacy('a', { labels: true, annotations: { keep: 'me' } }));
    await storage.create(key('b'), legacy('b', {}));
    await storage.create(key('c'), legacy('c', { finalizers: 'x' }));
    await storage.create(key('d'), legacy('d', { labels: { app: 'web' } }));
    await storage.close();
    const layout = openLayout(dataDir);
    await layout.objectsText.put([RESOURCE, 'legacy', 'b'], Buffer.from('{"apiVersion":"extensions.example.com/v1alpha1","metadata":{"na'));
    await layout.root.close();

    const { srv, agent } = await start({ dataDir });
    const lines = (): Line[] =>
      srv
        .logs()
        .split('\n')
        .slice(0, -1)
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);
    const withMsg = (re: RegExp) => lines().filter((l) => re.test(String(l['msg'])));
    await vi.waitFor(
      () => {
        expect(withMsg(/^repaired stored objects whose metadata/)).toHaveLength(1);
        expect(withMsg(/^migrated stored objects to the storage version$/)).toHaveLength(1);
      },
      { timeout: 20_000, interval: 50 },
    );

    // Neither walk failed; each named b once, with the request that deletes it.
    expect(withMsg(/failed$/)).toEqual([]);
    const skipped = withMsg(/skipped \/registry\//);
    expect(skipped.map((l) => String(l['msg']).split(' skipped ')[0]).sort()).toEqual([
      'checking stored metadata',
      'migrating stored objects to the storage version',
    ]);
    for (const l of skipped) {
      expect(l).toMatchObject({ level: 40, key: KEY, namespace: 'legacy', name: 'b', delete: `kubectl delete --raw '${DELETE_PATH}'` });
      expect(l['reason']).toMatch(/^object not decodable revision=0: /);
      expect(l['msg']).toContain(`skipped ${KEY}: its stored data does not decode (object not decodable revision=0: `);
      expect(l['msg']).toContain(
        `delete it with DELETE ${DELETE_PATH} (kubectl delete --raw '${DELETE_PATH}'; needs the verbs delete and unsafe-delete-ignore-read-errors)`,
      );
    }
    // Every other object was repaired (a and c) and migrated (a, c, d).
    expect(withMsg(/^repaired stored metadata a Go client/).map((l) => [l['name'], l['dropped']])).toEqual([
      ['a', ['labels']],
      ['c', ['finalizers']],
    ]);
    expect(withMsg(/^repaired stored objects whose metadata/)[0]).toMatchObject({ checked: 3, repaired: 2, unreadable: 1 });
    expect(withMsg(/^migrated stored objects to the storage version$/)[0]).toMatchObject({ checked: 3, migrated: 3, unreadable: 1 });

    // A client still meets it: its get is a 500, a list fails whole.
    const coll = `${srv.url}${API}/namespaces/legacy/websites`;
    expect((await call(agent, `${coll}/b`)).status).toBe(500);
    expect((await call(agent, coll)).body).toMatchObject({ code: 500, reason: 'StoreReadError' });
    for (const name of ['a', 'c', 'd']) expect((await call(agent, `${coll}/${name}`)).status).toBe(200);
    // The logged request removes it; then everything lists.
    expect((await call(agent, `${srv.url}${DELETE_PATH}`, 'DELETE')).status).toBe(200);
    const list = await call(agent, coll);
    expect(list.status).toBe(200);
    expect(list.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(['a', 'c', 'd']);

    // What is stored: every other object in v1 with decodable metadata.
    expect(await srv.stop()).toBe(0);
    const after = new LmdbStorage({ path: dataDir, compactionIntervalMs: 0 });
    try {
      const stored = Object.fromEntries(await Promise.all(['a', 'c', 'd'].map(async (n) => [n, await after.get(key(n))] as const)));
      for (const o of Object.values(stored)) expect(o?.apiVersion).toBe('extensions.example.com/v1');
      expect(stored['a']?.metadata).toMatchObject({ name: 'a', annotations: { keep: 'me' } });
      expect(stored['a']?.metadata).not.toHaveProperty('labels');
      expect(stored['c']?.metadata).not.toHaveProperty('finalizers');
      expect(stored['d']?.metadata).toMatchObject({ labels: { app: 'web' } });
      expect(await after.get(key('b'))).toBeUndefined();
    } finally {
      await after.close();
    }
  }, 90_000);
});
