/**
 * @module storage/lmdb-integrity
 * The checks a store passes before it is served, backed up or replaced. lmdb maps data.mdb and trusts it: a page
 * past the end of a truncated file is SIGBUS on first touch, a meta page naming garbage roots SIGSEGV or SIGABRT,
 * and an empty file is silently initialized as a new store (resourceVersions restart at 1). So the file is read
 * here first, with plain reads, as lmdb's mdb_env_read_header does (mdb.c in lmdb-js's liblmdb: MDB_meta after a
 * page header, MDB_MAGIC, MDB_DATA_VERSION, the newest valid meta by txnid), and refused with StoreDamaged, whose
 * message is one line naming the file and the remedy.
 *
 * What is checked, and why it is enough to open without crashing:
 * - the file is not empty and holds both meta pages; each meta page is a P_META page with lmdb's magic and data
 *   version, one page size, and roots within its last page;
 * - the file is whole pages and reaches every root page of the newest meta (the free-page tree, the main tree and,
 *   from the main tree's leaf, each named database): a copy cut short loses the pages written last, among them the
 *   roots every commit rewrites. It may end a little before the meta's last page (pages a commit took at the end
 *   and freed again are never written, mdb.c mdb_page_flush), but not by more than TRAILING_SLACK pages;
 * - after opening (checkHistory): the revision counter is not behind the newest event of the history or the
 *   compacted revision (it would hand out resourceVersions again).
 * A damaged page deep inside a tree is not looked for: that would read every page (minutes for a million objects).
 * lmdb reports most such pages as MDB_CORRUPTED or MDB_PAGE_NOTFOUND when a read meets them; the store turns those
 * into StorageError('Damaged') (a 500 naming the file, and a log line) instead of a crash.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';

/** The lmdb data file in a data dir. */
export const DATA_FILE = 'data.mdb';

/** StoreDamaged refuses a store that cannot be opened safely; its message is one line for an operator. */
export class StoreDamaged extends Error {
  constructor(
    readonly dataFile: string,
    readonly problem: string,
    dataDir: string,
  ) {
    super(`${dataFile} is damaged: ${problem}: restore it from a backup (website-apiserver restore --from FILE --data-dir ${dataDir} --replace)`);
    this.name = 'StoreDamaged';
  }
}

// mdb.c, 64-bit (pgno_t and txnid_t are 8 bytes): the page header is mh_p (8), mh_txnid (8), mh_pad (2),
// mh_flags (2), mh_pb (4); MDB_meta follows it.
const PAGE_HEADER = 24;
const PAGE_FLAGS = 18;
const PAGE_LOWER = 20;
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_META = 0x08;
const MDB_MAGIC = 0xbeefc0de;
const MDB_DATA_VERSION = 2;
/** MDB_meta: magic u32, version u32, address 8, mapsize 8, two MDB_db of 48 bytes, last_pg 8, txnid 8. */
const META = { magic: 0, version: 4, dbs: 24, lastPage: 120, txnid: 128, size: 144 } as const;
/** MDB_db: pad (the page size, in the free db's) u32, flags u16, depth u16, three page counts, entries, root. */
const DB = { pad: 0, root: 40, size: 48 } as const;
const P_INVALID = 0xffffffffffffffffn;
const F_SUBDATA = 0x02;
/** How many pages a healthy file may end before the newest meta's last page (unwritten pages freed at the end). */
export const TRAILING_SLACK = 64;

interface Meta {
  page: number;
  pageSize: number;
  lastPage: bigint;
  txnid: bigint;
  freeRoot: bigint;
  mainRoot: bigint;
}

/**
 * checkDataFile checks `dataDir`'s data.mdb before lmdb opens it, and throws StoreDamaged when it is damaged. A
 * missing file passes (a new store).
 */
export function checkDataFile(dataDir: string): void {
  const file = join(dataDir, DATA_FILE);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    checkOpenFile(fd, file, dataDir);
  } finally {
    closeSync(fd);
  }
}

function checkOpenFile(fd: number, file: string, dataDir: string): void {
  const damaged = (problem: string) => new StoreDamaged(file, problem, dataDir);
  const size = fstatSync(fd).size;
  if (size === 0) throw damaged('it is empty (0 bytes), not an lmdb store (an empty store would start again at resourceVersion 1)');
  const read = (offset: number, length: number): Buffer => {
    const b = Buffer.alloc(length);
    const n = length > 0 && offset < size ? readSync(fd, b, 0, length, offset) : 0;
    return n === length ? b : b.subarray(0, n);
  };
  const first = read(0, PAGE_HEADER + META.size);
  if (first.length < PAGE_HEADER + META.size) throw damaged(`it is ${size} bytes, too short for lmdb's first meta page (truncated)`);
  const meta0 = parseMeta(first, 0);
  if (typeof meta0 === 'string') throw damaged(`meta page 0 is not valid (${meta0})`);
  const pageSize = meta0.pageSize;
  if (size < 2 * pageSize) throw damaged(`it is ${size} bytes, shorter than its two meta pages of ${pageSize} bytes (truncated)`);
  const meta1 = parseMeta(read(pageSize, PAGE_HEADER + META.size), 1);
  if (typeof meta1 === 'string') throw damaged(`meta page 1 is not valid (${meta1})`);
  if (meta1.pageSize !== pageSize) throw damaged(`its meta pages disagree on the page size (${pageSize} and ${meta1.pageSize} bytes)`);
  // lmdb uses the meta with the highest txnid (mdb_pick_meta).
  const newest = meta1.txnid > meta0.txnid ? meta1 : meta0;
  const end = (newest.lastPage + 1n) * BigInt(pageSize);
  const truncated = () => damaged(`it is ${bytes(size)} but its last page ends at ${bytes(Number(end))} (truncated)`);
  if (size % pageSize !== 0) throw truncated();
  const pages = BigInt(size / pageSize);
  if (newest.lastPage + 1n - pages > BigInt(TRAILING_SLACK)) throw truncated();
  const roots = [newest.freeRoot, newest.mainRoot, ...namedRoots(newest.mainRoot, pageSize, pages, read)];
  if (roots.some((r) => r !== P_INVALID && r >= pages)) throw truncated();
}

// parseMeta reads a meta page's header and MDB_meta, or says what is wrong with it.
function parseMeta(b: Buffer, page: number): Meta | string {
  if (b.length < PAGE_HEADER + META.size) return 'the file ends inside it';
  if ((b.readUInt16LE(PAGE_FLAGS) & P_META) === 0) return 'not a meta page';
  const m = PAGE_HEADER;
  if (b.readUInt32LE(m + META.magic) !== MDB_MAGIC) return 'wrong magic number';
  const version = b.readUInt32LE(m + META.version) & 0xffff;
  if (version !== MDB_DATA_VERSION) return `data version ${version}, lmdb reads ${MDB_DATA_VERSION}`;
  const pageSize = b.readUInt32LE(m + META.dbs + DB.pad);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return `page size ${pageSize}`;
  const lastPage = b.readBigUInt64LE(m + META.lastPage);
  const freeRoot = b.readBigUInt64LE(m + META.dbs + DB.root);
  const mainRoot = b.readBigUInt64LE(m + META.dbs + DB.size + DB.root);
  if (lastPage < 1n || lastPage > 1n << 48n) return `last page ${lastPage}`;
  for (const [name, root] of [
    ['free-page tree', freeRoot],
    ['main tree', mainRoot],
  ] as const) {
    if (root !== P_INVALID && (root < 2n || root > lastPage)) return `its ${name} root is page ${root}, past its last page ${lastPage}`;
  }
  return { page, pageSize, lastPage, txnid: b.readBigUInt64LE(m + META.txnid), freeRoot, mainRoot };
}

// namedRoots reads the root pages of the named databases from the main tree's root, when it is a leaf (a few
// databases fit one page: this store has three). A branch root or a root past the file is left to the caller.
function namedRoots(mainRoot: bigint, pageSize: number, pages: bigint, read: (offset: number, length: number) => Buffer): bigint[] {
  if (mainRoot === P_INVALID || mainRoot >= pages) return [];
  const p = read(Number(mainRoot) * pageSize, pageSize);
  if (p.length < pageSize) return [];
  const flags = p.readUInt16LE(PAGE_FLAGS);
  if ((flags & P_BRANCH) !== 0 || (flags & P_LEAF) === 0) return [];
  const count = p.readUInt16LE(PAGE_LOWER) >> 1;
  const roots: bigint[] = [];
  for (let i = 0; i < count; i++) {
    const ptr = PAGE_HEADER + 2 * i;
    if (ptr + 2 > pageSize) break;
    // MDB_node: mn_lo, mn_hi, mn_flags, mn_ksize (u16 each), then the key and the data (PAGEBASE is the header).
    const node = p.readUInt16LE(ptr) + PAGE_HEADER;
    if (node + 8 > pageSize) continue;
    const nodeFlags = p.readUInt16LE(node + 4);
    const data = node + 8 + p.readUInt16LE(node + 6);
    if ((nodeFlags & F_SUBDATA) === 0 || data + DB.size > pageSize) continue;
    roots.push(p.readBigUInt64LE(data + DB.root));
  }
  return roots;
}

/** bytes writes a size the way an operator reads it. */
function bytes(n: number): string {
  if (n >= 2 ** 30 && n % 2 ** 30 === 0) return `${n / 2 ** 30} GiB`;
  if (n >= 2 ** 20 && n % 2 ** 20 === 0) return `${n / 2 ** 20} MiB`;
  if (n >= 2 ** 10 && n % 2 ** 10 === 0) return `${n / 2 ** 10} KiB`;
  return `${n} bytes`;
}

/** HistoryState is what checkHistory compares: the counters of `meta` and the newest event's revision. */
export interface HistoryState {
  revision: number;
  compacted: number;
  newestEvent: number | undefined;
}

/**
 * checkHistory throws StoreDamaged when the revision counter is behind what the store has already handed out: the
 * newest event of the history, or the compacted revision (a counter written back, or a meta record lost).
 */
export function checkHistory(dataDir: string, s: HistoryState): void {
  const file = join(dataDir, DATA_FILE);
  if (s.newestEvent !== undefined && s.newestEvent > s.revision) {
    throw new StoreDamaged(
      file,
      `its revision counter (${s.revision}) is behind the newest event of its history (${s.newestEvent}), so resourceVersions would be handed out again`,
      dataDir,
    );
  }
  if (s.compacted > s.revision) {
    throw new StoreDamaged(
      file,
      `its revision counter (${s.revision}) is behind its compacted revision (${s.compacted}), so resourceVersions would be handed out again`,
      dataDir,
    );
  }
}
