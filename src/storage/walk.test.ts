import { describe, expect, it } from 'vitest';
import { progressReporter, type WalkProgress } from './walk.js';

describe('progressReporter', () => {
  it('reports at the start, at most every interval with count, rate and ETA, and at the end', () => {
    let now = 0;
    const lines: [string, WalkProgress][] = [];
    const p = progressReporter(1000, (w, phase) => lines.push([phase, w]), 5000, () => now);
    for (let i = 0; i < 10; i++) {
      now += 1000;
      p.add(100, 50);
    }
    p.end();
    expect(lines.map(([phase]) => phase)).toEqual(['start', 'progress', 'progress', 'end']);
    expect(lines[0]?.[1]).toEqual({ checked: 0, total: 1000, changed: 0, elapsedSeconds: 0, perSecond: 0 });
    // After 5 s: 500 read, 100/s, 5 s to go.
    expect(lines[1]?.[1]).toEqual({ checked: 500, total: 1000, changed: 250, elapsedSeconds: 5, perSecond: 100, etaSeconds: 5 });
    expect(lines[3]?.[1]).toEqual({ checked: 1000, total: 1000, changed: 500, elapsedSeconds: 10, perSecond: 100 });
  });
});
