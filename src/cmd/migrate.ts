/**
 * @module cmd/migrate
 * The `migrate` subcommand (dispatched from main.ts): move one CRD's objects from kube-apiserver to this server and
 * serve its group-version from here, or (--back) move them back (migration/move.ts has the phases, docs/migration.md
 * the why). It runs on an operator's machine with their kubeconfig and calls this server directly at --server (in a
 * cluster: `kubectl port-forward -n website-system svc/website-apiserver 8443:443` and `--server
 * https://localhost:8443`).
 *
 * Exit codes: 0 done, 1 failed or interrupted (each phase can be run again: the command resumes), 2 bad command line.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readApiService } from '../migration/apiservices.js';
import type { ServiceRef } from '../migration/freeze.js';
import { moveBack, moveHere } from '../migration/move.js';
import { Reporter } from '../migration/progress.js';
import { credentialsOf, Rest } from '../migration/rest.js';
import { etcdServerList } from './options.js';

/** DEFAULT_LIKE is the APIService of this server's own install whose service and caBundle are used by default. */
const DEFAULT_LIKE = 'v1.extensions.example.com';

export const MIGRATE_USAGE = `Usage: website-apiserver migrate --crd NAME --server URL [--back] [flags]

Moves the objects of the CustomResourceDefinition NAME from kube-apiserver to this server and serves its
group-version from here (every object kept as it is but its resourceVersion), or with --back moves them into
kube-apiserver again. This server must already serve the same CRD file (--crd). Writes pause for a few seconds
at the switch (clients retry them by themselves). Run it again to resume after a failure or Ctrl-C.

Flags:
  --crd NAME                 The CustomResourceDefinition (e.g. crontabs.stable.example.com). Required.
  --server URL               This server, reached directly (e.g. through kubectl port-forward). Required.
  --back                     Move the objects back to kube-apiserver.
  --kubeconfig FILE          Credentials for kube-apiserver, used for this server too (default $KUBECONFIG, then
                             ~/.kube/config).
  --service NS/NAME[:PORT]   The Service kube-apiserver reaches this server at (default: the one of APIService
                             ${DEFAULT_LIKE}).
  --ca-file FILE             The CA of this server's serving certificate (default: that APIService's caBundle).
  --kube-etcd-servers URLS   kube-apiserver's etcd (its --etcd-servers), for --back: the only way to write the
                             objects with their uid, creationTimestamp, generation and status as they are.
  --kube-etcd-cafile FILE    kube-apiserver's --etcd-cafile.
  --kube-etcd-certfile FILE  kube-apiserver's --etcd-certfile.
  --kube-etcd-keyfile FILE   kube-apiserver's --etcd-keyfile.
  --kube-etcd-prefix PREFIX  kube-apiserver's --etcd-prefix (default "/registry").
  --page-size N              Objects per list page and per copy call (default 500).
  -h, --help                 Print this help and exit.`;

const OPTIONS = {
  crd: { type: 'string' },
  server: { type: 'string' },
  back: { type: 'boolean' },
  kubeconfig: { type: 'string' },
  service: { type: 'string' },
  'ca-file': { type: 'string' },
  'kube-etcd-servers': { type: 'string' },
  'kube-etcd-cafile': { type: 'string' },
  'kube-etcd-certfile': { type: 'string' },
  'kube-etcd-keyfile': { type: 'string' },
  'kube-etcd-prefix': { type: 'string' },
  'page-size': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const usageError = (message: string) => {
  process.stderr.write(`website-apiserver migrate: ${message}\nRun 'website-apiserver migrate --help' for usage.\n`);
  return 2;
};

/** runMigrate runs the subcommand and resolves with its exit code. */
export async function runMigrate(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (e) {
    return usageError((e as Error).message);
  }
  if (values['help']) {
    process.stdout.write(`${MIGRATE_USAGE}\n`);
    return 0;
  }
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const crdName = str('crd');
  const server = str('server');
  if (!crdName) return usageError('--crd is required');
  if (!server) return usageError('--server is required');
  const pageSize = Number(str('page-size') ?? 500);
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) return usageError(`--page-size: must be a positive integer, got "${str('page-size')}"`);
  let service: ServiceRef | undefined;
  const serviceText = str('service');
  if (serviceText) {
    const m = /^([a-z0-9-]+)\/([a-z0-9-]+)(?::(\d+))?$/.exec(serviceText);
    if (!m) return usageError(`--service: expected NAMESPACE/NAME[:PORT], got "${serviceText}"`);
    service = { namespace: m[1] as string, name: m[2] as string, port: Number(m[3] ?? 443) };
  }
  const back = values['back'] === true;
  const etcdErrors: string[] = [];
  const etcdServers = etcdServerList(str('kube-etcd-servers'), 'kube-etcd-servers', etcdErrors);
  if (!!str('kube-etcd-certfile') !== !!str('kube-etcd-keyfile')) etcdErrors.push('--kube-etcd-certfile and --kube-etcd-keyfile must be given together');
  if (etcdErrors[0]) return usageError(etcdErrors[0]);
  if (back && etcdServers.length === 0) {
    return usageError(
      '--back needs --kube-etcd-servers: kube-apiserver gives every object it creates a new uid, creationTimestamp and generation, so only a write in its etcd keeps them',
    );
  }

  const report = new Reporter();
  const abort = new AbortController();
  const onInterrupt = () => {
    if (abort.signal.aborted) process.exit(1);
    report.info('interrupted: stopping (a pause of writes is lifted first); run the command again to resume');
    abort.abort();
  };
  process.on('SIGINT', onInterrupt);
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  const kubeconfig = str('kubeconfig') ?? env['KUBECONFIG'];
  let kube: Rest | undefined;
  let here: Rest | undefined;
  try {
    if (kubeconfig) kc.loadFromFile(kubeconfig);
    else kc.loadFromDefault();
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig names no current cluster');
    const creds = await credentialsOf(kc);
    kube = new Rest(cluster.server, creds);
    let caBundle: string;
    const caFile = str('ca-file');
    if (!service || !caFile) {
      const like = await readApiService(kube, DEFAULT_LIKE);
      const s = like?.spec.service;
      if (!s || !like.spec.caBundle) throw new Error(`APIService ${DEFAULT_LIKE} names no service and caBundle: give --service and --ca-file`);
      service ??= { namespace: s.namespace, name: s.name, port: s.port ?? 443 };
      caBundle = caFile ? readFileSync(caFile).toString('base64') : like.spec.caBundle;
    } else caBundle = readFileSync(caFile).toString('base64');
    // Checked as kube-apiserver checks it: as the Service, whatever address reaches it here.
    here = new Rest(server, { ...creds, ca: Buffer.from(caBundle, 'base64'), insecure: false, servername: `${service.name}.${service.namespace}.svc` });
    const common = { crdName, kube, here, service, caBundle, report, pageSize, signal: abort.signal };
    if (back) {
      const tls = {
        ...(str('kube-etcd-cafile') ? { ca: readFileSync(str('kube-etcd-cafile') as string) } : {}),
        ...(str('kube-etcd-certfile') ? { cert: readFileSync(str('kube-etcd-certfile') as string) } : {}),
        ...(str('kube-etcd-keyfile') ? { key: readFileSync(str('kube-etcd-keyfile') as string) } : {}),
      };
      await moveBack({ ...common, etcd: { endpoints: etcdServers, prefix: str('kube-etcd-prefix') ?? '/registry', tls } });
    } else await moveHere(common);
    return 0;
  } catch (e) {
    report.info(`failed: ${(e as Error).message}`);
    return 1;
  } finally {
    process.off('SIGINT', onInterrupt);
    await kube?.close();
    await here?.close();
  }
}
