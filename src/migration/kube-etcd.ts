/**
 * @module migration/kube-etcd
 * The way back: writing a CRD's objects into kube-apiserver's own etcd, exactly as this server holds them. Through
 * kube-apiserver's API that cannot be done: a create always gets a new uid, creationTimestamp and generation 1 and
 * loses its status, and an update cannot set generation or deletionTimestamp. Written in etcd, in the layout
 * kube-apiserver uses for custom resources (`<prefix>/<group>/<plural>[/<namespace>]/<name>`, the object's JSON in
 * the storage version without its resourceVersion), an object is read back by kube-apiserver's watch cache with every
 * field as written; its resourceVersion becomes the etcd revision of the write.
 *
 * The CRD's group-version is still served by this server (frozen) while this runs, so nothing else writes those keys.
 * Values written with encryption at rest (`k8s:enc:` prefix) are refused: this tool cannot write them.
 */
import { isDeepStrictEqual } from 'node:util';
import { Etcd3 } from 'etcd3';
import { etcdClientOptions, rangeEnd, type EtcdTls } from '../storage/etcd-storage.js';
import { inParallel } from '../util/in-parallel.js';
import type { CrdInfo } from './crd-info.js';

/** KubeEtcd is how to reach kube-apiserver's etcd (its --etcd-servers, --etcd-prefix and client TLS). */
export interface KubeEtcd {
  endpoints: string[];
  prefix: string;
  tls?: EtcdTls;
}

type Obj = { metadata: { namespace?: string; name?: string; resourceVersion?: string } } & Record<string, unknown>;

const PAGE = 500;
const WRITERS = 32;

/**
 * readPrefix reads every key under `prefix` with its value, a page at a time at one revision (a single range answer is
 * capped at 4 MiB by gRPC: 10,000 custom resources are more).
 */
export async function readPrefix(client: Etcd3, prefix: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const end = rangeEnd(Buffer.from(prefix));
  let from = Buffer.from(prefix);
  let revision: string | undefined;
  for (;;) {
    const r = await client.kv.range({ key: from, range_end: end, limit: PAGE, ...(revision ? { revision } : {}) });
    revision ??= r.header.revision;
    for (const kv of r.kvs) out[kv.key.toString()] = kv.value.toString();
    const last = r.kvs[r.kvs.length - 1];
    if (!r.more || !last) return out;
    from = Buffer.concat([last.key, Buffer.from([0])]);
  }
}

/** etcdKey is where kube-apiserver keeps one custom resource. */
function etcdKey(etcd: KubeEtcd, crd: CrdInfo, namespace: string | undefined, name: string): string {
  const base = `${etcd.prefix.replace(/\/+$/, '')}/${crd.group}/${crd.plural}`;
  return crd.namespaced ? `${base}/${namespace ?? ''}/${name}` : `${base}/${name}`;
}

/** storedForm is an object as kube-apiserver stores it: without its resourceVersion. */
function storedForm(o: Obj): Obj {
  const { resourceVersion: _rv, ...metadata } = o.metadata;
  return { ...o, metadata };
}

/**
 * writeToKubeEtcd makes the CRD's keys in kube's etcd hold exactly `objects`: changed and missing ones are put,
 * others deleted, equal ones left alone. Resolves with the counts. `known` carries what the keys hold from one call
 * to the next: empty, it is filled from etcd; filled, etcd is not read again (nothing else writes those keys while
 * the CRD's versions are not served by kube-apiserver), so a second pass costs only its changes.
 */
export async function writeToKubeEtcd(
  etcd: KubeEtcd,
  crd: CrdInfo,
  objects: readonly Obj[],
  onProgress: (done: number) => void = () => undefined,
  known: Map<string, string> = new Map(),
): Promise<{ put: number; deleted: number; unchanged: number }> {
  const client = new Etcd3(etcdClientOptions(etcd.endpoints, etcd.tls));
  try {
    const prefix = `${etcd.prefix.replace(/\/+$/, '')}/${crd.group}/${crd.plural}/`;
    if (known.size === 0) for (const [k, v] of Object.entries(await readPrefix(client, prefix))) known.set(k, v);
    const wanted = new Set<string>();
    const puts: [string, string][] = [];
    let unchanged = 0;
    for (const o of objects) {
      const key = etcdKey(etcd, crd, o.metadata.namespace, o.metadata.name ?? '');
      wanted.add(key);
      const stored = storedForm(o);
      const value = `${JSON.stringify(stored)}\n`;
      const current = known.get(key);
      if (current?.startsWith('k8s:enc:')) throw new Error(`${key} is encrypted at rest in kube-apiserver's etcd: a rollback cannot write it`);
      // The same text (what an earlier pass wrote) or the same object in kube's own field order.
      if (current !== undefined && (current === value || isDeepStrictEqual(JSON.parse(current), stored))) unchanged++;
      else puts.push([key, value]);
    }
    const deletes = [...known.keys()].filter((k) => !wanted.has(k));
    // Several writes in flight: writes are paused meanwhile, and clients retry them for about 10 s only.
    let done = unchanged;
    onProgress(done);
    await inParallel(puts, WRITERS, async ([key, value]) => {
      await client.put(key).value(value);
      known.set(key, value);
      onProgress(++done);
    });
    await inParallel(deletes, WRITERS, async (key) => {
      await client.delete().key(key);
      known.delete(key);
    });
    return { put: puts.length, deleted: deletes.length, unchanged };
  } finally {
    client.close();
  }
}
