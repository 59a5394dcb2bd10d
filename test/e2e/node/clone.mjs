/**
 * @module e2e/node/repo-images
 * What every user of the real node in this repository finds the same way, for the suites (suite.ts) and for the
 * demo (../demo.mjs) alike: why the node cannot run here, and the offline images built from this clone.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildNodeImages } from './images.mjs';
import { realNodeUnavailable } from './real-node.mjs';

const ROOT = resolve(import.meta.dirname, '../../..');
// git-sync's sources ship beside the repository (the module proxy here refuses k8s.io/git-sync).
export const GIT_SYNC_SRC = resolve(ROOT, '../shared/third_party/git-sync-v4.4.0');

/**
 * nodeUnavailable says why a real node (with git-sync) cannot run here, or undefined when it can.
 * @returns {string | undefined}
 */
export function nodeUnavailable() {
  return realNodeUnavailable() ?? (existsSync(join(GIT_SYNC_SRC, 'go.mod')) ? undefined : `no git-sync sources at ${GIT_SYNC_SRC}`);
}

/**
 * repoNodeImages builds (or takes from .cache/e2e-images) pause, nginx, git-sync and website-apiserver.
 * @param {(m: string) => void} log
 */
export async function repoNodeImages(log) {
  const kubernetesModuleDir = JSON.parse(
    execFileSync('go', ['mod', 'download', '-json', 'k8s.io/kubernetes'], {
      cwd: join(ROOT, 'test/e2e/go/k8s'),
      encoding: 'utf8',
      env: { ...process.env, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local', GONOSUMDB: '*' },
    }),
  ).Dir;
  return buildNodeImages({ cacheDir: join(ROOT, '.cache', 'e2e-images'), kubernetesModuleDir, gitSyncSourceDir: GIT_SYNC_SRC, log });
}
