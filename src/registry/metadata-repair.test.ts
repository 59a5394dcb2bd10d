import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../apis/meta/types.js';
import { MemoryStorage } from '../storage/memory-storage.js';
import { repairStoredMetadata } from './metadata-repair.js';

const RESOURCE = 'stable.example.com/crontabs';
const key = (namespace: string, name: string) => ({ resource: RESOURCE, namespace, name });
// Metadata as an early build stored it: labels that are no map[string]string.
const stored = (name: string, labels: unknown): KubeObject => ({
  apiVersion: 'stable.example.com/v1',
  kind: 'CronTab',
  metadata: { name, namespace: 'ns', labels } as KubeObject['metadata'],
});
const pass = (s: MemoryStorage, stopped = () => false) => repairStoredMetadata(s, { resource: RESOURCE }, key, true, () => undefined, stopped);

describe('repairStoredMetadata', () => {
  it('repairs once: a full pass marks the store, and later starts skip the pass', async () => {
    const s = new MemoryStorage();
    await s.create(key('ns', 'a'), stored('a', true));
    await s.create(key('ns', 'b'), stored('b', { app: 'x' }));
    expect(await pass(s)).toEqual({ checked: 2, repaired: 1, unreadable: 0 });
    expect((await s.get(key('ns', 'a')))?.metadata.labels).toBeUndefined();
    expect(s.marked(`metadata-repaired/${RESOURCE}`)).toBe(true);
    // Only an older build could store such an object now; the next start does not read the store again.
    await s.create(key('ns', 'c'), stored('c', 7));
    expect(await pass(s)).toEqual({ checked: 0, repaired: 0, unreadable: 0, skipped: true });
    expect((await s.get(key('ns', 'c')))?.metadata.labels).toBe(7);
  });

  it('does not mark a pass cut short, so the next start walks again', async () => {
    const s = new MemoryStorage();
    await s.create(key('ns', 'a'), stored('a', true));
    expect((await pass(s, () => true)).checked).toBe(0);
    expect(s.marked(`metadata-repaired/${RESOURCE}`)).toBe(false);
    expect(await pass(s)).toEqual({ checked: 1, repaired: 1, unreadable: 0 });
  });
});
