// The label prefilter a store hands to its backend: a test on an object's JSON text that must pass every object the
// selector matches (else a selector list would lose objects), and that rules out what an equality cannot match.
import { describe, expect, it } from 'vitest';
import { parseLabelSelector } from '../apis/meta/labels.js';
import { labelPrefilter } from './store.js';

const text = (labels: Record<string, string> | undefined) =>
  Buffer.from(JSON.stringify({ metadata: { name: 'n', ...(labels ? { labels } : {}) }, spec: { note: 'tier=web' } }));

describe('labelPrefilter', () => {
  it('passes every object the selector matches, over a grid of selectors and label sets', () => {
    const selectors = [
      'tier=web',
      'tier==web',
      'tier in (web,db)',
      'tier!=web',
      'tier notin (db)',
      'tier',
      '!tier',
      'app=a,tier=web',
      'example.com/role=x-y_z.1',
      'n>1',
      'tier in (db)',
    ];
    const labelSets: (Record<string, string> | undefined)[] = [
      undefined,
      {},
      { tier: 'web' },
      { tier: 'db' },
      { tier: 'webx' },
      { app: 'a', tier: 'web' },
      { 'example.com/role': 'x-y_z.1' },
      { n: '2' },
      { xtier: 'web' },
      { tier: '' },
    ];
    for (const s of selectors) {
      const sel = { label: parseLabelSelector(s) };
      const pre = labelPrefilter(sel);
      for (const labels of labelSets) {
        if (sel.label.matches(labels)) expect(pre?.(text(labels)) ?? true, `${s} on ${JSON.stringify(labels)}`).toBe(true);
      }
    }
  });

  it('rules out objects without the pair, and gives none for selectors it cannot narrow', () => {
    const pre = labelPrefilter({ label: parseLabelSelector('tier in (web,db),app=a') });
    expect(pre?.(text({ tier: 'db', app: 'a' }))).toBe(true);
    expect(pre?.(text({ tier: 'web' }))).toBe(false);
    expect(pre?.(text({ tier: 'webx', app: 'a' }))).toBe(false);
    // The pair as text elsewhere than the labels only lets an object through to the real test.
    expect(labelPrefilter({ label: parseLabelSelector('tier!=web') })).toBeUndefined();
    expect(labelPrefilter({ label: parseLabelSelector('!tier') })).toBeUndefined();
    expect(labelPrefilter({})).toBeUndefined();
  });
});
