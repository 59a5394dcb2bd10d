/**
 * @module e2e/harness/reconcilers
 * The reconciler suites run our server with its reconcilers on (and leader election, as the manifests do); every
 * other suite runs it with them off. These restart the shared server either way, on the same port and data.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APISERVICE_NAMES } from '../../../src/manifests/render.js';
import { kubectlOk, waitFor } from './kubectl.js';
import type { E2EState } from './state.js';
import { startWebsiteServer, stopWebsiteServer } from './website-server.js';

async function restart(env: E2EState, args: string[]): Promise<void> {
  await stopWebsiteServer(env.website.pidFile);
  await startWebsiteServer({ args, logFile: env.website.logFile, pidFile: env.website.pidFile, url: env.website.url });
  await waitFor(
    'APIService Available and websites reachable',
    async () => {
      const list = JSON.parse(await kubectlOk(env.kubeconfig.admin, ['get', 'apiservice', ...APISERVICE_NAMES, '-o', 'json']));
      const available = (o: any) => o.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Available' && c.status === 'True');
      if (list.items.length !== APISERVICE_NAMES.length || !list.items.every(available)) return false;
      await kubectlOk(env.kubeconfig.admin, ['get', 'websites', '-A', '-o', 'name']);
      return true;
    },
    60_000,
    200,
  );
  await waitForDiscovery(env);
}

/**
 * waitForDiscovery: kube-apiserver drops the group from its aggregated discovery while the APIService is unavailable
 * and adds it back a moment after; a kubectl with a fresh discovery cache (as the next test file uses) must find it.
 */
export async function waitForDiscovery(env: E2EState): Promise<void> {
  await waitFor(
    'websites in fresh discovery',
    async () => {
      const cache = mkdtempSync(join(tmpdir(), 'e2e-discovery-'));
      try {
        return (await kubectlOk(env.kubeconfig.admin, ['api-resources', '--api-group=extensions.example.com', '--cache-dir', cache])).includes('websites');
      } finally {
        rmSync(cache, { recursive: true, force: true });
      }
    },
    60_000,
    250,
  );
}

/**
 * reconcilerArgs are the shared server's arguments with the reconcilers on, under leader election unless
 * `leaderElect` is false (a leader cut off from the cluster for longer than the renew deadline stops reconciling,
 * which the outage test must not mistake for backoff).
 */
export const reconcilerArgs = (env: E2EState, leaderElect = true) => [
  ...env.website.args.filter((a) => a !== '--enable-reconcilers=false'),
  '--enable-reconcilers=true',
  ...(leaderElect ? ['--leader-elect=true', '--leader-elect-namespace', env.namespace] : []),
  // Debug logs carry one `reconcile done` line per run, with its start and length (the fault test reads them).
  '--log-level',
  'debug',
];

/** reconcilersOn restarts the shared server with its reconcilers on. */
export const reconcilersOn = (env: E2EState, opts: { leaderElect?: boolean } = {}) => restart(env, reconcilerArgs(env, opts.leaderElect ?? true));

/** reconcilersOff restarts it as the global setup started it. */
export const reconcilersOff = (env: E2EState) => restart(env, env.website.args);
