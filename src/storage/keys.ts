/**
 * @module storage/keys
 * Key layout shared by the backends: `[resource, namespace, name]`, where resource is `<group>/<plural>`.
 * Arrays sort element by element in lmdb (ordered-binary), so one namespace or one resource is a contiguous range.
 */
import type { ChangeEvent, KeyPrefix, ObjectKey } from './interface.js';

/** keyTuple turns an ObjectKey into the stored tuple. */
export const keyTuple = (k: ObjectKey): [string, string, string] => [k.resource, k.namespace, k.name];

/** keyString is a printable key for messages and maps. */
export const keyString = (k: ObjectKey): string => `${k.resource}/${k.namespace}/${k.name}`;

/** inPrefix tells whether a key belongs to a collection. */
export function inPrefix(k: ObjectKey, p: KeyPrefix): boolean {
  return k.resource === p.resource && (p.namespace === undefined || k.namespace === p.namespace);
}

/** compareKeys orders keys like the lmdb range scan: resource, namespace, name (UTF-16 order suffices for DNS names). */
export function compareKeys(a: ObjectKey, b: ObjectKey): number {
  return cmp(a.resource, b.resource) || cmp(a.namespace, b.namespace) || cmp(a.name, b.name);
}
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** eventInPrefix filters change events by collection. */
export const eventInPrefix = (e: ChangeEvent, p: KeyPrefix) => inPrefix(e.key, p);
