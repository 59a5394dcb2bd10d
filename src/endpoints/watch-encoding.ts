/**
 * @module endpoints/watch-encoding
 * One serialization per event and representation, shared by every watcher that needs it: a thousand JSON
 * watchers of the same collection cost one JSON.stringify per change, not a thousand. Entries live as long as
 * the event object does (a WeakMap keyed by it), so nothing here needs evicting. Lines are kept as bytes: a
 * string would be encoded to UTF-8 again for every socket it is written to.
 */

const cache = new WeakMap<object, Map<string, Buffer>>();

/**
 * sharedLine returns the encoded watch line for `source` in the representation named by `variant`, computing it
 * with `encode` only the first time any watcher asks.
 */
export function sharedLine(source: object, variant: string, encode: () => string): Buffer {
  let byVariant = cache.get(source);
  if (!byVariant) {
    byVariant = new Map();
    cache.set(source, byVariant);
  }
  let line = byVariant.get(variant);
  if (line === undefined) {
    line = Buffer.from(encode());
    byVariant.set(variant, line);
  }
  return line;
}

/** watchLine is the wire form of one event: `{"type":…,"object":…}` and a newline. */
export const watchLine = (type: string, object: unknown): string => `${JSON.stringify({ type, object })}\n`;
