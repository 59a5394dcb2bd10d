/**
 * @module endpoints/migration-routes
 * The server's side of moving a CRD's objects between kube-apiserver and this server (`website-apiserver migrate`,
 * docs/migration.md). These are not Kubernetes APIs: the migrate command calls them on this server directly, never
 * through kube-apiserver (which, before the switch, sends the group-version's requests to the CRD's own handler).
 * They are non-resource paths, so a delegated authorizer asks for `nonResourceURLs: ["/migration/*"]`.
 *
 *   GET  /migration/v1/resources                              each served kind: versions, scope, frozen, seal
 *   POST /migration/v1/resources/:group/:resource/objects     {put: [objects], delete: [{namespace, name}]}
 *   PUT  /migration/v1/resources/:group/:resource/freeze      {frozen: true|false} (write-freeze.ts)
 *   POST /migration/v1/resources/:group/:resource/seal        {minResourceVersion}: the history begins anew
 *                                                             (Storage.seal), and the resource's watches end
 *   POST /migration/v1/resources/:group/:resource/end-watches the resource's watches end with 410, and new ones are
 *                                                             refused with 410 until it is thawed (clients re-list)
 *   POST /migration/v1/admission/freeze                       a validating admission webhook (AdmissionReview v1)
 *                                                             that refuses every request it is sent with a 429
 *                                                             and Retry-After: kube-apiserver's side of a freeze
 *
 * The webhook path is served without credentials (kube-apiserver calls webhooks anonymously unless configured
 * otherwise): it reads nothing and can only say "retry".
 */
import type { FastifyInstance } from 'fastify';
import { type StatusError, badRequest, expired, notFoundPath, tooManyRequests } from '../apis/meta/errors.js';
import { ImportStore } from '../registry/import-store.js';
import { servedVersions, type KindDefinition } from '../registry/resource.js';
import type { Storage } from '../storage/interface.js';
import type { WatchRegistry } from './watch.js';
import { FREEZE_RETRY_AFTER_SECONDS, type WriteFreeze } from './write-freeze.js';

/** FREEZE_WEBHOOK_PATH is the admission webhook's path, served without credentials. */
export const FREEZE_WEBHOOK_PATH = '/migration/v1/admission/freeze';

/** MigrationDeps are what the routes work on. */
export interface MigrationDeps {
  kinds: readonly KindDefinition[];
  storage: Storage;
  watches: WatchRegistry;
  freeze: WriteFreeze;
}

type ResourceParams = { Params: { group: string; resource: string } };

/** registerMigrationRoutes installs the routes above. */
export function registerMigrationRoutes(app: FastifyInstance, deps: MigrationDeps): void {
  const stores = new Map<string, { kind: KindDefinition; store: ImportStore }>();
  for (const kind of deps.kinds) {
    const store = new ImportStore(kind.storage, deps.storage);
    stores.set(store.resource, { kind, store });
  }
  const storeOf = (p: { group: string; resource: string }) => {
    const found = stores.get(`${p.group}/${p.resource}`);
    if (!found) throw notFoundPath();
    return found.store;
  };

  app.get('/migration/v1/resources', async () => ({
    resources: [...stores.values()].map(({ kind, store }) => ({
      group: store.def.group,
      resource: store.def.plural,
      kind: store.def.kind,
      namespaced: store.def.namespaced,
      storageVersion: store.def.version,
      versions: servedVersions(kind).map((v) => v.definition.version),
      frozen: deps.freeze.frozen(store.resource),
      sealedResourceVersion: String(store.sealedAt()),
    })),
    resourceVersion: String(deps.storage.currentRevision()),
  }));

  app.post<ResourceParams & { Body: { put?: unknown; delete?: unknown } }>('/migration/v1/resources/:group/:resource/objects', async (req) => {
    const store = storeOf(req.params);
    const body = req.body ?? {};
    const put = body.put ?? [];
    const remove = body.delete ?? [];
    if (!Array.isArray(put) || !Array.isArray(remove)) throw badRequest('put and delete must be lists');
    const counts = await store.put(put);
    await store.remove(remove as { namespace?: string; name: string }[], counts);
    return { ...counts, resourceVersion: String(deps.storage.currentRevision()) };
  });

  app.put<ResourceParams & { Body: { frozen?: unknown } }>('/migration/v1/resources/:group/:resource/freeze', async (req) => {
    const store = storeOf(req.params);
    const frozen = req.body?.frozen;
    if (typeof frozen !== 'boolean') throw badRequest('frozen must be true or false');
    deps.freeze.set(store.resource, frozen);
    // A thaw also ends a release: the resource is served here again.
    if (!frozen) deps.watches.reopenResource(store.resource);
    return { frozen };
  });

  app.post<ResourceParams & { Body: { minResourceVersion?: unknown } }>('/migration/v1/resources/:group/:resource/seal', async (req) => {
    const store = storeOf(req.params);
    const min = Number(req.body?.minResourceVersion);
    if (!Number.isSafeInteger(min) || min < 0) throw badRequest('minResourceVersion must be a resourceVersion (a non-negative integer)');
    const sealed = await store.seal(min);
    const ended = deps.watches.closeResource(store.resource);
    return { resourceVersion: String(sealed), endedWatches: ended };
  });

  // Once the resource is served by kube-apiserver again, its clients must re-list there: their resourceVersions are
  // this server's, which kube-apiserver's watch cache would take for future ones and wait on (a silent watch), so each
  // watch ends with 410 rather than cleanly.
  app.post<ResourceParams>('/migration/v1/resources/:group/:resource/end-watches', async (req) => {
    const store = storeOf(req.params);
    const gone = expired(`${store.def.plural}.${store.def.group} is served by another server now: re-list`);
    return { endedWatches: deps.watches.closeResource(store.resource, gone) };
  });

  app.post<{ Body: { request?: { uid?: unknown } } }>(FREEZE_WEBHOOK_PATH, async (req) => {
    const uid = req.body?.request?.uid;
    if (typeof uid !== 'string') throw badRequest('expected an AdmissionReview with request.uid');
    return {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: {
        uid,
        allowed: false,
        // kube-apiserver answers the write with this result (webhook errors.ToStatusErr), Retry-After included: the
        // same 429 as this server's own freeze, its result fields only, as a webhook's AdmissionResponse carries them.
        status: resultOf(tooManyRequests('writes are paused while the objects are moved to another server; retry shortly', FREEZE_RETRY_AFTER_SECONDS)),
      },
    };
  });
}

// resultOf is a StatusError's metav1.Status without its type and list metadata.
function resultOf(e: StatusError) {
  const { code, reason, message, details } = e.status;
  return { code, reason, message, details };
}
