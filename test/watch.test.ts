/**
 * The watch wire format of API-CONVENTIONS §3 (stream, BOOKMARK, sendInitialEvents, errors and 410) and the watch
 * items of §13 (1 sendInitialEvents, 2 PartialObjectMetadata watch, 7 flushed headers, 8 well-formed events,
 * 9 410 handling and a restart-proof RV counter, 13 cross-namespace and metadata.name watches), checked with raw
 * HTTPS requests against real server processes:
 * - `server` runs with `--watch-bookmark-interval 1s`, so periodic BOOKMARKs come quickly;
 * - `small` runs with `--watch-history-events 5`, so resourceVersions fall out of the history after a few writes.
 * Test names carry the section they check.
 */
import { request, type Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAgent, API, call, cleanupTempDirs, startServer, website, type ServerProcess } from './helpers/server-process.js';

const MERGE = { 'content-type': 'application/merge-patch+json' };
// kubectl get's Accept (§4) and the metadata client's watch Accept (§5).
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const METADATA =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';
const WEBSITE = { kind: 'Website', apiVersion: 'extensions.example.com/v1alpha1' };
const END_ANNOTATION = 'k8s.io/initial-events-end';
// How the client-go reflector opens a watch-list (§3.3).
const WATCH_LIST = 'watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan';

let server: ServerProcess;
let agent: Agent;
const ns = (n: string, srv = server) => `${srv.url}${API}/namespaces/${n}/websites`;
const rv = (o: any) => Number(o.metadata.resourceVersion);
const describeEvent = (e: any) => `${e.type} ${e.object?.metadata?.name ?? e.object?.rows?.[0]?.cells?.[0] ?? ''}`;

beforeAll(async () => {
  server = await startServer({ args: ['--watch-bookmark-interval', '1s'] });
  agent = adminAgent(server.certDir);
});
afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

/** Watch is an open watch stream whose body is read line by line as it arrives. */
interface Watch {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Every event so far, parsed. */
  events: any[];
  /** The body so far, unparsed. */
  raw: string;
  /** True once the server ended the body (cleanly unless `error` is set). */
  ended: boolean;
  error: unknown;
  /** until resolves once `pred(events)` holds; it fails after `ms` or when the stream ends first. */
  until(pred: (events: any[]) => boolean, what: string, ms?: number): Promise<any[]>;
  /** end resolves once the server ended the stream; it fails after `ms`. */
  end(ms?: number): Promise<void>;
  close(): void;
}

function timeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<T>((_, rej) => (t = setTimeout(() => rej(new Error(`timed out after ${ms} ms: ${what}`)), ms)))]).finally(() =>
    clearTimeout(t),
  );
}

/** openWatch sends the request and resolves as soon as the response headers arrive (before any event). */
async function openWatch(url: string, headers: Record<string, string> = {}, dispatcher: Agent = agent): Promise<Watch> {
  const res = await timeout(request(url, { dispatcher, headers }), 10_000, `response headers of ${url}`);
  const waiters: (() => void)[] = [];
  const wake = () => {
    for (const f of waiters.splice(0)) f();
  };
  let closedByUs = false;
  const w: Watch = {
    status: res.statusCode,
    headers: res.headers,
    events: [],
    raw: '',
    ended: false,
    error: undefined,
    async until(pred, what, ms = 8000) {
      const deadline = Date.now() + ms;
      while (!pred(w.events)) {
        if (w.ended) throw new Error(`stream ended before ${what}; events: ${JSON.stringify(w.events.map(describeEvent))} ${String(w.error ?? '')}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`timed out waiting for ${what}; events: ${JSON.stringify(w.events.map(describeEvent))}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(t);
            r();
          });
        });
      }
      return w.events;
    },
    async end(ms = 8000) {
      await w
        .until(() => w.ended, 'the end of the stream', ms)
        .catch((e) => {
          if (!w.ended) throw e;
        });
      if (w.error) throw w.error;
    },
    close() {
      closedByUs = true;
      res.body.destroy();
    },
  };
  res.body.setEncoding('utf8');
  void (async () => {
    let buf = '';
    try {
      for await (const chunk of res.body as AsyncIterable<string>) {
        w.raw += chunk;
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (line.trim()) w.events.push(JSON.parse(line));
          wake();
        }
      }
      if (buf.trim()) w.error = new Error(`the stream ended inside a line: ${buf}`);
    } catch (e) {
      if (!closedByUs) w.error = e;
    }
    w.ended = true;
    wake();
  })();
  return w;
}

/** currentRV is the resourceVersion of a list of everything: the server's latest revision. */
async function currentRV(srv = server, dispatcher = agent): Promise<number> {
  const r = await call(dispatcher, `${srv.url}${API}/websites?fieldSelector=metadata.name%3Dno-such-object`);
  expect(r.status).toBe(200);
  return Number(r.body.metadata.resourceVersion);
}

async function create(namespace: string, name: string, metadata: Record<string, unknown> = {}, srv = server, dispatcher = agent) {
  const r = await call(dispatcher, ns(namespace, srv), 'POST', website(name, {}, metadata));
  expect(r.status, r.text).toBe(201);
  return r.body;
}

async function patch(namespace: string, name: string, body: unknown) {
  const r = await call(agent, `${ns(namespace)}/${name}`, 'PATCH', body, MERGE);
  expect(r.status, r.text).toBe(200);
  return r.body;
}

async function remove(namespace: string, name: string) {
  const r = await call(agent, `${ns(namespace)}/${name}`, 'DELETE');
  expect(r.status, r.text).toBe(200);
}

/** eventually retries `check` (which throws until it holds) for up to `ms`. */
async function eventually<T>(check: () => Promise<T>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const isPeriodicBookmark = (e: any) => e.type === 'BOOKMARK' && !e.object.metadata.annotations;

describe('§3.1 stream', () => {
  it('§3.1/§13.7/§13.8 answers 200, Content-Type application/json (no ;stream=watch), chunked, with headers before any event', async () => {
    // An empty collection watched from the current RV has nothing to send: the headers must come on their own.
    const w = await openWatch(`${ns('hdr')}?watch=true&resourceVersion=${await currentRV()}`);
    try {
      expect(w.status).toBe(200);
      expect(w.headers['content-type']).toBe('application/json');
      expect(w.headers['transfer-encoding']).toBe('chunked');
      expect(w.headers['content-length']).toBeUndefined();
      expect(w.events).toEqual([]);
      // The stream is live: an event written afterwards arrives on it.
      await create('hdr', 'a');
      await w.until((e) => e.length === 1, 'the ADDED event');
      expect(describeEvent(w.events[0])).toBe('ADDED a');
      expect(w.ended).toBe(false);
    } finally {
      w.close();
    }
  });

  it('§3.1/§13.8 sends one JSON object per line with only type and object; every object has kind and apiVersion', async () => {
    await create('lines', 'a');
    const w = await openWatch(`${ns('lines')}?watch=1`);
    try {
      await w.until((e) => e.length === 1, 'the initial ADDED');
      await patch('lines', 'a', { spec: { replicas: 2 } });
      await remove('lines', 'a');
      await w.until((e) => e.length === 3, 'MODIFIED and DELETED');
      expect(w.raw.endsWith('\n')).toBe(true);
      const lines = w.raw.split('\n').slice(0, -1);
      expect(lines).toHaveLength(3);
      for (const line of lines) {
        const e = JSON.parse(line);
        expect(Object.keys(e).sort()).toEqual(['object', 'type']);
        expect(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']).toContain(e.type);
        expect(e.object).toMatchObject(WEBSITE);
      }
    } finally {
      w.close();
    }
  });

  it('§3.1/§13.8 turns create, update (PUT and PATCH) and delete into ADDED, MODIFIED and DELETED; DELETED carries the last state with the deletion resourceVersion', async () => {
    const start = await currentRV();
    const w = await openWatch(`${ns('kinds')}?watch=true&resourceVersion=${start}`);
    try {
      const created = await create('kinds', 'a', { labels: { app: 'x' } });
      const patched = await patch('kinds', 'a', { spec: { replicas: 2 } });
      const put = await call(agent, `${ns('kinds')}/a`, 'PUT', { ...patched, spec: { ...patched.spec, replicas: 3 } });
      expect(put.status, put.text).toBe(200);
      await remove('kinds', 'a');
      const deletedAt = await currentRV();
      await w.until((e) => e.length === 4, 'four events');
      expect(w.events.map(describeEvent)).toEqual(['ADDED a', 'MODIFIED a', 'MODIFIED a', 'DELETED a']);
      expect(w.events.map((e) => rv(e.object))).toEqual([rv(created), rv(patched), rv(put.body), deletedAt]);
      const del = w.events[3].object;
      expect(del).toMatchObject({
        ...WEBSITE,
        metadata: { name: 'a', namespace: 'kinds', uid: created.metadata.uid, labels: { app: 'x' } },
        spec: { replicas: 3 },
      });
      expect(rv(del)).toBeGreaterThan(rv(put.body));

      // The same history replayed to a watch that starts before it: the same events, the same resourceVersions.
      const replay = await openWatch(`${ns('kinds')}?watch=true&resourceVersion=${start}`);
      try {
        await replay.until((e) => e.length === 4, 'the replayed events');
        expect(replay.events).toEqual(w.events);
      } finally {
        replay.close();
      }
    } finally {
      w.close();
    }
  });

  it('§3.1/§13.8 delivers concurrent writes in strictly ascending RV, and a watch from a middle RV gets every later change exactly once', async () => {
    for (let i = 0; i < 15; i++) await create('many', `old-${String(i).padStart(2, '0')}`);
    const live = await openWatch(`${ns('many')}?watch=true&resourceVersion=${await currentRV()}`);
    try {
      const pad = (i: number) => String(i).padStart(2, '0');
      const written = await Promise.all([
        ...Array.from({ length: 25 }, (_, i) => create('many', `new-${pad(i)}`).then((o) => `ADDED ${o.metadata.name} ${o.metadata.resourceVersion}`)),
        ...Array.from({ length: 10 }, (_, i) =>
          patch('many', `old-${pad(i)}`, { spec: { replicas: 2 } }).then((o) => `MODIFIED ${o.metadata.name} ${o.metadata.resourceVersion}`),
        ),
        // A delete answers a Status without the deletion RV: the name must show up once, as DELETED.
        ...Array.from({ length: 5 }, (_, i) => remove('many', `old-${pad(i + 10)}`).then(() => `DELETED old-${pad(i + 10)} -`)),
      ]);
      await live.until((e) => e.length === 40, '40 events');
      const rvs = live.events.map((e) => rv(e.object));
      for (let i = 1; i < rvs.length; i++) expect(rvs[i]).toBeGreaterThan(rvs[i - 1] as number);
      // Each write shows up once, as its own kind of event, with the resourceVersion its response carried.
      const seen = live.events.map((e) => `${e.type} ${e.object.metadata.name} ${e.type === 'DELETED' ? '-' : e.object.metadata.resourceVersion}`);
      expect(seen.sort()).toEqual(written.sort());

      // Resume from the RV of the 15th event: exactly the 25 after it, in the same order; a sentinel written last
      // proves nothing else (no duplicate, no straggler) was coming before it.
      const middle = rvs[14] as number;
      const resumed = await openWatch(`${ns('many')}?watch=true&resourceVersion=${middle}`);
      try {
        await create('many', 'zz-sentinel');
        await resumed.until((e) => e.some((x) => x.object.metadata.name === 'zz-sentinel'), 'the sentinel');
        const before = resumed.events.slice(0, -1);
        expect(before).toEqual(live.events.slice(15, 40));
        expect(describeEvent(resumed.events.at(-1))).toBe('ADDED zz-sentinel');
      } finally {
        resumed.close();
      }
    } finally {
      live.close();
    }
  });

  it.each([
    ['unset', ''],
    ['"0"', '&resourceVersion=0'],
  ])('§3.1 with resourceVersion %s sends a synthetic ADDED per current object, then live events', async (_name, param) => {
    const n = `start${param ? 'zero' : 'unset'}`;
    const a = await create(n, 'a');
    await create(n, 'b');
    const bNow = await patch(n, 'b', { spec: { replicas: 4 } });
    const w = await openWatch(`${ns(n)}?watch=true${param}`);
    try {
      await w.until((e) => e.length === 2, 'the initial events');
      expect(w.events.map(describeEvent).sort()).toEqual(['ADDED a', 'ADDED b']);
      const byName = Object.fromEntries(w.events.map((e) => [e.object.metadata.name, e.object]));
      expect(byName['a']).toEqual(a);
      expect(byName['b']).toEqual(bNow);
      await patch(n, 'a', { spec: { replicas: 2 } });
      await w.until((e) => e.length === 3, 'the live MODIFIED');
      expect(describeEvent(w.events[2])).toBe('MODIFIED a');
      expect(rv(w.events[2].object)).toBeGreaterThan(rv(bNow));
    } finally {
      w.close();
    }
  });

  it('§3.1 with resourceVersion N sends only the changes after N', async () => {
    await create('fromn', 'a');
    const n = (await create('fromn', 'b')).metadata.resourceVersion;
    const w = await openWatch(`${ns('fromn')}?watch=true&resourceVersion=${n}`);
    try {
      await create('fromn', 'c');
      await w.until((e) => e.length >= 1, 'the live ADDED');
      expect(w.events.map(describeEvent)).toEqual(['ADDED c']);
    } finally {
      w.close();
    }
  });

  it('§3.1/§13.13 watches one object by fieldSelector=metadata.name with RV=0 (kubectl get -w NAME)', async () => {
    await create('named', 'x');
    await create('named', 'y');
    const bySelector = await openWatch(`${ns('named')}?watch=true&resourceVersion=0&fieldSelector=metadata.name%3Dx`);
    try {
      await bySelector.until((e) => e.length === 1, 'the initial ADDED of x');
      await patch('named', 'y', { spec: { replicas: 2 } });
      await patch('named', 'x', { spec: { replicas: 2 } });
      await remove('named', 'y');
      await remove('named', 'x');
      await bySelector.until((e) => e.length === 3, 'the DELETED of x');
      expect(bySelector.events.map(describeEvent)).toEqual(['ADDED x', 'MODIFIED x', 'DELETED x']);
      for (const e of bySelector.events) expect(e.object).toMatchObject(WEBSITE);
    } finally {
      bySelector.close();
    }
  });

  it('§3.1/§13.13 a GET with a name is a get even with ?watch=true (requestinfo.go verb get; a CRD serves it with GetResource)', async () => {
    await create('named2', 'x');
    await create('named2', 'y');
    const r = await call(agent, `${ns('named2')}/x?watch=true&fieldSelector=metadata.name%3Dy&timeoutSeconds=1`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ kind: 'Website', metadata: { name: 'x' } });
  });

  it('§3.1 selector transitions: entering is ADDED, staying is MODIFIED, leaving is DELETED with the old object and the change RV', async () => {
    await create('trans', 'a', { labels: { on: 'no' } });
    const w = await openWatch(`${ns('trans')}?watch=true&resourceVersion=${await currentRV()}&labelSelector=on%3Dyes`);
    try {
      const entered = await patch('trans', 'a', { metadata: { labels: { on: 'yes' } } });
      const stayed = await patch('trans', 'a', { spec: { replicas: 5 } });
      const left = await patch('trans', 'a', { metadata: { labels: { on: 'no' } } });
      await patch('trans', 'a', { spec: { replicas: 6 } }); // not selected: no event
      await create('trans', 'z-sentinel', { labels: { on: 'yes' } });
      await w.until((e) => e.length === 4, 'four events');
      expect(w.events.map(describeEvent)).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a', 'ADDED z-sentinel']);
      expect(w.events.slice(0, 3).map((e) => rv(e.object))).toEqual([rv(entered), rv(stayed), rv(left)]);
      // The DELETED of an object leaving the selection is its state before the change.
      expect(w.events[2].object).toMatchObject({ ...WEBSITE, metadata: { name: 'a', labels: { on: 'yes' } }, spec: { replicas: 5 } });
    } finally {
      w.close();
    }
  });

  it('§3.1 ends the stream cleanly at timeoutSeconds', async () => {
    const w = await openWatch(`${ns('timeout')}?watch=true&timeoutSeconds=1`);
    await w.end(10_000); // throws if the body broke off instead of ending
    expect(w.status).toBe(200);
    expect(w.events).toEqual([]);
    expect(w.raw).toBe('');
  });

  it('§3.1 a client disconnect removes the watcher (apiserver_registered_watchers returns to its previous value)', async () => {
    const watchers = async () => {
      const m = await call(agent, `${server.url}/metrics`);
      const found = /^apiserver_registered_watchers (\d+)$/m.exec(m.text);
      expect(found, 'apiserver_registered_watchers in /metrics').not.toBeNull();
      return Number(found?.[1]);
    };
    // Every watch opened earlier in this file is closed or ended by now; wait until the server noticed.
    await eventually(async () => expect(await watchers()).toBe(0));
    const before = await watchers();
    const ws = await Promise.all([1, 2, 3].map(() => openWatch(`${ns('disconnect')}?watch=true&allowWatchBookmarks=true`)));
    await eventually(async () => expect(await watchers()).toBe(before + 3));
    for (const w of ws) w.close();
    await eventually(async () => expect(await watchers()).toBe(before));
  });
});

describe('§3.2 BOOKMARK', () => {
  it('§3.2/§13.8 sends no BOOKMARK without allowWatchBookmarks, even with a 1 s bookmark interval and sendInitialEvents', async () => {
    await create('nobm', 'a');
    const plain = await openWatch(`${ns('nobm')}?watch=true&resourceVersion=${await currentRV()}`);
    const initial = await openWatch(`${ns('nobm')}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`);
    const control = await openWatch(`${ns('nobm')}?watch=true&resourceVersion=${await currentRV()}&allowWatchBookmarks=true`);
    try {
      await initial.until((e) => e.length >= 1, 'the initial ADDED');
      // Once the control watch got a periodic BOOKMARK, a tick has passed while all three were open.
      await control.until((e) => e.some((x) => x.type === 'BOOKMARK'), 'a periodic BOOKMARK on the control watch', 5000);
      await create('nobm', 'z-sentinel');
      for (const w of [plain, initial]) await w.until((e) => e.some((x) => x.object.metadata.name === 'z-sentinel'), 'the sentinel');
      expect(plain.events.map(describeEvent)).toEqual(['ADDED z-sentinel']);
      expect(initial.events.map(describeEvent)).toEqual(['ADDED a', 'ADDED z-sentinel']);
    } finally {
      for (const w of [plain, initial, control]) w.close();
    }
  });

  it.each([
    ['the watched kind (Website)', {}, WEBSITE],
    ['PartialObjectMetadata for the metadata client', { accept: METADATA }, { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' }],
    ['Table for kubectl', { accept: TABLE }, { kind: 'Table', apiVersion: 'meta.k8s.io/v1' }],
  ])('§3.2/§13.8 a periodic BOOKMARK is an empty %s with only metadata.resourceVersion', async (_name, headers, kind) => {
    await create('bm', `obj-${kind.kind.toLowerCase()}`);
    const from = await currentRV();
    const w = await openWatch(`${ns('bm')}?watch=true&allowWatchBookmarks=true&resourceVersion=${from}`, headers);
    try {
      await w.until((e) => e.some((x) => x.type === 'BOOKMARK'), 'a periodic BOOKMARK', 5000);
      const bm = w.events.find((x) => x.type === 'BOOKMARK').object;
      expect(bm).toMatchObject(kind);
      expect(bm.metadata).toEqual({ resourceVersion: expect.stringMatching(/^\d+$/) });
      expect(rv(bm)).toBeGreaterThanOrEqual(from);
      if (kind.kind === 'Table') {
        expect(bm.rows ?? []).toEqual([]);
      } else {
        expect(Object.keys(bm).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
      }
    } finally {
      w.close();
    }
  });

  it('§3.1/§3.2 BOOKMARKs keep the RV order: never behind an event already sent, never ahead of one sent after', async () => {
    const from = await currentRV();
    const w = await openWatch(`${ns('bmorder')}?watch=true&allowWatchBookmarks=true&resourceVersion=${from}`);
    try {
      for (let i = 0; i < 5; i++) await create('bmorder', `o${i}`);
      const lastWrite = await currentRV();
      await w.until((e) => e.filter((x) => x.type === 'ADDED').length === 5 && e.at(-1).type === 'BOOKMARK', 'five ADDED and then a BOOKMARK', 5000);
      let last = from;
      for (const e of w.events) {
        if (e.type === 'BOOKMARK') expect(rv(e.object)).toBeGreaterThanOrEqual(last);
        else expect(rv(e.object)).toBeGreaterThan(last);
        last = rv(e.object);
      }
      // The bookmark after the last write tells the client it has everything up to that write.
      expect(rv(w.events.at(-1).object)).toBeGreaterThanOrEqual(lastWrite);
    } finally {
      w.close();
    }
  });
});

describe('§3.3 sendInitialEvents (watch-list)', () => {
  it('§3.1/§3.3 treats a watch with resourceVersion unset or "0" as a watch-list (SetListOptionsDefaults): with bookmarks allowed, its initial ADDED events end with the annotated BOOKMARK', async () => {
    const a = await create('wl-legacy', 'a');
    const b = await create('wl-legacy', 'b');
    const snapshot = await currentRV();
    for (const query of ['watch=true&allowWatchBookmarks=true', 'watch=true&allowWatchBookmarks=true&resourceVersion=0']) {
      const w = await openWatch(`${ns('wl-legacy')}?${query}`);
      try {
        await w.until((e) => e.some((x) => x.type === 'BOOKMARK' && x.object.metadata.annotations), `the initial-events-end BOOKMARK (${query})`);
        const [x, y, end] = w.events;
        expect([x, y].map(describeEvent).sort(), query).toEqual(['ADDED a', 'ADDED b']);
        expect(Object.fromEntries([x, y].map((e) => [e.object.metadata.name, e.object]))).toEqual({ a, b });
        expect(end.object, query).toEqual({ ...WEBSITE, metadata: { resourceVersion: String(snapshot), annotations: { [END_ANNOTATION]: 'true' } } });
      } finally {
        w.close();
      }
    }
  });

  it('§3.3/§13.1 sends ADDED for every object, then one BOOKMARK annotated k8s.io/initial-events-end at the snapshot RV, then live events', async () => {
    const a = await create('wl', 'a');
    const b = await create('wl', 'b');
    await create('wl-other', 'c');
    const snapshot = await currentRV();
    // Exactly what a client-go reflector sends first (resourceVersion empty, a 5-10 min timeout).
    const w = await openWatch(
      `${ns('wl')}?allowWatchBookmarks=true&resourceVersion=&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=347&watch=true`,
    );
    try {
      await w.until((e) => e.some((x) => x.type === 'BOOKMARK'), 'the initial-events-end BOOKMARK');
      const [x, y, end] = w.events;
      expect([x, y].map(describeEvent).sort()).toEqual(['ADDED a', 'ADDED b']);
      expect(Object.fromEntries([x, y].map((e) => [e.object.metadata.name, e.object]))).toEqual({ a, b });
      expect(end.type).toBe('BOOKMARK');
      expect(end.object).toEqual({ ...WEBSITE, metadata: { resourceVersion: String(snapshot), annotations: { [END_ANNOTATION]: 'true' } } });

      const later = await patch('wl', 'a', { spec: { replicas: 2 } });
      await w.until((e) => e.some((x) => x.type === 'MODIFIED'), 'the live MODIFIED');
      const rest = w.events.slice(3).filter((e) => !isPeriodicBookmark(e));
      expect(rest.map(describeEvent)).toEqual(['MODIFIED a']);
      expect(rv(rest[0].object)).toBe(rv(later));
      expect(rv(later)).toBeGreaterThan(snapshot);
      expect(w.events.filter((e) => e.type === 'BOOKMARK' && e.object.metadata.annotations)).toHaveLength(1);
    } finally {
      w.close();
    }
  });

  it('§3.3 with resourceVersion=N (NotOlderThan) sends the current state, at least as new as N, then the annotated BOOKMARK', async () => {
    const first = await create('wln', 'a');
    await patch('wln', 'a', { spec: { replicas: 7 } });
    await create('wln', 'b');
    const snapshot = await currentRV();
    const w = await openWatch(`${ns('wln')}?${WATCH_LIST}&resourceVersion=${first.metadata.resourceVersion}`);
    try {
      await w.until((e) => e.some((x) => x.type === 'BOOKMARK'), 'the initial-events-end BOOKMARK');
      expect(w.events.slice(0, 2).map(describeEvent).sort()).toEqual(['ADDED a', 'ADDED b']);
      expect(w.events.find((e) => e.object.metadata.name === 'a').object.spec.replicas).toBe(7);
      const end = w.events[2].object;
      expect(end.metadata.annotations).toEqual({ [END_ANNOTATION]: 'true' });
      expect(rv(end)).toBeGreaterThanOrEqual(rv(first));
      expect(rv(end)).toBe(snapshot);
      await remove('wln', 'b');
      await w.until((e) => e.some((x) => x.type === 'DELETED'), 'the live DELETED');
      expect(
        w.events
          .slice(3)
          .filter((e) => !isPeriodicBookmark(e))
          .map(describeEvent),
      ).toEqual(['DELETED b']);
    } finally {
      w.close();
    }
  });

  it('§3.3/§13.1/§13.2 works through the metadata client Accept: PartialObjectMetadata events and BOOKMARK, annotation kept', async () => {
    const a = await create('wlmeta', 'a', { labels: { k: 'v' }, annotations: { note: 'n' } });
    const w = await openWatch(`${ns('wlmeta')}?${WATCH_LIST}`, { accept: METADATA });
    try {
      await w.until((e) => e.some((x) => x.type === 'BOOKMARK'), 'the initial-events-end BOOKMARK');
      expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
      expect(w.events[0].object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: a.metadata });
      expect(w.events[1].object).toEqual({
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: String(await currentRV()), annotations: { [END_ANNOTATION]: 'true' } },
      });
      await patch('wlmeta', 'a', { spec: { replicas: 2 } });
      await remove('wlmeta', 'a');
      await w.until((e) => e.some((x) => x.type === 'DELETED'), 'the live DELETED');
      const live = w.events.slice(2).filter((e) => !isPeriodicBookmark(e));
      expect(live.map(describeEvent)).toEqual(['MODIFIED a', 'DELETED a']);
      for (const e of w.events) {
        expect(Object.keys(e.object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
        expect(e.object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      }
    } finally {
      w.close();
    }
  });

  it.each([
    ['sendInitialEvents=true without resourceVersionMatch', 'watch=true&sendInitialEvents=true'],
    ['sendInitialEvents=false without resourceVersionMatch', 'watch=true&sendInitialEvents=false'],
    ['sendInitialEvents with resourceVersionMatch=Exact', 'watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1'],
    ['resourceVersionMatch on a watch without sendInitialEvents', 'watch=true&resourceVersionMatch=NotOlderThan&resourceVersion=1'],
    ['sendInitialEvents on a list (no watch)', 'sendInitialEvents=true&resourceVersionMatch=NotOlderThan'],
  ])('§3.3 answers 422 Invalid for %s', async (_name, query) => {
    const r = await call(agent, `${ns('wlbad')}?${query}&timeoutSeconds=1`);
    expect(r.status, r.text).toBe(422);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422 });
  });
});

describe('§3.4 errors, Table and PartialObjectMetadata watches', () => {
  it('§3.4 a resourceVersion from the future: after a wait, 200 then one ERROR 504 Timeout with cause ResourceVersionTooLarge, also under the Table Accept', async () => {
    const future = (await currentRV()) + 1000;
    const [json, table] = await Promise.all(
      ([{}, { accept: TABLE }] as Record<string, string>[]).map(async (headers) => {
        const w = await openWatch(`${ns('future')}?watch=true&resourceVersion=${future}`, headers);
        await w.end(15_000);
        return w;
      }),
    );
    for (const w of [json, table]) {
      expect(w.status).toBe(200);
      expect(w.events).toHaveLength(1);
      expect(w.events[0]).toMatchObject({
        type: 'ERROR',
        object: {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'Timeout',
          code: 504,
          details: { causes: [{ reason: 'ResourceVersionTooLarge' }] },
        },
      });
    }
  });

  it('§3.4 Table watch: one row per event, columnDefinitions in the first event only, then null', async () => {
    await create('tbl', 'a');
    await create('tbl', 'b');
    const w = await openWatch(`${ns('tbl')}?watch=true`, { accept: TABLE });
    try {
      expect(w.headers['content-type']).toBe('application/json');
      await w.until((e) => e.length === 2, 'the initial events');
      await patch('tbl', 'a', { spec: { replicas: 2 } });
      await remove('tbl', 'b');
      await w.until((e) => e.length === 4, 'MODIFIED and DELETED');
      expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'MODIFIED', 'DELETED']);
      const columns = w.events[0].object.columnDefinitions;
      expect(Array.isArray(columns) && columns.length > 0).toBe(true);
      expect(columns[0]).toMatchObject({ name: 'Name', type: 'string', format: 'name' });
      for (const [i, e] of w.events.entries()) {
        expect(e.object).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
        expect(e.object.rows).toHaveLength(1);
        expect(e.object.rows[0].cells).toHaveLength(columns.length);
        if (i > 0) {
          expect(e.object).toHaveProperty('columnDefinitions');
          expect(e.object.columnDefinitions).toBeNull();
        }
      }
      expect(w.events.map((e) => e.object.rows[0].cells[0])).toEqual([expect.any(String), expect.any(String), 'a', 'b']);
    } finally {
      w.close();
    }
  });

  it('§3.4/§13.2 PartialObjectMetadata watch: every event object is PartialObjectMetadata carrying the full metadata', async () => {
    const w = await openWatch(`${ns('pom')}?watch=true&resourceVersion=${await currentRV()}`, { accept: METADATA });
    try {
      expect(w.headers['content-type']).toBe('application/json');
      const a = await create('pom', 'a', { labels: { x: 'y' }, annotations: { note: 'n' } });
      const m = await patch('pom', 'a', { spec: { replicas: 3 } });
      await remove('pom', 'a');
      await w.until((e) => e.some((x) => x.type === 'DELETED'), 'the DELETED');
      expect(w.events.map(describeEvent)).toEqual(['ADDED a', 'MODIFIED a', 'DELETED a']);
      expect(w.events[0].object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: a.metadata });
      expect(w.events[1].object.metadata).toEqual(m.metadata);
      expect(w.events[2].object.metadata).toMatchObject({ name: 'a', namespace: 'pom', uid: a.metadata.uid, labels: { x: 'y' } });
      expect(rv(w.events[2].object)).toBeGreaterThan(rv(m));
      for (const e of w.events) expect(Object.keys(e.object).sort()).toEqual(['apiVersion', 'kind', 'metadata']);
    } finally {
      w.close();
    }
  });
});

describe('§13.13 cross-namespace watch and list', () => {
  it('§13.13 /apis/.../websites?watch=true sees every namespace; fieldSelector narrows it', async () => {
    const all = await openWatch(`${server.url}${API}/websites?watch=true&resourceVersion=${await currentRV()}`);
    const one = await openWatch(`${server.url}${API}/websites?watch=true&resourceVersion=${await currentRV()}&fieldSelector=metadata.namespace%3Dxns-b`);
    const named = await openWatch(`${server.url}${API}/websites?watch=true&resourceVersion=${await currentRV()}&fieldSelector=metadata.name%3Dp`);
    try {
      await create('xns-a', 'p');
      await create('xns-b', 'q');
      await create('xns-b', 'p');
      await all.until((e) => e.length === 3, 'three ADDED');
      expect(all.events.map((e) => `${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual(['xns-a/p', 'xns-b/q', 'xns-b/p']);
      await one.until((e) => e.length === 2, 'the two in xns-b');
      expect(one.events.map((e) => `${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual(['xns-b/q', 'xns-b/p']);
      await named.until((e) => e.length === 2, 'the two named p');
      expect(named.events.map((e) => `${e.object.metadata.namespace}/${e.object.metadata.name}`)).toEqual(['xns-a/p', 'xns-b/p']);
      // The list kubectl get -A sends.
      const list = await call(agent, `${server.url}${API}/websites?fieldSelector=metadata.name%3Dp`);
      expect(list.status).toBe(200);
      expect(list.body.items.map((o: any) => `${o.metadata.namespace}/${o.metadata.name}`).sort()).toEqual(['xns-a/p', 'xns-b/p']);
    } finally {
      for (const w of [all, one, named]) w.close();
    }
  });
});

describe('§3.4/§13.9 410 Expired and the RV counter (server with --watch-history-events 5)', () => {
  let small: ServerProcess;
  let sagent: Agent;
  const sns = (n: string) => ns(n, small);
  beforeAll(async () => {
    small = await startServer({ args: ['--watch-history-events', '5'] });
    sagent = adminAgent(small.certDir);
    for (let i = 0; i < 12; i++) await create('fill', `f${i}`, {}, small, sagent);
    // Revision 1 leaves the history once compaction has run (it runs from the write path past the bound).
    await eventually(async () => expect((await call(sagent, `${sns('fill')}?resourceVersion=1&resourceVersionMatch=Exact`)).status).toBe(410));
  });
  afterAll(async () => {
    await sagent?.close();
    await small?.stop();
  });

  it.each([
    ['JSON', {}],
    ['the Table Accept (ERROR untransformed)', { accept: TABLE }],
    ['the metadata client Accept (ERROR untransformed)', { accept: METADATA }],
  ])('§3.4/§13.9 a watch from a too-old RV answers 200, one ERROR 410 Expired Status, then ends (%s)', async (_name, headers) => {
    const w = await openWatch(`${sns('fill')}?watch=true&resourceVersion=1`, headers, sagent);
    await w.end();
    expect(w.status).toBe(200);
    expect(w.headers['content-type']).toBe('application/json');
    expect(w.events).toHaveLength(1);
    expect(w.events[0]).toEqual({
      type: 'ERROR',
      object: {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: expect.stringContaining('too old resource version'),
        reason: 'Expired',
        code: 410,
      },
    });
  });

  it('§3.4/§13.9 sendInitialEvents from a too-old RV still works (NotOlderThan: the current state is newer)', async () => {
    const w = await openWatch(`${sns('fill')}?${WATCH_LIST}&resourceVersion=1`, {}, sagent);
    try {
      await w.until((e) => e.some((x) => x.type === 'BOOKMARK'), 'the initial-events-end BOOKMARK');
      expect(w.events.filter((e) => e.type === 'ADDED')).toHaveLength(12);
      expect(w.events.some((e) => e.type === 'ERROR')).toBe(false);
    } finally {
      w.close();
    }
  });

  it('§13.9 a list with resourceVersionMatch=Exact (or a limit) at a compacted RV answers 410 Expired, not 500 or an empty list', async () => {
    for (const q of ['resourceVersion=1&resourceVersionMatch=Exact', 'resourceVersion=1&limit=2']) {
      const r = await call(sagent, `${sns('fill')}?${q}`);
      expect(r.status, q).toBe(410);
      expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });
    }
    // The current RV is still served exactly.
    const now = await currentRV(small, sagent);
    const ok = await call(sagent, `${sns('fill')}?resourceVersion=${now}&resourceVersionMatch=Exact`);
    expect(ok.status).toBe(200);
    expect(ok.body.items).toHaveLength(12);
  });

  it('§13.9 a list with a continue token whose snapshot was compacted answers 410 Expired, not 500', async () => {
    const first = await call(sagent, `${sns('fill')}?limit=5`);
    expect(first.status).toBe(200);
    const token = first.body.metadata.continue;
    expect(token).toEqual(expect.any(String));
    // The token works while its snapshot is retained.
    const second = await call(sagent, `${sns('fill')}?limit=5&continue=${encodeURIComponent(token)}`);
    expect(second.status).toBe(200);
    expect(second.body.items).toHaveLength(5);
    for (let i = 0; i < 12; i++) await create('churn', `c${i}`, {}, small, sagent);
    // Compaction runs asynchronously from the write path: retry until the token expires, never seeing anything else.
    const statuses: number[] = [];
    const r = await eventually(async () => {
      const x = await call(sagent, `${sns('fill')}?limit=5&continue=${encodeURIComponent(token)}`);
      statuses.push(x.status);
      expect(x.status, x.text).toBe(410);
      return x;
    });
    expect(statuses.filter((s) => s !== 200 && s !== 410)).toEqual([]);
    expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 });
  });

  it('§3.1/§13.9 shutdown ends open watches cleanly; after a restart the RV counter goes on and an old client RV still resumes', async () => {
    const last = await create('restart', 'before', {}, small, sagent);
    const w = await openWatch(`${sns('restart')}?watch=true&resourceVersion=${last.metadata.resourceVersion}`, {}, sagent);
    await small.stop();
    await w.end(10_000);
    expect(w.events).toEqual([]);

    small = await startServer({ dataDir: small.dataDir, certDir: small.certDir, args: ['--watch-history-events', '5'] });
    expect(await currentRV(small, sagent)).toBe(rv(last));
    const resumed = await openWatch(`${sns('restart')}?watch=true&resourceVersion=${last.metadata.resourceVersion}`, {}, sagent);
    try {
      const after = await create('restart', 'after', {}, small, sagent);
      expect(rv(after)).toBeGreaterThan(rv(last));
      await resumed.until((e) => e.length === 1, 'the first write after the restart');
      expect(resumed.events.map(describeEvent)).toEqual(['ADDED after']);
      expect(rv(resumed.events[0].object)).toBe(rv(after));
    } finally {
      resumed.close();
    }
  });
});
