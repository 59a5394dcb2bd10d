import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../apis/meta/types.js';
import { isCorruptObject, type UnreadableObject } from './corrupt-object.js';
import { StorageError } from './errors.js';
import type { Storage } from './interface.js';
import { LmdbStorage, openLayout } from './lmdb-storage.js';
import { countUnder, currentPages, progressReporter, type WalkProgress } from './walk.js';

describe('progressReporter', () => {
  it('reports at the start, at most every interval with count, rate and ETA, and gives the figures at the end', () => {
    let now = 0;
    const lines: [string, WalkProgress][] = [];
    const p = progressReporter(
      1000,
      (w, phase) => lines.push([phase, w]),
      5000,
      () => now,
    );
    for (let i = 0; i < 10; i++) {
      now += 1000;
      p.add(100, 50);
    }
    const end = p.end();
    expect(lines.map(([phase]) => phase)).toEqual(['start', 'progress', 'progress']);
    expect(lines[0]?.[1]).toEqual({ checked: 0, total: 1000, changed: 0, elapsedSeconds: 0, perSecond: 0 });
    // After 5 s: 500 read, 100/s, 5 s to go.
    expect(lines[1]?.[1]).toEqual({ checked: 500, total: 1000, changed: 250, elapsedSeconds: 5, perSecond: 100, etaSeconds: 5 });
    expect(end).toEqual({ checked: 1000, total: 1000, changed: 500, elapsedSeconds: 10, perSecond: 100 });
  });
});

describe('currentPages over a store holding objects that do not decode', () => {
  const RESOURCE = 'extensions.example.com/websites';
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  /** aStore holds a..f in namespace n, with c and e overwritten by bytes that do not decode (cut short, and a number). */
  async function aStore(): Promise<LmdbStorage> {
    const dir = mkdtempSync(join(tmpdir(), 'walk-unreadable-'));
    dirs.push(dir);
    const first = new LmdbStorage({ path: dir, compactionIntervalMs: 0 });
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) {
      await first.create(
        { resource: RESOURCE, namespace: 'n', name },
        { apiVersion: 'extensions.example.com/v1', kind: 'Website', metadata: { name, namespace: 'n' } },
      );
    }
    await first.close();
    const layout = openLayout(dir);
    await layout.objectsText.put([RESOURCE, 'n', 'c'], Buffer.from('{"apiVersion":"extensions.example.com/v1","metadata":{"na'));
    await layout.objectsText.put([RESOURCE, 'n', 'e'], Buffer.from('42'));
    await layout.root.close();
    return new LmdbStorage({ path: dir, compactionIntervalMs: 0 });
  }

  const names = (items: KubeObject[]) => items.map((o) => o.metadata.name ?? '');

  it('passes over each of them for a walk, told once however many pages meet it, at every page size', async () => {
    const s = await aStore();
    try {
      for (const size of [1, 2, 3, 500]) {
        const told: UnreadableObject[] = [];
        const seen: string[] = [];
        for await (const page of currentPages(
          s,
          { resource: RESOURCE },
          size,
          () => false,
          (o) => told.push(o),
        ))
          seen.push(...names(page));
        expect(seen, `page size ${size}`).toEqual(['a', 'b', 'd', 'f']);
        expect(
          told.map((o) => o.key),
          `page size ${size}`,
        ).toEqual([
          { resource: RESOURCE, namespace: 'n', name: 'c' },
          { resource: RESOURCE, namespace: 'n', name: 'e' },
        ]);
        expect(told[0]?.reason).toMatch(/^object not decodable revision=0: /);
        expect(told[1]?.reason).toBe('object not decodable revision=0: not a JSON object: number');
      }
      // The page itself names what it passed over; countUnder counts every stored object.
      const page = await s.list({ resource: RESOURCE }, { limit: 2, skipUnreadable: true });
      expect(names(page.items)).toEqual(['a', 'b']);
      expect(page.more).toBe(true);
      // (lmdb's cursor may have read past the page's end: what it met there is named too)
      expect(page.unreadable?.map((o) => o.key.name)).toContain('c');
      expect(await countUnder(s, { resource: RESOURCE })).toBe(6);
    } finally {
      await s.close();
    }
  });

  it("fails as a client's list does without onUnreadable, and skipUnreadable changes nothing for a client's list", async () => {
    const s = await aStore();
    try {
      const walk = async () => {
        for await (const page of currentPages(s, { resource: RESOURCE }, 500, () => false)) void page;
      };
      await expect(walk()).rejects.toSatisfy((e) => isCorruptObject(e) && e.kind === 'list' && e.objects.length === 2);
      await expect(s.list({ resource: RESOURCE })).rejects.toSatisfy((e) => isCorruptObject(e) && e.kind === 'list');
      // An older snapshot than the current revision, and a prefiltered list, still fail even when asked to skip.
      await expect(s.list({ resource: RESOURCE }, { skipUnreadable: true, filter: () => true, prefilter: () => true })).rejects.toSatisfy(isCorruptObject);
    } finally {
      await s.close();
    }
  });

  it('still fails on any other error', async () => {
    const failing = { list: async () => Promise.reject(new StorageError('Unavailable', 'disk gone')) } as unknown as Storage;
    const walk = async () => {
      for await (const page of currentPages(
        failing,
        { resource: RESOURCE },
        10,
        () => false,
        () => undefined,
      ))
        void page;
    };
    await expect(walk()).rejects.toThrow('disk gone');
  });
});
