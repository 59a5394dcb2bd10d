/**
 * @module registry/managed-fields
 * Field ownership (metadata.managedFields) and server-side apply, as kube-apiserver's field manager does them with
 * sigs.k8s.io/structured-merge-diff, driven by the kind's merge schema (registry/merge/schema.ts):
 * - Update (create, update, patch): the fields the write added or changed move to the writer's Update entry (one per
 *   manager, apiVersion and subresource); fields it removed leave every owner.
 * - Apply: the applier owns exactly the fields of its configuration (list items of sets and list maps, keys of
 *   granular maps, atomic lists and maps whole); its configuration merges into the live object item by item; fields it
 *   applied before and no longer applies are removed unless another manager owns them; changing a field another
 *   manager owns is a 409 conflict per field, unless `force` takes the field over.
 * The reset fields of a CRD's strategies are never owned: `status` on the main resource, `spec` on /status.
 */
import { isDeepStrictEqual } from 'node:util';
import { StatusError } from '../apis/meta/errors.js';
import { goQuote } from '../apis/meta/parameter-codec.js';
import type { KubeObject } from '../apis/meta/types.js';
import { FieldSet, fromFieldsV1, pathString, toFieldsV1, type Path } from './merge/field-set.js';
import type { MapType } from './merge/schema.js';
import { compare, ensureNamedFieldsAreMembers, merge, removeItems, toFieldSet, typeErrors, type Comparison } from './merge/typed.js';

/** ManagedFieldsEntry mirrors metav1.ManagedFieldsEntry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

/**
 * FieldVersions translates a path of field names between two versions of the kind (undefined: no counterpart). Each
 * entry's fields are recorded in the version it was written with, as kube records them; ownership is compared in the
 * version of the request.
 */
export type FieldVersions = (path: readonly string[], fromApiVersion: string, toApiVersion: string) => readonly string[] | undefined;

/** Managed is what the field manager needs of a kind at one version. */
export interface Managed {
  type: MapType;
  apiVersion: string;
  /** The kind has a status subresource (status is reset on the main resource, spec on /status). */
  hasStatus: boolean;
  fields?: FieldVersions | undefined;
}

// stripmeta.go: never owned by anyone (a difference of exact paths: `metadata` itself, not what is under it).
const STRIP = FieldSet.of([
  ['f:apiVersion'],
  ['f:kind'],
  ['f:metadata'],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((f) => [
    'f:metadata',
    `f:${f}`,
  ]),
]);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

type EntryId = Omit<ManagedFieldsEntry, 'fieldsV1' | 'fieldsType'>;

interface Owner {
  entry: EntryId;
  /** The fields, in the request's version. */
  set: FieldSet;
  /** Fields with no counterpart in the request's version: kept as they are, never compared. */
  foreign: Path[];
}

// managerId is BuildManagerIdentifier: the entry without fields and time, and without apiVersion for an applier.
function managerId(e: Pick<ManagedFieldsEntry, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify({
    manager: e.manager,
    operation: e.operation,
    ...(e.operation === 'Update' ? { apiVersion: e.apiVersion } : {}),
    ...(e.subresource ? { subresource: e.subresource } : {}),
  });
}

// Paths of field names (what FieldVersions speaks) to and from path elements; other elements ride along tagged.
const TAG = '\u0000';
const toNames = (p: Path) => p.map((pe) => (pe.startsWith('f:') ? pe.slice(2) : TAG + pe));
const fromNames = (p: readonly string[]): Path => p.map((s) => (s.startsWith(TAG) ? s.slice(1) : `f:${s}`));

function translate(p: Path, m: Managed, from: string, to: string): Path | undefined {
  if (from === to || !m.fields) return p;
  const q = m.fields(toNames(p), from, to);
  return q ? fromNames(q) : undefined;
}

function decode(entries: unknown, m: Managed): Map<string, Owner> {
  const out = new Map<string, Owner>();
  if (!Array.isArray(entries)) return out;
  for (const e of entries) {
    if (!isObject(e)) continue;
    const { fieldsV1, fieldsType: _type, ...entry } = e as unknown as ManagedFieldsEntry;
    const recorded = fromFieldsV1(fieldsV1);
    let set = recorded;
    const foreign: Path[] = [];
    if (entry.apiVersion !== m.apiVersion && m.fields) {
      set = new FieldSet();
      for (const p of recorded.paths()) {
        const q = translate(p, m, entry.apiVersion, m.apiVersion);
        if (q) set.insert(q);
        else foreign.push(p);
      }
    }
    out.set(managerId(entry), { entry, set, foreign });
  }
  return out;
}

// encode drops owners of nothing and orders the rest as sortEncodedManagedFields does: operation, time (seconds),
// manager, apiVersion, subresource. Each entry's fields go back to its own version.
function encode(owners: Map<string, Owner>, m: Managed): ManagedFieldsEntry[] {
  const out: ManagedFieldsEntry[] = [];
  for (const o of owners.values()) {
    let set = o.set;
    if (o.entry.apiVersion !== m.apiVersion && m.fields) {
      set = FieldSet.of(o.foreign);
      for (const p of o.set.paths()) set.insert(translate(p, m, m.apiVersion, o.entry.apiVersion) ?? p);
    }
    if (set.empty()) continue;
    const { manager, operation, apiVersion, time, subresource } = o.entry;
    out.push({
      manager,
      operation,
      apiVersion,
      ...(time ? { time } : {}),
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(set),
      ...(subresource ? { subresource } : {}),
    });
  }
  const seconds = (t: string | undefined) => (t ? Math.floor(Date.parse(t) / 1000) : 0);
  return out.sort(
    (a, b) =>
      byteOrder(a.operation, b.operation) ||
      seconds(a.time) - seconds(b.time) ||
      byteOrder(a.manager, b.manager) ||
      byteOrder(a.apiVersion, b.apiVersion) ||
      byteOrder(a.subresource ?? '', b.subresource ?? ''),
  );
}

// resetFields are the fields the endpoint's strategy resets: never owned through it. On the main resource that is
// `status` (GetResetFields); on /status kube-apiserver 1.37 records nothing but status for an apply or an update
// (checked against it: labels and spec in a /status body are owned by no one), so everything else is reset there.
function resetFields(m: Managed, sub: string | undefined, ...objs: (KubeObject | undefined)[]): FieldSet {
  if (!m.hasStatus) return new FieldSet();
  if (sub !== 'status') return FieldSet.of([['f:status']]);
  const top = new Set(['metadata', 'spec', ...objs.flatMap((o) => (o ? Object.keys(o) : []))]);
  top.delete('status');
  return FieldSet.of([...top].map((k) => [`f:${k}`]));
}

const emptyObject = (obj: KubeObject): KubeObject =>
  ({ ...(obj.apiVersion ? { apiVersion: obj.apiVersion } : {}), ...(obj.kind ? { kind: obj.kind } : {}), metadata: {} }) as KubeObject;

/**
 * takeOver is Updater.update: what the write changes (the comparison `c`, less reset fields) is taken from every
 * owner but `self` (a conflict for an applier, but an update always wins), and what it removes leaves them all.
 * Returns the conflicts when they are not forced (owners untouched then), else an empty map.
 */
function takeOver(owners: Map<string, Owner>, self: string, c: Comparison, ignored: FieldSet, force: boolean): Map<Owner, FieldSet> {
  const changed = c.modified.union(c.added).recursiveDifference(ignored);
  const removed = c.removed.recursiveDifference(ignored);
  const conflicts = new Map<Owner, FieldSet>();
  for (const [id, o] of owners) {
    if (id === self) continue;
    const hit = o.set.intersection(changed);
    if (!hit.empty()) conflicts.set(o, hit);
  }
  if (!force && conflicts.size > 0) return conflicts;
  for (const [id, o] of owners) {
    if (id === self) continue;
    const hit = conflicts.get(o);
    if (hit) o.set = o.set.difference(hit);
    o.set = o.set.difference(removed);
    if (o.set.empty() && o.foreign.length === 0) owners.delete(id);
  }
  return new Map();
}

/**
 * trackUpdate returns the managedFields after a create/update/patch by `manager`: the fields that differ between
 * `before` (undefined on create) and `after` move to the manager's Update entry. `sub` is the endpoint ("status" on
 * /status); `subresource` labels the entry (default: "status" for status writes; "scale" for /scale); `sent` are
 * managedFields the client's body carried, which replace the stored ones.
 */
export function trackUpdate(
  m: Managed,
  before: KubeObject | undefined,
  after: KubeObject,
  manager: string,
  sub: 'main' | 'status',
  time: string,
  subresource: string | undefined = sub === 'status' ? 'status' : undefined,
  sent?: unknown[],
): ManagedFieldsEntry[] {
  const owners = decode(sent ?? before?.metadata.managedFields, m);
  // skipNonAppliedManager: an existing object nobody owns anything of stays untracked (after `[{}]` too, as
  // kube-apiserver 1.37 answers: no entry, not even the writer's, and none on later writes).
  if (before && [...owners.values()].every((o) => o.set.empty() && o.foreign.length === 0)) return [];
  const ignored = resetFields(m, sub, before, after);
  const live = before ?? emptyObject(after);
  const entry = { manager, operation: 'Update' as const, apiVersion: m.apiVersion, subresource };
  const self = managerId(entry);
  const c = compare(live, after, m.type);
  // The write is the "current-operation" manager: every previous owner, its own entry included, gives up what changed.
  takeOver(owners, '', c, ignored, true);
  const mine = c.modified.union(c.added).recursiveDifference(ignored).difference(STRIP);
  if (mine.empty()) return encode(owners, m);
  const prev = owners.get(self);
  for (const [id, o] of owners) if (o.set.empty() && o.foreign.length === 0) owners.delete(id);
  // ScaleHandler.ToParent rebuilds a /scale writer's entry without its time, as kube-apiserver 1.37 stores it.
  owners.set(self, {
    entry: { ...entry, ...(subresource === 'scale' ? {} : { time }) },
    set: prev ? prev.set.union(mine) : mine,
    foreign: prev?.foreign ?? [],
  });
  capUpdaters(owners);
  return encode(owners, m);
}

/** MAX_UPDATE_MANAGERS is DefaultMaxUpdateManagers: more Update entries than this fold into "ancient-changes". */
export const MAX_UPDATE_MANAGERS = 10;

// capUpdaters is capManagersManager.capUpdateManagers, literally: the oldest Update entries (by time in seconds, then
// identifier) merge, per apiVersion, into one "ancient-changes" entry that takes the time of the last one merged, the
// first of each version joining only when a second one comes, until at most ten remain.
function capUpdaters(owners: Map<string, Owner>): void {
  const updaters = [...owners].filter(([, o]) => o.entry.operation === 'Update').map(([id]) => id);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  const seconds = (id: string) => {
    const t = owners.get(id)?.entry.time;
    return t ? Math.floor(Date.parse(t) / 1000) : 0;
  };
  updaters.sort((a, b) => seconds(a) - seconds(b) || byteOrder(a, b));
  const firstOf = new Map<string, string>();
  for (let i = 0, length = updaters.length; i < updaters.length && length > MAX_UPDATE_MANAGERS; i++) {
    const id = updaters[i] as string;
    const o = owners.get(id);
    if (!o) continue;
    const version = o.entry.apiVersion;
    const first = firstOf.get(version);
    if (first === undefined) {
      firstOf.set(version, id);
      continue;
    }
    const bucketEntry: EntryId = { manager: 'ancient-changes', operation: 'Update', apiVersion: version };
    const bucket = managerId(bucketEntry);
    if (!owners.has(bucket)) {
      const firstOwner = owners.get(first) as Owner;
      owners.delete(first);
      owners.set(bucket, { ...firstOwner, entry: bucketEntry });
    }
    const b = owners.get(bucket) as Owner;
    owners.set(bucket, {
      entry: { ...bucketEntry, ...(o.entry.time ? { time: o.entry.time } : {}) },
      set: o.set.union(b.set),
      foreign: [...b.foreign, ...o.foreign],
    });
    owners.delete(id);
    length--;
  }
}

/** ApplyConflict is the fields one other manager owns that an apply would change. */
export interface ApplyConflict {
  owner: EntryId;
  paths: Path[];
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
  /** The namespace the configuration itself names (kube names the patch object, not the request, in its errors). */
  namespace?: string | undefined;
  /** The configuration as sent, before pruning: what is typed against the schema (unknown fields do not type). */
  sent?: unknown;
}

// prune is Updater.prune: what the applier owned before and no longer applies goes, unless someone owns it now.
function prune(merged: unknown, owners: Map<string, Owner>, last: FieldSet | undefined, m: Managed): unknown {
  if (!last || last.empty()) return merged;
  const t = m.type;
  const named = (s: FieldSet) => ensureNamedFieldsAreMembers(s, t);
  let pruned = removeItems(merged, named(last), t) ?? {};
  let owned = new FieldSet();
  for (const o of owners.values()) owned = owned.union(o.set);
  const mergedSet = named(toFieldSet(merged, t));
  pruned = removeItems(merged, mergedSet.difference(named(toFieldSet(pruned, t)).union(named(owned))), t) ?? {};
  return removeItems(merged, mergedSet.difference(named(toFieldSet(pruned, t))).intersection(named(last)), t) ?? {};
}

/**
 * serverSideApply merges an applied configuration into `live` (undefined: create) for `manager` and returns the
 * new object with its managedFields, or throws 409 Conflict listing every conflicting field.
 */
export function serverSideApply(
  m: Managed,
  live: KubeObject | undefined,
  applied: KubeObject,
  manager: string,
  force: boolean,
  time: string,
  scope: ApplyScope = { part: 'main' },
): KubeObject {
  const { managedFields: _applied, ...appliedMeta } = applied.metadata;
  const appliedValue = { ...applied, metadata: appliedMeta };
  // ObjectToTyped: a configuration that cannot be typed is refused before anything else, as a bare 500. It is the
  // configuration as sent (metadata as decoded), so a field the schema does not declare is one of its errors.
  const sent =
    scope.sent !== null && typeof scope.sent === 'object' && !Array.isArray(scope.sent)
      ? { ...(scope.sent as Record<string, unknown>), metadata: appliedMeta }
      : appliedValue;
  const untypable = typeErrors(sent, m.type);
  if (untypable) {
    const [group, version] = m.apiVersion.includes('/') ? m.apiVersion.split('/') : ['', m.apiVersion];
    const gvk = `${group ? `${group}/` : ''}${version}, Kind=${applied.kind ?? ''}`;
    const e = new StatusError({
      code: 500,
      message: `failed to create typed patch object (${scope.namespace ?? ''}/${appliedMeta.name ?? ''}; ${gvk}): ${untypable}`,
    });
    // Refused before the body is decoded: no unknown-field warning has been recorded yet.
    e.warnings = [];
    throw e;
  }
  let owners = decode(live?.metadata.managedFields, m);
  const base = live ?? emptyObject(applied);
  // skipNonAppliedManager: the first apply to an object nobody owns anything of first gives its fields to
  // "before-first-apply", an Update from an empty object, so the apply cannot prune them.
  if (live && [...owners.values()].every((o) => o.set.empty() && o.foreign.length === 0)) {
    const endpoint = scope.part === 'status' ? 'status' : 'main';
    const { managedFields: _none, ...meta } = live.metadata;
    owners = decode(trackUpdate(m, undefined, { ...live, metadata: meta }, 'before-first-apply', endpoint, time, scope.subresource), m);
  }
  const ignored = resetFields(m, scope.part === 'status' ? 'status' : scope.subresource, live, applied);
  const entry = { manager, operation: 'Apply' as const, apiVersion: m.apiVersion, subresource: scope.subresource };
  const self = managerId(entry);
  const { managedFields: _live, ...liveMeta } = base.metadata;
  const liveValue = { ...base, metadata: liveMeta };
  const merged = merge(liveValue, appliedValue, m.type) as KubeObject;
  const last = owners.get(self)?.set;
  const set = toFieldSet(appliedValue, m.type).recursiveDifference(ignored);
  owners.set(self, { entry: { ...entry, ...(owners.get(self)?.entry.time ? { time: owners.get(self)?.entry.time } : {}) }, set, foreign: [] });
  const next = prune(merged, owners, last, m) as KubeObject;
  const conflicts = takeOver(owners, self, compare(liveValue, next, m.type), ignored, force);
  if (conflicts.size > 0)
    throw applyConflictError(
      [...conflicts].map(([o, s]) => ({ owner: o.entry, paths: inOwnerVersion(s, o, m) })),
      scope.view,
    );
  const mine = owners.get(self) as Owner;
  mine.set = mine.set.difference(STRIP);
  if ((!isDeepStrictEqual(liveValue, next) || !live) && scope.subresource !== 'scale') mine.entry = { ...mine.entry, time };
  if (mine.set.empty()) owners.delete(self);
  const out = (next ?? { metadata: {} }) as KubeObject;
  out.metadata ??= {};
  const encoded = encode(owners, m);
  if (encoded.length > 0) out.metadata.managedFields = encoded;
  else delete out.metadata.managedFields;
  return out;
}

// inOwnerVersion names conflicting fields in the owner's version, as structured-merge-diff finds them.
function inOwnerVersion(s: FieldSet, o: Owner, m: Managed): Path[] {
  return FieldSet.of(s.paths().map((p) => translate(p, m, m.apiVersion, o.entry.apiVersion) ?? p)).paths();
}

// printManager (managedfields/internal/conflict.go): `"name"`, `with subresource "s"`, and `using <apiVersion>` for updaters.
function printManager(e: ApplyConflict['owner'], view: ApplyScope['view']): string {
  let s = goQuote(e.manager);
  if (e.subresource) s += ` with subresource ${goQuote(e.subresource)}`;
  if (e.operation === 'Update') s += ` using ${view?.apiVersion ?? e.apiVersion}`;
  return s;
}

// applyConflictError is NewConflictError: a cause per field, the message grouped by manager (sorted) when there are
// several; errors.NewApplyConflict puts no name, group or kind in the details.
function applyConflictError(conflicts: ApplyConflict[], view: ApplyScope['view']): StatusError {
  const field = (p: Path) => (view ? view.field(p) : pathString(p));
  const sorted = [...conflicts].sort((a, b) => byteOrder(managerId(a.owner), managerId(b.owner)));
  const all = sorted.flatMap((c) => c.paths.map((p) => ({ owner: c.owner, path: p })));
  let message: string;
  if (all.length === 1) {
    const [c] = all as [{ owner: ApplyConflict['owner']; path: Path }];
    message = `Apply failed with 1 conflict: conflict with ${printManager(c.owner, view)}: ${field(c.path)}`;
  } else {
    const lines: string[] = [];
    for (const c of sorted) {
      lines.push(`conflicts with ${printManager(c.owner, view)}:`);
      for (const p of c.paths) lines.push(`- ${field(p)}`);
    }
    message = `Apply failed with ${all.length} conflicts: ${lines.join('\n')}`;
  }
  return new StatusError({
    code: 409,
    reason: 'Conflict',
    message,
    details: { causes: all.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.owner, view)}`, field: field(c.path) })) },
  });
}
