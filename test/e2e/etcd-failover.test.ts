/**
 * Leader failover between replicas on etcd: two server processes with their reconcilers on under leader election
 * (the Lease in the server's namespace of the e2e cluster), on an etcd of their own. One leads and reconciles a
 * Website into its Deployment; it is killed (kill -9); the other takes the Lease within the Lease timings (15 s
 * lease duration, 2 s retry) and reconciles the next Website.
 */
import type { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, cleanupTempDirs, type ServerProcess } from '../helpers/server-process.js';
import { startEtcd, type EtcdCluster } from './harness/etcd.js';
import { startReplicas, type Replicas } from './harness/replicas.js';
import { kubectl, kubectlOk, waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';

const NS = 'e2e-failover';
const COLLECTION = `/apis/extensions.example.com/v1/namespaces/${NS}/websites`;
const site = (name: string) => ({
  apiVersion: 'extensions.example.com/v1',
  kind: 'Website',
  metadata: { name },
  spec: { git: { repository: 'https://github.com/luksa/kubia-website-example.git' } },
});

const env = e2e();
let cluster: EtcdCluster;
let replicas: ServerProcess[] = [];
let agents: Agent[] = [];
let set: Replicas | undefined;

beforeAll(async () => {
  await kubectl(env.kubeconfig.admin, ['create', 'namespace', NS]);
  cluster = await startEtcd(env.binDir, 1);
  const args = [
    '--kubeconfig',
    env.kubeconfig.websiteServer,
    '--storage-backend',
    'etcd',
    '--etcd-servers',
    cluster.clientUrls.join(','),
    '--enable-reconcilers=true',
    '--leader-elect=true',
    '--leader-elect-namespace',
    env.namespace,
  ];
  set = await startReplicas(2, { args });
  // The same arrays: a replica a test restarts in place is the one stopped at the end.
  ({ servers: replicas, agents } = set);
}, 120_000);

afterAll(async () => {
  await set?.stop();
  await cluster?.stop();
  // The Deployments and Services the reconcilers made go with the namespace (its Websites were in our etcd only).
  await kubectl(env.kubeconfig.admin, ['delete', 'namespace', NS, '--wait=false', '--ignore-not-found']);
  cleanupTempDirs();
});

const leading = (r: ServerProcess) => r.logs().includes('leading: reconcilers started');
const deployment = (name: string) => kubectl(env.kubeconfig.admin, ['get', 'deployment', `${name}-website`, '-n', NS, '-o', 'name']).then((r) => r.code === 0);

describe('leader failover between replicas on etcd', () => {
  it('one replica leads and reconciles; killed, the other takes the Lease within its timings and reconciles on', async () => {
    // waitFor takes a falsy answer as "not yet": the leader's index is wrapped (it may be 0).
    const { leader } = await waitFor('a leader', () => (replicas.some(leading) ? { leader: replicas.findIndex(leading) } : undefined), 60_000, 200);
    expect(replicas.filter(leading)).toHaveLength(1);
    const other = 1 - leader;
    const first = await call(agents[other] as Agent, `${(replicas[other] as ServerProcess).url}${COLLECTION}`, 'POST', site('before'));
    expect(first.status, first.text).toBe(201);
    await waitFor('the leader to reconcile a Website created on the other replica', () => deployment('before'), 60_000, 500).catch((e: Error) => {
      throw new Error(`${e.message}\n--- the leader's log (tail) ---\n${(replicas[leader] as ServerProcess).logs().slice(-6000)}`);
    });

    const killedAt = Date.now();
    await (replicas[leader] as ServerProcess).stop('SIGKILL');
    await waitFor('the other replica to lead', () => leading(replicas[other] as ServerProcess), 40_000, 100);
    const takeoverMs = Date.now() - killedAt;
    console.log(`[failover] the surviving replica led ${takeoverMs} ms after the leader was killed`);
    // The candidate takes the Lease once it has seen no renewal for the Lease duration (15 s), measured from when it
    // observed the last one: that observation and the acquiring attempt each wait up to a retry period with jitter
    // (2 s × 1.2), so 15 + 2 × 2.4 s, plus 2 s for starting the reconcilers on a loaded 2-core machine.
    expect(takeoverMs).toBeLessThan(15_000 + 2 * 2_400 + 2_000);
    const second = await call(agents[other] as Agent, `${(replicas[other] as ServerProcess).url}${COLLECTION}`, 'POST', site('after'));
    expect(second.status, second.text).toBe(201);
    await waitFor('the new leader to reconcile', () => deployment('after'), 60_000, 500);
    const holder = JSON.parse(await kubectlOk(env.kubeconfig.admin, ['get', 'lease', 'website-apiserver', '-n', env.namespace, '-o', 'json'])) as {
      spec: { holderIdentity?: string };
    };
    expect(holder.spec.holderIdentity).toBeTruthy();
  }, 180_000);
});
