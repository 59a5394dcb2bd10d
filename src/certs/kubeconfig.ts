/**
 * @module certs/kubeconfig
 * renderKubeconfig: a single-cluster kubeconfig that authenticates with an embedded client certificate.
 */
import { stringify } from 'yaml';

/** KubeconfigInput is what renderKubeconfig needs; all PEM values are embedded, not referenced by path. */
export interface KubeconfigInput {
  /** server is the API server URL, e.g. `https://127.0.0.1:8443`. */
  server: string;
  /** caPem is the PEM bundle kubectl uses to verify the serving certificate. */
  caPem: string;
  /** clientCertPem is the client certificate presented to the server. */
  clientCertPem: string;
  /** clientKeyPem is the private key of clientCertPem. */
  clientKeyPem: string;
  /** name is used for the cluster, user and context entries; defaults to `website-apiserver`. */
  name?: string;
}

/** DEFAULT_KUBECONFIG_NAME names the cluster, user and context when no name is given. */
export const DEFAULT_KUBECONFIG_NAME = 'website-apiserver';

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/**
 * renderKubeconfig returns kubeconfig YAML with one cluster, user and context (all sharing one name)
 * and `current-context` pointing at it. The output is deterministic for the same input, so callers can
 * compare it with the file on disk to decide whether to rewrite it.
 */
export function renderKubeconfig(o: KubeconfigInput): string {
  const name = o.name ?? DEFAULT_KUBECONFIG_NAME;
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: o.server, 'certificate-authority-data': b64(o.caPem) } }],
    users: [
      {
        name,
        user: { 'client-certificate-data': b64(o.clientCertPem), 'client-key-data': b64(o.clientKeyPem) },
      },
    ],
    contexts: [{ name, context: { cluster: name, user: name } }],
    'current-context': name,
    preferences: {},
  };
  // lineWidth 0: never fold the long base64 strings.
  return stringify(config, { lineWidth: 0 });
}
