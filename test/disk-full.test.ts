/**
 * Faults of the disk (issue 14, part 5), driven through the real server process:
 *
 * - A full disk: the data directory on a 16 MiB tmpfs beside a filler file. Writes fill it until they fail; each
 *   failure is 503 ServiceUnavailable with Retry-After (see docs/operations.md, Faults of the disk, for why not kube's 500),
 *   nothing of a failed write is readable or watched, reads, lists, watches and /livez keep working, /readyz fails
 *   its storage-readiness check. Deleting the filler brings writes back without a restart (the probe turns /readyz
 *   ok before any client writes), and every acknowledged write survives a kill -9.
 * - An I/O error (EIO) injected by an LD_PRELOAD shim on the writes and fsyncs of data.mdb, and a failed meta page
 *   write, after which lmdb's environment is fatal until the process restarts (/livez fails, so a kubelet would).
 *
 * Every server runs with --unhandled-rejections=strict: one unhandled rejection anywhere ends it, and the tests
 * check that it never exited on its own and never logged `unhandledRejection`.
 * Mounting needs root (CI has it): without it the tmpfs cases are skipped with one printed line; so is the
 * injection without a C compiler.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { request, type Agent } from 'undici';
import { isStorageError } from '../src/storage/errors.js';
import { LmdbStorage } from '../src/storage/lmdb-storage.js';
import { adminAgent, API, call, cleanupTempDirs, startServer, tempDir, website, type JsonResponse, type ServerProcess } from './helpers/server-process.js';

const COLLECTION = `${API}/namespaces/default/websites`;
const STRICT = { NODE_OPTIONS: '--unhandled-rejections=strict' };

// ---- small tmpfs mounts ------------------------------------------------------------------------------------
const mountPoint = mkdtempSync(join(tmpdir(), 'ws-diskfull-'));
const storeMount = mkdtempSync(join(tmpdir(), 'ws-diskfull-store-'));
const mounted: string[] = [];
function tryMount(dir: string, size: string): string | undefined {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.error) return r.error.message;
  if (r.status !== 0) return r.stderr.trim() || `mount exited with ${r.status}`;
  mounted.push(dir);
  return undefined;
}
const mountError = tryMount(mountPoint, '16m') ?? tryMount(storeMount, '8m');
if (mountError) console.log(`disk-full.test.ts: SKIPPED the full-disk cases: cannot mount a tmpfs (${mountError}); they need root`);

// ---- an I/O error injector -----------------------------------------------------------------------------------
// FAULT_CONTROL names a file holding the mode: `write` fails pwrite of data pages (offset >= 8 KiB), `meta` fails
// pwrite of the meta pages (the first 8 KiB), `sync` fails fdatasync/fsync; only on a file named data.mdb.
// biome-ignore lint/complexity/noUselessStringRaw: audit-5xx.test.ts finds this C source by its String.raw tag; raw also keeps a future backslash in it as C wrote it
const SHIM_SOURCE = String.raw`
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
static int faulty(int fd, const char *kind, off_t off) {
  const char *ctl = getenv("FAULT_CONTROL");
  if (!ctl) return 0;
  int c = open(ctl, O_RDONLY);
  if (c < 0) return 0;
  char mode[16] = {0};
  ssize_t m = read(c, mode, sizeof mode - 1);
  close(c);
  if (m <= 0 || strncmp(mode, kind, strlen(kind)) != 0) return 0;
  if (strcmp(kind, "meta") == 0 && off >= 8192) return 0;
  if (strcmp(kind, "write") == 0 && off < 8192) return 0;
  char link[64], target[512];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 8) return 0;
  target[n] = 0;
  return strcmp(target + n - 8, "data.mdb") == 0;
}
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef int (*sync_fn)(int);
static ssize_t faulty_pwrite(const char *name, int fd, const void *b, size_t n, off_t o) {
  pwrite_fn real = (pwrite_fn)dlsym(RTLD_NEXT, name);
  if (faulty(fd, "write", o) || faulty(fd, "meta", o)) { errno = EIO; return -1; }
  return real(fd, b, n, o);
}
static int faulty_sync(const char *name, int fd) {
  sync_fn real = (sync_fn)dlsym(RTLD_NEXT, name);
  if (faulty(fd, "sync", 0)) { errno = EIO; return -1; }
  return real(fd);
}
ssize_t pwrite64(int fd, const void *b, size_t n, off_t o) { return faulty_pwrite("pwrite64", fd, b, n, o); }
ssize_t pwrite(int fd, const void *b, size_t n, off_t o) { return faulty_pwrite("pwrite", fd, b, n, o); }
int fdatasync(int fd) { return faulty_sync("fdatasync", fd); }
int fsync(int fd) { return faulty_sync("fsync", fd); }
`;
function buildShim(): { path?: string; error?: string } {
  const dir = tempDir('ws-fault-shim-');
  writeFileSync(join(dir, 'fault.c'), SHIM_SOURCE);
  const r = spawnSync('cc', ['-shared', '-fPIC', '-O1', '-o', join(dir, 'fault.so'), join(dir, 'fault.c'), '-ldl'], { encoding: 'utf8' });
  if (r.error) return { error: r.error.message };
  return r.status === 0 ? { path: join(dir, 'fault.so') } : { error: r.stderr.trim() };
}
const shim = buildShim();
if (shim.error) console.log(`disk-full.test.ts: SKIPPED the I/O error cases: cannot compile the LD_PRELOAD shim (${shim.error})`);

// ---- servers -----------------------------------------------------------------------------------------------
interface Tracked {
  srv: ServerProcess;
  agent: Agent;
  /** Set when the process exited before the test killed it. */
  exitedOnItsOwn?: string;
  killed: boolean;
}
const running: Tracked[] = [];
async function start(o: Parameters<typeof startServer>[0]): Promise<Tracked> {
  const srv = await startServer({ ...o, env: { ...STRICT, ...o?.env } });
  const t: Tracked = { srv, agent: adminAgent(srv.certDir), killed: false };
  srv.proc.on('exit', (code, signal) => {
    if (!t.killed) t.exitedOnItsOwn = `code ${code} signal ${signal}`;
  });
  running.push(t);
  return t;
}
async function kill(t: Tracked): Promise<void> {
  t.killed = true;
  await t.srv.stop('SIGKILL');
  await t.agent.close().catch(() => undefined);
}
/** expectStillServing: the process never exited and never reported an unhandled rejection. */
function expectStillServing(t: Tracked): void {
  expect(t.exitedOnItsOwn, t.srv.logs().slice(-3000)).toBeUndefined();
  expect(t.srv.logs()).not.toMatch(/unhandledRejection|Unhandled promise rejection|UnhandledPromiseRejection/);
}

afterAll(async () => {
  for (const t of running.splice(0)) await kill(t);
  for (const dir of mounted.splice(0)) execFileSync('umount', ['-l', dir]);
  for (const dir of [mountPoint, storeMount]) rmSync(dir, { recursive: true, force: true });
  cleanupTempDirs();
});

/** create posts one Website carrying `bytes` of incompressible annotation (its event in the history too). */
function create(t: Tracked, name: string, bytes = 0): Promise<JsonResponse> {
  const annotations = bytes ? { 'example.com/ballast': randomBytes(Math.ceil((bytes * 3) / 4)).toString('base64') } : {};
  return call(t.agent, `${t.srv.url}${COLLECTION}`, 'POST', website(name, {}, { annotations }));
}

/** expectUnavailable asserts the Status a write refused on a disk fault gets. */
function expectUnavailable(res: JsonResponse, fault: RegExp): void {
  expect(res.status, res.text).toBe(503);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['retry-after']).toBe('2');
  expect(res.body).toMatchObject({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code: 503,
    reason: 'ServiceUnavailable',
    details: { retryAfterSeconds: 2 },
  });
  expect(res.body.message).toMatch(/^storage cannot commit writes, the request was not applied: /);
  expect(res.body.message).toMatch(fault);
}

async function health(t: Tracked, path: string): Promise<JsonResponse> {
  return call(t.agent, `${t.srv.url}${path}?verbose`);
}

async function until(what: string, ms: number, cond: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A watch kept open through an episode, recording each event's type, name and resourceVersion. */
interface Watched {
  events: { type: string; name: string; rv: number }[];
  close(): void;
}
async function openWatch(t: Tracked, fromRv: string): Promise<Watched> {
  const res = await request(`${t.srv.url}${COLLECTION}?watch=true&resourceVersion=${fromRv}`, { dispatcher: t.agent });
  expect(res.statusCode).toBe(200);
  const events: Watched['events'] = [];
  let buf = '';
  res.body.on('data', (chunk: Buffer) => {
    buf += chunk.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const e = JSON.parse(buf.slice(0, i)) as { type: string; object: { metadata: { name: string; resourceVersion: string } } };
      buf = buf.slice(i + 1);
      events.push({ type: e.type, name: e.object.metadata.name, rv: Number(e.object.metadata.resourceVersion) });
    }
  });
  res.body.on('error', () => undefined);
  return { events, close: () => res.body.destroy() };
}

/** expectDense asserts watch events come in strictly consecutive resourceVersions after `from`. */
function expectDense(events: Watched['events'], from: number): void {
  events.forEach((e, i) => {
    expect(e.rv, `event ${i} (${e.type} ${e.name})`).toBe(from + i + 1);
  });
}

describe.skipIf(mountError !== undefined)('a full disk (tmpfs of 16 MiB)', () => {
  const dataDir = join(mountPoint, 'data');
  const filler = join(mountPoint, 'filler');
  const certDir = tempDir('ws-diskfull-certs-');
  let t: Tracked;
  let watch: Watched;
  let startRv = 0;
  const early: string[] = [];
  const acked = new Map<string, number>();
  const refused = new Set<string>();

  it('refuses each write it cannot commit with 503 ServiceUnavailable and Retry-After, and stays up', async () => {
    mkdirSync(dataDir);
    // 6 MiB the test frees later, on the same filesystem as the data.
    writeFileSync(filler, randomBytes(6 * 1024 * 1024));
    t = await start({ dataDir, certDir });
    for (const name of ['early-a', 'early-b']) {
      const res = await create(t, name);
      expect(res.status).toBe(201);
      early.push(name);
      acked.set(name, Number(res.body.metadata.resourceVersion));
    }
    startRv = Math.max(...acked.values());
    watch = await openWatch(t, String(startRv));

    // Four writers of 64 KiB objects until three writes in a row fail (about 80 fit in the 10 MiB left).
    let consecutive = 0;
    let n = 0;
    const writer = async () => {
      while (consecutive < 3 && n < 400) {
        const name = `fill-${n++}`;
        const res = await create(t, name, 64 * 1024);
        if (res.status === 201) {
          consecutive = 0;
          acked.set(name, Number(res.body.metadata.resourceVersion));
        } else {
          consecutive++;
          refused.add(name);
          // On tmpfs lmdb meets ENOSPC, or EIO when a page write comes back short; never its map size first.
          expectUnavailable(res, /\((ENOSPC|EIO)\)$/);
        }
      }
    };
    await Promise.all([writer(), writer(), writer(), writer()]);
    expect(consecutive).toBeGreaterThanOrEqual(3);
    expect(acked.size).toBeGreaterThan(10);
    expect(refused.size).toBeGreaterThanOrEqual(3);
    expect(t.srv.logs()).not.toContain('MDB_MAP_FULL');
    expectStillServing(t);
  });

  it('keeps serving reads, lists, watches and health; /readyz fails storage-readiness, /livez stays ok', async () => {
    // Updates and deletes fail the same way (or fit in pages lmdb freed earlier): nothing half-applied either way.
    const patched = await call(
      t.agent,
      `${t.srv.url}${COLLECTION}/early-a`,
      'PATCH',
      JSON.stringify({ metadata: { annotations: { 'example.com/ballast': randomBytes(48 * 1024).toString('base64') } } }),
      { 'content-type': 'application/merge-patch+json' },
    );
    if (patched.status === 503) expectUnavailable(patched, /\((ENOSPC|EIO)\)$/);
    else expect(patched.status).toBe(200);
    const gotA = await call(t.agent, `${t.srv.url}${COLLECTION}/early-a`);
    expect(gotA.status).toBe(200);
    if (patched.status === 503) expect(Number(gotA.body.metadata.resourceVersion)).toBe(acked.get('early-a'));
    else acked.set('early-a', Number(gotA.body.metadata.resourceVersion));

    for (const [name, rv] of acked) {
      const got = await call(t.agent, `${t.srv.url}${COLLECTION}/${name}`);
      expect(got.status, name).toBe(200);
      expect(Number(got.body.metadata.resourceVersion)).toBe(rv);
    }
    // A write whose commit failed is not readable: its object never became visible.
    for (const name of refused) expect((await call(t.agent, `${t.srv.url}${COLLECTION}/${name}`)).status, name).toBe(404);
    const list = await call(t.agent, `${t.srv.url}${COLLECTION}`);
    expect(list.status).toBe(200);
    expect(new Set(list.body.items.map((i: { metadata: { name: string } }) => i.metadata.name))).toEqual(new Set(acked.keys()));

    // Readiness follows the last commit: the probe (first 0.5 s after a failure) writes a few bytes, which may
    // still fit in pages lmdb freed while 64 KiB writes do not. So check it right after a write failed.
    const again = await create(t, 'fill-again', 192 * 1024);
    expectUnavailable(again, /\((ENOSPC|EIO)\)$/);
    refused.add('fill-again');
    const livez = await health(t, '/livez');
    expect(livez.status).toBe(200);
    expect(livez.text).toContain('[+]storage ok');
    const readyz = await health(t, '/readyz');
    expect(readyz.status).toBe(500);
    expect(readyz.text).toContain('[+]storage ok');
    expect(readyz.text).toContain('[-]storage-readiness failed: reason withheld');
    // Reads are served: the read probe passes.
    expect(readyz.text).toContain('[+]storage-read ok');
    expect((await health(t, '/healthz')).status).toBe(500);
    // As kube's healthz: a probe may leave the check out (?exclude=, healthz.go handleRootHealth).
    const excluded = await call(t.agent, `${t.srv.url}/readyz?verbose&exclude=storage-readiness&exclude=nope`);
    expect(excluded.status).toBe(200);
    expect(excluded.text).toContain('[+]storage-readiness excluded: ok');
    expect(excluded.text).toContain('warn: some health checks cannot be excluded: no matches for "nope"');

    // The watch got every acknowledged write once, in dense resourceVersions, and nothing of a refused one.
    await until('the watch to catch up', 10_000, async () => watch.events.length >= [...acked.values()].filter((rv) => rv > startRv).length);
    expectDense(watch.events, startRv);
    const watched = new Map(watch.events.map((e) => [e.name, e.rv]));
    for (const [name, rv] of acked) if (rv > startRv) expect(watched.get(name), name).toBe(rv);
    for (const name of refused) expect(watched.has(name), name).toBe(false);
    expectStillServing(t);
  });

  it('commits again once space is freed, without a restart: /readyz recovers by itself, then writes succeed', async () => {
    unlinkSync(filler);
    // No client write needed: the store's probe finds out (at most 5 s between probes).
    await until('/readyz to pass', 20_000, async () => (await health(t, '/readyz')).status === 200);
    const before = Math.max(...acked.values());
    for (let i = 0; i < 5; i++) {
      const res = await create(t, `after-${i}`, 16 * 1024);
      expect(res.status, res.text).toBe(201);
      acked.set(`after-${i}`, Number(res.body.metadata.resourceVersion));
    }
    // The refused writes used no resourceVersion: the next one follows the last acknowledged write.
    expect(acked.get('after-0')).toBe(before + 1);
    await until('the watch to see the new writes', 10_000, async () => watch.events.some((e) => e.name === 'after-4'));
    expectDense(watch.events, startRv);
    watch.close();
    expect(t.srv.logs()).toContain('storage cannot commit writes');
    expect(t.srv.logs()).toContain('storage commits writes again');
    expectStillServing(t);
  });

  it('keeps every acknowledged write through a kill -9 and a restart', async () => {
    await kill(t);
    const again = await start({ dataDir, certDir });
    for (const [name, rv] of acked) {
      const got = await call(again.agent, `${again.srv.url}${COLLECTION}/${name}`);
      expect(got.status, name).toBe(200);
      expect(Number(got.body.metadata.resourceVersion), name).toBe(rv);
    }
    for (const name of refused) expect((await call(again.agent, `${again.srv.url}${COLLECTION}/${name}`)).status, name).toBe(404);
    const res = await create(again, 'after-restart');
    expect(res.status).toBe(201);
    expect(Number(res.body.metadata.resourceVersion)).toBe(Math.max(...acked.values()) + 1);
    expectStillServing(again);
    await kill(again);
  });
});

describe.skipIf(shim.path === undefined)('an I/O error (EIO injected with LD_PRELOAD)', () => {
  const control = join(tempDir('ws-fault-ctl-'), 'mode');
  const setMode = (mode: string) => writeFileSync(control, mode);
  const env = () => ({ LD_PRELOAD: shim.path as string, FAULT_CONTROL: control });

  it('a failed page write: 503 with EIO, nothing stored, reads and watches go on, writes come back', async () => {
    setMode('');
    const t = await start({ env: env() });
    const first = await create(t, 'io-a');
    expect(first.status).toBe(201);
    const rv = Number(first.body.metadata.resourceVersion);
    const watch = await openWatch(t, String(rv));
    setMode('write');
    // lmdb writes pages the file already has through its map; a write that grows the file meets the pwrite error.
    const acked: string[] = [];
    let refused: JsonResponse | undefined;
    let refusedName = '';
    for (let i = 0; i < 40 && !refused; i++) {
      const res = await create(t, `io-b${i}`, 32 * 1024);
      if (res.status === 201) acked.push(`io-b${i}`);
      else [refused, refusedName] = [res, `io-b${i}`];
    }
    expect(refused, 'no write failed with the page writes failing').toBeDefined();
    expectUnavailable(refused as JsonResponse, /: input\/output error \(EIO\)$/);
    expect((await call(t.agent, `${t.srv.url}${COLLECTION}/${refusedName}`)).status).toBe(404);
    for (const name of ['io-a', ...acked]) expect((await call(t.agent, `${t.srv.url}${COLLECTION}/${name}`)).status, name).toBe(200);
    expect((await call(t.agent, `${t.srv.url}${COLLECTION}`)).status).toBe(200);
    expect((await health(t, '/readyz')).text).toContain('[-]storage-readiness failed');
    expect((await health(t, '/livez')).status).toBe(200);

    setMode('');
    await until('/readyz to pass', 20_000, async () => (await health(t, '/readyz')).status === 200);
    const back = await create(t, 'io-c');
    expect(back.status).toBe(201);
    expect(Number(back.body.metadata.resourceVersion)).toBe(rv + acked.length + 1);
    await until('the watch to see io-c', 10_000, async () => watch.events.some((e) => e.name === 'io-c'));
    expect(watch.events.map((e) => e.name)).toEqual([...acked, 'io-c']);
    expectDense(watch.events, rv);
    watch.close();
    expectStillServing(t);
    await kill(t);
  });

  it('a failed fsync after a visible commit: 500, and the write is read and watched as it was committed', async () => {
    setMode('');
    const t = await start({ env: env() });
    const first = await create(t, 'sync-a');
    const rv = Number(first.body.metadata.resourceVersion);
    const watch = await openWatch(t, String(rv));
    setMode('sync');
    // lmdb made the commit visible before its fsync failed: the outcome is not "not applied", so no 503.
    const res = await create(t, 'sync-b');
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError' });
    expect(res.body.message).toContain('the write was committed, but flushing it to disk failed (input/output error (EIO))');
    expect(res.headers['retry-after']).toBeUndefined();
    const got = await call(t.agent, `${t.srv.url}${COLLECTION}/sync-b`);
    expect(got.status).toBe(200);
    expect(Number(got.body.metadata.resourceVersion)).toBe(rv + 1);
    await until('the watch to see sync-b', 10_000, async () => watch.events.length >= 1);
    expect(watch.events[0]).toEqual({ type: 'ADDED', name: 'sync-b', rv: rv + 1 });
    setMode('');
    await until('/readyz to pass', 20_000, async () => (await health(t, '/readyz')).status === 200);
    expect((await create(t, 'sync-c')).status).toBe(201);
    watch.close();
    expectStillServing(t);
    await kill(t);
  });

  it('a failed meta page write leaves lmdb fatal: writes 503 at once (none hangs), /livez fails for a restart, which heals it', async () => {
    setMode('');
    const dataDir = tempDir('ws-fault-data-');
    const certDir = tempDir('ws-fault-certs-');
    const t = await start({ dataDir, certDir, env: env() });
    expect((await create(t, 'meta-a')).status).toBe(201);
    setMode('meta');
    expectUnavailable(await create(t, 'meta-b'), /\(EIO\)$/);
    setMode('');
    // The environment stays fatal though the disk is fine again: every later write is refused at once.
    const later = await Promise.all([0, 1, 2].map((i) => create(t, `meta-c${i}`)));
    for (const res of later) expectUnavailable(res, /\(MDB_PANIC\)$/);
    const livez = await health(t, '/livez');
    expect(livez.status).toBe(500);
    expect(livez.text).toContain('[-]storage failed: reason withheld');
    expect(t.srv.logs()).toContain('storage environment is fatal');
    // No read can be served either: the read probe fails /readyz, and the store's monitor says why (within its 5 s).
    expect((await health(t, '/readyz')).text).toContain('[-]storage-read failed: reason withheld');
    await until('the log to say reads fail', 10_000, async () => t.srv.logs().includes('storage cannot serve reads'));
    expect(t.srv.logs()).toMatch(/"fault":"[^"]*MDB_PANIC[^"]*".*storage cannot serve reads/);
    expectStillServing(t);
    await kill(t);

    const again = await start({ dataDir, certDir, env: env() });
    expect((await call(again.agent, `${again.srv.url}${COLLECTION}/meta-a`)).status).toBe(200);
    expect((await call(again.agent, `${again.srv.url}${COLLECTION}/meta-b`)).status).toBe(404);
    expect((await create(again, 'meta-d')).status).toBe(201);
    expect((await health(again, '/livez')).status).toBe(200);
    expectStillServing(again);
    await kill(again);
  });
});

describe.skipIf(mountError !== undefined)('the lmdb storage on a full disk (in process)', () => {
  // lmdb's `flushed` is the flush promise of its latest batch, and a failed batch's never settles: a write that
  // committed while the next batch was queued, then awaited `flushed`, waited forever when that batch failed (and
  // its change event, never published, held back every later event of every watch).
  it('answers a committed write whose next batch fails, and publishes its event: nothing waits forever', async () => {
    const filler = join(storeMount, 'filler');
    const store = new LmdbStorage({ path: join(storeMount, 'data'), compactionIntervalMs: 0 });
    const key = (name: string) => ({ resource: 'extensions.example.com/websites', namespace: 'default', name });
    const big = (name: string, bytes: number) => ({ metadata: { name }, spec: { ballast: randomBytes(bytes).toString('base64') } });
    try {
      writeFileSync(filler, randomBytes(300 * 1024));
      await store.create(key('u'), { metadata: { name: 'u' }, spec: { n: -1 } });
      for (let i = 0; ; i++) {
        const failed = await store.create(key(`fill-${i}`), big(`fill-${i}`, 48 * 1024)).then(
          () => false,
          () => true,
        );
        if (failed) break;
      }
      unlinkSync(filler);
      const seen: number[] = [];
      store.watch({ resource: 'extensions.example.com/websites' }, store.currentRevision(), {
        onEvent: (e) => seen.push(e.revision),
        onError: () => undefined,
      });
      const within = <T>(p: Promise<T>) => Promise.race([p, new Promise<'hung'>((r) => setTimeout(r, 5000, 'hung'))]);
      const committed: number[] = [];
      for (let round = 0; round < 8; round++) {
        let huge: Promise<unknown> | undefined;
        // The update's callback runs inside its batch: the huge create queued from it lands in the next batch
        // (or, now and then, joins the update's own batch, which then fails as a whole).
        const update = store.update(key('u'), (cur) => {
          setImmediate(() => (huge = store.create(key(`huge-${round}`), big(`huge-${round}`, 3 * 1024 * 1024))));
          return { ...cur, spec: { n: round } };
        });
        const outcome = await within(
          update.then(
            () => 'committed',
            (e: unknown) => (isStorageError(e, 'Unavailable') ? 'refused' : e),
          ),
        );
        expect(outcome, `round ${round}`).toMatch(/^(committed|refused)$/);
        if (outcome === 'committed') committed.push(round);
        const refused = await (huge as Promise<unknown>).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isStorageError(refused, 'Unavailable'), String(refused)).toBe(true);
        expect(await store.get(key(`huge-${round}`))).toBeUndefined();
      }
      expect(committed.length, 'no round had the update commit before the failing batch').toBeGreaterThan(0);
      // Every committed update was published, in order, with nothing of the refused writes between them.
      await new Promise((r) => setImmediate(r));
      expect(seen.length).toBe(committed.length);
      seen.forEach((rv, i) => {
        expect(rv).toBe((seen[0] as number) + i);
      });
      const u = await store.get(key('u'));
      expect(u?.metadata.resourceVersion).toBe(String(seen[seen.length - 1]));
      expect(u?.['spec']).toEqual({ n: committed[committed.length - 1] });
    } finally {
      await store.close();
    }
  });
});
