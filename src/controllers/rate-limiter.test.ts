import { describe, expect, it } from 'vitest';
import { ItemExponentialFailureRateLimiter } from './rate-limiter.js';

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles from 5 ms per failure and caps at 1000 s, per key, until forgotten', () => {
    const rl = new ItemExponentialFailureRateLimiter();
    const delays = Array.from({ length: 25 }, () => rl.when('a'));
    expect(delays.slice(0, 5)).toEqual([5, 10, 20, 40, 80]);
    expect(delays[17]).toBe(655_360);
    expect(delays.slice(18)).toEqual(Array(7).fill(1_000_000));
    expect(rl.numRequeues('a')).toBe(25);
    expect(rl.when('b')).toBe(5);
    rl.forget('a');
    expect(rl.numRequeues('a')).toBe(0);
    expect(rl.when('a')).toBe(5);
  });

  it('stays at the cap for very many failures (no overflow to Infinity or NaN)', () => {
    const rl = new ItemExponentialFailureRateLimiter(5, 1000);
    for (let i = 0; i < 2000; i++) rl.when('k');
    expect(rl.when('k')).toBe(1000);
  });
});
