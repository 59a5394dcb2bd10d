/**
 * @module bench/scale
 * `npm run bench -- --scale [N]` (default 1,000,000): how our server behaves with N Websites stored, spread over
 * 100 namespaces. It fills the store with concurrent creates, then measures what grows with the store: get latency,
 * every 500-item page of a full cluster-wide paginated list, a label-selector list of one namespace, an
 * informer-style sync (paginated list, then a watch from its resourceVersion until the first BOOKMARK), resident
 * memory (anonymous and file-backed), the mappings of data.mdb, bytes on disk per object and cold start. When the
 * server runs in a memory cgroup (bench.mjs --memory-limit, cgroup.mjs), the run ends with what the cgroup saw:
 * OOM kills (any fails the run), its peak, and the highest anonymous and file-backed memory it held.
 * Each object carries a label `bucket` with 4 values, so `bucket=b1` matches a quarter of each namespace.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { expectStatus, httpClient, percentiles, round3, runOps, stageRunner, throughput } from './client.mjs';
import { sampleMemory } from './cgroup.mjs';
import { websiteBody } from './workloads.mjs';
import { collectionPath, objectOf } from './crd-kinds.mjs';

export const SCALE_NAMESPACES = 100;
const BUCKETS = 4;
const PAGE = 500;

/**
 * @typedef {object} ScaleParams
 * @property {number} objects N, spread evenly over the namespaces
 * @property {number} concurrency requests in flight while filling
 * @property {number} gets gets timed
 * @property {number} getConcurrency requests in flight while timing gets (low: a latency, not a queue)
 * @property {number} selectorRepeats label-selector lists timed
 * @property {number} bookmarkTimeoutMs how long the sync's watch waits for its first BOOKMARK
 */

/** @param {number} objects @returns {ScaleParams} */
export function scaleParams(objects) {
  return { objects, concurrency: 64, gets: Math.min(20_000, objects), getConcurrency: 4, selectorRepeats: 20, bookmarkTimeoutMs: 5000 };
}

const ns = (/** @type {number} */ i) => `scale-${String(i % SCALE_NAMESPACES).padStart(2, '0')}`;
// Independent of the namespace (i % 100), so a bucket is a quarter of every namespace.
const bucket = (/** @type {number} */ i) => `b${Math.floor(i / SCALE_NAMESPACES) % BUCKETS}`;
const name = (/** @type {number} */ i) => `s-${String(i).padStart(7, '0')}`;

/**
 * @typedef {object} ScaleKind the kind a scale run stores
 * @property {string} title its plural as the report names it
 * @property {string} all the path of every object (a cluster-wide list)
 * @property {(ns: string) => string} collection the path of one namespace's objects
 * @property {(i: number) => Record<string, unknown>} body object i (named name(i), labelled app=scale, bucket)
 */

const scaleLabels = (/** @type {number} */ i) => ({ app: 'scale', bucket: bucket(i) });

/** WEBSITE_SCALE is our own kind, written in code. */
export const WEBSITE_SCALE = /** @type {ScaleKind} */ ({
  title: 'Websites',
  all: '/apis/extensions.example.com/v1/websites',
  collection: (ns) => `/apis/extensions.example.com/v1/namespaces/${ns}/websites`,
  body: (i) => {
    const b = websiteBody(name(i));
    return { ...b, metadata: { ...b.metadata, labels: scaleLabels(i) } };
  },
});

/**
 * crdScaleKind is a namespaced CRD-defined kind (served with --crd), objects made from its examples in turn.
 * @param {import('./crd-kinds.mjs').CrdKind} k
 * @returns {ScaleKind}
 */
export function crdScaleKind(k) {
  if (!k.namespaced) throw new Error(`${k.file}: ${k.plural} are cluster-scoped; the scale run spreads objects over namespaces`);
  return {
    title: `${k.kind}s (${k.group}/${k.version}, a CRD served with --crd)`,
    all: collectionPath(k, ''),
    collection: (ns) => collectionPath(k, ns),
    body: (i) => objectOf(k, name(i), scaleLabels(i), i),
  };
}

/**
 * dataMappings counts the distinct mappings of data.mdb in a process (each lmdb map growth that keeps the old one
 * alive adds one), and their total size in MiB.
 * @param {number | undefined} pid
 */
export function dataMappings(pid) {
  if (!pid) return undefined;
  try {
    const lines = readFileSync(`/proc/${pid}/maps`, 'utf8')
      .split('\n')
      .filter((l) => l.endsWith('/data.mdb'));
    const mib =
      lines.reduce((s, l) => {
        const [a = '0', b = '0'] = (l.split(' ')[0] ?? '').split('-');
        return s + (parseInt(b, 16) - parseInt(a, 16));
      }, 0) /
      2 ** 20;
    return { count: lines.length, mappedMiB: Math.round(mib) };
  } catch {
    return undefined;
  }
}

/**
 * lmdbStats reads mdb_stat's figures of each database of a live store (lmdb supports readers in other processes):
 * entries, depth and branch/leaf/overflow pages, bytes per object of each, and the pages no database holds (free).
 * @param {string | undefined} dir
 * @param {number} objects
 */
export async function lmdbStats(dir, objects) {
  if (!dir || !existsSync(join(dir, 'data.mdb'))) return undefined;
  const { open } = await import('lmdb');
  const root = open({ path: dir, noSubdir: false, readOnly: true, maxDbs: 8 });
  try {
    /** @type {any} */
    const env = root.getStats();
    const page = env.pageSize;
    /** @type {Record<string, unknown>} */
    const dbs = {};
    let used = 2 + env.treeBranchPageCount + env.treeLeafPageCount + env.free.treeBranchPageCount + env.free.treeLeafPageCount + env.free.overflowPages;
    for (const name of ['objects', 'events', 'meta']) {
      /** @type {any} */
      const st = root.openDB(name, { encoding: 'binary' }).getStats();
      const pages = st.treeBranchPageCount + st.treeLeafPageCount + st.overflowPages;
      used += pages;
      dbs[name] = {
        entries: st.entryCount,
        depth: st.treeDepth,
        branch: st.treeBranchPageCount,
        leaf: st.treeLeafPageCount,
        overflow: st.overflowPages,
        bytesPerObject: Math.round((pages * page) / objects),
      };
    }
    const filePages = env.lastPageNumber + 1;
    return { pageSize: page, filePages, freePages: filePages - used, freeBytesPerObject: Math.round(((filePages - used) * page) / objects), dbs };
  } finally {
    await root.close();
  }
}

/**
 * pagedList reads a whole collection in pages of `limit`, timing each page; checks the pages add up.
 * @param {import('./client.mjs').HttpClient} client
 * @param {string} path
 * @param {number} limit
 */
async function pagedList(client, path, limit) {
  const times = [];
  let items = 0;
  let token = '';
  let rv = '';
  /** @type {string | undefined} */
  let badRemaining;
  const t0 = performance.now();
  for (;;) {
    const t = performance.now();
    const r = await client.request('GET', `${path}?limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
    times.push(performance.now() - t);
    const why = expectStatus(r, 200);
    if (why) throw new Error(why);
    const list = JSON.parse(r.body);
    items += list.items.length;
    rv ||= list.metadata.resourceVersion;
    token = list.metadata.continue ?? '';
    if (!token) break;
    badRemaining ??= list.metadata.remainingItemCount === undefined ? `page ${times.length} has no remainingItemCount` : undefined;
  }
  return { items, rv, pages: times.length, totalMs: performance.now() - t0, latencies: Float64Array.from(times), badRemaining };
}

/**
 * firstBookmark watches from rv with bookmarks allowed until the first BOOKMARK arrives (ms), or the timeout (undefined).
 * @param {import('./targets.mjs').Target} target
 * @param {string} all the path of the collection
 * @param {string} rv
 * @param {number} timeoutMs
 */
async function firstBookmark(target, all, rv, timeoutMs) {
  const pool = new Pool(target.url, {
    connections: 1,
    bodyTimeout: 0,
    connect: { ca: target.tls.ca, cert: target.tls.cert, key: target.tls.key, servername: 'localhost' },
  });
  const ac = new AbortController();
  const t = performance.now();
  try {
    const r = await pool.request({
      method: 'GET',
      path: `${all}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`,
      signal: ac.signal,
    });
    if (r.statusCode !== 200) throw new Error(`watch: HTTP ${r.statusCode}`);
    const timer = setTimeout(() => ac.abort(), timeoutMs);
    try {
      for await (const chunk of r.body) {
        if (String(chunk).includes('"BOOKMARK"')) return performance.now() - t;
      }
    } catch {
      // aborted at the timeout
    } finally {
      clearTimeout(timer);
    }
    return undefined;
  } finally {
    ac.abort();
    await pool.destroy();
  }
}

/**
 * runScale fills the target with N objects and measures; figures by id, each with `value` the headline.
 * @param {import('./targets.mjs').Target} target
 * @param {ScaleParams} p
 * @param {(m: string) => void} log
 * @param {ScaleKind} [kind] what is stored: Website unless told
 * @param {{filled?: {fill: Record<string, unknown>, date: string}, record: (fill: Record<string, unknown>) => void}} [reuse] a kept
 *   store (bench.mjs --data-dir): `filled` when it already holds the N objects (the fill is skipped and its figure is
 *   the earlier run's), `record` to call once a fill finished without error
 * @returns {Promise<Record<string, Record<string, unknown>>>}
 */
export async function runScale(target, p, log, kind = WEBSITE_SCALE, reuse = undefined) {
  const client = httpClient(target.url, target.tls, p.concurrency);
  /** @type {Record<string, Record<string, unknown>>} */
  const out = {};
  const stage = stageRunner(target.id, out, log);
  const cg = target.cgroup;
  // The cgroup's peak counts file pages with anonymous memory; the highest of each alone is sampled.
  const sampler = cg && sampleMemory(cg, 1000);
  const memory = () => {
    const m = target.memory();
    /** @param {'rss' | 'anon' | 'file'} k */
    const sum = (k) => Math.round(Object.values(m).reduce((s, x) => s + (x?.[k] ?? 0), 0) * 10) / 10;
    const c = cg?.read();
    const inCgroup = c ? { cgroupMiB: { usage: mib(c.usage), anon: mib(c.anon), file: mib(c.file) } } : {};
    return { value: sum('rss'), anonMiB: sum('anon'), fileMiB: sum('file'), dataMdb: dataMappings(target.pid?.()), ...inCgroup };
  };
  try {
    await target.prepare(Array.from({ length: SCALE_NAMESPACES }, (_, i) => ns(i)));
    if (reuse?.filled) out['fill'] = { ...reuse.filled.fill, filledAt: reuse.filled.date };
    else
      await stage('fill', async () => {
        let last = performance.now();
        const r = await runOps(p.objects, p.concurrency, async (i) => {
          if (i % 100_000 === 0 && i > 0) {
            log(`${target.id} fill: ${i} (${Math.round(100_000 / ((performance.now() - last) / 1000))}/s), RSS ${JSON.stringify(memory())}`);
            last = performance.now();
          }
          return expectStatus(await client.request('POST', kind.collection(ns(i)), { body: kind.body(i) }), 201);
        });
        const fill = throughput(r);
        if (reuse && !fill.errors) reuse.record(fill);
        return fill;
      });
    await stage('get', async () => {
      const r = await runOps(p.gets, p.getConcurrency, async (i) => {
        const j = (i * 7919) % p.objects; // a spread of keys, not a hot one
        return expectStatus(await client.request('GET', `${kind.collection(ns(j))}/${name(j)}`), 200);
      });
      const t = throughput(r);
      return { ...t, value: t.p99Ms, concurrency: p.getConcurrency };
    });
    let listRv = '';
    await stage('page', async () => {
      const r = await pagedList(client, kind.all, PAGE);
      if (r.items !== p.objects) throw new Error(`the paginated list returned ${r.items} items, wanted ${p.objects}`);
      if (r.badRemaining) throw new Error(r.badRemaining);
      listRv = r.rv;
      const pc = percentiles(r.latencies);
      return { value: pc.p99Ms, ...pc, pages: r.pages, items: r.items, totalSeconds: round3(r.totalMs / 1000) };
    });
    await stage('selector', async () => {
      const path = `${kind.collection(ns(1))}?labelSelector=${encodeURIComponent('bucket=b1')}`;
      const want = Array.from({ length: p.objects }, (_, i) => i).filter((i) => ns(i) === ns(1) && bucket(i) === 'b1').length;
      const first = await client.request('GET', path);
      const n = first.status === 200 ? JSON.parse(first.body).items.length : undefined;
      if (n !== want) throw new Error(`the selector list answered HTTP ${first.status} with ${n} items, wanted ${want}`);
      const r = await runOps(p.selectorRepeats, 1, async () => expectStatus(await client.request('GET', path), 200));
      const pc = percentiles(r.latencies);
      return { value: pc.p99Ms, ...pc, matched: want, namespaceObjects: Math.round(p.objects / SCALE_NAMESPACES), errors: r.errors };
    });
    await stage('informer-sync', async () => {
      const t = performance.now();
      const r = await pagedList(client, kind.all, PAGE);
      const listMs = performance.now() - t;
      const bookmarkMs = await firstBookmark(target, kind.all, r.rv, p.bookmarkTimeoutMs);
      return {
        value: round3((listMs + (bookmarkMs ?? p.bookmarkTimeoutMs)) / 1000),
        listSeconds: round3(listMs / 1000),
        ...(bookmarkMs === undefined ? { bookmark: `none within ${p.bookmarkTimeoutMs} ms` } : { bookmarkMs: round3(bookmarkMs) }),
        items: r.items,
      };
    });
    await stage('rss', async () => {
      await sleep(3000); // let the write-behind settle
      return { ...memory(), listRv };
    });
    await stage('disk', async () => {
      const mib = target.diskMiB();
      const lmdb = await lmdbStats(target.dataDir, p.objects);
      return { value: Math.round((mib * 2 ** 20) / p.objects), diskMiB: mib, ...(lmdb ? { lmdb } : {}) };
    });
    await stage('cold-start', async () => {
      const readyMs = await target.restart();
      const t = performance.now();
      const fresh = httpClient(target.url, target.tls, 1);
      try {
        const why = expectStatus(await fresh.request('GET', `${kind.all}?limit=${PAGE}`), 200);
        if (why) throw new Error(why);
      } finally {
        await fresh.close();
      }
      return { value: readyMs, readyMs, firstListPageMs: Math.round(readyMs + performance.now() - t), rssAfterStart: memory() };
    });
    if (cg && sampler) await stage('cgroup', async () => cgroupFigures(cg, cg.read(), sampler.stop()));
  } finally {
    sampler?.stop();
    await client.close();
  }
  return out;
}

const mib = (/** @type {number} */ bytes) => Math.round((bytes / 2 ** 20) * 10) / 10;

/**
 * cgroupFigures is the cgroup stage: the highest anonymous memory sampled (what the limit must hold) as its value;
 * an OOM kill in the group makes it an error, which fails the run.
 * @param {import('./cgroup.mjs').MemoryCgroup} cg
 * @param {import('./cgroup.mjs').CgroupMemory} now
 * @param {{anon: number, file: number}} max
 */
export function cgroupFigures(cg, now, max) {
  const f = {
    value: mib(max.anon),
    cgroup: `v${cg.version}`,
    limitMiB: mib(cg.limit),
    oomKills: now.oomKills ?? 'not reported by this kernel',
    limitHits: now.limitHits,
    peakMiB: now.peak === undefined ? 'not reported by this kernel' : mib(now.peak),
    maxFileMiB: mib(max.file),
    atEnd: { usageMiB: mib(now.usage), anonMiB: mib(now.anon), fileMiB: mib(now.file), fileMappedMiB: mib(now.fileMapped), shmemMiB: mib(now.shmem) },
  };
  return now.oomKills ? { error: `the OOM killer ended ${now.oomKills} process(es) in the ${f.limitMiB} MiB cgroup`, ...f } : f;
}

/**
 * @typedef {object} ScaleFigure
 * @property {string} id
 * @property {string} label
 * @property {string} unit
 * @property {(f: Record<string, any>) => {goal: string, met: boolean} | undefined} [goal] the issue's target for the figure
 */

/**
 * below is a goal met when the figure's value is under `max`.
 * @param {number} max
 * @param {string} unit
 */
const below = (max, unit) => (/** @type {Record<string, any>} */ f) => ({ goal: `under ${max} ${unit}`, met: typeof f.value === 'number' && f.value < max });

/** The figures of a scale run, in report order, with the targets of "Scale and speed stay" where it sets one. */
export const SCALE_FIGURES = /** @type {ScaleFigure[]} */ ([
  { id: 'fill', label: 'fill, concurrent creates', unit: 'req/s' },
  { id: 'get', label: 'get p99', unit: 'ms', goal: below(10, 'ms') },
  { id: 'page', label: '500-item page of a cluster-wide list, p99', unit: 'ms', goal: below(50, 'ms') },
  { id: 'selector', label: 'label-selector list of one namespace, p99', unit: 'ms' },
  { id: 'informer-sync', label: 'informer sync (paginated list, watch to first BOOKMARK)', unit: 's' },
  { id: 'rss', label: 'VmRSS after the lists', unit: 'MiB' },
  { id: 'disk', label: 'disk per object', unit: 'bytes' },
  { id: 'cold-start', label: 'cold start to /readyz', unit: 'ms', goal: below(1000, 'ms') },
  {
    id: 'cgroup',
    label: 'anonymous memory in the memory cgroup, highest (sampled each second)',
    unit: 'MiB',
    // The container's limit holds: nothing killed, anonymous memory (what cannot be reclaimed) under it.
    goal: (f) => ({ goal: `no OOM kill, under ${f.limitMiB} MiB`, met: f.oomKills === 0 && f.value < f.limitMiB }),
  },
]);

/**
 * scaleMarkdown renders a scale run: one row per figure and target, the goal it is held to, and its details.
 * @param {{objects: number, kind?: string, loadAverage?: {start: number[], end: number[]}, date: string, machine: Record<string, unknown>, targets: {id: string, label: string}[], figures: Record<string, Record<string, Record<string, unknown>>>, notes: string[]}} r
 */
export function scaleMarkdown(r) {
  const load = r.loadAverage ? `; load average ${r.loadAverage.start.join('/')} at the start, ${r.loadAverage.end.join('/')} at the end` : '';
  const lines = [
    `# Scale: ${r.objects.toLocaleString('en')} ${r.kind ?? 'Websites'} in ${SCALE_NAMESPACES} namespaces`,
    '',
    `${r.date}, ${r.machine.cpus} × ${r.machine.cpuModel}, Node.js ${r.machine.node}${load}`,
    '',
  ];
  lines.push('| figure | target | value | goal | details |', '|---|---|---|---|---|');
  for (const f of SCALE_FIGURES) {
    for (const t of r.targets) {
      const v = r.figures[f.id]?.[t.id];
      if (!v) continue;
      const details = Object.entries(v)
        .filter(([k]) => k !== 'value')
        .map(([k, x]) => `${k} ${typeof x === 'object' ? JSON.stringify(x) : x}`)
        .join(', ');
      const g = 'error' in v ? undefined : f.goal?.(v);
      const goal = g ? `${g.goal}: ${g.met ? 'met' : '**missed**'}` : '';
      lines.push(`| ${f.label} | ${t.id} | ${'error' in v ? 'failed' : `${v.value} ${f.unit}`} | ${goal} | ${details} |`);
    }
  }
  lines.push('', ...r.notes.map((n) => `- ${n}`), '');
  return lines.join('\n');
}
