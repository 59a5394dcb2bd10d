#!/usr/bin/env node
/**
 * @module bench/bench
 * `npm run bench [-- --quick] [--targets ours,crd,ceiling,ours-etcd,ours-aggregated,crd-aggregated] [--crd auto|build|off] [--out BASE]`
 * `npm run bench -- --scale [N] [--kind website|crd] [--crd-file PATH] [--targets ours,ours-etcd] [--memory-limit Q|off] [--data-dir DIR] [--out BASE]`
 * (scale.mjs: N objects stored, default 1,000,000, of Website or, with `--kind crd`, of a CRD-defined kind served
 * with `--crd` (crd-kinds.mjs; the CronTab seed unless --crd-file names another namespaced CRD of the corpus); ours runs
 * in a memory cgroup limited to Q, by default the StatefulSet's memory limit, where cgroups can be made: cgroup.mjs;
 * `--data-dir DIR` keeps ours' store in DIR, and a later run with the same DIR, N and kind measures it again without
 * filling it: a long fill may share the machine, the measurements need it idle)
 * `npm run bench -- --mix [--quick]`: only the six-kind CEL workload (crd-mix.mjs), which the full and quick runs
 * also run after the others, writing BASE-crd-mix.json and .md: ours and kube-apiserver + etcd serving six CRDs of the
 * corpus, each again with the CRDs' CEL rules removed (kube's only in the full run), so CEL's cost per write shows.
 *
 * Runs the same workloads with the same client against our server, the raw fastify + lmdb ceiling,
 * kube-apiserver + etcd serving an equivalent CRD, and the aggregated pair (ours behind an APIService and the CRD
 * twin, on one shared kube-apiserver), one target at a time, and writes BASE.json (every figure,
 * with the machine), BASE.md (ratios) and BASE.svg (chart). The full run writes test/bench/results/full.*,
 * which are committed; --quick (CI) writes .cache/bench/quick.* with small counts, so the harness cannot rot.
 * The CRD baseline needs the e2e binaries: `--crd auto` (default) uses them when already built.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release, arch, tmpdir, totalmem } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdownReport, svgChart } from './report.mjs';
import { readVersion, startAggregatedPlane, startCeiling, startCrd, startCrdTwin, startOurs, startOursAggregated, startOursEtcd } from './targets.mjs';
import { runAll, workloadList } from './workloads.mjs';
import { crdScaleKind, runScale, scaleMarkdown, scaleParams, WEBSITE_SCALE } from './scale.mjs';
import { CRD_CORPUS, readCrdKind, withoutCel } from './crd-kinds.mjs';
import { MIX_PARAMS, mixKinds, runMix, mixStages } from './crd-mix.mjs';
import { mixMarkdown, mixRecord } from './crd-mix-report.mjs';
import { openMemoryCgroup, parseQuantity } from './cgroup.mjs';
import { manifests } from './dist.mjs';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/**
 * recordHead is what every results file starts with: its schema, mode, date and duration, the machine, parameters
 * and targets.
 * @param {string} mode
 * @param {number} started Date.now() at the start of the run
 * @param {unknown} machine
 * @param {unknown} parameters
 * @param {{id: string, label: string}[]} targets
 */
function recordHead(mode, started, machine, parameters, targets) {
  return {
    schema: 1,
    mode,
    date: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine,
    parameters,
    targets,
    // Other work on the machine (1, 5 and 15 min load averages) shows in every wall-clock figure.
    loadAverage: { start: LOAD_AT_START, end: load() },
  };
}

const load = () => loadavg().map((x) => Math.round(x * 10) / 10);
const LOAD_AT_START = load();

const ALL_TARGETS = ['ours', 'crd', 'ceiling', 'ours-etcd', 'ours-aggregated', 'crd-aggregated'];
// Targets served through the one kube-apiserver they share (started before the first, stopped after the last).
const AGGREGATED = ['ours-aggregated', 'crd-aggregated'];
// The targets that need the e2e build's binaries.
const NEED_BINARIES = ['crd', 'ours-etcd', ...AGGREGATED];

/** @type {Record<'quick' | 'full', import('./workloads.mjs').Params>} */
const PARAMS = {
  full: {
    creates: 10_000,
    gets: 20_000,
    listRepeats: 20,
    patches: 10_000,
    watchers: [1, 100, 1000],
    watchWritesPerSecond: 500,
    watchSeconds: 5,
    bulkObjects: 100_000,
    concurrency: 64,
  },
  quick: {
    creates: 300,
    gets: 1000,
    listRepeats: 5,
    patches: 300,
    watchers: [1, 10, 50],
    watchWritesPerSecond: 500,
    watchSeconds: 1,
    bulkObjects: 2000,
    concurrency: 64,
  },
};

/** @param {string[]} argv */
function parseFlags(argv) {
  const flags = {
    mode: /** @type {'quick' | 'full'} */ ('full'),
    targets: ALL_TARGETS,
    crd: 'auto',
    out: '',
    scale: 0,
    memoryLimit: '',
    kind: 'website',
    crdFile: '',
    mix: false,
    dataDir: '',
  };
  let targetsGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    const eq = a.indexOf('=');
    const name = eq < 0 ? a : a.slice(0, eq);
    const value = () => (eq < 0 ? (argv[++i] ?? '') : a.slice(eq + 1));
    if (name === '--quick') flags.mode = 'quick';
    else if (name === '--targets') [flags.targets, targetsGiven] = [value().split(',').filter(Boolean), true];
    // --scale takes an optional count: `--scale`, `--scale 20000`, `--scale=20000`.
    else if (name === '--scale') flags.scale = eq >= 0 ? Number(a.slice(eq + 1)) : /^\d+$/.test(argv[i + 1] ?? '') ? Number(argv[++i]) : 1_000_000;
    else if (name === '--crd') flags.crd = value();
    else if (name === '--out') flags.out = value();
    else if (name === '--memory-limit') flags.memoryLimit = value();
    else if (name === '--kind') flags.kind = value();
    else if (name === '--crd-file') flags.crdFile = value();
    else if (name === '--mix') flags.mix = true;
    else if (name === '--data-dir') flags.dataDir = resolve(value());
    else
      throw new Error(
        `unknown flag ${a}; usage: npm run bench -- [--quick | --mix | --scale [N] [--kind website|crd] [--crd-file PATH] [--memory-limit Q|off] [--data-dir DIR]] [--targets ${ALL_TARGETS.join(',')}] [--crd auto|build|off] [--out BASE]`,
      );
  }
  if (!['website', 'crd'].includes(flags.kind)) throw new Error('--kind must be website or crd');
  if ((flags.kind !== 'website' || flags.crdFile) && !flags.scale) throw new Error('--kind and --crd-file apply to --scale only');
  if (flags.crdFile && flags.kind !== 'crd') throw new Error('--crd-file needs --kind crd');
  if (flags.mix && flags.scale) throw new Error('--mix and --scale are separate runs');
  if (flags.dataDir && !flags.scale) throw new Error('--data-dir applies to --scale only');
  if (flags.kind === 'crd') flags.crdFile = resolve(flags.crdFile || join(CRD_CORPUS, 'seeds', 'stable.example.com_crontabs.yaml'));
  if (flags.scale) {
    if (!Number.isSafeInteger(flags.scale) || flags.scale < 1000) throw new Error('--scale: N must be an integer of at least 1000');
    // Only our server: the question is how it holds up, not how it compares.
    if (!targetsGiven) flags.targets = ['ours'];
    flags.targets = flags.targets.filter((t) => t === 'ours' || t === 'ours-etcd');
    if (flags.dataDir && flags.targets.join() !== 'ours') throw new Error('--data-dir keeps the store of the target ours only: add --targets ours');
    flags.out ||= join(REPO, '.cache', 'bench', `scale-${flags.kind === 'crd' ? 'crd-' : ''}${flags.scale}`);
    // The container's limit, unless told otherwise.
    flags.memoryLimit ||= manifests.SERVER_RESOURCES.limits.memory;
    if (flags.memoryLimit !== 'off' && !(parseQuantity(flags.memoryLimit) > 0))
      throw new Error(`--memory-limit: ${flags.memoryLimit} is not a memory quantity (512Mi, 1Gi) or off`);
  } else if (flags.memoryLimit) {
    throw new Error('--memory-limit applies to --scale only');
  }
  const unknown = flags.targets.filter((t) => !ALL_TARGETS.includes(t));
  if (unknown.length) throw new Error(`unknown target ${unknown.join(', ')}; known: ${ALL_TARGETS.join(', ')}`);
  if (!['auto', 'build', 'off'].includes(flags.crd)) throw new Error('--crd must be auto, build or off');
  const outGiven = Boolean(flags.out);
  flags.out ||= flags.mode === 'quick' ? join(REPO, '.cache', 'bench', 'quick') : join(REPO, 'test', 'bench', 'results', 'full');
  // The six-kind workload's files: beside the run's (as a --mix run writes them too), or BASE when given to --mix.
  const mixOut = flags.mix && outGiven ? flags.out : `${flags.out}-crd-mix`;
  return { ...flags, mixOut };
}

/**
 * e2eBinaries returns the folder of the control plane binaries, building them only when asked.
 * @param {string} how auto | build
 * @returns {string | undefined}
 */
function e2eBinaries(how) {
  try {
    const out = execFileSync('bash', [join(REPO, 'test', 'e2e', 'scripts', 'build-binaries.sh')], {
      env: { ...process.env, ...(how === 'build' ? {} : { E2E_BUILD_CHECK_ONLY: '1' }) },
      stdio: ['ignore', 'pipe', how === 'build' ? 'inherit' : 'ignore'],
      encoding: 'utf8',
    });
    return out.trim().split('\n').pop();
  } catch {
    return undefined;
  }
}

/** @param {string} module @param {string} path */
function goModVersion(module, path) {
  const text = readFileSync(join(REPO, 'test', 'e2e', 'go', module, 'go.mod'), 'utf8');
  return new RegExp(`${path.replace(/[.]/g, '\\.')}\\s+(v\\S+)`).exec(text)?.[1] ?? 'unknown';
}

async function main() {
  const flags = parseFlags(process.argv.slice(2));
  const started = Date.now();
  const log = (/** @type {string} */ m) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1)}s] ${m}\n`);
  /** @type {string[]} */
  const notes = [];

  /** @type {string | undefined} */
  let binDir;
  // The CRD baseline, ours on etcd and the aggregated pair need the e2e build's binaries (kube-apiserver, etcd).
  if (flags.targets.some((t) => NEED_BINARIES.includes(t)) && flags.crd !== 'off') {
    binDir = e2eBinaries(flags.crd);
    if (!binDir)
      notes.push(
        'The CRD baseline, ours on etcd and the aggregated pair were skipped: the e2e binaries are not built (`npm run bench -- --crd build` builds them, about 7 minutes once).',
      );
  }
  const cpu = cpus();
  const machine = {
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? 'unknown',
    memoryMiB: Math.round(totalmem() / 2 ** 20),
    os: `${platform()} ${release()} ${arch()}`,
    node: process.version,
    kubernetes: binDir ? readVersion(binDir) : goModVersion('k8s', 'k8s.io/kubernetes'),
    etcd: goModVersion('etcd', 'go.etcd.io/etcd/server/v3'),
  };
  log(`mode ${flags.scale ? `scale ${flags.scale}` : flags.mode}, machine ${JSON.stringify(machine)}`);

  const work = mkdtempSync(join(tmpdir(), 'website-bench-'));
  if (flags.scale) {
    try {
      await scaleRun(flags, binDir, machine, work, log);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    return;
  }
  try {
    if (!flags.mix) await standardRun(flags, binDir, machine, work, log, notes, started);
    await mixRun(flags, binDir, machine, work, log);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * standardRun runs the Website workloads on every target; writes BASE.json, .md and .svg.
 * @param {ReturnType<typeof parseFlags>} flags
 * @param {string | undefined} binDir
 * @param {Record<string, unknown>} machine
 * @param {string} work
 * @param {(m: string) => void} log
 * @param {string[]} notes
 * @param {number} started
 */
async function standardRun(flags, binDir, machine, work, log, notes, started) {
  const params = PARAMS[flags.mode];
  /** @type {import('./targets.mjs').AggregatedPlane | undefined} */
  let shared;
  const sharedPlane = async () => (shared ??= await startAggregatedPlane(join(work, 'aggregated'), binDir ?? '', log));
  const stopShared = async () => {
    const s = shared;
    shared = undefined;
    await s?.stop();
  };
  /** @type {Record<string, () => Promise<import('./targets.mjs').Target>>} */
  const starters = {
    ours: () => startOurs(join(work, 'ours')),
    ceiling: () => startCeiling(join(work, 'ceiling')),
    ...(binDir
      ? {
          crd: () => startCrd(join(work, 'crd'), binDir, log),
          'ours-etcd': () => startOursEtcd(join(work, 'ours-etcd'), binDir),
          'ours-aggregated': async () => startOursAggregated(await sharedPlane()),
          'crd-aggregated': async () => startCrdTwin(await sharedPlane()),
        }
      : {}),
  };
  const lastAggregated = flags.targets.filter((t) => AGGREGATED.includes(t)).pop();
  const workloads = workloadList(params);
  /** @type {Record<string, Record<string, unknown>>} */
  const byWorkload = Object.fromEntries(workloads.map((w) => [w.id, {}]));
  /** @type {{id: string, label: string}[]} */
  const targets = [];
  try {
    await eachTarget(
      flags.targets,
      starters,
      log,
      async (id, target) => {
        for (const [w, f] of Object.entries(await runAll(target, params, log))) (byWorkload[w] ??= {})[id] = f;
      },
      async (id) => {
        if (id === lastAggregated) await stopShared();
      },
      targets,
    );
  } finally {
    await stopShared();
  }

  notes.push(
    'Each target runs alone on the machine, reached directly on its port over TLS with a client certificate, by the same undici client (keep-alive, the same concurrency).',
    "The aggregated pair shares one kube-apiserver + etcd (fsync on): ours-aggregated is our server (lmdb) delegated behind an APIService, as kubectl and controllers reach it; crd-aggregated is the same CRD under the group crd.example.com, since our APIService owns extensions.example.com there. Both are reached at kube-apiserver's URL with one system:masters client certificate (no authorization calls, no priority-and-fairness queueing), one after the other. Their RSS counts kube-apiserver with our server, and kube-apiserver with etcd for the CRD.",
    "The informer sync lists every object in pages of 500 following continue, then opens a watch from the list's resourceVersion with bookmarks allowed; its figure is the time until the watch answered 200 (the ceiling ignores limit and answers one page).",
    'Durability is equal: every target acknowledges a write after it is synced to disk (lmdb synced commits; etcd with fsync).',
    'The CRD carries the same schema as our kind, plus patterns for the git URL and branch rules our kind checks in code; kube-apiserver runs without kube-controller-manager.',
    'Watch latency is from the create\'s 201 reaching the client to the ADDED event reaching each watcher, all in one client process; an event that arrives before its 201 counts as 0 ms (hence p50s of 0). Writes are open-loop at the target rate; "writes/s" is the rate the server actually sustained, and "delivered" the share of (event, watcher) pairs that arrived: a server may end watchers it finds too slow.',
    'RSS is VmRSS of the server processes (kube-apiserver plus etcd for the CRD), split into anonymous memory and file-backed pages (mapped database files and binaries, which the kernel can reclaim).',
  );
  const results = {
    ...recordHead(flags.mode, started, machine, params, targets),
    workloads: workloads.map((w) => ({ ...w, results: byWorkload[w.id] ?? {} })),
    notes,
  };
  mkdirSync(dirname(flags.out), { recursive: true });
  writeFileSync(`${flags.out}.json`, `${JSON.stringify(results, null, 2)}\n`);
  const md = markdownReport(/** @type {any} */ (results));
  writeFileSync(`${flags.out}.md`, md);
  writeFileSync(`${flags.out}.svg`, svgChart(/** @type {any} */ (results)));
  process.stdout.write(md);
  log(`wrote ${flags.out}.json, .md and .svg in ${results.durationSeconds} s`);
  // A target that could not run a workload fails the run; so does any wrong answer from our own server.
  /** @param {string} t @param {any} f */
  const bad = (t, f) =>
    'error' in f ||
    ((t === 'ours' || t.startsWith('ours-')) && (f.errors > 0 || f.writeErrors > 0 || f.duplicates > 0 || (f.delivered !== undefined && f.delivered < 1)));
  const failed = workloads.flatMap((w) =>
    Object.entries(byWorkload[w.id] ?? {})
      .filter(([t, f]) => bad(t, f))
      .map(([t]) => `${w.id}/${t}`),
  );
  if (failed.length) {
    log(`failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

/**
 * eachTarget starts the targets one at a time (the machine has 2 cores), runs `measure` on each, stops it, then calls
 * `stopped`; ids without a starter (not built here) are skipped. Each target run is pushed onto `ran`.
 * @param {string[]} ids
 * @param {Record<string, () => Promise<import('./targets.mjs').Target>>} starters
 * @param {(m: string) => void} log
 * @param {(id: string, target: import('./targets.mjs').Target) => Promise<void>} measure
 * @param {(id: string) => Promise<void>} stopped
 * @param {{id: string, label: string}[]} ran
 */
async function eachTarget(ids, starters, log, measure, stopped, ran) {
  for (const id of ids) {
    const start = starters[id];
    if (!start) continue;
    log(`starting ${id}`);
    const target = await start();
    ran.push({ id, label: target.label });
    try {
      await measure(id, target);
    } finally {
      await target.stop();
      await stopped(id);
    }
  }
}

/**
 * scaleRun is `--scale N`: fill each target with N objects and measure (scale.mjs); writes BASE.json and BASE.md.
 * @param {ReturnType<typeof parseFlags>} flags
 * @param {string | undefined} binDir
 * @param {Record<string, unknown>} machine
 * @param {string} work
 * @param {(m: string) => void} log
 */
async function scaleRun(flags, binDir, machine, work, log) {
  const started = Date.now();
  const params = scaleParams(flags.scale);
  const crdKind = flags.kind === 'crd' ? readCrdKind(flags.crdFile) : undefined;
  const kind = crdKind ? crdScaleKind(crdKind) : WEBSITE_SCALE;
  // A 1 s bookmark interval, so the informer sync's watch sees its first BOOKMARK soon after it starts; a CRD-defined
  // kind is served from its file in place.
  const args = ['--watch-bookmark-interval=1s', ...(crdKind ? [`--crd=${crdKind.file}`] : [])];
  /** @type {string[]} */
  const cgroupNotes = [];
  // The limit the record states: off when no cgroup could be made.
  let memoryLimit = flags.memoryLimit;
  // With --data-dir, ours' store (and certificates) outlive the run; a record in it says what fills it.
  const oursDir = flags.dataDir || join(work, 'ours');
  const filled = flags.dataDir ? readFilled(flags.dataDir, flags.scale, kind.title) : undefined;
  if (filled) log(`${flags.dataDir} holds ${flags.scale} ${kind.title} filled ${filled.date}: measuring without filling`);
  /** @type {Record<string, () => Promise<import('./targets.mjs').Target>>} */
  const starters = {
    ours: async () => {
      const variant = { id: 'ours', label: 'website-apiserver (lmdb)', args, dataDir: '' };
      if (flags.memoryLimit === 'off') return startOurs(oursDir, variant);
      const cgroup = openMemoryCgroup(`website-bench-${process.pid}`, parseQuantity(flags.memoryLimit));
      if (typeof cgroup === 'string') {
        log(`no memory cgroup, ours runs unlimited: ${cgroup}`);
        cgroupNotes.push(`ours ran without a memory limit: ${cgroup}.`);
        memoryLimit = 'off';
        return startOurs(oursDir, variant);
      }
      log(`ours runs in the cgroup v${cgroup.version} ${cgroup.path}, memory limited to ${flags.memoryLimit}, no swap`);
      cgroupNotes.push(
        `ours ran in a memory cgroup (v${cgroup.version}) limited to ${flags.memoryLimit} without swap, as a container with that memory limit (\`--memory-limit\`, by default the StatefulSet's); the cgroup row's value is the highest anonymous memory sampled each second, peakMiB the kernel's peak of anonymous and file pages together (page cache counts towards the limit and is reclaimed at it).`,
      );
      try {
        const target = await startOurs(oursDir, { ...variant, cgroup });
        return {
          ...target,
          stop: async () => {
            await target.stop();
            await cgroup.remove();
          },
        };
      } catch (e) {
        await cgroup.remove();
        throw e;
      }
    },
    ...(binDir ? { 'ours-etcd': () => startOursEtcd(join(work, 'ours-etcd'), binDir, args) } : {}),
  };
  /** @type {Record<string, Record<string, Record<string, unknown>>>} */
  const figures = {};
  /** @type {{id: string, label: string}[]} */
  const targets = [];
  await eachTarget(
    flags.targets,
    starters,
    log,
    async (id, target) => {
      const reuse =
        id === 'ours' && flags.dataDir
          ? {
              filled,
              record: (/** @type {Record<string, unknown>} */ fill) =>
                writeFilled(flags.dataDir, {
                  objects: flags.scale,
                  kind: kind.title,
                  date: new Date().toISOString(),
                  loadAverage: loadavg().map((x) => Math.round(x * 10) / 10),
                  fill,
                }),
            }
          : undefined;
      for (const [f, v] of Object.entries(await runScale(target, params, log, kind, reuse))) (figures[f] ??= {})[id] = v;
    },
    async () => {},
    targets,
  );
  const results = {
    ...recordHead('scale', started, machine, { ...params, memoryLimit, ...(crdKind ? { crdFile: basename(crdKind.file) } : {}) }, targets),
    objects: flags.scale,
    kind: kind.title,
    figures,
    notes: [
      ...(crdKind
        ? [
            `The kind is ${crdKind.kind} (${crdKind.group}/${crdKind.version}) from ${basename(crdKind.file)} (${crdKind.celRules} CEL rules), served with --crd; objects are its example${crdKind.examples.length === 1 ? '' : 's'} in turn, named and labelled for the run.`,
          ]
        : []),
      'Objects are spread evenly over 100 namespaces; each has a label bucket=b0..b3, the selector list asks for bucket=b1 in one namespace.',
      'get: one request at a time per connection, `concurrency` connections; page: one pager reading every page of a cluster-wide list at limit 500; rss after the lists.',
      "dataMdb counts the mappings of data.mdb in the server process; disk is the data directory's allocated blocks divided by N.",
      ...cgroupNotes,
      ...(filled
        ? [
            `The store was filled by an earlier run (${filled.date}, load average ${filled.loadAverage.join('/')} at its end) and kept with --data-dir; this run measured it without filling it again, so its fill row is that run's and the memory rows start from a server that had not written them.`,
          ]
        : []),
    ],
  };
  mkdirSync(dirname(flags.out), { recursive: true });
  writeFileSync(`${flags.out}.json`, `${JSON.stringify(results, null, 2)}\n`);
  const md = scaleMarkdown(/** @type {any} */ (results));
  writeFileSync(`${flags.out}.md`, md);
  process.stdout.write(md);
  log(`wrote ${flags.out}.json and .md in ${results.durationSeconds} s`);
  if (Object.values(figures).some((byTarget) => Object.values(byTarget).some((f) => 'error' in f))) process.exitCode = 1;
}

/**
 * @typedef {{objects: number, kind: string, date: string, loadAverage: number[], fill: Record<string, unknown>}} Filled
 * what a --data-dir store holds: N objects of a kind, filled on that date, and the fill's figure
 */

/**
 * readFilled is the record of a --data-dir store when it holds `objects` of `kind`; undefined when it is new. A store
 * holding anything else is refused: measuring it would report the wrong N.
 * @param {string} dir
 * @param {number} objects
 * @param {string} kind
 * @returns {Filled | undefined}
 */
function readFilled(dir, objects, kind) {
  const file = join(dir, 'filled.json');
  if (!existsSync(file)) {
    if (existsSync(join(dir, 'data')))
      throw new Error(`${dir} has a store but no filled.json (its fill did not finish): remove it or choose another --data-dir`);
    return undefined;
  }
  const f = /** @type {Filled} */ (JSON.parse(readFileSync(file, 'utf8')));
  if (f.objects !== objects || f.kind !== kind) throw new Error(`${dir} holds ${f.objects} ${f.kind}, not ${objects} ${kind}`);
  return f;
}

/** @param {string} dir @param {Filled} f */
function writeFilled(dir, f) {
  writeFileSync(join(dir, 'filled.json'), `${JSON.stringify(f, null, 2)}\n`);
}

/**
 * mixRun is the six-kind CEL workload (crd-mix.mjs): ours serving the six CRDs from their files (--crd), and without
 * their rules (copies written to the work directory); kube-apiserver + etcd with the same CRDs, and in the full run
 * without their rules too. Writes flags.mixOut .json and .md; an error or wrong answer fails the run.
 * @param {ReturnType<typeof parseFlags>} flags
 * @param {string | undefined} binDir
 * @param {Record<string, unknown>} machine
 * @param {string} work
 * @param {(m: string) => void} log
 */
async function mixRun(flags, binDir, machine, work, log) {
  const started = Date.now();
  const p = MIX_PARAMS[flags.mode];
  const kinds = mixKinds();
  const plain = join(work, 'crds-without-cel');
  mkdirSync(plain, { recursive: true });
  for (const k of kinds) writeFileSync(join(plain, `${basename(k.file).replace(/\.ya?ml$/, '')}.json`), JSON.stringify(withoutCel(k.crd)));
  const ours = (/** @type {string} */ id, /** @type {string} */ label, /** @type {string[]} */ args) =>
    startOurs(join(work, `mix-${id}`), { id, label: `website-apiserver (lmdb), ${label}`, args, dataDir: '' });
  /** @type {Record<string, () => Promise<import('./targets.mjs').Target>>} */
  const starters = {
    ours: () =>
      ours(
        'ours',
        'the six CRDs served with --crd',
        kinds.map((k) => `--crd=${k.file}`),
      ),
    'ours-nocel': () => ours('ours-nocel', 'the six CRDs without their CEL rules', [`--crd=${plain}`]),
    ...(binDir
      ? {
          crd: () => startCrd(join(work, 'mix-crd'), binDir, log, { id: 'crd', label: 'the six CRDs', crds: kinds.map((k) => k.crd) }),
          'crd-nocel': () =>
            startCrd(join(work, 'mix-crd-nocel'), binDir, log, {
              id: 'crd-nocel',
              label: 'the six CRDs without their CEL rules',
              crds: kinds.map((k) => withoutCel(k.crd)),
            }),
        }
      : {}),
  };
  // A control plane takes some 30 s to start and fill: the quick run (CI) measures ours alone, unless --mix asks
  // for the workload by itself; kube's own cost of CEL takes a second plane, the full run only.
  const kube = flags.targets.includes('crd') && (flags.mode === 'full' || flags.mix);
  const ids = [...(flags.targets.includes('ours') ? ['ours', 'ours-nocel'] : []), ...(kube ? ['crd', ...(flags.mode === 'full' ? ['crd-nocel'] : [])] : [])];
  /** @type {Record<string, Record<string, Record<string, any>>>} */
  const figures = {};
  /** @type {{id: string, label: string}[]} */
  const targets = [];
  await eachTarget(
    ids,
    starters,
    log,
    async (id, target) => {
      figures[id] = await runMix(target, kinds, p, log, { rules: !id.endsWith('-nocel') });
    },
    async () => {},
    targets,
  );
  const record = mixRecord(
    {
      ...recordHead('crd-mix', started, machine, { ...p, kinds: kinds.length }, targets),
      mode: 'crd-mix',
      schema: 1,
      machine,
      parameters: { ...p, kinds: kinds.length },
      notes: [
        'The targets run one after the other (what else ran on the machine shows in the load average), each reached on its own port over TLS with a client certificate by the same undici client; kube-apiserver has a system:masters certificate (no authorization calls, no priority-and-fairness queueing) and runs without kube-controller-manager; etcd and lmdb both sync each write to disk.',
        "Objects are the CRDs' .example.yaml documents in turn (from the shared corpus, read in place), each named and labelled (bucket b0..b3) for the run, spread over 4 namespaces (GatewayClass is cluster-scoped); the update is a merge patch of a label and a spec field the kind's rules check; a selector list asks for bucket=b1 in one namespace (all of them for GatewayClass) and its size is checked.",
        'The mixed stage: concurrent clients, op j on kind j mod 6; of every five rounds two create new objects, two merge-patch existing ones, one lists by label selector.',
        "-nocel targets serve the same CRDs with every x-kubernetes-validations removed (structural schema, defaults, list types and formats kept): the difference is CEL's cost. Their refusals stage does not run (nothing refuses).",
        ...(binDir ? [] : ['kube-apiserver + etcd did not run: the e2e binaries are not built (`npm run bench -- --crd build`).']),
      ],
    },
    kinds,
    mixStages(p),
    figures,
  );
  mkdirSync(dirname(flags.mixOut), { recursive: true });
  writeFileSync(`${flags.mixOut}.json`, `${JSON.stringify(record, null, 2)}\n`);
  const md = mixMarkdown(record);
  writeFileSync(`${flags.mixOut}.md`, md);
  process.stdout.write(md);
  log(`wrote ${flags.mixOut}.json and .md in ${record.durationSeconds} s`);
  // Any stage a target could not run fails the run; so does any request ours answered wrongly.
  const failed = Object.entries(figures).flatMap(([t, byStage]) =>
    Object.entries(byStage)
      .filter(([, f]) => 'error' in f || (t.startsWith('ours') && f.errors > 0))
      .map(([st]) => `crd-mix ${st}/${t}`),
  );
  if (failed.length) {
    log(`failed: ${failed.join(', ')}`);
    process.exitCode = 1;
  }
}

main().catch((e) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
