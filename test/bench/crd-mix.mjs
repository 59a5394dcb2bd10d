/**
 * @module bench/crd-mix
 * Six CRD-defined kinds with CEL rules at once: concurrent clients create, update and label-select objects of
 * every kind, interleaved, against a server serving the six CRDs (ours with --crd, or kube-apiserver + etcd). The
 * same run against the same CRDs with their CEL rules removed (crd-kinds.mjs withoutCel) tells what CEL costs per
 * write: server CPU time per write, and the latency of one write at a time, kind by kind, with and without rules.
 * Every answer is checked (status, the update's label, each selector list's size, the final count of each kind, and
 * one write per kind that its CEL rules refuse), so a fast wrong answer cannot pass for a fast right one.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { processCpuMs } from '../e2e/plane.mjs';
import { expectStatus, httpClient, percentiles, round3, runOps, stageRunner, throughput } from './client.mjs';
import { collectionPath, CRD_CORPUS, objectOf, readCrdKind } from './crd-kinds.mjs';

const MERGE_PATCH = 'application/merge-patch+json';

/**
 * @typedef {object} MixKindSpec how the workload uses one CRD of the corpus
 * @property {string} file its file in the corpus
 * @property {(o: Record<string, any>, i: number) => void} [fix] changes an object made from the examples (so a rule
 * has something to check)
 * @property {(i: number) => Record<string, unknown>} spec the update's change to spec (merged with a label change)
 * @property {{create?: (o: Record<string, any>) => void, patch?: Record<string, unknown>, message: string}} refusal a
 * write the kind's CEL rules refuse (a create of an object so changed, or a patch of an existing object), and the
 * rule's message the 422 must carry
 */

/**
 * MIX_KINDS are the six CRDs of the corpus with CEL rules, each update touching what its rules check.
 * @type {MixKindSpec[]}
 */
export const MIX_KINDS = [
  {
    // Cluster-scoped; `self == oldSelf` on spec.controllerName.
    file: 'gateway.networking.k8s.io_gatewayclasses.yaml',
    spec: (i) => ({ description: `revision ${i}` }),
    refusal: { patch: { spec: { controllerName: 'example.com/another-controller' } }, message: 'field is immutable' },
  },
  {
    // 16 rules over listeners, addresses and infrastructure labels (the third example lists 11 addresses).
    file: 'gateway.networking.k8s.io_gateways.yaml',
    spec: (i) => ({ infrastructure: { labels: { 'example.com/revision': `r${i}` } } }),
    refusal: {
      create: (o) => {
        o.spec.listeners[0].tls = { mode: 'Terminate', certificateRefs: [{ name: 'example-com' }] };
      },
      message: "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
    },
  },
  {
    // Transition rules (`self == oldSelf`, `!has(oldSelf.x) || has(self.x)`) and an exactly-one rule on the source.
    file: 'snapshot.storage.k8s.io_volumesnapshots.yaml',
    spec: (i) => ({ volumeSnapshotClassName: `class-${i % 10}` }),
    refusal: {
      create: (o) => {
        o.spec.source.volumeSnapshotContentName = 'content-1';
      },
      message: 'exactly one of volumeSnapshotContentName and persistentVolumeClaimName must be set',
    },
  },
  {
    // has() and a ternary comparing two fields of spec.
    file: 'keda.sh_scaledobjects.yaml',
    spec: (i) => ({ maxReplicaCount: 50 + (i % 50) }),
    refusal: {
      create: (o) => Object.assign(o.spec, { minReplicaCount: 10, maxReplicaCount: 5 }),
      message: 'minReplicaCount must be less than or equal to maxReplicaCount',
    },
  },
  {
    // The largest schema of the corpus (560 KiB); `self == oldSelf` on an atomic spec.selector.
    file: 'argoproj.io_rollouts.yaml',
    spec: (i) => ({ replicas: 1 + (i % 5) }),
    refusal: { patch: { spec: { selector: { matchLabels: { app: 'another-app' } } } }, message: '.spec.selector is immutable' },
  },
  {
    // 59 defaults; a string rule on spec.rabbitmq.envConfig, which every object here sets.
    file: 'rabbitmq.com_rabbitmqclusters.yaml',
    fix: (o, i) => {
      o.spec = { ...(o.spec ?? {}), rabbitmq: { ...(o.spec?.rabbitmq ?? {}), envConfig: `PLUGINS_DIR=/opt/rabbitmq/plugins-${i % 10}` } };
    },
    spec: (i) => ({ replicas: 1 + 2 * (i % 3) }),
    refusal: {
      create: (o) => {
        o.spec.rabbitmq.envConfig = 'PLUGINS_DIR=$(id)';
      },
      message: "envConfig must not contain shell command substitution ('$(...)' or backticks)",
    },
  },
];

/**
 * @typedef {import('./crd-kinds.mjs').CrdKind & {spec: MixKindSpec}} MixKind
 */

/**
 * mixKinds reads the six CRDs and their examples from the corpus.
 * @param {string} [corpus]
 * @returns {MixKind[]}
 */
export function mixKinds(corpus = CRD_CORPUS) {
  return MIX_KINDS.map((spec) => ({ ...readCrdKind(join(corpus, spec.file)), spec }));
}

/** The namespaces objects are spread over (a cluster-scoped kind ignores them). */
export const MIX_NAMESPACES = ['mix-0', 'mix-1', 'mix-2', 'mix-3'];
const BUCKETS = 4;

/**
 * @typedef {object} MixParams
 * @property {number} objectsPerKind objects each kind gets in the create stage (then updated once each)
 * @property {number} concurrency requests in flight (the concurrent clients)
 * @property {number} selectRepeats label-selector lists per kind
 * @property {number} mixedOps operations of the mixed stage (creates, updates and selects of every kind at once)
 * @property {number} serialWrites per kind, creates then as many updates one at a time (the per-write latency)
 */

/** @type {Record<'quick' | 'full', MixParams>} */
export const MIX_PARAMS = {
  full: { objectsPerKind: 500, concurrency: 64, selectRepeats: 20, mixedOps: 3000, serialWrites: 100 },
  quick: { objectsPerKind: 50, concurrency: 16, selectRepeats: 3, mixedOps: 300, serialWrites: 10 },
};

const ns = (/** @type {number} */ i) => MIX_NAMESPACES[i % MIX_NAMESPACES.length] ?? '';
// Independent of the namespace, so a bucket is a quarter of every namespace.
const bucket = (/** @type {number} */ i) => `b${Math.floor(i / MIX_NAMESPACES.length) % BUCKETS}`;

/**
 * @typedef {object} MixStage
 * @property {string} id
 * @property {string} label
 * @property {string} unit
 * @property {'higher' | 'lower'} better
 */

/**
 * mixStages names the figures of a run, in order.
 * @param {MixParams} p
 * @returns {MixStage[]}
 */
export function mixStages(p) {
  const n = 6 * p.objectsPerKind;
  return [
    { id: 'create', label: `create ${n} objects of six kinds, interleaved, concurrency ${p.concurrency}`, unit: 'req/s', better: 'higher' },
    { id: 'update', label: `merge-patch each of them, concurrency ${p.concurrency}`, unit: 'req/s', better: 'higher' },
    { id: 'select', label: `label-selector list of each kind (a quarter of a namespace), six clients`, unit: 'ms', better: 'lower' },
    {
      id: 'mixed',
      label: `${p.mixedOps} creates, updates and selector lists of six kinds at once, concurrency ${p.concurrency}`,
      unit: 'req/s',
      better: 'higher',
    },
    { id: 'serial-create', label: `create one at a time, ${p.serialWrites} per kind, median`, unit: 'ms', better: 'lower' },
    { id: 'serial-update', label: `merge-patch one at a time, ${p.serialWrites} per kind, median`, unit: 'ms', better: 'lower' },
    { id: 'refusals', label: "a write each kind's CEL rules refuse: 422 with the rule's message", unit: 'refused', better: 'higher' },
    { id: 'count', label: 'every object of every kind listed back', unit: 'objects', better: 'higher' },
  ];
}

/**
 * cpuOf is the CPU time (ms) the target's server processes have used so far, by process.
 * @param {import('./targets.mjs').Target} target
 * @returns {Record<string, number>}
 */
function cpuOf(target) {
  const pids = target.pids?.() ?? { server: target.pid?.() };
  return Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, processCpuMs(pid)]));
}

/**
 * cpuPerOp is the CPU time each process used between two readings, per operation, in ms.
 * @param {Record<string, number>} before
 * @param {Record<string, number>} after
 * @param {number} ops
 */
function cpuPerOp(before, after, ops) {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, ops > 0 ? round3((v - (before[k] ?? NaN)) / ops) : NaN]));
}

/**
 * byKind summarises latencies recorded per kind: p50 and p99 of each.
 * @param {MixKind[]} kinds
 * @param {number[][]} samples
 */
function byKind(kinds, samples) {
  return Object.fromEntries(
    kinds.map((k, i) => {
      const pc = percentiles(Float64Array.from(samples[i] ?? []));
      return [k.plural, { p50Ms: pc.p50Ms, p99Ms: pc.p99Ms }];
    }),
  );
}

/**
 * runMix runs the stages against a target serving the six kinds; figures by stage id, `value` the headline. With
 * `rules` false the target serves the CRDs without CEL rules: the refusals are not asked for.
 * @param {import('./targets.mjs').Target} target
 * @param {MixKind[]} kinds
 * @param {MixParams} p
 * @param {(m: string) => void} log
 * @param {{rules: boolean}} o
 * @returns {Promise<Record<string, Record<string, unknown>>>}
 */
export async function runMix(target, kinds, p, log, o) {
  const client = httpClient(target.url, target.tls, p.concurrency);
  /** @type {Record<string, Record<string, unknown>>} */
  const out = {};
  const stage = stageRunner(target.id, out, log);
  const K = kinds.length;
  // Objects stored per kind, named `<prefix>-<i>`: i < created[k] exist.
  const created = kinds.map(() => 0);
  /** @param {MixKind} k @param {number} i @param {string} prefix */
  const itemPath = (k, i, prefix) => `${collectionPath(k, ns(i))}/${prefix}-${i}`;
  /** @param {MixKind} k @param {number} i @param {string} prefix */
  const create = async (k, i, prefix) => {
    const body = objectOf(k, `${prefix}-${i}`, { app: 'mix', bucket: bucket(i) }, i, k.spec.fix);
    return expectStatus(await client.request('POST', collectionPath(k, ns(i)), { body }), 201);
  };
  /** @param {MixKind} k @param {number} i @param {string} prefix @param {number} rev */
  const update = async (k, i, prefix, rev) => {
    const body = { metadata: { labels: { rev: `r${rev}` } }, spec: k.spec.spec(rev) };
    const r = await client.request('PATCH', itemPath(k, i, prefix), { body, contentType: MERGE_PATCH });
    return (
      expectStatus(r, 200) ??
      (r.body.includes(`"rev":"r${rev}"`) ? undefined : `${k.plural} ${prefix}-${i}: the patched object does not carry label rev=r${rev}`)
    );
  };
  /** @param {MixKind} k */
  const selectorPath = (k) => `${collectionPath(k, ns(1))}?labelSelector=${encodeURIComponent('bucket=b1')}`;
  // Of objects 0..n-1 of a kind, those a selector list of namespace mix-1 and bucket b1 returns.
  /** @param {MixKind} k @param {number} n */
  const selected = (k, n) => Array.from({ length: n }, (_, i) => i).filter((i) => (!k.namespaced || ns(i) === ns(1)) && bucket(i) === 'b1').length;
  /** @param {MixKind} k @param {number} n */
  const select = async (k, n) => {
    const r = await client.request('GET', selectorPath(k));
    const why = expectStatus(r, 200);
    if (why) return why;
    const got = JSON.parse(r.body).items.length;
    return got === n ? undefined : `${k.plural}: the selector list returned ${got} items, wanted ${n}`;
  };
  // A write stage: ops interleaved across the kinds (op j is kind j % K), CPU time per write and latency per kind.
  /** @param {number} count @param {(k: MixKind, kindIndex: number, i: number) => Promise<string | void>} op */
  const interleaved = async (count, op) => {
    const samples = kinds.map(() => /** @type {number[]} */ ([]));
    const before = cpuOf(target);
    const r = await runOps(count, p.concurrency, async (j) => {
      const ki = j % K;
      const t = performance.now();
      const why = await op(/** @type {MixKind} */ (kinds[ki]), ki, Math.floor(j / K));
      if (!why) samples[ki]?.push(performance.now() - t);
      return why;
    });
    return { ...throughput(r), cpuMsPerOp: cpuPerOp(before, cpuOf(target), r.latencies.length), byKind: byKind(kinds, samples) };
  };

  try {
    await target.prepare(MIX_NAMESPACES);
    await stage('create', async () => {
      const f = await interleaved(K * p.objectsPerKind, (k, _, i) => create(k, i, 'obj'));
      kinds.forEach((_, ki) => {
        created[ki] = p.objectsPerKind;
      });
      return f;
    });
    await stage('update', () => interleaved(K * p.objectsPerKind, (k, _, i) => update(k, i, 'obj', i)));
    await stage('select', async () => {
      const samples = kinds.map(() => /** @type {number[]} */ ([]));
      const r = await runOps(K * p.selectRepeats, K, async (j) => {
        const ki = j % K;
        const k = /** @type {MixKind} */ (kinds[ki]);
        const t = performance.now();
        const why = await select(k, selected(k, created[ki] ?? 0));
        if (!why) samples[ki]?.push(performance.now() - t);
        return why;
      });
      const pc = percentiles(r.latencies);
      return {
        value: pc.p99Ms,
        ...pc,
        count: r.count,
        errors: r.errors,
        ...(r.firstError ? { firstError: r.firstError } : {}),
        byKind: byKind(kinds, samples),
      };
    });
    await stage('mixed', async () => {
      // Of every five rounds over the kinds: two creates of new objects, two updates of existing ones, one selector
      // list (its size not checked: creates run beside it).
      const made = kinds.map(() => 0);
      const kindsOf = { create: 0, update: 0, select: 0 };
      const f = await interleaved(p.mixedOps, async (k, ki, round) => {
        const what = round % 5;
        if (what < 2) {
          kindsOf.create++;
          const i = made[ki] ?? 0;
          made[ki] = i + 1;
          return create(k, i, 'mixed');
        }
        if (what < 4) {
          kindsOf.update++;
          return update(k, round % p.objectsPerKind, 'obj', p.objectsPerKind + round);
        }
        kindsOf.select++;
        return expectStatus(await client.request('GET', selectorPath(k)), 200);
      });
      return { ...f, operations: kindsOf, mixedCreated: made.reduce((a, b) => a + b, 0) };
    });
    // One write at a time: the latency of a write with nothing queued, where CEL's time is not hidden by other work.
    for (const [id, prefix] of /** @type {const} */ ([
      ['serial-create', 'serial'],
      ['serial-update', 'serial'],
    ])) {
      await stage(id, async () => {
        const samples = kinds.map(() => /** @type {number[]} */ ([]));
        const before = cpuOf(target);
        let errors = 0;
        /** @type {string | undefined} */
        let firstError;
        let done = 0;
        // Kind by kind, so each kind's CPU time per write is known too.
        /** @type {Record<string, Record<string, number>>} */
        const cpuByKind = {};
        for (const [ki, k] of kinds.entries()) {
          const kindBefore = cpuOf(target);
          const doneBefore = done;
          for (let i = 0; i < p.serialWrites; i++) {
            const t = performance.now();
            const why = id === 'serial-create' ? await create(k, i, prefix) : await update(k, i, prefix, i + 1);
            if (why) {
              errors++;
              firstError ??= why;
            } else {
              samples[ki]?.push(performance.now() - t);
              done++;
            }
          }
          cpuByKind[k.plural] = cpuPerOp(kindBefore, cpuOf(target), done - doneBefore);
        }
        const pc = percentiles(Float64Array.from(samples.flat()));
        const kindFigures = Object.fromEntries(Object.entries(byKind(kinds, samples)).map(([plural, f]) => [plural, { ...f, cpuMsPerOp: cpuByKind[plural] }]));
        return {
          value: pc.p50Ms,
          ...pc,
          count: K * p.serialWrites,
          errors,
          ...(firstError ? { firstError } : {}),
          cpuMsPerOp: cpuPerOp(before, cpuOf(target), done),
          byKind: kindFigures,
        };
      });
    }
    if (o.rules) {
      await stage('refusals', async () => {
        /** @type {string[]} */
        const wrong = [];
        for (const k of kinds) {
          const r = k.spec.refusal;
          let res;
          if (r.create) {
            const body = objectOf(k, 'refused-0', { app: 'mix' }, 0, k.spec.fix);
            r.create(body);
            res = await client.request('POST', collectionPath(k, ns(0)), { body });
          } else {
            res = await client.request('PATCH', itemPath(k, 0, 'obj'), { body: r.patch, contentType: MERGE_PATCH });
          }
          if (res.status !== 422 || !res.body.includes(JSON.stringify(r.message).slice(1, -1))) {
            wrong.push(`${k.plural}: HTTP ${res.status} ${res.body.slice(0, 300)}`);
          }
        }
        if (wrong.length) throw new Error(`CEL did not refuse (422 with the rule's message): ${wrong.join('; ')}`);
        return { value: kinds.length, kinds: kinds.length };
      });
    }
    await stage('count', async () => {
      let total = 0;
      /** @type {Record<string, number>} */
      const each = {};
      const wrong = [];
      for (const [ki, k] of kinds.entries()) {
        const r = await client.request('GET', collectionPath(k, ''));
        const why = expectStatus(r, 200);
        if (why) throw new Error(`${k.plural}: ${why}`);
        const items = JSON.parse(r.body).items.length;
        // Every kind got created[ki] objects, serialWrites more, and its share of the mixed stage's creates (op j is
        // kind j % K, so the first kinds may have one more).
        const want = (created[ki] ?? 0) + p.serialWrites + mixedShare(p.mixedOps, K, ki);
        each[k.plural] = items;
        total += items;
        if (items !== want) wrong.push(`${k.plural}: ${items} listed, wanted ${want}`);
      }
      if (wrong.length) throw new Error(wrong.join('; '));
      return { value: total, byKind: each };
    });
  } finally {
    await client.close();
  }
  return out;
}

/**
 * mixedShare is how many creates kind ki gets in a mixed stage of n operations over K kinds: op j is kind j % K,
 * round ⌊j / K⌋, and rounds 0 and 1 of every 5 create.
 * @param {number} n
 * @param {number} K
 * @param {number} ki
 */
export function mixedShare(n, K, ki) {
  let c = 0;
  for (let j = ki; j < n; j += K) if (Math.floor(j / K) % 5 < 2) c++;
  return c;
}

/**
 * celCost is what CEL costs per write, from a target with rules and the same target without them: the difference
 * in server CPU time per write (the concurrent create and update stages, and one write at a time, by kind; the one
 * process that validates, named by `process`) and in the median latency of one write at a time, overall and by kind
 * (ms; negative within noise).
 * @param {Record<string, Record<string, any>>} withRules figures by stage
 * @param {Record<string, Record<string, any>>} withoutRules
 * @param {string} process the validating process in cpuMsPerOp (server, kube-apiserver)
 */
export function celCost(withRules, withoutRules, process) {
  const d = (/** @type {unknown} */ a, /** @type {unknown} */ b) =>
    typeof a === 'number' && typeof b === 'number' && Number.isFinite(a - b) ? round3(a - b) : undefined;
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const s of ['create', 'update']) {
    const a = withRules[s]?.cpuMsPerOp?.[process];
    const b = withoutRules[s]?.cpuMsPerOp?.[process];
    out[`${s}CpuMs`] = { withRules: a, withoutRules: b, cel: d(a, b) };
  }
  for (const s of ['serial-create', 'serial-update']) {
    const a = withRules[s];
    const b = withoutRules[s];
    /** @type {Record<string, unknown>} */
    const kinds = {};
    /** @type {Record<string, unknown>} */
    const cpu = {};
    for (const [plural, f] of Object.entries(a?.byKind ?? {})) {
      const g = b?.byKind?.[plural];
      kinds[plural] = { withRules: f.p50Ms, withoutRules: g?.p50Ms, cel: d(f.p50Ms, g?.p50Ms) };
      const [x, y] = [f.cpuMsPerOp?.[process], g?.cpuMsPerOp?.[process]];
      cpu[plural] = { withRules: x, withoutRules: y, cel: d(x, y) };
    }
    out[`${s}P50Ms`] = { withRules: a?.value, withoutRules: b?.value, cel: d(a?.value, b?.value), byKind: kinds };
    out[`${s}CpuMs`] = {
      withRules: a?.cpuMsPerOp?.[process],
      withoutRules: b?.cpuMsPerOp?.[process],
      cel: d(a?.cpuMsPerOp?.[process], b?.cpuMsPerOp?.[process]),
      byKind: cpu,
    };
  }
  return out;
}
