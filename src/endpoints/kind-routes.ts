/**
 * @module endpoints/kind-routes
 * Serves one kind as a fastify plugin: a ResourceStore and its routes per served version, all over the same stored
 * objects. With more than one version, each version's store sees the storage through a converting view
 * (registry/versioned-storage), managedFields paths are translated between versions, and objects an earlier release
 * stored in another version are migrated to the storage version before the server starts serving.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { KindDefinition } from '../registry/resource.js';
import { servedVersions } from '../registry/resource.js';
import { ResourceStore, type StoreOptions } from '../registry/store.js';
import { fieldVersions, migrateStorageVersion, versionCodecs, versionedStorage, type VersionCodec } from '../registry/versioned-storage.js';
import type { Storage } from '../storage/interface.js';
import { registerResourceRoutes } from './resource-routes.js';
import type { WatchRegistry } from './watch.js';

/** KindRoutes is a kind ready to be served: its stores (the storage version's first) and the plugin with its routes. */
export interface KindRoutes {
  stores: ResourceStore[];
  plugin: FastifyPluginAsync;
}

/**
 * kindRoutes builds the stores of every served version of `kind` and the plugin that installs their routes. The
 * stores exist at once (the controllers use the storage version's); the routes when the plugin is registered.
 */
export function kindRoutes(kind: KindDefinition, storage: Storage, opts: Omit<StoreOptions, 'fieldVersions'>, watches: WatchRegistry): KindRoutes {
  const versions = servedVersions(kind);
  if (versions.length === 1) {
    const store = new ResourceStore(kind.storage, storage, opts);
    return { stores: [store], plugin: async (scope) => registerResourceRoutes(scope, store, watches) };
  }
  const codecs = versionCodecs(versions);
  const fields = fieldVersions(versions);
  const stores: ResourceStore[] = [];
  for (const v of versions) {
    const codec = codecs.get(`${v.definition.group}/${v.definition.version}`);
    if (codec) stores.push(new ResourceStore(v.definition, versionedStorage(storage, codec), { ...opts, fieldVersions: fields }));
  }
  const storageCodec = codecs.get(versions[0]?.storageApiVersion ?? '');
  return {
    stores,
    plugin: async (scope) => {
      if (storageCodec) migrateBeforeServing(scope, storage, `${kind.storage.group}/${kind.storage.plural}`, storageCodec);
      for (const store of stores) registerResourceRoutes(scope, store, watches);
    },
  };
}

// Awaited before listening: until every object is in the storage version, a list could not send stored text as is.
function migrateBeforeServing(scope: Parameters<FastifyPluginAsync>[0], storage: Storage, resource: string, codec: VersionCodec): void {
  let closing = false;
  scope.addHook('onClose', async () => {
    closing = true;
  });
  scope.addHook('onReady', async () => {
    const done = await migrateStorageVersion(storage, resource, codec, () => closing);
    if (done.migrated > 0) scope.log.warn({ resource, ...done, storageVersion: codec.storageApiVersion }, 'migrated stored objects to the storage version');
  });
}
