/**
 * @module cluster/authentication-config
 * Follows kube-system/extension-apiserver-authentication, where kube-apiserver publishes the CA for ordinary
 * client certificates and the front-proxy (request-header) settings aggregated servers must use
 * (k8s.io/apiserver pkg/server/options/authentication.go, headerrequest/requestheader_controller.go). Lists are
 * JSON arrays in string values. Every change is applied at once: rotating a CA needs no restart.
 */
import { CoreV1Api, type KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { CertificatePool } from '../auth/x509.js';
import type { AuthConfigSource, DelegatedAuthConfig } from '../auth/delegated-config.js';
import { startInformer, type RunningInformer } from './informer.js';

export const AUTH_CONFIGMAP_NAMESPACE = 'kube-system';
export const AUTH_CONFIGMAP_NAME = 'extension-apiserver-authentication';

function stringList(data: Record<string, string>, key: string): string[] {
  const raw = data[key];
  if (raw === undefined || raw === '') return [];
  const parsed: unknown = JSON.parse(raw);
  if (!Array.isArray(parsed) || !parsed.every((v) => typeof v === 'string')) throw new Error(`${key}: not a JSON array of strings`);
  return parsed;
}

/** parseAuthConfig reads the configmap's data; it throws on malformed values. */
export function parseAuthConfig(data: Record<string, string>): DelegatedAuthConfig {
  const clientCA = new CertificatePool(data['client-ca-file'] ? [data['client-ca-file']] : []);
  const rhCA = data['requestheader-client-ca-file'];
  const requestHeader = rhCA
    ? {
        ca: new CertificatePool([rhCA]),
        allowedNames: stringList(data, 'requestheader-allowed-names'),
        usernameHeaders: stringList(data, 'requestheader-username-headers'),
        uidHeaders: stringList(data, 'requestheader-uid-headers'),
        groupHeaders: stringList(data, 'requestheader-group-headers'),
        extraHeaderPrefixes: stringList(data, 'requestheader-extra-headers-prefix'),
      }
    : undefined;
  return { clientCA, requestHeader };
}

/** followAuthConfig starts an informer on the configmap. */
export function followAuthConfig(kc: KubeConfig, logger: Logger): AuthConfigSource {
  const core = kc.makeApiClient(CoreV1Api);
  const listeners: ((cfg: DelegatedAuthConfig) => void)[] = [];
  let current: DelegatedAuthConfig | undefined;
  let lastRV = '';
  let resolveLoaded!: () => void;
  const whenLoaded = new Promise<void>((r) => (resolveLoaded = r));
  const apply = (cm: V1ConfigMap) => {
    if (cm.metadata?.name !== AUTH_CONFIGMAP_NAME || cm.metadata.resourceVersion === lastRV) return;
    lastRV = cm.metadata.resourceVersion ?? '';
    try {
      current = parseAuthConfig(cm.data ?? {});
    } catch (e) {
      logger.error({ err: (e as Error).message }, `${AUTH_CONFIGMAP_NAMESPACE}/${AUTH_CONFIGMAP_NAME} is malformed; keeping the previous settings`);
      return;
    }
    logger.info(
      { clientCAs: current.clientCA.size, requestHeaderCAs: current.requestHeader?.ca.size ?? 0, allowedNames: current.requestHeader?.allowedNames },
      'delegated authentication settings loaded',
    );
    resolveLoaded();
    for (const l of listeners) l(current);
  };
  const informer: RunningInformer<V1ConfigMap> = startInformer<V1ConfigMap>({
    kc,
    name: 'extension-apiserver-authentication',
    path: `/api/v1/namespaces/${AUTH_CONFIGMAP_NAMESPACE}/configmaps`,
    fieldSelector: `metadata.name=${AUTH_CONFIGMAP_NAME}`,
    list: () => core.listNamespacedConfigMap({ namespace: AUTH_CONFIGMAP_NAMESPACE, fieldSelector: `metadata.name=${AUTH_CONFIGMAP_NAME}` }),
    logger,
    onChange: apply,
  });
  return {
    current: () => current,
    onChange: (cb) => listeners.push(cb),
    loaded: () => current !== undefined,
    whenLoaded,
    stop: () => informer.stop(),
  };
}
