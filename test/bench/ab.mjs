#!/usr/bin/env node
/**
 * @module bench/ab
 * `node test/bench/ab.mjs --base DIR [--new DIR] [--rounds 5] [--objects 2000] [--create-blocks 1] [--api-version v1|v1alpha1] [--base-api-version v1|v1alpha1]`
 *
 * An A/B of two builds of our server on the same machine: A is the checkout `--base` names, B the one `--new` names
 * (default: this one); each must be built (`npm run build`: its dist/main.js is run). Each round starts A, then B, fresh, and runs the same load against each:
 * `objects` creates, 10× as many gets, 2× as many merge patches (labels and spec.replicas, as the benchmark's), 20
 * lists of the whole collection and `objects` deletes, 64 keep-alive TLS connections. Per workload it reports the median over rounds of the
 * throughput and of the server's CPU time per request (every thread of the process, from /proc/PID/stat), and the
 * B/A change. Longer than the quick benchmark's 300 patches, so JIT warm-up does not decide it; CPU per request is
 * steadier than throughput on a 2-core machine that also runs the client. `--create-blocks N` reports the creates
 * in N equal blocks from the fresh start (`create 1/N` …), which shows what JIT warm-up costs and where it ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectStatus, httpClient, runOps } from './client.mjs';
import { startOurs } from './targets.mjs';
import { websiteBody } from './workloads.mjs';
import { processCpuMs } from '../e2e/plane.mjs';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
// The version requests use (--api-version): v1, the stored one, or v1alpha1 (converted; what builds before v1 serve).
/** @type {'v1' | 'v1alpha1'} */
let VERSION = 'v1';
let COLLECTION = '/apis/extensions.example.com/v1/namespaces/ab/websites';
const CONCURRENCY = 64;
// Lists of the whole collection per round (after the patches, so the first one meets changed objects).
const LISTS = 20;

/**
 * @typedef {{ perSecond: number, cpuUs: number }} Figure
 * @typedef {Record<string, Figure>} Run
 */

/**
 * runLoad starts the build whose entry point is `main`, runs the workloads and stops it.
 * @param {string} main
 * @param {number} objects
 * @param {number} [createBlocks] the creates reported in this many blocks
 * @returns {Promise<Run>}
 */
async function runLoad(main, objects, createBlocks = 1) {
  process.env.BENCH_OURS_MAIN = main;
  const dir = mkdtempSync(join(tmpdir(), 'bench-ab-'));
  const target = await startOurs(dir);
  const client = httpClient(target.url, target.tls, CONCURRENCY);
  const pid = target.pid?.();
  if (pid === undefined) throw new Error('the server has no process id');
  /** @type {Run} */
  const run = {};
  /**
   * @param {string} name
   * @param {number} count
   * @param {(i: number) => Promise<string | void>} op returns the reason when the answer is wrong
   */
  const stage = async (name, count, op) => {
    const before = processCpuMs(pid);
    const r = await runOps(count, CONCURRENCY, op);
    if (r.errors > 0) throw new Error(`${name}: ${r.errors} errors, first: ${r.firstError}`);
    run[name] = { perSecond: count / r.seconds, cpuUs: ((processCpuMs(pid) - before) / count) * 1000 };
  };
  try {
    const perBlock = Math.ceil(objects / createBlocks);
    for (let b = 0; b * perBlock < objects; b++) {
      const first = b * perBlock;
      const count = Math.min(perBlock, objects - first);
      const name = createBlocks > 1 ? `create ${b + 1}/${createBlocks}` : 'create';
      await stage(name, count, async (i) => expectStatus(await client.request('POST', COLLECTION, { body: websiteBody(`w${first + i}`, VERSION) }), 201));
    }
    await stage('get', objects * 10, async (i) => expectStatus(await client.request('GET', `${COLLECTION}/w${i % objects}`), 200));
    await stage('merge patch', objects * 2, async (i) =>
      expectStatus(
        await client.request('PATCH', `${COLLECTION}/w${i % objects}`, {
          body: { metadata: { labels: { patched: String(i) } }, spec: { replicas: (i % 5) + 1 } },
          contentType: 'application/merge-patch+json',
        }),
        200,
      ),
    );
    // Whole-collection lists, sent as stored text (v1) or converted text (v1alpha1): per-list figures.
    await stage('list', LISTS, async () => {
      const r = await client.request('GET', COLLECTION);
      if (r.status !== 200) return `list: HTTP ${r.status}`;
      const n = (JSON.parse(r.body).items ?? []).length;
      return n === objects ? undefined : `list: ${n} items, not ${objects}`;
    });
    await stage('delete', objects, async (i) => expectStatus(await client.request('DELETE', `${COLLECTION}/w${i}`), 200));
  } finally {
    await client.close();
    await target.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return run;
}

/** median of a non-empty list. */
export function median(/** @type {number[]} */ xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? NaN) : ((s[m - 1] ?? NaN) + (s[m] ?? NaN)) / 2;
}

/**
 * summary is a Markdown table of the medians of A's and B's runs per workload, with B's change against A.
 * @param {Run[]} a
 * @param {Run[]} b
 */
export function summary(a, b) {
  const pct = (/** @type {number} */ x, /** @type {number} */ y) => `${y >= x ? '+' : '−'}${Math.abs((y / x - 1) * 100).toFixed(1)}%`;
  const rows = ['| workload | A req/s | B req/s | B vs A | A CPU µs/req | B CPU µs/req | B vs A |', '| --- | ---: | ---: | ---: | ---: | ---: | ---: |'];
  for (const name of Object.keys(a[0] ?? {})) {
    const ta = median(a.map((r) => r[name]?.perSecond ?? NaN));
    const tb = median(b.map((r) => r[name]?.perSecond ?? NaN));
    const ca = median(a.map((r) => r[name]?.cpuUs ?? NaN));
    const cb = median(b.map((r) => r[name]?.cpuUs ?? NaN));
    rows.push(`| ${name} | ${Math.round(ta)} | ${Math.round(tb)} | ${pct(ta, tb)} | ${Math.round(ca)} | ${Math.round(cb)} | ${pct(ca, cb)} |`);
  }
  return rows.join('\n');
}

async function main() {
  const args = process.argv.slice(2);
  const flag = (/** @type {string} */ name, /** @type {string | undefined} */ fallback) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : fallback;
  };
  const base = flag('--base', undefined);
  if (!base) throw new Error('usage: node test/bench/ab.mjs --base DIR [--new DIR] [--rounds 5] [--objects 2000] (DIR: a built checkout)');
  const rounds = Number(flag('--rounds', '5'));
  const objects = Number(flag('--objects', '2000'));
  const createBlocks = Number(flag('--create-blocks', '1'));
  // --api-version for both sides; --base-api-version for A alone (an earlier build serves only v1alpha1).
  const versions = { B: flag('--api-version', 'v1'), A: flag('--base-api-version', flag('--api-version', 'v1')) };
  for (const v of Object.values(versions)) if (v !== 'v1' && v !== 'v1alpha1') throw new Error('--api-version and --base-api-version: v1 or v1alpha1');
  const useVersion = (/** @type {'A' | 'B'} */ side) => {
    VERSION = /** @type {'v1' | 'v1alpha1'} */ (versions[side]);
    COLLECTION = `/apis/extensions.example.com/${VERSION}/namespaces/ab/websites`;
  };
  const mains = { A: join(resolve(base), 'dist', 'main.js'), B: join(resolve(flag('--new', REPO) ?? REPO), 'dist', 'main.js') };
  /** @type {{A: Run[], B: Run[]}} */
  const runs = { A: [], B: [] };
  for (let i = 1; i <= rounds; i++) {
    for (const side of /** @type {const} */ (['A', 'B'])) {
      useVersion(side);
      const run = await runLoad(mains[side], objects, createBlocks);
      runs[side].push(run);
      console.error(
        `round ${i} ${side}: ${Object.entries(run)
          .map(([k, f]) => `${k} ${Math.round(f.perSecond)}/s ${Math.round(f.cpuUs)} µs`)
          .join(', ')}`,
      );
    }
  }
  console.log(`A: ${mains.A} (${versions.A})\nB: ${mains.B} (${versions.B})\n${rounds} rounds, ${objects} objects, medians\n\n${summary(runs.A, runs.B)}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
