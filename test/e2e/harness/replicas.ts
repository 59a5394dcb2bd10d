/**
 * @module e2e/harness/replicas
 * Several server processes on one etcd (`--storage-backend=etcd`), started as `npm start` starts them, each with an
 * admin client for its port; stopped (agents closed, processes ended) together.
 */
import type { Agent } from 'undici';
import { adminAgent, startServer, type ServerProcess, type StartOptions } from '../../helpers/server-process.js';

/** Replicas are the running servers and, index for index, an admin agent for each. */
export interface Replicas {
  servers: ServerProcess[];
  agents: Agent[];
  stop(): Promise<void>;
}

/** startReplicas starts `count` servers one after the other with the same options. */
export async function startReplicas(count: number, o: StartOptions): Promise<Replicas> {
  const servers: ServerProcess[] = [];
  const agents: Agent[] = [];
  for (let i = 0; i < count; i++) {
    const r = await startServer(o);
    servers.push(r);
    agents.push(adminAgent(r.certDir));
  }
  return {
    servers,
    agents,
    async stop() {
      for (const a of agents) await a.close();
      for (const r of servers) await r.stop().catch(() => undefined);
    },
  };
}
