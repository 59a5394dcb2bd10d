/**
 * A damaged store, as a client and an operator see it (docs/operations.md, Damaged store):
 * - at start, a data.mdb that is empty, truncated, has a damaged meta page, or whose revision counter is behind its
 *   history is refused with one line on stderr naming the file and the remedy, and exit code 1 (no SIGBUS, no
 *   silent new store); `backup` refuses it the same way;
 * - a stored object that does not decode is answered as kube-apiserver answers a corrupt object in etcd: get and a
 *   plain delete 500 InternalError naming its etcd key, a list (JSON or Table) 500 StoreReadError listing it, a watch
 *   an ERROR event; DELETE with ignoreStoreReadErrorWithClusterBreakingPotential removes it (a watcher then gets
 *   ERROR StoreReadError "saw a DELETED event, but object data is corrupt"), refused on an object that decodes;
 * - `backup` of such a store fails naming the object, and once it is deleted the backup restores.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import { API, call, serversPerTest, tempDir, website, type ServerProcess } from './helpers/server-process.js';
import { LmdbStorage, META_KEYS, openLayout } from '../src/storage/lmdb-storage.js';
import { corruptReason, MAX_REPORTED, UnreadableCollector } from '../src/storage/corrupt-object.js';
import { StorageError } from '../src/storage/errors.js';
import { storageStatus } from '../src/registry/storage-status.js';

const MAIN = resolve(import.meta.dirname, '../dist/main.js');
const COLLECTION = `${API}/namespaces/default/websites`;
const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const KEY = '/registry/extensions.example.com/websites/default/b';
const UNSAFE = 'ignoreStoreReadErrorWithClusterBreakingPotential=true';

const start = serversPerTest();

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** run spawns `node dist/main.js ARGS` and resolves once it exits (60 s at most). */
function run(args: string[]): Promise<Exit> {
  return new Promise((res, rej) => {
    const proc = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      rej(new Error(`website-apiserver ${args.join(' ')} did not exit in 60 s:\n${stdout}${stderr}`));
    }, 60_000);
    proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      res({ code, signal, stdout, stderr });
    });
  });
}

const serve = (dataDir: string) => run(['--port', '0', '--data-dir', dataDir, '--cert-dir', tempDir('ws-certs-')]);

/** aStore writes a store of `n` objects with LmdbStorage itself (a history, counts, a revision counter). */
async function aStore(n: number): Promise<string> {
  const dir = tempDir('ws-damaged-');
  const s = new LmdbStorage({ path: dir, compactionIntervalMs: 0 });
  for (let i = 0; i < n; i++) {
    const name = `w${i}`;
    await s.create(
      { resource: 'extensions.example.com/websites', namespace: 'default', name },
      {
        apiVersion: 'extensions.example.com/v1',
        kind: 'Website',
        metadata: { name, namespace: 'default', uid: `u${i}` },
        spec: { gitRepo: 'x'.repeat(300 + (i % 500)) },
      },
    );
  }
  await s.close();
  return dir;
}

/** refusedInOneLine checks a start refused with exit 1 and a single stderr line about the file. */
function refusedInOneLine(r: Exit, dataDir: string, problem: RegExp): void {
  expect(r.signal).toBeNull();
  expect(r.code).toBe(1);
  const lines = r.stderr.split('\n').filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^website-apiserver: ${join(dataDir, 'data.mdb').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is damaged: `));
  expect(lines[0]).toMatch(problem);
  expect(lines[0]).toContain(`restore it from a backup (website-apiserver restore --from FILE --data-dir ${dataDir} --replace)`);
}

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = openSync(file, 'r+');
  writeSync(fd, bytes, 0, bytes.length, offset);
  closeSync(fd);
}

describe('a damaged data.mdb is refused at start with one line', () => {
  it('an empty (0-byte) data.mdb', async () => {
    const dir = tempDir('ws-damaged-');
    writeFileSync(join(dir, 'data.mdb'), '');
    refusedInOneLine(await serve(dir), dir, /it is empty \(0 bytes\), not an lmdb store/);
    // Nothing was initialized in its place.
    expect(statSync(join(dir, 'data.mdb')).size).toBe(0);
  }, 60_000);

  it('a truncated data.mdb, by the server and by backup', async () => {
    const dir = await aStore(400);
    const file = join(dir, 'data.mdb');
    const full = statSync(file).size;
    truncateSync(file, 8192);
    refusedInOneLine(await serve(dir), dir, new RegExp(`it is 8 KiB but its last page ends at ${full / 1024} KiB \\(truncated\\)`));
    const backup = await run(['backup', '--data-dir', dir, '--to', join(tempDir('ws-backup-'), 'b.ndjson')]);
    expect(backup.code).toBe(1);
    expect(backup.stderr.trim().split('\n')).toHaveLength(1);
    expect(backup.stderr).toMatch(/^website-apiserver backup: .*data\.mdb is damaged: it is 8 KiB but its last page ends at/);
  }, 60_000);

  it('a data.mdb cut to half of its pages, and one cut inside a page', async () => {
    const dir = await aStore(400);
    const file = join(dir, 'data.mdb');
    const full = statSync(file).size;
    truncateSync(file, Math.floor(full / 2 / 4096) * 4096);
    refusedInOneLine(await serve(dir), dir, /but its last page ends at .* \(truncated\)/);
    truncateSync(file, 3 * 4096 + 100);
    refusedInOneLine(await serve(dir), dir, /it is 12388 bytes but its last page ends at .* \(truncated\)/);
  }, 60_000);

  it('a damaged meta page, either one or both', async () => {
    const dir = await aStore(50);
    const file = join(dir, 'data.mdb');
    // Meta page 1's MDB_meta starts after the 24-byte page header of the second page.
    overwrite(file, 4096 + 24, Buffer.alloc(64, 0xab));
    refusedInOneLine(await serve(dir), dir, /meta page 1 is not valid \(wrong magic number\)/);
    overwrite(file, 0, Buffer.alloc(4096, 0x5a));
    refusedInOneLine(await serve(dir), dir, /meta page 0 is not valid \(wrong magic number\)/);
  }, 60_000);

  it('a revision counter behind the newest event of the history', async () => {
    const dir = await aStore(20);
    const layout = openLayout(dir);
    await layout.meta.put(META_KEYS.revision, 5);
    await layout.root.close();
    refusedInOneLine(await serve(dir), dir, /its revision counter \(5\) is behind the newest event of its history \(20\)/);
  }, 60_000);
});

/** corrupt stops the server and writes bytes that do not decode as the stored value of default/b. */
async function corrupt(srv: ServerProcess): Promise<void> {
  expect(await srv.stop()).toBe(0);
  const layout = openLayout(srv.dataDir);
  await layout.objectsText.put(['extensions.example.com/websites', 'default', 'b'], Buffer.from('{"apiVersion":"extensions.example.com/v1","metadata":{"na'));
  await layout.root.close();
}

/** watchText runs a watch until it ends (an ERROR ends it, timeoutSeconds otherwise) and parses its lines. */
async function watchLines(agent: Agent, url: string, query: string): Promise<{ type: string; object: any }[]> {
  const r = await call(agent, `${url}?watch=1&${query}`);
  expect(r.status).toBe(200);
  return r.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; object: any });
}

describe('a stored object that does not decode', () => {
  it('is answered as kube-apiserver answers a corrupt object, removed only by the unsafe delete, and backed up once gone', async () => {
    const first = await start();
    for (const n of ['a', 'b', 'c'])
      expect((await call(first.agent, `${first.srv.url}${COLLECTION}`, 'POST', website(n, {}, { labels: { app: 'x' } }))).status).toBe(201);
    await corrupt(first.srv);
    const { srv, agent } = await start({ dataDir: first.srv.dataDir, certDir: first.srv.certDir });
    const base = srv.url;

    // get, and a plain delete: 500 InternalError naming the key, never "error decoding request body".
    const get = await call(agent, `${base}${COLLECTION}/b`);
    expect(get.status).toBe(500);
    expect(get.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'InternalError', code: 500 });
    expect(get.body.message).toMatch(
      new RegExp(
        `^Internal error occurred: StorageError: corrupt object, Code: 7, Key: ${KEY}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=0: `,
      ),
    );
    expect(get.body.details.causes[0].message).toBe(get.body.message.replace('Internal error occurred: ', ''));
    expect((await call(agent, `${base}${COLLECTION}/a`)).status).toBe(200);
    const plainDelete = await call(agent, `${base}${COLLECTION}/b`, 'DELETE');
    expect(plainDelete.status).toBe(500);
    expect(plainDelete.body.message).toBe(get.body.message);

    // A list fails whole, JSON and Table, one namespace or all, with or without a selector.
    const failedList = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      code: 500,
      reason: 'StoreReadError',
      message: 'failed to read one or more websites.extensions.example.com from the storage',
      details: {
        group: 'extensions.example.com',
        kind: 'websites',
        name: 'list',
        causes: [{ reason: 'UnexpectedServerResponse', field: KEY, message: expect.stringMatching(/^StorageError: corrupt object, Code: 7, Key: /) }],
      },
    };
    for (const [url, headers] of [
      [`${base}${COLLECTION}`, {}],
      [`${base}${COLLECTION}`, TABLE],
      [`${base}${API}/websites`, {}],
      [`${base}${COLLECTION}?labelSelector=app%3Dx`, {}],
      [`${base}${COLLECTION}?limit=1`, {}],
    ] as const) {
      const r = await call(agent, url, 'GET', undefined, headers);
      expect(r.status, url).toBe(500);
      expect(r.body, url).toMatchObject(failedList);
    }

    // A watch from resourceVersion 0 starts with the list: one ERROR event, and the stream ends.
    const fromZero = await watchLines(agent, `${base}${COLLECTION}`, 'resourceVersion=0&timeoutSeconds=5');
    expect(fromZero).toEqual([{ type: 'ERROR', object: failedList }]);

    // The option on an object that decodes is refused; on a missing one 404.
    expect((await call(agent, `${base}${COLLECTION}/a?${UNSAFE}`, 'DELETE')).status).toBe(409);
    expect((await call(agent, `${base}${COLLECTION}/nope?${UNSAFE}`, 'DELETE')).status).toBe(404);
    // A dry run deletes nothing.
    expect((await call(agent, `${base}${COLLECTION}/b?${UNSAFE}&dryRun=All`, 'DELETE')).status).toBe(200);
    expect((await call(agent, `${base}${COLLECTION}/b`)).status).toBe(500);

    // backup refuses the store, naming the object; nothing is written.
    const backupDir = tempDir('ws-backup-');
    const refused = await run(['backup', '--data-dir', srv.dataDir, '--to', join(backupDir, 'refused.ndjson')]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain('holds 1 object that cannot be read, nothing was written: extensions.example.com/websites/default/b (');
    expect(existsSync(join(backupDir, 'refused.ndjson'))).toBe(false);

    // A watch that is live when the unsafe delete happens ends with kube's StoreReadError; so does one replaying it.
    const rv = (await call(agent, `${base}${COLLECTION}/c`)).body.metadata.resourceVersion as string;
    const live = watchLines(agent, `${base}${COLLECTION}`, `resourceVersion=${rv}&timeoutSeconds=10`);
    await new Promise((r) => setTimeout(r, 300));
    const unsafe = await call(agent, `${base}${COLLECTION}/b?${UNSAFE}`, 'DELETE');
    expect(unsafe.status, unsafe.text).toBe(200);
    expect(unsafe.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'b', kind: 'Website' }, code: 200 });
    const deletedError = {
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        code: 500,
        reason: 'StoreReadError',
        message: expect.stringMatching(/^saw a DELETED event, but object data is corrupt - object not decodable revision=\d+: /),
      },
    };
    expect(await live).toEqual([deletedError]);
    expect(await watchLines(agent, `${base}${COLLECTION}`, `resourceVersion=${rv}&timeoutSeconds=5`)).toEqual([deletedError]);
    // A list at a resourceVersion from before the delete holds the object that did not decode: it fails too.
    expect((await call(agent, `${base}${COLLECTION}?resourceVersion=${rv}&resourceVersionMatch=Exact`)).body).toMatchObject({
      code: 500,
      reason: 'StoreReadError',
    });

    // It is gone; everything else reads again.
    expect((await call(agent, `${base}${COLLECTION}/b`)).status).toBe(404);
    const list = await call(agent, `${base}${COLLECTION}`);
    expect(list.status).toBe(200);
    expect(list.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual(['a', 'c']);
    expect((await call(agent, `${base}${COLLECTION}`, 'GET', undefined, TABLE)).body.rows).toHaveLength(2);

    // The backup now succeeds, and restores.
    const file = join(backupDir, 'ok.ndjson');
    const backup = await run(['backup', '--data-dir', srv.dataDir, '--to', file]);
    expect(backup.code, backup.stderr).toBe(0);
    const restored = tempDir('ws-restored-');
    const restore = await run(['restore', '--from', file, '--data-dir', join(restored, 'data')]);
    expect(restore.code, restore.stderr).toBe(0);
    expect(restore.stdout).toContain('Restored 2 objects');
  }, 120_000);

  it('restore --replace of a damaged store keeps it aside and serves the backup', async () => {
    const dir = await aStore(30);
    const file = join(tempDir('ws-backup-'), 'b.ndjson');
    expect((await run(['backup', '--data-dir', dir, '--to', file])).code).toBe(0);
    truncateSync(join(dir, 'data.mdb'), 8192);
    const r = await run(['restore', '--from', file, '--data-dir', dir, '--replace']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/it was damaged: it is 8 KiB but its last page ends at/);
    const { srv, agent } = await start({ dataDir: dir });
    expect((await call(agent, `${srv.url}${API}/websites`)).body.items).toHaveLength(30);
  }, 60_000);
});

describe('the Status of a list that met more undecodable objects than it names', () => {
  it("names MAX_REPORTED of them and ends with kube's TooMany cause; a damaged store is a 500 InternalError", () => {
    const found = new UnreadableCollector();
    for (let i = 0; i <= MAX_REPORTED; i++)
      found.add({ key: { resource: 'extensions.example.com/websites', namespace: 'default', name: `w${i}` }, reason: corruptReason('bad') });
    let err: unknown;
    try {
      found.check();
    } catch (e) {
      err = e;
    }
    const status = storageStatus(err)?.status;
    expect(status).toMatchObject({
      code: 500,
      reason: 'StoreReadError',
      message: 'failed to read one or more websites.extensions.example.com from the storage',
    });
    expect(status?.details?.causes).toHaveLength(MAX_REPORTED + 1);
    expect(status?.details?.causes?.[MAX_REPORTED]).toEqual({ reason: 'TooMany', message: 'too many errors, the list is truncated' });
    expect(storageStatus(new StorageError('Damaged', 'the store /d/data.mdb is damaged (MDB_CORRUPTED)'))?.status).toMatchObject({
      code: 500,
      reason: 'InternalError',
    });
  });
});
