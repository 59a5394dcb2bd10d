/**
 * @module cluster/connection
 * Which cluster, if any, this server belongs to: `--kubeconfig`, else the in-cluster service account, else none
 * (standalone). Delegated authentication, authorization and namespace lifecycle all talk to that cluster.
 */
import { existsSync } from 'node:fs';
import type { KubeConfig } from '@kubernetes/client-node';

const SA_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** inCluster tells whether the process runs in a pod with a service account. */
export const inCluster = (env: NodeJS.ProcessEnv = process.env) => !!env['KUBERNETES_SERVICE_HOST'] && existsSync(SA_TOKEN);

/**
 * loadClusterConfig returns the cluster's KubeConfig, or undefined in standalone mode. The client library is
 * loaded only when there is a cluster: importing it takes about 0.7 s, most of a standalone cold start.
 */
export async function loadClusterConfig(kubeconfigPath: string | undefined): Promise<KubeConfig | undefined> {
  if (!kubeconfigPath && !inCluster()) return undefined;
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  if (kubeconfigPath) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromCluster();
  return kc;
}
