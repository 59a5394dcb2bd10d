/**
 * @module endpoints/write-freeze
 * WriteFreeze holds the resources whose writes are paused: a CRD's objects being moved back to kube-apiserver, so
 * that what is copied is final. A write to a frozen resource (any verb but get, list and watch, on the object or a
 * subresource) is answered 429 with Retry-After, which client-go and kubectl retry by themselves: a client sees a
 * write that took a little longer, not an error, as long as the freeze is shorter than their retries (client-go: 10).
 * Reads go on. The freeze is this process's (each replica is frozen on its own).
 */
import { tooManyRequests } from '../apis/meta/errors.js';

/** FREEZE_RETRY_AFTER_SECONDS is the Retry-After a frozen write gets. */
export const FREEZE_RETRY_AFTER_SECONDS = 1;

/** WriteFreeze is the set of frozen resources, `<group>/<plural>`. */
export class WriteFreeze {
  readonly #frozen = new Set<string>();

  set(resource: string, frozen: boolean): void {
    if (frozen) this.#frozen.add(resource);
    else this.#frozen.delete(resource);
  }

  frozen(resource: string): boolean {
    return this.#frozen.has(resource);
  }

  /** check refuses a write to a frozen resource with the 429 a client retries. */
  check(group: string, plural: string): void {
    if (this.#frozen.has(`${group}/${plural}`)) {
      throw tooManyRequests(`writes to ${plural}.${group} are paused while its objects are moved; retry shortly`, FREEZE_RETRY_AFTER_SECONDS);
    }
  }
}
