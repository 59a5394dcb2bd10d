/**
 * @module e2e/node/suite
 * What every real-node suite does the same way: say why it cannot run here, build the offline images, install the
 * chart with them, find a pod's server process, and end the node (its memory logged, its work folder removed unless
 * E2E_KEEP is set).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CHART_DIR } from '../../../src/manifests/deploy-files.js';
import { e2e } from '../harness/state.js';
import { buildNodeImages } from './images.mjs';
import { realNodeUnavailable, type ExecResult, type RealNode } from './real-node.mjs';

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

/** CHART is the repository's Helm chart, as a user installs it from a clone. */
export const CHART = join(ROOT, CHART_DIR);

/** NodeImages is what nodeImages resolves to. */
export type NodeImages = Awaited<ReturnType<typeof nodeImages>>;

/**
 * upgradeTag is a second tag of the offline server image (startRealNode's `tags`): an upgrade to it changes the
 * pod's image as a new release would, with nothing to pull.
 */
export const upgradeTag = (images: NodeImages) => `${images.websiteApiserver.ref.replace(/:([^:/]+)$/, ':next-$1')}`;

/**
 * chartValues are the chart's values for the offline images: the server's image as `image` (ref, or another tag of
 * it) and the images of the Websites' pods as extraArgs, followed by `moreArgs`.
 */
export function chartValues(images: NodeImages, o: { ref?: string; moreArgs?: string[] } = {}) {
  const ref = o.ref ?? images.websiteApiserver.ref;
  const colon = ref.lastIndexOf(':');
  return {
    image: { repository: ref.slice(0, colon), tag: ref.slice(colon + 1) },
    extraArgs: [`--nginx-image=${images.nginx.ref}`, `--git-sync-image=${images.gitSync.ref}`, ...(o.moreArgs ?? [])],
  };
}

/**
 * helm runs the e2e helm against the node's kube-apiserver (inside the sandbox's network namespace). Values are
 * written to a file under dir (JSON is YAML) and passed with -f after `valueFiles`; helm's cache and config stay
 * under dir, not in the home folder.
 */
export function helm(node: RealNode, dir: string, args: string[], values?: { name: string; values: object; valueFiles?: string[] }): Promise<ExecResult> {
  const files = [...(values?.valueFiles ?? [])];
  if (values) {
    const f = join(dir, `${values.name}.values.json`);
    writeFileSync(f, JSON.stringify(values.values, null, 2));
    files.push(f);
  }
  const home = (what: string) => `HELM_${what.toUpperCase()}_HOME=${join(dir, 'helm', what)}`;
  return node.exec(
    'env',
    [
      home('cache'),
      home('config'),
      home('data'),
      join(e2e().binDir, 'helm'),
      '--kubeconfig',
      node.state.kubeconfig,
      ...args,
      ...files.flatMap((f) => ['-f', f]),
    ],
    { timeoutMs: 300_000 },
  );
}

/**
 * hostPidOf finds the server's process of a pod as the host sees it (the sandbox's PID namespace is a child of the
 * host's): the node process whose environment names the pod as its hostname.
 */
export function hostPidOf(podName: string): number {
  const found: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/comm`, 'utf8').trim() !== 'node') continue;
      if (readFileSync(`/proc/${e}/environ`, 'utf8').split('\0').includes(`HOSTNAME=${podName}`)) found.push(Number(e));
    } catch {
      /* exited meanwhile */
    }
  }
  if (found.length !== 1) throw new Error(`expected one server process for pod ${podName}, found ${JSON.stringify(found)}`);
  return found[0] as number;
}

/** argsOf is the command line a pod's server process runs with (what the container really got, not the pod spec). */
export const argsOf = (podName: string) =>
  readFileSync(`/proc/${hostPidOf(podName)}/cmdline`, 'utf8')
    .split('\0')
    .filter(Boolean);

/** endNode stops the node and removes the suite's work folder (kept, and named, with E2E_KEEP). */
export async function endNode(node: RealNode | undefined, dir: string | undefined, log: (m: string) => void): Promise<void> {
  if (node) {
    log(`resident memory (MiB) at the end: ${JSON.stringify(node.rssMiB())}`);
    await node.stop();
  }
  if (dir && !process.env['E2E_KEEP']) rmSync(dir, { recursive: true, force: true });
  else if (dir) log(`kept ${dir}`);
}
