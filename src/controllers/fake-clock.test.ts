import { describe, expect, it } from 'vitest';
import { sleep } from './clock.js';
import { FakeClock } from './fake-clock.js';

describe('FakeClock', () => {
  it('fires due timers in due order, ties in creation order, with now() at each due time', () => {
    const clock = new FakeClock(1000);
    const fired: Array<[string, number]> = [];
    clock.setTimeout(() => fired.push(['c', clock.now()]), 30);
    clock.setTimeout(() => fired.push(['a', clock.now()]), 10);
    clock.setTimeout(() => fired.push(['b', clock.now()]), 10);
    clock.setTimeout(() => fired.push(['late', clock.now()]), 31);
    clock.advance(30);
    expect(fired).toEqual([
      ['a', 1010],
      ['b', 1010],
      ['c', 1030],
    ]);
    expect(clock.now()).toBe(1030);
    expect(clock.pending()).toBe(1);
    expect(clock.nextDue()).toBe(1031);
  });

  it('runs a timer created by a timer within the same advance, and skips cleared timers', () => {
    const clock = new FakeClock(0);
    const fired: number[] = [];
    clock.setTimeout(() => clock.setTimeout(() => fired.push(clock.now()), 5), 5);
    const cleared = clock.setTimeout(() => fired.push(-1), 7);
    clock.clearTimeout(cleared);
    clock.advance(20);
    expect(fired).toEqual([10]);
    expect(clock.now()).toBe(20);
    expect(clock.pending()).toBe(0);
  });

  it('advanceAsync lets awaiting code schedule its next timer before time moves on', async () => {
    const clock = new FakeClock(0);
    const wakeups: number[] = [];
    void (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 10);
        wakeups.push(clock.now());
      }
    })();
    await clock.advanceAsync(100);
    expect(wakeups).toEqual([10, 20, 30]);
  });
});
