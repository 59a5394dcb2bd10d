/**
 * @module endpoints/list-rv
 * resourceVersion semantics of a LIST (api-concepts "semantics for get and list"): unset = most recent,
 * "0" = any, N = not older than N (wait up to 3 s for it, then 504 ResourceVersionTooLarge), Exact = exactly N.
 * Every list is served from the committed store, so "not older than" holds as soon as the store has reached N.
 */
import { expired, tooLargeResourceVersion } from '../apis/meta/errors.js';
import type { ResourceStore } from '../registry/store.js';
import type { ListOptions } from './query.js';

const WAIT_MS = 3000;
const POLL_MS = 25;

/** listResourceVersion waits until the store has reached a requested resourceVersion, or throws 504/410. */
export async function listResourceVersion(store: ResourceStore, opts: ListOptions): Promise<void> {
  const rv = opts.resourceVersion;
  if (rv === undefined || rv === '0') return;
  const wanted = Number(rv);
  const deadline = Date.now() + WAIT_MS;
  while (store.currentRevision() < wanted) {
    if (Date.now() >= deadline) throw tooLargeResourceVersion(rv, String(store.currentRevision()));
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  // Only the newest snapshot exists; an exact read of an older one is gone.
  if (opts.resourceVersionMatch === 'Exact' && wanted !== store.currentRevision()) {
    throw expired(`The resourceVersion for the provided list is too old.`);
  }
}
