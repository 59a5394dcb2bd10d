#!/usr/bin/env node
/**
 * @module bench/upgrade
 * `node test/bench/upgrade.mjs [N] [--out BASE]` (default 50,000; needs `npm run build`): what an upgrade from the
 * v1alpha1 release costs. It writes N Websites as that release stored them (v1alpha1, with managedFields) into a
 * fresh lmdb store, then starts this build on it and waits until the storage version migration has rewritten every
 * one, and reports data.mdb before and after, the migration's time and rate, its progress lines and the server's
 * peak memory. Then it checks the store: every object in v1, none lost, the revision counter where it was.
 * test/upgrade-growth.test.ts runs it on a small store and asserts the bound docs/operations.md states.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processMemory } from '../e2e/plane.mjs';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const MAIN = join(REPO, 'dist', 'main.js');
const RESOURCE = 'extensions.example.com/websites';
const NAMESPACES = 100;
const REPO_URL = 'https://github.com/luksa/kubia-website-example.git';

/**
 * oldWebsite is object i as the v1alpha1 release stored it after a server-side apply.
 * @param {number} i
 */
export function oldWebsite(i) {
  const name = `site-${String(i).padStart(7, '0')}`;
  const namespace = `upgrade-${String(i % NAMESPACES).padStart(2, '0')}`;
  return {
    apiVersion: 'extensions.example.com/v1alpha1',
    kind: 'Website',
    metadata: {
      name,
      namespace,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      generation: 1,
      creationTimestamp: '2026-11-01T10:00:00Z',
      labels: { app: 'upgrade', bucket: `b${i % 4}` },
      annotations: { 'extensions.example.com/node-port': String(30000 + (i % 2000)), owner: `team-${i % 17}` },
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Apply',
          apiVersion: 'extensions.example.com/v1alpha1',
          time: '2026-11-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { 'f:app': {}, 'f:bucket': {} }, 'f:annotations': { 'f:owner': {} } },
            'f:spec': { 'f:gitRepo': {}, 'f:replicas': {}, 'f:branch': {} },
          },
        },
      ],
    },
    spec: { gitRepo: REPO_URL, branch: i % 3 ? 'main' : 'gh-pages', replicas: 1 + (i % 3), syncIntervalSeconds: 60, serviceType: 'NodePort' },
    status: {
      observedGeneration: 1,
      replicas: 1,
      readyReplicas: 1,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Ready',
          message: `site ${name} is served`,
          lastTransitionTime: '2026-11-01T10:01:00Z',
          observedGeneration: 1,
        },
      ],
    },
  };
}

/**
 * seedOldStore writes n objects of the v1alpha1 release into a new store in `dir`, and compacts its history away
 * (the release's store had its history bounded too): what is measured is the objects.
 * @param {string} dir
 * @param {number} n
 */
export async function seedOldStore(dir, n) {
  const { LmdbStorage } = await import(join(REPO, 'dist', 'storage', 'lmdb-storage.js'));
  const storage = new LmdbStorage({ path: dir, compactionIntervalMs: 0, historyEvents: 1 });
  for (let i = 0; i < n; i += 500) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 500); j++) {
      const o = oldWebsite(j);
      batch.push(storage.create({ resource: RESOURCE, namespace: o.metadata.namespace, name: o.metadata.name }, o));
    }
    await Promise.all(batch);
  }
  await storage.compact();
  const revision = storage.currentRevision();
  await storage.close();
  return { revision };
}

/**
 * checkStore reads the store after the upgrade: how many objects, how many still in v1alpha1, and its counter.
 * @param {string} dir
 */
export async function checkStore(dir) {
  const { LmdbStorage } = await import(join(REPO, 'dist', 'storage', 'lmdb-storage.js'));
  const storage = new LmdbStorage({ path: dir, compactionIntervalMs: 0 });
  let objects = 0;
  let stale = 0;
  /** @type {{namespace: string, name: string} | undefined} */
  let after;
  for (;;) {
    const page = await storage.list({ resource: RESOURCE }, { limit: 5000, noRemaining: true, ...(after ? { after } : {}) });
    for (const o of page.items) {
      objects++;
      if (o.apiVersion !== 'extensions.example.com/v1') stale++;
    }
    if (!page.more || !page.last) break;
    after = { namespace: page.last.namespace, name: page.last.name };
  }
  const revision = storage.currentRevision();
  await storage.close();
  return { objects, stale, revision };
}

/** @param {string} dir */
const dataSize = (dir) => statSync(join(dir, 'data.mdb')).size;

/**
 * runUpgrade seeds n old objects, starts this build on them, and measures the migration.
 * @param {number} n
 * @param {{ log?: (line: string) => void, timeoutMs?: number }} [o]
 */
export async function runUpgrade(n, o = {}) {
  const log = o.log ?? (() => {});
  const work = mkdtempSync(join(tmpdir(), 'ws-upgrade-bench-'));
  const dataDir = join(work, 'data');
  const certDir = join(work, 'certs');
  try {
    let t = performance.now();
    const seeded = await seedOldStore(dataDir, n);
    const before = dataSize(dataDir);
    log(`seeded ${n} v1alpha1 objects in ${Math.round(performance.now() - t)} ms: data.mdb ${(before / 2 ** 20).toFixed(1)} MiB`);
    t = performance.now();
    const proc = spawn(process.execPath, [MAIN, '--port', '0', '--data-dir', dataDir, '--cert-dir', certDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const peak = { rss: 0, anonymous: 0, file: 0 };
    const sampler = setInterval(() => {
      // processMemory reads MiB (to 0.1, NaN for a field the kernel lacks); the record keeps bytes.
      const m = processMemory(proc.pid);
      const higher = (/** @type {number} */ was, /** @type {number} */ mib) => (mib >= 0 ? Math.max(was, Math.round(mib * 2 ** 20)) : was);
      if (m) Object.assign(peak, { rss: higher(peak.rss, m.rss), anonymous: higher(peak.anonymous, m.anon), file: higher(peak.file, m.file) });
    }, 200);
    const closed = new Promise((res) => proc.on('close', res));
    proc.stdout.on('data', (b) => (out += b.toString()));
    proc.stderr.on('data', (b) => (out += b.toString()));
    const lines = () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l));
    const deadline = Date.now() + (o.timeoutMs ?? 30 * 60_000);
    /** @type {any} */
    let done;
    while (!done) {
      if (Date.now() > deadline) throw new Error(`the migration did not finish in time:\n${out.slice(-4000)}`);
      if (proc.exitCode !== null) throw new Error(`the server exited (${proc.exitCode}):\n${out.slice(-4000)}`);
      await new Promise((r) => setTimeout(r, 100));
      done = lines().find((l) => l.msg === 'migrated stored objects to the storage version');
    }
    const migrationMs = Math.round(performance.now() - t);
    const progress = lines()
      .filter((l) => l.msg === 'migrating stored objects to the storage version')
      .map(({ checked, total, changed, perSecond, etaSeconds, elapsedSeconds }) => ({ checked, total, changed, perSecond, etaSeconds, elapsedSeconds }));
    const grown = dataSize(dataDir);
    clearInterval(sampler);
    proc.kill('SIGTERM');
    await closed;
    const after = dataSize(dataDir);
    const store = await checkStore(dataDir);
    const result = {
      objects: n,
      dataBefore: before,
      dataAfter: after,
      dataAfterAtEnd: grown,
      growth: Math.round((after / before) * 1000) / 1000,
      migrated: done.migrated,
      checked: done.checked,
      migrationMs,
      serverPerSecond: done.perSecond,
      progress,
      peakMemory: peak,
      store,
      seededRevision: seeded.revision,
    };
    log(
      `migrated ${done.migrated} in ${migrationMs} ms: data.mdb ${(before / 2 ** 20).toFixed(1)} → ${(after / 2 ** 20).toFixed(1)} MiB (×${result.growth}), ${progress.length} progress lines, peak RSS ${(peak.rss / 2 ** 20).toFixed(0)} MiB (anonymous ${(peak.anonymous / 2 ** 20).toFixed(0)} MiB)`,
    );
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** @param {any} r */
export function upgradeMarkdown(r) {
  const mib = (/** @type {number} */ b) => `${(b / 2 ** 20).toFixed(1)} MiB`;
  return [
    `# Upgrade from the v1alpha1 release: ${r.objects.toLocaleString('en-US')} objects`,
    '',
    `Run ${r.date} on ${r.machine}: \`node test/bench/upgrade.mjs ${r.objects}\`.`,
    '',
    '| figure | value |',
    '| --- | --- |',
    `| data.mdb before | ${mib(r.dataBefore)} |`,
    `| data.mdb after the migration | ${mib(r.dataAfter)} (×${r.growth}) |`,
    `| objects migrated | ${r.migrated} of ${r.checked} |`,
    `| migration time | ${(r.migrationMs / 1000).toFixed(1)} s from the server's start (${r.serverPerSecond}/s read by the walk) |`,
    `| progress lines | ${r.progress.length} |`,
    `| peak memory | RSS ${mib(r.peakMemory.rss)}, anonymous ${mib(r.peakMemory.anonymous)}, file-backed ${mib(r.peakMemory.file)} |`,
    `| store after | ${r.store.objects} objects, ${r.store.stale} not in v1, revision ${r.store.revision} (was ${r.seededRevision}) |`,
    '',
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  const out = outAt >= 0 ? args.splice(outAt, 2)[1] : undefined;
  const n = Number(args[0] ?? 50_000);
  const r = await runUpgrade(n, { log: (l) => console.log(l) });
  const { cpus } = await import('node:os');
  const record = { date: new Date().toISOString(), machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`, ...r };
  const base = out ?? join(REPO, 'test', 'bench', 'results', `upgrade-${n}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(record, null, 2)}\n`);
  writeFileSync(`${base}.md`, upgradeMarkdown(record));
  console.log(`wrote ${base}.json and ${base}.md`);
}
