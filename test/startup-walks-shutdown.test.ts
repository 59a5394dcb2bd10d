/**
 * A SIGTERM while the start-up walks still read the store (a large store's first start: the metadata repair has
 * not been marked done yet) stops them quietly: the storage closes during the shutdown, and a walk must not then
 * fail on the closed store and log an error.
 */
import { describe, expect, it } from 'vitest';
import { LmdbStorage } from '../src/storage/lmdb-storage.js';
import { serversPerTest, tempDir } from './helpers/server-process.js';

const start = serversPerTest();
const RESOURCE = 'extensions.example.com/websites';

describe('a shutdown during the start-up walks', () => {
  it('stops them without an error line, and exits 0', async () => {
    const dataDir = tempDir('ws-walk-stop-');
    const storage = new LmdbStorage({ path: dataDir, compactionIntervalMs: 0 });
    const spec = { gitRepo: 'https://github.com/luksa/kubia-website-example.git', replicas: 1, syncIntervalSeconds: 60, serviceType: 'NodePort' };
    await Promise.all(
      Array.from({ length: 40_000 }, (_, i) => {
        const name = `w${i}`;
        return storage.create(
          { resource: RESOURCE, namespace: 'ns', name },
          {
            apiVersion: 'extensions.example.com/v1',
            kind: 'Website',
            metadata: { name, namespace: 'ns', uid: `u${i}`, creationTimestamp: '2026-01-01T00:00:00Z', generation: 1 },
            spec,
          },
        );
      }),
    );
    await storage.close();
    const { srv } = await start({ dataDir });
    expect(await srv.stop()).toBe(0);
    const errors = srv
      .logs()
      .split('\n')
      .filter((l) => l.startsWith('{') && (JSON.parse(l) as { level: number }).level >= 50);
    expect(errors).toEqual([]);
  });
});
