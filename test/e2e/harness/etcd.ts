/**
 * @module e2e/harness/etcd
 * An etcd cluster of its own on loopback for the storage tests (the control plane's etcd serves kube-apiserver):
 * one or three members from the e2e build's etcd binary, each killable and restartable, stopped at the end.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storageConformance } from '../../../src/storage/conformance.js';
import { EtcdStorage } from '../../../src/storage/etcd-storage.js';
import { freePorts, launch, terminate } from '../plane.mjs';

type Running = ReturnType<typeof launch>;

/** EtcdCluster is a running cluster: client URLs, and members to stop and start again. */
export interface EtcdCluster {
  clientUrls: string[];
  /** stopMember kills one member (SIGKILL: a crash); startMember restarts it on its data. */
  stopMember(i: number): Promise<void>;
  startMember(i: number): Promise<void>;
  /** pauseMember stops one member's process (SIGSTOP: alive, connected, answering nothing); resumeMember continues it. */
  pauseMember(i: number): void;
  resumeMember(i: number): void;
  stop(): Promise<void>;
}

async function healthy(url: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      const r = await fetch(`${url}/health`);
      if (r.ok && ((await r.json()) as { health?: string }).health === 'true') return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`etcd at ${url} not healthy in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * startEtcd starts `members` etcd members (1 or 3) from `binDir/<binary>` (default `etcd`, the pinned v3.6; `etcd-3.5`
 * is the oldest supported release line), fsync off (disposable test data).
 */
export async function startEtcd(binDir: string, members = 1, binary = 'etcd'): Promise<EtcdCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-etcd-'));
  const ports = await freePorts(members * 2);
  const names = Array.from({ length: members }, (_, i) => `m${i}`);
  const client = (i: number) => `http://127.0.0.1:${ports[2 * i]}`;
  const peer = (i: number) => `http://127.0.0.1:${ports[2 * i + 1]}`;
  const initialCluster = names.map((n, i) => `${n}=${peer(i)}`).join(',');
  const running: (Running | undefined)[] = [];
  const args = (i: number) => [
    `--name=${names[i]}`,
    `--data-dir=${join(dir, names[i] ?? '')}`,
    `--listen-client-urls=${client(i)}`,
    `--advertise-client-urls=${client(i)}`,
    `--listen-peer-urls=${peer(i)}`,
    `--initial-advertise-peer-urls=${peer(i)}`,
    `--initial-cluster=${initialCluster}`,
    '--initial-cluster-state=new',
    '--initial-cluster-token=e2e-storage',
    '--unsafe-no-fsync=true',
    '--log-level=warn',
  ];
  const start = async (i: number) => {
    running[i] = launch(join(binDir, binary), args(i), join(dir, 'logs', `${names[i]}.log`));
  };
  for (let i = 0; i < members; i++) await start(i);
  const deadline = Date.now() + 30_000;
  await Promise.all(names.map((_, i) => healthy(client(i), deadline)));
  return {
    clientUrls: names.map((_, i) => client(i)),
    async stopMember(i) {
      const r = running[i];
      running[i] = undefined;
      if (r) await terminate(r, 0);
    },
    async startMember(i) {
      await start(i);
      await healthy(client(i), Date.now() + 30_000);
    },
    pauseMember(i) {
      running[i]?.proc.kill('SIGSTOP');
    },
    resumeMember(i) {
      running[i]?.proc.kill('SIGCONT');
    },
    async stop() {
      for (const r of running.splice(0)) if (r) await terminate(r, 2000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * etcdConformance runs the storage contract (src/storage/conformance.ts) on EtcdStorage against the cluster `of()`
 * gives once started: every store in a prefix of its own on the same etcd.
 */
export function etcdConformance(label: string, of: () => EtcdCluster): void {
  let prefixes = 0;
  const keeps = new WeakMap<object, number>();
  const fresh = () => EtcdStorage.open({ servers: of().clientUrls, prefix: `/conformance-${++prefixes}`, compactionIntervalMs: 0 });
  storageConformance(label, fresh, {
    supportsEncoded: true,
    shortHistory: {
      make: async (keep) => {
        const st = await fresh();
        keeps.set(st, keep);
        return st;
      },
      // The tests write in their own prefix alone, so revisions are dense here: keep the last `keep` writes.
      trim: async (st) => {
        await (st as EtcdStorage).compact(st.currentRevision() - (keeps.get(st) ?? 0));
      },
    },
  });
}
