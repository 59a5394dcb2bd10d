/**
 * @module storage/data-dir-lock
 * An exclusive lock on a data directory for the process that serves (or restores) it: lmdb lets several processes
 * open one store, but once a second server writes to it the first one's watches go silent (for its own later
 * writes too) while /readyz still says ok. Node has no flock, so the lock is a file in the directory,
 * `website-apiserver.lock`, holding JSON {pid, hostname, startedAt, bootId?, procStart?} of its holder.
 *
 * Taking it: the holder's JSON is written to a temporary file, synced, and hard-linked to the lock's name (link
 * fails with EEXIST when the name exists, atomically, and the lock never appears half-written; a file system
 * without hard links gets it created exclusively, then written). If it exists,
 * its holder is alive unless:
 * - it names this host, and its pid is our own (a container restarted as PID 1 finds the pid it had before; a
 *   lock this process holds itself is known in memory and refused as in use), or no process has that pid
 *   (`kill(pid, 0)` fails with ESRCH), or the pid now belongs to another process (Linux: /proc's boot id and the
 *   process's start time differ from those the lock recorded, after a reboot or pid reuse);
 * - it names another host (the directory is shared, or the hostname changed): its pid cannot be checked here, so
 *   it is stale only once its holder stopped refreshing its mtime (every LOCK_REFRESH_MS) for LOCK_STALE_MS. The
 *   same holds for a lock file that is not JSON.
 * A stale lock is taken over: renamed away to a unique name, and removed if it is still the very file judged stale
 * (same inode and content); otherwise another starter took it over meanwhile, and it is put back. Two starters
 * racing on a stale lock thus end with one holder, the other refused. (Only a third starter linking its own lock
 * in the instant a second has renamed a live one away could leave two holders; it needs three starters at once.)
 *
 * Released by `release()` (after the store is closed) and, synchronously, when the process exits; `kill -9` leaves
 * the file behind, stale by its pid. Processes with the same hostname are assumed to share a pid namespace.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  futimesSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

/** LOCK_FILE is the lock's name inside the data directory. */
export const LOCK_FILE = 'website-apiserver.lock';
/** How often a holder refreshes its lock's mtime, and how old a lock from another host must be to count as stale. */
export const LOCK_REFRESH_MS = 10_000;
export const LOCK_STALE_MS = 60_000;
/** How many rounds one take tries before it gives up (each round means another starter moved in or out). */
const MAX_ROUNDS = 10;

/** LockHolder is the content of a lock file: who holds it. */
export interface LockHolder {
  pid: number;
  hostname: string;
  /** When the holder took the lock (RFC 3339). */
  startedAt: string;
  /** Linux: the kernel's boot id when the lock was taken. */
  bootId?: string;
  /** Linux: the holder's start time (clock ticks since boot, /proc/PID/stat field 22). */
  procStart?: string;
}

/** DataDirInUse refuses a data directory whose lock another live holder has; its message is one line for an operator. */
export class DataDirInUse extends Error {
  constructor(
    readonly dataDir: string,
    /** Undefined when the lock file is not one of ours (not JSON). */
    readonly holder: LockHolder | undefined,
    readonly lockFile: string,
  ) {
    const remote = holder !== undefined && holder.hostname !== hostname();
    const who = holder ? `process ${holder.pid} on host ${holder.hostname} (started ${holder.startedAt})` : `an unreadable lock file ${lockFile}`;
    const wait =
      holder === undefined || remote ? ` (a lock from another host, or unreadable, is taken over once not refreshed for ${LOCK_STALE_MS / 1000} s)` : '';
    super(`data directory ${dataDir} is in use by ${who}: stop it first, or use another --data-dir${wait}`);
    this.name = 'DataDirInUse';
  }
}

/** DataDirLock is a lock held by this process. */
export interface DataDirLock {
  /** The lock file's path (in the data directory, symlinks resolved). */
  readonly path: string;
  readonly holder: LockHolder;
  /** release removes the lock file if it is still ours; idempotent. */
  release(): void;
}

// The locks this process holds, by lock file path: taking one of them again is refused (the pid check cannot tell).
const held = new Map<string, DataDirLock>();

/** LockOptions observe a take. */
export interface LockOptions {
  /** Called before a stale lock is taken over, with its holder (undefined when the file was not JSON). */
  onStale?: (stale: LockHolder | undefined) => void;
}

/**
 * lockDataDir takes the exclusive lock on `dataDir` (created if missing) or throws DataDirInUse naming its holder.
 * Everything is synchronous: it runs once, before the store is opened.
 */
export function lockDataDir(dataDir: string, opts: LockOptions = {}): DataDirLock {
  mkdirSync(dataDir, { recursive: true });
  const shown = resolve(dataDir);
  const path = join(realpathSync(dataDir), LOCK_FILE);
  const mine = held.get(path);
  if (mine) throw new DataDirInUse(shown, mine.holder, path);

  const holder = self();
  const text = `${JSON.stringify(holder)}\n`;
  const tmp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  let fd = openSync(tmp, 'wx', 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
    for (let round = 1; ; round++) {
      if (round > MAX_ROUNDS) throw new Error(`cannot take ${path}: other processes keep taking and releasing it`);
      const claimed = claim(tmp, fd, path, text);
      if (claimed !== undefined) {
        if (claimed !== fd) closeSync(fd);
        fd = claimed;
        break;
      }
      const found = inspect(path);
      if (!found) continue; // released meanwhile: link again
      if (isLive(path, found)) throw new DataDirInUse(shown, found.holder, path);
      opts.onStale?.(found.holder);
      removeIfUnchanged(path, found);
    }
  } catch (e) {
    closeSync(fd);
    throw e;
  } finally {
    rmSync(tmp, { force: true });
  }

  // The open descriptor names our lock's inode: refreshed through it, and compared before removing the name.
  const refresh = setInterval(() => {
    const now = new Date();
    try {
      futimesSync(fd, now, now);
    } catch {
      // The file system went away or read-only: the pid check still stands for this host.
    }
  }, LOCK_REFRESH_MS);
  refresh.unref();
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearInterval(refresh);
    process.off('exit', release);
    held.delete(path);
    try {
      const ours = fstatSync(fd);
      const now = statSync(path);
      if (now.ino === ours.ino && now.dev === ours.dev) rmSync(path);
    } catch {
      // Already gone.
    }
    closeSync(fd);
  };
  process.on('exit', release);
  const lock: DataDirLock = { path, holder, release };
  held.set(path, lock);
  return lock;
}

// Where link(2) is not supported: the lock file is created exclusively and then written.
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

// claim puts our lock under its name and returns the descriptor of its file, or undefined if a lock is there.
// Linking the written temporary file makes it appear complete; where the file system has no hard links, a lock
// created and then written may be read empty for an instant (unreadable: held, see isLive).
function claim(tmp: string, tmpFd: number, path: string, text: string): number | undefined {
  try {
    linkSync(tmp, path);
    return tmpFd;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST') return undefined;
    if (!NO_HARD_LINKS.has(code)) throw e;
  }
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw e;
  }
  writeSync(fd, text);
  fsyncSync(fd);
  return fd;
}

interface Found {
  ino: number;
  dev: number;
  mtimeMs: number;
  text: string;
  holder: LockHolder | undefined;
}

// inspect reads the lock file at `path`; undefined if there is none.
function inspect(path: string): Found | undefined {
  try {
    const st = statSync(path);
    const text = readFileSync(path, 'utf8');
    return { ino: st.ino, dev: st.dev, mtimeMs: st.mtimeMs, text, holder: parseHolder(text) };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const v = JSON.parse(text) as Partial<LockHolder> | null;
    if (!v || !Number.isSafeInteger(v.pid) || (v.pid as number) <= 0 || typeof v.hostname !== 'string' || typeof v.startedAt !== 'string') return undefined;
    return v as LockHolder;
  } catch {
    return undefined;
  }
}

function isLive(path: string, found: Found): boolean {
  if (held.has(path)) return true;
  const h = found.holder;
  if (!h || h.hostname !== hostname()) return Date.now() - found.mtimeMs < LOCK_STALE_MS;
  if (h.bootId && bootId() && h.bootId !== bootId()) return false;
  if (h.pid === process.pid) return false;
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    // EPERM: a process of another user has that pid, alive.
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const start = procStart(h.pid);
  return !(h.procStart && start && h.procStart !== start);
}

// removeIfUnchanged removes the lock file judged stale, unless another starter replaced it since (then it stays).
function removeIfUnchanged(path: string, stale: Found): void {
  const aside = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.stale`;
  try {
    renameSync(path, aside);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  try {
    const st = statSync(aside);
    const same = st.ino === stale.ino && st.dev === stale.dev && readFileSync(aside, 'utf8') === stale.text;
    if (!same) {
      // Another starter's fresh lock: put it back under the name (its holder compares inodes, unchanged by this).
      try {
        linkSync(aside, path);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code ?? '';
        if (NO_HARD_LINKS.has(code)) renameSync(aside, path);
        else if (code !== 'EEXIST') throw e;
      }
    }
  } finally {
    rmSync(aside, { force: true });
  }
}

function self(): LockHolder {
  const boot = bootId();
  const start = procStart(process.pid);
  return {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date().toISOString(),
    ...(boot ? { bootId: boot } : {}),
    ...(start ? { procStart: start } : {}),
  };
}

let bootIdCache: string | null | undefined;
function bootId(): string | undefined {
  if (bootIdCache === undefined) bootIdCache = readOr('/proc/sys/kernel/random/boot_id')?.trim() || null;
  return bootIdCache ?? undefined;
}

// procStart is field 22 of /proc/PID/stat, counted after the command name (which may hold spaces and parentheses).
function procStart(pid: number): string | undefined {
  const stat = readOr(`/proc/${pid}/stat`);
  if (!stat) return undefined;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function readOr(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
