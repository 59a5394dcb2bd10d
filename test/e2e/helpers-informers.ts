/**
 * @module e2e/helpers-informers
 * Helpers for informers.test.ts: runs the client-go informer-probe (test/e2e/go/probe) and judges the JSON lines it
 * prints, so assertions are about what a real reflector + informer delivered to its event handlers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';

/** ProbeEvent is one JSON line of informer-probe. */
export interface ProbeEvent {
  type: string;
  ts: number;
  namespace?: string;
  name?: string;
  uid?: string;
  resourceVersion?: string;
  goType?: string;
  error?: string;
  finalStateUnknown?: boolean;
}

/** Probe is one running informer-probe process and everything it printed so far. */
export class Probe {
  readonly events: ProbeEvent[] = [];
  readonly proc: ChildProcess;
  stderr = '';
  private buf = '';

  constructor(
    readonly label: string,
    bin: string,
    args: string[],
    env: NodeJS.ProcessEnv,
  ) {
    this.proc = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stdout?.on('data', (b: Buffer) => {
      this.buf += b.toString();
      const parts = this.buf.split('\n');
      this.buf = parts.pop() ?? '';
      for (const p of parts) {
        if (!p.trim()) continue;
        try {
          this.events.push(JSON.parse(p) as ProbeEvent);
        } catch {
          // A line that is not JSON is a probe bug; keep it visible in the failure output.
          this.stderr += `unparsable stdout line: ${p}\n`;
        }
      }
    });
    this.proc.stderr?.on('data', (b: Buffer) => (this.stderr += b.toString()));
  }

  get exited(): boolean {
    return this.proc.exitCode !== null || this.proc.signalCode !== null;
  }

  /** until polls the event list; a probe that exits fails at once instead of after the timeout. */
  async until(what: string, pred: (events: ProbeEvent[]) => boolean, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (pred(this.events)) return;
      if (this.exited) throw new Error(`${this.label}: probe exited (${this.proc.exitCode ?? this.proc.signalCode}) while waiting for ${what}\n${this.stderr}`);
      if (Date.now() > deadline)
        throw new Error(
          `${this.label}: timed out after ${timeoutMs} ms waiting for ${what}; last events: ${JSON.stringify(this.events.slice(-5))}\nstderr: ${this.stderr.slice(-2000)}`,
        );
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** stop ends the probe with SIGTERM (it shuts its informer down) and waits for the exit. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(t);
  }

  watchErrors(from = 0): string[] {
    return this.events
      .slice(from)
      .filter((e) => e.type === 'WATCH_ERROR')
      .map((e) => e.error ?? '');
  }
}

/** rvOf orders resourceVersions; ours are decimal integers, which the test also checks (BigInt throws otherwise). */
export const rvOf = (e: ProbeEvent): bigint => BigInt(e.resourceVersion ?? '');

/** Judged is what a probe's handlers got for one namespace in a window of its events. */
export interface Judged {
  /** names with OnAdd */
  added: string[];
  /** names with OnUpdate carrying a newer resourceVersion (a real change) */
  modified: string[];
  /** names with OnDelete */
  deleted: string[];
  /** names with OnUpdate at an unchanged resourceVersion: what a relist (Replace) delivers for every known object */
  echoes: string[];
  /** anything an informer must never see: duplicate adds, older versions, uid changes, wrong Go types */
  problems: string[];
  /** highest resourceVersion the probe saw before the window (any namespace) */
  maxRvBefore: bigint;
  /** lowest resourceVersion of a real change inside the window */
  minRvInside: bigint | undefined;
}

/**
 * judge replays a probe's events before `from` to learn which objects its cache holds, then classifies each
 * event of `namespace` in [from, to). The window's events are expected to be changes that happened while the
 * informer was connected, so OnDelete with DeletedFinalStateUnknown counts as a problem (a missed delete).
 */
export function judge(events: ProbeEvent[], namespace: string, goType: string, from: number, to = events.length): Judged {
  const known = new Map<string, { uid: string; rv: bigint; gone: boolean }>();
  let maxRvBefore = 0n;
  const objectEvent = (e: ProbeEvent) => e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED';
  for (const e of events.slice(0, from)) {
    if (!objectEvent(e)) continue;
    const rv = rvOf(e);
    if (rv > maxRvBefore) maxRvBefore = rv;
    if (e.namespace === namespace && e.name) known.set(e.name, { uid: e.uid ?? '', rv, gone: e.type === 'DELETED' });
  }
  const j: Judged = { added: [], modified: [], deleted: [], echoes: [], problems: [], maxRvBefore, minRvInside: undefined };
  const real = (rv: bigint) => {
    if (j.minRvInside === undefined || rv < j.minRvInside) j.minRvInside = rv;
  };
  for (const e of events.slice(from, to)) {
    if (!objectEvent(e) || e.namespace !== namespace || !e.name) continue;
    const at = `${e.type} ${e.name} rv=${e.resourceVersion}`;
    if (e.goType !== goType) j.problems.push(`${at}: goType ${e.goType}, want ${goType}`);
    const rv = rvOf(e);
    const k = known.get(e.name);
    if (k && !k.gone && k.uid !== e.uid) j.problems.push(`${at}: uid ${e.uid}, cached ${k.uid}`);
    switch (e.type) {
      case 'ADDED':
        if (k && !k.gone) j.problems.push(`${at}: ADDED again (cached at rv=${k.rv})`);
        j.added.push(e.name);
        real(rv);
        break;
      case 'MODIFIED':
        if (!k || k.gone) j.problems.push(`${at}: MODIFIED for an object not in the cache`);
        else if (rv === k.rv) {
          j.echoes.push(e.name);
          break;
        } else if (rv < k.rv) j.problems.push(`${at}: older than the cached rv=${k.rv}`);
        j.modified.push(e.name);
        real(rv);
        break;
      case 'DELETED':
        if (e.finalStateUnknown) j.problems.push(`${at}: DeletedFinalStateUnknown (the delete event itself was missed)`);
        if (!k || k.gone) j.problems.push(`${at}: DELETED for an object not in the cache`);
        else if (rv <= k.rv) j.problems.push(`${at}: not newer than the cached rv=${k.rv}`);
        j.deleted.push(e.name);
        real(rv);
        break;
    }
    known.set(e.name, { uid: e.uid ?? '', rv, gone: e.type === 'DELETED' });
  }
  return j;
}

/** count tallies names (a name twice in `added` shows as 2). */
export function count(names: string[]): Record<string, number> {
  const m: Record<string, number> = {};
  for (const n of names) m[n] = (m[n] ?? 0) + 1;
  return m;
}

/** once is the tally `count` gives when every name occurs exactly once. */
export const once = (names: string[]): Record<string, number> => Object.fromEntries(names.map((n) => [n, 1]));

/** Recorded is one request a recording proxy forwarded, as the client sent it. */
export interface Recorded {
  method: string;
  url: string;
  status?: number;
  /** a BOOKMARK carrying the k8s.io/initial-events-end annotation came back in the response body */
  initialEventsEnd: boolean;
  /** why forwarding failed, if it did */
  error?: string;
}

/** RecordingProxy is a plain-HTTP reverse proxy on loopback in front of kube-apiserver. */
export interface RecordingProxy {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

/**
 * recordingProxy forwards everything to `target` (kube-apiserver, TLS verified with `caFile`) and records what the
 * client asked for. It lets a test see the exact requests a client-go reflector makes (LIST vs watch-list) without
 * relying on any logging of the servers behind. Compression is turned off so the watch body can be read. The proxy
 * adds the bearer token itself: client-go sends no credentials to a plain-HTTP server.
 */
export async function recordingProxy(target: string, caFile: string, token: string): Promise<RecordingProxy> {
  const t = new URL(target);
  const ca = readFileSync(caFile);
  const requests: Recorded[] = [];
  const server = createHttpServer((req, res) => {
    const rec: Recorded = { method: req.method ?? '', url: req.url ?? '', initialEventsEnd: false };
    requests.push(rec);
    const headers = { ...req.headers, host: t.host, 'accept-encoding': 'identity', authorization: `Bearer ${token}` };
    const up = httpsRequest({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers, ca }, (ur) => {
      rec.status = ur.statusCode;
      const h = { ...ur.headers };
      delete h['connection'];
      delete h['keep-alive'];
      res.writeHead(ur.statusCode ?? 502, h);
      // Only the start of the body matters (the bookmark follows the initial objects); bound the buffer.
      let seen = '';
      ur.on('data', (b: Buffer) => {
        if (!rec.initialEventsEnd && seen.length < 4 * 1024 * 1024) {
          seen += b.toString();
          rec.initialEventsEnd = /"type":"BOOKMARK"/.test(seen) && /"k8s\.io\/initial-events-end":"true"/.test(seen);
        }
        res.write(b);
      });
      ur.on('end', () => res.end());
      // An upstream stream that breaks must break for the client too, not look like a clean end.
      ur.on('aborted', () => res.destroy());
      ur.on('error', () => res.destroy());
    });
    up.on('error', (e) => {
      rec.error = e.message;
      res.destroy();
    });
    // The client went away (the response closed before we finished it): stop the upstream stream too.
    // (Not req 'close': that fires as soon as the request body has been read.)
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const a = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${a.port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
