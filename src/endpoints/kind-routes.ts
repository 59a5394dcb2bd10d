/**
 * @module endpoints/kind-routes
 * Serves one kind: a ResourceStore and its routes per served version, all over the same stored objects. With more
 * than one version, each version's store sees the storage through a converting view (registry/versioned-storage),
 * managedFields paths are translated between versions, and objects an earlier release stored in another version are
 * migrated to the storage version before the server starts serving.
 */
import type { FastifyInstance } from 'fastify';
import type { KindDefinition } from '../registry/resource.js';
import { servedVersions } from '../registry/resource.js';
import { ResourceStore, type StoreOptions } from '../registry/store.js';
import { fieldVersions, migrateStorageVersion, versionCodecs, versionedStorage } from '../registry/versioned-storage.js';
import type { Storage } from '../storage/interface.js';
import { registerResourceRoutes } from './resource-routes.js';
import type { WatchRegistry } from './watch.js';

/** registerKind installs every served version of `kind` and returns their stores (the storage version's first). */
export function registerKind(
  app: FastifyInstance, kind: KindDefinition, storage: Storage, opts: Omit<StoreOptions, 'fieldVersions'>, watches: WatchRegistry,
): ResourceStore[] {
  const versions = servedVersions(kind);
  if (versions.length === 1) {
    const store = new ResourceStore(kind.storage, storage, opts);
    registerResourceRoutes(app, store, watches);
    return [store];
  }
  const codecs = versionCodecs(versions);
  const fields = fieldVersions(versions);
  const resource = `${kind.storage.group}/${kind.storage.plural}`;
  const storageCodec = codecs.get(versions[0]?.storageApiVersion ?? '');
  let closing = false;
  app.addHook('onClose', async () => {
    closing = true;
  });
  // Awaited before listening: until every object is in the storage version, a list could not send stored text as is.
  app.addHook('onReady', async () => {
    if (!storageCodec) return;
    const done = await migrateStorageVersion(storage, resource, storageCodec, () => closing);
    if (done.migrated > 0) app.log.warn({ resource, ...done, storageVersion: storageCodec.storageApiVersion }, 'migrated stored objects to the storage version');
  });
  const stores: ResourceStore[] = [];
  for (const v of versions) {
    const codec = codecs.get(`${v.definition.group}/${v.definition.version}`);
    if (!codec) continue;
    const store = new ResourceStore(v.definition, versionedStorage(storage, codec), { ...opts, fieldVersions: fields });
    registerResourceRoutes(app, store, watches);
    stores.push(store);
  }
  return stores;
}
