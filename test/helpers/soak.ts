/**
 * A soak of one server (issue 24, part 7): many clients at once, as a cluster's would be, for a bounded time:
 * - listers walk a collection in pages (`limit` + `continue`), one namespace or all, with and without a label
 *   selector, as JSON, as a Table and as metadata only (what `kubectl get` and informers send);
 * - watchers watch from an old resourceVersion (a replay of the history) until their timeoutSeconds ends them;
 * - getters read single objects; writers create, patch and delete.
 * Every answer is counted by its code, and every 5xx is kept with its request, for the test to show; /readyz is read
 * about every 250 ms while the clients run.
 */
import type { Agent } from 'undici';
import { call } from './server-process.js';

const GROUP = '/apis/extensions.example.com/v1';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';
const METADATA = 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json';

/** SoakOptions size the soak. */
export interface SoakOptions {
  url: string;
  agent: Agent;
  /** Namespaces the objects are spread over (created by seed). */
  namespaces: string[];
  seconds: number;
  listers?: number;
  watchers?: number;
  getters?: number;
  writers?: number;
  /** Page size of the listers. */
  limit?: number;
  /** Called about every 250 ms while the soak runs, before /readyz is read (to sample the server's metrics). */
  onTick?: () => Promise<void>;
}

/** SoakResult is what the clients saw. */
export interface SoakResult {
  codes: Record<string, number>;
  /** Every answer of 500 or more, with its request. */
  failures: { method: string; path: string; status: number; body: string }[];
  pages: number;
  watchEvents: number;
  writes: number;
  /** /readyz's code at every tick. */
  readyz: number[];
}

/** seedObjects creates n Websites spread over the namespaces, labelled bucket b0..b3. */
export async function seedObjects(url: string, agent: Agent, namespaces: string[], n: number): Promise<string> {
  let rv = '0';
  for (let i = 0; i < n; i += 25) {
    const made = await Promise.all(
      Array.from({ length: Math.min(25, n - i) }, async (_, j) => {
        const k = i + j;
        const ns = namespaces[k % namespaces.length] as string;
        const res = await call(agent, `${url}${GROUP}/namespaces/${ns}/websites`, 'POST', websiteV1(`seed-${k}`, k));
        if (res.status !== 201) throw new Error(`seeding answered ${res.status}: ${res.text}`);
        return (res.body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion ?? '0';
      }),
    );
    if (i === 0) rv = made[0] ?? '0';
  }
  return rv;
}

function websiteV1(name: string, k: number) {
  return {
    apiVersion: 'extensions.example.com/v1',
    kind: 'Website',
    metadata: { name, labels: { app: 'soak', bucket: `b${k % 4}` } },
    spec: { replicas: 1, git: { repository: 'https://github.com/luksa/kubia-website-example.git' } },
  };
}

/** runSoak drives the clients until `seconds` have passed and every client has finished its last request. */
export async function runSoak(o: SoakOptions, oldRevision: string): Promise<SoakResult> {
  const result: SoakResult = { codes: {}, failures: [], pages: 0, watchEvents: 0, writes: 0, readyz: [] };
  const end = Date.now() + o.seconds * 1000;
  const limit = o.limit ?? 7;
  const pick = <T>(a: readonly T[]): T => a[Math.floor(Math.random() * a.length)] as T;

  const send = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, headers: Record<string, string> = {}, body?: unknown) => {
    const res = await call(
      o.agent,
      `${o.url}${path}`,
      method,
      body,
      method === 'PATCH' ? { 'content-type': 'application/merge-patch+json', ...headers } : headers,
    );
    result.codes[res.status] = (result.codes[res.status] ?? 0) + 1;
    if (res.status >= 500) result.failures.push({ method, path, status: res.status, body: res.text.slice(0, 300) });
    return res;
  };

  const lister = async (i: number) => {
    for (let round = 0; Date.now() < end; round++) {
      const all = (i + round) % 3 === 0;
      const base = all ? `${GROUP}/websites` : `${GROUP}/namespaces/${pick(o.namespaces)}/websites`;
      const selector = round % 2 ? `&labelSelector=${encodeURIComponent(`bucket=${pick(['b0', 'b1', 'b2', 'b3'])}`)}` : '';
      const accept = [{ accept: 'application/json' }, { accept: TABLE }, { accept: METADATA }][(i + round) % 3] as Record<string, string>;
      let cont = '';
      do {
        const r = await send('GET', `${base}?limit=${limit}${selector}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`, accept);
        result.pages++;
        // 410: the continue token's revision was compacted meanwhile; a client starts over, as informers do.
        if (r.status !== 200) break;
        cont = (r.body as { metadata?: { continue?: string } }).metadata?.continue ?? '';
      } while (cont && Date.now() < end);
    }
  };

  const watcher = async () => {
    while (Date.now() < end) {
      const ns = pick(o.namespaces);
      // A watch ended by its timeoutSeconds: the whole stream, one event a line (call's text).
      const { text } = await send('GET', `${GROUP}/namespaces/${ns}/websites?watch=1&resourceVersion=${oldRevision}&timeoutSeconds=1&allowWatchBookmarks=true`);
      for (const line of text.split('\n')) {
        if (!line) continue;
        const e = JSON.parse(line) as { type: string; object?: { code?: number } };
        if (e.type === 'ERROR' && (e.object?.code ?? 0) >= 500)
          result.failures.push({ method: 'WATCH', path: ns, status: e.object?.code ?? 0, body: line.slice(0, 300) });
        result.watchEvents++;
      }
    }
  };

  const getter = async () => {
    while (Date.now() < end) {
      const k = Math.floor(Math.random() * 400);
      await send('GET', `${GROUP}/namespaces/${o.namespaces[k % o.namespaces.length]}/websites/seed-${k}`);
    }
  };

  const writer = async (w: number) => {
    for (let n = 0; Date.now() < end; n++) {
      const ns = pick(o.namespaces);
      const name = `soak-${w}-${n % 40}`;
      const path = `${GROUP}/namespaces/${ns}/websites`;
      const step = n % 3;
      if (step === 0) await send('POST', path, {}, websiteV1(name, n));
      else if (step === 1) await send('PATCH', `${path}/${name}`, {}, { metadata: { labels: { touched: String(n) } } });
      else await send('DELETE', `${path}/${name}`);
      result.writes++;
    }
  };

  const ticker = async () => {
    while (Date.now() < end) {
      await o.onTick?.();
      result.readyz.push((await call(o.agent, `${o.url}/readyz`)).status);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  await Promise.all([
    ...Array.from({ length: o.listers ?? 6 }, (_, i) => lister(i)),
    ...Array.from({ length: o.watchers ?? 2 }, () => watcher()),
    ...Array.from({ length: o.getters ?? 2 }, () => getter()),
    ...Array.from({ length: o.writers ?? 3 }, (_, w) => writer(w)),
    ticker(),
  ]);
  return result;
}

/** metric reads one sample of a Prometheus text exposition (`name{labels}`), or undefined. */
export function metric(text: string, sample: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${sample} `)) return Number(line.slice(sample.length + 1));
  }
  return undefined;
}
