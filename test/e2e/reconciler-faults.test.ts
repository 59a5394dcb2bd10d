/**
 * Issue 5's fault test: kube-apiserver is unreachable for our server for 20 s while Websites change.
 * Only our server's own calls to the cluster are cut (the fault proxy of the harness sits in its kubeconfig);
 * kubectl → kube-apiserver → our server keeps working, so the changes are accepted and the reconciles fail.
 * Asserted: the failures go to the work queue's per-key exponential backoff (5 ms · 2^n) instead of a hot loop
 * (from /metrics and the server log), everything converges once the cluster is back, and no key is reconciled
 * twice at once (active workers never above the limit; per key, failing runs never interleave in the log).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { reconcilersOff, reconcilersOn } from './harness/reconcilers.js';
import { suffix } from './helpers-access.js';
import { kubectlAs, websiteManifest } from './helpers-kubectl.js';

const env = e2e();
const k = kubectlAs(env.kubeconfig.admin);
const ns = `e2e-faults-${suffix()}`;
const OUTAGE_MS = 20_000;
// How long after the cluster returns everything must match. The manager probes an unreachable cluster every second
// and requeues every Website when it answers (measured: under 1 s). Without that, each key would wait out its own
// backoff, up to ~40 s past its last failure after this outage (measured 32-33 s before the probe existed).
const RECOVERY_MS = 10_000;
// client-go's default per-item backoff, which the controller documents: 5 ms doubling (to 1000 s).
const BASE_DELAY_MS = 5;

// ---- the fault proxy ------------------------------------------------------------------------------------------

interface ProxyStats {
  blocked: boolean;
  accepted: number;
  reset: number;
  open: number;
}

async function proxy(method: 'GET' | 'POST', path: string): Promise<ProxyStats> {
  const r = await request(env.faultProxy.controlUrl + path, { method });
  const body = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`fault proxy ${method} ${path}: ${r.statusCode} ${body}`);
  return JSON.parse(body) as ProxyStats;
}

// ---- our /metrics, straight to our port with our own admin certificate -----------------------------------------

const metricsAgent = new Agent({
  connect: {
    ca: readFileSync(env.website.servingCAFile, 'utf8'),
    servername: 'website-apiserver.website-system.svc',
    cert: readFileSync(join(env.website.certDir, 'admin.crt')),
    key: readFileSync(join(env.website.certDir, 'admin.key')),
  },
});

/** Metrics is one scrape: `value(name, labels)` sums the series of `name` whose labels include `labels`. */
interface Metrics {
  value(name: string, labels?: Record<string, string>): number;
}

async function scrape(): Promise<Metrics> {
  const r = await request(`${env.website.url}/metrics`, { dispatcher: metricsAgent });
  const text = await r.body.text();
  if (r.statusCode !== 200) throw new Error(`/metrics: ${r.statusCode} ${text}`);
  const series: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    series.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return {
    value(name, want = {}) {
      const hits = series.filter((s) => s.name === name && Object.entries(want).every(([k2, v]) => s.labels[k2] === v));
      if (hits.length === 0) throw new Error(`no series ${name}${JSON.stringify(want)} in /metrics`);
      return hits.reduce((a, s) => a + s.value, 0);
    },
  };
}

const C = { controller: 'website' };
const Q = { name: 'website' };
const snapshot = (m: Metrics) => ({
  errors: m.value('controller_runtime_reconcile_errors_total', C),
  failed: m.value('controller_runtime_reconcile_total', { ...C, result: 'error' }),
  succeeded: m.value('controller_runtime_reconcile_total', { ...C, result: 'success' }),
  retries: m.value('workqueue_retries_total', Q),
  depth: m.value('workqueue_depth', Q),
});

/** A background scrape every 100 ms for the whole file: active workers against the limit, sample by sample. */
const samples: { t: number; active: number; max: number }[] = [];
const scrapeErrors: string[] = [];
let sampling = true;
let sampler: Promise<void> = Promise.resolve();

// ---- the server log -------------------------------------------------------------------------------------------

interface LogLine {
  t: number;
  msg: string;
  key?: string;
  reconcileId?: string;
  requeues?: number;
  err?: unknown;
  /** [start, end] of a run, from its `reconcile done` line (debug level). */
  span?: [number, number];
}

let logOffset = 0;

/** logLines returns our server's log lines for this file's namespace, written since the file started. */
function logLines(): LogLine[] {
  const text = readFileSync(env.website.logFile).subarray(logOffset).toString('utf8');
  const out: LogLine[] = [];
  for (const raw of text.split('\n')) {
    if (!raw.startsWith('{')) continue;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof o['key'] !== 'string' || !o['key'].startsWith(`${ns}/`)) continue;
    out.push({
      t: typeof o['time'] === 'number' ? o['time'] : Date.parse(String(o['time'])),
      msg: String(o['msg']),
      key: o['key'],
      err: o['err'],
      ...(typeof o['reconcileId'] === 'string' ? { reconcileId: o['reconcileId'] } : {}),
      ...(typeof o['requeues'] === 'number' ? { requeues: o['requeues'] } : {}),
      ...(typeof o['startedAt'] === 'number' && typeof o['ms'] === 'number' ? { span: [o['startedAt'], o['startedAt'] + o['ms']] as [number, number] } : {}),
    });
  }
  return out;
}

// The reconciler logs `reconcile failed` inside a failing run (before its Event and status write); the controller
// logs `reconciler error` when that run has returned. One key's failing runs are sequential exactly when these two
// lines alternate per key; two runs at once would show two `reconcile failed` without an end between them.
const INSIDE = 'reconcile failed';
const END = 'reconciler error';
const errText = (e: unknown) => (typeof e === 'string' ? e : JSON.stringify(e));

/** Run is one failing reconcile of a key, from its two log lines. */
interface Run {
  key: string;
  /** when it was inside the reconciler (it started a few ms before) */
  start: number;
  /** when the controller logged its end (just after scheduling the retry) */
  end: number;
  requeues: number;
  message: string;
}

/** failingRuns pairs each `reconcile failed` with the `reconciler error` that ends it, per key. */
function failingRuns(lines: LogLine[]): Run[] {
  const open = new Map<string, LogLine>();
  const runs: Run[] = [];
  for (const l of lines) {
    if (!l.key) continue;
    if (l.msg === INSIDE) open.set(l.key, l);
    else if (l.msg === END) {
      const inside = open.get(l.key);
      open.delete(l.key);
      if (inside) runs.push({ key: l.key, start: inside.t, end: l.t, requeues: l.requeues ?? 0, message: errText(inside.err) });
    }
  }
  return runs;
}

/**
 * backoffViolations replays the work queue's retry schedule over one key's failing runs and returns the runs that
 * started before any retry deadline was due although nothing had woken the key. After run i, the key is due again
 * at end_i + 5 ms · 2^(requeues_i − 1), the earliest pending deadline winning. Wake-ups that do not wait: a change
 * of ours, and the failing run's own status write (its first failure, a new generation or a new message).
 */
function backoffViolations(runs: Run[], changes: { from: number; to: number }[]): string[] {
  const bad: string[] = [];
  const SLACK = 10; // ms: log timestamps are rounded to the ms and taken just after the fact
  const wakes: number[] = [];
  let due: number | undefined;
  runs.forEach((r, i) => {
    const prev = runs[i - 1];
    const changed = changes.filter((c) => c.to >= (prev?.start ?? -Infinity) - 50 && c.from <= r.start);
    const woken = !prev || changed.length > 0 || wakes.some((w) => w >= prev.start - 50 && w <= r.start);
    const timerFired = due !== undefined && r.start >= due - SLACK;
    if (!woken && !timerFired) {
      bad.push(
        `run ${i + 1} at +${r.start - runs[0]!.start} ms, ${due === undefined ? 'no retry pending' : `${due - r.start} ms before its deadline`} (requeues ${prev?.requeues})`,
      );
    }
    if (timerFired) due = undefined;
    // This run wrote status (and so woke the key again) when it had something new to report.
    if (!prev || changed.length > 0 || r.message !== prev.message) wakes.push(r.end);
    const next = r.end + BASE_DELAY_MS * 2 ** Math.max(0, r.requeues - 1);
    due = due === undefined ? next : Math.min(due, next);
  });
  return bad;
}

// ---- cluster side ---------------------------------------------------------------------------------------------

async function json(args: string[]): Promise<any> {
  const r = await k([...args, '-n', ns, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function ok(args: string[], input?: string): Promise<string> {
  const r = await k([...args, '-n', ns], input === undefined ? {} : { input });
  expect(r.stderr, `kubectl ${args.join(' ')}`).toBe('');
  expect(r.code).toBe(0);
  return r.stdout;
}

/** converged lists what is not yet as the Websites ask (empty when everything matches). */
async function notConverged(names: string[]): Promise<string[]> {
  const [websites, deployments, services] = await Promise.all([json(['get', 'ws']), json(['get', 'deployments']), json(['get', 'services'])]);
  const problems: string[] = [];
  for (const name of names) {
    const w = websites.items.find((o: any) => o.metadata.name === name);
    if (!w) {
      problems.push(`${name}: no Website`);
      continue;
    }
    const d = deployments.items.find((o: any) => o.metadata.name === `${name}-website`);
    const s = services.items.find((o: any) => o.metadata.name === `${name}-website`);
    if (!d) problems.push(`${name}: no Deployment`);
    else {
      if (d.spec.replicas !== w.spec.replicas) problems.push(`${name}: Deployment replicas ${d.spec.replicas}, Website ${w.spec.replicas}`);
      const args: string[] = d.spec.template.spec.containers.find((c: any) => c.name === 'git-sync')?.args ?? [];
      // kubectl reads Websites in v1, its preferred version.
      const branch = w.spec.git?.branch;
      const want = branch ? `--ref=${branch}` : undefined;
      const ref = args.find((a) => a.startsWith('--ref='));
      if (ref !== want) problems.push(`${name}: git-sync ${ref ?? 'without --ref'}, Website branch ${branch ?? '(none)'}`);
    }
    if (!s) problems.push(`${name}: no Service`);
    if (w.status?.observedGeneration !== w.metadata.generation)
      problems.push(`${name}: observedGeneration ${w.status?.observedGeneration} of ${w.metadata.generation}`);
    const degraded = w.status?.conditions?.find((c: any) => c.type === 'Degraded');
    if (degraded?.status !== 'False') problems.push(`${name}: Degraded ${degraded?.status} ${degraded?.reason ?? ''} ${degraded?.message ?? ''}`);
  }
  return problems;
}

const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

beforeAll(async () => {
  // One replica without leader election: with it, a leader cut off for 20 s gives up its Lease after the renew
  // deadline and stops reconciling altogether (tested in src/controllers/leader-election.test.ts).
  await reconcilersOn(env, { leaderElect: false });
  logOffset = statSync(env.website.logFile).size;
  const first = await scrape();
  expect(first.value('controller_runtime_max_concurrent_reconciles', C)).toBeGreaterThanOrEqual(1);
  sampler = (async () => {
    while (sampling) {
      const t = Date.now();
      try {
        const m = await scrape();
        samples.push({ t, active: m.value('controller_runtime_active_workers', C), max: m.value('controller_runtime_max_concurrent_reconciles', C) });
      } catch (e) {
        scrapeErrors.push((e as Error).message);
      }
      await sleepUntil(t + 100);
    }
  })();
  const r = await k(['create', 'namespace', ns]);
  expect(r.stdout.trim(), r.stderr).toBe(`namespace/${ns} created`);
});

afterAll(async () => {
  // Never leave the cluster cut off for the files that run after this one.
  await proxy('POST', '/unblock').catch(() => undefined);
  sampling = false;
  await sampler;
  // With the reconcilers still on, so our finalizer is honoured and the namespace really goes.
  await k(['delete', 'namespace', ns, '--timeout=90s', '--ignore-not-found']);
  k.dispose();
  await metricsAgent.close();
  await reconcilersOff(env);
});

describe('kube-apiserver unreachable for 20 s while Websites change', () => {
  it('backs off per key, converges once the cluster is back, and never runs a key twice at once', async () => {
    // A settled start: three Websites with their children and a clean status.
    const initial = ['alpha', 'bravo', 'charlie'];
    for (const name of initial) await ok(['create', '-f', '-'], JSON.stringify(websiteManifest(name, { branch: 'master' })));
    await waitFor('the first Deployments and Services', async () => (await notConverged(initial)).length === 0, 30_000, 250);
    expect(await proxy('GET', '/stats')).toMatchObject({ blocked: false });

    // ---- outage ----
    const before = snapshot(await scrape());
    const proxyBefore = await proxy('POST', '/block');
    expect(proxyBefore.blocked).toBe(true);
    const t0 = Date.now();
    // What each key saw from us during the outage, for the per-key backoff bound below.
    const changes: { key: string; from: number; to: number }[] = [];
    const change = async (name: string, args: string[], input?: string) => {
      const from = Date.now();
      await ok(args, input);
      changes.push({ key: `${ns}/${name}`, from, to: Date.now() });
    };
    await sleepUntil(t0 + 1000);
    await change('alpha', ['scale', 'ws', 'alpha', '--replicas=3']);
    await sleepUntil(t0 + 3000);
    await change('bravo', ['patch', 'ws', 'bravo', '--type', 'merge', '-p', '{"spec":{"git":{"branch":"develop"}}}']);
    await sleepUntil(t0 + 5000);
    await change('delta', ['create', '-f', '-'], JSON.stringify(websiteManifest('delta', { branch: 'release', replicas: 2 })));
    await sleepUntil(t0 + 8000);
    await change('bravo', ['scale', 'ws', 'bravo', '--replicas=2']);
    await change('alpha', ['patch', 'ws', 'alpha', '--type', 'merge', '-p', '{"spec":{"git":{"branch":"feature-x"}}}']);
    await sleepUntil(t0 + 12_000);
    await change('charlie', ['scale', 'ws', 'charlie', '--replicas=4']);
    // Meanwhile the status says what is wrong (it lives in our own store, so it can be written during the outage).
    await waitFor(
      'Degraded=True on every Website during the outage',
      async () => {
        const list = await json(['get', 'ws']);
        return (
          list.items.length === 4 &&
          list.items.every((w: any) => w.status?.conditions?.some((c: any) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'ReconcileError'))
        );
      },
      t0 + OUTAGE_MS - 1000 - Date.now(),
      250,
    );
    await sleepUntil(t0 + OUTAGE_MS);
    const during = snapshot(await scrape());
    const proxyDuring = await proxy('POST', '/unblock');
    const tUp = Date.now();
    const outageMs = tUp - t0;

    // Our server did try the cluster (the proxy reset its connections) and counted failures and retries.
    expect(proxyDuring.reset).toBeGreaterThan(proxyBefore.reset);
    const keys = [...initial, 'delta'].map((n) => `${ns}/${n}`);
    const errors = during.errors - before.errors;
    expect(errors, 'reconcile errors during the outage').toBeGreaterThanOrEqual(keys.length);
    expect(during.failed - before.failed).toBe(errors);
    // Every failed run is put back rate-limited (a retry); requeues of other kinds only add to it.
    expect(during.retries - before.retries).toBeGreaterThanOrEqual(errors);

    // Per key, from the log: the failing runs of the outage window.
    const runs = failingRuns(logLines().filter((l) => l.t >= t0 && l.t <= tUp));
    // Backoff bound: 5 ms · 2^n waits add up to 5 · (2^n − 1) ms, so within the outage a key's own retries number
    // at most log2(outage / 5 ms + 1) + 1. A change of ours may add up to three runs that do not wait: the one it
    // wakes, the one woken by that run's status write (a new generation to observe), and the key's earlier retry
    // deadline, which an immediate add does not cancel (client-go semantics); a new failure message means one more
    // status write. A hot loop would fail thousands of times per key here (a run against resets takes a few ms).
    const ownRetries = Math.ceil(Math.log2(outageMs / BASE_DELAY_MS + 1)) + 1;
    const report: Record<string, unknown> = {};
    let bound = 0;
    for (const key of keys) {
      const mine = runs.filter((r) => r.key === key);
      const mineChanges = changes.filter((c) => c.key === key);
      const messageChanges = mine.filter((r, i) => i > 0 && r.message !== mine[i - 1]!.message).length;
      const keyBound = ownRetries + 3 * mineChanges.length + messageChanges + 2;
      bound += keyBound;
      const spacing = backoffViolations(mine, mineChanges);
      report[key] = {
        failures: mine.length,
        bound: keyBound,
        lastRequeues: mine.at(-1)?.requeues,
        gapsMs: mine.slice(1).map((r, i) => r.start - mine[i]!.end),
      };
      expect(mine.length, `${key} failed during the outage`).toBeGreaterThanOrEqual(1);
      expect(mine.length, `${key}: failing runs during the outage`).toBeLessThanOrEqual(keyBound);
      // It kept retrying through the outage with a growing delay (the requeue count is the exponent n).
      if (key !== `${ns}/delta`) expect(mine.at(-1)?.requeues ?? 0, `${key}: requeues at the end of the outage`).toBeGreaterThanOrEqual(8);
      expect(spacing, `${key}: runs that came before their backoff deadline with nothing to wake them`).toEqual([]);
    }
    // The log and the metrics count the same failing runs (other files' Websites are settled by now).
    expect(runs.filter((r) => keys.includes(r.key)).length).toBeLessThanOrEqual(errors);
    console.log('outage', { outageMs, errors, retries: during.retries - before.retries, bound, perKey: report, proxy: proxyDuring });
    expect(errors, 'reconcile errors over all keys').toBeLessThanOrEqual(bound);

    // ---- recovery ----
    const names = [...initial, 'delta'];
    await waitFor(
      'every Deployment and Service as its Website says, status caught up',
      async () => (await notConverged(names)).length === 0,
      RECOVERY_MS,
      500,
    ).catch(async (e) => {
      throw new Error(`${(e as Error).message}\nstill: ${(await notConverged(names)).join('; ')}`);
    });
    const convergedMs = Date.now() - tUp;
    const after = snapshot(await scrape());
    expect(after.succeeded).toBeGreaterThan(during.succeeded);
    await waitFor('the work queue drained', async () => snapshot(await scrape()).depth === 0, 10_000, 200);
    const d = await json(['get', 'deployment', 'delta-website']);
    expect(d.metadata.labels['app.kubernetes.io/managed-by']).toBe('website-apiserver');
    const deltaWs = await json(['get', 'ws', 'delta']);
    expect(d.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Website', name: 'delta', uid: deltaWs.metadata.uid, controller: true })]);
    expect(deltaWs.metadata.finalizers).toContain('extensions.example.com/cleanup');
    console.log('recovery', { convergedMs, reconciles: { succeeded: after.succeeded - during.succeeded, failed: after.failed - during.failed } });

    // ---- no key twice at once ----
    sampling = false;
    await sampler;
    expect(scrapeErrors, 'every /metrics scrape answered').toEqual([]);
    // Every 100 ms for the whole test; allow for slow scrapes but insist the sampler really ran throughout.
    expect(samples.length).toBeGreaterThan((samples.at(-1)!.t - samples[0]!.t) / 400);
    const max = samples[0]!.max;
    expect(samples.every((s) => s.max === max)).toBe(true);
    const over = samples.filter((s) => s.active > s.max || s.active < 0);
    expect(over, `active workers above ${max}`).toEqual([]);
    // Per key, a failing run ends before the next one is inside the reconciler: `reconcile failed` and
    // `reconciler error` alternate, and each end carries its own reconcileId.
    const lines = logLines().filter((l) => l.msg === INSIDE || l.msg === END);
    const seen = new Set<string>();
    for (const key of keys) {
      let open = false;
      for (const l of lines.filter((x) => x.key === key)) {
        if (l.msg === INSIDE) {
          expect(open, `${key}: a second run failed inside the reconciler before the first one ended (${new Date(l.t).toISOString()})`).toBe(false);
          open = true;
        } else {
          expect(l.reconcileId, `${key}: the end of a run names its reconcileId`).toBeTruthy();
          expect(seen.has(l.reconcileId!), `reconcileId ${l.reconcileId} ended twice`).toBe(false);
          seen.add(l.reconcileId!);
          open = false;
        }
      }
      expect(open, `${key}: a run logged inside the reconciler but never ended`).toBe(false);
    }
    // Every run, successful or not, logs its span (`reconcile done`, debug): per key no two spans overlap.
    const spans = logLines().filter((l) => l.msg === 'reconcile done' && l.span);
    expect(spans.length, 'reconcile done lines (the server runs at debug level)').toBeGreaterThan(seen.size);
    for (const key of keys) {
      const mine = spans
        .filter((l) => l.key === key)
        .map((l) => l.span!)
        .sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < mine.length; i++) {
        expect(mine[i]![0], `${key}: run ${i} started before run ${i - 1} ended`).toBeGreaterThanOrEqual(mine[i - 1]![1]);
      }
    }
    console.log('concurrency', {
      samples: samples.length,
      maxActiveSeen: Math.max(...samples.map((s) => s.active)),
      limit: max,
      failingRunsChecked: seen.size,
      runSpansChecked: spans.length,
    });
  }, 120_000);
});
