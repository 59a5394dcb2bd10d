/**
 * @module cmd/backup
 * The `backup` and `restore` subcommands of website-apiserver (dispatched from main.ts):
 *
 *   website-apiserver backup --to FILE [--data-dir DIR]
 *   website-apiserver restore --from FILE --data-dir DIR [--bump-revision N] [--replace]
 *
 * `backup` reads the store directly, from this process, while the server keeps serving (storage/lmdb-backup): no
 * network, credentials or admin endpoint are involved, only access to the data dir, as `mdb_copy` or etcdutl
 * need. In a pod: `kubectl exec POD -- node dist/main.js backup --data-dir /data --to - > backup.ndjson`.
 * `restore` is offline: it creates the store in a data dir that holds none (or, with --replace, replaces the store
 * of a stopped server), for a server started afterwards.
 * It holds the data dir's lock (storage/data-dir-lock) meanwhile, as a server does: it is refused while a server
 * runs there, and no server starts there before it is done. `backup` takes no lock (lmdb has readers in several
 * processes).
 * `-` names stdout or stdin. A FILE is written under a temporary name, synced, then renamed, so it is complete or
 * absent.
 */
import { once } from 'node:events';
import { closeSync, createReadStream, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { BackupError, DEFAULT_BUMP_REVISION, restoreBackup, writeBackup, type BackupSink, type RestoreSummary } from '../storage/lmdb-backup.js';
import { DataDirInUse, lockDataDir } from '../storage/data-dir-lock.js';
import { StoreDamaged } from '../storage/lmdb-integrity.js';
import { envName } from './options.js';

/** DataCommand names the subcommands of this module. */
export type DataCommand = 'backup' | 'restore';
export const DATA_COMMANDS: readonly DataCommand[] = ['backup', 'restore'];

const BACKUP_USAGE = `Usage: website-apiserver backup --to FILE [--data-dir DIR]

Writes a consistent snapshot of the store to FILE while the server keeps running (one lmdb read transaction,
from this process; the server is not stopped). FILE "-" is stdout.

Flags:
  --to FILE        Where to write the backup (written as FILE.tmp-<pid>, then renamed). Required.
  --data-dir DIR   The server's data directory (default "./data"). Env: ${envName('data-dir')}.
  -h, --help       Print this help and exit.`;

const RESTORE_USAGE = `Usage: website-apiserver restore --from FILE --data-dir DIR [--bump-revision N] [--replace]

Creates the store in DIR from a backup, offline (start the server on DIR afterwards). DIR must not hold a
database unless --replace is given. The revision counter continues at the backup's revision + N, and all history up to there counts as
compacted, so clients holding an older resourceVersion get 410 Expired and re-list (etcdutl snapshot restore
--bump-revision N --mark-compacted). FILE "-" is stdin.

Flags:
  --from FILE          The backup to restore. Required.
  --data-dir DIR       The data directory to create the store in. Required (or ${envName('data-dir')}).
  --bump-revision N    How far past the backup's revision resourceVersions continue; more than the writes the
                       old server took after the backup (default ${DEFAULT_BUMP_REVISION}).
  --replace            Replace the database DIR holds (its server must be stopped; refused while a process has
                       it open). It is kept as DIR/data.mdb.replaced-<time>, and resourceVersions also continue
                       past its own revision.
  -h, --help           Print this help and exit.`;

/** runDataCommand runs `backup` or `restore` with the arguments after the subcommand; resolves with the exit code. */
export async function runDataCommand(command: DataCommand, argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const usage = command === 'backup' ? BACKUP_USAGE : RESTORE_USAGE;
  let values: Record<string, string | boolean | undefined>;
  try {
    const names = command === 'backup' ? ['to', 'data-dir'] : ['from', 'data-dir', 'bump-revision'];
    const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
    if (command === 'restore') options['replace'] = { type: 'boolean' };
    for (const name of names) options[name] = { type: 'string' };
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as typeof values;
  } catch (e) {
    return usageError(command, (e as Error).message, usage);
  }
  if (values['help']) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  const flagDir = typeof values['data-dir'] === 'string' ? values['data-dir'] : undefined;
  const dataDir = flagDir || env[envName('data-dir')] || (command === 'backup' ? './data' : '');
  try {
    if (command === 'backup') {
      const to = values['to'];
      if (typeof to !== 'string' || !to) return usageError(command, '--to is required', usage);
      return await backup(dataDir, to);
    }
    const from = values['from'];
    if (typeof from !== 'string' || !from) return usageError(command, '--from is required', usage);
    if (!dataDir) return usageError(command, '--data-dir is required', usage);
    const bumpText = typeof values['bump-revision'] === 'string' ? values['bump-revision'] : String(DEFAULT_BUMP_REVISION);
    if (!/^\d+$/.test(bumpText) || !Number.isSafeInteger(Number(bumpText)) || Number(bumpText) < 1) {
      return usageError(command, `--bump-revision: must be a positive integer, got "${bumpText}"`, usage);
    }
    return await restore(from, dataDir, Number(bumpText), values['replace'] === true);
  } catch (e) {
    const message = e instanceof BackupError || e instanceof DataDirInUse || e instanceof StoreDamaged ? e.message : ((e as Error).stack ?? String(e));
    process.stderr.write(`website-apiserver ${command}: ${message}\n`);
    return 1;
  }
}

function usageError(command: DataCommand, message: string, usage: string): number {
  process.stderr.write(`website-apiserver ${command}: ${message}\n\n${usage}\n`);
  return 2;
}

async function backup(dataDir: string, to: string): Promise<number> {
  if (to === '-') {
    const summary = await writeBackup(dataDir, stdoutSink());
    process.stderr.write(
      `Snapshot of ${dataDir} written to stdout: revision ${summary.revision}, ${summary.objects} objects, ${summary.bytes} bytes, sha256 ${summary.sha256}\n`,
    );
    return 0;
  }
  const partial = `${to}.tmp-${process.pid}`;
  // 0600: the backup holds every object of the store.
  const fd = openSync(partial, 'w', 0o600);
  try {
    const summary = await writeBackup(dataDir, { write: (chunk) => void writeAll(fd, chunk) });
    fsyncSync(fd);
    closeSync(fd);
    renameSync(partial, to);
    syncDirectory(dirname(to));
    process.stdout.write(
      `Snapshot saved at ${to}: revision ${summary.revision}, ${summary.objects} objects, ${summary.bytes} bytes, sha256 ${summary.sha256}\n`,
    );
    return 0;
  } catch (e) {
    try {
      closeSync(fd);
    } catch {
      // already closed after a failed rename
    }
    rmSync(partial, { force: true });
    throw e;
  }
}

async function restore(from: string, dataDir: string, bump: number, replace: boolean): Promise<number> {
  const input = from === '-' ? process.stdin : createReadStream(from);
  // A missing file fails on the first read inside restoreBackup; surface it as the operator's error.
  const opened = from === '-' ? Promise.resolve() : once(input, 'open').then(() => undefined);
  await opened.catch((e: NodeJS.ErrnoException) => {
    throw new BackupError(`cannot read ${from}: ${e.code ?? e.message}`);
  });
  // The directory is created here to be locked; a failed restore removes what it created, as restoreBackup would.
  const created = mkdirSync(dataDir, { recursive: true });
  let summary: RestoreSummary;
  try {
    const lock = lockDataDir(dataDir);
    try {
      summary = await restoreBackup(input, dataDir, { bumpRevision: bump, replace });
    } finally {
      lock.release();
    }
  } catch (e) {
    if (created !== undefined) rmSync(created, { recursive: true, force: true });
    throw e;
  }
  syncDirectory(dataDir);
  process.stdout.write(
    `Restored ${summary.objects} objects of revision ${summary.backupRevision} into ${dataDir}; resourceVersions continue after ` +
      `${summary.revision}, and history up to it is compacted (older resourceVersions get 410 Expired)` +
      `${summary.replaced ? `; the replaced database is kept as ${summary.replaced}` : ''}` +
      `${summary.replacedDamaged ? ` (it was damaged: ${summary.replacedDamaged}; its own revision could not be read, so only the bump keeps resourceVersions ahead of it)` : ''}\n`,
  );
  return 0;
}

function writeAll(fd: number, chunk: Buffer): void {
  let off = 0;
  while (off < chunk.length) off += writeSync(fd, chunk, off);
}

// stdoutSink writes to stdout with backpressure (a pipe to kubectl exec or gzip may be slower than lmdb).
function stdoutSink(): BackupSink {
  return {
    async write(chunk) {
      if (!process.stdout.write(chunk)) await once(process.stdout, 'drain');
    },
  };
}

// syncDirectory makes a rename durable (the directory entry), where the platform allows opening a directory.
function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not supported here (e.g. some file systems); the data itself was synced.
  }
}
