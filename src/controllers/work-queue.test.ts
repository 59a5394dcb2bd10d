import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises } from './fake-clock.js';
import { WorkQueue, type WorkQueueMetrics } from './work-queue.js';

function recordingMetrics() {
  const m = { adds: 0, retries: 0, depth: 0 };
  const sink: WorkQueueMetrics = { added: () => m.adds++, retried: () => m.retries++, depth: (n) => (m.depth = n) };
  return { m, sink };
}

describe('WorkQueue', () => {
  it('queues a key added ten times once', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    for (let i = 0; i < 10; i++) q.add('ns/a');
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('ns/a');
    expect(q.len()).toBe(0);
    q.done('ns/a');
    expect(q.len()).toBe(0);
  });

  it('hands keys out in the order they became ready', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    for (const k of ['c', 'a', 'b', 'a']) q.add(k);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['c', 'a', 'b']);
  });

  it('does not hand out a key being processed; a re-add runs once more after done', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    q.add('a');
    expect(await q.get()).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    let second: string | undefined = 'not yet';
    void q.get().then((k) => (second = k));
    await flushPromises();
    expect(second).toBe('not yet');
    q.done('a');
    await flushPromises();
    expect(second).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('resolves a waiting get() when a key arrives, one waiter per key', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    const got: Array<string | undefined> = [];
    const w1 = q.get().then((k) => got.push(k));
    const w2 = q.get().then((k) => got.push(k));
    q.add('x');
    await w1;
    expect(got).toEqual(['x']);
    q.add('x'); // x is being processed: must not reach the second waiter
    await flushPromises();
    expect(got).toEqual(['x']);
    q.add('y');
    await w2;
    expect(got).toEqual(['x', 'y']);
  });

  it('ignores done() for a key that is not being processed', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    q.add('a');
    q.done('a');
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('a');
  });

  describe('addAfter', () => {
    it('makes the key ready exactly when the delay has passed', () => {
      const clock = new FakeClock();
      const q = new WorkQueue({ clock });
      q.addAfter('a', 100);
      clock.advance(99);
      expect(q.len()).toBe(0);
      clock.advance(1);
      expect(q.len()).toBe(1);
    });

    it('adds at once for a zero or negative delay', () => {
      const q = new WorkQueue({ clock: new FakeClock() });
      q.addAfter('a', 0);
      q.addAfter('b', -5);
      expect(q.len()).toBe(2);
    });

    it('keeps the earlier deadline when the same key is delayed again', async () => {
      const clock = new FakeClock();
      const q = new WorkQueue({ clock });
      q.addAfter('a', 100);
      q.addAfter('a', 50); // earlier: replaces
      q.addAfter('a', 80); // later than 50: ignored
      expect(clock.pending()).toBe(1);
      clock.advance(49);
      expect(q.len()).toBe(0);
      clock.advance(1);
      expect(q.len()).toBe(1);
      q.done((await q.get())!);
      clock.advance(1000);
      expect(q.len()).toBe(0);
    });

    it('runs a delayed key that is already waiting only once', () => {
      const clock = new FakeClock();
      const q = new WorkQueue({ clock });
      q.add('a');
      q.addAfter('a', 10);
      clock.advance(10);
      expect(q.len()).toBe(1);
    });
  });

  describe('addRateLimited', () => {
    it('delays by 5, 10, 20, … ms, capped at 1000 s, and forget() resets it', () => {
      const clock = new FakeClock();
      const q = new WorkQueue({ clock });
      const delays: number[] = [];
      for (let i = 0; i < 22; i++) {
        q.addRateLimited('a');
        delays.push(clock.nextDue()! - clock.now());
        clock.advance(clock.nextDue()! - clock.now());
      }
      const expected = Array.from({ length: 22 }, (_, i) => Math.min(5 * 2 ** i, 1_000_000));
      expect(delays).toEqual(expected);
      expect(delays.slice(17, 20)).toEqual([655_360, 1_000_000, 1_000_000]);
      expect(q.numRequeues('a')).toBe(22);
      expect(q.numRequeues('b')).toBe(0);
      q.forget('a');
      expect(q.numRequeues('a')).toBe(0);
      q.addRateLimited('a');
      expect(clock.nextDue()! - clock.now()).toBe(5);
    });

    it('keeps a separate backoff per key', () => {
      const clock = new FakeClock();
      const q = new WorkQueue({ clock });
      q.addRateLimited('a');
      q.addRateLimited('a');
      q.addRateLimited('b');
      clock.advance(5);
      expect(q.len()).toBe(2); // a at 5 ms (first deadline wins), b at 5 ms
      expect(q.numRequeues('a')).toBe(2);
      expect(q.numRequeues('b')).toBe(1);
    });
  });

  describe('shutDown', () => {
    it('resolves waiting and later get() calls with undefined, ignores adds and drops pending delays', async () => {
      const clock = new FakeClock();
      const q = new WorkQueue({ clock });
      const waiting = q.get();
      q.addAfter('later', 100);
      q.shutDown();
      expect(await waiting).toBeUndefined();
      expect(clock.pending()).toBe(0);
      q.add('a');
      q.addAfter('b', 0);
      q.addRateLimited('c');
      expect(q.len()).toBe(0);
      expect(q.numRequeues('c')).toBe(0);
      expect(await q.get()).toBeUndefined();
      expect(q.shuttingDown()).toBe(true);
    });

    it('returns undefined even when keys were still queued', async () => {
      const q = new WorkQueue({ clock: new FakeClock() });
      q.add('a');
      q.shutDown();
      expect(await q.get()).toBeUndefined();
      expect(q.len()).toBe(0);
    });
  });

  it('reports adds (deduplicated), retries (every delayed add) and depth (keys waiting, dirty ones included)', async () => {
    const clock = new FakeClock();
    const { m, sink } = recordingMetrics();
    const q = new WorkQueue({ clock, metrics: sink });
    q.add('a');
    q.add('a');
    q.add('b');
    expect(m).toEqual({ adds: 2, retries: 0, depth: 2 });
    await q.get(); // a
    expect(m.depth).toBe(1);
    q.add('a'); // dirty while processing: waits, so it counts in depth
    expect(m).toEqual({ adds: 3, retries: 0, depth: 2 });
    q.addRateLimited('c');
    q.addAfter('d', 10);
    expect(m).toEqual({ adds: 3, retries: 2, depth: 2 });
    clock.advance(10);
    expect(m).toEqual({ adds: 5, retries: 2, depth: 4 });
    q.shutDown();
    expect(m.depth).toBe(0);
  });

  it('stays correct across many keys (internal compaction of the ready list)', async () => {
    const q = new WorkQueue({ clock: new FakeClock() });
    const n = 5000;
    for (let i = 0; i < n; i++) q.add(`k${i}`);
    for (let i = 0; i < n; i++) {
      const k = await q.get();
      expect(k).toBe(`k${i}`);
      if (i % 1000 === 0) q.add(`again${i}`);
      q.done(k!);
    }
    expect(q.len()).toBe(5);
    expect(await q.get()).toBe('again0');
  });
});
