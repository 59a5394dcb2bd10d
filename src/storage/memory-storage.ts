/**
 * @module storage/memory-storage
 * MemoryStorage: the same contract as LmdbStorage, in a Map, for fast unit tests of the registry.
 * Not durable; never used by the server itself.
 */
import type { KubeObject } from '../apis/meta/types.js';
import { ChangeFeed } from './change-feed.js';
import { StorageError } from './errors.js';
import type { ChangeEvent, DeleteCheck, KeyPrefix, ListResult, ObjectKey, Storage, UpdateFn, WatchHandle } from './interface.js';
import { compareKeys, inPrefix, keyString } from './keys.js';
import { withRevision } from './lmdb-storage.js';

/** MemoryStorage implements Storage in memory. */
export class MemoryStorage implements Storage {
  readonly #objects = new Map<string, { key: ObjectKey; object: KubeObject }>();
  readonly #feed = new ChangeFeed(0);
  #revision = 0;

  currentRevision(): number {
    return this.#revision;
  }

  get(key: ObjectKey): KubeObject | undefined {
    const e = this.#objects.get(keyString(key));
    return e && structuredClone(e.object);
  }

  list(prefix: KeyPrefix): ListResult {
    const entries = [...this.#objects.values()].filter((e) => inPrefix(e.key, prefix)).sort((a, b) => compareKeys(a.key, b.key));
    return { items: entries.map((e) => structuredClone(e.object)), revision: this.#revision };
  }

  async create(key: ObjectKey, obj: KubeObject): Promise<KubeObject> {
    if (this.#objects.has(keyString(key))) throw new StorageError('KeyExists', `key exists: ${keyString(key)}`, key);
    return this.#commit('ADDED', key, obj);
  }

  async update(key: ObjectKey, tryUpdate: UpdateFn): Promise<KubeObject> {
    const current = this.#objects.get(keyString(key));
    if (!current) throw new StorageError('KeyNotFound', `key not found: ${keyString(key)}`, key);
    const next = tryUpdate(structuredClone(current.object));
    if (next === null) return structuredClone(current.object);
    return this.#commit('MODIFIED', key, next, current.object);
  }

  async delete(key: ObjectKey, check?: DeleteCheck): Promise<KubeObject> {
    const current = this.#objects.get(keyString(key));
    if (!current) throw new StorageError('KeyNotFound', `key not found: ${keyString(key)}`, key);
    check?.(structuredClone(current.object));
    return this.#commit('DELETED', key, current.object, current.object);
  }

  watch(prefix: KeyPrefix, fromRevision: number, onEvent: (e: ChangeEvent) => void): WatchHandle {
    return this.#feed.subscribe(prefix, fromRevision, onEvent);
  }

  async close(): Promise<void> {
    this.#feed.closeAll();
  }

  #commit(type: ChangeEvent['type'], key: ObjectKey, obj: KubeObject, prev?: KubeObject): KubeObject {
    const revision = ++this.#revision;
    const object = withRevision(obj, revision);
    if (type === 'DELETED') this.#objects.delete(keyString(key));
    else this.#objects.set(keyString(key), { key, object });
    this.#feed.publish(prev ? { type, key, revision, object, prevObject: prev } : { type, key, revision, object });
    return structuredClone(object);
  }
}
