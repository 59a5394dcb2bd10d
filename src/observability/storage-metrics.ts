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

/** registerStorageMetrics adds the store's gauges to `registry`, each read at scrape time. */
export function registerStorageMetrics(registry: Registry, store: StoreResources): void {
  const gauge = (name: string, help: string, set: (g: Gauge) => void, labelNames: string[] = []) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        set(this);
      },
    });
  gauge(
    'website_apiserver_lmdb_reader_slots',
    'lmdb reader slots held (state="held", of every process with the store open) and of those the ones pinning a snapshot (state="active").',
    (g) => {
      const r = store.readers();
      g.set({ state: 'held' }, r.held);
      g.set({ state: 'active' }, r.active);
    },
    ['state'],
  );
  gauge('website_apiserver_lmdb_reader_slots_max', 'lmdb reader slots the environment has (MDB_READERS_FULL past them).', (g) => g.set(store.readers().max));
  gauge(
    'website_apiserver_lmdb_oldest_reader_lag',
    'Write transactions committed since the oldest snapshot a reader still pins (pages freed since cannot be reused).',
    (g) => g.set(store.readers().oldestLag),
  );
  gauge(
    'website_apiserver_lmdb_pages',
    'Pages of data.mdb: state="used" in the latest snapshot, "free" in the file and not used (reusable once no reader pins them), "map" the mapped size.',
    (g) => {
      const p = store.pages();
      g.set({ state: 'used' }, p.used);
      g.set({ state: 'free' }, p.free);
      g.set({ state: 'map' }, p.map);
    },
    ['state'],
  );
  gauge('website_apiserver_lmdb_page_size_bytes', 'The page size of data.mdb.', (g) => g.set(store.pages().pageSize));
}
