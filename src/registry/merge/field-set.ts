/**
 * @module registry/merge/field-set
 * Sets of field paths, as sigs.k8s.io/structured-merge-diff's fieldpath.Set, and their FieldsV1 form.
 * A path element is kept as its FieldsV1 spelling: `f:name` (a field), `k:{"type":"Ready"}` (an item of a list map,
 * its keys sorted), `v:"a"` (an item of a set), `i:0` (an index). A set is a tree: the paths that end at a node are
 * its members, the longer ones its children.
 */

/** Path is a sequence of path elements in their FieldsV1 spelling. */
export type Path = readonly string[];

/** FieldSet is fieldpath.Set: members end here, children continue. Children are never left empty. */
export class FieldSet {
  readonly members = new Set<string>();
  readonly children = new Map<string, FieldSet>();

  static of(paths: Iterable<Path>): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  insert(p: Path): void {
    if (p.length === 0) return;
    let node: FieldSet = this;
    for (let i = 0; i < p.length - 1; i++) {
      const pe = p[i] as string;
      let child = node.children.get(pe);
      if (!child) node.children.set(pe, (child = new FieldSet()));
      node = child;
    }
    node.members.add(p[p.length - 1] as string);
  }

  has(p: Path): boolean {
    let node: FieldSet | undefined = this;
    for (let i = 0; i < p.length - 1 && node; i++) node = node.children.get(p[i] as string);
    return !!node && p.length > 0 && node.members.has(p[p.length - 1] as string);
  }

  empty(): boolean {
    if (this.members.size > 0) return false;
    for (const c of this.children.values()) if (!c.empty()) return false;
    return true;
  }

  /** withPrefix is the subtree under one element (empty when absent). */
  withPrefix(pe: string): FieldSet {
    return this.children.get(pe) ?? EMPTY;
  }

  union(o: FieldSet): FieldSet {
    const out = this.copy();
    for (const m of o.members) out.members.add(m);
    for (const [pe, c] of o.children) out.children.set(pe, out.children.get(pe)?.union(c) ?? c.copy());
    return out;
  }

  /** difference removes o's paths exactly (a member of o does not remove longer paths through it). */
  difference(o: FieldSet): FieldSet {
    return this.#combine(
      (m) => !o.members.has(m),
      (pe, c) => {
        const oc = o.children.get(pe);
        return oc ? c.difference(oc) : c.copy();
      },
    );
  }

  intersection(o: FieldSet): FieldSet {
    return this.#combine(
      (m) => o.members.has(m),
      (pe, c) => {
        const oc = o.children.get(pe);
        return oc ? c.intersection(oc) : undefined;
      },
    );
  }

  /** recursiveDifference also removes every path under a member of o. */
  recursiveDifference(o: FieldSet): FieldSet {
    return this.#combine(
      (m) => !o.members.has(m),
      (pe, c) => {
        if (o.members.has(pe)) return undefined;
        const oc = o.children.get(pe);
        return oc ? c.recursiveDifference(oc) : c.copy();
      },
    );
  }

  #combine(keepMember: (m: string) => boolean, child: (pe: string, c: FieldSet) => FieldSet | undefined): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) if (keepMember(m)) out.members.add(m);
    for (const [pe, c] of this.children) {
      const r = child(pe, c);
      if (r && !r.empty()) out.children.set(pe, r);
    }
    return out;
  }

  copy(): FieldSet {
    const out = new FieldSet();
    for (const m of this.members) out.members.add(m);
    for (const [pe, c] of this.children) out.children.set(pe, c.copy());
    return out;
  }

  /** paths lists every path in Set.Iterate's order: a node's members first, then its children, each sorted. */
  paths(prefix: Path = []): Path[] {
    const out: Path[] = [];
    for (const m of [...this.members].sort(comparePathElements)) out.push([...prefix, m]);
    for (const pe of [...this.children.keys()].sort(comparePathElements)) out.push(...(this.children.get(pe) as FieldSet).paths([...prefix, pe]));
    return out;
  }
}

const EMPTY = new FieldSet();

/** toFieldsV1 is the FieldsV1 form: `.` marks a node that is itself a member; keys in fieldpath's order. */
export function toFieldsV1(set: FieldSet, includeSelf = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (includeSelf) out['.'] = {};
  const names = new Set([...set.members, ...[...set.children].filter(([, c]) => !c.empty()).map(([pe]) => pe)]);
  for (const pe of [...names].sort(comparePathElements)) {
    const child = set.children.get(pe);
    out[pe] = child && !child.empty() ? toFieldsV1(child, set.members.has(pe)) : {};
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** fromFieldsV1 reads a FieldsV1 object back into a set. */
export function fromFieldsV1(fields: unknown): FieldSet {
  const out = new FieldSet();
  if (!isObject(fields)) return out;
  for (const [pe, v] of Object.entries(fields)) {
    if (pe === '.') continue;
    const sub = isObject(v) ? v : {};
    const keys = Object.keys(sub);
    if (keys.length === 0 || Object.hasOwn(sub, '.')) out.members.add(pe);
    if (keys.some((k) => k !== '.')) {
      const child = fromFieldsV1(sub);
      if (!child.empty()) out.children.set(pe, child);
    }
  }
  return out;
}

// --- Path elements ---

/** fieldElement, keyElement, valueElement and indexElement spell path elements as FieldsV1 does. */
export const fieldElement = (name: string) => `f:${name}`;
export const keyElement = (keys: readonly [string, unknown][]) => `k:${JSON.stringify(Object.fromEntries([...keys].sort(([a], [b]) => byteOrder(a, b))))}`;
export const valueElement = (v: unknown) => `v:${JSON.stringify(v)}`;
export const indexElement = (i: number) => `i:${i}`;

const byteOrder = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const RANK: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

// valueRank orders values of different types as value.Compare does: numbers, strings, booleans, lists, maps, null.
function valueRank(v: unknown): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (isObject(v)) return 4;
  return 5;
}

function compareValues(a: unknown, b: unknown): number {
  const r = valueRank(a) - valueRank(b);
  if (r !== 0) return Math.sign(r);
  if (typeof a === 'number' && typeof b === 'number') return Math.sign(a - b);
  if (typeof a === 'string' && typeof b === 'string') return byteOrder(a, b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return byteOrder(JSON.stringify(a), JSON.stringify(b));
}

/** comparePathElements is PathElement.Compare: fields, then keys, then values, then indexes. */
export function comparePathElements(a: string, b: string): number {
  const ka = a.slice(0, 1);
  const kb = b.slice(0, 1);
  if (ka !== kb) return Math.sign((RANK[ka] ?? 4) - (RANK[kb] ?? 4));
  const ra = a.slice(2);
  const rb = b.slice(2);
  switch (ka) {
    case 'f':
      return byteOrder(ra, rb);
    case 'i':
      return Math.sign(Number(ra) - Number(rb));
    case 'v':
      return compareValues(parse(ra), parse(rb));
    case 'k': {
      const ea = Object.entries(parse(ra) as Record<string, unknown>);
      const eb = Object.entries(parse(rb) as Record<string, unknown>);
      for (let i = 0; ; i++) {
        if (i >= ea.length || i >= eb.length) return Math.sign(ea.length - eb.length);
        const [na, va] = ea[i] as [string, unknown];
        const [nb, vb] = eb[i] as [string, unknown];
        const c = byteOrder(na, nb) || compareValues(va, vb);
        if (c !== 0) return c;
      }
    }
    default:
      return byteOrder(a, b);
  }
}

function parse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

// goString is value.ToString for a key or set value: strings quoted as Go's %q does for plain text.
const goString = (v: unknown) => (typeof v === 'string' ? JSON.stringify(v) : v === null ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** pathString is fieldpath.Path.String: `.spec.replicas`, `.status.conditions[type="Ready"].status`, `[="a"]`, `[0]`. */
export function pathString(p: Path): string {
  return p
    .map((pe) => {
      const rest = pe.slice(2);
      switch (pe.slice(0, 1)) {
        case 'f':
          return `.${rest}`;
        case 'k':
          return `[${Object.entries(parse(rest) as Record<string, unknown>)
            .map(([k, v]) => `${k}=${goString(v)}`)
            .join(',')}]`;
        case 'v':
          return `[=${goString(parse(rest))}]`;
        case 'i':
          return `[${rest}]`;
        default:
          return pe;
      }
    })
    .join('');
}
