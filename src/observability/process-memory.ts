/**
 * @module observability/process-memory
 * The process's resident memory by kind, read from /proc/self/status at scrape time: anonymous (heap, stacks, native
 * allocations), file-backed (pages of mapped files: the lmdb map, the binary and its libraries) and shared memory.
 * A memory cgroup counts all three, but the kernel can drop clean file pages under pressure, so anonymous memory is
 * what a container's memory limit must hold; prom-client's process_resident_memory_bytes is their sum.
 */
import { readFileSync } from 'node:fs';
import { Gauge, type Registry } from 'prom-client';

/** The kinds reported, and the /proc/<pid>/status field of each. */
export const MEMORY_KINDS = { anonymous: 'RssAnon', file: 'RssFile', shmem: 'RssShmem' } as const;

export type MemoryKind = keyof typeof MEMORY_KINDS;

/**
 * parseStatusMemory reads the kinds from the text of /proc/<pid>/status, in bytes; a field the text lacks (older
 * kernels) is left out.
 */
export function parseStatusMemory(status: string): Partial<Record<MemoryKind, number>> {
  const out: Partial<Record<MemoryKind, number>> = {};
  for (const [kind, field] of Object.entries(MEMORY_KINDS) as [MemoryKind, string][]) {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
    if (m) out[kind] = Number(m[1]) * 1024;
  }
  return out;
}

/**
 * registerProcessMemory adds website_apiserver_process_memory_bytes{kind} to the registry. Off Linux (no
 * /proc/self/status) the gauge has no samples.
 */
export function registerProcessMemory(registry: Registry, statusFile = '/proc/self/status'): Gauge<'kind'> {
  return new Gauge({
    name: 'website_apiserver_process_memory_bytes',
    help: "Resident memory of the process by kind (anonymous, file-backed, shmem), from /proc/self/status; file-backed pages, such as the lmdb map's, are reclaimable.",
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      this.reset();
      let status: string;
      try {
        status = readFileSync(statusFile, 'utf8');
      } catch {
        return;
      }
      for (const [kind, bytes] of Object.entries(parseStatusMemory(status))) this.set({ kind }, bytes);
    },
  });
}
