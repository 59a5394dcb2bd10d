/**
 * A minimal stand-in for kube-apiserver over plain HTTP on 127.0.0.1, for unit tests of the code that follows cluster
 * objects with informers and calls reviews (src/cluster/*.test.ts): one collection per path with list, watch (events
 * pushed by the test) and get, POST answers chosen by the test, and a record of every request. Just enough of the
 * protocol for @kubernetes/client-node's ListWatch and API clients.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/** Collection is the state of one list path, e.g. /api/v1/namespaces. */
export interface Collection {
  /** listed objects, by name; returned by list and get. */
  items: Map<string, KubeObject>;
  /** objects only a get finds (not yet seen by list/watch: created a moment ago). */
  getOnly: Map<string, KubeObject>;
  listKind: string;
}

export interface FakeKube {
  kubeconfig: KubeConfig;
  /** requests so far as `METHOD path?query`. */
  requests: string[];
  collection(path: string, listKind: string): Collection;
  /** emit sends a watch event to every open watch of `path` and applies it to the listed items. */
  emit(path: string, type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject): void;
  /** onPost answers POSTs to `path` (e.g. TokenReview, SubjectAccessReview) with what `answer` returns for the body. */
  onPost(path: string, answer: (body: unknown) => { code: number; body: unknown }): void;
  /** posted lists the parsed bodies POSTed to `path`. */
  posted(path: string): unknown[];
  /** openWatches counts the watches open on `path`. */
  openWatches(path: string): number;
  close(): Promise<void>;
}

/** startFakeKube listens on a free loopback port. */
export async function startFakeKube(): Promise<FakeKube> {
  const collections = new Map<string, Collection>();
  const watches = new Map<string, Set<ServerResponse>>();
  const requests: string[] = [];
  const postHandlers = new Map<string, (body: unknown) => { code: number; body: unknown }>();
  const postBodies = new Map<string, unknown[]>();
  let rv = 100;

  const json = (res: ServerResponse, code: number, body: unknown) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const notFound = (res: ServerResponse, kind: string, name: string) =>
    json(res, 404, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `${kind} "${name}" not found`,
      reason: 'NotFound',
      details: { name, kind },
      code: 404,
    });

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '/', 'http://x');
    const post = req.method === 'POST' ? postHandlers.get(url.pathname) : undefined;
    if (post) {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (raw += c));
      req.on('end', () => {
        const body: unknown = JSON.parse(raw);
        postBodies.get(url.pathname)?.push(body);
        const answer = post(body);
        json(res, answer.code, answer.body);
      });
      return;
    }
    const coll = collections.get(url.pathname);
    if (coll) {
      if (url.searchParams.get('watch') === 'true') {
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        res.flushHeaders();
        let set = watches.get(url.pathname);
        if (!set) watches.set(url.pathname, (set = new Set()));
        set.add(res);
        res.on('close', () => set.delete(res));
        return;
      }
      return json(res, 200, { apiVersion: 'v1', kind: coll.listKind, metadata: { resourceVersion: String(rv) }, items: [...coll.items.values()] });
    }
    const slash = url.pathname.lastIndexOf('/');
    const parent = collections.get(url.pathname.slice(0, slash));
    if (parent) {
      const name = decodeURIComponent(url.pathname.slice(slash + 1));
      const obj = parent.items.get(name) ?? parent.getOnly.get(name);
      return obj ? json(res, 200, obj) : notFound(res, url.pathname.slice(0, slash).split('/').pop() ?? '', name);
    }
    json(res, 404, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'the server could not find the requested resource',
      reason: 'NotFound',
      code: 404,
    });
  };

  const server: Server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = new KubeConfig();
  kubeconfig.loadFromOptions({
    clusters: [{ name: 'fake', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'fake' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
    currentContext: 'fake',
  });

  return {
    kubeconfig,
    requests,
    collection(path, listKind) {
      let c = collections.get(path);
      if (!c) collections.set(path, (c = { items: new Map(), getOnly: new Map(), listKind }));
      return c;
    },
    emit(path, type, obj) {
      const stamped = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
      const c = collections.get(path);
      if (c && type === 'DELETED') c.items.delete(obj.metadata.name);
      else if (c) c.items.set(obj.metadata.name, stamped);
      for (const res of watches.get(path) ?? []) res.write(`${JSON.stringify({ type, object: stamped })}\n`);
    },
    onPost(path, answer) {
      postHandlers.set(path, answer);
      postBodies.set(path, []);
    },
    posted: (path) => postBodies.get(path) ?? [],
    openWatches: (path) => watches.get(path)?.size ?? 0,
    async close() {
      for (const set of watches.values()) for (const res of set) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** eventually polls `cond` until it holds or `ms` pass. */
export async function eventually(cond: () => boolean, ms = 3000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
