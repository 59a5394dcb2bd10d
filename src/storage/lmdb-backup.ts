/**
 * @module storage/lmdb-backup
 * Backup and restore of an lmdb store (`website-apiserver backup|restore`, src/cmd/backup.ts).
 *
 * A backup is taken from another process while the server runs, like `etcdctl snapshot save`: lmdb supports
 * readers in several processes on one host (the lock file's reader table and robust mutexes), so the command opens
 * the same environment read-only and copies the objects and the revision counter inside ONE read transaction. The
 * server is never stopped or slowed beyond sharing the disk; lmdb's MVCC lets its writers go on meanwhile. The one
 * cost: while the transaction is open (longer with a slow sink, such as a pipe), lmdb cannot reuse the pages the
 * server frees, so the file may grow by about what the server writes during the backup.
 *
 * The file is NDJSON: a header line `{"kind":"WebsiteApiserverBackup","version":1,"revision":S,...}`, one line per
 * object `{"key":[resource,namespace,name],"object":{...}}` (the stored JSON text as it is), and a trailer
 * `{"sha256":"..."}` over every byte before it (etcd's snapshot also ends with a sha256 of its content). The change
 * history is not copied: a restore discards it anyway (below).
 *
 * ## Guarantees
 * - Consistent: the objects are exactly the store at revision S (every object has resourceVersion ≤ S and every
 *   object that existed at S is there, in its version at S).
 * - A restore writes into a data dir without a store (or, with `replace`, one whose server is stopped) and makes the
 *   database appear there only once complete and verified (count and checksum), by renaming it into place; a
 *   failed restore leaves nothing behind, and a replaced store is kept under another name.
 * - resourceVersions stay monotonic across a restore, as `etcdutl snapshot restore --bump-revision N
 *   --mark-compacted` does it (etcd-io/etcd etcdutl/snapshot/v3_snapshot.go modifyLatestRevision, etcd#16028): the
 *   revision counter is raised to S + bump, past anything the backed-up server could have handed out since the
 *   backup (and past the replaced store's own revision, known exactly), and everything up to it is marked
 *   compacted. A client holding a resourceVersion from before the
 *   restore (older than the snapshot, or from the discarded future after it) gets 410 Expired for a watch or an
 *   exact list from it and re-lists, instead of silently missing or mixing history; a new list answers S + bump,
 *   and new writes get resourceVersions above it.
 */
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { KubeObject } from '../apis/meta/types.js';
import { META_KEYS, openLayout, type LmdbLayout } from './lmdb-storage.js';
import { asyncReadScope, drain } from './lmdb-read.js';
import { corruptReason, isDamage } from './corrupt-object.js';
import { checkDataFile, checkHistory, DATA_FILE, StoreDamaged } from './lmdb-integrity.js';

/** BACKUP_KIND and BACKUP_VERSION identify the file format in its header line. */
export const BACKUP_KIND = 'WebsiteApiserverBackup';
export const BACKUP_VERSION = 1;

/**
 * DEFAULT_BUMP_REVISION is how far a restore moves the revision counter past the snapshot's. etcd leaves the
 * amount to the operator; a billion is what is commonly passed for Kubernetes (over 11 days of 1000 writes per
 * second after the backup) and costs nothing: revisions stay far below 2^53.
 */
export const DEFAULT_BUMP_REVISION = 1_000_000_000;

/** Lines are written in chunks of about this size. */
const CHUNK_BYTES = 1 << 20;
/** Objects written per awaited batch during a restore. */
const RESTORE_BATCH = 1000;

/** BackupHeader is the first line of a backup. */
export interface BackupHeader {
  kind: typeof BACKUP_KIND;
  version: typeof BACKUP_VERSION;
  /** The revision of the snapshot: the store's last committed revision when it was read. */
  revision: number;
  /** How many object lines follow. */
  objects: number;
  /** When the snapshot was read (RFC 3339). */
  created: string;
}

/** BackupSink receives the file's bytes in order; a returned promise is awaited (backpressure). */
export interface BackupSink {
  write(chunk: Buffer): void | Promise<void>;
}

/** BackupError is a failure to report to the operator as it is (no stack). */
export class BackupError extends Error {}

/** BackupSummary describes a written backup. */
export interface BackupSummary {
  revision: number;
  objects: number;
  bytes: number;
  sha256: string;
}

/** RestoreSummary describes a restored data dir. */
export interface RestoreSummary {
  /** The snapshot's revision. */
  backupRevision: number;
  objects: number;
  /** The restored store's revision counter and compacted revision: S + bump, or past the replaced store's. */
  revision: number;
  /** The name the replaced database was kept under, in the data dir. */
  replaced?: string;
  /** Why the replaced database could not be read (it was damaged): its own revision did not count. */
  replacedDamaged?: string;
}

/** hasDatabase tells whether a data dir holds an lmdb store. */
export const hasDatabase = (dataDir: string): boolean => existsSync(join(dataDir, DATA_FILE));

/** writeBackup reads the store in `dataDir` (served or not) in one read transaction and writes it to the sink. */
export async function writeBackup(dataDir: string, sink: BackupSink): Promise<BackupSummary> {
  // Opening a missing environment would create an empty one and back that up.
  if (!hasDatabase(dataDir)) throw new BackupError(`no database in ${dataDir} (${DATA_FILE} is missing)`);
  // A damaged file is refused before lmdb maps it (storage/lmdb-integrity): StoreDamaged, one line.
  checkDataFile(dataDir);
  // Opening also clears reader slots of processes that died (lmdb-js calls mdb_reader_check), such as a backup
  // killed midway, whose slot would otherwise keep the server from reusing pages.
  const layout = openLayout(dataDir, true);
  try {
    // One snapshot for the whole copy (it pins the pages freed meanwhile until the backup ends: the price of a
    // consistent copy); the scope closes the cursor however the copy ends.
    return await asyncReadScope(layout.root, async ({ txn, range }) => {
      const revision = layout.meta.get(META_KEYS.revision, { transaction: txn }) ?? 0;
      const newestEvent = drain(layout.events.getKeys({ reverse: true, limit: 1, transaction: txn }))[0];
      checkHistory(dataDir, { revision, compacted: layout.meta.get(META_KEYS.compacted, { transaction: txn }) ?? 0, newestEvent });
      const count = layout.objectsText.getKeysCount({ transaction: txn });
      const header: BackupHeader = { kind: BACKUP_KIND, version: BACKUP_VERSION, revision, objects: count, created: new Date().toISOString() };
      const out = new ChunkWriter(sink);
      await out.push(Buffer.from(`${JSON.stringify(header)}\n`));
      let n = 0;
      // Every object is decoded and checked as restore will check it: a stored value that does not decode (or is
      // not an object of this snapshot) fails the backup, naming each such object, rather than write a file that
      // restore refuses.
      const unreadable: string[] = [];
      for (const { key, value } of range(layout.objectsText, {})) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'));
          checkObjectLine({ key, object: parsed }, '', revision);
        } catch (e) {
          unreadable.push(`${key.join('/')} (${e instanceof BackupError ? e.message : corruptReason(e)})`);
          continue;
        }
        if (unreadable.length) continue;
        // The stored text is JSON.stringify's (no raw newline); re-encode anything else rather than break a line.
        const text = value.includes(0x0a) ? Buffer.from(JSON.stringify(parsed)) : value;
        await out.push(Buffer.concat([Buffer.from(`{"key":${JSON.stringify(key)},"object":`), text, Buffer.from('}\n')]));
        n++;
      }
      if (unreadable.length) {
        throw new BackupError(
          `${dataDir} holds ${unreadable.length} object${unreadable.length === 1 ? '' : 's'} that cannot be read, nothing was written: ` +
            `${unreadable.slice(0, 20).join('; ')}${unreadable.length > 20 ? `; and ${unreadable.length - 20} more` : ''}. ` +
            'Delete each with DELETE ...?ignoreStoreReadErrorWithClusterBreakingPotential=true (docs/operations.md, Damaged store), then back up again',
        );
      }
      if (n !== count) throw new Error(`read ${n} objects in a snapshot that counts ${count}`);
      const sha256 = out.digest();
      await out.push(Buffer.from(`${JSON.stringify({ sha256 })}\n`), false);
      await out.flush();
      return { revision, objects: n, bytes: out.bytes, sha256 };
    });
  } catch (e) {
    // lmdb met a damaged page (MDB_CORRUPTED, MDB_PAGE_NOTFOUND): the operator's error, in one line.
    if (isDamage(e)) throw new BackupError(`${join(dataDir, DATA_FILE)} is damaged (${(e as Error).message}): restore it from an earlier backup`);
    throw e;
  } finally {
    await layout.root.close();
  }
}

// ChunkWriter batches lines into chunks for the sink and hashes what it is told to.
class ChunkWriter {
  readonly #sink: BackupSink;
  readonly #hash = createHash('sha256');
  #parts: Buffer[] = [];
  #size = 0;
  bytes = 0;

  constructor(sink: BackupSink) {
    this.#sink = sink;
  }

  async push(b: Buffer, hashed = true): Promise<void> {
    if (hashed) this.#hash.update(b);
    this.#parts.push(b);
    this.#size += b.length;
    this.bytes += b.length;
    if (this.#size >= CHUNK_BYTES) await this.flush();
  }

  digest(): string {
    return this.#hash.digest('hex');
  }

  async flush(): Promise<void> {
    if (!this.#size) return;
    const chunk = Buffer.concat(this.#parts, this.#size);
    this.#parts = [];
    this.#size = 0;
    await this.#sink.write(chunk);
  }
}

/** RestoreOptions tune a restore. */
export interface RestoreOptions {
  /** How far past the snapshot's revision the counter continues (default DEFAULT_BUMP_REVISION). */
  bumpRevision?: number;
  /**
   * Replace the database `dataDir` holds (its server must be stopped). The old file stays next to it as
   * `data.mdb.replaced-<time>`, and the counter also continues past the old store's own revision.
   */
  replace?: boolean;
}

/**
 * restoreBackup reads a backup and creates the store in `dataDir`, which must not hold one unless `replace`. The
 * database is built in a temporary directory inside `dataDir` and renamed into place once verified.
 */
export async function restoreBackup(input: Readable, dataDir: string, opts: RestoreOptions = {}): Promise<RestoreSummary> {
  const bump = opts.bumpRevision ?? DEFAULT_BUMP_REVISION;
  if (!Number.isSafeInteger(bump) || bump < 1) throw new BackupError(`the revision bump must be a positive integer, got ${bump}`);
  let floor = 0;
  let replaced: string | undefined;
  let replacedDamaged: string | undefined;
  if (hasDatabase(dataDir)) {
    if (!opts.replace) {
      throw new BackupError(`${dataDir} already holds a database (${DATA_FILE}); restore into an empty directory, or stop its server and pass --replace`);
    }
    // The highest revision the old store handed out is known exactly: continue past it whatever the bump. A damaged
    // store (the reason to restore, often) cannot be read: the bump alone keeps resourceVersions ahead then.
    try {
      floor = (await replaceableRevision(dataDir)) + 1;
    } catch (e) {
      if (!(e instanceof StoreDamaged)) throw e;
      replacedDamaged = e.problem;
    }
    replaced = `${DATA_FILE}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  }
  // The first directory created, if any: removed again when the restore fails.
  const created = mkdirSync(dataDir, { recursive: true });
  const work = mkdtempSync(join(dataDir, '.restore-'));
  let layout: LmdbLayout | undefined;
  let done = false;
  try {
    layout = openLayout(work);
    const summary = await load(input, layout, bump, floor);
    await layout.root.flushed;
    await layout.root.close();
    layout = undefined;
    const target = join(dataDir, DATA_FILE);
    if (replaced) {
      // Keep the old store under another name (a second link to it), then swap atomically: at every instant
      // data.mdb is the old store or the new one, never missing (a server started on an empty dir would begin
      // again at revision 0). Its lock file describes readers of the old one: lmdb rebuilds it on the next open.
      linkSync(target, join(dataDir, replaced));
      rmSync(join(dataDir, 'lock.mdb'), { force: true });
    }
    // The server opens data.mdb; it appears complete or not at all. Same file system: inside dataDir.
    renameSync(join(work, DATA_FILE), target);
    done = true;
    return { ...summary, ...(replaced ? { replaced } : {}), ...(replacedDamaged ? { replacedDamaged } : {}) };
  } finally {
    if (layout) await layout.root.close().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
    if (!done && created !== undefined) rmSync(created, { recursive: true, force: true });
  }
}

// replaceableRevision returns the revision of the store in dataDir after making sure no other process has it
// open: lmdb's reader table lists every live process that read from it (a server reads at start and keeps its
// slot; slots of dead processes are cleared when opening). Opened for writing, this process takes no reader slot
// of its own before the check, so a process with the same pid in another pid namespace (a pod) still counts.
async function replaceableRevision(dataDir: string): Promise<number> {
  checkDataFile(dataDir);
  const layout = openLayout(dataDir);
  try {
    const readers = layout.root
      .readerList()
      .split('\n')
      .map((l) => /^\s*(\d+)\s/.exec(l)?.[1])
      .filter((p) => p !== undefined);
    if (readers.length) {
      throw new BackupError(
        `the database in ${dataDir} is open in process ${[...new Set(readers)].join(', ')} (a running server?): stop it before replacing its store`,
      );
    }
    return layout.meta.get(META_KEYS.revision) ?? 0;
  } finally {
    await layout.root.close();
  }
}

// load reads the lines into the new store and writes the bumped revision once everything verified.
async function load(input: Readable, layout: LmdbLayout, bump: number, floor: number): Promise<RestoreSummary> {
  const hash = createHash('sha256');
  const seen = new Set<string>();
  let header: BackupHeader | undefined;
  let trailer: string | undefined;
  let pending: Promise<unknown>[] = [];
  let lineNo = 0;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    lineNo++;
    if (trailer !== undefined) {
      if (line.trim() === '') continue;
      throw new BackupError(`line ${lineNo}: data after the checksum line`);
    }
    const value = parseLine(line, lineNo);
    if (!header) {
      header = checkHeader(value);
      hash.update(`${line}\n`);
      continue;
    }
    if (isRecord(value) && typeof value['sha256'] === 'string' && !('key' in value)) {
      trailer = value['sha256'];
      continue;
    }
    hash.update(`${line}\n`);
    const { key, object } = checkObjectLine(value, `line ${lineNo}: `, header.revision);
    const id = JSON.stringify(key);
    if (seen.has(id)) throw new BackupError(`line ${lineNo}: object ${key.join('/')} appears twice`);
    seen.add(id);
    pending.push(layout.objects.put(key, object));
    if (pending.length >= RESTORE_BATCH) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  if (!header) throw new BackupError('the backup is empty');
  if (trailer === undefined) throw new BackupError('the backup is truncated: its checksum line is missing');
  const actual = hash.digest('hex');
  if (actual !== trailer) throw new BackupError(`checksum mismatch: the backup says sha256 ${trailer}, its content has ${actual}`);
  if (seen.size !== header.objects) throw new BackupError(`the backup holds ${seen.size} objects, its header says ${header.objects}`);
  const revision = Math.max(header.revision + bump, floor);
  if (!Number.isSafeInteger(revision)) throw new BackupError(`revision ${header.revision} + bump ${bump} is beyond 2^53`);
  await layout.root.transaction(() => {
    layout.meta.put(META_KEYS.revision, revision);
    layout.meta.put(META_KEYS.compacted, revision);
  });
  return { backupRevision: header.revision, objects: seen.size, revision };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseLine(line: string, lineNo: number): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new BackupError(`line ${lineNo}: not JSON (is this a website-apiserver backup?)`);
  }
}

function checkHeader(v: unknown): BackupHeader {
  if (!isRecord(v) || v['kind'] !== BACKUP_KIND) throw new BackupError(`not a website-apiserver backup (the first line has no "kind":"${BACKUP_KIND}")`);
  if (v['version'] !== BACKUP_VERSION)
    throw new BackupError(`backup format version ${JSON.stringify(v['version'])} is not supported (this build reads ${BACKUP_VERSION})`);
  const revision = v['revision'];
  const objects = v['objects'];
  if (!Number.isSafeInteger(revision) || (revision as number) < 0) throw new BackupError('the header has no valid revision');
  if (!Number.isSafeInteger(objects) || (objects as number) < 0) throw new BackupError('the header has no valid object count');
  return v as unknown as BackupHeader;
}

// checkObjectLine accepts only what the server stores: a [resource, namespace, name] key and an object whose
// resourceVersion is a revision of the snapshot (the consistency of the backup, checked again on the way in). `at`
// starts each message (`line N: ` in a restore, nothing in a backup).
function checkObjectLine(v: unknown, at: string, revision: number): { key: [string, string, string]; object: KubeObject } {
  if (!isRecord(v)) throw new BackupError(`${at}not an object line`);
  const key = v['key'];
  if (!Array.isArray(key) || key.length !== 3 || !key.every((p) => typeof p === 'string') || key[0] === '' || key[2] === '') {
    throw new BackupError(`${at}the key must be [resource, namespace, name]`);
  }
  const object = v['object'];
  if (!isRecord(object) || !isRecord(object['metadata'])) throw new BackupError(`${at}the object has no metadata`);
  const rvText = object['metadata']['resourceVersion'];
  const rv = typeof rvText === 'string' && /^[1-9]\d*$/.test(rvText) ? Number(rvText) : NaN;
  if (!(rv <= revision)) throw new BackupError(`${at}resourceVersion ${JSON.stringify(rvText)} is not a revision of a snapshot at ${revision}`);
  return { key: key as [string, string, string], object: object as unknown as KubeObject };
}
