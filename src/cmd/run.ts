/**
 * @module cmd/run
 * run: options → data dir lock → certificates → lmdb storage → server → listen; resolves with a handle to stop it.
 */
import { isIP } from 'node:net';
import { ensureCertificates, type CertificateOptions } from '../certs/self-signed.js';
import type { SelfManagedTls } from '../cluster/self-managed-tls.js';
import { groupVersions } from '../discovery/discovery.js';
import { servedDefinitions } from '../registry/resource.js';
import { setupAccess } from '../cluster/access.js';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { LeaderElection } from '../controllers/leader-election.js';
import type { Manager } from '../controllers/manager.js';
import { kindControllers } from '../controllers/kind-controllers.js';
import type { Kind } from '../registry/kind-controller.js';
import { createLogger } from '../observability/logger.js';
import { createAuditor } from '../observability/audit.js';
import { kinds } from '../kinds/index.js';
import type { LoadedCrds } from '../kinds/crd/index.js';
import type { ShutdownReport } from '../server/graceful-shutdown.js';
import { storageChecks } from '../server/health.js';
import { createServer, type ApiServer } from '../server/server.js';
import { LmdbStorage } from '../storage/lmdb-storage.js';
import { monitorStore } from '../storage/lmdb-monitor.js';
import { lockDataDir, type DataDirLock, type LockHolder } from '../storage/data-dir-lock.js';
import type { Storage } from '../storage/interface.js';
import type { Logger } from 'pino';
import { readFileSync } from 'node:fs';
import type { Options } from './options.js';
import { installRejectionGuard } from './rejection-guard.js';

/** LEASE_NAME is the coordination.k8s.io Lease replicas compete for with --leader-elect. */
const LEASE_NAME = 'website-apiserver';

/** Running is a started server. */
export interface Running {
  url: string;
  server: ApiServer;
  /** stop shuts down gracefully as kube-apiserver does (server/graceful-shutdown.ts) and reports what it did. */
  stop(): Promise<ShutdownReport>;
}

// The kubeconfig must name an address a client can dial: a wildcard bind is reached through loopback.
function clientUrl(bindAddress: string, port: number): string {
  const host = bindAddress === '0.0.0.0' ? '127.0.0.1' : bindAddress === '::' ? '::1' : bindAddress;
  return `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

// openLmdb opens the embedded store in --data-dir.
function openLmdb(o: Options, logger: Logger): Storage {
  const storage: LmdbStorage = new LmdbStorage({
    path: o.dataDir,
    historyEvents: o.watchHistoryEvents,
    historyAgeMs: o.watchHistoryAgeMs,
    mapSize: o.lmdbMapSize,
    onWritableChange: (writable, cause) => {
      if (writable) logger.info({ dataDir: o.dataDir }, 'storage commits writes again');
      else if (storage.needsRestart())
        logger.fatal({ dataDir: o.dataDir, err: cause }, 'storage environment is fatal (MDB_PANIC): /livez fails, only a restart reopens it');
      else logger.error({ dataDir: o.dataDir, err: cause }, 'storage cannot commit writes: writes answer 503 and /readyz fails until one commits');
    },
  });
  return storage;
}

// openEtcd connects to --etcd-servers (loaded only then: the embedded default needs no gRPC).
async function openEtcd(o: Options, logger: Logger): Promise<Storage> {
  const { EtcdStorage } = await import('../storage/etcd-storage.js');
  const read = (f: string | undefined) => (f ? readFileSync(f) : undefined);
  const ca = read(o.etcdCaFile);
  const cert = read(o.etcdCertFile);
  const key = read(o.etcdKeyFile);
  const storage = await EtcdStorage.open({
    servers: [...o.etcdServers],
    prefix: o.etcdPrefix,
    historyEvents: o.watchHistoryEvents,
    tls: { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) },
  });
  logger.info({ servers: o.etcdServers, prefix: o.etcdPrefix, revision: storage.currentRevision() }, 'connected to etcd');
  return storage;
}

/**
 * run starts the server and returns once it listens; `served` is the kinds list (tests pass test-only kinds).
 * With lmdb it first locks --data-dir (storage/data-dir-lock), before anything is written (certificates, the audit
 * log) or the store opened: a second server on the directory throws DataDirInUse. The lock goes once the store is
 * closed, or when the start fails.
 */
export async function run(o: Options, served: readonly Kind[] = kinds): Promise<Running> {
  // CRD files are read and checked first: a CRD kube would refuse stops the start before anything is opened.
  // Loaded only with --crd: CRD checks bring CEL and its libraries, code a start without CRDs has no use for.
  const crds = o.crdPaths.length ? (await import('../kinds/crd/index.js')).loadCrds(o.crdPaths, served) : undefined;
  if (crds) served = [...served, ...crds.kinds];
  let stale: { holder: LockHolder | undefined } | undefined;
  const lock = o.storageBackend === 'lmdb' ? lockDataDir(o.dataDir, { onStale: (holder) => (stale = { holder }) }) : undefined;
  try {
    return await start(o, served, lock, stale, crds);
  } catch (e) {
    lock?.release();
    throw e;
  }
}

async function start(
  o: Options,
  served: readonly Kind[],
  lock: DataDirLock | undefined,
  stale: { holder: LockHolder | undefined } | undefined,
  crds: LoadedCrds | undefined,
): Promise<Running> {
  const logger = createLogger(o.logLevel, o.logFormat);
  for (const w of crds?.warnings ?? []) logger.warn(w);
  for (const crd of crds?.crds ?? []) {
    logger.info({ crd: crd.metadata.name, versions: crd.spec.versions.filter((v) => v.served).map((v) => v.name) }, 'serving CustomResourceDefinition');
  }
  if (lock && stale)
    logger.warn({ dataDir: o.dataDir, lockFile: lock.path, staleHolder: stale.holder ?? 'unreadable' }, 'took over a stale data dir lock: its holder is gone');
  installRejectionGuard(logger);
  const certOpts: CertificateOptions = {
    certDir: o.certDir,
    extraSans: [...o.tlsSans],
    serverUrl: clientUrl(o.bindAddress, o.port),
    ...(o.tlsCertFile && o.tlsPrivateKeyFile ? { tlsCertFile: o.tlsCertFile, tlsKeyFile: o.tlsPrivateKeyFile } : {}),
  };
  const certs = ensureCertificates(certOpts);
  if (certs.generated.length) logger.info({ generated: certs.generated, reasons: certs.reasons, certDir: o.certDir }, 'certificates written');
  // An invalid audit policy stops the start, as it stops kube-apiserver's.
  const audit = await createAuditor(
    {
      policyFile: o.auditPolicyFile,
      log: o.auditLogPath ? { path: o.auditLogPath, maxSizeMB: o.auditLogMaxSize, maxBackups: o.auditLogMaxBackup, maxAgeDays: o.auditLogMaxAge } : undefined,
    },
    logger,
  );
  const access = await setupAccess({
    kubeconfig: o.kubeconfig,
    authenticationMode: o.authenticationMode,
    authorizationMode: o.authorizationMode,
    ownCA: certs.caCert,
    logger,
  });
  // --self-managed-tls: the serving certificate comes from the cluster Secret (and its CA goes into the kubeconfig).
  let selfTls: SelfManagedTls | undefined;
  let servingTls = { key: certs.servingKey, cert: certs.servingCert };
  let swapServing: ((key: string, cert: string) => void) | undefined;
  if (o.selfManagedTls) {
    if (!access.cluster) throw new Error('--self-managed-tls needs a cluster: pass --kubeconfig or run in a pod');
    const { startSelfManagedTls } = await import('../cluster/self-managed-tls.js');
    const smt = o.selfManagedTls;
    const apiServices = smt.apiServices.length ? [...smt.apiServices] : groupVersions(servedDefinitions(served)).map((gv) => `${gv.version}.${gv.group}`);
    const useSecret = (d: { 'tls.crt': string; 'tls.key': string; 'ca.crt': string }) => {
      certOpts.serving = { certPem: d['tls.crt'], keyPem: d['tls.key'], caPem: d['ca.crt'] };
      ensureCertificates(certOpts);
    };
    selfTls = await startSelfManagedTls({
      kc: access.cluster,
      namespace: smt.namespace,
      secretName: smt.secretName,
      apiServices,
      intervalMs: smt.checkIntervalMs,
      logger,
      onChange: (d) => {
        useSecret(d);
        swapServing?.(d['tls.key'], d['tls.crt']);
      },
    });
    const d = selfTls.current();
    useSecret(d);
    servingTls = { key: d['tls.key'], cert: d['tls.crt'] };
    logger.info({ secret: `${smt.namespace}/${smt.secretName}`, apiServices }, 'serving the certificate of the self-managed TLS Secret');
  }
  const storage = o.storageBackend === 'etcd' ? await openEtcd(o, logger) : openLmdb(o, logger);
  const storageHealth = storageChecks(storage);
  // Log lines for reads that fail and reader slots running out (the metrics show them too); off during a shutdown.
  const monitor = storage instanceof LmdbStorage ? monitorStore(storage, logger, { dataDir: o.dataDir }) : undefined;
  const server = createServer({
    tls: servingTls,
    storage,
    kinds: served,
    logger,
    watch: { bookmarkIntervalMs: o.watchBookmarkIntervalMs },
    shutdown: {
      delayMs: o.shutdownDelayMs,
      sendRetryAfter: o.shutdownSendRetryAfter,
      watchGraceMs: o.shutdownWatchTerminationGracePeriodMs,
      drainTimeoutMs: o.requestTimeoutMs,
    },
    timeouts: { requestTimeoutMs: o.requestTimeoutMs, readHeaderTimeoutMs: o.readHeaderTimeoutMs, keepAliveTimeoutMs: o.keepAliveTimeoutMs },
    http2: { enabled: o.enableHttp2, maxStreamsPerConnection: o.http2MaxStreamsPerConnection },
    authentication: access.authentication,
    authorizer: access.authorizer,
    admission: access.admission,
    readiness: [...access.readiness, storageHealth.ready, storageHealth.read],
    liveness: [storageHealth.live],
    audit,
    // No cluster: no reconciler (the server itself says so in each Website's status), and no kube-apiserver in front
    // to answer /api and namespace reads.
    ...(access.cluster ? {} : { standalone: true }),
  });
  swapServing = (key, cert) => server.setServingCertificate(key, cert);
  const waiting = setTimeout(() => logger.info('waiting for kube-system/extension-apiserver-authentication before serving'), 1000);
  await access.beforeServing.finally(() => clearTimeout(waiting));
  await server.app.listen({ port: o.port, host: o.bindAddress });
  const address = server.app.server.address();
  const port = typeof address === 'object' && address ? address.port : o.port;
  const url = clientUrl(o.bindAddress, port);
  // With --port 0 the real port is known only now: rewrite the kubeconfig to point at it.
  if (port !== o.port) ensureCertificates({ ...certOpts, serverUrl: url });
  logger.info(
    {
      url,
      kubeconfig: certs.kubeconfigPath,
      dataDir: o.dataDir,
      revision: storage.currentRevision(),
      watchHistoryFrom: storage.compactedRevision(),
      // From the process's start to listening: what a restarted pod's start costs the API.
      startupMs: Math.round(process.uptime() * 1000),
    },
    'serving',
  );
  logger.info(access.describe, 'access');
  const cluster = access.cluster;
  // With a cluster every kind's controllers run, without one those that need none (controllers/kind-controllers.ts).
  const { controllers, off } = await kindControllers(served, { cluster, enabled: o.enableReconcilers, storeOf: (k) => server.storeOf(k), flags: o.kindFlags });
  for (const c of off) logger.info({ controller: c.controller, kind: c.kind }, `controller off: ${c.why}`);
  let manager: Manager | undefined;
  // Loaded only when something runs: the manager, and leader election (with a cluster).
  const managerModule = controllers.length ? await import('../controllers/manager.js') : undefined;
  const electionModule = cluster && controllers.length && o.leaderElect ? await import('../controllers/leader-election.js') : undefined;
  const startReconcilers = () =>
    managerModule?.startManager({
      storage,
      controllers,
      cluster,
      maxConcurrentReconciles: o.maxConcurrentReconciles,
      resyncPeriodMs: o.resyncPeriodMs,
      registry: server.registry,
      logger,
    });
  let election: LeaderElection | undefined;
  if (cluster && electionModule) {
    const lease = { namespace: o.leaderElectNamespace, name: LEASE_NAME, identity: `${hostname()}_${randomUUID()}` };
    election = electionModule.startLeaderElection({
      kc: cluster,
      ...lease,
      logger: logger.child({ subsystem: 'leader-election' }),
      onStartedLeading: () => {
        logger.info(lease, 'leading: reconcilers started');
        manager = startReconcilers();
      },
      onStoppedLeading: () => {
        logger.info(lease, 'not leading: reconcilers stopped');
        const m = manager;
        manager = undefined;
        void m?.stop();
      },
    });
  } else if (controllers.length) {
    manager = startReconcilers();
  }
  const stop = async () => {
    monitor?.stop();
    selfTls?.stop();
    // kube's pre-shutdown hooks, run during the shutdown delay: drain the reconcilers before the Lease is released,
    // so no reconcile runs once another replica may lead (they write to the storage, which is still open).
    const preShutdown = async () => {
      const m = manager;
      manager = undefined;
      if (m) await m.stop();
      if (election) await election.stop();
    };
    const report = await server.shutdown(preShutdown);
    // The store is closed: another server may open the data dir.
    lock?.release();
    // Requests in flight still needed the delegated authentication and the namespace cache.
    await access.stop();
    return report;
  };
  return { url, server, stop };
}
