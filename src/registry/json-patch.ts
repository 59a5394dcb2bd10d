/**
 * @module registry/json-patch
 * JSON patch (RFC 6902) applied exactly as kube-apiserver applies it, with gopkg.in/evanphx/json-patch.v4 (v4.13.0,
 * vendored by Kubernetes: patch.go, errors.go). Written after that library's behaviour, which clients depend on and
 * which differs from RFC 6902 and from fast-json-patch:
 * - `test` of a missing member, or of a JSON null one, passes when the value is null or absent (kube-rs adds its
 *   finalizer with `test /metadata/finalizers null` then `add`);
 * - `replace` of a missing object member adds it; `copy` from a missing object member copies null; `remove` of a
 *   missing member fails; `add` never creates intermediate objects;
 * - array indexes are Go integers (`+1`, `01` work), negative ones count from the end (`add` at -1 appends), `-`
 *   appends and is valid only as an `add`/`move`/`copy` destination;
 * - values are compared by their JSON text, so 1 and 1.0 differ, and a string the server encoded HTML-safe
 *   ("a\u0026b") differs from the same string written plainly ("a&b");
 * - a path without a leading "/" loses its first segment ("a/b" is "/b"); "" is the root for `replace` and `test`;
 *   `~1` and `~0` are unescaped, any other `~` is kept;
 * - `move` into its own child fails (the source is removed before the destination is looked up);
 * - `copy` may add at most `accumulatedCopySizeLimit` bytes in one patch (kube-apiserver: 3 MiB).
 * Where the library dereferences a nil pointer (`test`/`replace` of the root without a value, arrays holding null
 * compared by `test`), kube-apiserver panics; JsonPatchPanic stands for that.
 *
 * The document is a tree of nodes mirroring the library's lazyNode: scalars keep their JSON text (`Leaf.raw`), and
 * Go's nil pointer (a JSON null member or element, or an absent value) is JavaScript null.
 */
import { compareUtf8, decodeGoJson, goQuote, goString, htmlSafe, type GoObject, type GoValue } from '../apis/meta/go-json.js';

/** Operation is one decoded operation (json.RawMessage members by name), or null for a JSON null element. */
export type Operation = ReadonlyMap<string, GoValue> | null;

/** Patch is a decoded JSON patch (jsonpatch.Patch). */
export type Patch = readonly Operation[];

/** JsonPatchError is an error Patch.Apply returns; its message is the library's. */
export class JsonPatchError extends Error {}

/** JsonPatchDecodeError is DecodePatch's error for a document that is JSON but not a list of operations. */
export class JsonPatchDecodeError extends Error {}

/** JsonPatchPanic marks a patch on which the library dereferences a nil pointer (kube-apiserver panics). */
export class JsonPatchPanic extends Error {
  constructor() {
    super('runtime error: invalid memory address or nil pointer dereference');
  }
}

/** ApplyOptions are the library's settings; kube-apiserver sets AccumulatedCopySizeLimit (0: unlimited). */
export interface ApplyOptions {
  accumulatedCopySizeLimit?: number;
}

/** patchFromJson is DecodePatch on an already decoded document: a list of objects (or nulls), or null itself. */
export function patchFromJson(json: GoValue): Patch {
  if (json === null) return [];
  if (json.kind !== 'array') throw new JsonPatchDecodeError(`json: cannot unmarshal ${json.kind} into Go value of type jsonpatch.Patch`);
  let first: string | undefined;
  const ops = json.items.map((item): Operation => {
    if (item === null) return null;
    if (item.kind === 'object') return new Map(item.entries);
    first ??= `json: cannot unmarshal ${item.kind} into Go value of type jsonpatch.Operation`;
    return null;
  });
  if (first) throw new JsonPatchDecodeError(first);
  return ops;
}

/** decodePatch is jsonpatch.DecodePatch (a syntax error throws go-json's GoJsonSyntaxError). */
export function decodePatch(json: string | Uint8Array): Patch {
  return patchFromJson(decodeGoJson(json));
}

/** applyPatch is Patch.Apply: the patched JSON text of a JSON document, or a JsonPatchError / JsonPatchPanic. */
export function applyPatch(patch: Patch, doc: string, opts: ApplyOptions = {}): string {
  if (doc.length === 0) return doc;
  const run = new Applier(parseRoot(doc), opts.accumulatedCopySizeLimit ?? 0);
  for (const op of patch) run.apply(op);
  return marshal(run.root);
}

/** equal is jsonpatch.Equal: whether two JSON documents are equal as the `test` operation compares values. */
export function equal(a: string, b: string): boolean {
  const node = (text: string): Node => {
    const v = decodeGoJson(text);
    return v === null ? new Leaf('null', null) : (fromGo(v) as Node);
  };
  return nodesEqual(node(a), node(b));
}

// --- The document ---------------------------------------------------------------------------------------------

/** Leaf is a scalar with its JSON text; raw null is a value given as JSON null (lazyNode{raw: nil}). */
class Leaf {
  constructor(
    readonly raw: string | null,
    readonly value: string | number | boolean | null,
  ) {}
}

/**
 * Obj is an object. `parsed` is set once the library would have decoded it: it then marshals with sorted keys;
 * until then it is marshalled from its `source` as written (member order and duplicate members kept), as the
 * library copies an undecoded json.RawMessage. Only a decoded object is ever changed.
 */
class Obj {
  constructor(
    readonly members: Map<string, Slot>,
    public parsed = false,
    readonly source?: GoObject,
  ) {}
}

/** Arr is an array. */
class Arr {
  constructor(readonly items: Slot[]) {}
}

type Node = Leaf | Obj | Arr;
/** Slot is what a member or element holds: a node, or null for Go's nil (a JSON null, or nothing). */
type Slot = Node | null;

/** NIL_MAP is the container a JSON null document (or a copied value-less leaf) decodes to: a nil Go map. */
const NIL_MAP = Symbol('nil map');
type Container = Obj | Arr | typeof NIL_MAP;

const EMPTY: ReadonlyMap<string, Slot> = new Map();

function fromGo(v: GoValue): Slot {
  if (v === null) return null;
  switch (v.kind) {
    case 'object':
      return new Obj(new Map(v.entries.map(([k, m]) => [k, fromGo(m)])), false, v);
    case 'array':
      return new Arr(v.items.map(fromGo));
    default:
      return new Leaf(v.raw, v.value);
  }
}

// parseRoot decodes the document as Apply does: a partialArray when it starts with "[", else a partialDoc.
function parseRoot(doc: string): Obj | Arr | typeof NIL_MAP {
  const v = decodeGoJson(doc);
  const kind = v === null ? 'null' : v.kind;
  if (doc.startsWith('[')) {
    if (v?.kind === 'array') return fromGo(v) as Arr;
    throw new JsonPatchError(`json: cannot unmarshal ${kind} into Go value of type jsonpatch.partialArray`);
  }
  if (v === null) return NIL_MAP;
  if (v.kind !== 'object') throw new JsonPatchError(`json: cannot unmarshal ${kind} into Go value of type jsonpatch.partialDoc`);
  const root = fromGo(v) as Obj;
  root.parsed = true;
  return root;
}

/** marshal is json.Marshal of a node: leaves as their (HTML-safe) text, decoded objects with sorted keys. */
function marshal(s: Slot | typeof NIL_MAP): string {
  if (s === null || s === NIL_MAP) return 'null';
  if (s instanceof Leaf) return s.raw === null ? 'null' : htmlSafe(s.raw);
  if (s instanceof Arr) return `[${s.items.map(marshal).join(',')}]`;
  if (!s.parsed && s.source) return marshalSource(s.source);
  const keys = [...s.members.keys()].sort(compareUtf8);
  return `{${keys.map((k) => `${goString(k)}:${marshal(s.members.get(k)!)}`).join(',')}}`;
}

function marshalSource(v: GoValue): string {
  if (v === null) return 'null';
  if (v.kind === 'object') return `{${v.entries.map(([k, m]) => `${goString(k)}:${marshalSource(m)}`).join(',')}}`;
  if (v.kind === 'array') return `[${v.items.map(marshalSource).join(',')}]`;
  return htmlSafe(v.raw);
}

// --- Equality (lazyNode.equal) ---------------------------------------------------------------------------------

function nodesEqual(n: Node, o: Node): boolean {
  // A scalar is compared by its JSON text (the library compacts both texts; a scalar's has no spaces).
  if (n instanceof Leaf && n.raw !== 'null') return o instanceof Leaf && n.raw === o.raw;
  if (n instanceof Arr) return arraysEqual(n.items, o);
  if (n instanceof Obj) n.parsed = true;
  // A leaf holding the text null decodes as an empty (nil) map first, so it equals {}.
  return objectsEqual(n instanceof Obj ? n.members : EMPTY, o);
}

function objectsEqual(nm: ReadonlyMap<string, Slot>, o: Node): boolean {
  let om: ReadonlyMap<string, Slot>;
  if (o instanceof Obj) om = o.members;
  else if (o instanceof Leaf && o.raw === 'null') om = EMPTY;
  else return false;
  if (nm.size !== om.size) return false;
  for (const [k, v] of nm) {
    if (!om.has(k)) return false;
    const ov = om.get(k)!;
    if ((v === null) !== (ov === null)) return false;
    if (v !== null && ov !== null && !nodesEqual(v, ov)) return false;
  }
  return true;
}

function arraysEqual(ni: readonly Slot[], o: Node): boolean {
  let oi: readonly Slot[];
  if (o instanceof Arr) oi = o.items;
  else if (o instanceof Leaf && o.raw === 'null') oi = [];
  else return false;
  if (ni.length !== oi.length) return false;
  for (let k = 0; k < ni.length; k++) {
    const a = ni[k]!;
    const b = oi[k]!;
    // The library calls a method of each element without checking it for nil.
    if (a === null || b === null) throw new JsonPatchPanic();
    if (!nodesEqual(a, b)) return false;
  }
  return true;
}

// --- Containers (partialDoc, partialArray) --------------------------------------------------------------------

const invalidIndex = (idx: bigint) => new JsonPatchError(`Unable to access invalid index: ${idx}: invalid index referenced`);
const missingKey = (key: string) => new JsonPatchError(`Unable to remove nonexistent key: ${key}: missing value`);

function get(c: Container, key: string): Slot {
  if (c === NIL_MAP) return null;
  if (c instanceof Obj) return c.members.get(key) ?? null;
  const len = BigInt(c.items.length);
  let idx = atoi(key);
  if (idx < 0n) {
    if (idx < -len) throw invalidIndex(idx);
    idx += len;
  }
  if (idx >= len) throw invalidIndex(idx);
  return c.items[Number(idx)]!;
}

// set is only used by replace, after get found the index.
function set(c: Container, key: string, v: Slot): void {
  if (c === NIL_MAP) throw new JsonPatchPanic();
  if (c instanceof Obj) {
    c.members.set(key, v);
    return;
  }
  let idx = atoi(key);
  if (idx < 0n) {
    if (idx < -BigInt(c.items.length)) throw invalidIndex(idx);
    idx += BigInt(c.items.length);
  }
  c.items[Number(idx)] = v;
}

function add(c: Container, key: string, v: Slot): void {
  if (c === NIL_MAP) throw new JsonPatchPanic();
  if (c instanceof Obj) {
    c.members.set(key, v);
    return;
  }
  if (key === '-') {
    c.items.push(v);
    return;
  }
  let idx: bigint;
  try {
    idx = atoi(key);
  } catch (e) {
    throw new JsonPatchError(`value was not a proper array index: '${key}': ${(e as Error).message}`);
  }
  const size = BigInt(c.items.length) + 1n;
  if (idx >= size) throw invalidIndex(idx);
  if (idx < 0n) {
    if (idx < -size) throw invalidIndex(idx);
    idx += size;
  }
  c.items.splice(Number(idx), 0, v);
}

function remove(c: Container, key: string): void {
  if (c === NIL_MAP) throw missingKey(key);
  if (c instanceof Obj) {
    if (!c.members.delete(key)) throw missingKey(key);
    return;
  }
  const len = BigInt(c.items.length);
  let idx = atoi(key);
  if (idx >= len) throw invalidIndex(idx);
  if (idx < 0n) {
    if (idx < -len) throw invalidIndex(idx);
    idx += len;
  }
  c.items.splice(Number(idx), 1);
}

const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/** atoi is strconv.Atoi on a 64-bit platform: an optional sign and decimal digits, leading zeros allowed. */
function atoi(s: string): bigint {
  const fail = (why: string) => new JsonPatchError(`strconv.Atoi: parsing ${goQuote(s)}: ${why}`);
  const neg = s.startsWith('-');
  const digits = neg || s.startsWith('+') ? s.slice(1) : s;
  if (digits === '') throw fail('invalid syntax');
  let n = 0n;
  for (const ch of digits) {
    if (ch < '0' || ch > '9') throw fail('invalid syntax');
    n = n * 10n + BigInt(ch.charCodeAt(0) - 48);
    if (n > UINT64_MAX) throw fail('value out of range');
  }
  if (n > (neg ? INT64_MAX + 1n : INT64_MAX)) throw fail('value out of range');
  return neg ? -n : n;
}

// RFC 6901 unescaping as strings.NewReplacer("~1", "/", "~0", "~") does it: left to right, "~01" is "~1".
const decodeKey = (k: string) => k.replace(/~[01]/g, (m) => (m === '~1' ? '/' : '~'));

/** findObject returns the container a path points into and the last key, or undefined when it does not exist. */
function findObject(root: Container, path: string): { con: Container; key: string } | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  let con: Container = root;
  for (const part of split.slice(1, -1)) {
    let next: Slot;
    try {
      next = get(con, decodeKey(part));
    } catch (e) {
      if (e instanceof JsonPatchError) return undefined;
      throw e;
    }
    if (next === null) return undefined;
    if (next instanceof Leaf) {
      // A copied value-less leaf holds the text null, which decodes to a nil map; other leaves are no containers.
      if (next.raw !== 'null') return undefined;
      con = NIL_MAP;
      continue;
    }
    if (next instanceof Obj) next.parsed = true;
    con = next;
  }
  return { con, key: decodeKey(split.at(-1)!) };
}

// --- Operations -------------------------------------------------------------------------------------------------

const fail = (message: string) => new JsonPatchError(message);

// wrap prefixes a library error with the operation's context, as fmt.Errorf("...: %w", err) does.
function wrap<T>(context: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof JsonPatchError) throw new JsonPatchError(`${context}: ${e.message}`);
    throw e;
  }
}

// Operation.Kind: the "op" member when it is a JSON string, else "unknown".
function kindOf(op: Operation): string {
  const v = op?.get('op');
  return v && v.kind === 'string' ? (v.value as string) : 'unknown';
}

// Operation.Path / Operation.From.
function member(op: Operation, name: 'path' | 'from'): string {
  const v = op?.get(name);
  if (v === undefined || v === null) {
    throw fail(name === 'path' ? 'operation missing path field: missing value' : 'operation, missing from field: missing value');
  }
  if (v.kind !== 'string') throw fail(`json: cannot unmarshal ${v.kind} into Go value of type string`);
  return v.value as string;
}

// Operation.value: a fresh node each time; nil when there is no "value", a value-less leaf for "value": null.
function valueOfOp(op: Operation): Slot {
  if (!op?.has('value')) return null;
  const v = op.get('value')!;
  return v === null ? new Leaf(null, null) : fromGo(v);
}

class Applier {
  #copied = 0;
  constructor(
    public root: Container,
    readonly copyLimit: number,
  ) {}

  apply(op: Operation): void {
    const kind = kindOf(op);
    switch (kind) {
      case 'add':
        return this.add(op);
      case 'remove':
        return this.remove(op);
      case 'replace':
        return this.replace(op);
      case 'move':
        return this.move(op);
      case 'test':
        return this.test(op);
      case 'copy':
        return this.copy(op);
      default:
        throw fail(`Unexpected kind: ${kind}`);
    }
  }

  add(op: Operation): void {
    const path = pathOr(op, 'add operation failed to decode path: missing value');
    const t = findObject(this.root, path);
    if (!t) throw fail(`add operation does not apply: doc is missing path: "${path}": missing value`);
    wrap(`error in add for path: '${path}'`, () => add(t.con, t.key, valueOfOp(op)));
  }

  remove(op: Operation): void {
    const path = pathOr(op, 'remove operation failed to decode path: missing value');
    const t = findObject(this.root, path);
    if (!t) throw fail(`remove operation does not apply: doc is missing path: "${path}": missing value`);
    wrap(`error in remove for path: '${path}'`, () => remove(t.con, t.key));
  }

  replace(op: Operation): void {
    const path = wrap('replace operation failed to decode path', () => member(op, 'path'));
    if (path === '') {
      const val = valueOfOp(op);
      if (val === null) throw new JsonPatchPanic();
      if (val instanceof Leaf) throw fail('replace operation value must be object or array: %!w(<nil>)');
      if (val instanceof Obj) val.parsed = true;
      this.root = val;
      return;
    }
    const t = findObject(this.root, path);
    if (!t) throw fail(`replace operation does not apply: doc is missing path: ${path}: missing value`);
    try {
      get(t.con, t.key);
    } catch (e) {
      if (e instanceof JsonPatchError) throw fail(`replace operation does not apply: doc is missing key: ${path}: missing value`);
      throw e;
    }
    wrap(`error in remove for path: '${path}'`, () => set(t.con, t.key, valueOfOp(op)));
  }

  move(op: Operation): void {
    const from = wrap('move operation failed to decode from', () => member(op, 'from'));
    const src = findObject(this.root, from);
    if (!src) throw fail(`move operation does not apply: doc is missing from path: ${from}: missing value`);
    const val = wrap(`error in move for path: '${src.key}'`, () => get(src.con, src.key));
    wrap(`error in move for path: '${src.key}'`, () => remove(src.con, src.key));
    const path = wrap('move operation failed to decode path', () => member(op, 'path'));
    const dst = findObject(this.root, path);
    if (!dst) throw fail(`move operation does not apply: doc is missing destination path: ${path}: missing value`);
    wrap(`error in move for path: '${path}'`, () => add(dst.con, dst.key, val));
  }

  test(op: Operation): void {
    const path = wrap('test operation failed to decode path', () => member(op, 'path'));
    const failed = () => fail(`testing value ${path} failed: test failed`);
    if (path === '') {
      const self: Node = this.root === NIL_MAP ? new Obj(new Map(), true) : this.root;
      const want = valueOfOp(op);
      if (want === null) throw new JsonPatchPanic();
      if (!nodesEqual(self, want)) throw failed();
      return;
    }
    const t = findObject(this.root, path);
    if (!t) throw fail(`test operation does not apply: is missing path: ${path}: missing value`);
    const val = wrap(`error in test for path: '${path}'`, () => get(t.con, t.key));
    const want = valueOfOp(op);
    if (val === null) {
      // A missing or null member equals an absent or null value.
      if (want === null || (want instanceof Leaf && want.raw === null)) return;
      throw failed();
    }
    if (want === null || !nodesEqual(val, want)) throw failed();
  }

  copy(op: Operation): void {
    const from = wrap('copy operation failed to decode from', () => member(op, 'from'));
    const src = findObject(this.root, from);
    if (!src) throw fail(`copy operation does not apply: doc is missing from path: ${from}: missing value`);
    const val = wrap(`error in copy for from: '${from}'`, () => get(src.con, src.key));
    const path = pathOr(op, 'copy operation failed to decode path: missing value');
    const dst = findObject(this.root, path);
    if (!dst) throw fail(`copy operation does not apply: doc is missing destination path: ${path}: missing value`);
    // deepCopy: the value is marshalled and read back; its marshalled size counts against the limit.
    let copy: Slot = null;
    if (val !== null) {
      const text = marshal(val);
      this.#copied += Buffer.byteLength(text);
      const g = decodeGoJson(text);
      copy = g === null ? new Leaf('null', null) : fromGo(g);
    }
    if (this.copyLimit > 0 && this.#copied > this.copyLimit) {
      throw fail(`Unable to complete the copy, the accumulated size increase of copy is ${this.#copied}, exceeding the limit ${this.copyLimit}`);
    }
    wrap('error while adding value during copy', () => add(dst.con, dst.key, copy));
  }
}

// pathOr reads "path", replacing any decoding error with the fixed message add, remove and copy give.
function pathOr(op: Operation, message: string): string {
  try {
    return member(op, 'path');
  } catch {
    throw fail(message);
  }
}
