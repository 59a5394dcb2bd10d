/**
 * @module bench/workloads
 * The workloads, run in order against one target at a time (the machine has two cores; two servers at once
 * would measure each other). Every request checks its status, and each list is checked once for its size, so
 * a fast wrong answer cannot pass for a fast right one.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { expectStatus, httpClient, percentiles, round3, runOps, stageRunner, throughput } from './client.mjs';

/** Our group; a target may serve the kind under another (the CRD twin beside our APIService: Target.group). */
export const GROUP = 'extensions.example.com';
// v1: the preferred and stored version, what kubectl and new clients use (the CRD baseline serves the same schema).
const basePath = (/** @type {string} */ group) => `/apis/${group}/v1`;
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const MERGE_PATCH = 'application/merge-patch+json';

/** The namespaces the workloads use: each create workload its own, so lists have exact sizes. */
export const NAMESPACES = ['bench-c1', 'bench', 'bench-watch', 'bench-bulk'];

/**
 * @typedef {object} Params
 * @property {number} creates objects per create workload (concurrency 1 and `concurrency`)
 * @property {number} gets
 * @property {number} listRepeats lists timed per format, each of all `creates` objects of one namespace
 * @property {number} patches
 * @property {number} watchWritesPerSecond
 * @property {number} watchSeconds
 * @property {number[]} watchers fan-out levels
 * @property {number} bulkObjects objects stored when memory and cold start are measured (and the informer syncs)
 * @property {number} concurrency requests in flight for the concurrent workloads
 */

/**
 * @typedef {object} Workload
 * @property {string} id
 * @property {string} label
 * @property {string} unit
 * @property {'higher' | 'lower'} better
 */

/**
 * workloadList names every figure the run produces, in order.
 * @param {Params} p
 * @returns {Workload[]}
 */
export function workloadList(p) {
  const k = (/** @type {number} */ n) => (n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n));
  return [
    { id: 'create-c1', label: `create ${k(p.creates)}, concurrency 1`, unit: 'req/s', better: 'higher' },
    { id: 'create-c64', label: `create ${k(p.creates)}, concurrency ${p.concurrency}`, unit: 'req/s', better: 'higher' },
    { id: 'get', label: `get by name, concurrency ${p.concurrency}`, unit: 'req/s', better: 'higher' },
    { id: 'list-json', label: `list ${k(p.creates)} as JSON (median)`, unit: 'ms', better: 'lower' },
    { id: 'list-table', label: `list ${k(p.creates)} as Table (median)`, unit: 'ms', better: 'lower' },
    { id: 'patch', label: `merge patch, concurrency ${p.concurrency}`, unit: 'req/s', better: 'higher' },
    { id: 'delete', label: `delete ${k(p.creates)}, concurrency ${p.concurrency}`, unit: 'req/s', better: 'higher' },
    ...p.watchers.map(
      (n) =>
        /** @type {Workload} */ ({
          id: `watch-${n}`,
          label: `watch p99, ${n} watcher${n === 1 ? '' : 's'}, ${p.watchWritesPerSecond} writes/s`,
          unit: 'ms',
          better: 'lower',
        }),
    ),
    { id: 'create-bulk', label: `create up to ${k(p.bulkObjects)} stored, concurrency ${p.concurrency}`, unit: 'req/s', better: 'higher' },
    { id: 'informer-sync', label: `informer initial sync, ${k(p.bulkObjects)} objects (pages of 500, then watch)`, unit: 'ms', better: 'lower' },
    { id: 'rss', label: `RSS with ${k(p.bulkObjects)} objects stored`, unit: 'MiB', better: 'lower' },
    { id: 'cold-start', label: `cold start to /readyz, ${k(p.bulkObjects)} objects`, unit: 'ms', better: 'lower' },
  ];
}

/**
 * websiteBody is the object every target stores: a plain Website; defaults fill the rest. In v1 by default;
 * `v1alpha1` gives the same object in that version (ab.mjs and alloc.mjs measure either, and earlier builds).
 * @param {string} name
 * @param {'v1' | 'v1alpha1'} [version]
 * @param {string} [group]
 */
export function websiteBody(name, version = 'v1', group = GROUP) {
  const repository = `https://github.com/example/${name}.git`;
  return {
    apiVersion: `${group}/${version}`,
    kind: 'Website',
    metadata: { name, labels: { app: 'bench', tier: 'web' } },
    spec: version === 'v1' ? { git: { repository, branch: 'main' } } : { gitRepo: repository, branch: 'main' },
  };
}

const pad = (/** @type {number} */ i) => String(i).padStart(6, '0');

/**
 * @typedef {Record<string, number | string | Record<string, unknown>>} Figure
 * A result: `value` is the headline number, the rest are details.
 */

/**
 * runAll runs every workload against the target and returns the figures by workload id. A workload that
 * fails records its error and the run goes on with the next one.
 * @param {import('./targets.mjs').Target} target
 * @param {Params} p
 * @param {(m: string) => void} log
 * @returns {Promise<Record<string, Figure | {error: string}>>}
 */
export async function runAll(target, p, log) {
  const client = httpClient(target.url, target.tls, p.concurrency);
  const group = target.group ?? GROUP;
  const BASE = basePath(group);
  /** @type {Record<string, Figure | {error: string}>} */
  const out = {};
  /** @type {(id: string, fn: () => Promise<Figure>) => Promise<void>} */
  const stage = stageRunner(target.id, out, log);
  /** @param {string} ns @param {string} name */
  const create = async (ns, name) =>
    expectStatus(await client.request('POST', `${BASE}/namespaces/${ns}/websites`, { body: websiteBody(name, 'v1', group) }), 201);
  let stored = 0;

  try {
    await target.prepare(NAMESPACES);
    await stage('create-c1', async () => {
      const r = await runOps(p.creates, 1, (i) => create('bench-c1', `c1-${pad(i)}`));
      stored += r.latencies.length;
      return throughput(r);
    });
    await stage('create-c64', async () => {
      const r = await runOps(p.creates, p.concurrency, (i) => create('bench', `ws-${pad(i)}`));
      stored += r.latencies.length;
      return throughput(r);
    });
    await stage('get', async () => {
      const r = await runOps(p.gets, p.concurrency, async (i) => {
        const name = `ws-${pad((i * 7919) % p.creates)}`; // a spread of names, not a hot one
        return expectStatus(await client.request('GET', `${BASE}/namespaces/bench/websites/${name}`), 200);
      });
      return throughput(r);
    });
    for (const [id, accept, field] of /** @type {const} */ ([
      ['list-json', 'application/json', 'items'],
      ['list-table', TABLE_ACCEPT, 'rows'],
    ])) {
      await stage(id, async () => {
        const path = `${BASE}/namespaces/bench/websites`;
        // A first list checks the answer and warms whatever a server builds on first use (our Table rows); it is
        // timed apart, as firstMs.
        const t0 = performance.now();
        const first = await client.request('GET', path, { accept });
        const firstMs = round3(performance.now() - t0);
        const n = first.status === 200 ? JSON.parse(first.body)[field]?.length : undefined;
        if (n !== p.creates) throw new Error(`list answered HTTP ${first.status} with ${n} ${field}, wanted ${p.creates}`);
        const r = await runOps(p.listRepeats, 1, async () => expectStatus(await client.request('GET', path, { accept }), 200));
        const pc = percentiles(r.latencies);
        return { value: pc.p50Ms, ...pc, firstMs, count: r.count, errors: r.errors, bytes: first.body.length };
      });
    }
    await stage('patch', async () => {
      const r = await runOps(p.patches, p.concurrency, async (i) => {
        const name = `ws-${pad((i * 7919) % p.creates)}`;
        const body = { metadata: { labels: { patched: String(i) } }, spec: { replicas: (i % 5) + 1 } };
        return expectStatus(await client.request('PATCH', `${BASE}/namespaces/bench/websites/${name}`, { body, contentType: MERGE_PATCH }), 200);
      });
      return throughput(r);
    });
    await stage('delete', async () => {
      const r = await runOps(p.creates, p.concurrency, async (i) => {
        const res = await client.request('DELETE', `${BASE}/namespaces/bench-c1/websites/c1-${pad(i)}`);
        return res.status === 202 ? undefined : expectStatus(res, 200);
      });
      stored -= r.latencies.length;
      return throughput(r);
    });
    for (const n of p.watchers) {
      await stage(`watch-${n}`, async () => {
        const f = await watchFanOut(target, client, n, p, group);
        stored += Number(f.writes) - Number(f.writeErrors);
        return f;
      });
    }
    await stage('create-bulk', async () => {
      const count = Math.max(0, p.bulkObjects - stored);
      const r = await runOps(count, p.concurrency, (i) => create('bench-bulk', `bulk-${pad(i)}`));
      stored += r.latencies.length;
      return { ...throughput(r), stored };
    });
    await stage('informer-sync', async () => ({ ...(await informerSync(target, BASE, stored)), stored }));
    await stage('rss', async () => {
      await sleep(3000); // let in-flight work and the write-behind settle
      const m = target.memory();
      /** @param {'rss' | 'anon' | 'file'} k */
      const sum = (k) => Math.round(Object.values(m).reduce((s, x) => s + (x?.[k] ?? 0), 0) * 10) / 10;
      return { value: sum('rss'), anonMiB: sum('anon'), fileMiB: sum('file'), diskMiB: target.diskMiB(), stored, processes: m };
    });
    await stage('cold-start', async () => {
      const readyMs = await target.restart();
      // Ready is not the same as serving: time the first page of an all-namespaces list after it. Behind
      // kube-apiserver that is when the APIService serves again: its aggregator answers 503 until its availability
      // check has seen us back, which may be after our /readyz turned 200; those answers are counted, not a failure
      // (for up to a minute).
      const t = performance.now();
      const fresh = httpClient(target.url, target.tls, 1);
      let unavailable = 0;
      try {
        for (;;) {
          const r = await fresh.request('GET', `${BASE}/websites?limit=500`);
          if (target.direct && r.status === 503 && performance.now() - t < 60_000) {
            unavailable++;
            await sleep(20);
            continue;
          }
          const why = expectStatus(r, 200);
          if (why) throw new Error(why);
          break;
        }
      } finally {
        await fresh.close();
      }
      /** @type {Record<string, number>} */
      const figure = { value: readyMs, readyMs, firstListPageMs: Math.round(readyMs + performance.now() - t), stored };
      if (target.direct) figure['unavailableAnswers'] = unavailable;
      return figure;
    });
  } finally {
    await client.close();
  }
  return out;
}

/**
 * watchFanOut opens n watches on bench-watch from the current resourceVersion, creates objects there at the
 * given rate, and measures for every (watcher, object) pair the time from the create's acknowledgement (its
 * 201 reaching the client) to the ADDED event reaching that watcher. An event that arrives before the 201
 * counts as 0 ms.
 * @param {import('./targets.mjs').Target} target
 * @param {import('./client.mjs').HttpClient} client
 * @param {number} n
 * @param {Params} p
 * @param {string} group
 * @returns {Promise<Figure>}
 */
async function watchFanOut(target, client, n, p, group) {
  const BASE = basePath(group);
  const writes = Math.max(1, Math.round(p.watchWritesPerSecond * p.watchSeconds));
  const prefix = `wf${n}-`;
  const marker = `"name":"${prefix}`;
  const list = await client.request('GET', `${BASE}/namespaces/bench-watch/websites?limit=1`);
  if (list.status !== 200) throw new Error(`list: HTTP ${list.status}`);
  const rv = JSON.parse(list.body).metadata.resourceVersion;

  const ack = new Float64Array(writes).fill(NaN);
  const recv = new Float64Array(writes * n).fill(NaN);
  let received = 0;
  let duplicates = 0;
  // Watchers the server ended with an ERROR event (410 when a watcher falls too far behind).
  let ended = 0;
  const pool = new Pool(target.url, {
    connections: n,
    pipelining: 1,
    bodyTimeout: 0,
    headersTimeout: 60_000,
    connect: { ca: target.tls.ca, cert: target.tls.cert, key: target.tls.key, servername: target.tls.servername ?? 'localhost' },
  });
  /** @type {import('undici').Dispatcher.ResponseData[]} */
  const streams = [];
  try {
    /** @param {number} w */
    const open = async (w) => {
      const r = await pool.request({
        method: 'GET',
        path: `${BASE}/namespaces/bench-watch/websites?watch=true&resourceVersion=${rv}`,
        headers: { accept: 'application/json' },
      });
      if (r.statusCode !== 200) throw new Error(`watch: HTTP ${r.statusCode} ${await r.body.text()}`);
      streams.push(r);
      let carry = '';
      r.body.on('data', (/** @type {Buffer} */ chunk) => {
        const t = performance.now();
        // Names are ASCII: latin1 decoding is the cheapest exact view. Only whole lines are scanned.
        const s = carry + chunk.toString('latin1');
        const end = s.lastIndexOf('\n');
        if (end < 0) {
          carry = s;
          return;
        }
        carry = s.slice(end + 1);
        if (s.includes('"type":"ERROR"')) ended++;
        for (let at = s.indexOf(marker); at >= 0 && at < end; at = s.indexOf(marker, s.indexOf('\n', at))) {
          const from = at + marker.length;
          const j = Number(s.slice(from, s.indexOf('"', from)));
          const slot = w * writes + j;
          if (!Number.isNaN(recv[slot] ?? NaN)) duplicates++;
          else {
            recv[slot] = t;
            received++;
          }
        }
      });
      r.body.on('error', () => undefined); // closed by us at the end
    };
    // Connect in batches: a thousand TLS handshakes at once would time some of them out.
    for (let w = 0; w < n; w += 50) await Promise.all(Array.from({ length: Math.min(50, n - w) }, (_, k) => open(w + k)));

    // Write at a fixed rate without waiting for earlier writes (an open-loop load: a slow server falls behind).
    const writer = httpClient(target.url, target.tls, 64);
    let failed = 0;
    /** @type {string | undefined} */
    let firstError;
    const pending = [];
    const t0 = performance.now();
    try {
      for (let i = 0; i < writes; ) {
        const due = Math.min(writes, Math.floor(((performance.now() - t0) / 1000) * p.watchWritesPerSecond) + 1);
        for (; i < due; i++) {
          const j = i;
          pending.push(
            writer.request('POST', `${BASE}/namespaces/bench-watch/websites`, { body: websiteBody(`${prefix}${j}`, 'v1', group) }).then(
              (r) => {
                if (r.status === 201) ack[j] = performance.now();
                else {
                  failed++;
                  firstError ??= `HTTP ${r.status} ${r.body.slice(0, 200)}`;
                }
              },
              (e) => {
                failed++;
                firstError ??= String(e);
              },
            ),
          );
        }
        await sleep(1);
      }
      await Promise.all(pending);
    } finally {
      await writer.close();
    }
    const writeSeconds = (performance.now() - t0) / 1000;
    const expected = (writes - failed) * n;
    // Wait for the stragglers: at most 60 s after the last acknowledgement, or 10 s without progress.
    for (let last = received, quiet = performance.now(), start = performance.now(); received < expected; await sleep(20)) {
      if (received !== last) [last, quiet] = [received, performance.now()];
      if (performance.now() - quiet > 10_000 || performance.now() - start > 60_000) break;
    }
    const lat = new Float64Array(received);
    let k = 0;
    let beforeAck = 0;
    for (let w = 0; w < n; w++) {
      for (let j = 0; j < writes; j++) {
        const t = recv[w * writes + j] ?? NaN;
        const a = ack[j] ?? NaN;
        if (Number.isNaN(t) || Number.isNaN(a)) continue;
        if (t < a) beforeAck++;
        lat[k++] = Math.max(0, t - a);
      }
    }
    const pc = percentiles(lat.subarray(0, k));
    return {
      value: pc.p99Ms,
      ...pc,
      watchers: n,
      writes,
      writeErrors: failed,
      ...(firstError ? { firstError } : {}),
      achievedWritesPerSecond: Math.round((writes / writeSeconds) * 10) / 10,
      delivered: round3(expected ? received / expected : 0),
      beforeAck,
      duplicates,
      watchersEndedByServer: ended,
    };
  } finally {
    for (const s of streams) s.body.destroy();
    await pool.destroy();
  }
}

// How long the informer's watch may stay silent after it opened: a server sends no event until something changes or
// its bookmark interval passes (a minute), so the sync is timed to the watch's 200, and a first event only noted.
const FIRST_EVENT_WAIT_MS = 1000;

/**
 * informerSync does what a client-go informer does on start, on a fresh connection: list every object in pages of
 * 500 following `continue`, then watch from the list's resourceVersion with bookmarks allowed. The figure is the
 * time until the watch answered 200 (the informer is synced and watching); a first event or bookmark within
 * FIRST_EVENT_WAIT_MS is reported apart.
 * @param {import('./targets.mjs').Target} target
 * @param {string} base
 * @param {number} stored objects the list must return
 * @returns {Promise<Figure>}
 */
async function informerSync(target, base, stored) {
  const pool = new Pool(target.url, {
    connections: 1,
    headersTimeout: 120_000,
    bodyTimeout: 0,
    connect: { ca: target.tls.ca, cert: target.tls.cert, key: target.tls.key, servername: target.tls.servername ?? 'localhost' },
  });
  try {
    const t0 = performance.now();
    let items = 0;
    let pages = 0;
    let cont = '';
    let rv = '';
    do {
      const r = await pool.request({
        method: 'GET',
        path: `${base}/websites?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
        headers: { accept: 'application/json' },
      });
      const body = await r.body.text();
      if (r.statusCode !== 200) throw new Error(`list page ${pages + 1}: HTTP ${r.statusCode} ${body.slice(0, 200)}`);
      const list = JSON.parse(body);
      items += list.items.length;
      pages++;
      cont = list.metadata?.continue ?? '';
      rv ||= list.metadata.resourceVersion; // every page is at the first page's resourceVersion
    } while (cont);
    const listMs = performance.now() - t0;
    if (items !== stored) throw new Error(`the paginated list returned ${items} objects, wanted ${stored}`);
    const w = await pool.request({
      method: 'GET',
      path: `${base}/websites?watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(rv)}`,
      headers: { accept: 'application/json' },
    });
    const watchingMs = performance.now() - t0;
    if (w.statusCode !== 200) throw new Error(`watch: HTTP ${w.statusCode} ${await w.body.text()}`);
    /** @type {number | undefined} */
    let firstEventMs;
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, FIRST_EVENT_WAIT_MS);
      w.body.once('data', () => {
        firstEventMs = performance.now() - t0;
        clearTimeout(timer);
        resolve(undefined);
      });
      w.body.on('error', () => undefined); // destroyed by us below
    });
    w.body.destroy();
    return { value: round3(watchingMs), listMs: round3(listMs), pages, items, ...(firstEventMs === undefined ? {} : { firstEventMs: round3(firstEventMs) }) };
  } finally {
    await pool.destroy();
  }
}
