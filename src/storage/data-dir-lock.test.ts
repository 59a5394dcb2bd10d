import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DataDirInUse, LOCK_FILE, LOCK_REFRESH_MS, LOCK_STALE_MS, lockDataDir, type LockHolder } from './data-dir-lock.js';

// Other holders are child processes running the built module (dist/, built by npm test's pretest).
const MODULE = resolve(import.meta.dirname, '../../dist/storage/data-dir-lock.js');

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'ws-lock-'));
  dirs.push(d);
  return d;
}

const lockFile = (dir: string) => join(dir, LOCK_FILE);
const holderIn = (dir: string) => JSON.parse(readFileSync(lockFile(dir), 'utf8')) as LockHolder;

// refusal returns what lockDataDir threw (failing the test if it did not throw DataDirInUse).
function refusal(dir: string): DataDirInUse {
  try {
    lockDataDir(dir).release();
  } catch (e) {
    expect(e).toBeInstanceOf(DataDirInUse);
    return e as DataDirInUse;
  }
  throw new Error(`${dir} was locked, expected DataDirInUse`);
}

// deadPid is the pid of a process that has exited.
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

// holdInChild takes the lock in a child process, which holds it until told to exit on stdin ("exit") or killed.
async function holdInChild(dir: string) {
  const script = `
    const { lockDataDir } = await import(${JSON.stringify(MODULE)});
    lockDataDir(${JSON.stringify(dir)});
    process.stdout.write('locked\\n');
    process.stdin.on('data', () => process.exit(0));
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
  await new Promise<void>((res, rej) => {
    child.stdout.on('data', (b: Buffer) => b.toString().includes('locked') && res());
    child.on('exit', (code) => rej(new Error(`the child exited with ${code} before locking`)));
  });
  return {
    pid: child.pid as number,
    exitCleanly: () => {
      child.stdin.write('exit\n');
      return exited;
    },
    kill: () => {
      child.kill('SIGKILL');
      return exited;
    },
  };
}

describe('lockDataDir', () => {
  it('takes the lock by writing its holder into the data dir, created if missing, and removes it on release', () => {
    const dir = join(dataDir(), 'nested', 'data');
    const lock = lockDataDir(dir);
    const holder = holderIn(dir);
    expect(holder).toMatchObject({ pid: process.pid, hostname: hostname() });
    expect(Date.now() - Date.parse(holder.startedAt)).toBeLessThan(10_000);
    expect(lock.holder).toEqual(holder);
    // Nothing else is left in the directory (the temporary file the lock was linked from is gone).
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
    lock.release();
    lockDataDir(dir).release();
  });

  it('refuses a second take in this process, naming this process', () => {
    const dir = dataDir();
    const lock = lockDataDir(dir);
    const e = refusal(dir);
    expect(e.message).toMatch(
      new RegExp(
        `^data directory ${dir} is in use by process ${process.pid} on host ${hostname()} \\(started [^)]+\\): stop it first, or use another --data-dir$`,
      ),
    );
    lock.release();
  });

  it('refuses while another live process holds it, naming that process, and takes it once the holder exits or is killed', async () => {
    const dir = dataDir();
    const child = await holdInChild(dir);
    const e = refusal(dir);
    expect(e.holder?.pid).toBe(child.pid);
    expect(e.message).toContain(`is in use by process ${child.pid} on host ${hostname()}`);
    expect(e.message).not.toContain('\n');
    // A clean exit removes the lock file.
    expect(await child.exitCleanly()).toBe(0);
    expect(existsSync(lockFile(dir))).toBe(false);

    // kill -9 leaves it behind, naming a dead pid: taken over.
    const killed = await holdInChild(dir);
    expect(refusal(dir).holder?.pid).toBe(killed.pid);
    await killed.kill();
    expect(holderIn(dir).pid).toBe(killed.pid);
    const lock = lockDataDir(dir);
    expect(holderIn(dir).pid).toBe(process.pid);
    lock.release();
  });

  it('takes over a stale lock: a dead pid, its own pid (a restarted container), another boot or a reused pid', () => {
    const dir = dataDir();
    const now = new Date().toISOString();
    const stale: LockHolder[] = [
      { pid: deadPid(), hostname: hostname(), startedAt: now },
      { pid: process.pid, hostname: hostname(), startedAt: now },
      // A live pid (our parent), but the lock was taken before a reboot, or by a process that started at another time.
      { pid: process.ppid, hostname: hostname(), startedAt: now, bootId: 'another-boot' },
      { pid: process.ppid, hostname: hostname(), startedAt: now, procStart: '1' },
    ];
    for (const holder of stale) {
      writeFileSync(lockFile(dir), JSON.stringify(holder));
      const lock = lockDataDir(dir);
      expect(holderIn(dir).pid).toBe(process.pid);
      expect(readdirSync(dir)).toEqual([LOCK_FILE]);
      lock.release();
    }
    // A live pid with no record to tell otherwise is a holder.
    writeFileSync(lockFile(dir), JSON.stringify({ pid: process.ppid, hostname: hostname(), startedAt: now }));
    expect(refusal(dir).holder?.pid).toBe(process.ppid);
  });

  it('refuses a lock from another host (or not ours) until it has not been refreshed for LOCK_STALE_MS', () => {
    const dir = dataDir();
    const remote: LockHolder = { pid: 4242, hostname: 'elsewhere.example', startedAt: '2026-01-02T03:04:05.000Z' };
    writeFileSync(lockFile(dir), JSON.stringify(remote));
    const e = refusal(dir);
    expect(e.message).toBe(
      `data directory ${dir} is in use by process 4242 on host elsewhere.example (started 2026-01-02T03:04:05.000Z): stop it first, ` +
        `or use another --data-dir (a lock from another host, or unreadable, is taken over once not refreshed for ${LOCK_STALE_MS / 1000} s)`,
    );
    const old = new Date(Date.now() - LOCK_STALE_MS - 5000);
    utimesSync(lockFile(dir), old, old);
    lockDataDir(dir).release();

    writeFileSync(lockFile(dir), 'not json');
    expect(refusal(dir).message).toContain(`is in use by an unreadable lock file ${lockFile(dir)}`);
    utimesSync(lockFile(dir), old, old);
    lockDataDir(dir).release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refreshes the mtime of its lock file every LOCK_REFRESH_MS while held (what keeps it live for another host), and stops once released', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    try {
      const dir = dataDir();
      const lock = lockDataDir(dir);
      const old = new Date(Date.now() - LOCK_STALE_MS - 5000);
      utimesSync(lockFile(dir), old, old);
      vi.advanceTimersByTime(LOCK_REFRESH_MS);
      expect(Math.abs(Date.now() - statSync(lockFile(dir)).mtimeMs)).toBeLessThan(1000);
      expect(LOCK_REFRESH_MS * 3).toBeLessThanOrEqual(LOCK_STALE_MS);
      lock.release();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('release leaves a lock file alone that is no longer its own', () => {
    const dir = dataDir();
    const lock = lockDataDir(dir);
    rmSync(lockFile(dir));
    const other = JSON.stringify({ pid: process.ppid, hostname: hostname(), startedAt: new Date().toISOString() });
    writeFileSync(lockFile(dir), other);
    lock.release();
    expect(readFileSync(lockFile(dir), 'utf8')).toBe(other);
  });

  it('leaves a lock another starter took over meanwhile to it: the later starter is refused, naming the holder', () => {
    const dir = dataDir();
    const dead = deadPid();
    writeFileSync(lockFile(dir), JSON.stringify({ pid: dead, hostname: hostname(), startedAt: new Date().toISOString() }));
    // Both judge the lock stale; the racer takes it over in the instant between the judging and the removal.
    let racer: ReturnType<typeof lockDataDir> | undefined;
    const seen: (number | undefined)[] = [];
    let e: unknown;
    try {
      lockDataDir(dir, {
        onStale: (stale) => {
          seen.push(stale?.pid);
          racer ??= lockDataDir(dir, { onStale: (s) => seen.push(s?.pid) });
        },
      }).release();
    } catch (err) {
      e = err;
    }
    expect(seen).toEqual([dead, dead]);
    expect(e).toBeInstanceOf(DataDirInUse);
    expect((e as DataDirInUse).holder).toEqual(racer?.holder);
    // The racer's lock is in place, and only it.
    expect(holderIn(dir)).toEqual(racer?.holder);
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    racer?.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('works where the file system has no hard links: the lock file is created exclusively, then written', async () => {
    vi.resetModules();
    let links = 0;
    vi.doMock('node:fs', async (original) => {
      const fs = await original<typeof import('node:fs')>();
      const linkSync = () => {
        links++;
        throw Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' });
      };
      return { ...fs, default: { ...fs, linkSync }, linkSync };
    });
    try {
      const m = await import('./data-dir-lock.js');
      const dir = dataDir();
      writeFileSync(lockFile(dir), JSON.stringify({ pid: deadPid(), hostname: hostname(), startedAt: new Date().toISOString() }));
      const lock = m.lockDataDir(dir);
      expect(links).toBeGreaterThan(0);
      expect(holderIn(dir)).toEqual(lock.holder);
      expect(readdirSync(dir)).toEqual([LOCK_FILE]);
      expect(() => m.lockDataDir(dir)).toThrow(`is in use by process ${process.pid}`);
      lock.release();
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      vi.doUnmock('node:fs');
      vi.resetModules();
    }
  });

  it('gives a stale lock to exactly one of several processes racing for it; the others are refused naming it', async () => {
    {
      const dir = dataDir();
      writeFileSync(lockFile(dir), JSON.stringify({ pid: deadPid(), hostname: hostname(), startedAt: new Date().toISOString() }));
      // Each starter waits for a common start time, tries once, and a winner holds the lock for 1 s.
      const at = Date.now() + 1500;
      const script = `
        const { lockDataDir, DataDirInUse } = await import(${JSON.stringify(MODULE)});
        while (Date.now() < ${at});
        try {
          const lock = lockDataDir(${JSON.stringify(dir)});
          process.stdout.write('won');
          setTimeout(() => lock.release(), 1000);
        } catch (e) {
          if (!(e instanceof DataDirInUse)) throw e;
          process.stdout.write('refused ' + e.holder.pid);
        }
      `;
      const starters = Array.from({ length: 8 }, () => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (b: Buffer) => (out += b.toString()));
        return new Promise<{ pid: number; out: string }>((res) => child.on('close', () => res({ pid: child.pid as number, out })));
      });
      const results = await Promise.all(starters);
      const winners = results.filter((r) => r.out === 'won');
      expect(winners).toHaveLength(1);
      for (const r of results) if (r !== winners[0]) expect(r.out).toBe(`refused ${winners[0]?.pid}`);
      expect(readdirSync(dir)).toEqual([]);
    }
  });
});
