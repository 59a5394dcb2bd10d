/**
 * @module registry/managed-fields
 * Field ownership (metadata.managedFields, FieldsV1) and server-side apply, in the shape of
 * sigs.k8s.io/structured-merge-diff as kube-apiserver uses it, simplified for our kinds:
 * - A field is a path to a leaf: a scalar, a list (lists are atomic), or an empty object. Map keys (labels,
 *   annotations) are fields too.
 * - Every write records its manager: `Update` for create/update/patch (the fields it changed move to it),
 *   `Apply` for server-side apply (exactly the fields of the applied configuration).
 * - Apply conflicts when it would change a field another manager owns (409 with FieldManagerConflict causes)
 *   unless `force` moves the field to the applier; fields the applier owned before and no longer applies are
 *   removed unless someone else owns them.
 */
import { isDeepStrictEqual } from 'node:util';
import { StatusError } from '../apis/meta/errors.js';
import { goQuote } from '../apis/meta/parameter-codec.js';
import { cloneJson } from '../apis/meta/json-clone.js';
import type { KubeObject } from '../apis/meta/types.js';

/** ManagedFieldsEntry mirrors metav1.ManagedFieldsEntry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

type Path = string[];

// Identity and server-owned metadata are never "fields" anyone manages.
const UNMANAGED_META = new Set([
  'name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp',
  'deletionGracePeriodSeconds', 'managedFields', 'selfLink', 'generateName',
]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

// byteOrder compares as Go's sort.Strings does (code units, not locale).
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** leafPaths lists the managed fields of an object (for `status` or for everything else). */
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
      for (const [mk, mv] of Object.entries(v)) if (!UNMANAGED_META.has(mk)) walk(mv, ['metadata', mk]);
    } else walk(v, [k]);
  }
  return out;
}

const key = (p: Path) => JSON.stringify(p);

/** toFieldsV1 encodes paths as FieldsV1 (`{"f:spec":{"f:replicas":{}}}`). */
export function toFieldsV1(paths: Path[]): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const p of paths) {
    let node = root;
    for (const seg of p) node = (node[`f:${seg}`] ??= {}) as Record<string, unknown>;
  }
  return root;
}

/** fromFieldsV1 decodes FieldsV1 back into leaf paths. */
export function fromFieldsV1(fields: Record<string, unknown>): Path[] {
  const out: Path[] = [];
  const walk = (node: Record<string, unknown>, at: Path) => {
    const children = Object.keys(node).filter((k) => k.startsWith('f:'));
    if (children.length === 0 && at.length > 0) out.push(at);
    for (const k of children) walk((node[k] ?? {}) as Record<string, unknown>, [...at, k.slice(2)]);
  };
  walk(fields, []);
  return out;
}

/** getAt reads the value at a path (own properties only), undefined when absent. */
export function getAt(obj: unknown, p: Path): unknown {
  let v = obj;
  // Own properties only: a field named `constructor` must not find Object's.
  for (const seg of p) v = isObject(v) && Object.hasOwn(v, seg) ? v[seg] : undefined;
  return v;
}

/** setAt writes a value at a path, creating the maps on the way. */
export function setAt(obj: Record<string, unknown>, p: Path, value: unknown): void {
  let node = obj;
  for (const seg of p.slice(0, -1)) {
    if (!isObject(node[seg])) node[seg] = {};
    node = node[seg] as Record<string, unknown>;
  }
  node[p[p.length - 1] ?? ''] = value;
}

function deleteAt(obj: unknown, p: Path): void {
  const parents: Record<string, unknown>[] = [];
  let v = obj;
  for (const seg of p.slice(0, -1)) {
    if (!isObject(v)) return;
    parents.push(v);
    v = v[seg];
  }
  if (!isObject(v)) return;
  delete v[p[p.length - 1] ?? ''];
  // Drop maps the removal left empty, so a removed label does not leave `labels: {}` behind.
  let child = v;
  for (let i = parents.length - 1; i >= 0; i--) {
    const seg = p[i] ?? '';
    if (Object.keys(child).length > 0) break;
    delete (parents[i] as Record<string, unknown>)[seg];
    child = parents[i] as Record<string, unknown>;
  }
}

// applyMerge merges the applied configuration into the live object: maps merge, lists and scalars replace.
function applyMerge(live: unknown, applied: unknown): unknown {
  if (!isObject(applied) || !isObject(live)) return cloneJson(applied);
  const out: Record<string, unknown> = { ...live };
  for (const [k, v] of Object.entries(applied)) out[k] = Object.hasOwn(out, k) ? applyMerge(out[k], v) : cloneJson(v);
  return out;
}

/**
 * FieldVersions translates a field path between two versions of the kind (undefined: no counterpart). Each entry's
 * fields are recorded in the version it was written with (its apiVersion), as kube records them; ownership is
 * compared in the version of the request, so an owner in another version is translated for the comparison and back.
 */
export type FieldVersions = (path: Path, fromApiVersion: string, toApiVersion: string) => Path | undefined;

interface Owned {
  entry: ManagedFieldsEntry;
  /** The fields, in the request's version. */
  paths: Map<string, Path>;
  /** Fields with no counterpart in the request's version: kept as they are, never compared. */
  foreign: Path[];
}

// View is the version ownership is compared in and how to get there.
interface View {
  apiVersion: string;
  fields?: FieldVersions | undefined;
}

function decode(entries: unknown, view: View | undefined): Owned[] {
  if (!Array.isArray(entries)) return [];
  return entries.filter(isObject).map((e) => {
    const entry = e as unknown as ManagedFieldsEntry;
    const recorded = fromFieldsV1(isObject(entry.fieldsV1) ? entry.fieldsV1 : {});
    const fields = view?.fields;
    if (!fields || !view || entry.apiVersion === view.apiVersion) return { entry, paths: new Map(recorded.map((p) => [key(p), p])), foreign: [] };
    const paths = new Map<string, Path>();
    const foreign: Path[] = [];
    for (const p of recorded) {
      const q = fields(p, entry.apiVersion, view.apiVersion);
      if (q) paths.set(key(q), q);
      else foreign.push(p);
    }
    return { entry, paths, foreign };
  });
}

// encode drops entries that own nothing and orders the rest as kube stores them (sortEncodedManagedFields:
// Apply before Update, then by time, manager, subresource, apiVersion). Each entry's fields go back to its version.
function encode(owned: Owned[], view: View | undefined): ManagedFieldsEntry[] {
  const order = (a: ManagedFieldsEntry, b: ManagedFieldsEntry) =>
    byteOrder(a.operation, b.operation) || byteOrder(a.time ?? '', b.time ?? '') || byteOrder(a.manager, b.manager) ||
    byteOrder(a.subresource ?? '', b.subresource ?? '') || byteOrder(a.apiVersion, b.apiVersion);
  const recorded = (o: Owned): Path[] => {
    const fields = view?.fields;
    if (!fields || !view || o.entry.apiVersion === view.apiVersion) return [...o.paths.values(), ...o.foreign];
    const out = [...o.foreign];
    for (const p of o.paths.values()) out.push(fields(p, view.apiVersion, o.entry.apiVersion) ?? p);
    return out;
  };
  return owned.map((o) => ({ o, paths: recorded(o) })).filter((x) => x.paths.length > 0)
    .map(({ o, paths }) => ({ ...o.entry, fieldsV1: toFieldsV1(paths) })).sort(order);
}

const sameEntry = (e: ManagedFieldsEntry, manager: string, op: string, sub: string | undefined) =>
  e.manager === manager && e.operation === op && (e.subresource ?? undefined) === sub;

function entryFor(owned: Owned[], manager: string, op: 'Apply' | 'Update', sub: string | undefined, apiVersion: string, time: string): Owned {
  let o = owned.find((x) => sameEntry(x.entry, manager, op, sub));
  if (!o) {
    const entry: ManagedFieldsEntry = { manager, operation: op, apiVersion, time, fieldsType: 'FieldsV1', fieldsV1: {} };
    if (sub) entry.subresource = sub;
    o = { entry, paths: new Map(), foreign: [] };
    owned.push(o);
  }
  // The entry now speaks the request's version: fields it held that this version cannot express are dropped.
  if (o.entry.apiVersion !== apiVersion) o.foreign = [];
  o.entry = { ...o.entry, apiVersion, time };
  return o;
}

/**
 * trackUpdate returns the managedFields after a create/update/patch by `manager`: the fields that differ between
 * `before` (undefined on create) and `after` move to the manager's Update entry. `sub` is the part of the object
 * the write may change; `subresource` labels the entry (default: "status" for status writes; "scale" for /scale).
 */
export function trackUpdate(
  before: KubeObject | undefined, after: KubeObject, manager: string, sub: 'main' | 'status', apiVersion: string, time: string,
  subresource: string | undefined = sub === 'status' ? 'status' : undefined, fields?: FieldVersions,
): ManagedFieldsEntry[] {
  const view: View = { apiVersion, fields };
  const owned = decode(before?.metadata.managedFields, view);
  const changed = leafPaths(after, sub).filter((p) => !before || !isDeepStrictEqual(getAt(before, p), getAt(after, p)));
  const gone = before ? leafPaths(before, sub).filter((p) => getAt(after, p) === undefined) : [];
  if (changed.length === 0 && gone.length === 0) return encode(owned, view);
  const mine = entryFor(owned, manager, 'Update', subresource, apiVersion, time);
  for (const p of gone) for (const o of owned) o.paths.delete(key(p));
  for (const p of changed) {
    for (const o of owned) if (o !== mine) o.paths.delete(key(p));
    mine.paths.set(key(p), p);
  }
  return encode(owned, view);
}

/** ApplyConflict is one field another manager owns with a different value. */
export interface ApplyConflict {
  /** The other manager's entry (its identity: manager, operation, subresource, apiVersion). */
  owner: ManagedFieldsEntry;
  path: Path;
}

/**
 * ApplyScope says where an applied configuration lands (the CRD strategies' reset fields):
 * - part `main`: everything but status; part `status`: only status (metadata and spec are reset on /status);
 * - subresource: the label of the applier's managedFields entry ("status", "scale"; none for the main resource);
 * - view: how a conflict reads in the request's own terms (on /scale: autoscaling/v1 and the Scale's path).
 */
export interface ApplyScope {
  part: 'main' | 'status';
  subresource?: string | undefined;
  view?: { apiVersion: string; field: (p: Path) => string } | undefined;
}

/**
 * serverSideApply merges an applied configuration into `live` (undefined: create) for `manager` and returns the
 * new object with its managedFields, or throws 409 Conflict listing every conflicting field.
 */
export function serverSideApply(
  live: KubeObject | undefined, applied: KubeObject, manager: string, force: boolean, apiVersion: string, time: string,
  scope: ApplyScope = { part: 'main' }, fields?: FieldVersions,
): KubeObject {
  const view: View = { apiVersion, fields };
  const owned = decode(live?.metadata.managedFields, view);
  const appliedPaths = leafPaths(applied, scope.part);
  const mine = entryFor(owned, manager, 'Apply', scope.subresource, apiVersion, time);
  const conflicts: ApplyConflict[] = [];
  for (const p of appliedPaths) {
    if (!live || isDeepStrictEqual(getAt(live, p), getAt(applied, p))) continue;
    for (const o of owned) {
      if (o === mine || !o.paths.has(key(p))) continue;
      if (force) o.paths.delete(key(p));
      // Named in the owner's version, as structured-merge-diff finds it (merge/update.go compares the objects
      // converted to each manager's version and intersects that manager's own set).
      else conflicts.push({ owner: o.entry, path: o.entry.apiVersion === apiVersion ? p : fields?.(p, apiVersion, o.entry.apiVersion) ?? p });
    }
  }
  if (conflicts.length) throw applyConflictError(conflicts, scope.view);
  let next: KubeObject = live ? cloneJson(live) : { metadata: {} };
  const appliedKeys = new Set(appliedPaths.map(key));
  for (const [k, p] of mine.paths) {
    if (appliedKeys.has(k)) continue;
    if (!owned.some((o) => o !== mine && o.paths.has(k))) deleteAt(next, p);
  }
  // Only the part the endpoint may change is merged: on /status, the status alone.
  const part = scope.part === 'status' ? (applied['status'] === undefined ? {} : { status: applied['status'] }) : applied;
  next = applyMerge(next, part) as KubeObject;
  mine.paths = new Map(appliedPaths.map((p) => [key(p), p]));
  next.metadata.managedFields = encode(owned, view);
  return next;
}

// managerId is BuildManagerIdentifier: the entry without fields and time, and without apiVersion for an applier.
function managerId(e: ManagedFieldsEntry): string {
  return JSON.stringify({ manager: e.manager, operation: e.operation, ...(e.operation === 'Update' ? { apiVersion: e.apiVersion } : {}), ...(e.subresource ? { subresource: e.subresource } : {}) });
}

// printManager (managedfields/internal/conflict.go): `"name"`, `with subresource "s"`, and `using <apiVersion>` for updaters.
function printManager(e: ManagedFieldsEntry, view: ApplyScope['view']): string {
  let s = goQuote(e.manager);
  if (e.subresource) s += ` with subresource ${goQuote(e.subresource)}`;
  if (e.operation === 'Update') s += ` using ${view?.apiVersion ?? e.apiVersion}`;
  return s;
}

// applyConflictError is NewConflictError: causes per field, the message grouped by manager when there are several;
// errors.NewApplyConflict puts no name, group or kind in the details.
function applyConflictError(conflicts: ApplyConflict[], view: ApplyScope['view']): StatusError {
  const field = (p: Path) => (view ? view.field(p) : `.${p.join('.')}`);
  const sorted = [...conflicts].sort((a, b) => byteOrder(managerId(a.owner), managerId(b.owner)) || byteOrder(field(a.path), field(b.path)));
  let message: string;
  if (sorted.length === 1) {
    const [c] = sorted as [ApplyConflict];
    message = `Apply failed with 1 conflict: conflict with ${printManager(c.owner, view)}: ${field(c.path)}`;
  } else {
    const lines: string[] = [];
    let last: string | undefined;
    for (const c of sorted) {
      if (managerId(c.owner) !== last) lines.push(`conflicts with ${printManager(c.owner, view)}:`);
      last = managerId(c.owner);
      lines.push(`- ${field(c.path)}`);
    }
    message = `Apply failed with ${sorted.length} conflicts: ${lines.join('\n')}`;
  }
  return new StatusError({
    code: 409,
    reason: 'Conflict',
    message,
    details: { causes: sorted.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.owner, view)}`, field: field(c.path) })) },
  });
}
