/**
 * @module auth/delegated-config
 * The delegated authentication settings as authentication consumes them: the client CA and the front-proxy
 * (request header) trust that kube-system/extension-apiserver-authentication publishes. The cluster layer follows
 * that configmap and hands them over through an AuthConfigSource.
 */
import type { RequestHeaderConfig } from './request-header.js';
import type { CertificatePool } from './x509.js';

/** DelegatedAuthConfig is what the configmap says. */
export interface DelegatedAuthConfig {
  clientCA: CertificatePool;
  requestHeader: RequestHeaderConfig | undefined;
}

/** AuthConfigSource is the followed configmap. */
export interface AuthConfigSource {
  current(): DelegatedAuthConfig | undefined;
  onChange(cb: (cfg: DelegatedAuthConfig) => void): void;
  loaded(): boolean;
  whenLoaded: Promise<void>;
  stop(): Promise<void>;
}
