/**
 * @module e2e/harness/state
 * What the global setup started, shared with every test file. Immutable facts are provided through vitest's
 * `inject('e2e')`; the server's pid lives in a file because a test may restart the server.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { inject } from 'vitest';

/** E2EState is the running control plane plus our server registered behind it. */
export interface E2EState {
  dir: string;
  binDir: string;
  kubernetesVersion: string;
  /** kube-apiserver */
  server: string;
  /** kube-apiserver's etcd (plain HTTP on loopback; prefix /registry). */
  etcdUrl: string;
  caFile: string;
  kubeconfig: { admin: string; viewer: string; nobody: string; websiteServer: string };
  tokens: { admin: string; viewer: string; nobody: string };
  frontProxy: { caFile: string; certFile: string; keyFile: string };
  website: {
    port: number;
    url: string;
    /** CA of the serving certificate (the APIService caBundle). */
    servingCAFile: string;
    /** Our own CA dir: admin.crt/admin.key (system:masters) still work in delegated mode. */
    certDir: string;
    dataDir: string;
    logFile: string;
    pidFile: string;
    args: string[];
  };
  manifestsDir: string;
  namespace: string;
  /**
   * The TCP proxy our server's kubeconfig points at instead of kube-apiserver (fault-proxy.mjs): POST
   * `${controlUrl}/block` and `/unblock`, GET `/stats`. Only our server's calls to the cluster pass through it.
   */
  faultProxy: { controlUrl: string; logFile: string };
}

declare module 'vitest' {
  export interface ProvidedContext {
    e2e: E2EState;
  }
}

/** e2e returns the shared state inside a test file. */
export const e2e = (): E2EState => inject('e2e');

export const readPid = (pidFile: string) => Number(readFileSync(pidFile, 'utf8').trim());
export const writePid = (pidFile: string, pid: number) => writeFileSync(pidFile, `${pid}\n`);
