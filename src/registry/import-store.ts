/**
 * @module registry/import-store
 * ImportStore writes one kind's objects exactly as another server stored them: a CRD's objects moved here from
 * kube-apiserver (or a later catch-up of their changes). Unlike a client's write, nothing is assigned or validated
 * against the schema: uid, creationTimestamp, generation, managedFields, finalizers, deletionTimestamp, ownerReferences
 * and status are kept as given, because kube-apiserver already admitted them and its clients know them by these
 * values. Only the resourceVersion is ours (storage assigns it). What is refused is what no Go client could decode
 * or what names another kind, scope or object (400, nothing written).
 *
 * Each object is its own write (a revision and a watch event, like any write); a batch is not atomic, and replaying
 * it is harmless (an object already equal is not written again).
 */
import { isDeepStrictEqual } from 'node:util';
import { objectMetaDecodes } from '../apis/meta/decode.js';
import { badRequest } from '../apis/meta/errors.js';
import type { KubeObject } from '../apis/meta/types.js';
import { isStorageError } from '../storage/errors.js';
import type { ObjectKey, Storage } from '../storage/interface.js';
import type { ResourceDefinition } from './resource.js';

/** ImportCounts says what a batch did. */
export interface ImportCounts {
  created: number;
  updated: number;
  unchanged: number;
  deleted: number;
}

/** ImportStore writes a kind's objects as given, in its storage version. */
export class ImportStore {
  readonly def: ResourceDefinition;
  readonly resource: string;
  readonly #storage: Storage;

  /** @param def the kind's storage version: imported objects must be in it. */
  constructor(def: ResourceDefinition, storage: Storage) {
    this.def = def;
    this.resource = `${def.group}/${def.plural}`;
    this.#storage = storage;
  }

  /**
   * put writes each object as given (created, replaced or left when equal); 400 before any write on a bad one. The
   * writes of a batch go to storage together (lmdb commits them in one transaction, a flush for all); an object named
   * twice in a batch is written once, as its last occurrence.
   */
  async put(objects: unknown[], counts: ImportCounts = emptyCounts()): Promise<ImportCounts> {
    const byKey = new Map<string, KubeObject>();
    objects.forEach((o, i) => {
      const obj = this.#check(o, i);
      byKey.set(`${obj.metadata.namespace ?? ''}/${obj.metadata.name}`, obj);
    });
    const outcomes = await Promise.all([...byKey.values()].map((obj) => this.#putOne(obj)));
    for (const o of outcomes) counts[o]++;
    return counts;
  }

  async #putOne(obj: KubeObject): Promise<'created' | 'updated' | 'unchanged'> {
    const key = this.#key(obj.metadata.namespace, obj.metadata.name as string);
    if (!(await this.#storage.get(key))) {
      try {
        await this.#storage.create(key, obj);
        return 'created';
      } catch (e) {
        // Created meanwhile (a replayed batch racing itself): compared and replaced below, like any existing one.
        if (!isStorageError(e, 'KeyExists')) throw e;
      }
    }
    let changed = false;
    await this.#storage.update(key, (cur) => {
      changed = !sameExceptVersion(cur, obj);
      return changed ? obj : null;
    });
    return changed ? 'updated' : 'unchanged';
  }

  /**
   * remove deletes the named objects, when present (a key that is already gone counts for nothing); 400 before any
   * delete on a key without a name. The deletes go to storage together, as put's writes do.
   */
  async remove(keys: { namespace?: string; name: string }[], counts: ImportCounts = emptyCounts()): Promise<ImportCounts> {
    for (const k of keys) if (typeof k?.name !== 'string' || k.name === '') throw badRequest('every key to delete needs a name');
    const deleted = await Promise.all(
      keys.map(async (k) => {
        try {
          await this.#storage.delete(this.#key(k.namespace, k.name));
          return true;
        } catch (e) {
          if (!isStorageError(e, 'KeyNotFound')) throw e;
          return false;
        }
      }),
    );
    counts.deleted += deleted.filter(Boolean).length;
    return counts;
  }

  /** seal begins the kind's history here anew past `minRevision` (Storage.seal); resolves with the sealed revision. */
  async seal(minRevision: number): Promise<number> {
    if (!this.#storage.seal) throw badRequest('this storage backend cannot take a moved resource (it cannot seal its history); use the lmdb backend');
    return this.#storage.seal(this.resource, minRevision);
  }

  /** sealedAt is the revision of the kind's last seal (0: never). */
  sealedAt(): number {
    return this.#storage.sealedAt?.(this.resource) ?? 0;
  }

  #key(namespace: string | undefined, name: string): ObjectKey {
    return { resource: this.resource, namespace: this.def.namespaced ? (namespace ?? '') : '', name };
  }

  // #check refuses what could not be stored as it is: another type, a missing identity, undecodable metadata.
  #check(o: unknown, i: number): KubeObject & { metadata: { name: string } } {
    const where = `object ${i}`;
    if (typeof o !== 'object' || o === null || Array.isArray(o)) throw badRequest(`${where}: not an object`);
    const obj = o as KubeObject;
    const apiVersion = `${this.def.group}/${this.def.version}`;
    if (obj.apiVersion !== apiVersion || obj.kind !== this.def.kind) {
      throw badRequest(`${where}: is ${String(obj.kind)} ${String(obj.apiVersion)}, not ${this.def.kind} ${apiVersion} (the storage version)`);
    }
    const meta = obj.metadata;
    if (typeof meta !== 'object' || meta === null || !objectMetaDecodes(meta)) throw badRequest(`${where}: metadata does not decode as ObjectMeta`);
    if (typeof meta.name !== 'string' || meta.name === '') throw badRequest(`${where}: metadata.name is required`);
    if (typeof meta.uid !== 'string' || meta.uid === '') throw badRequest(`${where}: metadata.uid is required (objects are moved with their identity)`);
    if (typeof meta.creationTimestamp !== 'string') throw badRequest(`${where}: metadata.creationTimestamp is required`);
    const namespaced = typeof meta.namespace === 'string' && meta.namespace !== '';
    if (namespaced !== this.def.namespaced) {
      throw badRequest(`${where}: ${this.def.namespaced ? 'metadata.namespace is required' : 'metadata.namespace must be empty'} for ${this.def.plural}`);
    }
    const { resourceVersion: _dropped, ...metadata } = meta;
    return { ...obj, metadata: metadata as KubeObject['metadata'] & { name: string } };
  }
}

const emptyCounts = (): ImportCounts => ({ created: 0, updated: 0, unchanged: 0, deleted: 0 });

// sameExceptVersion: the stored object already is the imported one (its resourceVersion aside).
function sameExceptVersion(stored: KubeObject, imported: KubeObject): boolean {
  const { resourceVersion: _a, ...a } = stored.metadata;
  return isDeepStrictEqual({ ...stored, metadata: a }, imported);
}
