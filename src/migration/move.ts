/**
 * @module migration/move
 * Moving one CRD's objects from kube-apiserver to this server (moveHere) and back (moveBack), as phases a person can
 * watch, stop (Ctrl-C: a freeze in place is lifted first) and run again (each phase finds what is already done).
 * docs/migration.md explains each phase and what clients see; the facts from kube-apiserver it rests on are there.
 *
 * Here, in order:
 *   preflight  the CRD (no conversion webhook), this server ready and serving the same group, names, scope and
 *              versions, the caller's permissions (preflight.ts), the APIServices local (or already ours: the move
 *              resumes past the switch)
 *   copy       every object, listed from kube-apiserver a page at a time in the storage version, put here as it is
 *              (uid, creationTimestamp, generation, managedFields, status, finalizers, deletionTimestamp kept);
 *              objects here that kube no longer has (an earlier move) are deleted
 *   catch-up   a watch from the list's resourceVersion keeps copying writes made meanwhile
 *   freeze     kube's writes to the CRD paused by a webhook answering 429 + Retry-After (freeze.ts), until a dry-run
 *              write through kube-apiserver is refused
 *   final      one more full list, now final, and what differs put or deleted
 *   seal       the resource's history here begins past every resourceVersion kube-apiserver gave out (Storage.seal):
 *              a client resuming with one of those gets 410 and re-lists, here
 *   switch     the APIServices of every served version point at this server (apiservices.ts)
 *   retire     the CRD's versions set served: false: kube-apiserver tears its storage for them down, which ends the
 *              watches still open on it (their clients come back, through the aggregator, here); the objects stay
 *              in kube's etcd, untouched, and the CRD stays (deleting it would delete them)
 *   thaw       the webhook removed
 * Back, in order: preflight, copy (kube's etcd made to hold exactly this server's objects, kube-etcd.ts, while writes go
 * on), freeze (this server's writes to the resource, 429 + Retry-After), restore (the CRD's versions served again,
 * still behind this server), write (what changed since the copy), release (this server's watches of the resource end with 410 and new ones are refused, so clients
 * re-list, by then through kube-apiserver), switch (the APIServices local again).
 */
import { endFreeze, dryRunWrite, startFreeze, type ServiceRef } from './freeze.js';
import { apiServiceName, availability, giveBack, pointsAt, readApiService, takeOver } from './apiservices.js';
import { collectionPath, keyOf, readCrd, setServed, writeState, type CrdInfo } from './crd-info.js';
import { writeToKubeEtcd, type KubeEtcd } from './kube-etcd.js';
import { checkAccess, checkReady } from './preflight.js';
import type { Reporter } from './progress.js';
import type { Rest } from './rest.js';

type Obj = { apiVersion?: string; kind?: string; metadata: { namespace?: string; name: string; resourceVersion?: string } } & Record<string, unknown>;

/** MoveOptions is what both directions need. */
export interface MoveOptions {
  crdName: string;
  kube: Rest;
  /** This server, called directly (its /migration/v1 routes and its API). */
  here: Rest;
  service: ServiceRef;
  /** base64 PEM of the CA that signed this server's serving certificate (the APIServices' caBundle). */
  caBundle: string;
  report: Reporter;
  /** Objects per import call and per list page. */
  pageSize?: number;
  /** How long to wait for the freeze, or the switch, to take effect. */
  waitMs?: number;
  /** An interrupt (Ctrl-C): the current phase stops, a freeze is lifted. */
  signal?: AbortSignal;
}

/** SEAL_MARGIN is how far past kube's current resourceVersion the seal goes (kube's revisions go on meanwhile). */
const SEAL_MARGIN = 1_000_000;

const MIGRATION_PATH = '/migration/v1/resources';

interface HereResource {
  group: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  storageVersion: string;
  versions: string[];
  frozen: boolean;
}

/** moveHere moves the CRD's objects here and serves its group-version from here. */
export async function moveHere(o: MoveOptions): Promise<void> {
  const { kube, here, report } = o;
  report.phase('preflight', `CustomResourceDefinition ${o.crdName}`);
  const crd = await readCrd(kube, o.crdName);
  await checkServedHere(here, crd);
  const served = crd.state?.servedBy === 'here' ? crd.state.served : Object.fromEntries(crd.versions.map((v) => [v.name, v.served]));
  const versions = Object.entries(served)
    .filter(([, s]) => s)
    .map(([v]) => v);
  if (versions.length === 0) throw new Error(`CustomResourceDefinition ${crd.name} serves no version: nothing to move`);
  await checkReady(here);
  await checkAccess(kube, crd, versions, false);
  const apiServices = await Promise.all(versions.map((v) => readApiService(kube, apiServiceName(crd, v))));
  const switched = apiServices.every((a) => pointsAt(a, o.service));
  // Only a move of ours switches them: an APIService that already points here with no move recorded on the CRD
  // (an install that made its own) would leave the objects in kube-apiserver's storage uncopied.
  if (switched && !crd.state) {
    throw new Error(
      `the APIServices of ${crd.plural}.${crd.group} already point at this server, but no move is recorded on the CRD, so its objects were never copied: point them back at kube-apiserver (the chart's crdAPIServices: false) and run migrate again`,
    );
  }
  apiServices.forEach((a, i) => {
    if (!switched && a?.spec.service && !pointsAt(a, o.service)) {
      throw new Error(
        `APIService ${apiServiceName(crd, versions[i] as string)} already points at ${a.spec.service.namespace}/${a.spec.service.name}, not at kube-apiserver or this server`,
      );
    }
  });
  await here.ok('PUT', `${resourcePath(crd)}/freeze`, { frozen: false });
  report.done(
    switched ? 'already served here: resuming after the switch' : `${crd.kind} ${crd.group}, versions ${versions.join(', ')} (storage ${crd.storageVersion})`,
  );

  if (!switched) {
    await writeState(kube, crd, { servedBy: 'kube', phase: 'copying', served, service: o.service });
    const copied = await copy(o, crd);
    const catchUp = followChanges(o, crd, copied.revision, copied.imported);
    let frozen = false;
    try {
      report.phase('freeze', `pausing writes to ${crd.plural}.${crd.group} in kube-apiserver (429 + Retry-After: clients retry)`);
      await startFreeze(kube, crd, o.service, o.caBundle);
      frozen = true;
      const freezeStart = Date.now();
      // Confirmed only by a 429: a 404 (the object just deleted) or a 500 (the webhook unreachable) is not the freeze.
      let probed = false;
      await waitFor(o, 'the freeze to take effect', async () => {
        const probe = someObject(copied.imported);
        if (!probe) return Date.now() - freezeStart >= NO_OBJECT_FREEZE_WAIT_MS;
        probed = true;
        return (await dryRunWrite(kube, crd, probe)) === 429;
      });
      report.done(
        probed
          ? 'kube-apiserver refuses writes (429)'
          : `no object to try a write on: allowed kube-apiserver ${NO_OBJECT_FREEZE_WAIT_MS / 1000} s to load the webhook configuration`,
      );
      await catchUp.stop();
      report.phase('final', 'listing once more, now that nothing changes');
      const last = await finalSync(o, crd, copied.imported);
      report.done(`${last.put} put, ${last.deleted} deleted`);
      report.phase('seal', `resourceVersions here begin past kube-apiserver's ${last.revision}`);
      const sealed = await here.ok<{ resourceVersion: string }>('POST', `${resourcePath(crd)}/seal`, {
        minResourceVersion: String(last.revision + SEAL_MARGIN),
      });
      report.done(`sealed at ${sealed.body.resourceVersion}`);
      report.phase('switch', `pointing ${versions.map((v) => apiServiceName(crd, v)).join(', ')} at ${o.service.namespace}/${o.service.name}`);
      for (const v of versions) await takeOver(kube, apiServiceName(crd, v), o.service, o.caBundle);
      await waitFor(o, 'kube-apiserver to send the group-version here', async () => {
        const probe = someObject(copied.imported);
        if (probe) return (await dryRunWrite(kube, crd, probe)) === 200;
        const all = await Promise.all(versions.map((v) => readApiService(kube, apiServiceName(crd, v))));
        return all.every((a) => availability(a).available && availability(a).reason !== 'Local');
      });
      report.done(`served here; writes were paused for ${((Date.now() - freezeStart) / 1000).toFixed(1)} s`);
      await writeState(kube, crd, { servedBy: 'here', phase: 'switched', served, service: o.service });
    } finally {
      await catchUp.stop();
      if (frozen) await endFreeze(kube, crd);
    }
  }
  report.phase('retire', `setting every version of ${crd.name} served: false (its objects stay in kube's etcd, for a rollback)`);
  // The CRD as read at the start: setServed's patch tests each version's name, so a CRD changed meanwhile fails it.
  await setServed(kube, crd, () => false);
  await endFreeze(kube, crd);
  await writeState(kube, crd, { servedBy: 'here', phase: 'retired', served, service: o.service });
  report.done(`kube-apiserver no longer serves ${crd.plural}.${crd.group}; its watches end and their clients re-list here`);
}

/** moveBack moves the CRD's objects back into kube-apiserver and serves its group-version from there again. */
export async function moveBack(o: MoveOptions & { etcd: KubeEtcd }): Promise<void> {
  const { kube, here, report } = o;
  report.phase('preflight', `CustomResourceDefinition ${o.crdName}`);
  const crd = await readCrd(kube, o.crdName);
  await checkServedHere(here, crd);
  const served = crd.state?.served ?? Object.fromEntries(crd.versions.map((v) => [v.name, true]));
  const versions = Object.entries(served)
    .filter(([, s]) => s)
    .map(([v]) => v);
  await checkReady(here);
  await checkAccess(kube, crd, versions, true);
  const apiServices = await Promise.all(versions.map((v) => readApiService(kube, apiServiceName(crd, v))));
  const ours = apiServices.map((a) => pointsAt(a, o.service));
  if (!ours.some(Boolean) && crd.state?.servedBy !== 'here') {
    // A move here stopped before its switch: the objects never left. A freeze it left behind (a killed command)
    // goes, and writes here resume.
    await endFreeze(kube, crd);
    await here.ok('PUT', `${resourcePath(crd)}/freeze`, { frozen: false });
    if (crd.state) await writeState(kube, crd, { servedBy: 'kube', phase: 'move stopped before the switch, rolled back', served });
    report.done('not served here: nothing to move back (any pause of writes lifted)');
    return;
  }
  report.done(`versions ${versions.join(', ')}`);
  // While this server still takes writes: everything written once, so that the pass under the freeze writes only
  // what changed since (kube's copy of an object changed here, or created, is written in this pass).
  report.phase('copy', "writing this server's objects into kube-apiserver's etcd, exactly as they are here");
  const known = new Map<string, string>();
  const first = await listAll(here, collectionPath(crd), o.pageSize ?? 500);
  const copied = await writeToKubeEtcd(o.etcd, crd, first.items, (n) => report.count(n, first.items.length), known);
  report.done(`${first.items.length} objects: ${copied.put} written, ${copied.unchanged} already equal, ${copied.deleted} deleted`);
  report.phase('freeze', `pausing writes to ${crd.plural}.${crd.group} here (429 + Retry-After: clients retry)`);
  await here.ok('PUT', `${resourcePath(crd)}/freeze`, { frozen: true });
  const freezeStart = Date.now();
  let done = false;
  try {
    report.done('this server refuses writes (429)');
    report.phase('restore', `setting ${versions.join(', ')} of ${crd.name} served: true again (still behind this server)`);
    await setServed(kube, crd, (v) => served[v] === true);
    await writeState(kube, crd, { servedBy: 'here', phase: 'restoring', served, service: o.service });
    report.done('served flags restored');
    report.phase('write', 'writing what changed since, now that nothing changes');
    const { items } = await listAll(here, collectionPath(crd), o.pageSize ?? 500);
    const written = await writeToKubeEtcd(o.etcd, crd, items, (n) => report.count(n, items.length), known);
    report.done(`${written.put} written, ${written.deleted} deleted`);
    // Released before the switch: watches here end with 410 and new ones are refused, so a client re-lists (after
    // its backoff, by when kube-apiserver serves the group-version) rather than resume with a resourceVersion of ours.
    report.phase('release', "ending this server's watches of the resource with 410: clients re-list, through kube-apiserver");
    const ended = await here.ok<{ endedWatches: number }>('POST', `${resourcePath(crd)}/end-watches`);
    report.done(`${ended.body.endedWatches} watches ended`);
    report.phase('switch', `pointing ${versions.map((v) => apiServiceName(crd, v)).join(', ')} back at kube-apiserver`);
    for (const v of versions) await giveBack(kube, apiServiceName(crd, v));
    const sample = items[0];
    await waitFor(o, 'kube-apiserver to serve the group-version again', async () => {
      if (sample) return (await dryRunWrite(kube, crd, sample)) === 200;
      const all = await Promise.all(versions.map((v) => readApiService(kube, apiServiceName(crd, v))));
      return all.every((a) => a && !a.spec.service && availability(a).available);
    });
    report.done(`served by kube-apiserver; writes were paused for ${((Date.now() - freezeStart) / 1000).toFixed(1)} s`);
    done = true;
  } finally {
    // Stopped before the switch: the group-version is still served here, so writes resume here.
    if (!done) await here.call('PUT', `${resourcePath(crd)}/freeze`, { frozen: false });
  }
  await writeState(kube, crd, { servedBy: 'kube', phase: 'moved back', served });
  report.info('this server keeps refusing writes and watches of the resource until it is moved here again');
}

const resourcePath = (crd: CrdInfo) => `${MIGRATION_PATH}/${encodeURIComponent(crd.group)}/${encodeURIComponent(crd.plural)}`;

// checkServedHere: this server serves the CRD's kind with the same names, scope, storage version and versions.
async function checkServedHere(here: Rest, crd: CrdInfo): Promise<void> {
  const a = await here.ok<{ resources: HereResource[] }>('GET', MIGRATION_PATH);
  const mine = a.body.resources.find((r) => r.group === crd.group && r.resource === crd.plural);
  const hint = `start this server with --crd and the same CustomResourceDefinition file`;
  if (!mine) throw new Error(`this server does not serve ${crd.plural}.${crd.group}: ${hint}`);
  const problems: string[] = [];
  if (mine.kind !== crd.kind) problems.push(`kind ${mine.kind} here, ${crd.kind} in the CRD`);
  if (mine.namespaced !== crd.namespaced) problems.push(`scope differs`);
  if (mine.storageVersion !== crd.storageVersion) problems.push(`storage version ${mine.storageVersion} here, ${crd.storageVersion} in the CRD`);
  const missing = crd.versions.filter((v) => v.served && !mine.versions.includes(v.name)).map((v) => v.name);
  if (missing.length) problems.push(`versions not served here: ${missing.join(', ')}`);
  if (crd.conversion === 'Webhook') problems.push('the CRD converts versions with a webhook, which this server cannot call');
  if (problems.length) throw new Error(`${crd.plural}.${crd.group}: ${problems.join('; ')} (${hint})`);
}

/** listAll lists a collection a page at a time; the revision is the first page's (the snapshot's). */
export async function listAll(
  rest: Rest,
  path: string,
  pageSize: number,
  onPage?: (items: Obj[], total: number | undefined) => Promise<void>,
): Promise<{ items: Obj[]; revision: number }> {
  const items: Obj[] = [];
  let token = '';
  let revision = 0;
  for (;;) {
    const a = await rest.ok<{ items: Obj[]; metadata: { continue?: string; resourceVersion: string; remainingItemCount?: number } }>(
      'GET',
      `${path}?limit=${pageSize}${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
    );
    if (!revision) revision = Number(a.body.metadata.resourceVersion);
    const page = a.body.items.map((i) => ({ ...i }));
    const remaining = a.body.metadata.remainingItemCount;
    await onPage?.(page, remaining !== undefined ? items.length + page.length + remaining : undefined);
    items.push(...page);
    token = a.body.metadata.continue ?? '';
    if (!token) return { items, revision };
  }
}

// copy puts every object of kube's list here, a page per call, and deletes what is here but not there.
async function copy(o: MoveOptions, crd: CrdInfo): Promise<{ revision: number; imported: Map<string, string> }> {
  const { kube, here, report } = o;
  report.phase('copy', `copying ${crd.plural}.${crd.group} from kube-apiserver`);
  const imported = new Map<string, string>();
  let copied = 0;
  let known: number | undefined;
  const { revision } = await listAll(kube, collectionPath(crd), o.pageSize ?? 500, async (page, total) => {
    stopIfInterrupted(o);
    known ??= total;
    if (page.length) await here.ok('POST', `${resourcePath(crd)}/objects`, { put: page.map(withType(crd)) });
    for (const item of page) imported.set(keyOf(item), item.metadata.resourceVersion ?? '');
    copied += page.length;
    report.count(copied, known);
  });
  const existing = await listAll(here, collectionPath(crd), o.pageSize ?? 500);
  const stale = existing.items.filter((i) => !imported.has(keyOf(i))).map((i) => ({ namespace: i.metadata.namespace, name: i.metadata.name }));
  if (stale.length) await here.ok('POST', `${resourcePath(crd)}/objects`, { delete: stale });
  report.count(copied, copied, true);
  report.done(
    `${copied} objects copied at kube-apiserver's resourceVersion ${revision}${stale.length ? `, ${stale.length} left from an earlier move deleted` : ''}`,
  );
  return { revision, imported };
}

/**
 * someObject names one object kube-apiserver holds now (copy, the catch-up and the final sync keep `imported` current),
 * to try a dry-run write on; undefined when there is none.
 */
function someObject(imported: Map<string, string>): { metadata: { namespace?: string; name: string } } | undefined {
  const key: string | undefined = imported.keys().next().value;
  if (key === undefined) return undefined;
  const slash = key.indexOf('/');
  const namespace = key.slice(0, slash);
  return { metadata: { ...(namespace ? { namespace } : {}), name: key.slice(slash + 1) } };
}

// followChanges copies kube's writes after `revision` until stopped (a 410 or an ended watch starts it again from the
// last revision seen; the final sync catches whatever it missed).
function followChanges(o: MoveOptions, crd: CrdInfo, revision: number, imported: Map<string, string>): { stop(): Promise<void> } {
  const { kube, here, report } = o;
  const abort = new AbortController();
  let from = revision;
  let applied = 0;
  report.phase('catch-up', `copying writes made since resourceVersion ${revision}`);
  const running = (async () => {
    while (!abort.signal.aborted) {
      try {
        await kube.watch(
          `${collectionPath(crd)}?watch=true&allowWatchBookmarks=true&resourceVersion=${from}`,
          async (e) => {
            const obj = e.object as Obj;
            if (e.type === 'ERROR') {
              from = 0;
              return;
            }
            from = Number(obj.metadata?.resourceVersion ?? from);
            if (e.type === 'BOOKMARK') return;
            if (e.type === 'DELETED') {
              await here.ok('POST', `${resourcePath(crd)}/objects`, { delete: [{ namespace: obj.metadata.namespace, name: obj.metadata.name }] });
              imported.delete(keyOf(obj));
            } else {
              await here.ok('POST', `${resourcePath(crd)}/objects`, { put: [withType(crd)(obj)] });
              imported.set(keyOf(obj), obj.metadata.resourceVersion ?? '');
            }
            applied++;
          },
          abort.signal,
        );
      } catch (e) {
        if (abort.signal.aborted) return;
        report.info(`watch ended (${(e as Error).message}); the final list will catch up`);
        return;
      }
      if (from === 0) return; // 410: the final list does the rest.
    }
  })();
  return {
    async stop() {
      if (abort.signal.aborted) return;
      abort.abort();
      await running;
      report.info(`${applied} writes copied while catching up`);
    },
  };
}

// finalSync lists kube once more (writes are frozen) and puts what changed since it was copied, deletes what went.
async function finalSync(o: MoveOptions, crd: CrdInfo, imported: Map<string, string>): Promise<{ put: number; deleted: number; revision: number }> {
  const { kube, here } = o;
  const seen = new Set<string>();
  let put = 0;
  const { revision } = await listAll(kube, collectionPath(crd), o.pageSize ?? 500, async (page) => {
    stopIfInterrupted(o);
    const changed = page.filter((i) => imported.get(keyOf(i)) !== i.metadata.resourceVersion);
    for (const i of page) seen.add(keyOf(i));
    if (changed.length) await here.ok('POST', `${resourcePath(crd)}/objects`, { put: changed.map(withType(crd)) });
    for (const i of changed) imported.set(keyOf(i), i.metadata.resourceVersion ?? '');
    put += changed.length;
  });
  const gone = [...imported.keys()].filter((k) => !seen.has(k));
  if (gone.length) {
    await here.ok('POST', `${resourcePath(crd)}/objects`, {
      delete: gone.map((k) => {
        const [namespace, name] = k.split('/') as [string, string];
        return { namespace, name };
      }),
    });
  }
  for (const k of gone) imported.delete(k);
  return { put, deleted: gone.length, revision };
}

// A list's items carry no apiVersion and kind in JSON from some servers' lists: set them from the CRD.
const withType = (crd: CrdInfo) => (o: Obj) => ({ ...o, apiVersion: `${crd.group}/${crd.storageVersion}`, kind: crd.kind });

const stopIfInterrupted = (o: MoveOptions) => {
  if (o.signal?.aborted) throw new Error('interrupted');
};

// waitFor polls `check` every 100 ms until it holds, or fails after o.waitMs (default 30 s).
/**
 * NO_OBJECT_FREEZE_WAIT_MS: with no object to try a write on, the freeze cannot be seen in an answer; kube-apiserver
 * loads a new webhook configuration from its informer (webhook/configuration), normally within milliseconds, and a
 * create it accepted before then is in the final list, taken after this wait.
 */
const NO_OBJECT_FREEZE_WAIT_MS = 2_000;

async function waitFor(o: MoveOptions, what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + (o.waitMs ?? 30_000);
  for (;;) {
    if (o.signal?.aborted) throw new Error(`interrupted while waiting for ${what}`);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what} after ${(o.waitMs ?? 30_000) / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
