/**
 * @module endpoints/watch
 * Serving `?watch=true` (handlers/watch.go, storage/cacher): headers flushed at once, one `{"type","object"}` JSON
 * line per event, initial ADDED events for RV unset/"0" or sendInitialEvents, the `k8s.io/initial-events-end`
 * BOOKMARK, periodic BOOKMARKs, selector transitions, ERROR events for a too-old (410) or future (504)
 * resourceVersion, and a clean end on timeoutSeconds, client disconnect or shutdown.
 *
 * ## Guarantees
 * - Each event is serialized once per representation and shared by every watcher (watch-encoding).
 * - Memory per watcher is bounded: while the client is not reading, at most `maxBufferedEvents` lines wait for it;
 *   one more and it gets an ERROR 410 Expired and the stream ends, so it re-lists. Initial events and history
 *   replay are paced by the client's reading instead, so a slow but live client is never cut off by them.
 * - BOOKMARKs are sent only with allowWatchBookmarks and carry a revision the client has every change up to.
 * - The transport is a WatchSink: a chunked HTTP response here, a WebSocket in watch-websocket.ts; both get the same
 *   lines in the same order, and the same backpressure and bounds.
 */
import type { ServerResponse } from 'node:http';
import { expired, StatusError, tooLargeResourceVersion } from '../apis/meta/errors.js';
import { INITIAL_EVENTS_END_ANNOTATION, type KubeObject } from '../apis/meta/types.js';
import type { ResourceStore, Selectors } from '../registry/store.js';
import type { IncludeObject } from '../registry/table.js';
import type { ChangeEvent, WatchHandle } from '../storage/interface.js';
import { waitForRevision } from './list-page.js';
import type { Target } from './negotiation.js';
import type { ListOptions } from './query.js';
import { bookmarkObject, transformObject } from './transform.js';
import { sharedLine, watchLine } from './watch-encoding.js';
import { acceptsGzip, GzipMembers } from './content-encoding.js';

// The server speaks HTTP/1.1 (the aggregator and every client accept it), so the raw response is an http one.
type RawResponse = ServerResponse;

/** WatchSettings tunes every watch of a server. */
export interface WatchSettings {
  /** How often a BOOKMARK goes to watchers that allow them (kube-apiserver: about once a minute). */
  bookmarkIntervalMs?: number;
  /** Lines that may wait for a client that is not reading before it is cut off with 410. */
  maxBufferedEvents?: number;
}

/** WatchCounters are the totals the metrics endpoint exports. */
export interface WatchCounters {
  /** Events written to clients (BOOKMARKs and ERRORs included). */
  sent: number;
  /** Events serialized: with sharing, one per change and representation, however many watchers there are. */
  encoded: number;
  /** Events thrown away because a client fell too far behind. */
  dropped: number;
  /** Watches ended by the server because their client fell too far behind. */
  terminated: number;
}

/** WatchRegistry tracks open watch streams: shutdown ends them, one timer sends their periodic BOOKMARKs. */
export class WatchRegistry {
  readonly counters: WatchCounters = { sent: 0, encoded: 0, dropped: 0, terminated: 0 };
  readonly bookmarkIntervalMs: number;
  readonly maxBufferedEvents: number;
  readonly #open = new Set<WatchStream>();
  readonly #refused = new Map<string, StatusError>();
  #ticker: NodeJS.Timeout | undefined;

  constructor(s: WatchSettings = {}) {
    this.bookmarkIntervalMs = s.bookmarkIntervalMs ?? 60_000;
    this.maxBufferedEvents = s.maxBufferedEvents ?? 1000;
  }

  get size(): number {
    return this.#open.size;
  }

  add(w: WatchStream): void {
    this.#open.add(w);
    if (!this.#ticker && this.bookmarkIntervalMs > 0) {
      this.#ticker = setInterval(() => {
        for (const s of this.#open) s.periodicBookmark();
      }, this.bookmarkIntervalMs);
      this.#ticker.unref();
    }
  }

  remove(w: WatchStream): void {
    this.#open.delete(w);
    if (this.#open.size === 0 && this.#ticker) {
      clearInterval(this.#ticker);
      this.#ticker = undefined;
    }
  }

  closeAll(): void {
    for (const w of [...this.#open]) w.end();
  }

  /**
   * closeResource ends every open watch of one resource (`<group>/<plural>`, any version): its objects are now served
   * elsewhere or anew (a CRD moved here or back), so its clients must come back and meet the new history. With
   * `error`, each watch ends with it as an ERROR event instead of cleanly (a client told 410 re-lists, where one whose
   * stream just ended would resume from its resourceVersion), and so does every new watch of the resource until
   * reopenResource: the resource is served elsewhere now.
   */
  closeResource(resource: string, error?: StatusError): number {
    if (error) this.#refused.set(resource, error);
    const ending = [...this.#open].filter((w) => w.resource === resource);
    for (const w of ending) {
      if (error) w.fail(error);
      else w.end();
    }
    return ending.length;
  }

  /** reopenResource lets watches of a resource closeResource refused begin again. */
  reopenResource(resource: string): void {
    this.#refused.delete(resource);
  }

  /** refusal is the error a new watch of `resource` ends with at once, if closeResource refused them. */
  refusal(resource: string): StatusError | undefined {
    return this.#refused.get(resource);
  }

  /** closeSome ends up to n open watches, oldest first (a shutdown paces them); returns how many stay open. */
  closeSome(n: number): number {
    for (const w of [...this.#open].slice(0, n)) w.end();
    return this.#open.size;
  }
}

/** SinkEvents are what a WatchSink reports to its stream. */
export interface SinkEvents {
  /** drain: the transport took everything it was given (after a send returned false). */
  drain(): void;
  /** closed: the client is gone or the transport was closed. */
  closed(): void;
}

/** WatchSink carries one watch's encoded events to its client. */
export interface WatchSink {
  /** send writes one event (a `{"type","object"}` line); false when the transport is full: wait for drain. */
  send(line: string | Buffer): boolean;
  /** closed tells whether the client is gone or close() ran. */
  readonly closed: boolean;
  /** close ends the stream from the server's side and detaches from the transport. */
  close(): void;
}

/** OpenSink creates the sink of a stream, wired to that stream's events. */
export type OpenSink = (events: SinkEvents) => WatchSink;

// A chunked HTTP/1.1 response frames each write as `<hex length>\r\n<data>\r\n`. Node's response does it with
// four corked socket writes per write; written straight to the socket, one buffer built once per shared line
// serves every watcher (a thousand watchers of a change cost one framing, and one socket write each).
const frames = new WeakMap<Buffer, Buffer>();
function framed(line: string | Buffer): Buffer {
  const data = typeof line === 'string' ? Buffer.from(line) : line;
  let f = frames.get(data);
  if (!f) {
    f = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, CRLF]);
    if (typeof line !== 'string') frames.set(data, f);
  }
  return f;
}
const CRLF = Buffer.from('\r\n');

/**
 * httpSink starts the chunked 200 response of an HTTP watch (handlers/watch.go HandleHTTP); with `gzip` (a
 * watch-list whose client accepts it) the stream is gzip members, one per batch of events (content-encoding.ts).
 */
export function httpSink(res: RawResponse, gzip = false): OpenSink {
  return (events) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'cache-control': 'no-cache, private' };
    if (gzip) Object.assign(headers, { 'content-encoding': 'gzip', vary: 'Accept-Encoding' });
    res.writeHead(200, headers);
    // Flush headers now: a proxied Watch() blocks until it sees them (kubernetes/kubernetes#75837).
    res.flushHeaders();
    // The socket, when the response is chunked and its headers are out: lines then go straight to it. Written
    // straight to the socket, the response never sees backpressure: the socket tells.
    const socket = res.headersSent && res.chunkedEncoding ? res.socket : null;
    const write = (data: string | Buffer) => (socket ? socket.write(framed(data)) : res.write(data));
    const members = gzip
      ? new GzipMembers(
          (m) => !res.destroyed && !res.writableEnded && write(m),
          () => events.drain(),
        )
      : undefined;
    const onDrain = () => {
      members?.drained();
      events.drain();
    };
    const drains = socket ?? res;
    drains.on('drain', onDrain);
    res.on('close', () => {
      members?.discard();
      events.closed();
    });
    return {
      send: (line) => (members ? members.send(line) : write(line)),
      get closed() {
        return res.destroyed || res.writableEnded;
      },
      close() {
        drains.off('drain', onDrain);
        if (res.writableEnded || res.destroyed) return;
        // The last members are still being compressed: the response ends once they are written.
        if (members) members.end(() => !res.writableEnded && !res.destroyed && res.end());
        else res.end();
      },
    };
  };
}

/** WatchStream is one client's stream: a bounded queue in front of its sink. */
class WatchStream {
  readonly #sink: WatchSink;
  readonly #registry: WatchRegistry;
  readonly #queue: (string | Buffer)[] = [];
  #blocked = false;
  #readyWaiters: (() => void)[] = [];
  #ended = false;
  #onEnd: (() => void)[] = [];
  /** Set once the stream is live; a periodic BOOKMARK needs it. */
  bookmark: (() => void) | undefined;

  /** The watched resource, `<group>/<plural>` (WatchRegistry.closeResource). */
  readonly resource: string;

  constructor(open: OpenSink, registry: WatchRegistry, resource: string) {
    this.resource = resource;
    this.#registry = registry;
    registry.add(this);
    // A sink reports drain and closed from its transport's events, never from inside open().
    this.#sink = open({ drain: () => this.#drain(), closed: () => this.end() });
  }

  get ended(): boolean {
    return this.#ended || this.#sink.closed;
  }

  /** onEnd runs f when the stream ends (at once if it already has, so a late registration cannot leak). */
  onEnd(f: () => void): void {
    if (this.#ended) f();
    else this.#onEnd.push(f);
  }

  /** write sends a line now, or queues it while the sink is full; too many queued lines end the stream with 410. */
  write(line: string | Buffer): void {
    if (this.ended) return;
    if (!this.#blocked) {
      this.#send(line);
      return;
    }
    this.#queue.push(line);
    if (this.#queue.length > this.#registry.maxBufferedEvents) this.#overflow();
  }

  /** ready resolves when nothing waits for the client (used to pace initial events and history replay). */
  ready(): Promise<void> {
    if (!this.#blocked || this.ended) return Promise.resolve();
    return new Promise((r) => this.#readyWaiters.push(r));
  }

  /** fail sends one ERROR event carrying the Status and ends the stream. */
  fail(e: StatusError): void {
    if (this.ended) return;
    this.#send(watchLine('ERROR', e.status));
    this.end();
  }

  periodicBookmark(): void {
    if (!this.ended) this.bookmark?.();
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#registry.remove(this);
    for (const f of this.#onEnd.splice(0)) f();
    for (const r of this.#readyWaiters.splice(0)) r();
    this.#queue.length = 0;
    this.#sink.close();
  }

  #send(line: string | Buffer): void {
    this.#registry.counters.sent++;
    if (!this.#sink.send(line)) this.#blocked = true;
  }

  #drain(): void {
    this.#blocked = false;
    while (this.#queue.length && !this.#blocked) this.#send(this.#queue.shift() as string | Buffer);
    if (!this.#blocked) for (const r of this.#readyWaiters.splice(0)) r();
  }

  #overflow(): void {
    const dropped = this.#queue.length;
    this.#registry.counters.dropped += dropped;
    this.#registry.counters.terminated++;
    this.#queue.length = 0;
    // The client reads what the socket already holds, then this ERROR, and re-lists (reason Expired).
    this.fail(
      expired(`the watch fell too far behind: more than ${this.#registry.maxBufferedEvents} events were waiting for the client; ${dropped} were dropped`),
    );
  }
}

/** WatchRequest is everything serveWatch needs. */
export interface WatchRequest {
  store: ResourceStore;
  namespace: string | undefined;
  opts: ListOptions;
  target: Target;
  includeObject: IncludeObject;
  registry: WatchRegistry;
}

// kube-apiserver picks a random timeout in [minRequestTimeout, 2×minRequestTimeout) (30–60 min) when none is given.
const defaultTimeoutSeconds = () => 1800 + Math.floor(Math.random() * 1800);

/**
 * serveWatch streams events to an already hijacked raw response; it resolves once the stream is live or ended. A
 * watch-list (sendInitialEvents=true) is gzipped when its client accepts gzip, a plain watch never (kube 1.37).
 */
export function serveWatch(res: RawResponse, w: WatchRequest): Promise<void> {
  const gzip = w.opts.sendInitialEvents === true && acceptsGzip(res.req?.headers['accept-encoding']);
  return streamWatch(httpSink(res, gzip), w);
}

/** streamWatch streams events to the sink `open` creates; it resolves once the stream is live or ended. */
export async function streamWatch(open: OpenSink, w: WatchRequest): Promise<void> {
  const { store, opts, target } = w;
  const def = store.def;
  const resource = `${def.group}/${def.plural}`;
  const stream = new WatchStream(open, w.registry, resource);
  // As kube's cacher reports what it finds once the watch is authorized and parsed: an ERROR event (newErrWatcher).
  const refused = w.registry.refusal(resource);
  if (refused) {
    stream.fail(refused);
    return;
  }
  const timer = setTimeout(() => stream.end(), (opts.timeoutSeconds ?? defaultTimeoutSeconds()) * 1000);
  stream.onEnd(() => clearTimeout(timer));

  // Table watches: the first event carries the column definitions, later ones `null` (watchEmbeddedEncoder).
  let firstTable = target.kind === 'Table';
  // The representation part of the shared-encoding key is the same for every event of this stream.
  const representation = `${target.kind}|${'version' in target ? target.version : ''}|${w.includeObject}`;
  const sendObject = (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KubeObject, source?: { event: ChangeEvent; which: string }) => {
    const noHeaders = target.kind === 'Table' && !firstTable;
    const variant = (which: string) => `${type}|${which}|${representation}|${noHeaders}`;
    const encode = () => {
      w.registry.counters.encoded++;
      return watchLine(type, transformObject(def, obj, target, w.includeObject, noHeaders));
    };
    stream.write(source ? sharedLine(source.event, variant(source.which), encode) : encode());
    firstTable = false;
  };
  const sendBookmark = (rv: number, annotations?: Record<string, string>) =>
    stream.write(watchLine('BOOKMARK', bookmarkObject(def, target, String(rv), annotations)));

  const sel: Selectors = { label: opts.label, field: opts.field };
  const rv = opts.resourceVersion;
  // RV unset or "0" means "start with the current state"; sendInitialEvents asks for it explicitly (watch-list).
  // Like kube-apiserver with WatchList on (SetListOptionsDefaults), such a watch is a watch-list: it too ends its
  // initial events with the initial-events-end BOOKMARK when bookmarks are allowed.
  const wantInitial = opts.sendInitialEvents ?? (opts.resourceVersionMatch === undefined && (rv === undefined || rv === '0'));
  let from: number;
  try {
    if (rv !== undefined && rv !== '0' && !(await waitForRevision(store, Number(rv)))) {
      // kube-apiserver's cacher reports this inside the stream (newErrWatcher) rather than as the HTTP status.
      stream.fail(tooLargeResourceVersion(rv, String(store.currentRevision())));
      return;
    }
    if (wantInitial) {
      const { items, revision } = await store.list(w.namespace, sel);
      for (const item of items) {
        await stream.ready();
        if (stream.ended) return;
        sendObject('ADDED', item);
      }
      from = revision;
      if (opts.allowWatchBookmarks) sendBookmark(revision, { [INITIAL_EVENTS_END_ANNOTATION]: 'true' });
    } else {
      from = rv === undefined || rv === '0' ? store.currentRevision() : Number(rv);
    }
    if (stream.ended) return;
    const handle: WatchHandle = store.watch(w.namespace, from, {
      onEvent: (e) => forward(e),
      // The registry hands over 410 Expired as a StatusError: a replay that fell behind, or a compacted revision a
      // backend reports here rather than by throwing (a remote engine learns of it only when it answers). Either
      // way the client gets the same single ERROR event as for the throw caught below.
      onError: (err) => stream.fail(err instanceof StatusError ? err : expired(`watch ended: ${err.message}`)),
      ready: () => stream.ready(),
    });
    stream.onEnd(() => handle.stop());
    if (opts.allowWatchBookmarks) {
      stream.bookmark = () => {
        // A BOOKMARK must not claim a revision whose events this client has not been given yet (replay running).
        // It repeats on a quiet store too: that keeps idle streams (and the proxies in between) alive.
        const position = handle.position();
        if (position >= from) sendBookmark(position);
      };
    }
  } catch (e) {
    if (!(e instanceof StatusError)) {
      stream.end();
      throw e;
    }
    // kube-apiserver reports errors found after the stream started as one ERROR event (newErrWatcher).
    stream.fail(e);
  }

  function forward(e: ChangeEvent): void {
    const now = store.matches(e.object, sel);
    if (e.type === 'ADDED') {
      if (now) sendObject('ADDED', e.object, { event: e, which: 'new' });
      return;
    }
    const before = e.prevObject ? store.matches(e.prevObject, sel) : true;
    if (e.type === 'DELETED') {
      if (before) sendObject('DELETED', e.object, { event: e, which: 'new' });
      return;
    }
    if (before && now) sendObject('MODIFIED', e.object, { event: e, which: 'new' });
    else if (!before && now) sendObject('ADDED', e.object, { event: e, which: 'new' });
    else if (before && !now && e.prevObject) {
      // Leaving the selection is a DELETED of the old state, stamped with the revision of the change.
      const prev = e.prevObject;
      sendObject('DELETED', { ...prev, metadata: { ...prev.metadata, resourceVersion: e.object.metadata.resourceVersion } }, { event: e, which: 'prev' });
    }
  }
}
