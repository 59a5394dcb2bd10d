/**
 * @module observability/storage-metrics
 * Gauges of the embedded store's own resources, read at scrape time: lmdb's reader slots (a leaked read
 * transaction climbs towards MDB_READERS_FULL here before any request fails) and the pages of data.mdb (free pages
 * that stay free while the file grows mean an old snapshot is pinned).
 */
import { Gauge, type Registry } from 'prom-client';
import type { PageStats, ReaderSlots } from '../storage/lmdb-read.js';

/** StoreResources is what a backend with its own files tells (LmdbStorage). */
export interface StoreResources {
  readers(): ReaderSlots;
  pages(): PageStats;
}

/** hasStoreResources tells whether a storage reports its resources. */
export function hasStoreResources(s: object): s is StoreResources {
  return typeof (s as Partial<StoreResources>).readers === 'function' && typeof (s as Partial<StoreResources>).pages === 'function';
}

/** registerStorageMetrics adds the store's gauges to `registry`. */
export function registerStorageMetrics(registry: Registry, store: StoreResources): void {
  // One read of each table per scrape, shared by the gauges that show it.
  const cached = <T>(read: () => T) => {
    let at = -1;
    let value: T | undefined;
    return () => {
      const now = Date.now();
      if (value === undefined || now - at > 100) {
        value = read();
        at = now;
      }
      return value;
    };
  };
  const readers = cached(() => store.readers());
  const pages = cached(() => store.pages());
  new Gauge({
    name: 'website_apiserver_lmdb_reader_slots', help: 'lmdb reader slots held (state="held", of every process with the store open) and of those the ones pinning a snapshot (state="active").',
    labelNames: ['state'], registers: [registry],
    collect() {
      const r = readers();
      this.set({ state: 'held' }, r.held);
      this.set({ state: 'active' }, r.active);
    },
  });
  new Gauge({
    name: 'website_apiserver_lmdb_reader_slots_max', help: 'lmdb reader slots the environment has (MDB_READERS_FULL past them).', registers: [registry],
    collect() {
      this.set(readers().max);
    },
  });
  new Gauge({
    name: 'website_apiserver_lmdb_oldest_reader_lag', help: 'Write transactions committed since the oldest snapshot a reader still pins (pages freed since cannot be reused).', registers: [registry],
    collect() {
      this.set(readers().oldestLag);
    },
  });
  new Gauge({
    name: 'website_apiserver_lmdb_pages', help: 'Pages of data.mdb: state="used" in the latest snapshot, "free" in the file and not used (reusable once no reader pins them), "map" the mapped size.',
    labelNames: ['state'], registers: [registry],
    collect() {
      const p = pages();
      this.set({ state: 'used' }, p.used);
      this.set({ state: 'free' }, p.free);
      this.set({ state: 'map' }, p.map);
    },
  });
  new Gauge({
    name: 'website_apiserver_lmdb_page_size_bytes', help: 'The page size of data.mdb.', registers: [registry],
    collect() {
      this.set(pages().pageSize);
    },
  });
}
