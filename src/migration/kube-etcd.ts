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
import { Etcd3, type IOptions } from 'etcd3';
import type { CrdInfo } from './crd-info.js';

/** KubeEtcd is how to reach kube-apiserver's etcd (its --etcd-servers, --etcd-prefix and client TLS). */
export interface KubeEtcd {
  endpoints: string[];
  prefix: string;
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
}

type Obj = { metadata: { namespace?: string; name?: string; resourceVersion?: string } } & Record<string, unknown>;

/** etcdKey is where kube-apiserver keeps one custom resource. */
export function etcdKey(etcd: KubeEtcd, crd: CrdInfo, namespace: string | undefined, name: string): string {
  const base = `${etcd.prefix.replace(/\/+$/, '')}/${crd.group}/${crd.plural}`;
  return crd.namespaced ? `${base}/${namespace ?? ''}/${name}` : `${base}/${name}`;
}

/** storedForm is an object as kube-apiserver stores it: without its resourceVersion. */
export function storedForm(o: Obj): Obj {
  const { resourceVersion: _rv, ...metadata } = o.metadata;
  return { ...o, metadata };
}

/**
 * writeToKubeEtcd makes the CRD's keys in kube's etcd hold exactly `objects`: changed and missing ones are put,
 * others deleted, equal ones left alone. Resolves with the counts.
 */
export async function writeToKubeEtcd(
  etcd: KubeEtcd,
  crd: CrdInfo,
  objects: readonly Obj[],
  onProgress: (done: number) => void = () => undefined,
): Promise<{ put: number; deleted: number; unchanged: number }> {
  const options: IOptions = {
    hosts: etcd.endpoints,
    ...(etcd.tls?.ca
      ? {
          credentials: {
            rootCertificate: etcd.tls.ca,
            ...(etcd.tls.key ? { privateKey: etcd.tls.key } : {}),
            ...(etcd.tls.cert ? { certChain: etcd.tls.cert } : {}),
          },
        }
      : {}),
  };
  const client = new Etcd3(options);
  try {
    const prefix = `${etcd.prefix.replace(/\/+$/, '')}/${crd.group}/${crd.plural}/`;
    const existing = await client.getAll().prefix(prefix).strings();
    const wanted = new Set<string>();
    let put = 0;
    let unchanged = 0;
    let done = 0;
    for (const o of objects) {
      const key = etcdKey(etcd, crd, o.metadata.namespace, o.metadata.name ?? '');
      wanted.add(key);
      const stored = storedForm(o);
      const current = existing[key];
      if (current?.startsWith('k8s:enc:')) throw new Error(`${key} is encrypted at rest in kube-apiserver's etcd: a rollback cannot write it`);
      if (current !== undefined && isDeepStrictEqual(JSON.parse(current), stored)) unchanged++;
      else {
        await client.put(key).value(`${JSON.stringify(stored)}\n`);
        put++;
      }
      onProgress(++done);
    }
    let deleted = 0;
    for (const key of Object.keys(existing)) {
      if (wanted.has(key)) continue;
      await client.delete().key(key);
      deleted++;
    }
    return { put, deleted, unchanged };
  } finally {
    client.close();
  }
}
