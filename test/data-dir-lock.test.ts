/**
 * The data directory lock (src/storage/data-dir-lock.ts) as an operator meets it: a second server on a data dir in
 * use exits 1 with one line naming the first, which keeps serving and watching; a server killed with kill -9 leaves
 * a stale lock that the next one takes over; backup runs beside a server, restore is refused.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API, call, serversPerTest, tempDir, website, type ServerProcess } from './helpers/server-process.js';
import { openWatch } from './helpers/watch-client.js';

const MAIN = resolve(import.meta.dirname, '../dist/main.js');
const COLLECTION = `${API}/namespaces/default/websites`;
const LOCK = 'website-apiserver.lock';

interface Exited {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** main runs `node dist/main.js ARGS` to its end. */
function main(args: string[]): Promise<Exited> {
  return new Promise((res, rej) => {
    const proc = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      rej(new Error(`node dist/main.js ${args.join(' ')} still runs after 20 s:\n${stdout}${stderr}`));
    }, 20_000);
    proc.on('close', (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr });
    });
  });
}

/** inUse is the one line that names `srv` as the holder of its data dir, after `prefix`. */
function inUse(prefix: string, srv: ServerProcess): RegExp {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `^${esc(prefix)}: data directory ${esc(srv.dataDir)} is in use by process ${srv.proc.pid} on host ${esc(hostname())} ` +
      `\\(started (\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z)\\): stop it first, or use another --data-dir\\n$`,
  );
}

describe('the data directory lock', () => {
  const start = serversPerTest();

  it('refuses a second server on a data dir in use (exit 1, one line naming the first), and the first keeps serving and watching', async () => {
    const { srv, agent } = await start();
    const before = await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('before'));
    expect(before.status).toBe(201);
    const watch = await openWatch(srv, COLLECTION, Number(before.body.metadata.resourceVersion));
    const kubeconfig = readFileSync(srv.kubeconfig, 'utf8');

    // What `npm start` run twice does: the same data and cert dirs.
    const second = await main(['--port', '0', '--data-dir', srv.dataDir, '--cert-dir', srv.certDir]);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    const line = inUse('website-apiserver', srv).exec(second.stderr);
    expect(line, second.stderr).not.toBeNull();
    const startedAt = Date.parse(line?.[1] ?? '');
    expect(startedAt).toBeLessThanOrEqual(Date.now());
    expect(Date.now() - startedAt).toBeLessThan(60_000);
    // It stopped before writing anything: the first server's kubeconfig (with its real port) is as it was.
    expect(readFileSync(srv.kubeconfig, 'utf8')).toBe(kubeconfig);

    // The first server still serves, and the watch it had open hears the writes that follow.
    const after = await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('after'));
    expect(after.status).toBe(201);
    const got = await call(agent, `${srv.url}${COLLECTION}/after`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.uid).toBe(after.body.metadata.uid);
    const rv = Number(after.body.metadata.resourceVersion);
    await watch.until(rv);
    expect(watch.events).toEqual([{ type: 'ADDED', name: 'after', rv, replicas: after.body.spec.replicas }]);
    watch.close();
    expect((await call(agent, `${srv.url}/readyz`)).status).toBe(200);

    // A graceful stop releases the lock: a server starts there again.
    expect(await srv.stop('SIGTERM')).toBe(0);
    expect(existsSync(join(srv.dataDir, LOCK))).toBe(false);
    const { srv: srv2, agent: agent2 } = await start({ dataDir: srv.dataDir });
    expect((await call(agent2, `${srv2.url}${COLLECTION}/after`)).status).toBe(200);
  });

  it('starts on the data dir of a server killed with SIGKILL, taking over its stale lock', async () => {
    const { srv, agent } = await start();
    expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('kept'))).status).toBe(201);
    await srv.stop('SIGKILL');
    // kill -9 runs no exit handler: the lock file stays, naming a process that is gone.
    const left = JSON.parse(readFileSync(join(srv.dataDir, LOCK), 'utf8')) as { pid: number; hostname: string };
    expect(left).toMatchObject({ pid: srv.proc.pid, hostname: hostname() });

    const { srv: srv2, agent: agent2 } = await start({ dataDir: srv.dataDir, certDir: srv.certDir });
    expect((await call(agent2, `${srv2.url}${COLLECTION}/kept`)).status).toBe(200);
    const took = srv2
      .logs()
      .split('\n')
      .find((l) => l.includes('took over a stale data dir lock'));
    expect(took, srv2.logs()).toBeDefined();
    expect(JSON.parse(took as string)).toMatchObject({ level: 40, dataDir: srv.dataDir, staleHolder: { pid: srv.proc.pid } });
    // And it holds the lock now: a third is refused, naming it.
    const third = await main(['--port', '0', '--data-dir', srv.dataDir, '--cert-dir', tempDir('ws-certs-')]);
    expect(third.code).toBe(1);
    expect(third.stderr).toMatch(inUse('website-apiserver', srv2));
  });

  it('lets backup read a served data dir, and refuses restore there, naming the server', async () => {
    const { srv, agent } = await start();
    expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('one'))).status).toBe(201);
    const file = join(tempDir('ws-backup-'), 'websites.backup');
    const backup = await main(['backup', '--data-dir', srv.dataDir, '--to', file]);
    expect(backup.stderr).toBe('');
    expect(backup.code).toBe(0);
    expect(backup.stdout).toContain(`Snapshot saved at ${file}`);

    for (const flags of [['--replace'], []]) {
      const restore = await main(['restore', '--from', file, '--data-dir', srv.dataDir, ...flags]);
      expect(restore.code).toBe(1);
      expect(restore.stdout).toBe('');
      expect(restore.stderr).toMatch(inUse('website-apiserver restore', srv));
    }
    // The server's store is untouched and still takes writes.
    expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('two'))).status).toBe(201);
    expect((await call(agent, `${srv.url}${COLLECTION}`)).body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(['one', 'two']);
  });

  it("still refuses restore --replace while a process without the lock has the store open (lmdb's reader table)", async () => {
    const { srv, agent } = await start();
    expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('one'))).status).toBe(201);
    const file = join(tempDir('ws-backup-'), 'websites.backup');
    expect((await main(['backup', '--data-dir', srv.dataDir, '--to', file])).code).toBe(0);
    expect(await srv.stop('SIGTERM')).toBe(0);

    // Another program reading the store (as a backup does), which takes no lock.
    const layout = resolve(import.meta.dirname, '../dist/storage/lmdb-storage.js');
    const script = `
      const { openLayout, META_KEYS } = await import(${JSON.stringify(layout)});
      const l = openLayout(${JSON.stringify(srv.dataDir)}, true);
      l.meta.get(META_KEYS.revision);
      process.stdout.write('open\\n');
      process.stdin.on('data', () => process.exit(0));
    `;
    const reader = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((res, rej) => {
        reader.stdout.on('data', (b: Buffer) => b.toString().includes('open') && res());
        reader.on('exit', (code) => rej(new Error(`the reader exited with ${code}`)));
      });
      const restore = await main(['restore', '--from', file, '--data-dir', srv.dataDir, '--replace']);
      expect(restore.code).toBe(1);
      expect(restore.stderr).toBe(
        `website-apiserver restore: the database in ${srv.dataDir} is open in process ${reader.pid} (a running server?): stop it before replacing its store\n`,
      );
      // The refused restore left no lock file behind.
      expect(existsSync(join(srv.dataDir, LOCK))).toBe(false);
    } finally {
      reader.kill('SIGKILL');
    }
  });
});
