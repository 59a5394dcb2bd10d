/**
 * `website-apiserver backup` and `restore` against real server processes: a backup taken while writers run is the
 * store at exactly its revision, a restored store serves that content, and resourceVersions stay monotonic across
 * the restore the way `etcdutl snapshot restore --bump-revision --mark-compacted` keeps them for kube-apiserver
 * (etcd-io/etcd etcdutl/snapshot/v3_snapshot.go modifyLatestRevision): a client holding a resourceVersion from
 * before the restore gets 410 Expired and re-lists, a new list and new writes are above anything handed out before.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { request, type Agent } from 'undici';
import { API, call, serversPerTest, tempDir, website, type ServerProcess } from './helpers/server-process.js';

const MAIN = resolve(import.meta.dirname, '../dist/main.js');
const COLLECTION = `${API}/namespaces/default/websites`;
// A backup holds the objects as stored, in the storage version (v1): lists compared with it read that version.
const STORED = COLLECTION.replace('/extensions.example.com/v1alpha1/', '/extensions.example.com/v1/');
const WRITERS = 4;

const start = serversPerTest();

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** When the process was spawned and when it exited (ms since epoch). */
  started: number;
  ended: number;
}

/** cli runs `node dist/main.js ARGS` (a subcommand), feeding `input` on stdin when given. */
function cli(args: string[], input?: string): Promise<CliResult> {
  return new Promise((res, rej) => {
    const started = Date.now();
    const proc = spawn(process.execPath, [MAIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      rej(new Error(`website-apiserver ${args.join(' ')} did not finish in 60 s:\n${stderr}`));
    }, 60_000);
    proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    proc.on('exit', (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr, started, ended: Date.now() });
    });
    proc.stdin.end(input ?? '');
  });
}

interface Backup {
  header: { kind: string; version: number; revision: number; objects: number };
  /** name → object, for the default namespace's websites. */
  objects: Map<string, Record<string, any>>;
}

function parseBackup(text: string): Backup {
  const lines = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  const header = lines[0];
  expect(header.kind).toBe('WebsiteApiserverBackup');
  expect(Object.keys(lines[lines.length - 1])).toEqual(['sha256']);
  const objects = new Map<string, Record<string, any>>();
  for (const l of lines.slice(1, -1)) {
    expect(l.key.slice(0, 2)).toEqual(['extensions.example.com/websites', 'default']);
    objects.set(l.key[2], l.object);
  }
  expect(objects.size).toBe(header.objects);
  return { header, objects };
}

/** byName keys a list's items by name. */
const byName = (items: Record<string, any>[]) => new Map(items.map((o) => [o.metadata.name as string, o]));

/** firstWatchLine opens a watch and returns its first event line, parsed (undefined if it ends without one). */
async function firstWatchLine(agent: Agent, url: string): Promise<any> {
  const res = await request(url, { dispatcher: agent, signal: AbortSignal.timeout(15_000) });
  expect(res.statusCode).toBe(200);
  let text = '';
  for await (const chunk of res.body) {
    text += (chunk as Buffer).toString();
    if (text.includes('\n')) break;
  }
  res.body.destroy();
  return text.includes('\n') ? JSON.parse(text.slice(0, text.indexOf('\n'))) : undefined;
}

/** Writers create, patch and delete websites until stopped, recording every acknowledged resourceVersion. */
function startWriters(srv: ServerProcess, agent: Agent, initial: string[]) {
  const live = [...initial];
  const acks: { rv: number; at: number }[] = [];
  const unexpected: string[] = [];
  let stopped = false;
  let seq = 0;
  const loop = async (w: number) => {
    while (!stopped) {
      const r = Math.random();
      const pick = live[Math.floor(Math.random() * live.length)];
      let res: Awaited<ReturnType<typeof call>>;
      if (r < 0.5 || !pick) {
        const name = `w${w}-${seq++}`;
        res = await call(agent, `${srv.url}${COLLECTION}`, 'POST', website(name));
        if (res.status === 201) live.push(name);
      } else if (r < 0.8) {
        res = await call(
          agent,
          `${srv.url}${COLLECTION}/${pick}`,
          'PATCH',
          { spec: { replicas: 1 + (seq++ % 5) } },
          { 'content-type': 'application/merge-patch+json' },
        );
      } else {
        live.splice(live.indexOf(pick), 1);
        res = await call(agent, `${srv.url}${COLLECTION}/${pick}`, 'DELETE');
        if (res.status !== 200) unexpected.push(`${res.status} ${res.text}`);
        continue;
      }
      if (res.status < 300) acks.push({ rv: Number(res.body.metadata.resourceVersion), at: Date.now() });
      // Another writer may have deleted the object being patched.
      else if (res.status !== 404) unexpected.push(`${res.status} ${res.text}`);
    }
  };
  const done = Promise.all(Array.from({ length: WRITERS }, (_, i) => loop(i)));
  return {
    acks,
    unexpected,
    /** waitFor resolves once `n` more writes have been acknowledged. */
    async waitFor(n: number): Promise<void> {
      const target = acks.length + n;
      while (acks.length < target) await new Promise((r) => setTimeout(r, 20));
    },
    async stop(): Promise<void> {
      stopped = true;
      await done;
    },
  };
}

describe('backup and restore', () => {
  it('backs up a running server consistently under writers, restores it, and keeps resourceVersions monotonic with 410 for older ones', async () => {
    const { srv, agent } = await start();
    const initial: string[] = [];
    for (let i = 0; i < 20; i++) {
      expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website(`seed-${i}`))).status).toBe(201);
      initial.push(`seed-${i}`);
    }
    const writers = startWriters(srv, agent, initial);
    await writers.waitFor(30);
    const file = join(tempDir('ws-backup-'), 'websites.backup');
    const taken = await cli(['backup', '--data-dir', srv.dataDir, '--to', file]);
    await writers.waitFor(30);
    await writers.stop();
    expect(writers.unexpected).toEqual([]);
    expect(taken.stderr).toBe('');
    expect(taken.code).toBe(0);
    const backup = parseBackup(readFileSync(file, 'utf8'));
    const S = backup.header.revision;
    expect(taken.stdout).toContain(`Snapshot saved at ${file}: revision ${S}, ${backup.objects.size} objects`);

    // The writers were running while the backup ran, and some of their writes landed after its revision.
    expect(writers.acks.filter((a) => a.at >= taken.started && a.at <= taken.ended).length).toBeGreaterThan(0);
    expect(writers.acks.some((a) => a.rv > S)).toBe(true);
    expect(writers.acks.some((a) => a.rv <= S)).toBe(true);

    // Consistent: exactly the store at revision S, as the live server rebuilds it from its history, and no object
    // newer than S.
    for (const o of backup.objects.values()) expect(Number(o.metadata.resourceVersion)).toBeLessThanOrEqual(S);
    const atS = await call(agent, `${srv.url}${STORED}?resourceVersion=${S}&resourceVersionMatch=Exact`);
    expect(atS.status).toBe(200);
    expect(atS.body.metadata.resourceVersion).toBe(String(S));
    expect(byName(atS.body.items)).toEqual(backup.objects);

    // What a client saw last from the old server: R, newer than the backup.
    const last = await call(agent, `${srv.url}${COLLECTION}`);
    const R = Number(last.body.metadata.resourceVersion);
    expect(R).toBeGreaterThan(S);
    const issued = Math.max(R, ...writers.acks.map((a) => a.rv));
    expect(await srv.stop('SIGTERM')).toBe(0);

    // Offline restore into a directory that does not exist yet.
    const dataDir = join(tempDir('ws-restore-'), 'data');
    const restored = await cli(['restore', '--from', file, '--data-dir', dataDir]);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain(`Restored ${backup.objects.size} objects of revision ${S} into ${dataDir}`);
    expect(readdirSync(dataDir)).toEqual(['data.mdb']);

    const { srv: srv2, agent: agent2 } = await start({ dataDir });
    const list = await call(agent2, `${srv2.url}${STORED}`);
    expect(list.status).toBe(200);
    expect(byName(list.body.items)).toEqual(backup.objects);
    const listRv = Number(list.body.metadata.resourceVersion);
    expect(listRv).toBeGreaterThan(issued);

    // A watch resuming from the discarded future, or from the snapshot itself, must re-list: 410 Expired
    // (kube's watch answers it as an ERROR event), never a silent gap. So must an exact list at R.
    for (const from of [R, S]) {
      const line = await firstWatchLine(agent2, `${srv2.url}${COLLECTION}?watch=true&resourceVersion=${from}&timeoutSeconds=5`);
      expect(line?.type).toBe('ERROR');
      expect(line.object).toMatchObject({ kind: 'Status', status: 'Failure', code: 410, reason: 'Expired' });
    }
    const exactR = await call(agent2, `${srv2.url}${COLLECTION}?resourceVersion=${R}&resourceVersionMatch=Exact`);
    expect(exactR.status).toBe(410);
    expect(exactR.body).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });

    // A watch from the fresh list's resourceVersion works, and new writes are above everything issued before.
    const watched = firstWatchLine(agent2, `${srv2.url}${COLLECTION}?watch=true&resourceVersion=${listRv}`);
    const created = await call(agent2, `${srv2.url}${COLLECTION}`, 'POST', website('after-restore'));
    expect(created.status).toBe(201);
    const createdRv = Number(created.body.metadata.resourceVersion);
    expect(createdRv).toBeGreaterThan(listRv);
    expect(createdRv).toBeGreaterThan(issued);
    const event = await watched;
    expect(event.type).toBe('ADDED');
    expect(event.object.metadata).toMatchObject({ name: 'after-restore', resourceVersion: String(createdRv) });
    const someRestored = [...backup.objects.keys()][0] as string;
    // A label no writer sets: a no-op patch would rightly keep the object's old resourceVersion.
    const patched = await call(
      agent2,
      `${srv2.url}${COLLECTION}/${someRestored}`,
      'PATCH',
      { metadata: { labels: { 'restored-and-patched': 'yes' } } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(patched.status).toBe(200);
    expect(patched.body.metadata.uid).toBe(backup.objects.get(someRestored)?.metadata.uid);
    expect(Number(patched.body.metadata.resourceVersion)).toBeGreaterThan(createdRv);
  });

  it('streams a backup to stdout and restores it from stdin with a chosen revision bump', async () => {
    const { srv, agent } = await start();
    for (const name of ['a', 'b', 'c']) expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website(name))).status).toBe(201);
    expect((await call(agent, `${srv.url}${COLLECTION}/b`, 'DELETE')).status).toBe(200);
    const taken = await cli(['backup', '--data-dir', srv.dataDir, '--to', '-']);
    expect(taken.code).toBe(0);
    const backup = parseBackup(taken.stdout);
    // Three creates and a delete: the delete's revision is the snapshot's, though no object carries it.
    expect(backup.header.revision).toBe(4);
    expect([...backup.objects.keys()]).toEqual(['a', 'c']);
    expect(taken.stderr).toContain('written to stdout: revision 4, 2 objects');
    await srv.stop('SIGTERM');

    const dataDir = tempDir('ws-restore-');
    const restored = await cli(['restore', '--from', '-', '--data-dir', dataDir, '--bump-revision', '7'], taken.stdout);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    const { srv: srv2, agent: agent2 } = await start({ dataDir });
    const list = await call(agent2, `${srv2.url}${STORED}`);
    expect(list.body.metadata.resourceVersion).toBe('11');
    expect(byName(list.body.items)).toEqual(backup.objects);
    // Marked compacted up to 11 by the restore itself (a bump this small is far inside the history's count bound,
    // so nothing else would): the snapshot's revision and the discarded 5..10 are 410, 11 is served.
    for (const from of [4, 10]) {
      const line = await firstWatchLine(agent2, `${srv2.url}${COLLECTION}?watch=true&resourceVersion=${from}&timeoutSeconds=5`);
      expect(line?.object).toMatchObject({ code: 410, reason: 'Expired' });
    }
    expect((await call(agent2, `${srv2.url}${COLLECTION}?resourceVersion=11&resourceVersionMatch=Exact`)).status).toBe(200);
    const created = await call(agent2, `${srv2.url}${COLLECTION}`, 'POST', website('d'));
    expect(created.body.metadata.resourceVersion).toBe('12');
  });

  it('refuses a served data dir (with or without --replace), a damaged backup and a data dir without a database, leaving nothing behind', async () => {
    const { srv, agent } = await start();
    expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('only'))).status).toBe(201);
    const dir = tempDir('ws-backup-');
    const file = join(dir, 'good.backup');
    expect((await cli(['backup', '--data-dir', srv.dataDir, '--to', file])).code).toBe(0);

    // Restoring over the running server's own store is refused (its data dir lock); the server keeps serving it unchanged.
    const over = await cli(['restore', '--from', file, '--data-dir', srv.dataDir]);
    expect(over.code).toBe(1);
    expect(over.stderr).toContain(`is in use by process ${srv.proc.pid}`);
    expect((await call(agent, `${srv.url}${COLLECTION}/only`)).status).toBe(200);

    // One changed byte: the checksum catches it and no store appears.
    const text = readFileSync(file, 'utf8');
    const damaged = join(dir, 'damaged.backup');
    writeFileSync(damaged, text.replace('"name":"only"', '"name":"onlx"'));
    const target = join(tempDir('ws-restore-'), 'data');
    const bad = await cli(['restore', '--from', damaged, '--data-dir', target]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('checksum mismatch');
    expect(existsSync(target)).toBe(false);
    // Cut short: the checksum line is missing.
    const truncated = join(dir, 'truncated.backup');
    writeFileSync(truncated, text.split('\n').slice(0, 2).join('\n'));
    const cut = await cli(['restore', '--from', truncated, '--data-dir', target]);
    expect(cut.code).toBe(1);
    expect(cut.stderr).toContain('truncated');
    expect(existsSync(target)).toBe(false);

    // A directory without a store has nothing to back up (rather than an empty backup of a new one).
    const empty = tempDir('ws-empty-');
    const none = await cli(['backup', '--data-dir', empty, '--to', join(dir, 'none.backup')]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no database');
    expect(readdirSync(empty)).toEqual([]);
    expect(existsSync(join(dir, 'none.backup'))).toBe(false);

    // --replace refuses while a server runs there (its data dir lock; test/data-dir-lock.test.ts has the rest).
    expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('after-backup-1'))).status).toBe(201);
    expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('after-backup-2'))).status).toBe(201);
    const busy = await cli(['restore', '--from', file, '--data-dir', srv.dataDir, '--replace']);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`is in use by process ${srv.proc.pid}`);
    expect((await call(agent, `${srv.url}${COLLECTION}`)).body.items).toHaveLength(3);

    // Usage errors exit 2.
    expect((await cli(['restore', '--from', file])).code).toBe(2);
    expect((await cli(['backup'])).code).toBe(2);
    expect((await cli(['restore', '--from', file, '--data-dir', target, '--bump-revision', '0'])).code).toBe(2);
  });

  it('replaces the store of a stopped server with --replace, keeping the old file and continuing past its revision', async () => {
    const { srv, agent } = await start();
    expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('kept'))).status).toBe(201);
    const file = join(tempDir('ws-backup-'), 'b.backup');
    expect((await cli(['backup', '--data-dir', srv.dataDir, '--to', file])).code).toBe(0);
    const uid = (await call(agent, `${srv.url}${COLLECTION}/kept`)).body.metadata.uid;
    // Three more writes after the backup (revision 1): the old store ends at 4.
    for (const name of ['x', 'y']) expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website(name))).status).toBe(201);
    expect((await call(agent, `${srv.url}${COLLECTION}/kept`, 'DELETE')).status).toBe(200);
    expect(await srv.stop('SIGTERM')).toBe(0);
    // Stopped, the store is still there: kept unless --replace is given.
    const kept = await cli(['restore', '--from', file, '--data-dir', srv.dataDir]);
    expect(kept.code).toBe(1);
    expect(kept.stderr).toContain('already holds a database');

    // A bump of 1 alone would end at 2, a revision the old store gave to "x": it continues after the old store's 4.
    const replaced = await cli(['restore', '--from', file, '--data-dir', srv.dataDir, '--replace', '--bump-revision', '1']);
    expect(replaced.stderr).toBe('');
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toContain('resourceVersions continue after 5');
    const files = readdirSync(srv.dataDir).sort();
    expect(files).toHaveLength(2);
    expect(files[0]).toBe('data.mdb');
    expect(files[1]).toMatch(/^data\.mdb\.replaced-/);

    const { srv: srv2, agent: agent2 } = await start({ dataDir: srv.dataDir });
    const list = await call(agent2, `${srv2.url}${STORED}`);
    expect(list.body.metadata.resourceVersion).toBe('5');
    expect(list.body.items.map((o: any) => [o.metadata.name, o.metadata.uid, o.metadata.resourceVersion])).toEqual([['kept', uid, '1']]);
    const line = await firstWatchLine(agent2, `${srv2.url}${COLLECTION}?watch=true&resourceVersion=4&timeoutSeconds=5`);
    expect(line?.object).toMatchObject({ code: 410, reason: 'Expired' });
  });
});
