/**
 * @module registry/object-paths
 * Paths of field names into a JSON object: its leaves (for a kind's scale mapping and version conversion tests),
 * and reading or writing one.
 */
import type { KubeObject } from '../apis/meta/types.js';

type Path = string[];

// Identity and server-owned metadata: not fields of the object's content.
const SYSTEM_META = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
  'generateName',
]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** leafPaths lists the leaves of an object (for `status` or for everything else): scalars, lists, empty objects. */
export function leafPaths(obj: KubeObject, sub: 'main' | 'status'): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, at: Path) => {
    let leaf = true;
    if (isObject(v)) {
      for (const k in v) {
        if (!Object.hasOwn(v, k)) continue;
        leaf = false;
        walk(v[k], [...at, k]);
      }
    }
    if (leaf) out.push(at);
  };
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if ((k === 'status') !== (sub === 'status')) continue;
    if (k === 'metadata' && isObject(v)) {
      for (const [mk, mv] of Object.entries(v)) if (!SYSTEM_META.has(mk)) walk(mv, ['metadata', mk]);
    } else walk(v, [k]);
  }
  return out;
}

/** getAt reads the value at a path (own properties only), undefined when absent. */
export function getAt(obj: unknown, p: readonly string[]): unknown {
  let v = obj;
  // Own properties only: a field named `constructor` must not find Object's.
  for (const seg of p) v = isObject(v) && Object.hasOwn(v, seg) ? v[seg] : undefined;
  return v;
}

/** setAt writes a value at a path, creating the maps on the way. */
export function setAt(obj: Record<string, unknown>, p: readonly string[], value: unknown): void {
  let node = obj;
  for (const seg of p.slice(0, -1)) {
    if (!isObject(node[seg])) node[seg] = {};
    node = node[seg] as Record<string, unknown>;
  }
  node[p[p.length - 1] ?? ''] = value;
}
