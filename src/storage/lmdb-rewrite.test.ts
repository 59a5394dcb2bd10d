// LmdbStorage.rewrite (Storage.rewrite): the storage version migration's write. The object is stored in its new form
// with its resourceVersion, the counter does not move, no history entry is written and watchers get nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChangeEvent, ObjectKey } from './interface.js';
import { LmdbStorage } from './lmdb-storage.js';

const R = 'extensions.example.com/websites';
const key = (name: string): ObjectKey => ({ resource: R, namespace: 'a', name });
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('lmdb rewrite', () => {
  it('stores the new form under the same resourceVersion, with no new revision, history entry or event', async () => {
    const d = mkdtempSync(join(tmpdir(), 'lmdb-rewrite-'));
    dirs.push(d);
    const s = new LmdbStorage({ path: d, compactionIntervalMs: 0 });
    const created = await s.create(key('x'), { apiVersion: 'g/v1alpha1', kind: 'K', metadata: { name: 'x', namespace: 'a' } });
    const revision = s.currentRevision();
    const history = s.historySize();
    const events: ChangeEvent[] = [];
    const h = s.watch({ resource: R }, revision, { onEvent: (e) => events.push(e), onError: () => undefined });

    expect(await s.rewrite(key('x'), (o) => ({ ...o, apiVersion: 'g/v1' }))).toBe(true);
    expect(await s.rewrite(key('x'), () => null)).toBe(false);
    await expect(s.rewrite(key('gone'), (o) => o)).rejects.toMatchObject({ code: 'KeyNotFound' });

    const got = await s.get(key('x'));
    expect(got).toMatchObject({ apiVersion: 'g/v1', metadata: { resourceVersion: created.metadata.resourceVersion } });
    expect(s.currentRevision()).toBe(revision);
    expect(s.historySize()).toBe(history);
    // A write after it is the next revision, and the only event the watcher sees.
    await s.update(key('x'), (o) => ({ ...o, spec: { n: 1 } }));
    await new Promise((r) => setTimeout(r, 20));
    expect(events.map((e) => [e.type, e.revision, e.object.apiVersion])).toEqual([['MODIFIED', revision + 1, 'g/v1']]);
    h.stop();
    await s.close();
  });
});
