/**
 * @module admission/pruning
 * Structural pruning (apiextensions-apiserver schema/pruning PruneWithOptions): every member the schema does not
 * describe is deleted, at any depth, and its path reported (`spec.x`, `spec.items[0].y`, sorted as Go sorts
 * strings). A node with x-kubernetes-preserve-unknown-fields keeps its unknown members but its declared ones are
 * still pruned inside; an embedded resource keeps its apiVersion, kind and metadata (metadata is decoded as
 * ObjectMeta instead), and so does the object itself. Pruning does not look at types: an object where the schema
 * says string loses all its members (and validation then refuses the empty object).
 */
import { compareUtf8 } from '../apis/meta/go-json.js';
import type { Node } from './structural.js';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** pruneObject prunes the object (a resource root) in place and returns the pruned paths, sorted. */
export function pruneObject(root: Node, obj: Record<string, unknown>): string[] {
  const pruned: string[] = [];
  const at: string[] = [];
  pruneMembers(obj, root, true, at, pruned);
  return pruned.length > 1 ? pruned.sort(compareUtf8) : pruned;
}

// The path is a stack of segments (`.k`, `[i]`), joined only for a pruned member.
const record = (at: string[], key: string, pruned: string[]) => pruned.push(at.length === 0 ? key : `${at.join('')}.${key}`);

function push(at: string[], key: string): void {
  at.push(at.length === 0 ? key : `.${key}`);
}

function prune(x: unknown, s: Node | undefined, at: string[], pruned: string[]): void {
  if (s?.preserveUnknown) {
    skipPrune(x, s, at, pruned);
    return;
  }
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      at.push(`[${i}]`);
      prune(x[i], s?.items, at, pruned);
      at.pop();
    }
  } else if (isObject(x)) {
    pruneMembers(x, s, false, at, pruned);
  }
}

function pruneMembers(x: Record<string, unknown>, s: Node | undefined, root: boolean, at: string[], pruned: string[]): void {
  for (const k in x) {
    if (!Object.hasOwn(x, k)) continue;
    if (s && (root || s.embedded) && META_FIELDS.has(k)) continue;
    const prop = s?.properties?.get(k);
    if (prop) {
      descend(x[k], prop, k, at, pruned);
    } else if (s && (s.additional || s.additionalBool)) {
      descend(x[k], s.additional || undefined, k, at, pruned);
    } else {
      record(at, k, pruned);
      delete x[k];
    }
  }
}

function descend(v: unknown, s: Node | undefined, key: string, at: string[], pruned: string[]): void {
  // Scalars have nothing to prune: no path work for them.
  if (typeof v !== 'object' || v === null) return;
  push(at, key);
  prune(v, s, at, pruned);
  at.pop();
}

// skipPrune keeps unknown members but prunes inside the declared ones.
function skipPrune(x: unknown, s: Node | undefined, at: string[], pruned: string[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      at.push(`[${i}]`);
      skipPrune(x[i], s.items, at, pruned);
      at.pop();
    }
  } else if (isObject(x)) {
    for (const k in x) {
      if (!Object.hasOwn(x, k) || (s.embedded && META_FIELDS.has(k))) continue;
      const prop = s.properties?.get(k);
      if (prop) descend(x[k], prop, k, at, pruned);
      else if (s.additional || s.additionalBool) descend(x[k], s.additional || undefined, k, at, pruned);
    }
  }
}
