/**
 * @module e2e/helpers-migration
 * What the migration suites share (`website-apiserver migrate`, docs/migration.md): on the e2e plane
 * (migration.test.ts, this server a process behind an ExternalName Service) and on the real node
 * (real-node-migration.test.ts, this server a pod of the Helm chart). A MigrationRig holds one CRD and its objects:
 *
 *   a CRD served by kube-apiserver, `count` objects in 20 namespaces: some with finalizers, some owned by a
 *   ConfigMap, some with status, two managers' managedFields on some, some being deleted (a deletionTimestamp held
 *   by a finalizer); a client-go controller (informer-probe -mode controller: an informer that writes each loop
 *   object's status.observed after its loop label) and a kubectl write loop.
 *
 * checkMove runs one move with the loop running and asserts what a client sees after it: every object identical
 * except resourceVersion (compared with what the other side held when it stopped taking writes; the loop's own
 * objects by identity and their last label), the informer's cache equal to the server's list, at most one re-list
 * for the move, no kubectl command failed and no controller write failed for good (writes during the pause are
 * answered 429 with Retry-After, which client-go and kubectl retry), and the controller caught up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Etcd3 } from 'etcd3';
import { expect } from 'vitest';
import YAML from 'yaml';
import { readPrefix } from '../../src/migration/kube-etcd.js';
import { listAll as listPages } from '../../src/migration/move.js';
import { inParallel } from '../../src/util/in-parallel.js';
import type { Rest } from '../../src/migration/rest.js';
import { kubectl, kubectlOk, waitFor } from './harness/kubectl.js';

export const MAIN = resolve(import.meta.dirname, '../../dist/main.js');
const NAMESPACES = 20;
const PLURAL = 'widgets';

export type Obj = { metadata: { namespace?: string; name: string; resourceVersion?: string; uid?: string; labels?: Record<string, string> } } & Record<
  string,
  unknown
>;
const key = (o: Obj) => `${o.metadata.namespace}/${o.metadata.name}`;
const withoutVersion = (o: Obj) => {
  const { resourceVersion: _rv, ...metadata } = o.metadata;
  return { ...o, metadata };
};

/** widgetCrd is the test CRD: two served versions (v1 stored), status subresource, a printer column, a schema. */
export function widgetCrd(group: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${group}` },
    spec: {
      group,
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
}

/**
 * runMigrate runs `website-apiserver migrate --crd NAME ...args` (dist/main.js) and resolves its exit code and output.
 * With `interruptAt`, it is sent SIGINT (a person's Ctrl-C) as soon as its output matches.
 */
export async function runMigrate(
  crdName: string,
  args: string[],
  log: (m: string) => void,
  interruptAt?: RegExp,
): Promise<{ code: number; output: string; ms: number }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [MAIN, 'migrate', '--crd', crdName, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let interrupted = false;
  const seen = (b: Buffer) => {
    output += b.toString();
    if (interruptAt && !interrupted && interruptAt.test(output)) {
      interrupted = true;
      child.kill('SIGINT');
    }
  };
  child.stdout?.on('data', seen);
  child.stderr?.on('data', seen);
  const code = await new Promise<number>((r) => child.on('exit', (c) => r(c ?? 1)));
  log(`${args.includes('--back') ? 'back' : 'here'} (${((Date.now() - t0) / 1000).toFixed(1)} s):\n${output}`);
  return { code, output, ms: Date.now() - t0 };
}

/** A move: its name, and what the side giving the objects up holds when it stops taking writes (read after it). */
export interface Move {
  name: string;
  run: () => Promise<{ code: number; output: string; ms: number }>;
  given: () => Promise<Map<string, Obj>>;
}

/** MigrationRig is one CRD with its objects in kube-apiserver, the informer probe and the kubectl loop. */
export class MigrationRig {
  readonly group: string;
  readonly plural = PLURAL;
  readonly crdName: string;
  readonly crd: ReturnType<typeof widgetCrd>;
  // The objects the kubectl loop writes (one per namespace 3..7, clear of the garbage collector's namespace 2 and of
  // the deleted namespace): compared by identity and their last label only.
  readonly loop: Set<string>;
  readonly owners = new Map<string, string>();
  probe: ControllerProbe | undefined;
  deletedByGc = 0;
  // The kubectl loop's commands so far, and the label each of its objects got last (its loops go on across moves).
  loopWrites = 0;
  readonly lastLoopWrite = new Map<string, number>();

  constructor(
    readonly o: {
      suffix: string;
      count: number;
      /** An admin kubeconfig for kube-apiserver, reachable from this process. */
      kubeconfig: string;
      kube: Rest;
      /** kube-apiserver's etcd, reachable from this process. */
      etcdUrl: string;
      probeBin: string;
    },
  ) {
    this.group = `mig${o.suffix}.example.com`;
    this.crdName = `${PLURAL}.${this.group}`;
    this.crd = widgetCrd(this.group);
    this.loop = new Set(Array.from({ length: 5 }, (_, i) => `${this.ns(i + 3)}/w-${i + 3}`));
  }

  ns(i: number): string {
    return `mig-${this.o.suffix}-${i}`;
  }

  get namespaces(): string[] {
    return Array.from({ length: NAMESPACES }, (_, i) => this.ns(i));
  }

  /** setUp creates the CRD in kube-apiserver (its file written in dir), the namespaces, their owners and the objects. */
  async setUp(dir: string): Promise<string> {
    const crdFile = join(dir, 'widgets.yaml');
    writeFileSync(crdFile, YAML.stringify(this.crd));
    const admin = this.o.kubeconfig;
    await kubectlOk(admin, ['apply', '-f', crdFile]);
    await kubectlOk(admin, ['wait', '--for=condition=Established', `crd/${this.crdName}`, '--timeout=60s']);
    for (const n of this.namespaces) await kubectlOk(admin, ['create', 'namespace', n]);
    for (const n of this.namespaces) {
      const cm = await this.o.kube.ok<Obj>('POST', `/api/v1/namespaces/${n}/configmaps`, { metadata: { name: 'owner' } });
      this.owners.set(n, cm.body.metadata.uid as string);
    }
    await this.populate();
    return crdFile;
  }

  async startProbe(): Promise<void> {
    this.probe = new ControllerProbe(this.o.probeBin, this.o.kubeconfig, `${PLURAL}.v1.${this.group}`);
    await this.probe.until('the informer synced', (e) => e.some((x) => x.type === 'SYNCED'), 120_000);
  }

  // populate creates the objects through kube-apiserver: every seventh with a finalizer, every other one owned by its
  // namespace's ConfigMap, every third with status (another manager), every fourth relabelled (a third manager),
  // those with a finalizer and a multiple of 50 deleted while it holds them. The last namespace has no finalizers (it
  // is deleted at the end).
  async populate(): Promise<void> {
    const base = `/apis/${this.group}/v1`;
    const kube = this.o.kube;
    await inParallel(
      Array.from({ length: this.o.count }, (_, i) => i),
      16,
      async (i) => {
        const n = this.ns(i % NAMESPACES);
        const held = i % 7 === 0 && i % NAMESPACES !== NAMESPACES - 1;
        const meta = {
          name: `w-${i}`,
          labels: { index: String(i), parity: i % 2 ? 'odd' : 'even' },
          ...(held ? { finalizers: ['example.com/hold'] } : {}),
          ...(i % 2 === 0 ? { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: this.owners.get(n) as string }] } : {}),
        };
        const path = `${base}/namespaces/${n}/${PLURAL}`;
        await kube.ok('POST', `${path}?fieldManager=creator`, {
          apiVersion: `${this.group}/v1`,
          kind: 'Widget',
          metadata: meta,
          spec: { size: i % 7, color: 'blue' },
        });
        if (i % 3 === 0) {
          await kube.ok('PATCH', `${path}/w-${i}/status?fieldManager=status-writer`, { status: { ready: true, observed: i } }, 'application/merge-patch+json');
        }
        if (i % 4 === 0)
          await kube.ok('PATCH', `${path}/w-${i}?fieldManager=labeler`, { metadata: { labels: { tier: 'gold' } } }, 'application/merge-patch+json');
        if (held && i % 50 === 0) await kube.ok('DELETE', `${path}/w-${i}`);
      },
    );
  }

  listAll(rest: Rest, path: string): Promise<Map<string, Obj>> {
    return listAll(rest, path, this.group);
  }

  listThroughKube(): Promise<Map<string, Obj>> {
    return this.listAll(this.o.kube, `/apis/${this.group}/v1/${PLURAL}`);
  }

  /** listKubeEtcd reads the objects kube-apiserver keeps in its etcd (after a move here: retired, untouched). */
  async listKubeEtcd(): Promise<Map<string, Obj>> {
    const etcd = new Etcd3({ hosts: [this.o.etcdUrl] });
    try {
      const all = await readPrefix(etcd, `/registry/${this.group}/${PLURAL}/`);
      return new Map(
        Object.values(all)
          .map((v) => JSON.parse(v) as Obj)
          .map((o) => [key(o), o]),
      );
    } finally {
      etcd.close();
    }
  }

  /** checkMove runs one move with the kubectl loop running and asserts what clients see after it (module doc). */
  async checkMove(move: Move): Promise<{ ms: number; pausedSeconds: number; loopCommands: number }> {
    const p = this.probe as ControllerProbe;
    const loop = this.startKubectlLoop();
    const listsBefore = p.relists();
    const run = await move.run();
    const failed = await loop.stop();
    expect(run.code, `${move.name}: migrate failed:\n${run.output}`).toBe(0);
    const paused = /writes were paused for (\d+\.\d) s/.exec(run.output);
    expect(paused, run.output).not.toBeNull();
    expect(failed, `${move.name}: kubectl commands failed:\n${JSON.stringify(failed, null, 1)}`).toEqual([]);
    expect(loop.count(), `${move.name}: the kubectl loop ran`).toBeGreaterThan(3);

    const served = await this.listThroughKube();
    const given = await move.given();
    expect(served.size).toBe(given.size);
    const differing: string[] = [];
    for (const [k, o] of given) {
      const s = served.get(k);
      if (!s) differing.push(`${k}: missing`);
      else if (this.loop.has(k)) {
        if (s.metadata.uid !== o.metadata.uid) differing.push(`${k}: uid ${s.metadata.uid} != ${o.metadata.uid}`);
      } else if (!isDeepStrictEqual(withoutVersion(s), withoutVersion(o))) {
        differing.push(`${k}:\n  served ${JSON.stringify(withoutVersion(s))}\n  given  ${JSON.stringify(withoutVersion(o))}`);
      }
    }
    expect(differing.slice(0, 5), `${move.name}: ${differing.length} objects differ`).toEqual([]);
    // The loop's objects carry its last write (in this move or an earlier one: a short move may not reach them all).
    for (const k of this.loop) expect(served.get(k)?.metadata.labels?.['loop'], k).toBe(this.lastLoopWrite.get(k)?.toString());
    // The controller's writes (status.observed following each loop label, through client-go) all went through, and it
    // has caught up with the last label.
    expect(p.lines.filter((l) => l.type === 'WRITE_ERROR')).toEqual([]);
    await waitFor(
      `${move.name}: the controller's status writes to catch up with the loop`,
      async () => {
        const now = await this.listThroughKube();
        return [...this.loop].every((k) => {
          const o = now.get(k) as (Obj & { status?: { observed?: number } }) | undefined;
          return o?.status?.observed !== undefined && String(o.status.observed) === o.metadata.labels?.['loop'];
        });
      },
      60_000,
      1000,
    );

    // The informer's cache is the server's list, and it re-listed at most once for the move.
    let mismatch = '';
    const cache = await waitFor(
      `${move.name}: the informer's cache to equal the list`,
      async () => {
        const items = await p.dump();
        const list = await this.listThroughKube();
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
    expect(cache.length).toBe(this.o.count - this.deletedByGc);
    expect(p.relists() - listsBefore, `${move.name}: re-lists (${JSON.stringify(p.listEvents().slice(-4))})`).toBeLessThanOrEqual(1);
    return { ms: run.ms, pausedSeconds: Number(paused?.[1]), loopCommands: loop.count() };
  }

  // startKubectlLoop relabels the loop's objects one command at a time (a kubectl label, then a kubectl get) until
  // stopped, and records every command that failed.
  startKubectlLoop() {
    let stopped = false;
    const start = this.loopWrites;
    let n = start;
    const last = this.lastLoopWrite;
    const failed: { args: string[]; code: number; stderr: string; at: string }[] = [];
    const admin = this.o.kubeconfig;
    const resource = `${PLURAL}.${this.group}`;
    const running = (async () => {
      while (!stopped) {
        const k = [...this.loop][n % this.loop.size] as string;
        const [namespace, name] = k.split('/') as [string, string];
        n++;
        const label = await kubectl(admin, ['label', '--overwrite', '-n', namespace, resource, name, `loop=${n}`]);
        if (label.code !== 0) failed.push({ args: ['label', k], code: label.code, stderr: label.stderr, at: new Date().toISOString() });
        else last.set(k, n);
        const get = await kubectl(admin, ['get', '-n', namespace, resource, name, '-o', 'name']);
        if (get.code !== 0) failed.push({ args: ['get', k], code: get.code, stderr: get.stderr, at: new Date().toISOString() });
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        await running;
        this.loopWrites = n;
        return failed;
      },
      count: () => n - start,
    };
  }

  // garbageCollectionStillWorks deletes namespace 2's owner ConfigMap: kube's garbage collector, now reading and
  // deleting the widgets through this server, deletes its dependents (those with a finalizer stay, being deleted).
  async garbageCollectionStillWorks(): Promise<void> {
    const n = this.ns(2);
    const ownedIn = (m: Map<string, Obj>) =>
      [...m.values()].filter((o) => o.metadata.namespace === n && (o.metadata as { ownerReferences?: unknown[] }).ownerReferences);
    const owned = ownedIn(await this.listThroughKube());
    expect(owned.length).toBeGreaterThan(0);
    await kubectlOk(this.o.kubeconfig, ['delete', 'configmap', 'owner', '-n', n]);
    await waitFor(
      'the garbage collector to delete the owner’s dependents',
      async () =>
        ownedIn(await this.listThroughKube()).every(
          (o) => (o.metadata as { deletionTimestamp?: string }).deletionTimestamp && (o.metadata as { finalizers?: string[] }).finalizers?.length,
        ),
      120_000,
      1000,
    );
    const held = owned.filter((o) => (o.metadata as { finalizers?: string[] }).finalizers?.length);
    this.deletedByGc = owned.length - held.length;
    // Those with a finalizer stay, being deleted.
    const after = await this.listThroughKube();
    for (const o of held) expect((after.get(key(o))?.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp, key(o)).toBeDefined();
  }

  // namespaceDeletionStillWorks deletes the last namespace (no finalizers there): kube's namespace controller deletes
  // its widgets through this server and the namespace goes.
  async namespaceDeletionStillWorks(): Promise<void> {
    const n = this.ns(NAMESPACES - 1);
    expect([...(await this.listThroughKube()).values()].some((o) => o.metadata.namespace === n)).toBe(true);
    await kubectlOk(this.o.kubeconfig, ['delete', 'namespace', n, '--timeout=120s']);
    expect([...(await this.listThroughKube()).values()].some((o) => o.metadata.namespace === n)).toBe(false);
  }

  /**
   * cleanUp leaves nothing for other tests on the same cluster: the APIServices go (the group with them), kube's
   * etcd copy of the objects (finalizers nobody can clear through the API), the CRD, the namespaces.
   */
  async cleanUp(more: string[] = []): Promise<void> {
    this.probe?.stop();
    const admin = this.o.kubeconfig;
    await kubectl(admin, ['delete', 'apiservice', `v1.${this.group}`, `v1beta1.${this.group}`, '--ignore-not-found']);
    const etcd = new Etcd3({ hosts: [this.o.etcdUrl] });
    await etcd.delete().prefix(`/registry/${this.group}/`);
    etcd.close();
    await kubectl(admin, ['delete', 'crd', this.crdName, '--ignore-not-found', '--timeout=60s']);
    await kubectl(admin, ['delete', 'namespace', ...this.namespaces, ...more, '--ignore-not-found', '--wait=false']);
  }
}

/** listAll lists a collection a page at a time, each item with its apiVersion and kind. */
export async function listAll(rest: Rest, path: string, group: string): Promise<Map<string, Obj>> {
  const { items } = await listPages(rest, path, 500);
  return new Map(items.map((i) => [key(i as Obj), { ...i, apiVersion: `${group}/v1`, kind: 'Widget' } as Obj]));
}

interface ProbeLine {
  type: string;
  ts: number;
  error?: string;
  items?: { namespace: string; name: string; uid: string; resourceVersion: string }[];
}

/** ControllerProbe is informer-probe -mode controller: events, re-lists, and its cache on demand. */
export class ControllerProbe {
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
   * listEvents are the re-lists: each list or watch-list, except a retry at resourceVersion "" within 15 s of an
   * attempt at a resourceVersion the server could not serve (the reflector's fallback when its resourceVersion is
   * too old or too large: one re-list, the first attempt got no objects), and a list right after a watch-list at the
   * same resourceVersion (the reflector's fallback when watch-list is refused).
   */
  listEvents(): ProbeLine[] {
    const out: ProbeLine[] = [];
    for (const l of this.lines) {
      if (l.type !== 'LIST' && l.type !== 'WATCHLIST') continue;
      const prev = out[out.length - 1];
      const fallback = prev && l.error === 'resourceVersion=' && prev.error !== 'resourceVersion=' && l.ts - prev.ts < 15_000;
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
