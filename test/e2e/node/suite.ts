/**
 * @module e2e/node/suite
 * What every real-node suite does the same way: say why it cannot run here, build the offline images, and end the
 * node (its memory logged, its work folder removed unless E2E_KEEP is set).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildNodeImages } from './images.mjs';
import { realNodeUnavailable, type RealNode } from './real-node.mjs';

const ROOT = resolve(import.meta.dirname, '../../..');
// git-sync's sources ship beside the repository (the module proxy here refuses k8s.io/git-sync).
const GIT_SYNC_SRC = resolve(ROOT, '../shared/third_party/git-sync-v4.4.0');

/** suiteUnavailable says why a real-node suite cannot run here (printed once, never a silent skip), or undefined. */
export function suiteUnavailable(suite: string): string | undefined {
  const why = realNodeUnavailable() ?? (existsSync(join(GIT_SYNC_SRC, 'go.mod')) ? undefined : `no git-sync sources at ${GIT_SYNC_SRC}`);
  if (why) process.stderr.write(`[e2e] ${suite} suite SKIPPED: ${why}\n`);
  return why;
}

/** nodeImages builds (or takes from .cache/e2e-images) pause, nginx, git-sync and website-apiserver. */
export async function nodeImages(log: (m: string) => void) {
  const kubernetesModuleDir = JSON.parse(
    execFileSync('go', ['mod', 'download', '-json', 'k8s.io/kubernetes'], {
      cwd: join(ROOT, 'test/e2e/go/k8s'),
      encoding: 'utf8',
      env: { ...process.env, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local', GONOSUMDB: '*' },
    }),
  ).Dir as string;
  return buildNodeImages({ cacheDir: join(ROOT, '.cache', 'e2e-images'), kubernetesModuleDir, gitSyncSourceDir: GIT_SYNC_SRC, log });
}

/** endNode stops the node and removes the suite's work folder (kept, and named, with E2E_KEEP). */
export async function endNode(node: RealNode | undefined, dir: string | undefined, log: (m: string) => void): Promise<void> {
  if (node) {
    log(`resident memory (MiB) at the end: ${JSON.stringify(node.rssMiB())}`);
    await node.stop();
  }
  if (dir && !process.env['E2E_KEEP']) rmSync(dir, { recursive: true, force: true });
  else if (dir) log(`kept ${dir}`);
}
