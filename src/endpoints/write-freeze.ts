/**
 * @module endpoints/write-freeze
 * WriteFreeze holds the resources whose writes are paused: a CRD's objects being moved back to kube-apiserver, so
 * that what is copied is final. A write to a frozen resource (any verb but get, list and watch, on the object or a
 * subresource) is answered 429 with Retry-After, which client-go and kubectl retry by themselves: a client sees a
 * write that took a little longer, not an error, as long as the freeze is shorter than their retries (client-go: 10).
 * Reads go on. The freeze is this process's (each replica is frozen on its own).
 * A released resource (its objects now served by kube-apiserver again) also answers a watch 410 at once, so a client
 * that reconnects here just before kube-aggregator stops sending it here re-lists instead of resuming.
 */
import { expired, tooManyRequests } from '../apis/meta/errors.js';

/** FREEZE_RETRY_AFTER_SECONDS is the Retry-After a frozen write gets. */
export const FREEZE_RETRY_AFTER_SECONDS = 1;

/**
 * WriteFreeze is the set of frozen resources, `<group>/<plural>`, and of released ones: resources whose clients must
 * go and re-list elsewhere (moved back to kube-apiserver), so a watch of them is answered 410 at once.
 */
export class WriteFreeze {
  readonly #frozen = new Set<string>();
  readonly #released = new Set<string>();

  /** set freezes or thaws a resource; thawing also ends its release. */
  set(resource: string, frozen: boolean): void {
    if (frozen) this.#frozen.add(resource);
    else {
      this.#frozen.delete(resource);
      this.#released.delete(resource);
    }
  }

  /** release marks a frozen resource's watches as refused (410) until it is thawed. */
  release(resource: string): void {
    this.#released.add(resource);
  }

  released(resource: string): boolean {
    return this.#released.has(resource);
  }

  frozen(resource: string): boolean {
    return this.#frozen.has(resource);
  }

  /** checkWatch refuses a watch of a released resource with 410: its client re-lists, by then elsewhere. */
  checkWatch(group: string, plural: string): void {
    if (this.#released.has(`${group}/${plural}`)) throw expired(`${plural}.${group} is served by another server now: re-list`);
  }

  /** check refuses a write to a frozen resource with the 429 a client retries. */
  check(group: string, plural: string): void {
    if (this.#frozen.has(`${group}/${plural}`)) {
      throw tooManyRequests(`writes to ${plural}.${group} are paused while its objects are moved; retry shortly`, FREEZE_RETRY_AFTER_SECONDS);
    }
  }
}
