/**
 * @module registry/startup-tasks
 * The walks over stored objects a kind needs once serving starts (kube's post-start hooks): the storage version
 * migration of a kind served in several versions (or whose schema gained defaults) and the repair of stored
 * metadata a Go client could not decode. Each is a plain task the server starts when it is ready, in the
 * background so a large store does not delay readiness, told when the server is closing and given a logger.
 * Entry points: migrationTask, metadataRepairTask; the REST map (rest-map.ts) makes them.
 */
import type { UnreadableObject } from '../storage/corrupt-object.js';
import { etcdKey } from '../storage/corrupt-object.js';
import type { Storage } from '../storage/interface.js';
import type { WalkPhase, WalkProgress } from '../storage/walk.js';
import { UNSAFE_DELETE_QUERY, UNSAFE_DELETE_VERB } from './delete-options.js';
import type { ResourceStore } from './store.js';
import { migrateStorageVersion, type VersionCodec } from './versioned-storage.js';

/** TaskLog is what a start-up task writes its lines to (the server's pino logger). */
export interface TaskLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
  child(bindings: object): TaskLog;
}

/** StartupContext is what the server gives a start-up task. */
export interface StartupContext {
  /** closing tells that the server is shutting down: the task stops at its next page and logs no failure. */
  closing(): boolean;
  log: TaskLog;
}

/**
 * StartupTask is one walk to run once serving starts (a PostStartHookFunc). `run` resolves when the walk ends; it
 * reports its own progress and failures and never rejects.
 */
export interface StartupTask {
  /** name says what it does and for which resource (`migrate-storage-version websites.extensions.example.com`). */
  name: string;
  run(ctx: StartupContext): Promise<void>;
}

const MIGRATING = 'migrating stored objects to the storage version';

/**
 * migrationTask rewrites objects stored in another version (or without their schema's defaults) into the storage
 * version. Until it is done every read converts what it meets (versioned-storage), and lists send stored text as
 * is only once `done` has been called. A line when it begins (with the count to do), every few seconds (count,
 * rate, ETA) and at the end; nothing at all for a store already in the storage version. A failure leaves lists
 * converting each item: correct, only slower, until a restart migrates again. A pass that read every object and
 * found none unreadable is marked in the store as `mark` (Storage.mark), and the REST map makes no task then.
 */
export function migrationTask(storage: Storage, resource: string, codec: VersionCodec, done: () => void, mark?: string): StartupTask {
  return {
    name: `migrate-storage-version ${resource}`,
    async run({ closing, log }) {
      const progress = (p: WalkProgress, phase: WalkPhase) => {
        const fields = { resource, storageVersion: codec.storageApiVersion, ...p };
        if (phase === 'start') log.warn(fields, MIGRATING);
        else log.info(fields, MIGRATING);
      };
      // An object that does not decode at all is named once and passed over; the migration goes on past it.
      const skipped = (o: UnreadableObject) => logSkippedUnreadable(log, MIGRATING, codec.storageApiVersion, o);
      try {
        const r = await migrateStorageVersion(storage, resource, codec, closing, progress, skipped);
        if (closing()) return;
        done();
        if (mark && r.unreadable === 0) await storage.mark?.(mark);
        if (r.migrated > 0) {
          log.warn(
            {
              resource,
              checked: r.checked,
              migrated: r.migrated,
              ...(r.unreadable ? { unreadable: r.unreadable } : {}),
              storageVersion: codec.storageApiVersion,
              elapsedSeconds: r.elapsedSeconds,
              perSecond: r.perSecond,
            },
            'migrated stored objects to the storage version',
          );
        }
      } catch (err) {
        if (!closing()) log.error({ err, resource }, `${MIGRATING} failed`);
      }
    },
  };
}

/**
 * metadataRepairTask repairs, once serving starts, objects stored by builds that did not decode metadata as a typed
 * ObjectMeta, so no Go client (a metadata informer of the garbage collector, say) meets one for longer than the
 * scan takes. One pass per kind, through its storage version's store (the objects are the same in every version).
 */
export function metadataRepairTask(store: ResourceStore): StartupTask {
  const def = store.def;
  return {
    name: `repair-stored-metadata ${store.gr.resource}.${store.gr.group}`,
    async run({ closing, log: root }) {
      const log = root.child({ resource: store.gr.resource });
      try {
        const done = await store.repairStoredMetadata(
          (r) =>
            log.warn(
              { namespace: r.namespace, name: r.name, dropped: r.dropped },
              'repaired stored metadata a Go client could not decode: dropped its malformed fields',
            ),
          closing,
          // An object that does not decode at all is named once and passed over; the repair goes on past it.
          (o) => logSkippedUnreadable(log, 'checking stored metadata', `${def.group}/${def.version}`, o),
        );
        if (done.repaired > 0) log.warn(done, 'repaired stored objects whose metadata a Go client could not decode');
      } catch (err) {
        if (!closing()) log.error({ err }, 'checking stored metadata failed');
      }
    },
  };
}

/**
 * logSkippedUnreadable is the one line a walk over every stored object (`walk`: the metadata repair, the storage
 * version migration) writes for an object it passed over because its stored data does not decode: its etcd-style
 * key, why, and the request that removes it (served in `apiVersion`, `<group>/<version>`).
 */
export function logSkippedUnreadable(log: Pick<TaskLog, 'warn'>, walk: string, apiVersion: string, o: UnreadableObject): void {
  const { resource, namespace, name } = o.key;
  const plural = resource.slice(resource.lastIndexOf('/') + 1);
  const path = `/apis/${apiVersion}/${namespace ? `namespaces/${encodeURIComponent(namespace)}/` : ''}${plural}/${encodeURIComponent(name)}?${UNSAFE_DELETE_QUERY}`;
  log.warn(
    { key: etcdKey(o.key), ...(namespace ? { namespace } : {}), name, reason: o.reason, delete: `kubectl delete --raw '${path}'` },
    `${walk} skipped ${etcdKey(o.key)}: its stored data does not decode (${o.reason}), so it cannot be read, listed, watched or ` +
      `backed up; delete it with DELETE ${path} (kubectl delete --raw '${path}'; needs the verbs delete and ${UNSAFE_DELETE_VERB})`,
  );
}
