/**
 * @module registry/rest-map
 * The REST map: every resource the server serves, built once and outside HTTP (kube's APIGroupInfo
 * VersionedResourcesStorageMap). For each group/version it holds, per resource path, the store that serves it:
 * `<plural>` the object store (ResourceStore: every verb of the generic registry), `<plural>/status` a StatusStore
 * and `<plural>/scale` a ScaleStore when the kind has those subresources. Routes (endpoints/installer.ts),
 * discovery and the controllers all read it; nothing here knows HTTP.
 *
 * A kind served in several versions has one object store per version over the same stored objects: each sees the
 * storage through a converting view (versioned-storage.ts), managedFields paths are translated between versions,
 * and objects an earlier release stored in another version are migrated by a start-up task.
 * Entry point: buildRestMap.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { compileSchemaAdmission } from '../admission/schema.js';
import { cloneJson } from '../apis/meta/json-clone.js';
import type { JSONSchema } from '../apis/meta/json-schema.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { Storage } from '../storage/interface.js';
import { servedVersions, type KindDefinition, type ResourceDefinition } from './resource.js';
import { ScaleStore } from './scale-store.js';
import { metadataRepairTask, migrationTask, type StartupTask } from './startup-tasks.js';
import { StatusStore } from './status-store.js';
import { ResourceStore } from './store.js';
import type { StoreOptions } from './store-types.js';
import { fieldVersions, versionCodecs, versionedStorage } from './versioned-storage.js';

/** RestStorage is what serves one resource path: the object, its status or its scale. */
export type RestStorage = ResourceStore | StatusStore | ScaleStore;

/**
 * GroupVersionResources is one group/version's resources: path (`websites`, `websites/status`, `websites/scale`)
 * to store, in the order the kinds were given, each object store before its subresources.
 */
export interface GroupVersionResources {
  group: string;
  version: string;
  resources: ReadonlyMap<string, RestStorage>;
}

/** RestMap is every served resource, with what the server runs beside serving them. */
export interface RestMap {
  /** groupVersions lists each served group/version once, in the order the kinds were given. */
  groupVersions: readonly GroupVersionResources[];
  /** storeOf is a served kind's object store in its storage version (the one its controllers read and write). */
  storeOf(kind: KindDefinition): ResourceStore;
  /** startupTasks are run once serving starts (storage version migrations, then metadata repairs, per kind). */
  startupTasks: readonly StartupTask[];
}

/**
 * buildRestMap builds the stores of every served version of every kind over `storage`, and the start-up tasks
 * they need. `opts` are the stores' collaborators (admission, standalone mode).
 */
export function buildRestMap(kinds: readonly KindDefinition[], storage: Storage, opts: Omit<StoreOptions, 'fieldVersions'> = {}): RestMap {
  const groupVersions = new Map<string, { group: string; version: string; resources: Map<string, RestStorage> }>();
  const storageStores = new Map<KindDefinition, ResourceStore>();
  const startupTasks: StartupTask[] = [];
  for (const kind of kinds) {
    const { stores, tasks } = kindStores(kind, storage, opts);
    startupTasks.push(...tasks);
    if (stores[0]) storageStores.set(kind, stores[0]);
    for (const store of stores) {
      const { group, version } = store.def;
      const key = `${group}/${version}`;
      let gv = groupVersions.get(key);
      if (!gv) groupVersions.set(key, (gv = { group, version, resources: new Map() }));
      for (const [path, rest] of resourcesOf(store)) gv.resources.set(path, rest);
    }
  }
  return {
    groupVersions: [...groupVersions.values()],
    storeOf(kind) {
      const store = storageStores.get(kind);
      if (!store) throw new Error(`kind ${kind.storage.kind} is not served`);
      return store;
    },
    startupTasks,
  };
}

/** resourcesOf is the paths one version of a kind serves: the object, and its status and scale when it has them. */
export function resourcesOf(store: ResourceStore): [string, RestStorage][] {
  const def: ResourceDefinition = store.def;
  const out: [string, RestStorage][] = [[def.plural, store]];
  if (def.subresources.status) out.push([`${def.plural}/status`, new StatusStore(store)]);
  if (def.subresources.scale) out.push([`${def.plural}/scale`, new ScaleStore(store)]);
  return out;
}

/**
 * kindStores builds the object store of each served version of `kind` (the storage version's first) and the
 * kind's start-up tasks: the storage version migration when the kind has more than one version or defaults to give
 * stored objects, then the repair of stored metadata (always).
 */
function kindStores(kind: KindDefinition, storage: Storage, opts: Omit<StoreOptions, 'fieldVersions'>): { stores: ResourceStore[]; tasks: StartupTask[] } {
  const versions = servedVersions(kind);
  const defaults = storedDefaults(kind.storage.schema);
  if (versions.length === 1 && !defaults) {
    const store = new ResourceStore(kind.storage, storage, opts);
    return { stores: [store], tasks: [metadataRepairTask(store)] };
  }
  const codecs = versionCodecs(versions, defaults);
  const fields = fieldVersions(versions);
  // Until the migration has read every object, one of another version may be stored (an earlier release's).
  const migration = { pending: true };
  const stores: ResourceStore[] = [];
  for (const v of versions) {
    const codec = codecs.get(`${v.definition.group}/${v.definition.version}`);
    if (codec)
      stores.push(
        new ResourceStore(
          v.definition,
          versionedStorage(storage, codec, () => migration.pending),
          { ...opts, fieldVersions: fields },
        ),
      );
  }
  const tasks: StartupTask[] = [];
  const storageCodec = codecs.get(versions[0]?.storageApiVersion ?? '');
  const resource = `${kind.storage.group}/${kind.storage.plural}`;
  // A completed migration is marked in the store for this storage version and schema (its defaults): every object
  // written since went through it, so a restart neither walks the store again nor converts reads meanwhile.
  const mark = storageCodec && `storage-version/${resource}/${storageCodec.storageApiVersion}/${schemaDigest(kind.storage.schema)}`;
  if (storageCodec && mark && !storage.marked?.(mark)) {
    tasks.push(migrationTask(storage, resource, storageCodec, () => (migration.pending = false), mark));
  } else migration.pending = false;
  // One repair per kind: the storage version's store makes it (the objects are the same in every version).
  const first = stores.find((s) => s.def.storageVersion === undefined || s.def.storageVersion === s.def.version);
  if (first) tasks.push(metadataRepairTask(first));
  return { stores, tasks };
}

/** schemaDigest names a schema by its content: a mark made under one schema does not hold for another. */
function schemaDigest(schema: JSONSchema): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex').slice(0, 16);
}

/**
 * storedDefaults gives a stored object the defaults of the storage version's schema (undefined when it declares
 * none): kube's codec defaults every object it reads from storage, so an object stored before its CRD gained a
 * default shows it. The migration task stores them; reads until it is done apply them (versioned-storage).
 */
function storedDefaults(schema: JSONSchema): ((obj: KubeObject) => KubeObject | null) | undefined {
  const admission = compileSchemaAdmission(schema);
  if (!admission.hasDefaults) return undefined;
  return (obj) => {
    const copy = cloneJson(obj);
    admission.applyDefaults(copy as unknown as Record<string, unknown>);
    return isDeepStrictEqual(copy, obj) ? null : copy;
  };
}
