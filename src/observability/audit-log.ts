/**
 * @module observability/audit-log
 * The audit log backend: event lines go to a file (rotated like kube-apiserver's lumberjack.Logger) or to stdout
 * (`-`), through a bounded in-memory buffer drained in the background. Entry point: `await AuditLog.open(options,
 * logger)`, then `enqueue(line)` per event and `close()` on shutdown.
 *
 * ## Which of kube's modes this is
 * kube-apiserver's log backend runs in `--audit-log-mode=blocking` by default: each event is written (one write(2))
 * by the goroutine serving the request before it goes on, and a failed write is logged and the request served anyway
 * (`ignoreErrorsBackend`); `blocking-strict` fails the request instead; `batch` hands events to a buffer of
 * `--audit-log-batch-buffer-size` (10000) events drained by another goroutine, and drops an event (error `audit
 * buffer queue blocked`) when the buffer is full (plugin/pkg/audit/buffered). We mirror **batch**: a Node process
 * serves every request on one thread, so a disk that stalls a blocking write would stall every request, not one.
 * The buffer holds 10000 events (kube's default) and at most 64 MiB; an event that does not fit is dropped.
 *
 * ## Guarantees
 * - enqueue never throws and never waits; nothing here can end the process (every failure is caught).
 * - A failed write (a full disk) drops the events of that write, counts them (`failed`), is logged (at most one log
 *   line every 5 s, with the count of those left out), and cuts the file back to the last whole line, so the log
 *   stays one JSON event per line. Writing resumes by itself once the disk takes data again.
 * - Rotation (lumberjack semantics): before a line would take the file past `--audit-log-maxsize` MiB (0 means
 *   lumberjack's 100), the file is renamed to `<name>-<UTC time 2006-01-02T15-04-05.000><ext>` and a new one is
 *   started with the same mode; then backups beyond `--audit-log-maxbackup` (0: keep all) and older than
 *   `--audit-log-maxage` days (0: keep all) are deleted, judged by the time in their name. A single line larger than
 *   the maximum size is refused (`write length N exceeds maximum file size M`), as lumberjack refuses it.
 * - The file is created with mode 0600 and its directory with 0700 (ensureLogFile).
 *
 * ## Caveats
 * - `--audit-log-compress` (gzip of backups) is not implemented.
 * - With `-` the events share stdout with the JSON log lines, as with kube-apiserver.
 */
import { write as fsWrite } from 'node:fs';
import { mkdir, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import type { Logger } from 'pino';

/** AuditLogOptions are the --audit-log-* flags. */
export interface AuditLogOptions {
  /** A file, or `-` for stdout. */
  path: string;
  /** --audit-log-maxsize in MiB; 0 is lumberjack's default, 100. */
  maxSizeMB: number;
  /** --audit-log-maxbackup; 0 keeps every backup. */
  maxBackups: number;
  /** --audit-log-maxage in days; 0 keeps backups whatever their age. */
  maxAgeDays: number;
  /** Events the buffer holds (kube's --audit-log-batch-buffer-size default). */
  bufferEvents?: number;
  /** Bytes the buffer holds. */
  bufferBytes?: number;
}

/** AuditLogStats counts events: written, and lost by plugin as kube's apiserver_audit_error_total labels them. */
export interface AuditLogStats {
  written: number;
  /** Refused by the buffer (full, or shut down): plugin `buffered`. */
  dropped: number;
  /** Lost to a failed write: plugin `log`. */
  failed: number;
}

const MEGABYTE = 1024 * 1024;
// lumberjack's defaultMaxSize.
const DEFAULT_MAX_SIZE_MB = 100;
export const DEFAULT_BUFFER_EVENTS = 10_000;
const DEFAULT_BUFFER_BYTES = 64 * MEGABYTE;
// How much one write takes at most.
const BATCH_BYTES = MEGABYTE;
const ERROR_LOG_INTERVAL_MS = 5000;

/** Output appends lines somewhere; failures are reported through `failed`, never thrown. */
interface Output {
  write(lines: string[], failed: (count: number, err: Error) => void): Promise<void>;
  close(): Promise<void>;
}

/** AuditLog is the buffered backend. */
export class AuditLog {
  readonly stats: AuditLogStats = { written: 0, dropped: 0, failed: 0 };
  readonly #out: Output;
  readonly #logger: Logger;
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  #queue: string[] = [];
  #queuedBytes = 0;
  #draining: Promise<void> | undefined;
  #closed = false;
  #lastErrorLog = 0;
  #suppressed = 0;

  private constructor(out: Output, o: AuditLogOptions, logger: Logger) {
    this.#out = out;
    this.#logger = logger;
    this.#maxEvents = o.bufferEvents ?? DEFAULT_BUFFER_EVENTS;
    this.#maxBytes = o.bufferBytes ?? DEFAULT_BUFFER_BYTES;
  }

  /** open creates the file (and its directory) when needed; it throws when that fails, as kube-apiserver will not start. */
  static async open(o: AuditLogOptions, logger: Logger): Promise<AuditLog> {
    const out = o.path === '-' ? new StdoutOutput() : await FileOutput.open(o, logger);
    return new AuditLog(out, o, logger);
  }

  /** enqueue takes one event line (ending in a newline); when the buffer is full the event is dropped and counted. */
  enqueue(line: string): void {
    if (this.#closed) return this.#fail('buffered', 1, new Error('audit backend shut down'));
    if (this.#queue.length >= this.#maxEvents || this.#queuedBytes + line.length > this.#maxBytes) {
      return this.#fail('buffered', 1, new Error('audit buffer queue blocked'));
    }
    this.#queue.push(line);
    this.#queuedBytes += line.length;
    this.#kick();
  }

  /** close refuses new events, writes what is buffered (for at most `timeoutMs`) and closes the output. */
  async close(timeoutMs = 2000): Promise<void> {
    this.#closed = true;
    const deadline = Date.now() + timeoutMs;
    while (this.#draining && Date.now() < deadline) {
      await Promise.race([this.#draining, new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now())).unref())]);
    }
    if (this.#queue.length) this.#fail('buffered', this.#queue.length, new Error('audit backend shut down'));
    this.#queue = [];
    await this.#out.close().catch(() => undefined);
  }

  #kick(): void {
    if (this.#draining) return;
    this.#draining = this.#drain()
      .catch((e: unknown) => this.#logger.error({ err: e }, 'audit log writer failed'))
      .finally(() => {
        this.#draining = undefined;
        if (this.#queue.length) this.#kick();
      });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length) {
      let n = 0;
      let bytes = 0;
      while (n < this.#queue.length && (n === 0 || bytes + (this.#queue[n] as string).length <= BATCH_BYTES)) bytes += (this.#queue[n++] as string).length;
      const lines = this.#queue.splice(0, n);
      this.#queuedBytes -= bytes;
      let failed = 0;
      await this.#out.write(lines, (count, err) => {
        failed += count;
        this.#fail('log', count, err);
      });
      this.stats.written += lines.length - failed;
    }
  }

  // audit.HandlePluginError: counted, and logged (throttled so a full disk does not flood the log).
  #fail(plugin: 'buffered' | 'log', count: number, err: Error): void {
    if (plugin === 'buffered') this.stats.dropped += count;
    else this.stats.failed += count;
    const now = Date.now();
    if (now - this.#lastErrorLog < ERROR_LOG_INTERVAL_MS) {
      this.#suppressed += count;
      return;
    }
    this.#lastErrorLog = now;
    this.#logger.error(
      { plugin, events: count, suppressedSinceLastLog: this.#suppressed },
      `Error in audit plugin '${plugin}' affecting ${count} audit events: ${err.message}`,
    );
    this.#suppressed = 0;
  }
}

/** FileOutput appends to a file and rotates it as lumberjack.Logger does. */
class FileOutput implements Output {
  readonly #path: string;
  readonly #max: number;
  readonly #maxBackups: number;
  readonly #maxAgeDays: number;
  readonly #logger: Logger;
  #fh: FileHandle | undefined;
  #size = 0;
  #mode = 0o600;

  private constructor(o: AuditLogOptions, logger: Logger) {
    this.#path = o.path;
    this.#max = (o.maxSizeMB || DEFAULT_MAX_SIZE_MB) * MEGABYTE;
    this.#maxBackups = o.maxBackups;
    this.#maxAgeDays = o.maxAgeDays;
    this.#logger = logger;
  }

  static async open(o: AuditLogOptions, logger: Logger): Promise<FileOutput> {
    const out = new FileOutput(o, logger);
    await mkdir(dirname(o.path), { recursive: true, mode: 0o700 });
    await out.#open();
    void out.#mill();
    return out;
  }

  async #open(): Promise<FileHandle> {
    const fh = await open(this.#path, 'a', this.#mode);
    try {
      const st = await fh.stat();
      this.#size = st.isFile() ? st.size : 0;
      this.#mode = st.mode & 0o777;
    } catch (e) {
      await fh.close().catch(() => undefined);
      throw e;
    }
    this.#fh = fh;
    return fh;
  }

  async write(lines: string[], failed: (count: number, err: Error) => void): Promise<void> {
    let batch: string[] = [];
    let bytes = 0;
    const flush = async () => {
      if (batch.length) await this.#append(batch, bytes, failed);
      batch = [];
      bytes = 0;
    };
    for (const line of lines) {
      const len = Buffer.byteLength(line);
      if (len > this.#max) {
        await flush();
        failed(1, new Error(`write length ${len} exceeds maximum file size ${this.#max}`));
        continue;
      }
      if (this.#size + bytes + len > this.#max) {
        await flush();
        await this.#rotate();
      }
      batch.push(line);
      bytes += len;
    }
    await flush();
  }

  async #append(lines: string[], bytes: number, failed: (count: number, err: Error) => void): Promise<void> {
    const buf = Buffer.from(lines.join(''));
    let off = 0;
    try {
      const fh = this.#fh ?? (await this.#open());
      while (off < buf.length) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
      this.#size += bytes;
    } catch (e) {
      failed(lines.length, e as Error);
      // Leave no partial line behind: later events start on a line of their own.
      if (off > 0) await this.#fh?.truncate(this.#size).catch(() => undefined);
    }
  }

  async #rotate(): Promise<void> {
    const fh = this.#fh;
    this.#fh = undefined;
    await fh?.close().catch(() => undefined);
    try {
      await rename(this.#path, backupName(this.#path, new Date()));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.#logger.error({ err: e, path: this.#path }, 'cannot rotate the audit log');
    }
    // Reopened lazily by the next write when this fails (the error then counts against that write's events).
    await this.#open().catch(() => undefined);
    void this.#mill();
  }

  // lumberjack's millRunOnce: drop backups past maxBackups (newest kept) and those older than maxAge days.
  async #mill(): Promise<void> {
    if (!this.#maxBackups && !this.#maxAgeDays) return;
    try {
      const dir = dirname(this.#path);
      const name = basename(this.#path);
      const ext = extname(name);
      const prefix = `${name.slice(0, name.length - ext.length)}-`;
      const backups = (await readdir(dir))
        .filter((f) => f.startsWith(prefix) && f.endsWith(ext))
        .map((f) => ({ f, t: backupTime(f.slice(prefix.length, f.length - ext.length)) }))
        .filter((b): b is { f: string; t: number } => b.t !== undefined)
        .sort((a, b) => b.t - a.t);
      const remove = this.#maxBackups > 0 ? backups.splice(this.#maxBackups) : [];
      if (this.#maxAgeDays > 0) {
        const cutoff = Date.now() - this.#maxAgeDays * 86_400_000;
        remove.push(...backups.filter((b) => b.t < cutoff));
      }
      for (const b of remove) await unlink(join(dir, b.f)).catch((e: unknown) => this.#logger.error({ err: e, file: b.f }, 'cannot remove an old audit log'));
    } catch (e) {
      this.#logger.error({ err: e }, 'cannot clean up old audit logs');
    }
  }

  async close(): Promise<void> {
    const fh = this.#fh;
    this.#fh = undefined;
    await fh?.close();
  }
}

/** backupName is lumberjack's: `<dir>/<name>-<UTC 2006-01-02T15-04-05.000><ext>`. */
export function backupName(path: string, at: Date): string {
  const name = basename(path);
  const ext = extname(name);
  const stamp = at.toISOString().slice(0, 23).replace(/:/g, '-');
  return join(dirname(path), `${name.slice(0, name.length - ext.length)}-${stamp}${ext}`);
}

function backupTime(stamp: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})\.(\d{3})$/.exec(stamp);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s, ms] = m.slice(1).map(Number) as [number, number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, s, ms);
}

/** StdoutOutput writes to file descriptor 1 off the event loop (libuv's thread pool), waiting out EAGAIN. */
class StdoutOutput implements Output {
  async write(lines: string[], failed: (count: number, err: Error) => void): Promise<void> {
    const buf = Buffer.from(lines.join(''));
    try {
      let off = 0;
      while (off < buf.length) off += await writeSome(1, buf, off);
    } catch (e) {
      failed(lines.length, e as Error);
    }
  }

  async close(): Promise<void> {}
}

function writeSome(fd: number, buf: Buffer, off: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const attempt = () =>
      fsWrite(fd, buf, off, buf.length - off, null, (err, n) => {
        if (err?.code === 'EAGAIN') setTimeout(attempt, 10);
        else if (err) reject(err);
        else resolve(n);
      });
    attempt();
  });
}
