/**
 * The longer soak (issue 24, part 7): the clients of test/helpers/soak.ts for 30 s against one server on lmdb and
 * one on a real etcd. Every kind of paginated list, watches replaying from an old revision, gets and writes at once:
 * no answer may be a 5xx and /readyz stays ok. On lmdb the reader slots stay bounded and return to idle, and
 * data.mdb stays within a small factor of what its latest snapshot uses; on etcd (no reader slots, no data.mdb)
 * the same clients must see no failure. npm test runs a shorter soak on lmdb (test/soak.test.ts).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { adminAgent, call, cleanupTempDirs, startServer, type ServerProcess } from '../helpers/server-process.js';
import { metric, runSoak, seedObjects } from '../helpers/soak.js';
import { startEtcd, type EtcdCluster } from './harness/etcd.js';
import { e2e } from './harness/state.js';

const NAMESPACES = ['soak-a', 'soak-b', 'soak-c', 'soak-d'];
const SECONDS = 30;

const servers: ServerProcess[] = [];
const agents: Agent[] = [];
let cluster: EtcdCluster | undefined;
afterAll(async () => {
  for (const a of agents) await a.close();
  for (const s of servers) await s.stop();
  await cluster?.stop();
  cleanupTempDirs();
});

async function start(args: string[] = []): Promise<{ server: ServerProcess; agent: Agent }> {
  const server = await startServer({ args });
  servers.push(server);
  const agent = adminAgent(server.certDir);
  agents.push(agent);
  return { server, agent };
}

// soakOn runs the clients against one server, sampling (given) the metrics while they run; runSoak samples /readyz.
async function soakOn(server: ServerProcess, agent: Agent, sample?: (metrics: string) => void) {
  const oldRevision = await seedObjects(server.url, agent, NAMESPACES, 1000);
  const r = await runSoak(
    {
      url: server.url,
      agent,
      namespaces: NAMESPACES,
      seconds: SECONDS,
      listers: 8,
      watchers: 3,
      getters: 2,
      writers: 4,
      onTick: async () => {
        if (sample) sample((await call(agent, `${server.url}/metrics`)).text);
      },
    },
    oldRevision,
  );
  expect(r.failures).toEqual([]);
  expect(r.pages).toBeGreaterThan(1000);
  expect(r.writes).toBeGreaterThan(300);
  expect(r.watchEvents).toBeGreaterThan(300);
  expect(r.readyz.length).toBeGreaterThan(5);
  expect(new Set(r.readyz)).toEqual(new Set([200]));
  return r;
}

describe('a 30 s soak of mixed clients', () => {
  it('on lmdb: no 5xx, reader slots bounded and idle after, data.mdb bounded', async () => {
    const { server, agent } = await start();
    let maxHeld = 0;
    await soakOn(server, agent, (m) => {
      maxHeld = Math.max(maxHeld, metric(m, 'website_apiserver_lmdb_reader_slots{state="held"}') ?? Infinity);
    });
    expect(maxHeld).toBeLessThanOrEqual(4);
    await new Promise((res) => setTimeout(res, 100));
    const idle = (await call(agent, `${server.url}/metrics`)).text;
    expect(metric(idle, 'website_apiserver_lmdb_reader_slots{state="active"}')).toBeLessThanOrEqual(1);
    const pageSize = metric(idle, 'website_apiserver_lmdb_page_size_bytes') ?? 4096;
    const used = (metric(idle, 'website_apiserver_lmdb_pages{state="used"}') ?? 0) * pageSize;
    expect(statSync(join(server.dataDir, 'data.mdb')).size).toBeLessThan(3 * used);
  }, 120_000);

  it('on etcd: no 5xx', async () => {
    cluster = await startEtcd(e2e().binDir, 1);
    const { server, agent } = await start(['--storage-backend', 'etcd', '--etcd-servers', cluster.clientUrls.join(','), '--etcd-prefix', '/soak']);
    await soakOn(server, agent);
  }, 180_000);
});
