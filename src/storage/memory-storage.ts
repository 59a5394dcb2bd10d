/**
 * @module storage/memory-storage
 * MemoryStorage: the same contract as LmdbStorage, in a Map, for fast unit tests of the registry.
 * Not durable; never used by the server itself. Its history is an in-memory array bounded by count.
 */
import { cloneJson } from '../apis/meta/json-clone.js';
import type { KubeObject } from '../apis/meta/types.js';
import { ChangeFeed } from './change-feed.js';
import { StorageError } from './errors.js';
import { MemoryHistory } from './history.js';
import type { ChangeEvent, DeleteCheck, KeyPrefix, ListRequest, ListResult, ObjectKey, Storage, UpdateFn, WatchHandle, WatchSink } from './interface.js';
import { compareKeys, inPrefix, keyString } from './keys.js';
import { withRevision } from './lmdb-storage.js';
import { checkSealed } from './sealed.js';
import { readList } from './snapshot.js';

/** MemoryStorage implements Storage in memory. */
export class MemoryStorage implements Storage {
  readonly #objects = new Map<string, { key: ObjectKey; object: KubeObject }>();
  readonly #history: MemoryHistory;
  readonly #feed: ChangeFeed;
  #revision = 0;
  readonly #marks = new Set<string>();
  readonly #sealed = new Map<string, number>();

  constructor(opts: { historyEvents?: number } = {}) {
    this.#history = new MemoryHistory(0, opts.historyEvents ?? 10_000);
    this.#feed = new ChangeFeed(0, this.#history);
  }

  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    return this.#feed.waitForRevision(revision, timeoutMs);
  }

  currentRevision(): number {
    return this.#revision;
  }

  marked(name: string): boolean {
    return this.#marks.has(name);
  }

  async mark(name: string): Promise<void> {
    this.#marks.add(name);
  }

  compactedRevision(): number {
    return this.#history.compacted();
  }

  async seal(resource: string, minRevision: number): Promise<number> {
    const from = this.#revision;
    this.#revision = Math.max(this.#revision, minRevision);
    this.#sealed.set(resource, this.#revision);
    this.#feed.skip(from + 1, this.#revision);
    return this.#revision;
  }

  sealedAt(resource: string): number {
    return this.#sealed.get(resource) ?? 0;
  }

  async get(key: ObjectKey): Promise<KubeObject | undefined> {
    const e = this.#objects.get(keyString(key));
    return e && cloneJson(e.object);
  }

  async list(prefix: KeyPrefix, req?: ListRequest): Promise<ListResult> {
    checkSealed(this.sealedAt(prefix.resource), req?.revision);
    const sorted = () => [...this.#objects.values()].filter((e) => inPrefix(e.key, prefix)).sort((a, b) => compareKeys(a.key, b.key));
    const r = readList(
      {
        revision: this.#revision,
        compacted: this.#history.compacted(),
        scan: (_p, after) => sorted().filter((e) => !after || compareKeys(e.key, after) > 0),
        count: (_p, after) => sorted().filter((e) => !after || compareKeys(e.key, after) > 0).length,
        total: () => sorted().length,
        events: (after, upTo) => this.#history.range(after, upTo, Infinity),
      },
      prefix,
      req,
    );
    return { ...r, items: r.items.map((o) => cloneJson(o)) };
  }

  async create(key: ObjectKey, obj: KubeObject): Promise<KubeObject> {
    if (this.#objects.has(keyString(key))) throw new StorageError('KeyExists', `key exists: ${keyString(key)}`, key);
    return this.#commit('ADDED', key, obj);
  }

  async update(key: ObjectKey, tryUpdate: UpdateFn): Promise<KubeObject> {
    const current = this.#objects.get(keyString(key));
    if (!current) throw new StorageError('KeyNotFound', `key not found: ${keyString(key)}`, key);
    const next = tryUpdate(cloneJson(current.object));
    if (next === null) return cloneJson(current.object);
    return this.#commit('MODIFIED', key, next, current.object);
  }

  async delete(key: ObjectKey, check?: DeleteCheck): Promise<KubeObject> {
    const current = this.#objects.get(keyString(key));
    if (!current) throw new StorageError('KeyNotFound', `key not found: ${keyString(key)}`, key);
    check?.(cloneJson(current.object));
    return this.#commit('DELETED', key, current.object, current.object);
  }

  watch(prefix: KeyPrefix, fromRevision: number, sink: WatchSink): WatchHandle {
    checkSealed(this.sealedAt(prefix.resource), fromRevision);
    return this.#feed.subscribe(prefix, fromRevision, sink);
  }

  async close(): Promise<void> {
    this.#feed.closeAll();
  }

  #commit(type: ChangeEvent['type'], key: ObjectKey, obj: KubeObject, prev?: KubeObject): KubeObject {
    const revision = ++this.#revision;
    const object = withRevision(obj, revision);
    if (type === 'DELETED') this.#objects.delete(keyString(key));
    else this.#objects.set(keyString(key), { key, object });
    const e: ChangeEvent = prev ? { type, key, revision, object, prevObject: prev } : { type, key, revision, object };
    this.#history.append(e);
    this.#feed.publish(e);
    return cloneJson(object);
  }
}
