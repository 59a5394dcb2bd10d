/**
 * Shared fixtures of the storage unit tests (src/storage/*.test.ts): keys and objects, both backends with their
 * temporary directories cleaned up after each test, and a recording watch sink whose pacing a test controls.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { KubeObject } from '../../src/apis/meta/types.js';
import type { ChangeEvent, KeyPrefix, ObjectKey, Storage, WatchSink } from '../../src/storage/interface.js';
import { LmdbStorage, type LmdbStorageOptions } from '../../src/storage/lmdb-storage.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';

export const R = 'extensions.example.com/websites';
export const ALL: KeyPrefix = { resource: R };
export const key = (namespace: string, name: string, resource = R): ObjectKey => ({ resource, namespace, name });
export const obj = (namespace: string, name: string, spec: Record<string, unknown> = {}, labels?: Record<string, string>): KubeObject =>
  ({ metadata: { namespace, name, ...(labels ? { labels } : {}) }, spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', ...spec } });
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

/** Backend is [name, make(historyEvents?), settle]: settle finishes any compaction so the bound holds as of now. */
export type Backend = [string, (historyEvents?: number) => Storage, (s: Storage) => Promise<void>];

export const backends: Backend[] = [
  ['memory', (historyEvents) => memory(historyEvents), async () => undefined],
  ['lmdb', (historyEvents) => lmdb(historyEvents ? { historyEvents } : {}), async (s) => {
    // A write-path compaction may be running with an older target; the second run applies the bound as of now.
    await (s as LmdbStorage).compact();
    await (s as LmdbStorage).compact();
  }],
];

/** Recorder records a subscription; when gated, each ready() waits until open() (or ungate()) is called. */
export class Recorder implements WatchSink {
  readonly events: ChangeEvent[] = [];
  readonly errors: Error[] = [];
  readyCalls = 0;
  #waiting: (() => void)[] = [];
  #gated: boolean;

  constructor(gated = false) {
    this.#gated = gated;
  }
  onEvent(e: ChangeEvent): void {
    this.events.push(e);
  }
  onError(err: Error): void {
    this.errors.push(err);
  }
  ready(): Promise<void> {
    this.readyCalls++;
    if (!this.#gated) return Promise.resolve();
    return new Promise<void>((resolve) => this.#waiting.push(resolve));
  }
  get revisions(): number[] {
    return this.events.map((e) => e.revision);
  }
  /** waiting: the replay is paused in ready(). */
  get waiting(): boolean {
    return this.#waiting.length > 0;
  }
  /** open lets every paused ready() resolve; the next one pauses again. */
  open(): void {
    for (const r of this.#waiting.splice(0)) r();
  }
  /** ungate turns pacing off for the rest of the replay. */
  ungate(): void {
    this.#gated = false;
    this.open();
  }
}
