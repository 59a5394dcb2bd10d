/**
 * @module cluster/access
 * Chooses and assembles authentication, authorization and namespace admission from the options: standalone (our
 * own CA; every authenticated user allowed) or delegated to the cluster (--kubeconfig or in-cluster config).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { delegatedAuthentication, standaloneAuthentication, type Authentication } from '../auth/authentication.js';
import { allowAuthenticated, delegatingAuthorizer, type Authorizer } from '../auth/authorizer.js';
import { cachedTokenReview } from '../auth/token-review.js';
import type { CreateAdmission } from '../registry/store.js';
import type { HealthCheck } from '../server/health.js';
import { loadClusterConfig } from './connection.js';

/** AccessMode picks standalone or delegated authentication/authorization; auto = delegated when a cluster is configured. */
export type AccessMode = 'auto' | 'standalone' | 'delegated';
/** Access is everything the server needs to decide who a caller is and what it may do. */
export interface Access {
  authentication: Authentication;
  authorizer: Authorizer;
  admission: CreateAdmission | undefined;
  readiness: HealthCheck[];
  /**
   * beforeServing resolves once the delegated settings are loaded. The server listens only then: the CAs a TLS
   * handshake offers and verifies against are fixed per connection, so a front-proxy connection accepted earlier
   * would stay unauthenticated for as long as the proxy keeps it alive.
   */
  beforeServing: Promise<void>;
  /** The cluster, when there is one (the reconcilers of a later issue use it too). */
  cluster: KubeConfig | undefined;
  describe: { authentication: 'standalone' | 'delegated'; authorization: 'standalone' | 'delegated'; cluster: string | undefined };
  stop(): Promise<void>;
}

export interface AccessOptions {
  kubeconfig: string | undefined;
  authenticationMode: AccessMode;
  authorizationMode: AccessMode;
  ownCA: string;
  logger: Logger;
}

/**
 * setupAccess resolves the modes and starts what delegation needs (configmap and namespace informers). The
 * delegation modules (and the client library under them) are loaded only when there is a cluster.
 */
export async function setupAccess(o: AccessOptions): Promise<Access> {
  const kc = await loadClusterConfig(o.kubeconfig);
  const resolve = (m: AccessMode) => (m === 'auto' ? (kc ? 'delegated' : 'standalone') : m);
  const authnMode = resolve(o.authenticationMode);
  const authzMode = resolve(o.authorizationMode);
  if (!kc && (authnMode === 'delegated' || authzMode === 'delegated')) {
    throw new Error('delegated authentication or authorization needs a cluster: pass --kubeconfig or run in a pod');
  }
  const stops: (() => Promise<void>)[] = [];
  const readiness: HealthCheck[] = [];
  let authentication: Authentication = standaloneAuthentication(o.ownCA);
  let authorizer: Authorizer = allowAuthenticated;
  let admission: CreateAdmission | undefined;
  let beforeServing = Promise.resolve();
  if (kc) {
    const [{ followAuthConfig }, { namespaceLifecycle }, { accessReviewer, tokenReviewer }] = await Promise.all([
      import('./authentication-config.js'),
      import('./namespace-lifecycle.js'),
      import('./reviews.js'),
    ]);
    const log = o.logger.child({ subsystem: 'delegation' });
    if (authnMode === 'delegated') {
      const source = followAuthConfig(kc, log);
      stops.push(source.stop);
      readiness.push({ name: 'delegated-authentication-config', check: source.loaded });
      beforeServing = source.whenLoaded;
      const review = cachedTokenReview(tokenReviewer(kc));
      authentication = delegatedAuthentication(o.ownCA, source, async (token) => {
        try {
          return await review(token);
        } catch (e) {
          // As kube's union authenticator: a failing TokenReview is a 401 for this request (and is not cached).
          log.error({ err: (e as Error).message }, 'TokenReview failed');
          return undefined;
        }
      });
    }
    if (authzMode === 'delegated') authorizer = delegatingAuthorizer(accessReviewer(kc));
    const namespaces = namespaceLifecycle(kc, log);
    stops.push(namespaces.stop);
    readiness.push({ name: 'namespace-informer-synced', check: namespaces.synced });
    admission = namespaces;
  }
  return {
    authentication,
    authorizer,
    admission,
    readiness,
    beforeServing,
    cluster: kc,
    describe: { authentication: authnMode, authorization: authzMode, cluster: kc?.getCurrentCluster()?.server },
    async stop() {
      await Promise.all(stops.map((s) => s()));
    },
  };
}
