import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from './metrics.js';
import { parseStatusMemory, registerProcessMemory } from './process-memory.js';

const noWatches = { size: 0, counters: { sent: 0, encoded: 0, dropped: 0, terminated: 0 } };

/** sample reads one sample of the text exposition format: `name{labels} value`. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.split(' ').pop());
}

describe('process memory metrics', () => {
  it('reads RssAnon, RssFile and RssShmem from the status text, in bytes', () => {
    const status = 'Name:\tnode\nVmRSS:\t  3000 kB\nRssAnon:\t  1000 kB\nRssFile:\t  1990 kB\nRssShmem:\t    10 kB\nVmSwap:\t0 kB\n';
    expect(parseStatusMemory(status)).toEqual({ anonymous: 1000 * 1024, file: 1990 * 1024, shmem: 10 * 1024 });
    expect(parseStatusMemory('VmRSS:\t 5 kB\n')).toEqual({});
  });

  it.runIf(existsSync('/proc/self/status'))('/metrics reports anonymous and file-backed memory that add up to the resident set', async () => {
    const text = await createMetrics(noWatches).registry.metrics();
    const kind = (k: string) => sample(text, 'website_apiserver_process_memory_bytes', `kind="${k}"`);
    const [anonymous = 0, file = 0, shmem = -1] = [kind('anonymous'), kind('file'), kind('shmem')];
    expect(anonymous).toBeGreaterThan(0);
    expect(file).toBeGreaterThan(0);
    expect(shmem).toBeGreaterThanOrEqual(0);
    // prom-client reads VmRSS in its own read of the status file, an instant apart: the kernel's sum, give or take
    // what the process allocated in between.
    const rss = sample(text, 'process_resident_memory_bytes') ?? 0;
    expect(rss).toBeGreaterThan(0);
    expect(Math.abs(anonymous + file + shmem - rss) / rss).toBeLessThan(0.1);
  });

  it('has no samples when the status file cannot be read', async () => {
    const registry = new Registry();
    registerProcessMemory(registry, join(tmpdir(), 'no-such-dir', 'status'));
    const text = await registry.metrics();
    expect(text).toContain('# TYPE website_apiserver_process_memory_bytes gauge');
    expect(sample(text, 'website_apiserver_process_memory_bytes', 'kind="anonymous"')).toBeUndefined();
  });
});
