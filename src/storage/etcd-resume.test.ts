import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { resumeFrom } from './etcd-resume.js';

/** A watcher as etcd3 builds one: its own listeners first, moving the resume point to the header's revision + 1. */
function etcd3Watcher(start: number) {
  const w = new EventEmitter() as EventEmitter & { request: { start_revision?: string } };
  w.request = { start_revision: String(start) };
  const fromHeader = (res: { header: { revision: string } }) => {
    w.request.start_revision = String(Number(res.header.revision) + 1);
  };
  w.on('data', fromHeader);
  w.on('connected', fromHeader);
  return w;
}

const answer = (revisions: number[], header: number) => ({
  header: { revision: String(header) },
  events: revisions.map((r) => ({ kv: { mod_revision: String(r) } })),
});

describe('resumeFrom', () => {
  it('resumes after the last revision handled, not after the header of the last answer (ahead while catching up)', () => {
    const w = etcd3Watcher(11);
    let handled = 10;
    w.on('data', (res: ReturnType<typeof answer>) => {
      for (const e of res.events) handled = Number(e.kv.mod_revision);
    });
    resumeFrom(w, () => handled);
    w.emit('data', answer([11, 12, 13], 500));
    expect(w.request.start_revision).toBe('14');
    // A reconnect's "created" answer carries the current revision: still right after what was handled.
    w.emit('connected', answer([], 900));
    expect(w.request.start_revision).toBe('14');
    w.emit('disconnected', new Error('stream ended'));
    expect(w.request.start_revision).toBe('14');
  });

  it("moves on to a progress notification's revision once the owner has taken it (every change up to it was sent)", () => {
    const w = etcd3Watcher(11);
    let handled = 13;
    w.on('data', (res: ReturnType<typeof answer>) => {
      if (res.events.length === 0) handled = Number(res.header.revision);
    });
    resumeFrom(w, () => handled);
    w.emit('data', answer([], 40));
    expect(w.request.start_revision).toBe('41');
  });
});
