/**
 * @module storage/etcd-storage
 * EtcdStorage: the Storage contract on etcd v3, shaped like kube-apiserver's etcd3 store (k8s.io/apiserver
 * pkg/storage/etcd3/store.go), so several replicas can serve one set of objects:
 * - one key per object under a prefix: `<prefix>/<group>/<plural>/<namespace>/<name>` (cluster-scoped kinds
 *   without the namespace), the value the object's JSON without its resourceVersion;
 * - resourceVersion is etcd's mod revision: every write's revision is etcd's, global across keys;
 * - creates, updates and deletes are transactions compared on the key's create or mod revision (optimistic
 *   concurrency: an update retries on the state the failed transaction read back);
 * - lists are ranges at one revision (a page's later pages read the same revision), with a limit and the count
 *   of what follows; an older revision etcd has compacted is Expired, a future one TooLarge. A current list, and a
 *   later page of a collection unchanged since its revision, come from the replica's mirror of the prefix instead
 *   (kube-apiserver's watch cache and its snapshots play that part);
 * - watches are etcd watches on the prefix from a revision, with the previous value (for DELETED's object and
 *   selector transitions); a watch etcd cancels for compaction reports Expired through the sink.
 * Ordering of lists is etcd's key order (as kube-apiserver's): by namespace then name, except that a namespace
 * that is a prefix of another and a '/' (`a/` after `a-b/`) sort as bytes.
 */
import { rootCertificates } from 'node:tls';
import { Etcd3, type IOptions, type Watcher } from 'etcd3';
import type { KubeObject } from '../apis/meta/types.js';
import { ChangeFeed } from './change-feed.js';
import { DEFAULT_ETCD_PREFIX } from './etcd-defaults.js';
import { resumeFrom } from './etcd-resume.js';
import { StorageError } from './errors.js';
import { MemoryHistory } from './history.js';
import { RevisionWaiters } from './revision-waiters.js';
import type { ChangeEvent, DeleteCheck, KeyPrefix, ListRequest, ListResult, ObjectKey, Storage, UpdateFn, WatchHandle, WatchSink } from './interface.js';

/** EtcdStorageOptions are the --etcd-* flags. */
export interface EtcdStorageOptions {
  /** etcd endpoints, `https://host:2379` or `http://host:2379`. */
  servers: string[];
  /**
   * Key prefix of every object (kube-apiserver's --etcd-prefix); default DEFAULT_ETCD_PREFIX.
   */
  prefix?: string;
  /** TLS: the CA that signed etcd's certificate, and the client certificate and key etcd asks for. */
  tls?: EtcdTls;
  /**
   * How often the history is compacted, as kube-apiserver's --etcd-compaction-interval (default 5 minutes; 0: never,
   * leave it to etcd's own --auto-compaction-*): each time to the revision seen one interval before, so a watch or a
   * paginated list has at least one interval to resume or finish.
   */
  compactionIntervalMs?: number;
  /**
   * How many recent changes this replica keeps in memory to serve watches from (--watch-history-events): one etcd
   * watch on the prefix feeds every client watch that starts within them; an older start gets an etcd watch of its own.
   */
  historyEvents?: number;
}

// Keys read per page when the mirror is filled.
const MIRROR_PAGE = 1000;
// How long a current list waits for the watch to bring the mirror up to etcd's revision before reading etcd.
const MIRROR_WAIT_MS = 1000;
// How many collections' sorted entries are kept (#sortedCollection).
const SORTED_COLLECTIONS = 8;

// Changes kept in memory for watches, as our --watch-history-events default.
const DEFAULT_HISTORY_EVENTS = 100_000;

type WatchEvent = { type: 'Put' | 'Delete'; kv: KV; prev_kv?: KV };

// kube-apiserver's default --etcd-compaction-interval.
const DEFAULT_COMPACTION_INTERVAL_MS = 5 * 60 * 1000;

// How often etcd is probed for /readyz, and how long it may take to answer.
const HEALTH_INTERVAL_MS = 2000;
const HEALTH_DEADLINE_MS = 1000;

// Keys in a range read per round trip when a filter may drop some.
const FILTERED_BATCH = 500;

type KV = { key: Buffer; value: Buffer; mod_revision: string; create_revision: string };
// A mirrored object: its JSON text with the resourceVersion, made from the stored value when first needed (a start
// reads every object; decoding and re-encoding each there would delay /readyz by seconds at 100k objects).
type MirrorEntry = { key: ObjectKey; text?: Buffer; stored?: KV };
type PendingGet = { key: Buffer; resolve: (o: KubeObject | undefined) => void; reject: (e: unknown) => void };

// etcd's default --max-txn-ops: the most gets one batched read carries.
const MAX_TXN_OPS = 128;
// How long a batched read may wait for etcd before its gets fail (see #flushGets).
const GET_TIMEOUT_MS = 10_000;

const enc = (s: string) => Buffer.from(s, 'utf8');

// rangeEnd is the first key after every key starting with `prefix` (etcd's prefix range end).
export function rangeEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if ((end[i] as number) < 0xff) {
      end[i] = (end[i] as number) + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

// withTimeout rejects when `p` has not settled within `ms` (leaving it to settle on its own).
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer from etcd within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

// asStorageError names etcd's answers for compacted and future revisions as the contract's errors.
function asStorageError(e: unknown, revision: number | undefined): unknown {
  const message = e instanceof Error ? e.message : String(e);
  if (/compacted/.test(message)) return new StorageError('Expired', `too old resource version: ${revision ?? 0}`);
  if (/future revision/.test(message)) return new StorageError('TooLarge', `too large resource version: ${revision ?? 0}`);
  return e;
}

/** EtcdStorage implements Storage on etcd v3. */
/** EtcdTls is an etcd client's TLS: the CA its servers' certificates chain to, and a client certificate and key. */
export interface EtcdTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/**
 * etcdClientOptions are etcd3's options for these servers. A client certificate without a CA is still presented, the
 * servers then checked against the system's roots (as etcdctl does without --cacert): etcd3 takes a client
 * certificate only together with a root.
 */
export function etcdClientOptions(servers: readonly string[], tls: EtcdTls | undefined): IOptions {
  if (!tls?.ca && !tls?.cert && !tls?.key) return { hosts: [...servers] };
  return {
    hosts: [...servers],
    credentials: {
      rootCertificate: tls.ca ?? Buffer.from(rootCertificates.join('\n')),
      ...(tls.key ? { privateKey: tls.key } : {}),
      ...(tls.cert ? { certChain: tls.cert } : {}),
    },
  };
}

export class EtcdStorage implements Storage {
  readonly #client: Etcd3;
  readonly #options: IOptions;
  readonly #prefix: string;
  #revision = 0;
  #compacted = 0;
  readonly #waiting = new RevisionWaiters();
  // The clients of watches from before this replica's memory, one each (see #etcdWatch).
  readonly #directClients = new Set<Etcd3>();
  #revisionWatch: Watcher | undefined;
  // The changes since open, from one etcd watch on the whole prefix, fanned out to the client watches in memory.
  #history!: MemoryHistory;
  #feed!: ChangeFeed;
  // Every object under the prefix as the watch has brought it up to the feed's revision: its JSON text, by etcd key.
  // Current lists are answered from it once etcd confirms it is up to date (kube-apiserver's consistent list from
  // its watch cache).
  readonly #mirror = new Map<string, MirrorEntry>();
  // Gets waiting for the next batched read, and whether one is in flight (see #flushGets).
  readonly #gets: PendingGet[] = [];
  // While the mirror is being filled: the keys the watch has changed since it started (see #fill); undefined once full.
  #filling: Set<string> | undefined;
  // The revision the watch started after: the mirror knows every change since, none before.
  #mirrorFrom = 0;
  // Per collection (etcd key prefix of a resource, and of a resource in a namespace): the revision of the last change
  // the mirror applied there, and the highest revision etcd vouched the mirror's state for (see #listFromMirror).
  readonly #changedAt = new Map<string, number>();
  readonly #knownThrough = new Map<string, number>();
  // Collections as sorted entries, kept while unchanged: the pages of one list walk reuse one sort.
  readonly #sorted = new Map<string, { at: number; entries: [string, MirrorEntry][] }>();
  #getInFlight = false;
  #closed = false;
  // etcd answered the last health probe (a one-key range within a second): /readyz's storage check.
  #healthy = true;
  #probe: NodeJS.Timeout | undefined;
  #compactor: NodeJS.Timeout | undefined;

  private constructor(o: EtcdStorageOptions) {
    const options = etcdClientOptions(o.servers, o.tls);
    this.#options = options;
    this.#client = new Etcd3(options);
    this.#prefix = `${(o.prefix ?? DEFAULT_ETCD_PREFIX).replace(/\/+$/, '')}/`;
  }

  /** open connects, learns the current revision and follows it (a watch on the prefix), so reads can wait for one. */
  static async open(o: EtcdStorageOptions): Promise<EtcdStorage> {
    const s = new EtcdStorage(o);
    const prefix = enc(s.#prefix);
    const head = await s.#client.kv.range({ key: prefix, range_end: rangeEnd(prefix), count_only: true });
    const start = Number(head.header.revision);
    s.#seen(start);
    // The watch goes on from that revision at once; the mirror is filled beside it (see #fill), so a large store does
    // not delay serving: until it is complete, current lists read etcd.
    s.#filling = new Set();
    s.#mirrorFrom = start;
    s.#history = new MemoryHistory(start, o.historyEvents ?? DEFAULT_HISTORY_EVENTS);
    s.#feed = new ChangeFeed(start, s.#history);
    const w = await s.#client
      .watch()
      .prefix(prefix)
      .startRevision(String(start + 1))
      .withPreviousKV()
      .create();
    w.on('data', (res) => {
      for (const ev of res.events) {
        // A resumed watch may repeat what it delivered already (never skips, see resumeFrom).
        if (Number(ev.kv.mod_revision) <= s.#feed.lastDelivered) continue;
        const key = s.#keyOf(ev.kv.key);
        if (!key) continue;
        const e = s.#change(ev as WatchEvent, key);
        const k = ev.kv.key.toString('utf8');
        s.#filling?.add(k);
        // A delete leaves the mirror even when it has no event to show (its previous value compacted away).
        if (ev.type === 'Delete') s.#mirror.delete(k);
        else if (e) s.#mirror.set(k, { key: e.key, text: enc(JSON.stringify(e.object)) });
        s.#changed(key, Number(ev.kv.mod_revision));
        if (!e) continue;
        s.#history.append(e);
        s.#feed.publishOrdered(e);
      }
      const head = Number(res.header.revision);
      // A progress notification (no events): nothing under the prefix changed up to that revision.
      if (res.events.length === 0) s.#feed.advance(head);
      s.#seen(head);
    });
    // The feed's position is the last revision this watch delivered (or a progress notification vouched for).
    resumeFrom(w, () => s.#feed.lastDelivered);
    // etcd3 resumes a disconnected watch by itself (from where resumeFrom says); nothing else ends this one but close().
    w.on('error', () => undefined);
    s.#revisionWatch = w;
    void s.#fill(prefix, start);
    s.#probe = setInterval(() => {
      // One keys-only read of the newest key under the prefix: health, etcd's revision, and progress (below).
      // Bounded by a timer rather than a gRPC deadline: etcd3 answers a deadline error by resetting the channel,
      // which would end the watch stream on it too.
      withTimeout(
        s.#client.kv.range({ key: prefix, range_end: rangeEnd(prefix), sort_order: 'Descend', sort_target: 'Mod', limit: 1, keys_only: true }),
        HEALTH_DEADLINE_MS,
      ).then(
        (r) => {
          s.#healthy = true;
          const revision = Number(r.header.revision);
          s.#seen(revision);
          s.#progress(revision, Number((r.kvs[0] as KV | undefined)?.mod_revision ?? 0), Number(r.count));
        },
        () => {
          s.#healthy = false;
        },
      );
    }, HEALTH_INTERVAL_MS);
    s.#probe.unref();
    const every = o.compactionIntervalMs ?? DEFAULT_COMPACTION_INTERVAL_MS;
    if (every > 0) {
      let target = s.#revision;
      s.#compactor = setInterval(() => {
        const to = target;
        target = s.#revision;
        if (to > s.#compacted) s.compact(to).catch(() => undefined);
      }, every);
      s.#compactor.unref();
    }
    return s;
  }

  /**
   * #progress moves the watch cache's position to etcd's revision when nothing under the prefix changed since the
   * watch's last event, as kube-apiserver's progress requests to etcd do: BOOKMARKs then carry a current
   * resourceVersion (so a resumed watch stays ahead of compaction while our keys are quiet and others' are not), and
   * watches and waits for a newer revision are answered. Safe when the mirror has every change up to the newest key's
   * mod revision and as many keys as etcd: a later put would have raised that revision, a later delete lowered the
   * count. Read synchronously with the answer, so the mirror and the feed's position are one snapshot.
   */
  #progress(revision: number, newest: number, count: number): void {
    if (!this.#filling && this.#feed.lastDelivered >= newest && this.#mirror.size === count) this.#feed.advance(revision);
  }

  // #seen records a revision etcd reported (every response header carries the store's revision).
  #seen(revision: number): void {
    if (revision <= this.#revision) return;
    this.#revision = revision;
    this.#waiting.reached(revision);
  }

  #key(key: ObjectKey): Buffer {
    return enc(`${this.#prefix}${key.resource}/${key.namespace ? `${key.namespace}/` : ''}${key.name}`);
  }

  #collection(prefix: KeyPrefix): Buffer {
    return enc(`${this.#prefix}${prefix.resource}/${prefix.namespace ? `${prefix.namespace}/` : ''}`);
  }

  // #textOf is a mirrored object's JSON text, made once from its stored value.
  #textOf(e: MirrorEntry): Buffer {
    if (!e.text) {
      e.text = enc(JSON.stringify(this.#decode(e.stored as KV)));
      delete e.stored;
    }
    return e.text;
  }

  #decode(kv: KV, revision = kv.mod_revision): KubeObject {
    const obj = JSON.parse(kv.value.toString('utf8')) as KubeObject;
    obj.metadata = { ...obj.metadata, resourceVersion: String(revision) };
    return obj;
  }

  // The stored value leaves the resourceVersion out: the key's mod revision is it.
  #value(obj: KubeObject): Buffer {
    const { resourceVersion: _rv, ...metadata } = obj.metadata;
    return enc(JSON.stringify({ ...obj, metadata }));
  }

  // #change is an etcd watch event as the contract's change event: DELETED carries the last state at the deletion
  // revision; a delete whose previous value etcd no longer has (compacted away) has nothing to show.
  #change(ev: WatchEvent, key: ObjectKey): ChangeEvent | undefined {
    const kv = ev.kv;
    const prev = ev.prev_kv;
    const revision = Number(kv.mod_revision);
    if (ev.type === 'Delete') {
      return prev ? { type: 'DELETED', key, revision, object: this.#decode(prev, kv.mod_revision), prevObject: this.#decode(prev) } : undefined;
    }
    return {
      type: kv.create_revision === kv.mod_revision ? 'ADDED' : 'MODIFIED',
      key,
      revision,
      object: this.#decode(kv),
      ...(prev ? { prevObject: this.#decode(prev) } : {}),
    };
  }

  /**
   * #fill reads every object under the prefix into the mirror, in pages at one revision, while the watch runs. A key
   * the watch has touched since it started is left to the watch (its state is newer than any page's); every other
   * key has not changed since the watch's start, so the page's state is its current one. Retried at etcd's newest
   * revision if a read fails (the argument holds for any revision the pages share).
   */
  async #fill(prefix: Buffer, revision: number): Promise<void> {
    while (!this.#closed) {
      try {
        await this.#fillMirror(prefix, revision);
        this.#filling = undefined;
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 1000));
        revision = this.#revision;
      }
    }
  }

  async #fillMirror(prefix: Buffer, revision: number): Promise<void> {
    const end = rangeEnd(prefix);
    let start = prefix;
    for (;;) {
      const r = await this.#client.kv.range({ key: start, range_end: end, revision, limit: MIRROR_PAGE });
      for (const kv of r.kvs as KV[]) {
        const k = kv.key.toString('utf8');
        const key = this.#keyOf(kv.key);
        if (key && !this.#filling?.has(k)) this.#mirror.set(k, { key, stored: kv });
      }
      if (!r.more || r.kvs.length === 0) return;
      start = Buffer.concat([(r.kvs[r.kvs.length - 1] as KV).key, Buffer.from([0])]);
    }
  }

  // #keyOf reads any object's key back from an etcd key: `<prefix><group>/<plural>/[<namespace>/]<name>`.
  #keyOf(key: Buffer): ObjectKey | undefined {
    const parts = key.toString('utf8').slice(this.#prefix.length).split('/');
    if (parts.length === 3) return { resource: `${parts[0]}/${parts[1]}`, namespace: '', name: parts[2] as string };
    if (parts.length === 4) return { resource: `${parts[0]}/${parts[1]}`, namespace: parts[2] as string, name: parts[3] as string };
    return undefined;
  }

  currentRevision(): number {
    return this.#revision;
  }

  compactedRevision(): number {
    return this.#compacted;
  }

  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (revision > this.#revision) {
      // A write outside our prefix moves etcd's revision without an event here: ask once.
      const prefix = enc(this.#prefix);
      this.#client.kv.range({ key: prefix, range_end: rangeEnd(prefix), count_only: true }).then(
        (r) => this.#seen(Number(r.header.revision)),
        () => undefined,
      );
    }
    return this.#waiting.wait(revision, this.#revision, timeoutMs);
  }

  get(key: ObjectKey): Promise<KubeObject | undefined> {
    return new Promise((resolve, reject) => {
      this.#gets.push({ key: this.#key(key), resolve, reject });
      if (!this.#getInFlight) this.#flushGets();
    });
  }

  /**
   * #flushGets reads the waiting gets' keys in one etcd transaction of range reads (at most MAX_TXN_OPS, etcd's
   * --max-txn-ops default). While one is in flight, new gets wait for the next, so under concurrency many gets
   * share a round trip (the gRPC call, not the read, is most of a get's cost here). Each get still reads after it
   * was asked (the transaction it joins starts later), so it sees every write acknowledged before it: linearizable,
   * as a single range read is.
   */
  #flushGets(): void {
    const batch = this.#gets.splice(0, MAX_TXN_OPS);
    if (batch.length === 0) {
      this.#getInFlight = false;
      return;
    }
    this.#getInFlight = true;
    // A read etcd never answers must not hold every later get: after GET_TIMEOUT_MS its gets fail (the caller retries,
    // as after any etcd error) and the next batch goes.
    let settled = false;
    let byTimer = false;
    const settle = () => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      return true;
    };
    const timer = setTimeout(() => {
      if (!settle()) return;
      byTimer = true;
      for (const g of batch) g.reject(new StorageError('Unavailable', `etcd did not answer a read within ${GET_TIMEOUT_MS} ms`));
      this.#flushGets();
    }, GET_TIMEOUT_MS);
    const read =
      batch.length === 1
        ? this.#client.kv.range({ key: (batch[0] as PendingGet).key }).then((r) => ({ revision: r.header.revision, results: [r.kvs as KV[]] }))
        : this.#client.kv
            .txn({ compare: [], success: batch.map((g) => ({ request_range: { key: g.key } })), failure: [] })
            .then((r) => ({ revision: r.header.revision, results: r.responses.map((x) => (x.response_range?.kvs ?? []) as KV[]) }));
    read
      .then(
        ({ revision, results }) => {
          if (!settle()) return;
          this.#seen(Number(revision));
          batch.forEach((g, i) => {
            const kv = results[i]?.[0];
            try {
              g.resolve(kv && this.#decode(kv));
            } catch (e) {
              g.reject(e);
            }
          });
        },
        (e: unknown) => {
          if (!settle()) return;
          for (const g of batch) g.reject(e);
        },
      )
      .finally(() => {
        // The timer has moved on already if it fired.
        if (!byTimer) this.#flushGets();
      });
  }

  async list(prefix: KeyPrefix, req: ListRequest = {}): Promise<ListResult> {
    const cached = req.revision === undefined ? await this.#listFromMirror(prefix, req) : this.#listAtFromMirror(prefix, req, req.revision);
    return cached ?? this.#listFromEtcd(prefix, req);
  }

  // #changed records a change the mirror applied, in the collections it belongs to.
  #changed(key: ObjectKey, revision: number): void {
    this.#changedAt.set(this.#collection({ resource: key.resource }).toString('utf8'), revision);
    if (key.namespace) this.#changedAt.set(this.#collection({ resource: key.resource, namespace: key.namespace }).toString('utf8'), revision);
  }

  /**
   * #listAtFromMirror answers a list at an earlier revision R (the later pages of a paginated list) from the mirror
   * when the collection is the same at R as in the mirror: the mirror has seen every change since its watch began
   * (R no older than that), the last change it applied in the collection is not after R, and nothing changed between
   * the mirror's position and R (R not past it, or etcd vouched for the collection up to R when an earlier page was
   * answered). kube-apiserver serves such pages from its watch cache's snapshots as well. Undefined: read etcd.
   */
  #listAtFromMirror(prefix: KeyPrefix, req: ListRequest, revision: number): ListResult | undefined {
    if (this.#filling || revision < this.#mirrorFrom || revision < this.#compacted || revision > this.#revision) return undefined;
    const from = this.#collection(prefix).toString('utf8');
    if ((this.#changedAt.get(from) ?? 0) > revision) return undefined;
    if (revision > Math.max(this.#feed.lastDelivered, this.#knownThrough.get(from) ?? 0)) return undefined;
    return this.#page(this.#sortedCollection(from), req, revision, prefix);
  }

  // #sortedCollection is the mirror's entries under `from`, sorted by key: the last sort while nothing changed there.
  #sortedCollection(from: string): [string, MirrorEntry][] {
    const kept = this.#sorted.get(from);
    if (kept && (this.#changedAt.get(from) ?? 0) <= kept.at) return kept.entries;
    const entries = [...this.#mirror].filter(([k]) => k.startsWith(from));
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // A few collections at a time (one list walk each); the oldest goes first.
    if (!kept && this.#sorted.size >= SORTED_COLLECTIONS) this.#sorted.delete(this.#sorted.keys().next().value as string);
    this.#sorted.set(from, { at: this.#feed.lastDelivered, entries });
    return entries;
  }

  /**
   * #listFromMirror answers a current list from the mirror once etcd confirms the mirror holds every change under the
   * collection: one keys-only read gives etcd's revision R, the highest mod revision M among the collection's keys and
   * their count. When the mirror has applied every event up to M and holds as many keys, no change of the collection
   * lies between the mirror and R (a later put would have raised M, a later delete lowered the count), so the mirror
   * is the collection at R. Undefined (read etcd instead) if the watch does not catch up within MIRROR_WAIT_MS.
   */
  async #listFromMirror(prefix: KeyPrefix, req: ListRequest): Promise<ListResult | undefined> {
    if (this.#filling) return undefined;
    const from = this.#collection(prefix);
    const r = await this.#client.kv.range({ key: from, range_end: rangeEnd(from), sort_order: 'Descend', sort_target: 'Mod', limit: 1, keys_only: true });
    const revision = Number(r.header.revision);
    this.#seen(revision);
    const newest = Number((r.kvs[0] as KV | undefined)?.mod_revision ?? 0);
    const count = Number(r.count);
    const fromText = from.toString('utf8');
    const deadline = Date.now() + MIRROR_WAIT_MS;
    // The mirror is the collection as of the feed's revision: read both in one synchronous step.
    let at = this.#feed.lastDelivered;
    let entries = at >= newest ? this.#sortedCollection(fromText) : undefined;
    while (!entries || entries.length !== count) {
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await this.#feed.waitForRevision(Math.max(newest, this.#feed.lastDelivered + 1), left);
      at = this.#feed.lastDelivered;
      entries = at >= newest ? this.#sortedCollection(fromText) : undefined;
    }
    // Nothing changed in the collection between the mirror's revision and etcd's: later pages at this revision
    // may be read from the mirror too (#listAtFromMirror).
    if (revision > (this.#knownThrough.get(fromText) ?? 0)) this.#knownThrough.set(fromText, revision);
    // Equal to the collection at etcd's revision when the mirror is behind it (nothing changed in between), or the
    // collection at the mirror's own, later, revision: either way a consistent snapshot no older than the request.
    return this.#page(entries, req, Math.max(revision, at), prefix);
  }

  // #page is a list's page of sorted mirror entries: after the request's position, filtered, up to its limit.
  #page(entries: [string, MirrorEntry][], req: ListRequest, listRevision: number, prefix: KeyPrefix): ListResult {
    const limit = req.limit ?? 0;
    const items: KubeObject[] = [];
    const encoded: Uint8Array[] = [];
    const text = req.encoded === true && !req.filter;
    let last: ObjectKey | undefined;
    let i = 0;
    if (req.after) {
      // The first entry past the position (binary search: the entries are sorted by key).
      const after = this.#key({ resource: prefix.resource, ...req.after }).toString('utf8');
      for (let hi = entries.length; i < hi; ) {
        const mid = (i + hi) >>> 1;
        if ((entries[mid] as [string, MirrorEntry])[0] <= after) i = mid + 1;
        else hi = mid;
      }
    }
    for (; i < entries.length; i++) {
      const e = (entries[i] as [string, MirrorEntry])[1];
      if (text) encoded.push(this.#textOf(e));
      else {
        const obj = JSON.parse(this.#textOf(e).toString('utf8')) as KubeObject;
        if (req.filter && !req.filter(obj)) continue;
        items.push(obj);
      }
      last = e.key;
      if (limit && (text ? encoded.length : items.length) === limit) {
        const more = i < entries.length - 1;
        return {
          items,
          revision: listRevision,
          more,
          last,
          ...(text ? { encoded } : {}),
          ...(more && !req.filter ? { remaining: entries.length - 1 - i } : {}),
        };
      }
    }
    return { items, revision: listRevision, more: false, ...(last ? { last } : {}), ...(text ? { encoded } : {}) };
  }

  async #listFromEtcd(prefix: KeyPrefix, req: ListRequest): Promise<ListResult> {
    const r = await this.#rangeList(prefix, req);
    // Sent on as text: encoded here, as the mirror's lists are (the endpoints' fast path takes either).
    if (req.encoded !== true || req.filter) return r;
    return { ...r, items: [], encoded: r.items.map((o) => enc(JSON.stringify(o))) };
  }

  async #rangeList(prefix: KeyPrefix, req: ListRequest): Promise<ListResult> {
    const from = this.#collection(prefix);
    const end = rangeEnd(from);
    let start = req.after ? Buffer.concat([this.#key({ resource: prefix.resource, ...req.after }), Buffer.from([0])]) : from;
    // An explicit revision is etcd's to judge: compacted is Expired, not yet written TooLarge (asStorageError).
    let revision = req.revision;
    const limit = req.limit ?? 0;
    const items: KubeObject[] = [];
    let last: ObjectKey | undefined;
    for (;;) {
      const batch = req.filter ? Math.max(limit, FILTERED_BATCH) : limit;
      const r = await this.#client.kv
        .range({ key: start, range_end: end, ...(revision ? { revision } : {}), ...(batch ? { limit: batch } : {}) })
        .catch((e: unknown) => {
          throw asStorageError(e, revision);
        });
      this.#seen(Number(r.header.revision));
      revision ??= Number(r.header.revision);
      const kvs = r.kvs as KV[];
      for (let i = 0; i < kvs.length; i++) {
        const kv = kvs[i] as KV;
        const obj = this.#decode(kv);
        if (req.filter && !req.filter(obj)) continue;
        items.push(obj);
        last = this.#keyOf(kv.key);
        if (limit && items.length === limit) {
          const more = i < kvs.length - 1 || r.more;
          return {
            items,
            revision,
            more,
            last,
            ...(more && !req.filter ? { remaining: Number(r.count) - (i + 1) } : {}),
          };
        }
      }
      if (!r.more || kvs.length === 0) return { items, revision, more: false, ...(last ? { last } : {}) };
      start = Buffer.concat([(kvs[kvs.length - 1] as KV).key, Buffer.from([0])]);
    }
  }

  async create(key: ObjectKey, obj: KubeObject): Promise<KubeObject> {
    const k = this.#key(key);
    const r = await this.#client.kv.txn({
      compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
      success: [{ request_put: { key: k, value: this.#value(obj) } }],
      failure: [],
    });
    this.#seen(Number(r.header.revision));
    if (!r.succeeded) throw new StorageError('KeyExists', `key exists: ${k.toString()}`, key);
    return { ...obj, metadata: { ...obj.metadata, resourceVersion: r.header.revision } };
  }

  async update(key: ObjectKey, tryUpdate: UpdateFn): Promise<KubeObject> {
    const k = this.#key(key);
    let kv = (await this.#client.kv.range({ key: k })).kvs[0] as KV | undefined;
    for (;;) {
      if (!kv) throw new StorageError('KeyNotFound', `key not found: ${k.toString()}`, key);
      const cur = this.#decode(kv);
      const next = tryUpdate(cur);
      if (next === null) return cur;
      const r = await this.#client.kv.txn({
        compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: kv.mod_revision }],
        success: [{ request_put: { key: k, value: this.#value(next) } }],
        // Lost the race: read back the state that won, and try again on it.
        failure: [{ request_range: { key: k } }],
      });
      this.#seen(Number(r.header.revision));
      if (r.succeeded) return { ...next, metadata: { ...next.metadata, resourceVersion: r.header.revision } };
      kv = r.responses[0]?.response_range?.kvs[0] as KV | undefined;
    }
  }

  async delete(key: ObjectKey, check?: DeleteCheck): Promise<KubeObject> {
    const k = this.#key(key);
    let kv = (await this.#client.kv.range({ key: k })).kvs[0] as KV | undefined;
    for (;;) {
      if (!kv) throw new StorageError('KeyNotFound', `key not found: ${k.toString()}`, key);
      check?.(this.#decode(kv));
      const r = await this.#client.kv.txn({
        compare: [{ key: k, target: 'Mod', result: 'Equal', mod_revision: kv.mod_revision }],
        success: [{ request_delete_range: { key: k } }],
        failure: [{ request_range: { key: k } }],
      });
      this.#seen(Number(r.header.revision));
      // The last state, at the deletion's revision (what the DELETED event carries).
      if (r.succeeded) return this.#decode(kv, r.header.revision);
      kv = r.responses[0]?.response_range?.kvs[0] as KV | undefined;
    }
  }

  watch(prefix: KeyPrefix, fromRevision: number, sink: WatchSink): WatchHandle {
    if (fromRevision < this.#compacted) throw new StorageError('Expired', `too old resource version: ${fromRevision} (${this.#compacted + 1})`);
    // Within the changes held in memory: served from them, no etcd watch of its own (kube-apiserver's watch cache).
    if (fromRevision >= this.#history.compacted()) return this.#feed.subscribe(prefix, fromRevision, sink);
    return this.#etcdWatch(prefix, fromRevision, sink);
  }

  /**
   * #etcdWatch is a client watch from before this replica's memory: an etcd watch from that revision, on a client
   * (gRPC stream) of its own. etcd3 creates the watches of one client one at a time, each waiting for etcd's answer
   * to the one before; a create etcd answers with "created" and "canceled" at once (a compacted start) never
   * advances that queue, and every later create on the client would wait forever: a client watch that never gets an
   * event. These watches are few (clients moving to a replica that just started, or resuming from long ago), so each
   * gets its own client and nothing it does can stall another; the replica's own watch keeps the shared one.
   */
  #etcdWatch(prefix: KeyPrefix, fromRevision: number, sink: WatchSink): WatchHandle {
    let position = fromRevision;
    let stopped = false;
    const client = new Etcd3(this.#options);
    this.#directClients.add(client);
    let watcher: Watcher | undefined;
    let creating = true;
    // Stopping: the watch is cancelled first (a client closed with a watch attached keeps trying to reconnect it),
    // unless etcd has ended it already (cancelling that again makes etcd3 throw inside its stream handler). While
    // the create is under way, the close waits for its answer.
    const end = (cancel: boolean) => {
      stopped = true;
      if (creating) return;
      const w = watcher;
      watcher = undefined;
      void (cancel && w ? w.cancel() : Promise.resolve())
        .catch(() => undefined)
        .finally(() => {
          this.#directClients.delete(client);
          client.close();
        });
    };
    const fail = (err: Error, cancel: boolean) => {
      if (stopped) return;
      end(cancel);
      sink.onError(err);
    };
    client
      .watch()
      .prefix(this.#collection(prefix))
      .startRevision(String(fromRevision + 1))
      .withPreviousKV()
      .create()
      .then(
        (w) => {
          creating = false;
          watcher = w;
          if (stopped) {
            end(true);
            return;
          }
          w.on('data', (res) => {
            if (stopped) return;
            for (const ev of res.events) {
              if (Number(ev.kv.mod_revision) <= position) continue;
              const key = this.#keyOf(ev.kv.key);
              const change = key && this.#change(ev as WatchEvent, key);
              if (!change) continue;
              const revision = change.revision;
              position = revision;
              sink.onEvent(change);
            }
            // A progress notification (no events) moves the position a BOOKMARK may carry.
            const head = Number(res.header.revision);
            this.#seen(head);
            if (res.events.length === 0 && head > position) position = head;
          });
          resumeFrom(w, () => position);
          w.on('error', (err: Error) => {
            // etcd has ended this watch. etcd cancels a watch from a compacted revision with compact_revision set and no
            // reason (etcd3 words it "Watcher canceled: "); any other reason is named.
            watcher = undefined;
            if (/compacted|^Watcher canceled: ?$/.test(err.message)) {
              this.#compacted = Math.max(this.#compacted, fromRevision + 1);
              fail(new StorageError('Expired', `too old resource version: ${fromRevision}`), false);
            } else fail(err, false);
          });
        },
        (err: unknown) => {
          creating = false;
          if (stopped) end(false);
          else fail(asStorageError(err, fromRevision) as Error, false);
        },
      );
    return {
      position: () => position,
      stop: () => {
        if (!stopped) end(true);
      },
    };
  }

  /**
   * compact discards etcd's history before `revision` (etcd keeps that revision itself): lists and watches from
   * older revisions are Expired from then on. Several replicas may compact; etcd ignores an older target.
   */
  async compact(revision: number): Promise<void> {
    try {
      await this.#client.kv.compact({ revision, physical: true });
    } catch (e) {
      // Another replica compacted further already: that is what we wanted.
      if (!/compacted/.test(e instanceof Error ? e.message : String(e))) throw e;
    }
    this.#compacted = Math.max(this.#compacted, revision);
  }

  writable(): boolean {
    return !this.#closed && this.#healthy;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#feed.closeAll();
    clearInterval(this.#probe);
    clearInterval(this.#compactor);
    this.#waiting.closeAll();
    await this.#revisionWatch?.cancel().catch(() => undefined);
    for (const c of this.#directClients) c.close();
    this.#directClients.clear();
    this.#client.close();
  }
}
