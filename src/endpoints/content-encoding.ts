/**
 * @module endpoints/content-encoding
 * gzip as kube-apiserver applies it (responsewriters/writers.go, handlers/watch.go), with node:zlib at kube's level 1:
 * - a response body of more than 128 KiB (defaultGzipThresholdBytes, counted as kube writes it: its encoders end a
 *   body with a newline) is gzipped when the request's Accept-Encoding names gzip (APIResponseCompression);
 * - a watch-list (a watch with sendInitialEvents=true) is gzipped whatever its size (WatchListCompression, on by
 *   default in 1.37): each flush closes a gzip member, so the stream is a series of members, one per batch of events
 *   written together (the initial events and their BOOKMARK, then each later event or burst).
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';

/** GZIP_THRESHOLD_BYTES: bodies longer than this are compressed (kube's defaultGzipThresholdBytes). */
export const GZIP_THRESHOLD_BYTES = 128 * 1024;

/** kube's gzipContentEncodingLevel: speed over size (kubernetes/kubernetes#112296). */
const GZIP_LEVEL = 1;

/**
 * acceptsGzip reads Accept-Encoding as ContentEncodingSupported does: comma-separated tokens, trimmed, one of them
 * exactly `gzip` (so `gzip;q=1` and `GZIP` do not count, as they do not for kube).
 */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  return value?.split(',').some((t) => t.trim() === 'gzip') ?? false;
}

/** compressesBody tells whether kube would gzip this body: more than the threshold, its trailing newline counted. */
export function compressesBody(body: Buffer): boolean {
  const kubeLength = body.length + (body[body.length - 1] === 0x0a ? 0 : 1);
  return kubeLength > GZIP_THRESHOLD_BYTES;
}

const gzipAsync = promisify(zlib.gzip);

/** gzipBody compresses a whole response body off the event loop. */
export const gzipBody = (body: Buffer): Promise<Buffer> => gzipAsync(body, { level: GZIP_LEVEL });

/** A batch this large is compressed at once rather than at the end of the tick, so a long replay stays bounded. */
const MEMBER_BYTES = 128 * 1024;
/** Bytes of events being compressed past which a send reports no room, until they are written. */
const IN_FLIGHT_BYTES = 1024 * 1024;

/**
 * gzipMember compresses one batch as one gzip member the way kube's perFlushGzipWriter ends one: a sync flush, then
 * the end. The flush matters to readers: Go's gzip.Reader, reading the end of a member, goes on to read the next
 * member's header before it returns, so without the flush a client would see the batch only when the next arrives.
 */
function gzipMember(batch: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const gz = zlib.createGzip({ level: GZIP_LEVEL });
    const out: Buffer[] = [];
    gz.on('data', (c: Buffer) => out.push(c));
    gz.on('end', () => resolve(Buffer.concat(out)));
    gz.on('error', reject);
    gz.write(batch);
    gz.flush(zlib.constants.Z_SYNC_FLUSH, () => gz.end());
  });
}

/**
 * GzipMembers turns a watch's lines into gzip members: lines written in the same turn of the event loop share one
 * member (kube flushes when its event channel is empty), and `write` gets each member whole, in order. `room` is
 * called when a send that reported no room may go on.
 */
export class GzipMembers {
  #lines: Buffer[] = [];
  #bytes = 0;
  #scheduled: NodeJS.Immediate | undefined;
  #chain: Promise<void> = Promise.resolve();
  #inFlight = 0;
  #transportRoom = true;
  #refused = false;
  #stopped = false;

  constructor(
    private readonly write: (member: Buffer) => boolean,
    private readonly room: () => void,
  ) {}

  /** send adds a line; false when the transport is full or too much waits to be compressed (`room` follows). */
  send(line: string | Buffer): boolean {
    const b = typeof line === 'string' ? Buffer.from(line) : line;
    this.#lines.push(b);
    this.#bytes += b.length;
    if (this.#bytes >= MEMBER_BYTES) this.flush();
    else this.#scheduled ??= setImmediate(() => this.flush());
    const ok = this.#transportRoom && this.#inFlight + this.#bytes <= IN_FLIGHT_BYTES;
    if (!ok) this.#refused = true;
    return ok;
  }

  /** flush compresses what is pending as one member, written after every member before it. */
  flush(): void {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    if (this.#lines.length === 0) return;
    const batch = this.#lines.length === 1 ? (this.#lines[0] as Buffer) : Buffer.concat(this.#lines, this.#bytes);
    this.#lines = [];
    this.#bytes = 0;
    this.#inFlight += batch.length;
    this.#chain = this.#chain
      .then(() => gzipMember(batch))
      .then((member) => {
        this.#inFlight -= batch.length;
        if (this.#stopped) return;
        this.#transportRoom = this.write(member);
        if (this.#refused && this.#transportRoom && this.#inFlight <= IN_FLIGHT_BYTES) {
          this.#refused = false;
          this.room();
        }
      });
  }

  /** drained: the transport took everything it was given. */
  drained(): void {
    this.#transportRoom = true;
    if (this.#inFlight <= IN_FLIGHT_BYTES) this.#refused = false;
  }

  /** end flushes what is pending and calls `done` once every member is written. */
  end(done: () => void): void {
    this.flush();
    void this.#chain.then(done, done);
  }

  /** discard drops what is pending and writes nothing more (the stream is gone). */
  discard(): void {
    this.#stopped = true;
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    this.#lines = [];
    this.#bytes = 0;
  }
}
