/**
 * @module observability/audit-log.test
 * The log backend: lumberjack's rotation (--audit-log-maxsize/-maxbackup/-maxage, backup names), the buffered mode's
 * drops when full ("audit buffer queue blocked"), and write failures on a full device that are counted and logged
 * without throwing.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog, backupName } from './audit-log.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'audit-log-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A logger that keeps its lines. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { logger, lines };
}

const line = (i: number, size: number) => `${JSON.stringify({ i, pad: 'x'.repeat(size) })}\n`;
const until = async (f: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!f() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
  expect(f()).toBe(true);
};
const backups = (dir: string) =>
  readdirSync(dir)
    .filter((f) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/.test(f))
    .sort();

describe('AuditLog', () => {
  it('creates the file 0600 in a new 0700 directory and appends every line in order', async () => {
    const path = join(tempDir(), 'sub', 'audit.log');
    const log = await AuditLog.open({ path, maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0 }, capture().logger);
    for (let i = 0; i < 100; i++) log.enqueue(line(i, 10));
    await log.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(
      readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { i: number }).i),
    ).toEqual([...Array(100).keys()]);
    expect(log.stats).toEqual({ written: 100, dropped: 0, failed: 0 });
  });

  it('rotates before a line would pass maxsize, keeping every line and the newest maxbackup backups', async () => {
    const dir = tempDir();
    const path = join(dir, 'audit.log');
    const log = await AuditLog.open({ path, maxSizeMB: 1, maxBackups: 2, maxAgeDays: 0 }, capture().logger);
    // 40 lines of ~100 KiB: about 4 MiB, so at least three rotations, 1 ms apart so their backup names differ.
    for (let i = 0; i < 40; i++) {
      log.enqueue(line(i, 100 * 1024));
      if (i % 9 === 8) await new Promise((r) => setTimeout(r, 5));
    }
    await log.close();
    await until(() => backups(dir).length === 2);
    const files = [...backups(dir).map((f) => join(dir, f)), path];
    for (const f of files) expect(statSync(f).size).toBeLessThanOrEqual(1024 * 1024);
    const seen = files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { i: number }).i),
    );
    // The oldest backups were removed; what is left is the newest lines, in order, ending with the last one.
    expect(seen.at(-1)).toBe(39);
    expect(seen).toEqual([...Array(seen.length).keys()].map((k) => 40 - seen.length + k));
    expect(log.stats.written).toBe(40);
  });

  it('removes backups older than maxage days at start, judged by the time in their name', async () => {
    const dir = tempDir();
    const path = join(dir, 'audit.log');
    const old = backupName(path, new Date(Date.now() - 3 * 86_400_000));
    const recent = backupName(path, new Date(Date.now() - 3_600_000));
    for (const f of [old, recent, join(dir, 'audit-notatime.log')]) writeFileSync(f, 'x\n');
    const log = await AuditLog.open({ path, maxSizeMB: 0, maxBackups: 0, maxAgeDays: 2 }, capture().logger);
    await until(() => !existsSync(old));
    expect(existsSync(recent)).toBe(true);
    expect(existsSync(join(dir, 'audit-notatime.log'))).toBe(true);
    await log.close();
  });

  it('names backups as lumberjack does', () => {
    expect(backupName('/var/log/audit.log', new Date(Date.UTC(2026, 1, 3, 4, 5, 6, 7)))).toBe('/var/log/audit-2026-02-03T04-05-06.007.log');
    expect(backupName('/var/log/audit', new Date(Date.UTC(2026, 1, 3, 4, 5, 6, 7)))).toBe('/var/log/audit-2026-02-03T04-05-06.007');
  });

  it('refuses a line larger than maxsize and writes the others', async () => {
    const path = join(tempDir(), 'audit.log');
    const { logger, lines } = capture();
    const log = await AuditLog.open({ path, maxSizeMB: 1, maxBackups: 0, maxAgeDays: 0 }, logger);
    log.enqueue(line(0, 10));
    log.enqueue(line(1, 2 * 1024 * 1024));
    log.enqueue(line(2, 10));
    await log.close();
    expect(
      readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { i: number }).i),
    ).toEqual([0, 2]);
    expect(log.stats).toEqual({ written: 2, dropped: 0, failed: 1 });
    expect(lines.find((l) => l['plugin'] === 'log')?.['msg']).toMatch(
      /^Error in audit plugin 'log' affecting 1 audit events: write length \d+ exceeds maximum file size 1048576$/,
    );
  });

  it('drops events beyond the buffer ("audit buffer queue blocked") and never waits', async () => {
    const path = join(tempDir(), 'audit.log');
    const { logger, lines } = capture();
    const log = await AuditLog.open({ path, maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0, bufferEvents: 2 }, logger);
    // The first line is taken by the writer at once; two more fill the buffer; the last two are dropped.
    for (let i = 0; i < 5; i++) log.enqueue(line(i, 10));
    await log.close();
    expect(log.stats).toEqual({ written: 3, dropped: 2, failed: 0 });
    expect(lines.some((l) => l['msg'] === "Error in audit plugin 'buffered' affecting 1 audit events: audit buffer queue blocked")).toBe(true);
    log.enqueue(line(9, 10));
    expect(log.stats.dropped).toBe(3);
  });

  it.skipIf(!existsSync('/dev/full'))('a full device fails the writes: counted, logged once per interval, nothing thrown', async () => {
    const { logger, lines } = capture();
    const log = await AuditLog.open({ path: '/dev/full', maxSizeMB: 0, maxBackups: 0, maxAgeDays: 0 }, logger);
    for (let i = 0; i < 3; i++) {
      log.enqueue(line(i, 10));
      await new Promise((r) => setTimeout(r, 20));
    }
    await log.close();
    expect(log.stats).toEqual({ written: 0, dropped: 0, failed: 3 });
    const errors = lines.filter((l) => l['plugin'] === 'log');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.['msg']).toMatch(/ENOSPC/);
  });
});
