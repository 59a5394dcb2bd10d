import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from './clock.js';
import { startController, TerminalError, type Controller, type ControllerOptions, type Reconciler } from './controller.js';
import { FakeClock, flushPromises } from './fake-clock.js';
import { controllerMetrics } from './metrics.js';

const started: Array<{ c: Controller; clock: FakeClock }> = [];
// Stop what a test left running; advance its clock so reconciles sleeping on it can return (a failed assertion
// may leave some mid-flight).
afterEach(async () => {
  for (const { c, clock } of started.splice(0)) {
    let stopped = false;
    const stopping = c.stop().then(() => (stopped = true));
    for (let i = 0; i < 100 && !stopped; i++) await clock.advanceAsync(1000);
    await stopping;
  }
});

function start(options: Omit<ControllerOptions, 'name' | 'clock'> & { name?: string; clock: FakeClock }): Controller {
  const c = startController({ name: 'test', ...options });
  started.push({ c, clock: options.clock });
  return c;
}

// Tracks which keys are inside reconcile, and the largest overlap seen.
function tracker() {
  const inFlight = new Set<string>();
  const calls: Array<{ key: string; at: number }> = [];
  let maxInFlight = 0;
  let sameKeyOverlaps = 0;
  return {
    calls,
    get maxInFlight() {
      return maxInFlight;
    },
    get sameKeyOverlaps() {
      return sameKeyOverlaps;
    },
    // biome-ignore lint/suspicious/noConfusingVoidType: a reconciler that never requeues is a plain async function returning nothing
    wrap(clock: FakeClock, body: (key: string) => Promise<{ requeueAfter?: number } | void>): Reconciler {
      return async (key) => {
        if (inFlight.has(key)) sameKeyOverlaps++;
        inFlight.add(key);
        maxInFlight = Math.max(maxInFlight, inFlight.size);
        calls.push({ key, at: clock.now() });
        try {
          return await body(key);
        } finally {
          inFlight.delete(key);
        }
      };
    },
  };
}

// A tiny deterministic PRNG (mulberry32) so the hammering test is reproducible.
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function captureLogs() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: pino({ level: 'debug' }, stream) };
}

describe('controller', () => {
  it('reconciles a key enqueued ten times once', async () => {
    const clock = new FakeClock();
    const t = tracker();
    const c = start({ clock, reconcile: t.wrap(clock, async () => {}) });
    for (let i = 0; i < 10; i++) c.enqueue('ns/a');
    await clock.advanceAsync(1000);
    expect(t.calls.map((x) => x.key)).toEqual(['ns/a']);
  });

  it('runs a key re-enqueued during its reconcile exactly once more, after the first run ends', async () => {
    const clock = new FakeClock(0);
    const t = tracker();
    const c = start({ clock, reconcile: t.wrap(clock, () => sleep(clock, 100)) });
    c.enqueue('a');
    await clock.advanceAsync(10);
    for (let i = 0; i < 5; i++) c.enqueue('a');
    await clock.advanceAsync(1000);
    expect(t.calls).toEqual([
      { key: 'a', at: 0 },
      { key: 'a', at: 100 },
    ]);
    expect(t.sameKeyOverlaps).toBe(0);
  });

  it('never runs more than maxConcurrentReconciles at once, and uses all of them', async () => {
    const clock = new FakeClock(0);
    const t = tracker();
    const c = start({ clock, maxConcurrentReconciles: 2, reconcile: t.wrap(clock, () => sleep(clock, 100)) });
    for (let i = 0; i < 10; i++) c.enqueue(`k${i}`);
    await clock.advanceAsync(50);
    expect(c.running()).toBe(2);
    await clock.advanceAsync(1000);
    expect(t.calls).toHaveLength(10);
    expect(t.maxInFlight).toBe(2);
    // Two at a time, 100 ms each: pairs start at 0, 100, …, 400.
    expect(t.calls.map((x) => x.at)).toEqual([0, 0, 100, 100, 200, 200, 300, 300, 400, 400]);
    expect(c.running()).toBe(0);
  });

  it('defaults to 2 workers and rejects a non-positive worker count', async () => {
    const clock = new FakeClock(0);
    const t = tracker();
    const c = start({ clock, reconcile: t.wrap(clock, () => sleep(clock, 100)) });
    for (let i = 0; i < 5; i++) c.enqueue(`k${i}`);
    await clock.advanceAsync(10);
    expect(c.running()).toBe(2);
    expect(() => startController({ name: 'x', clock, reconcile: async () => {}, maxConcurrentReconciles: 0 })).toThrow(RangeError);
  });

  it('never runs one key twice at once under random enqueues, failures and requeues', async () => {
    const clock = new FakeClock(0);
    const rand = prng(42);
    const t = tracker();
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    const c = start({
      clock,
      maxConcurrentReconciles: 4,
      reconcile: t.wrap(clock, async () => {
        await sleep(clock, Math.floor(rand() * 20));
        const r = rand();
        if (r < 0.3) throw new Error('flaky');
        if (r < 0.5) return { requeueAfter: 1 + Math.floor(rand() * 30) };
      }),
    });
    for (let step = 0; step < 3000; step++) {
      const burst = Math.floor(rand() * 4);
      for (let i = 0; i < burst; i++) c.enqueue(keys[Math.floor(rand() * keys.length)]!);
      await clock.advanceAsync(Math.floor(rand() * 5));
    }
    expect(t.calls.length).toBeGreaterThan(1000);
    expect(t.maxInFlight).toBe(4); // different keys did overlap, so the check below is meaningful
    expect(t.sameKeyOverlaps).toBe(0);
  });

  it('retries a failing key after 5, 10, 20, … ms up to 1000 s, and a success resets the backoff', async () => {
    const clock = new FakeClock(0);
    const t = tracker();
    let failing = true;
    const c = start({
      clock,
      reconcile: t.wrap(clock, async () => {
        if (failing) throw new Error('apiserver unreachable');
      }),
    });
    c.enqueue('a');
    await flushPromises();
    while (t.calls.length < 22) await clock.advanceAsync(clock.nextDue()! - clock.now());
    const gaps = t.calls.slice(1).map((x, i) => x.at - t.calls[i]!.at);
    expect(gaps).toEqual(Array.from({ length: 21 }, (_, i) => Math.min(5 * 2 ** i, 1_000_000)));
    expect(c.queue.numRequeues('a')).toBe(22);

    failing = false;
    await clock.advanceAsync(1_000_000);
    expect(t.calls).toHaveLength(23);
    expect(c.queue.numRequeues('a')).toBe(0);
    expect(clock.pending()).toBe(0);

    failing = true;
    const before = clock.now();
    c.enqueue('a');
    await clock.advanceAsync(5);
    expect(t.calls.slice(-2).map((x) => x.at - before)).toEqual([0, 5]);
  });

  it('runs again exactly requeueAfter ms later, and requeueAfter resets the backoff', async () => {
    const clock = new FakeClock(0);
    const t = tracker();
    let n = 0;
    const c = start({
      clock,
      reconcile: t.wrap(clock, async () => {
        n++;
        if (n <= 2) throw new Error('boom');
        if (n === 3) return { requeueAfter: 1000 };
      }),
    });
    c.enqueue('a');
    await clock.advanceAsync(15); // fails at 0 and 5, succeeds with requeueAfter at 15
    expect(t.calls.map((x) => x.at)).toEqual([0, 5, 15]);
    expect(c.queue.numRequeues('a')).toBe(0);
    await clock.advanceAsync(999);
    expect(t.calls).toHaveLength(3);
    await clock.advanceAsync(1);
    expect(t.calls.map((x) => x.at)).toEqual([0, 5, 15, 1015]);
    await clock.advanceAsync(10_000);
    expect(t.calls).toHaveLength(4);
  });

  it('does not retry a TerminalError but logs it', async () => {
    const clock = new FakeClock(0);
    const t = tracker();
    const { lines, logger } = captureLogs();
    const c = start({
      clock,
      logger,
      reconcile: t.wrap(clock, async () => {
        throw new TerminalError('spec.gitRepo is not a URL');
      }),
    });
    c.enqueue('ns/bad');
    await clock.advanceAsync(10_000);
    expect(t.calls).toHaveLength(1);
    const err = lines.find((l) => l.msg === 'reconciler error');
    expect(err).toMatchObject({ controller: 'test', key: 'ns/bad', terminal: true, err: { message: 'spec.gitRepo is not a URL' } });
  });

  it('logs a failed reconcile with controller, key, reconcileId and the error', async () => {
    const clock = new FakeClock(0);
    const { lines, logger } = captureLogs();
    const ids: string[] = [];
    const c = start({
      name: 'website',
      clock,
      logger,
      reconcile: async (_key, ctx) => {
        ids.push(ctx.reconcileId);
        throw new Error('failed to apply deployment ns/a-website', { cause: new Error('ECONNREFUSED') });
      },
    });
    c.enqueue('ns/a');
    await clock.advanceAsync(5);
    const errors = lines.filter((l) => l.msg === 'reconciler error');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ level: 50, controller: 'website', key: 'ns/a', reconcileId: ids[0], requeues: 1 });
    expect((errors[0]!.err as { message: string }).message).toContain('failed to apply deployment ns/a-website');
    expect(new Set(ids).size).toBe(2);
  });

  it('treats a reconciler that throws synchronously like one that rejects', async () => {
    const clock = new FakeClock(0);
    let calls = 0;
    const c = start({
      clock,
      reconcile: (() => {
        calls++;
        throw new Error('sync');
      }) as Reconciler,
    });
    c.enqueue('a');
    await clock.advanceAsync(5);
    expect(calls).toBe(2);
    expect(c.queue.numRequeues('a')).toBe(2);
  });

  describe('stop', () => {
    it('waits for running reconciles, aborts their signal, and starts no new ones', async () => {
      const clock = new FakeClock(0);
      const t = tracker();
      const signals: AbortSignal[] = [];
      const c = start({
        clock,
        reconcile: async (key, ctx) => {
          signals.push(ctx.signal);
          await t.wrap(clock, () => sleep(clock, 100))(key, ctx);
        },
      });
      c.enqueue('a');
      c.enqueue('b');
      c.enqueue('c');
      await clock.advanceAsync(10);
      expect(c.running()).toBe(2);
      let stopped = false;
      const stopping = c.stop().then(() => (stopped = true));
      await flushPromises();
      expect(stopped).toBe(false);
      expect(signals.every((s) => s.aborted)).toBe(true);
      c.enqueue('d');
      await clock.advanceAsync(100);
      await stopping;
      expect(stopped).toBe(true);
      expect(c.running()).toBe(0);
      expect(t.calls.map((x) => x.key)).toEqual(['a', 'b']);
      expect(clock.pending()).toBe(0);
      await c.stop(); // idempotent
    });

    it('resolves at once when idle, and leaves no retry timers behind', async () => {
      const clock = new FakeClock(0);
      const c = start({
        clock,
        reconcile: async () => {
          throw new Error('x');
        },
      });
      c.enqueue('a');
      await clock.advanceAsync(1);
      expect(clock.pending()).toBe(1); // the 10 ms retry
      await c.stop();
      expect(clock.pending()).toBe(0);
      expect(await c.queue.get()).toBeUndefined();
    });
  });

  describe('resync', () => {
    it('enqueues every listed key each period until cancelled or stopped', async () => {
      const clock = new FakeClock(0);
      const t = tracker();
      const c = start({ clock, reconcile: t.wrap(clock, async () => {}) });
      let keys = ['a', 'b'];
      const cancel = c.resync(1000, async () => keys);
      await clock.advanceAsync(999);
      expect(t.calls).toHaveLength(0);
      await clock.advanceAsync(1);
      expect(t.calls).toEqual([
        { key: 'a', at: 1000 },
        { key: 'b', at: 1000 },
      ]);
      keys = ['c'];
      await clock.advanceAsync(1000);
      expect(t.calls.map((x) => x.key)).toEqual(['a', 'b', 'c']);
      cancel();
      await clock.advanceAsync(5000);
      expect(t.calls).toHaveLength(3);

      c.resync(500, () => ['z']);
      await clock.advanceAsync(500);
      expect(t.calls).toHaveLength(4);
      await c.stop();
      expect(clock.pending()).toBe(0);
    });

    it('keeps going after listKeys fails', async () => {
      const clock = new FakeClock(0);
      const t = tracker();
      const { lines, logger } = captureLogs();
      const c = start({ clock, logger, reconcile: t.wrap(clock, async () => {}) });
      let fail = true;
      c.resync(100, () => {
        if (fail) throw new Error('cache not synced');
        return ['a'];
      });
      await clock.advanceAsync(100);
      expect(lines.some((l) => l.msg === 'resync failed to list keys')).toBe(true);
      fail = false;
      await clock.advanceAsync(100);
      expect(t.calls.map((x) => x.key)).toEqual(['a']);
    });
  });
});

describe('controller metrics', () => {
  // Reads one sample; histogram samples (`_bucket`, `_sum`, `_count`) live under the histogram's own name.
  async function value(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
    const base = name.replace(/_(bucket|sum|count)$/, '');
    const metric = await (registry.getSingleMetric(name) ?? registry.getSingleMetric(base))!.get();
    return metric.values.find(
      (v) => ((v as { metricName?: string }).metricName ?? name) === name && Object.entries(labels).every(([k, val]) => String(v.labels[k]) === val),
    )?.value;
  }

  it('are zeroed at start', async () => {
    const registry = new Registry();
    start({ name: 'website', clock: new FakeClock(), metrics: controllerMetrics(registry), reconcile: async () => {} });
    const text = await registry.metrics();
    expect(text).toContain('controller_runtime_reconcile_total{controller="website",result="error"} 0');
    expect(text).toContain('controller_runtime_reconcile_total{controller="website",result="requeue_after"} 0');
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="website"} 0');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_count{controller="website"} 0');
    expect(text).toContain('controller_runtime_max_concurrent_reconciles{controller="website"} 2');
    expect(text).toContain('workqueue_depth{name="website"} 0');
    expect(text).toContain('workqueue_adds_total{name="website"} 0');
    expect(text).toContain('workqueue_retries_total{name="website"} 0');
  });

  it('count reconciles by result, errors, durations, queue adds, retries and depth after a scenario', async () => {
    const clock = new FakeClock(0);
    const registry = new Registry();
    const metrics = controllerMetrics(registry);
    let bFailures = 0;
    const c = start({
      name: 'website',
      clock,
      metrics,
      maxConcurrentReconciles: 3,
      reconcile: async (key) => {
        await sleep(clock, 50);
        if (key === 'b' && bFailures++ < 2) throw new Error('boom');
        if (key === 'c' && clock.now() < 1000) return { requeueAfter: 1000 };
      },
    });
    c.enqueue('a');
    c.enqueue('a');
    c.enqueue('b');
    c.enqueue('c');
    await clock.advanceAsync(10);
    expect(await value(registry, 'controller_runtime_active_workers', { controller: 'website' })).toBe(3);
    await clock.advanceAsync(5000);
    // a: success. b: error, error, success. c: requeue_after, success.
    const ctl = { controller: 'website' };
    expect(await value(registry, 'controller_runtime_reconcile_total', { ...ctl, result: 'success' })).toBe(3);
    expect(await value(registry, 'controller_runtime_reconcile_total', { ...ctl, result: 'error' })).toBe(2);
    expect(await value(registry, 'controller_runtime_reconcile_total', { ...ctl, result: 'requeue_after' })).toBe(1);
    expect(await value(registry, 'controller_runtime_reconcile_errors_total', ctl)).toBe(2);
    expect(await value(registry, 'controller_runtime_terminal_reconcile_errors_total', ctl)).toBe(0);
    expect(await value(registry, 'controller_runtime_reconcile_time_seconds_count', ctl)).toBe(6);
    expect(await value(registry, 'controller_runtime_reconcile_time_seconds_sum', ctl)).toBeCloseTo(0.3, 9);
    expect(await value(registry, 'controller_runtime_reconcile_time_seconds_bucket', { ...ctl, le: '0.05' })).toBe(6);
    expect(await value(registry, 'controller_runtime_reconcile_time_seconds_bucket', { ...ctl, le: '0.025' })).toBe(0);
    expect(await value(registry, 'controller_runtime_active_workers', ctl)).toBe(0);
    expect(await value(registry, 'controller_runtime_max_concurrent_reconciles', ctl)).toBe(3);
    // adds: a, b, c, then b twice (backoff) and c once (requeueAfter); retries: those three delayed adds.
    expect(await value(registry, 'workqueue_adds_total', { name: 'website' })).toBe(6);
    expect(await value(registry, 'workqueue_retries_total', { name: 'website' })).toBe(3);
    expect(await value(registry, 'workqueue_depth', { name: 'website' })).toBe(0);
  });

  it('lets two controllers share one registry with separate series', async () => {
    const clock = new FakeClock(0);
    const registry = new Registry();
    const one = start({ name: 'one', clock, metrics: controllerMetrics(registry), reconcile: async () => {} });
    start({ name: 'two', clock, metrics: controllerMetrics(registry), reconcile: async () => {} });
    one.enqueue('x');
    await clock.advanceAsync(1);
    expect(await value(registry, 'controller_runtime_reconcile_total', { controller: 'one', result: 'success' })).toBe(1);
    expect(await value(registry, 'controller_runtime_reconcile_total', { controller: 'two', result: 'success' })).toBe(0);
    expect(await value(registry, 'workqueue_depth', { name: 'one' })).toBe(0);
  });

  it('shows queued keys in workqueue_depth', async () => {
    const clock = new FakeClock(0);
    const registry = new Registry();
    const c = start({ name: 'slow', clock, maxConcurrentReconciles: 1, metrics: controllerMetrics(registry), reconcile: () => sleep(clock, 100) });
    for (const k of ['a', 'b', 'c', 'd']) c.enqueue(k);
    await clock.advanceAsync(10);
    expect(await value(registry, 'workqueue_depth', { name: 'slow' })).toBe(3);
    await clock.advanceAsync(100);
    expect(await value(registry, 'workqueue_depth', { name: 'slow' })).toBe(2);
  });
});
