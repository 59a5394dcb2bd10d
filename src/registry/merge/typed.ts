/**
 * @module registry/merge/typed
 * Walks of a JSON value under its merge type, as structured-merge-diff's typed package does them: the set of fields
 * a value sets (ToFieldSet), what changed between two values (Compare), the merge of an applied configuration into a
 * live value (Merge), and the removal of a set of fields (RemoveItems). Atomic lists and maps, and lists or maps
 * empty on both sides, are leaves: they are compared and replaced whole.
 */
import { isDeepStrictEqual } from 'node:util';
import { cloneJson } from '../../apis/meta/json-clone.js';
import { FieldSet, fieldElement, keyElement, pathString, valueElement, type Path } from './field-set.js';
import { resolve, type ListType, type MapType, type MergeType } from './schema.js';

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// fieldType is a map key's type: a declared field's, else the map's element type (none: the key is undeclared, and
// is taken as deduced rather than refused, since validation already stands in front of this).
function fieldType(t: MapType, k: string): { type: MergeType; declared: boolean } {
  const f = t.fields.get(k);
  if (f) return { type: f.type, declared: true };
  return { type: t.element ?? { kind: 'deduced' }, declared: false };
}

/** itemElement is the path element of a list item: `k:{…}` in a list map, `v:…` in a set; undefined if it has none. */
export function itemElement(t: ListType, item: unknown): string | undefined {
  if (t.keys.length === 0) return isObject(item) || Array.isArray(item) ? undefined : valueElement(item);
  if (!isObject(item)) return undefined;
  const element = t.element.kind === 'map' ? t.element : undefined;
  const keys: [string, unknown][] = [];
  for (const k of t.keys) {
    if (Object.hasOwn(item, k)) keys.push([k, item[k]]);
    else {
      const def = element?.fields.get(k)?.default;
      if (def === undefined) return undefined;
      keys.push([k, def]);
    }
  }
  return keyElement(keys);
}

// indexItems lists a list's items by path element, the first of duplicates winning, in list order.
function indexItems(t: ListType, list: unknown): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (!Array.isArray(list)) return out;
  for (const item of list) {
    const pe = itemElement(t, item);
    if (pe !== undefined && !out.has(pe)) out.set(pe, item);
  }
  return out;
}

const emptyList = (v: unknown) => !Array.isArray(v) || v.length === 0;
const emptyMap = (v: unknown) => !isObject(v) || Object.keys(v).length === 0;

/** toFieldSet is ToFieldSet: every field the value sets, list items included; atomic parts as one field. */
export function toFieldSet(v: unknown, t: MergeType): FieldSet {
  const out = new FieldSet();
  const walk = (v: unknown, t: MergeType, path: Path) => {
    const r = resolve(t, v);
    if (r.kind === 'scalar') return out.insert(path);
    if (r.kind === 'list') {
      if (r.atomic) return out.insert(path);
      for (const [pe, item] of indexItems(r, v)) {
        walk(item, r.element, [...path, pe]);
        out.insert([...path, pe]);
      }
      return;
    }
    if (r.atomic) return out.insert(path);
    if (!isObject(v)) return;
    for (const [k, val] of Object.entries(v)) {
      const { type, declared } = fieldType(r, k);
      const p = [...path, fieldElement(k)];
      walk(val, type, p);
      if (val === null || (isObject(val) && Object.keys(val).length === 0) || !declared) out.insert(p);
    }
  };
  walk(v, t, []);
  return out;
}

/** Comparison is what changed from one value to another, as field sets. */
export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** compare is Compare: leaves that appear, change or go, and the non-leaf nodes that appear or go. */
export function compare(lhs: unknown, rhs: unknown, t: MergeType): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const leaf = (l: unknown, r: unknown, path: Path) => {
    if (l === undefined && r === undefined) return;
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
    else if (!isDeepStrictEqual(l, r)) c.modified.insert(path);
  };
  const walk = (l: unknown, r: unknown, t: MergeType, path: Path) => {
    const rl = l === undefined ? undefined : resolve(t, l);
    const rr = r === undefined ? undefined : resolve(t, r);
    const kind = (rr ?? rl)?.kind;
    const type = (rr ?? rl) as Exclude<MergeType, { kind: 'deduced' }>;
    let isLeaf = false;
    if (rl && rr && rl.kind !== rr.kind) isLeaf = true;
    else if (kind === 'scalar') isLeaf = true;
    else if (kind === 'list') {
      const lt = type as ListType;
      if (lt.atomic || (emptyList(l) && emptyList(r))) isLeaf = true;
      else {
        const li = indexItems(lt, l);
        const ri = indexItems(lt, r);
        for (const [pe, rv] of ri) walk(li.get(pe), rv, lt.element, [...path, pe]);
        for (const [pe, lv] of li) if (!ri.has(pe)) walk(lv, undefined, lt.element, [...path, pe]);
      }
    } else {
      const mt = type as MapType;
      if (mt.atomic || (emptyMap(l) && emptyMap(r))) isLeaf = true;
      else {
        const lo = isObject(l) ? l : {};
        const ro = isObject(r) ? r : {};
        for (const k of new Set([...Object.keys(lo), ...Object.keys(ro)])) {
          walk(Object.hasOwn(lo, k) ? lo[k] : undefined, Object.hasOwn(ro, k) ? ro[k] : undefined, fieldType(mt, k).type, [...path, fieldElement(k)]);
        }
      }
    }
    if (isLeaf) return leaf(l, r, path);
    if (path.length === 0) return;
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
  };
  walk(lhs, rhs, t, []);
  return c;
}

/**
 * merge is Merge: the applied value (rhs) over the live one (lhs). Leaves take the applied value; maps merge by key;
 * lists that are sets or maps merge by item, in the applied order with live-only items kept where they were.
 */
export function merge(lhs: unknown, rhs: unknown, t: MergeType): unknown {
  const rl = lhs === undefined ? undefined : resolve(t, lhs);
  const rr = rhs === undefined ? undefined : resolve(t, rhs);
  const type = (rr ?? rl) as Exclude<MergeType, { kind: 'deduced' }> | undefined;
  if (!type) return undefined;
  const keepRHS = () => cloneJson(rhs !== undefined ? rhs : lhs);
  if ((rl && rr && rl.kind !== rr.kind) || type.kind === 'scalar') return keepRHS();
  // An applied value of the wrong shape is kept as applied, for validation to refuse (structured-merge-diff fails
  // such a configuration too); merging it into the live value would drop it silently.
  if (rhs !== undefined && (type.kind === 'list' ? !Array.isArray(rhs) : !isObject(rhs))) return keepRHS();
  if (type.kind === 'list') {
    if (type.atomic || (emptyList(lhs) && emptyList(rhs))) return keepRHS();
    // So is a list whose items cannot all be keyed (a list map item without its keys, a set of objects).
    if (Array.isArray(rhs) && rhs.some((item) => itemElement(type, item) === undefined)) return keepRHS();
    const out = mergeItems(type, Array.isArray(lhs) ? lhs : [], Array.isArray(rhs) ? rhs : []);
    return out.length > 0 ? out : undefined;
  }
  if (type.atomic || (emptyMap(lhs) && emptyMap(rhs))) return keepRHS();
  const lo = isObject(lhs) ? lhs : {};
  const ro = isObject(rhs) ? rhs : {};
  const out: Obj = {};
  for (const k of new Set([...Object.keys(lo), ...Object.keys(ro)])) {
    const v = merge(Object.hasOwn(lo, k) ? lo[k] : undefined, Object.hasOwn(ro, k) ? ro[k] : undefined, fieldType(type, k).type);
    if (v !== undefined) out[k] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

// mergeItems orders a merged list as visitListItems does: walk both lists, taking shared items in the applied order
// and live-only items where they stood, new items where the applied list has them.
function mergeItems(t: ListType, lhs: unknown[], rhs: unknown[]): unknown[] {
  const li = indexItems(t, lhs);
  const ri = indexItems(t, rhs);
  const lOrder = [...li.keys()];
  const rOrder = [...ri.keys()];
  const shared = rOrder.filter((pe) => li.has(pe));
  let next: string | undefined = shared.shift();
  const out: unknown[] = [];
  const push = (v: unknown) => {
    if (v !== undefined) out.push(v);
  };
  for (let l = 0, r = 0; l < lOrder.length || r < rOrder.length; ) {
    if (l < lOrder.length && r < rOrder.length) {
      const pe = lOrder[l] as string;
      if (pe === rOrder[r]) {
        push(merge(li.get(pe), ri.get(pe), t.element));
        l++;
        r++;
        next = shared.shift();
        continue;
      }
      if (ri.has(pe) && next !== undefined && next !== pe) {
        l++;
        continue;
      }
    }
    if (l < lOrder.length) {
      const pe = lOrder[l] as string;
      if (!ri.has(pe)) {
        push(merge(li.get(pe), undefined, t.element));
        l++;
        continue;
      }
    }
    if (r < rOrder.length) {
      const pe = rOrder[r] as string;
      push(merge(li.get(pe), ri.get(pe), t.element));
      r++;
      if (next !== undefined && next === pe) next = shared.shift();
    }
  }
  return out;
}

/**
 * removeItems is RemoveItems: the value without the fields in `set` (a member removes its whole subtree). A map or
 * list left empty by the removal is dropped (undefined), as kube's null for it is pruned before storage.
 */
export function removeItems(v: unknown, set: FieldSet, t: MergeType): unknown {
  const r = resolve(t, v);
  if (r.kind === 'scalar') return v;
  if (r.kind === 'list') {
    if (!Array.isArray(v) || v.length === 0 || r.atomic) return undefined;
    const out: unknown[] = [];
    for (const item of v) {
      const pe = itemElement(r, item);
      if (pe === undefined) {
        out.push(item);
        continue;
      }
      if (set.has([pe])) continue;
      const sub = set.withPrefix(pe);
      const kept = sub.empty() ? item : removeItems(item, sub, r.element);
      if (kept !== undefined) out.push(kept);
    }
    return out.length > 0 ? out : undefined;
  }
  if (!isObject(v) || Object.keys(v).length === 0 || r.atomic) return undefined;
  const out: Obj = {};
  for (const [k, val] of Object.entries(v)) {
    const pe = fieldElement(k);
    if (set.has([pe])) continue;
    const sub = set.withPrefix(pe);
    const kept = sub.empty() ? val : removeItems(val, sub, fieldType(r, k).type);
    if (kept !== undefined) out[k] = kept;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** ensureNamedFieldsAreMembers adds, at every level, the declared fields that have children as members. */
export function ensureNamedFieldsAreMembers(set: FieldSet, t: MergeType): FieldSet {
  const out = new FieldSet();
  for (const m of set.members) out.members.add(m);
  const map = t.kind === 'map' ? t : undefined;
  for (const [pe, child] of set.children) {
    let childType: MergeType = { kind: 'deduced' };
    if (map && pe.startsWith('f:')) {
      const f = map.fields.get(pe.slice(2));
      if (f) out.members.add(pe);
      childType = fieldType(map, pe.slice(2)).type;
    } else if (t.kind === 'list') childType = t.element;
    const c = ensureNamedFieldsAreMembers(child, childType);
    if (!c.empty()) out.children.set(pe, c);
  }
  return out;
}

/**
 * typeErrors is what ObjectToTyped refuses in an applied configuration, in structured-merge-diff's words (its
 * validating walker, typed/validate.go): a field the schema does not declare where no other field may be, an item
 * of a set or list map that appears twice, a list map item without its keys (and no defaults for them), a set of
 * maps. Wrong scalar types are left to validation. Every error, joined as ValidationErrors.Error joins them (kube
 * lists them in its map iteration order, here the object's).
 */
export function typeErrors(v: unknown, t: MergeType): string | undefined {
  const errs: string[] = [];
  const walk = (v: unknown, t: MergeType, path: Path): void => {
    const r = resolve(t, v);
    if (r.kind === 'scalar') return;
    if (r.kind === 'list') {
      if (!Array.isArray(v)) return;
      const seen = new Set<string>();
      for (let i = 0; i < v.length; i++) {
        const item = v[i];
        // An atomic list's items are typed too, by index: atomicity is about ownership, not about the schema.
        if (r.atomic) {
          walk(item, r.element, [...path, `i:${i}`]);
          continue;
        }
        const pe = itemElement(r, item);
        // Without its path element nothing deeper in the list can be reported: the walker bails on this list.
        if (pe === undefined) {
          errs.push(`${pathString(path)}: element ${i}: ${missingKeys(r, item)}`);
          return;
        }
        if (seen.has(pe)) errs.push(`${pathString(path)}: duplicate entries for key ${pathString([pe])}`);
        seen.add(pe);
        walk(item, r.element, [...path, pe]);
      }
      return;
    }
    if (!isObject(v)) return;
    for (const [k, val] of Object.entries(v)) {
      const f = fieldType(r, k);
      // The walker stops visiting a map at its first undeclared field (visitMapItems returns false). kube iterates
      // a Go map, so which of several undeclared fields it names varies; this names the first in the object.
      if (!f.declared && r.element === undefined) {
        errs.push(`${pathString([...path, fieldElement(k)])}: field not declared in schema`);
        return;
      }
      walk(val, f.type, [...path, fieldElement(k)]);
    }
  };
  walk(v, t, []);
  if (errs.length <= 1) return errs[0];
  return ['errors:', ...errs.map((e) => `  ${e}`)].join('\n');
}

// missingKeys words why a list item has no path element, in listItemToPathElement's words (typed/helpers.go).
function missingKeys(t: ListType, item: unknown): string {
  if (t.keys.length === 0)
    return Array.isArray(item) ? 'not supported: associative list with lists as elements' : "associative list without keys has an element that's a map type";
  if (item === null) return 'associative list with keys may not have a null element';
  if (!isObject(item)) return 'associative list with keys may not have non-map elements';
  const element = t.element.kind === 'map' ? t.element : undefined;
  const missing = t.keys.filter((k) => !Object.hasOwn(item, k) && element?.fields.get(k)?.default === undefined);
  if (missing.length === t.keys.length) {
    return `associative list with keys has an element that omits all key fields [${t.keys.map((k) => JSON.stringify(k)).join(' ')}] (and doesn't have default values for any key fields)`;
  }
  return `associative list with keys has an element that omits key field ${JSON.stringify(missing[0])} (and doesn't have default value)`;
}
