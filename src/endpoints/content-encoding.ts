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
  return value !== undefined && value.split(',').some((t) => t.trim() === 'gzip');
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

/**
 * GzipMembers turns a watch's lines into gzip members: lines written in the same turn of the event loop share one
 * member (kube flushes when its event channel is empty), and `write` gets each member whole.
 */
export class GzipMembers {
  #lines: Buffer[] = [];
  #bytes = 0;
  #scheduled: NodeJS.Immediate | undefined;
  #room = true;

  constructor(private readonly write: (member: Buffer) => boolean) {}

  /** send adds a line; false when the transport said it is full (its drain follows). */
  send(line: string | Buffer): boolean {
    const b = typeof line === 'string' ? Buffer.from(line) : line;
    this.#lines.push(b);
    this.#bytes += b.length;
    if (this.#bytes >= MEMBER_BYTES) this.flush();
    else this.#scheduled ??= setImmediate(() => this.flush());
    return this.#room;
  }

  /** flush writes what is pending as one member. */
  flush(): void {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    if (this.#lines.length === 0) return;
    const batch = this.#lines.length === 1 ? (this.#lines[0] as Buffer) : Buffer.concat(this.#lines, this.#bytes);
    this.#lines = [];
    this.#bytes = 0;
    this.#room = this.write(zlib.gzipSync(batch, { level: GZIP_LEVEL }));
  }

  /** drained: the transport took everything; sends report room again. */
  drained(): void {
    this.#room = true;
  }

  /** discard drops what is pending (the stream is gone). */
  discard(): void {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    this.#lines = [];
    this.#bytes = 0;
  }
}
