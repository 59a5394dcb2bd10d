/**
 * Upgrading a store written by the v1alpha1 release grew data.mdb 27× on 63113bc (5,000 objects; every page of the
 * migration's walk left a read transaction open, so no freed page was reused, and each rewrite added a history
 * entry holding the object twice). The migration tool (test/bench/upgrade.mjs, which measures 50,000 objects for
 * docs/operations.md, Upgrades) runs here on a small store against the real server: the file stays under twice its size, every
 * object ends in v1 with its resourceVersion, and the log tells where the migration stands.
 */
import { describe, expect, it } from 'vitest';
import { runUpgrade } from './bench/upgrade.mjs';

const N = 3000;

describe('upgrading a store of v1alpha1 objects', () => {
  it(`rewrites ${N} objects in v1 with data.mdb under 2× its size, and logs its progress`, async () => {
    const r = await runUpgrade(N, { timeoutMs: 50_000 });
    expect(r.migrated).toBe(N);
    expect(r.store).toEqual({ objects: N, stale: 0, revision: r.seededRevision });
    expect(r.dataAfter).toBeLessThan(2 * r.dataBefore);
    // The start line tells how many there are to do; each line its count, rate and ETA.
    expect(r.progress.length).toBeGreaterThanOrEqual(1);
    expect(r.progress[0]).toMatchObject({ total: N });
    for (const p of r.progress) expect(p).toEqual(expect.objectContaining({ checked: expect.any(Number), perSecond: expect.any(Number) }));
  }, 60_000);
});
