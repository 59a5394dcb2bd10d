/**
 * The etcd backend (src/storage/etcd-storage.ts) against etcd v3.5, the oldest release line docs/operations.md supports
 * (`etcd-3.5` from test/e2e/go/etcd35; the rest of the suite runs on the pinned v3.6): the shared Storage conformance
 * suite, set up as in etcd-storage.test.ts, and a check that the server really is a 3.5.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { etcdConformance, startEtcd, type EtcdCluster } from './harness/etcd.js';
import { e2e } from './harness/state.js';

let cluster: EtcdCluster;

beforeAll(async () => {
  cluster = await startEtcd(e2e().binDir, 1, 'etcd-3.5');
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

describe('etcd 3.5 server', () => {
  it('reports an etcdserver version of 3.5.x (so this file cannot silently run on 3.6)', async () => {
    const url = cluster.clientUrls[0] ?? '';
    const version = (await (await fetch(`${url}/version`)).json()) as { etcdserver?: string };
    expect(version.etcdserver).toMatch(/^3\.5\./);
  });
});

// The shared contract, as on 3.6.
etcdConformance('etcd 3.5', () => cluster);
