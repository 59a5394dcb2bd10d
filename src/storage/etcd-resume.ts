/**
 * @module storage/etcd-resume
 * Where an etcd3 watcher resumes after a reconnect: right after the last revision its owner handled.
 */
import type { EventEmitter } from 'node:events';

/**
 * resumeFrom makes an etcd3 watcher resume, after a reconnect, right after the last revision it delivered (`at()`).
 * etcd3 resumes from the revision in the header of the last answer it got plus one, but an answer's header is the
 * store's revision when it was sent, which is ahead of the answer's events while the watch catches up (and the
 * "created" answer of a reconnect carries the current revision outright): a reconnect then (a deadline that resets
 * the channel, a member going away) would skip every change in between, silently. These listeners run after etcd3's
 * own (it registers them first) and after the caller's data handler (registered before this), so the request is put
 * back once each answer is handled; a progress notification (no events) does mean every change up to its header
 * was sent, and `at()` includes it.
 */
export function resumeFrom(w: EventEmitter, at: () => number): void {
  const request = (w as unknown as { request: { start_revision?: string } }).request;
  const fix = () => {
    request.start_revision = String(at() + 1);
  };
  w.on('data', fix);
  w.on('connected', fix);
  w.on('disconnected', fix);
}
