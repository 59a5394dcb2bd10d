#!/usr/bin/env node
/**
 * @module bench/aggregated-probe
 * Where the aggregated path's time goes, on one shared kube-apiserver:
 *
 *     node test/bench/aggregated-probe.mjs [--objects 300] [--gets 5000] [--concurrency 32] [--rounds 2] [--only ID,...]
 *       [--verb get|create|patch]
 *
 * starts the aggregated pair (bench targets ours-aggregated and crd-aggregated), stores the same objects in both,
 * then alternates timed requests (--gets of them; gets by name by default, or creates of new objects, or merge
 * patches of the stored ones) at the given concurrency: ours through kube-apiserver, the CRD twin, and ours on its
 * own port. While ours is loaded through kube-apiserver, `ss` is sampled every 100 ms for the TCP connections on our
 * port (established now, and how many distinct peer ports were seen: kube-apiserver opening connections anew) and
 * the TIME-WAIT sockets left after it. BENCH_NODE_OPTIONS='--cpu-prof --cpu-prof-dir=DIR' profiles our server
 * (written when it stops); `node test/bench/cpuprofile-top.mjs DIR/*.cpuprofile` summarises it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expectStatus, httpClient, runOps, throughput } from './client.mjs';
import { startAggregatedPlane, startCrdTwin, startOursAggregated, TWIN_GROUP } from './targets.mjs';
import { GROUP, websiteBody } from './workloads.mjs';
import { processCpuMs } from '../e2e/plane.mjs';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** @param {string[]} argv */
function parse(argv) {
  const o = { objects: 300, gets: 5000, concurrency: 32, rounds: 2 };
  // The paths timed (a profile of one path alone is easier to read).
  let only = ['ours-aggregated', 'crd-aggregated', 'ours-direct'];
  let verb = 'get';
  for (let i = 0; i < argv.length; i += 2) {
    const k = (argv[i] ?? '').replace(/^--/, '');
    if (k === 'only') only = (argv[i + 1] ?? '').split(',');
    else if (k === 'verb' && ['get', 'create', 'patch'].includes(argv[i + 1] ?? '')) verb = argv[i + 1] ?? verb;
    else if (k in o) /** @type {Record<string, number>} */ (o)[k] = Number(argv[i + 1]);
    else
      throw new Error(
        `unknown flag ${argv[i]}; flags: ${Object.keys(o)
          .map((x) => `--${x} N`)
          .join(' ')} --only ${only.join(',')}`,
      );
  }
  return { ...o, only, verb };
}

/**
 * sockets lists the TCP sockets with our port as local port in one state (ss prints one per line after a header).
 * @param {number} port
 * @param {string} state
 */
function sockets(port, state) {
  const out = execFileSync('ss', ['-Htn', 'state', state, `( sport = :${port} )`], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => l.trim().split(/\s+/).pop() ?? '');
}

/**
 * timeWait counts the TIME-WAIT sockets of connections to or from our port: the side that closes first keeps one.
 * @param {number} port
 */
const timeWait = (port) =>
  execFileSync('ss', ['-Htn', 'state', 'time-wait', `( sport = :${port} or dport = :${port} )`], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean).length;

async function main() {
  const o = parse(process.argv.slice(2));
  const binDir =
    execFileSync('bash', [join(REPO, 'test', 'e2e', 'scripts', 'build-binaries.sh')], {
      env: { ...process.env, E2E_BUILD_CHECK_ONLY: '1' },
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop() ?? '';
  const work = mkdtempSync(join(tmpdir(), 'website-probe-'));
  const log = (/** @type {string} */ m) => process.stderr.write(`[probe] ${m}\n`);
  const shared = await startAggregatedPlane(work, binDir, log);
  try {
    const ours = await startOursAggregated(shared);
    const twin = await startCrdTwin(shared);
    const direct = ours.direct;
    if (!direct) throw new Error('ours-aggregated has no direct address');
    const port = Number(new URL(direct.url).port);
    await ours.prepare(['probe']);
    /** @type {Record<string, {url: string, tls: import('./client.mjs').Tls, group: string}>} */
    const paths = {
      'ours-aggregated': { url: ours.url, tls: ours.tls, group: GROUP },
      'crd-aggregated': { url: twin.url, tls: twin.tls, group: TWIN_GROUP },
      'ours-direct': { url: direct.url, tls: direct.tls, group: GROUP },
    };
    // The same objects in both stores (ours-direct reads ours').
    for (const [id, p] of Object.entries(paths).filter(([k]) => k !== 'ours-direct')) {
      const c = httpClient(p.url, p.tls, o.concurrency);
      const r = await runOps(o.objects, o.concurrency, async (i) =>
        expectStatus(await c.request('POST', `/apis/${p.group}/v1/namespaces/probe/websites`, { body: websiteBody(`p-${i}`, 'v1', p.group) }), 201),
      );
      if (r.errors) throw new Error(`${id}: creates failed: ${r.firstError}`);
      await c.close();
    }
    for (let round = 1; round <= o.rounds; round++) {
      for (const [id, p] of Object.entries(paths).filter(([k]) => o.only.includes(k))) {
        const c = httpClient(p.url, p.tls, o.concurrency);
        const peers = new Set();
        let maxEstablished = 0;
        const sample =
          id === 'ours-aggregated'
            ? setInterval(() => {
                const now = sockets(port, 'established');
                maxEstablished = Math.max(maxEstablished, now.length);
                for (const peer of now) peers.add(peer);
              }, 100)
            : undefined;
        const timeWaitBefore = timeWait(port);
        const pids = { ours: ours.pid?.(), 'kube-apiserver': shared.plane.pids.apiserver, etcd: shared.plane.pids.etcd };
        const cpu0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, processCpuMs(pid)]));
        const collection = `/apis/${p.group}/v1/namespaces/probe/websites`;
        /** @type {(i: number) => Promise<string | undefined>} */
        const op =
          {
            get: async (/** @type {number} */ i) => expectStatus(await c.request('GET', `${collection}/p-${i % o.objects}`), 200),
            // Names unique per round and path, so every create is new.
            create: async (/** @type {number} */ i) =>
              expectStatus(await c.request('POST', collection, { body: websiteBody(`c${round}-${id}-${i}`, 'v1', p.group) }), 201),
            patch: async (/** @type {number} */ i) =>
              expectStatus(
                await c.request('PATCH', `${collection}/p-${i % o.objects}`, {
                  body: { metadata: { labels: { n: String(i) } } },
                  contentType: 'application/merge-patch+json',
                }),
                200,
              ),
          }[o.verb] ?? (async () => 'unknown verb');
        const r = await runOps(o.gets, o.concurrency, op);
        clearInterval(sample);
        const perRequest = Object.entries(pids)
          .map(([k, pid]) => `${k} ${Math.round(((processCpuMs(pid) - (cpu0[k] ?? NaN)) / o.gets) * 1000)}`)
          .join(', ');
        await c.close();
        const t = throughput(r);
        const conns = sample
          ? `; our port: max ${maxEstablished} established, ${peers.size} distinct peers, time-wait ${timeWaitBefore} → ${timeWait(port)}`
          : '';
        process.stdout.write(
          `round ${round} ${id}: ${o.verb} c${o.concurrency} ${t.value} req/s, p50 ${t.p50Ms} ms, p99 ${t.p99Ms} ms, errors ${t.errors}; CPU µs/request: ${perRequest}${conns}\n`,
        );
      }
    }
    await twin.stop();
    await ours.stop();
  } finally {
    await shared.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
