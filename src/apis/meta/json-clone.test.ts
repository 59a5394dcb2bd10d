import { describe, expect, it } from 'vitest';
import { cloneJson } from './json-clone.js';

describe('cloneJson', () => {
  it('copies every level, so changing the copy leaves the original as it was', () => {
    const original = { a: [1, { b: 'x', c: null }], d: { e: true, f: { g: [] as unknown[] } }, h: 1.5 };
    const copy = cloneJson(original);
    expect(copy).toEqual(original);
    (copy.a[1] as { b: string }).b = 'y';
    copy.d.f.g.push(1);
    copy.d.e = false;
    expect(original).toEqual({ a: [1, { b: 'x', c: null }], d: { e: true, f: { g: [] } }, h: 1.5 });
  });

  it('keeps a `__proto__` member as a member, not as the prototype', () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}') as Record<string, unknown>;
    const copy = cloneJson(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(copy)).toEqual(['__proto__', 'x']);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"x":1}');
  });
});
