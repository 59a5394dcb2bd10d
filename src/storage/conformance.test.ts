// The Storage contract (storage/conformance) on both backends of this repository; backend-specific behaviour
// (lmdb's persistence, compaction and disk faults, the memory history's window) is tested in their own files.
import { tempDir } from '../../test/helpers/storage-fixtures.js';
import { storageConformance } from './conformance.js';
import { LmdbStorage } from './lmdb-storage.js';
import { MemoryStorage } from './memory-storage.js';

storageConformance('memory', () => new MemoryStorage(), {
  supportsEncoded: false,
  // The memory history is bounded by count as it goes: nothing to trim.
  shortHistory: { make: (keep) => new MemoryStorage({ historyEvents: keep }), trim: async () => undefined },
});

storageConformance('lmdb', () => new LmdbStorage({ path: tempDir(), compactionIntervalMs: 0 }), {
  supportsEncoded: true,
  shortHistory: {
    make: (keep) => new LmdbStorage({ path: tempDir(), historyEvents: keep, compactionIntervalMs: 0 }),
    trim: async (s) => {
      // A write-path compaction may be running with an older target; the second run applies the bound as of now.
      await (s as LmdbStorage).compact();
      await (s as LmdbStorage).compact();
    },
  },
});
