/**
 * Shared fixtures of the storage unit tests (src/storage/*.test.ts): keys and objects, both backends with their
 * temporary directories cleaned up after each test, and a recording watch sink whose pacing a test controls (the
 * conformance suite's, src/storage/conformance.ts, which every backend runs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { KubeObject } from '../../src/apis/meta/types.js';
import type { KeyPrefix, ObjectKey, Storage } from '../../src/storage/interface.js';
import { LmdbStorage, type LmdbStorageOptions } from '../../src/storage/lmdb-storage.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';

export const R = 'extensions.example.com/websites';
export const ALL: KeyPrefix = { resource: R };
export const key = (namespace: string, name: string, resource = R): ObjectKey => ({ resource, namespace, name });
export const obj = (namespace: string, name: string, spec: Record<string, unknown> = {}, labels?: Record<string, string>): KubeObject => ({
  metadata: { namespace, name, ...(labels ? { labels } : {}) },
  spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', ...spec },
});
export const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

const dirs: string[] = [];
const opened: Storage[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** tempDir is a directory removed after the test. */
export function tempDir(prefix = 'lmdb-test-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
}

/** lmdb opens an LmdbStorage (compaction timer off unless asked) closed after the test. */
export function lmdb(opts: Partial<LmdbStorageOptions> = {}): LmdbStorage {
  const s = new LmdbStorage({ compactionIntervalMs: 0, ...opts, path: opts.path ?? tempDir() });
  opened.push(s);
  return s;
}

/** memory makes a MemoryStorage closed after the test. */
export function memory(historyEvents?: number): MemoryStorage {
  const s = new MemoryStorage(historyEvents ? { historyEvents } : {});
  opened.push(s);
  return s;
}

/** Backend is [name, make]: the backends of this repository, for tests of what they share beyond the contract. */
export type Backend = [string, () => Storage];

export const backends: Backend[] = [
  ['memory', () => memory()],
  ['lmdb', () => lmdb()],
];

/** Recorder records a subscription (the conformance suite's, shared). */
export { Recorder } from '../../src/storage/conformance.js';
