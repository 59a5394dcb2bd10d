/**
 * LIST semantics against a real server process over HTTPS: limit/continue pagination (one consistent snapshot per
 * paginated list, remainingItemCount, the continue pages client-go's pager sends without a resourceVersion), label
 * selectors with a limit, Table and PartialObjectMetadataList pages, resourceVersion/resourceVersionMatch semantics
 * and their validation errors, expiry of continue tokens and old snapshots once the history is compacted, empty lists.
 */
import type { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAgent, API, call, cleanupTempDirs, startServer, website, type JsonResponse, type ServerProcess } from './helpers/server-process.js';

let server: ServerProcess;
let agent: Agent;
/** A server keeping only 10 changes of history, so continue tokens and old snapshots expire quickly. */
let small: ServerProcess;
let smallAgent: Agent;

const TABLE = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
const PARTIAL = { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' };
const MERGE = { 'content-type': 'application/merge-patch+json' };

/** The 50 objects of the pagination tests: 10 in each of 5 namespaces (none a prefix of another). */
const PAGED_NS = ['pg-alpha', 'pg-bravo', 'pg-charlie', 'pg-delta', 'pg-echo'];
const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`);

beforeAll(async () => {
  [server, small] = await Promise.all([startServer(), startServer({ args: ['--watch-history-events', '10'] })]);
  agent = adminAgent(server.certDir);
  smallAgent = adminAgent(small.certDir);
  await Promise.all(PAGED_NS.flatMap((ns) => names('site', 10).map((n) => create(ns, n))));
});
afterAll(async () => {
  await agent?.close();
  await smallAgent?.close();
  await Promise.all([server?.stop(), small?.stop()]);
  cleanupTempDirs();
});

type Params = Record<string, string | number | undefined>;

/** listUrl is the collection URL of one namespace (or all namespaces when ns is undefined) with query parameters. */
function listUrl(s: ServerProcess, ns: string | undefined, params: Params = {}): string {
  const q = new URLSearchParams(Object.entries(params).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])));
  const path = ns === undefined ? `${API}/websites` : `${API}/namespaces/${ns}/websites`;
  return `${s.url}${path}${q.size ? `?${q}` : ''}`;
}

/** list sends one LIST to the main server. */
const list = (ns: string | undefined, params: Params = {}, headers: Record<string, string> = {}) =>
  call(agent, listUrl(server, ns, params), 'GET', undefined, headers);

/** create makes a Website on the main server (setup, not under test). */
async function create(ns: string, name: string, labels?: Record<string, string>, s = server, a = agent) {
  const r = await call(a, `${s.url}${API}/namespaces/${ns}/websites`, 'POST', website(name, {}, labels ? { labels } : {}));
  expect(r.status, r.text).toBe(201);
  return r.body;
}

/** ok asserts a 200 and returns the body. */
function ok(r: JsonResponse): any {
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** expectStatus asserts a metav1.Status failure with this code and reason and returns it. */
function expectStatus(r: JsonResponse, code: number, reason: string): any {
  expect(r.status, r.text).toBe(code);
  expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason });
  return r.body;
}

const key = (o: any) => `${o.metadata.namespace}/${o.metadata.name}`;

/**
 * paginate follows continue tokens like client-go's pager: `first` only on the first request, `every` (selectors,
 * limit) on all of them, and continue pages carry no resourceVersion. `between(i)` runs after page i arrived.
 */
async function paginate(
  ns: string | undefined,
  every: Params,
  first: Params = {},
  o: { headers?: Record<string, string>; between?: (page: number) => Promise<void>; s?: ServerProcess; a?: Agent } = {},
): Promise<any[]> {
  const pages: any[] = [];
  let token: string | undefined;
  do {
    const params = token === undefined ? { ...first, ...every } : { ...every, continue: token };
    const body = ok(await call(o.a ?? agent, listUrl(o.s ?? server, ns, params), 'GET', undefined, o.headers ?? {}));
    pages.push(body);
    token = body.metadata.continue;
    if (token !== undefined) expect(token).toMatch(/\S/);
    if (pages.length > 200) throw new Error('pagination did not end');
    if (token !== undefined) await o.between?.(pages.length);
  } while (token !== undefined);
  return pages;
}

/** checkPages asserts what every plain (no selector) paginated list must satisfy and returns the concatenated items. */
function checkPages(pages: any[], limit: number, total: number): any[] {
  const rv = pages[0].metadata.resourceVersion;
  expect(rv).toMatch(/^[1-9]\d*$/);
  let seen = 0;
  pages.forEach((p, i) => {
    expect(p.kind).toBe('WebsiteList');
    expect(p.metadata.resourceVersion).toBe(rv);
    seen += p.items.length;
    const last = i === pages.length - 1;
    if (!last) {
      expect(p.items).toHaveLength(limit);
      expect(typeof p.metadata.continue).toBe('string');
      expect(p.metadata.remainingItemCount).toBe(total - seen);
    } else {
      expect(p.items.length).toBeGreaterThan(0);
      expect(p.items.length).toBeLessThanOrEqual(limit);
      expect(p.metadata).not.toHaveProperty('continue');
      expect(p.metadata).not.toHaveProperty('remainingItemCount');
    }
  });
  expect(seen).toBe(total);
  expect(pages).toHaveLength(Math.ceil(total / limit));
  const items = pages.flatMap((p) => p.items);
  const keys = items.map(key);
  expect(new Set(keys).size).toBe(keys.length);
  // Sorted as kube-apiserver's storage keys are: by namespace/name.
  expect(keys).toEqual([...keys].sort());
  return items;
}

describe('limit and continue', () => {
  it('pages over every namespace concatenate to the full sorted list at one resourceVersion, with remainingItemCount counting down', async () => {
    const full = ok(await list(undefined));
    expect(full.metadata).not.toHaveProperty('continue');
    const total = full.items.length;
    expect(total).toBeGreaterThanOrEqual(50);
    for (const ns of PAGED_NS) {
      expect(full.items.filter((o: any) => o.metadata.namespace === ns).map((o: any) => o.metadata.name)).toEqual(names('site', 10));
    }

    const pages = checkPages(await paginate(undefined, { limit: 7 }), 7, total);
    expect(pages.map(key)).toEqual(full.items.map(key));
    expect(pages).toEqual(full.items);
  });

  it('pages within one namespace hold only that namespace, and a limit equal to the count gives one page without continue', async () => {
    const pages = await paginate('pg-charlie', { limit: 3 });
    expect(pages.map((p) => p.items.length)).toEqual([3, 3, 3, 1]);
    expect(pages.map((p) => p.metadata.remainingItemCount)).toEqual([7, 4, 1, undefined]);
    const items = checkPages(pages, 3, 10);
    expect(items.map((o) => key(o))).toEqual(names('site', 10).map((n) => `pg-charlie/${n}`));

    const exact = ok(await list('pg-charlie', { limit: 10 }));
    expect(exact.items).toHaveLength(10);
    expect(exact.metadata).not.toHaveProperty('continue');
    expect(exact.metadata).not.toHaveProperty('remainingItemCount');

    const half = await paginate('pg-charlie', { limit: 5 });
    expect(half.map((p) => p.items.length)).toEqual([5, 5]);
    expect(half[1].metadata).not.toHaveProperty('continue');
  });

  it('limit=0 and a negative limit both mean no limit (etcd3 store: paging only when limit > 0)', async () => {
    for (const limit of [0, -1]) {
      const all = ok(await list('pg-delta', { limit }));
      expect(all.items).toHaveLength(10);
      expect(all.metadata).not.toHaveProperty('continue');
      expect(all.metadata).not.toHaveProperty('remainingItemCount');
    }
  });

  it('writes between pages do not show in later pages: created objects stay absent, deleted ones present, updated ones old', async () => {
    const ns = 'snap';
    const created = new Map<string, any>();
    for (const n of names('s', 20)) created.set(n, await create(ns, n));
    const before = ok(await list(ns));

    const pages = await paginate(
      ns,
      { limit: 5 },
      {},
      {
        between: async (page) => {
          if (page !== 1) return;
          // After the first page (s-00..s-04): writes landing in the ranges of later pages.
          await create(ns, 's-07a');
          await create(ns, 's-99');
          expect((await call(agent, `${listUrl(server, ns)}/s-10`, 'DELETE')).status).toBe(200);
          const upd = await call(agent, `${listUrl(server, ns)}/s-15`, 'PATCH', { spec: { replicas: 9 }, metadata: { labels: { changed: 'yes' } } }, MERGE);
          expect(upd.status, upd.text).toBe(200);
          // A write inside the range already returned, too.
          expect((await call(agent, `${listUrl(server, ns)}/s-01`, 'DELETE')).status).toBe(200);
        },
      },
    );
    expect(pages[0].metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const items = checkPages(pages, 5, 20);
    expect(items).toEqual(before.items);
    const byName = new Map(items.map((o) => [o.metadata.name, o]));
    expect(byName.has('s-07a')).toBe(false);
    expect(byName.has('s-99')).toBe(false);
    expect(byName.get('s-10')).toEqual(created.get('s-10'));
    expect(byName.get('s-15')?.spec.replicas).toBe(1);
    expect(byName.get('s-15')?.metadata.labels).toBeUndefined();
    expect(byName.get('s-15')?.metadata.resourceVersion).toBe(created.get('s-15').metadata.resourceVersion);

    // A new list sees the writes.
    const after = ok(await list(ns));
    expect(Number(after.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion));
    const now = after.items.map((o: any) => o.metadata.name);
    expect(now).toContain('s-07a');
    expect(now).toContain('s-99');
    expect(now).not.toContain('s-10');
    expect(now).not.toContain('s-01');
    expect(after.items.find((o: any) => o.metadata.name === 's-15').spec.replicas).toBe(9);
  });

  it("a continue token taken to another collection (all namespaces and one namespace) gives that collection's next page and remainingItemCount", async () => {
    const full = ok(await list(undefined));
    const at = full.items.findIndex((o: any) => key(o) === 'pg-charlie/site-03');
    expect(at).toBeGreaterThan(0);
    // From all namespaces (ending at pg-charlie/site-03) into pg-charlie's list: site-04 and site-05, 4 after them.
    const wide = ok(await list(undefined, { limit: at + 1 }));
    expect(wide.items.at(-1).metadata.name).toBe('site-03');
    const narrow = ok(await list('pg-charlie', { limit: 2, continue: wide.metadata.continue }));
    expect(narrow.items.map((o: any) => o.metadata.name)).toEqual(['site-04', 'site-05']);
    expect(narrow.metadata.remainingItemCount).toBe(4);
    // And back: from pg-charlie's list (ending at site-05) into all namespaces.
    const back = ok(await list(undefined, { limit: 1, continue: narrow.metadata.continue }));
    expect(key(back.items[0])).toBe('pg-charlie/site-06');
    expect(back.metadata.remainingItemCount).toBe(full.items.length - (at + 4));
  });

  it('a continue page sent with resourceVersion "0" is still the next page of the same snapshot', async () => {
    const p1 = ok(await list('pg-bravo', { limit: 4 }));
    const p2 = ok(await list('pg-bravo', { limit: 4, continue: p1.metadata.continue, resourceVersion: '0' }));
    expect(p2.metadata.resourceVersion).toBe(p1.metadata.resourceVersion);
    expect(p2.items.map((o: any) => o.metadata.name)).toEqual(names('site', 10).slice(4, 8));
  });
});

describe('label selectors with limit', () => {
  it('every page matches, the union is exactly the selected set, and no page reports remainingItemCount', async () => {
    const ns = 'sel';
    const all = names('x', 30);
    await Promise.all(all.map((n, i) => create(ns, n, { color: i % 3 === 0 ? 'red' : 'blue', idx: String(i) })));
    const red = all.filter((_, i) => i % 3 === 0).map((n) => `${ns}/${n}`);

    for (const scope of [ns, undefined]) {
      const pages = await paginate(scope, { limit: 4, labelSelector: 'color=red' });
      const rv = pages[0].metadata.resourceVersion;
      for (const p of pages) {
        expect(p.metadata.resourceVersion).toBe(rv);
        expect(p.metadata).not.toHaveProperty('remainingItemCount');
        expect(p.items.length).toBeLessThanOrEqual(4);
        for (const o of p.items) expect(o.metadata.labels.color).toBe('red');
      }
      expect(pages.length).toBeGreaterThanOrEqual(3);
      expect(pages[pages.length - 1].metadata).not.toHaveProperty('continue');
      const keys = pages.flatMap((p) => p.items.map(key));
      expect(keys).toEqual(red);
    }

    // A set-based selector that matches nothing in a long namespace: no items, and pagination still ends.
    const none = await paginate(ns, { limit: 4, labelSelector: 'color in (green)' });
    expect(none.flatMap((p) => p.items)).toEqual([]);
    expect(none[none.length - 1].metadata).not.toHaveProperty('continue');
  });
});

describe('Table and PartialObjectMetadataList pages', () => {
  it('a Table list carries continue and remainingItemCount in its metadata, and following it yields every row once', async () => {
    const pages = await paginate('pg-alpha', { limit: 4 }, {}, { headers: TABLE });
    expect(pages.map((p) => p.kind)).toEqual(['Table', 'Table', 'Table']);
    expect(pages.map((p) => p.apiVersion)).toEqual(['meta.k8s.io/v1', 'meta.k8s.io/v1', 'meta.k8s.io/v1']);
    expect(pages.map((p) => p.rows.length)).toEqual([4, 4, 2]);
    expect(pages.map((p) => p.metadata.remainingItemCount)).toEqual([6, 2, undefined]);
    expect(pages[2].metadata).not.toHaveProperty('continue');
    for (const p of pages) expect(p.metadata.resourceVersion).toBe(pages[0].metadata.resourceVersion);
    expect(pages.flatMap((p) => p.rows.map((r: any) => r.cells[0]))).toEqual(names('site', 10));
    expect(pages.flatMap((p) => p.rows.map((r: any) => r.object.metadata.name))).toEqual(names('site', 10));
    expect(pages[0].columnDefinitions[0].name).toBe('Name');
  });

  it('a PartialObjectMetadataList carries continue and remainingItemCount, and its items are metadata only', async () => {
    const pages = await paginate(undefined, { limit: 6 }, {}, { headers: PARTIAL });
    const full = ok(await list(undefined));
    expect(pages[0].kind).toBe('PartialObjectMetadataList');
    expect(pages[0].apiVersion).toBe('meta.k8s.io/v1');
    expect(pages[0].metadata.remainingItemCount).toBe(full.items.length - 6);
    expect(typeof pages[0].metadata.continue).toBe('string');
    expect(pages[pages.length - 1].metadata).not.toHaveProperty('continue');
    const items = pages.flatMap((p) => p.items);
    for (const i of items) {
      expect(i.kind).toBe('PartialObjectMetadata');
      expect(i).not.toHaveProperty('spec');
    }
    expect(items.map((i) => i.metadata)).toEqual(full.items.map((o: any) => o.metadata));
  });
});

describe('resourceVersion semantics', () => {
  it('unset, "0", NotOlderThan N and N without limit are the current state; Exact N and N with a limit are the snapshot at N', async () => {
    const ns = 'rvsem';
    const a = await create(ns, 'a');
    const b = await create(ns, 'b');
    const c = await create(ns, 'c');
    const n = c.metadata.resourceVersion;
    // After N: create d, delete a, update b.
    await create(ns, 'd');
    expect((await call(agent, `${listUrl(server, ns)}/a`, 'DELETE')).status).toBe(200);
    const b2 = ok(await call(agent, `${listUrl(server, ns)}/b`, 'PATCH', { spec: { replicas: 5 } }, MERGE));

    const current = ok(await list(ns));
    expect(current.items.map((o: any) => o.metadata.name)).toEqual(['b', 'c', 'd']);
    expect(current.items[0]).toEqual(b2);
    for (const params of [{ resourceVersion: '0' }, { resourceVersion: n, resourceVersionMatch: 'NotOlderThan' }, { resourceVersion: n }]) {
      const r = ok(await list(ns, params));
      expect(r.items, JSON.stringify(params)).toEqual(current.items);
      expect(Number(r.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(b2.metadata.resourceVersion));
    }

    for (const params of [
      { resourceVersion: n, resourceVersionMatch: 'Exact' },
      { resourceVersion: n, limit: 10 },
    ]) {
      const r = ok(await list(ns, params));
      expect(r.metadata.resourceVersion, JSON.stringify(params)).toBe(n);
      expect(r.items).toEqual([a, b, c]);
      expect(r.items[1].spec.replicas).toBe(1);
      expect(r.items[1].metadata.resourceVersion).toBe(b.metadata.resourceVersion);
    }

    // Exact N paginates within the snapshot at N.
    const pages = await paginate(ns, { limit: 2 }, { resourceVersion: n, resourceVersionMatch: 'Exact' });
    expect(pages.map((p) => p.metadata.resourceVersion)).toEqual([n, n]);
    expect(pages.map((p) => p.metadata.remainingItemCount)).toEqual([1, undefined]);
    expect(pages.flatMap((p) => p.items)).toEqual([a, b, c]);

    // An Exact snapshot across all namespaces at N holds a and b as they were, and nothing created after N.
    const wide = ok(await list(undefined, { resourceVersion: n, resourceVersionMatch: 'Exact' }));
    expect(wide.items.filter((o: any) => o.metadata.namespace === ns)).toEqual([a, b, c]);
    for (const o of wide.items) expect(Number(o.metadata.resourceVersion)).toBeLessThanOrEqual(Number(n));
  });

  it.each([
    [
      'Exact with resourceVersion "0"',
      { resourceVersion: '0', resourceVersionMatch: 'Exact' },
      'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    ],
    [
      'resourceVersionMatch without resourceVersion',
      { resourceVersionMatch: 'NotOlderThan' },
      'resourceVersionMatch is forbidden unless resourceVersion is provided',
    ],
    ['an unknown resourceVersionMatch', { resourceVersion: '1', resourceVersionMatch: 'Newest' }, 'resourceVersionMatch'],
  ])('%s is 422 Invalid', async (_name, params, message) => {
    const r = expectStatus(await list('pg-alpha', params), 422, 'Invalid');
    expect(r.message).toContain(message);
  });

  it('resourceVersionMatch with continue is 422, a resourceVersion with continue is 400, and a garbage continue is 400', async () => {
    const p1 = ok(await list('pg-echo', { limit: 3 }));
    const token = p1.metadata.continue;
    const rv = p1.metadata.resourceVersion;

    const withMatch = expectStatus(
      await list('pg-echo', { limit: 3, continue: token, resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' }),
      422,
      'Invalid',
    );
    expect(withMatch.message).toContain('resourceVersionMatch is forbidden when continue is provided');

    const withRv = expectStatus(await list('pg-echo', { limit: 3, continue: token, resourceVersion: rv }), 400, 'BadRequest');
    expect(withRv.message).toContain('specifying resource version is not allowed when using continue');

    for (const bad of ['garbage!', 'bm90IGpzb24', Buffer.from('{"v":"meta.k8s.io/v1","rv":"x","start":["a","b"]}').toString('base64url')]) {
      const r = expectStatus(await list('pg-echo', { limit: 3, continue: bad }), 400, 'BadRequest');
      expect(r.message).toContain('continue');
    }
    // The token still works afterwards.
    expect(ok(await list('pg-echo', { limit: 3, continue: token })).items.map((o: any) => o.metadata.name)).toEqual(names('site', 10).slice(3, 6));
  });

  it('a resourceVersion the store reaches while the list waits is served with that state', async () => {
    const current = Number(ok(await list('pg-wait')).metadata.resourceVersion);
    const waiting = list('pg-wait', { resourceVersion: String(current + 1), resourceVersionMatch: 'NotOlderThan' });
    await new Promise((r) => setTimeout(r, 500));
    await create('pg-wait', 'arrives');
    const r = ok(await waiting);
    expect(Number(r.metadata.resourceVersion)).toBeGreaterThanOrEqual(current + 1);
    expect(r.items.map((o: any) => o.metadata.name)).toEqual(['arrives']);
  });

  it('a resourceVersion newer than the server has is 504 Timeout with cause ResourceVersionTooLarge after waiting', async () => {
    const from = server.logs().length;
    const current = Number(ok(await list('pg-alpha')).metadata.resourceVersion);
    const future = String(current + 1000);
    const [notOlder, legacy] = await Promise.all([
      list('pg-alpha', { resourceVersion: future, resourceVersionMatch: 'NotOlderThan' }),
      list('pg-alpha', { resourceVersion: future }),
    ]);
    for (const r of [notOlder, legacy]) {
      const s = expectStatus(r, 504, 'Timeout');
      expect(s.details.causes).toContainEqual(expect.objectContaining({ reason: 'ResourceVersionTooLarge' }));
    }
    // The client's wait ran out, nothing failed: each is one info `request` line with its code, no error, no stack.
    await new Promise((r) => setTimeout(r, 200));
    const lines = server
      .logs()
      .slice(from)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; msg: string; code?: number });
    expect(lines.filter((l) => l.code === 504)).toEqual([
      expect.objectContaining({ level: 30, msg: 'request' }),
      expect.objectContaining({ level: 30, msg: 'request' }),
    ]);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    expect(server.logs().slice(from)).not.toContain('"stack"');
  });
});

describe('empty lists', () => {
  it('render items [] in JSON and PartialObjectMetadataList and rows [] in a Table, with and without a limit', async () => {
    for (const params of [{}, { limit: 5 }, { labelSelector: 'nothing=here', limit: 1 }]) {
      const json = await list('nothing', params);
      expect(json.status).toBe(200);
      expect(json.text).toMatch(/"items":\s*\[\]/);
      expect(json.body.items).toEqual([]);
      expect(json.body.metadata).not.toHaveProperty('continue');
      expect(json.body.metadata).not.toHaveProperty('remainingItemCount');
      expect(json.body.metadata.resourceVersion).toMatch(/^[1-9]\d*$/);

      const table = await list('nothing', params, TABLE);
      expect(table.status).toBe(200);
      expect(table.body.kind).toBe('Table');
      expect(table.text).toMatch(/"rows":\s*\[\]/);

      const partial = await list('nothing', params, PARTIAL);
      expect(partial.status).toBe(200);
      expect(partial.body.kind).toBe('PartialObjectMetadataList');
      expect(partial.text).toMatch(/"items":\s*\[\]/);
    }
  });
});

describe('expiry with --watch-history-events 10', () => {
  const sList = (params: Params = {}) => call(smallAgent, listUrl(small, 'exp', params));
  const touch = async (name: string, value: string) => {
    const r = await call(smallAgent, `${listUrl(small, 'exp')}/${name}`, 'PATCH', { metadata: { labels: { touched: value } } }, MERGE);
    expect(r.status, r.text).toBe(200);
  };

  it('a continue token survives a few writes, then expires with 410 Expired once more than the history was written; so does Exact at that RV', async () => {
    for (const n of names('e', 12)) await create('exp', n, undefined, small, smallAgent);
    const p1 = ok(await sList({ limit: 4 }));
    const rv = p1.metadata.resourceVersion;
    expect(p1.items.map((o: any) => o.metadata.name)).toEqual(names('e', 12).slice(0, 4));

    // Within the window: the next page is served from the snapshot (e-05 shows without the label written since).
    await touch('e-05', '1');
    await touch('e-00', '1');
    const p2 = ok(await sList({ limit: 4, continue: p1.metadata.continue }));
    expect(p2.metadata.resourceVersion).toBe(rv);
    expect(p2.items.map((o: any) => o.metadata.name)).toEqual(names('e', 12).slice(4, 8));
    expect(p2.items[1].metadata.labels).toBeUndefined();

    // Far more changes than the history keeps: compaction drops the snapshot (it runs after writes, so poll briefly).
    for (let i = 0; i < 15; i++) await touch(`e-${String(i % 12).padStart(2, '0')}`, `w${i}`);
    let p3 = await sList({ limit: 4, continue: p2.metadata.continue });
    for (let tries = 0; p3.status === 200 && tries < 100; tries++) {
      await new Promise((r) => setTimeout(r, 50));
      p3 = await sList({ limit: 4, continue: p2.metadata.continue });
    }
    const gone = expectStatus(p3, 410, 'Expired');
    expect(gone.message).toContain('continue');

    expectStatus(await sList({ resourceVersion: rv, resourceVersionMatch: 'Exact' }), 410, 'Expired');
    expectStatus(await sList({ resourceVersion: rv, limit: 4 }), 410, 'Expired');
    expectStatus(await call(smallAgent, listUrl(small, undefined, { resourceVersion: rv, resourceVersionMatch: 'Exact' })), 410, 'Expired');

    // NotOlderThan an old RV is fine (the current state is newer), and a fresh paginated list — what the pager does
    // on Expired — starts over at the current state.
    const fresh = ok(await sList({ resourceVersion: rv, resourceVersionMatch: 'NotOlderThan' }));
    expect(Number(fresh.metadata.resourceVersion)).toBeGreaterThan(Number(rv));
    const relist = await paginate('exp', { limit: 4 }, {}, { s: small, a: smallAgent });
    expect(relist.flatMap((p) => p.items)).toEqual(fresh.items);
    expect(fresh.items.find((o: any) => o.metadata.name === 'e-02').metadata.labels).toEqual({ touched: 'w14' });
  });
});
