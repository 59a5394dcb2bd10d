/**
 * Moving a live CRD's objects to this server and back (`website-apiserver migrate`, docs/migration.md), on the e2e
 * control plane (kube-apiserver 1.37, its etcd, kube-controller-manager with the garbage collector and the namespace
 * controller), while a client-go informer (informer-probe -mode controller) and a kubectl write loop run throughout:
 *
 *   a CRD served by kube-apiserver, MIGRATION_OBJECTS objects (default 10,000) in 20 namespaces: some with finalizers,
 *   some owned by a ConfigMap, some with status, two managers' managedFields on some, some being deleted (a
 *   deletionTimestamp held by a finalizer) → migrate → roll back (--back, through kube's etcd) → migrate again.
 *   Before the first move, the command is stopped twice with Ctrl-C (while copying, and once writes are paused):
 *   it exits 1, no pause of writes outlives it, and the move then resumes.
 *
 * After each move: every object is identical except resourceVersion (compared with what the other side held when it
 * stopped taking writes; the kubectl loop's own objects by identity and their last label), the informer's cache equals
 * the server's list, it re-listed at most once for the move, and no kubectl command failed (writes during the pause
 * are answered 429 with Retry-After, which kubectl retries). After the first move the garbage collector still deletes
 * an owner's dependents, and after the last one a namespace is deleted with its objects. The CRD, objects, informer,
 * loop and checks are helpers-migration.ts's, shared with the real node's suite (real-node-migration.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { generateServingCertificate } from '../../src/manifests/render.js';
import { Rest } from '../../src/migration/rest.js';
import { suffix } from './helpers-access.js';
import { listAll, MigrationRig, runMigrate } from './helpers-migration.js';
import { kubectl, kubectlOk } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { freePorts } from './plane.mjs';
import { startWebsiteServer, stopWebsiteServer, withFlags } from './harness/website-server.js';

const env = e2e();
const COUNT = Number(process.env['MIGRATION_OBJECTS'] ?? 10_000);
const S = suffix();
const SERVER_NS = `mig-${S}-server`;
const admin = env.kubeconfig.admin;
const kube = new Rest(env.server, { ca: readFileSync(env.caFile), headers: { authorization: `Bearer ${env.tokens.admin}` } });
const rig = new MigrationRig({ suffix: S, count: COUNT, kubeconfig: admin, kube, etcdUrl: env.etcdUrl, probeBin: join(env.binDir, 'informer-probe') });

let dir = '';
let port = 0;
let pidFile = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'migration-e2e-'));
  const crdFile = await rig.setUp(dir);
  await kubectlOk(admin, ['create', 'namespace', SERVER_NS]);

  // This server, delegated like the suite's own, serving the same CRD file, behind an ExternalName Service in its
  // own namespace (a serving certificate for that Service's name).
  [port = 0] = await freePorts(1);
  const serving = generateServingCertificate(SERVER_NS);
  writeFileSync(join(dir, 'tls.crt'), serving.cert);
  writeFileSync(join(dir, 'tls.key'), serving.key, { mode: 0o600 });
  writeFileSync(join(dir, 'ca.crt'), serving.caCert);
  pidFile = join(dir, 'server.pid');
  await startWebsiteServer({
    args: withFlags(
      env.website.args,
      {
        '--port': String(port),
        '--tls-cert-file': join(dir, 'tls.crt'),
        '--tls-private-key-file': join(dir, 'tls.key'),
        '--data-dir': join(dir, 'data'),
        '--cert-dir': join(dir, 'certs'),
      },
      ['--crd', crdFile],
    ),
    logFile: join(dir, 'server.log'),
    pidFile,
    url: `https://127.0.0.1:${port}`,
  });
  await kubectlOk(admin, ['apply', '-f', '-'], {
    input: YAML.stringify({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'website-apiserver', namespace: SERVER_NS },
      spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'https', port, protocol: 'TCP' }] },
    }),
  });
  await rig.startProbe();
}, 900_000);

afterAll(async () => {
  // Nothing of this test may stay behind for the others.
  await rig.cleanUp([SERVER_NS]);
  if (pidFile) await stopWebsiteServer(pidFile);
  await kube.close();
  if (dir && !process.env['E2E_KEEP']) rmSync(dir, { recursive: true, force: true });
}, 300_000);

describe('migrate a live CRD here, back, and here again', () => {
  it('keeps every object, the informer in step and every kubectl command working, across the three moves', async () => {
    const log = (m: string) => process.stderr.write(`[migration] ${m}\n`);
    const args = [
      '--server',
      `https://127.0.0.1:${port}`,
      '--kubeconfig',
      admin,
      '--service',
      `${SERVER_NS}/website-apiserver:${port}`,
      '--ca-file',
      join(dir, 'ca.crt'),
    ];
    const migrate = (extra: string[]) => () => runMigrate(rig.crdName, [...args, ...extra], log);
    // Stopped by Ctrl-C while copying, and again once writes are paused: each time the command exits 1 saying so,
    // no pause of writes outlives it, and writes go on; the move below resumes.
    for (const at of [/\[copy\] copying/, /\[freeze\] pausing/]) {
      const stopped = await runMigrate(rig.crdName, args, log, at);
      expect(stopped.code, stopped.output).toBe(1);
      expect(stopped.output).toContain('interrupted: stopping');
      const webhook = await kubectl(admin, ['get', 'validatingwebhookconfiguration', `website-apiserver-migration-${rig.crdName}`]);
      expect(webhook.stderr).toContain('NotFound');
      const [namespace, name] = ([...rig.loop][0] ?? '').split('/') as [string, string];
      const t0 = Date.now();
      await kubectlOk(admin, ['annotate', '--overwrite', '-n', namespace, `widgets.${rig.group}`, name, `interrupted=${Date.now()}`]);
      expect(Date.now() - t0, 'a write right after the interrupted command is not held up by a pause').toBeLessThan(5000);
    }
    // What the side giving the objects up holds when it stops taking writes is read after the move: kube's etcd
    // copy (retired, untouched) after a move here; this server's store (frozen) after a move back.
    await rig.checkMove({ name: 'here', run: migrate([]), given: () => rig.listKubeEtcd() });
    await rig.garbageCollectionStillWorks();
    await rig.checkMove({ name: 'back', run: migrate(['--back', '--kube-etcd-servers', env.etcdUrl]), given: listHere });
    await rig.checkMove({ name: 'here again', run: migrate([]), given: () => rig.listKubeEtcd() });
    await rig.namespaceDeletionStillWorks();
  }, 1_800_000);
});

async function listHere() {
  const here = new Rest(`https://127.0.0.1:${port}`, {
    ca: readFileSync(join(dir, 'ca.crt')),
    headers: { authorization: `Bearer ${env.tokens.admin}` },
    servername: `website-apiserver.${SERVER_NS}.svc`,
  });
  try {
    return await listAll(here, `/apis/${rig.group}/v1/${rig.plural}`, rig.group);
  } finally {
    await here.close();
  }
}
