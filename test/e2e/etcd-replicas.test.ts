/**
 * Several replicas on one etcd (`--storage-backend=etcd`): two server processes, started as `npm start` starts
 * them, on a 3-member etcd cluster of their own. Any replica answers with the same data; a watch on one sees a
 * write made on the other, in order; the API keeps serving when an etcd member dies and when a replica is killed
 * (kill -9) under writes, and no acknowledged write is lost.
 */
import type { Agent } from 'undici';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAgent, call, cleanupTempDirs, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { startEtcd, type EtcdCluster } from './harness/etcd.js';
import { startReplicas, type Replicas } from './harness/replicas.js';
import { e2e } from './harness/state.js';

const COLLECTION = '/apis/extensions.example.com/v1/namespaces/replicas/websites';
const v1 = (name: string) => ({
  apiVersion: 'extensions.example.com/v1',
  kind: 'Website',
  metadata: { name },
  spec: { git: { repository: 'https://example.com/site.git' } },
});

let cluster: EtcdCluster;
let replicas: ServerProcess[] = [];
let agents: Agent[] = [];
let set: Replicas | undefined;

beforeAll(async () => {
  cluster = await startEtcd(e2e().binDir, 3);
  // One certificate directory for both: one CA, one admin identity, as a Secret mounted into every pod.
  const certDir = tempDir('replicas-certs-');
  const args = ['--storage-backend', 'etcd', '--etcd-servers', cluster.clientUrls.join(','), '--etcd-prefix', '/website-replicas'];
  set = await startReplicas(2, { certDir, args });
  // The same arrays: a replica a test restarts in place is the one stopped at the end.
  ({ servers: replicas, agents } = set);
}, 120_000);

afterAll(async () => {
  await set?.stop();
  await cluster?.stop();
  cleanupTempDirs();
});

const at = (i: number, path: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE' = 'GET', body?: unknown, headers: Record<string, string> = {}) =>
  call(agents[i] as Agent, `${(replicas[i] as ServerProcess).url}${path}`, method, body, headers);

describe('two replicas on one etcd', () => {
  it('either replica answers with the same object and resourceVersion', async () => {
    const created = await at(0, COLLECTION, 'POST', v1('shared'));
    expect(created.status, created.text).toBe(201);
    const read = await at(1, `${COLLECTION}/shared`);
    expect(read.status).toBe(200);
    expect(read.body.metadata.resourceVersion).toBe(created.body.metadata.resourceVersion);
    expect(read.body.metadata.uid).toBe(created.body.metadata.uid);
    // The other version, on the other replica, sees it too (conversion is per replica, storage is shared).
    const alpha = await at(1, `${COLLECTION.replace('/v1/', '/v1alpha1/')}/shared`);
    expect(alpha.body.spec.gitRepo).toBe('https://example.com/site.git');
    const conflict = await at(1, COLLECTION, 'POST', v1('shared'));
    expect(conflict.status).toBe(409);
    // A list is consistent whichever replica answers (from its memory, once etcd confirms it is current): every
    // write acknowledged by the other replica before the list began is in it, 20 times over.
    for (let i = 0; i < 20; i++) {
      const made = await at(0, COLLECTION, 'POST', v1(`fresh-${i}`));
      expect(made.status).toBe(201);
      const listed = await at(1, COLLECTION);
      expect(listed.body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toContain(`fresh-${i}`);
      expect(Number(listed.body.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(made.body.metadata.resourceVersion));
      const deleted = await at(0, `${COLLECTION}/fresh-${i}`, 'DELETE');
      expect(deleted.status).toBe(200);
      expect((await at(1, COLLECTION)).body.items.map((o: { metadata: { name: string } }) => o.metadata.name)).not.toContain(`fresh-${i}`);
    }
  });

  it('a watch on one replica sees the writes made on the other, in order, with no gap', async () => {
    const from = (await at(1, COLLECTION)).body.metadata.resourceVersion as string;
    const res = await request(`${(replicas[1] as ServerProcess).url}${COLLECTION}?watch=1&resourceVersion=${from}&timeoutSeconds=3`, { dispatcher: agents[1] });
    const writes: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await at(0, COLLECTION, 'POST', v1(`w${i}`));
      expect(r.status).toBe(201);
      writes.push(r.body.metadata.resourceVersion);
    }
    const patched = await at(0, `${COLLECTION}/w3`, 'PATCH', { spec: { replicas: 2 } }, { 'content-type': 'application/merge-patch+json' });
    writes.push(patched.body.metadata.resourceVersion);
    const lines = (await res.body.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.object.metadata.resourceVersion)).toEqual(writes);
    expect(lines.map((l) => l.type)).toEqual([...Array(10).fill('ADDED'), 'MODIFIED']);
  });

  it('keeps serving with one etcd member killed, and loses no acknowledged write when a replica is killed under writes', async () => {
    await cluster.stopMember(2);
    const during = await at(0, COLLECTION, 'POST', v1('member-down'));
    expect(during.status, during.text).toBe(201);
    expect((await at(1, `${COLLECTION}/member-down`)).status).toBe(200);

    // Writers on replica 0 while replica 1 is killed: replica 0 goes on; then replica 1 restarts on the same etcd.
    const acked: string[] = [];
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const r = await at(0, COLLECTION, 'POST', v1(`load-${i}`));
        if (r.status === 201) acked.push(`load-${i}`);
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    await (replicas[1] as ServerProcess).stop('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await writer;
    await cluster.startMember(2);
    const certDir = (replicas[0] as ServerProcess).certDir;
    replicas[1] = await startServer({
      certDir,
      args: ['--storage-backend', 'etcd', '--etcd-servers', cluster.clientUrls.join(','), '--etcd-prefix', '/website-replicas'],
    });
    await (agents[1] as Agent).close();
    agents[1] = adminAgent(certDir);
    const names = new Set(((await at(1, COLLECTION)).body.items as { metadata: { name: string } }[]).map((i) => i.metadata.name));
    expect(acked.length).toBeGreaterThan(10);
    expect(acked.filter((n) => !names.has(n))).toEqual([]);
  }, 120_000);
});
