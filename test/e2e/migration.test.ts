/**
 * Moving a live CRD's objects to this server and back (`website-apiserver migrate`, docs/migration.md), on the e2e
 * control plane (kube-apiserver 1.37, its etcd, kube-controller-manager with the garbage collector and the namespace
 * controller), while a client-go informer (informer-probe -mode controller) and a kubectl write loop run throughout:
 *
 *   a CRD served by kube-apiserver, MIGRATION_OBJECTS objects (default 10,000) in 20 namespaces: some with finalizers,
 *   some owned by a ConfigMap, some with status, two managers' managedFields on some, some being deleted (a
 *   deletionTimestamp held by a finalizer) → migrate → roll back (--back, through kube's etcd) → migrate again.
 *
 * After each move: every object is identical except resourceVersion (compared with what the other side held when it
 * stopped taking writes; the kubectl loop's own objects by identity and their last label), the informer's cache equals
 * the server's list, it re-listed at most once for the move, and no kubectl command failed (writes during the pause
 * are answered 429 with Retry-After, which kubectl retries). After the first move the garbage collector still deletes
 * an owner's dependents, and after the last one a namespace is deleted with its objects.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { createServer } from 'node:net';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { Rest } from '../../src/migration/rest.js';
import { generateServingCertificate } from '../../src/manifests/render.js';
import { suffix } from './helpers-access.js';
import { kubectl, kubectlOk, waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { startWebsiteServer, stopWebsiteServer } from './harness/website-server.js';

const env = e2e();
const MAIN = resolve(import.meta.dirname, '../../dist/main.js');
const COUNT = Number(process.env['MIGRATION_OBJECTS'] ?? 10_000);
const NAMESPACES = 20;
const S = suffix();
const GROUP = `mig${S}.example.com`;
const PLURAL = 'widgets';
const CRD_NAME = `${PLURAL}.${GROUP}`;
const ns = (i: number) => `mig-${S}-${i}`;
const SERVER_NS = `mig-${S}-server`;
// The objects the kubectl loop writes (one per namespace 3..7, clear of the garbage collector's namespace 2 and of the
// deleted namespace): compared by identity and their last label only.
const LOOP = new Set(Array.from({ length: 5 }, (_, i) => `${ns(i + 3)}/w-${i + 3}`));
const admin = env.kubeconfig.admin;
const kube = new Rest(env.server, { ca: readFileSync(env.caFile), headers: { authorization: `Bearer ${env.tokens.admin}` } });

type Obj = { metadata: { namespace?: string; name: string; resourceVersion?: string; uid?: string; labels?: Record<string, string> } } & Record<
  string,
  unknown
>;
const key = (o: Obj) => `${o.metadata.namespace}/${o.metadata.name}`;
const withoutVersion = (o: Obj) => {
  const { resourceVersion: _rv, ...metadata } = o.metadata;
  return { ...o, metadata };
};

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: CRD_NAME },
  spec: {
    group: GROUP,
    names: { plural: PLURAL, singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    scope: 'Namespaced',
    versions: ['v1', 'v1beta1'].map((name) => ({
      name,
      served: true,
      storage: name === 'v1',
      subresources: { status: {} },
      additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: { type: 'object', properties: { size: { type: 'integer', minimum: 0 }, color: { type: 'string' } } },
            status: { type: 'object', properties: { ready: { type: 'boolean' }, observed: { type: 'integer' } } },
          },
        },
      },
    })),
  },
};

let dir = '';
let port = 0;
let pidFile = '';
let probe: ControllerProbe | undefined;
const owners = new Map<string, string>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'migration-e2e-'));
  const crdFile = join(dir, 'widgets.yaml');
  writeFileSync(crdFile, YAML.stringify(crd));
  await kubectlOk(admin, ['apply', '-f', crdFile]);
  await kubectlOk(admin, ['wait', '--for=condition=Established', `crd/${CRD_NAME}`, '--timeout=60s']);
  for (let i = 0; i < NAMESPACES; i++) await kubectlOk(admin, ['create', 'namespace', ns(i)]);
  await kubectlOk(admin, ['create', 'namespace', SERVER_NS]);
  for (let i = 0; i < NAMESPACES; i++) {
    const cm = await kube.ok<Obj>('POST', `/api/v1/namespaces/${ns(i)}/configmaps`, { metadata: { name: 'owner' } });
    owners.set(ns(i), cm.body.metadata.uid as string);
  }
  await populate();

  // This server, delegated like the suite's own, serving the same CRD file, behind an ExternalName Service in its
  // own namespace (a serving certificate for that Service's name).
  port = await freePort();
  const serving = generateServingCertificate(SERVER_NS);
  writeFileSync(join(dir, 'tls.crt'), serving.cert);
  writeFileSync(join(dir, 'tls.key'), serving.key, { mode: 0o600 });
  writeFileSync(join(dir, 'ca.crt'), serving.caCert);
  const flag = (name: string) => env.website.args[env.website.args.indexOf(name) + 1] as string;
  pidFile = join(dir, 'server.pid');
  await startWebsiteServer({
    args: [
      MAIN,
      '--port',
      String(port),
      '--bind-address',
      '127.0.0.1',
      '--kubeconfig',
      flag('--kubeconfig'),
      '--tls-cert-file',
      join(dir, 'tls.crt'),
      '--tls-private-key-file',
      join(dir, 'tls.key'),
      '--data-dir',
      join(dir, 'data'),
      '--cert-dir',
      join(dir, 'certs'),
      '--enable-reconcilers=false',
      '--crd',
      crdFile,
    ],
    logFile: join(dir, 'server.log'),
    pidFile,
    url: `https://127.0.0.1:${port}`,
  });
  await kubectlOk(admin, ['apply', '-f', '-'], {
    input: YAML.stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'website-apiserver', namespace: SERVER_NS },
      spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'https', port, protocol: 'TCP' }] },
    }),
  });
  probe = new ControllerProbe(join(env.binDir, 'informer-probe'), admin, `${PLURAL}.v1.${GROUP}`);
  await probe.until('the informer synced', (e) => e.some((x) => x.type === 'SYNCED'), 120_000);
}, 900_000);

afterAll(async () => {
  probe?.stop();
  // Nothing of this test may stay behind for the others: the APIServices go (the group with them), kube's etcd copy
  // of the objects (finalizers nobody can clear through the API), the CRD, the namespaces, the server.
  await kubectl(admin, ['delete', 'apiservice', `v1.${GROUP}`, `v1beta1.${GROUP}`, '--ignore-not-found']);
  const etcd = new Etcd3({ hosts: [env.etcdUrl] });
  await etcd.delete().prefix(`/registry/${GROUP}/`);
  etcd.close();
  await kubectl(admin, ['delete', 'crd', CRD_NAME, '--ignore-not-found', '--timeout=60s']);
  await kubectl(admin, ['delete', 'namespace', ...Array.from({ length: NAMESPACES }, (_, i) => ns(i)), SERVER_NS, '--ignore-not-found', '--wait=false']);
  if (pidFile) await stopWebsiteServer(pidFile);
  await kube.close();
  if (dir && !process.env['E2E_KEEP']) rmSync(dir, { recursive: true, force: true });
}, 300_000);

describe('migrate a live CRD here, back, and here again', () => {
  it('keeps every object, the informer in step and every kubectl command working, across the three moves', async () => {
    const p = probe as ControllerProbe;
    const moves: { name: string; args: string[] }[] = [
      { name: 'here', args: [] },
      { name: 'back', args: ['--back', '--kube-etcd-servers', env.etcdUrl] },
      { name: 'here again', args: [] },
    ];
    for (const move of moves) {
      const loop = startKubectlLoop();
      const listsBefore = p.relists();
      // What the side giving the objects up holds when it stops taking writes is read after the move: kube's etcd
      // copy (retired, untouched) after a move here; this server's store (frozen) after a move back.
      const run = await runMigrate(move.args);
      const failed = await loop.stop();
      expect(run.code, `${move.name}: migrate failed:\n${run.output}`).toBe(0);
      expect(run.output).toMatch(/writes were paused for \d+\.\d s/);
      expect(failed, `${move.name}: kubectl commands failed:\n${JSON.stringify(failed, null, 1)}`).toEqual([]);
      expect(loop.count(), `${move.name}: the kubectl loop ran`).toBeGreaterThan(3);

      const served = await listThroughKube();
      const given = move.name === 'back' ? await listHere() : await listKubeEtcd();
      expect(served.size).toBe(given.size);
      const differing: string[] = [];
      for (const [k, o] of given) {
        const s = served.get(k);
        if (!s) differing.push(`${k}: missing`);
        else if (LOOP.has(k)) {
          if (s.metadata.uid !== o.metadata.uid) differing.push(`${k}: uid ${s.metadata.uid} != ${o.metadata.uid}`);
        } else if (!isDeepStrictEqual(withoutVersion(s), withoutVersion(o))) {
          differing.push(`${k}:\n  served ${JSON.stringify(withoutVersion(s))}\n  given  ${JSON.stringify(withoutVersion(o))}`);
        }
      }
      expect(differing.slice(0, 5), `${move.name}: ${differing.length} objects differ`).toEqual([]);
      // The loop's objects carry its last write.
      for (const k of LOOP) expect(served.get(k)?.metadata.labels?.['loop'], k).toBe(String(loop.last(k)));

      // The informer's cache is the server's list, and it re-listed at most once for the move.
      let mismatch = '';
      const cache = await waitFor(
        `${move.name}: the informer's cache to equal the list`,
        async () => {
          const items = await p.dump();
          const list = await listThroughKube();
          const wrong = items.filter((i) => list.get(`${i.namespace}/${i.name}`)?.metadata.resourceVersion !== i.resourceVersion);
          const same = items.length === list.size && wrong.length === 0;
          mismatch = `cache ${items.length}, list ${list.size}, ${wrong.length} differ (${JSON.stringify(wrong.slice(0, 2))} vs ${JSON.stringify(
            wrong.slice(0, 2).map((w) => list.get(`${w.namespace}/${w.name}`)?.metadata.resourceVersion),
          )}); probe: ${JSON.stringify(p.lines.filter((l) => !['ADDED', 'MODIFIED', 'DELETED', 'CACHE'].includes(l.type)).slice(-8))}`;
          return same ? items : undefined;
        },
        60_000,
        1000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}: ${mismatch}`);
      });
      expect(cache.length).toBe(COUNT - deletedByGc);
      expect(p.relists() - listsBefore, `${move.name}: re-lists (${JSON.stringify(p.listEvents().slice(-4))})`).toBeLessThanOrEqual(1);

      if (move.name === 'here') await garbageCollectionStillWorks();
    }
    await namespaceDeletionStillWorks();
  }, 1_800_000);
});

// populate creates the objects through kube-apiserver: every seventh with a finalizer, every other one owned by its
// namespace's ConfigMap, every third with status (another manager), every fourth relabelled (a third manager),
// those with a finalizer and a multiple of 50 deleted while it holds them. The last namespace has no finalizers (it
// is deleted at the end).
async function populate(): Promise<void> {
  const base = `/apis/${GROUP}/v1`;
  await pool(COUNT, 16, async (i) => {
    const n = ns(i % NAMESPACES);
    const held = i % 7 === 0 && i % NAMESPACES !== NAMESPACES - 1;
    const meta = {
      name: `w-${i}`,
      labels: { index: String(i), parity: i % 2 ? 'odd' : 'even' },
      ...(held ? { finalizers: ['example.com/hold'] } : {}),
      ...(i % 2 === 0 ? { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owners.get(n) as string }] } : {}),
    };
    const path = `${base}/namespaces/${n}/${PLURAL}`;
    await kube.ok('POST', `${path}?fieldManager=creator`, { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: meta, spec: { size: i % 7, color: 'blue' } });
    if (i % 3 === 0) {
      await kube.ok('PATCH', `${path}/w-${i}/status?fieldManager=status-writer`, { status: { ready: true, observed: i } }, 'application/merge-patch+json');
    }
    if (i % 4 === 0) await kube.ok('PATCH', `${path}/w-${i}?fieldManager=labeler`, { metadata: { labels: { tier: 'gold' } } }, 'application/merge-patch+json');
    if (held && i % 50 === 0) await kube.ok('DELETE', `${path}/w-${i}`);
  });
}

async function pool(n: number, width: number, f: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await f(next++);
    }),
  );
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => res(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

async function listAll(rest: Rest, path: string): Promise<Map<string, Obj>> {
  const out = new Map<string, Obj>();
  let token = '';
  for (;;) {
    const a = await rest.ok<{ items: Obj[]; metadata: { continue?: string } }>(
      'GET',
      `${path}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
    );
    for (const i of a.body.items) out.set(key(i), { ...i, apiVersion: `${GROUP}/v1`, kind: 'Widget' });
    token = a.body.metadata.continue ?? '';
    if (!token) return out;
  }
}

const listThroughKube = () => listAll(kube, `/apis/${GROUP}/v1/${PLURAL}`);

async function listHere(): Promise<Map<string, Obj>> {
  const here = new Rest(`https://127.0.0.1:${port}`, {
    ca: readFileSync(join(dir, 'ca.crt')),
    headers: { authorization: `Bearer ${env.tokens.admin}` },
    servername: `website-apiserver.${SERVER_NS}.svc`,
  });
  try {
    return await listAll(here, `/apis/${GROUP}/v1/${PLURAL}`);
  } finally {
    await here.close();
  }
}

async function listKubeEtcd(): Promise<Map<string, Obj>> {
  const etcd = new Etcd3({ hosts: [env.etcdUrl] });
  try {
    const all = await etcd.getAll().prefix(`/registry/${GROUP}/${PLURAL}/`).strings();
    return new Map(
      Object.values(all)
        .map((v) => JSON.parse(v) as Obj)
        .map((o) => [key(o), o]),
    );
  } finally {
    etcd.close();
  }
}

async function runMigrate(extra: string[]): Promise<{ code: number; output: string }> {
  const child = spawn(
    process.execPath,
    [
      MAIN,
      'migrate',
      '--crd',
      CRD_NAME,
      '--server',
      `https://127.0.0.1:${port}`,
      '--kubeconfig',
      admin,
      '--service',
      `${SERVER_NS}/website-apiserver:${port}`,
      '--ca-file',
      join(dir, 'ca.crt'),
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr?.on('data', (b: Buffer) => (output += b.toString()));
  const code = await new Promise<number>((r) => child.on('exit', (c) => r(c ?? 1)));
  process.stderr.write(`[migration] ${extra.includes('--back') ? 'back' : 'here'}:\n${output}`);
  return { code, output };
}

// startKubectlLoop relabels the loop's objects one command at a time (a kubectl label, then a kubectl get) until
// stopped, and records every command that failed.
function startKubectlLoop() {
  let stopped = false;
  let n = 0;
  const last = new Map<string, number>();
  const failed: { args: string[]; code: number; stderr: string; at: string }[] = [];
  const running = (async () => {
    while (!stopped) {
      const k = [...LOOP][n % LOOP.size] as string;
      const [namespace, name] = k.split('/') as [string, string];
      n++;
      const label = await kubectl(admin, ['label', '--overwrite', '-n', namespace, `${PLURAL}.${GROUP}`, name, `loop=${n}`]);
      if (label.code !== 0) failed.push({ args: ['label', k], code: label.code, stderr: label.stderr, at: new Date().toISOString() });
      else last.set(k, n);
      const get = await kubectl(admin, ['get', '-n', namespace, `${PLURAL}.${GROUP}`, name, '-o', 'name']);
      if (get.code !== 0) failed.push({ args: ['get', k], code: get.code, stderr: get.stderr, at: new Date().toISOString() });
    }
  })();
  return {
    async stop() {
      stopped = true;
      await running;
      return failed;
    },
    count: () => n,
    last: (k: string) => last.get(k),
  };
}

let deletedByGc = 0;

// garbageCollectionStillWorks deletes namespace 2's owner ConfigMap: kube's garbage collector, now reading and
// deleting the widgets through this server, deletes its dependents (those with a finalizer stay, being deleted).
async function garbageCollectionStillWorks(): Promise<void> {
  const n = ns(2);
  const owned = [...(await listThroughKube()).values()].filter(
    (o) => o.metadata.namespace === n && (o.metadata as { ownerReferences?: unknown[] }).ownerReferences,
  );
  expect(owned.length).toBeGreaterThan(0);
  await kubectlOk(admin, ['delete', 'configmap', 'owner', '-n', n]);
  await waitFor(
    'the garbage collector to delete the owner’s dependents',
    async () => {
      const left = [...(await listThroughKube()).values()].filter(
        (o) => o.metadata.namespace === n && (o.metadata as { ownerReferences?: unknown[] }).ownerReferences,
      );
      return left.every(
        (o) => (o.metadata as { deletionTimestamp?: string }).deletionTimestamp && (o.metadata as { finalizers?: string[] }).finalizers?.length,
      );
    },
    120_000,
    1000,
  );
  const held = owned.filter((o) => (o.metadata as { finalizers?: string[] }).finalizers?.length);
  deletedByGc = owned.length - held.length;
  // Those with a finalizer stay, being deleted.
  const after = await listThroughKube();
  for (const o of held) expect((after.get(key(o))?.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp, key(o)).toBeDefined();
}

// namespaceDeletionStillWorks deletes the last namespace (no finalizers there): kube's namespace controller deletes
// its widgets through this server and the namespace goes.
async function namespaceDeletionStillWorks(): Promise<void> {
  const n = ns(NAMESPACES - 1);
  expect([...(await listThroughKube()).values()].some((o) => o.metadata.namespace === n)).toBe(true);
  await kubectlOk(admin, ['delete', 'namespace', n, '--timeout=120s']);
  expect([...(await listThroughKube()).values()].some((o) => o.metadata.namespace === n)).toBe(false);
}

interface ProbeLine {
  type: string;
  ts: number;
  error?: string;
  items?: { namespace: string; name: string; uid: string; resourceVersion: string }[];
}

/** ControllerProbe is informer-probe -mode controller: events, re-lists, and its cache on demand. */
class ControllerProbe {
  readonly lines: ProbeLine[] = [];
  readonly #proc: ChildProcess;
  #buf = '';

  constructor(bin: string, kubeconfig: string, resource: string) {
    this.#proc = spawn(bin, ['-kubeconfig', kubeconfig, '-resource', resource, '-mode', 'controller'], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.#proc.stdout?.on('data', (b: Buffer) => {
      this.#buf += b.toString();
      const parts = this.#buf.split('\n');
      this.#buf = parts.pop() ?? '';
      for (const p of parts) if (p.trim()) this.lines.push(JSON.parse(p) as ProbeLine);
    });
  }

  /** relists counts the lists and watch-lists (initial events) it made: each is a re-list but the first. */
  relists(): number {
    return this.listEvents().length;
  }

  /**
   * listEvents are the re-lists: each list or watch-list, except a retry at resourceVersion "" within 5 s of an
   * attempt at a resourceVersion the server could not serve (the reflector's fallback when its resourceVersion is
   * too old or too large: one re-list, the first attempt got no objects), and a list right after a watch-list at the
   * same resourceVersion (the reflector's fallback when watch-list is refused).
   */
  listEvents(): ProbeLine[] {
    const out: ProbeLine[] = [];
    for (const l of this.lines) {
      if (l.type !== 'LIST' && l.type !== 'WATCHLIST') continue;
      const prev = out[out.length - 1];
      const fallback = prev && l.error === 'resourceVersion=' && prev.error !== 'resourceVersion=' && l.ts - prev.ts < 5000;
      const refused = prev && l.type === 'LIST' && prev.type === 'WATCHLIST' && prev.error === l.error;
      if (!fallback && !refused) out.push(l);
    }
    return out;
  }

  async until(what: string, check: (lines: ProbeLine[]) => boolean, timeoutMs: number): Promise<void> {
    await waitFor(what, () => check(this.lines), timeoutMs, 200);
  }

  async dump(): Promise<NonNullable<ProbeLine['items']>> {
    const before = this.lines.length;
    this.#proc.stdin?.write('dump\n');
    await this.until('a cache dump', (l) => l.slice(before).some((x) => x.type === 'CACHE'), 30_000);
    return this.lines.slice(before).find((x) => x.type === 'CACHE')?.items ?? [];
  }

  stop(): void {
    this.#proc.kill('SIGTERM');
  }
}
