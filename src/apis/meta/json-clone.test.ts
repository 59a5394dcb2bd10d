import { describe, expect, it } from 'vitest';
import { cloneJson, cloneJsonSharing } from './json-clone.js';

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

describe('cloneJsonSharing', () => {
  it('copies every member but the shared one, which the copy refers to', () => {
    const original = { metadata: { name: 'a' }, spec: { x: [1] }, kind: 'K' };
    const copy = cloneJsonSharing(original, 'metadata');
    expect(copy).toEqual(original);
    expect(copy.metadata).toBe(original.metadata);
    expect(copy.spec).not.toBe(original.spec);
    copy.spec.x.push(2);
    expect(original.spec.x).toEqual([1]);
  });

  it('copies a value that is not an object whole', () => {
    const list = [{ a: 1 }];
    const copy = cloneJsonSharing(list, 'metadata');
    expect(copy).toEqual(list);
    expect(copy[0]).not.toBe(list[0]);
  });

  it('skips inherited enumerable members, as Object.keys would', () => {
    const proto = { inherited: 1 };
    const o = Object.assign(Object.create(proto) as Record<string, unknown>, { own: 2 });
    expect(Object.keys(cloneJson(o))).toEqual(['own']);
    expect(Object.keys(cloneJsonSharing(o, 'x'))).toEqual(['own']);
  });
});
