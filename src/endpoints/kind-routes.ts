/**
 * @module endpoints/kind-routes
 * Serves one kind as a fastify plugin: a ResourceStore and its routes per served version, all over the same stored
 * objects. With more than one version, each version's store sees the storage through a converting view
 * (registry/versioned-storage), managedFields paths are translated between versions, and objects an earlier release
 * stored in another version are migrated to the storage version in the background once serving starts.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FastifyPluginAsync } from 'fastify';
import { compileSchemaAdmission } from '../admission/schema.js';
import { cloneJson } from '../apis/meta/json-clone.js';
import type { JSONSchema } from '../apis/meta/json-schema.js';
import type { KubeObject } from '../apis/meta/types.js';
import type { KindDefinition } from '../registry/resource.js';
import { servedVersions } from '../registry/resource.js';
import { ResourceStore, type StoreOptions } from '../registry/store.js';
import { fieldVersions, migrateStorageVersion, versionCodecs, versionedStorage, type VersionCodec } from '../registry/versioned-storage.js';
import type { WalkPhase, WalkProgress } from '../storage/walk.js';
import type { Storage } from '../storage/interface.js';
import type { UnreadableObject } from '../storage/corrupt-object.js';
import { registerResourceRoutes } from './resource-routes.js';
import { logSkippedUnreadable } from './unsafe-delete.js';
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
  const defaults = storedDefaults(kind.storage.schema);
  if (versions.length === 1 && !defaults) {
    const store = new ResourceStore(kind.storage, storage, opts);
    return { stores: [store], plugin: async (scope) => registerResourceRoutes(scope, store, watches) };
  }
  const codecs = versionCodecs(versions, defaults);
  const fields = fieldVersions(versions);
  // Until the migration has read every object, one of another version may be stored (an earlier release's).
  const migration = { pending: true };
  const stores: ResourceStore[] = [];
  for (const v of versions) {
    const codec = codecs.get(`${v.definition.group}/${v.definition.version}`);
    if (codec) stores.push(new ResourceStore(v.definition, versionedStorage(storage, codec, () => migration.pending), { ...opts, fieldVersions: fields }));
  }
  const storageCodec = codecs.get(versions[0]?.storageApiVersion ?? '');
  return {
    stores,
    plugin: async (scope) => {
      if (storageCodec) migrateOnceServing(scope, storage, `${kind.storage.group}/${kind.storage.plural}`, storageCodec, migration);
      else migration.pending = false;
      for (const store of stores) registerResourceRoutes(scope, store, watches);
    },
  };
}

/**
 * storedDefaults gives a stored object the defaults of the storage version's schema (undefined when it declares
 * none): kube's codec defaults every object it reads from storage, so an object stored before its CRD gained a
 * default shows it. The migration walk stores them; reads until it is done apply them (versioned-storage).
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

/**
 * migrateOnceServing rewrites objects stored in another version in the background once serving starts, so a large
 * store does not delay readiness: meanwhile every read converts what it meets (versioned-storage), and lists only
 * send stored text as is once it is done.
 */
function migrateOnceServing(scope: Parameters<FastifyPluginAsync>[0], storage: Storage, resource: string, codec: VersionCodec, migration: { pending: boolean }): void {
  let closing = false;
  scope.addHook('onClose', async () => {
    closing = true;
  });
  scope.addHook('onReady', async () => {
    // A line when it begins (with the count to do) and every few seconds (count, rate, ETA); the end is the line
    // below. Nothing at all for a store already in the storage version.
    const progress = (p: WalkProgress, phase: WalkPhase) => {
      const fields = { resource, storageVersion: codec.storageApiVersion, ...p };
      if (phase === 'start') scope.log.warn(fields, 'migrating stored objects to the storage version');
      else scope.log.info(fields, 'migrating stored objects to the storage version');
    };
    // An object that does not decode at all is named once and passed over; the migration goes on past it.
    const skipped = (o: UnreadableObject) => logSkippedUnreadable(scope.log, 'migrating stored objects to the storage version', codec.storageApiVersion, o);
    migrateStorageVersion(storage, resource, codec, () => closing, progress, skipped).then((done) => {
      if (closing) return;
      migration.pending = false;
      if (done.migrated > 0) {
        scope.log.warn({
          resource, checked: done.checked, migrated: done.migrated, ...(done.unreadable ? { unreadable: done.unreadable } : {}), storageVersion: codec.storageApiVersion,
          elapsedSeconds: done.elapsedSeconds, perSecond: done.perSecond,
        }, 'migrated stored objects to the storage version');
      }
    }, (err: unknown) => {
      // Lists keep converting each item: correct, only slower, until a restart migrates again.
      if (!closing) scope.log.error({ err, resource }, 'migrating stored objects to the storage version failed');
    });
  });
}
