/**
 * @module endpoints/table-rows
 * Table lists from stored JSON text, with each row's encoding remembered per stored version of the object.
 * Decoding every object (JSON.parse, about 10 µs for a Website) was most of a Table list; a row depends only on
 * the object's bytes, except for its AGE cell, which is filled in at each request. Entries are keyed by a hash of
 * the stored bytes (a new resourceVersion is new bytes), so a write never has to invalidate anything, and the
 * cache is bounded by size; a miss decodes the object as before.
 */
import { hash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { KubeObject, ListMeta } from '../apis/meta/types.js';
import type { ResourceDefinition } from '../registry/resource.js';
import { ageColumnIndex, humanAge, toTable, type IncludeObject } from '../registry/table.js';

/** MAX_BYTES bounds the cached row text (about 25k Website rows with their metadata). */
const MAX_BYTES = 32 * 1024 * 1024;

interface EncodedRow {
  /** The whole row's JSON, when no cell depends on the time of the request. */
  whole?: string;
  /** The row's JSON before and after the AGE cell. */
  before: string;
  after: string;
  creationTimestamp: string | undefined;
}

/** TableRows renders Tables of one kind from stored JSON text. */
export class TableRows {
  readonly #def: ResourceDefinition;
  readonly #rows = new LRUCache<string, EncodedRow>({
    maxSize: MAX_BYTES,
    sizeCalculation: (r) => r.before.length + r.after.length + 64,
  });

  /**
   * #timed: a kind whose own columns include dates (a CRD's `date` columns, rendered as ages, AGE among them): its
   * rows are rendered at each request, uncached.
   */
  readonly #timed: boolean;

  constructor(def: ResourceDefinition) {
    this.#def = def;
    this.#timed = !!def.columnsComplete && def.printerColumns.some((c) => c.type === 'date');
  }

  /** size is the number of cached rows (for tests). */
  get size(): number {
    return this.#rows.size;
  }

  /**
   * table is toTable's JSON for the objects whose stored JSON text is `items`, byte for byte (`noHeaders` only
   * drops the column definitions, so the rows are cached without it).
   */
  table(items: Uint8Array[], listMeta: ListMeta, opts: { version: string; includeObject: IncludeObject; noHeaders?: boolean }, now = Date.now()): Buffer {
    const variant = `${opts.version}|${opts.includeObject}|`;
    const rows = items.map((bytes) => {
      const key = variant + hash('sha1', bytes, 'base64');
      let row = this.#timed ? undefined : this.#rows.get(key);
      if (!row) {
        row = this.#encode(JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as KubeObject, opts);
        if (!this.#timed) this.#rows.set(key, row);
      }
      return row.whole ?? row.before + JSON.stringify(humanAge(row.creationTimestamp, now)) + row.after;
    });
    // The envelope is toTable's with no rows: everything up to `"rows":[`, then the rows, then `]}`.
    const head = JSON.stringify(toTable(this.#def, [], listMeta, opts)).slice(0, -2);
    return Buffer.from(`${head}${rows.join(',')}]}`);
  }

  // #encode spells JSON.stringify(row) in two parts around the AGE cell (same key order: cells, then object).
  #encode(obj: KubeObject, opts: { version: string; includeObject: IncludeObject }): EncodedRow {
    const [row] = toTable(this.#def, [obj], { resourceVersion: '' }, opts).rows;
    if (!row) throw new Error('toTable made no row');
    const ageAt = ageColumnIndex(this.#def);
    if (ageAt < 0) return { whole: JSON.stringify(row), before: '', after: '', creationTimestamp: undefined };
    const cells = row.cells.map((c) => JSON.stringify(c));
    const pre = cells.slice(0, ageAt);
    const post = cells.slice(ageAt + 1);
    const object = row.object === undefined ? '' : `,"object":${JSON.stringify(row.object)}`;
    return {
      before: `{"cells":[${pre.map((c) => `${c},`).join('')}`,
      after: `${post.map((c) => `,${c}`).join('')}]${object}}`,
      creationTimestamp: obj.metadata.creationTimestamp,
    };
  }
}
