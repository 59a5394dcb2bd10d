import { describe, expect, it } from 'vitest';
import { InFlightList, type Linked } from './in-flight-list.js';

interface E extends Linked<E> {
  id: number;
}
const entry = (id: number): E => ({ id, prev: undefined, next: undefined });
const ids = (l: InFlightList<E>) => [...l].map((e) => e.id);

describe('InFlightList', () => {
  it('keeps insertion order and removes from the head, middle and tail', () => {
    const l = new InFlightList<E>();
    const es = [1, 2, 3, 4, 5].map(entry);
    for (const e of es) l.add(e);
    expect(ids(l)).toEqual([1, 2, 3, 4, 5]);
    l.remove(es[2]!);
    l.remove(es[0]!);
    l.remove(es[4]!);
    expect(ids(l)).toEqual([2, 4]);
    expect(l.size).toBe(2);
    l.add(es[0]!);
    expect(ids(l)).toEqual([2, 4, 1]);
  });

  it('ignores a second add and a remove of an entry it does not hold', () => {
    const l = new InFlightList<E>();
    const a = entry(1);
    l.add(a);
    l.add(a);
    l.remove(entry(2));
    expect(l.size).toBe(1);
    l.remove(a);
    l.remove(a);
    expect(l.size).toBe(0);
    expect(ids(l)).toEqual([]);
  });

  it('lets entries remove themselves and others while it is iterated', () => {
    const l = new InFlightList<E>();
    const es = [1, 2, 3, 4].map(entry);
    for (const e of es) l.add(e);
    const seen: number[] = [];
    for (const e of l) {
      seen.push(e.id);
      l.remove(e);
      if (e.id === 2) l.remove(es[3]!);
    }
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(l.size).toBe(0);
  });
});
