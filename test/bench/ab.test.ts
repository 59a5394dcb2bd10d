import { describe, expect, it } from 'vitest';
import { median, summary } from './ab.mjs';

describe('bench A/B summary', () => {
  it('takes medians of odd and even counts', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it('reports the medians of each side and B against A, for throughput and CPU', () => {
    const run = (perSecond: number, cpuUs: number) => ({ get: { perSecond, cpuUs } });
    const table = summary([run(100, 50), run(120, 40), run(110, 45)], [run(99, 55), run(88, 60), run(121, 50)]);
    expect(table.split('\n')[2]).toBe('| get | 110 | 99 | −10.0% | 45 | 55 | +22.2% |');
  });
});
