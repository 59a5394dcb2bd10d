/**
 * @module e2e/node/suite
 * What every real-node suite does the same way: say why it cannot run here, build the offline images, install the
 * chart with them, find a pod's server process, and end the node (its memory logged, its work folder removed unless
 * E2E_KEEP is set).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CHART_DIR, HA_VALUES_FILE } from '../../../src/manifests/deploy-files.js';
import { e2e } from '../harness/state.js';
import { chartValues, dataVolume, helmOnNode, nodeImages, nodeUnavailable, type NodeImages } from './clone.mjs';
import type { ExecResult, RealNode } from './real-node.mjs';

export { chartValues, dataVolume, nodeImages, type NodeImages };

const ROOT = resolve(import.meta.dirname, '../../..');

/** suiteUnavailable says why a real-node suite cannot run here (printed once, never a silent skip), or undefined. */
export function suiteUnavailable(suite: string): string | undefined {
  const why = nodeUnavailable();
  if (why) process.stderr.write(`[e2e] ${suite} suite SKIPPED: ${why}\n`);
  return why;
}

/** CHART is the repository's Helm chart, as a user installs it from a clone. */
export const CHART = join(ROOT, CHART_DIR);

/**
 * upgradeTag is a second tag of the offline server image (startRealNode's `tags`): an upgrade to it changes the
 * pod's image as a new release would, with nothing to pull.
 */
export const upgradeTag = (images: NodeImages) => `${images.websiteApiserver.ref.replace(/:([^:/]+)$/, ':next-$1')}`;

/** A chart as it was at an earlier commit of this repository, extracted to a folder. */
export interface EarlierChart {
  /** The chart's folder, and its HA values file, as that commit had them. */
  chart: string;
  haValues: string;
  /** The commit the chart was taken from, and the newest change to the chart after it (for the log). */
  commit: string;
}

/**
 * previousChart extracts the chart's previous version from git into dir: the chart as it was just before the newest
 * commit that changed it (so an upgrade from it crosses that change), as an operator upgrades from the release they
 * installed. It needs the repository's history (a clean clone has it); without it, it throws saying why.
 */
export function previousChart(dir: string): EarlierChart {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  let newest: string;
  try {
    newest = git('log', '-1', '--format=%H', '--', 'deploy/helm');
  } catch (e) {
    throw new Error(`the chart's previous version is read from git history, which this checkout lacks: ${(e as Error).message}`);
  }
  if (!newest) throw new Error('git history has no commit that changed deploy/helm: no previous chart to upgrade from');
  let before: string;
  try {
    before = git('log', '-1', '--format=%h', `${newest}^`);
  } catch {
    throw new Error(`the commit before ${newest.slice(0, 12)} (the chart's newest change) is not in this clone, a shallow one? The suite upgrades from it`);
  }
  const commit = `${before}, before ${git('log', '-1', '--format=%h (%ad) %s', '--date=short', newest).slice(0, 140)}`;
  const out = join(dir, 'previous-chart');
  mkdirSync(out, { recursive: true });
  const archive = execFileSync('git', ['archive', `${newest}^`, 'deploy/helm'], { cwd: ROOT, maxBuffer: 64 << 20 });
  execFileSync('tar', ['-x', '-C', out], { input: archive });
  const chart = join(out, CHART_DIR);
  const haValues = join(out, HA_VALUES_FILE);
  if (!existsSync(join(chart, 'Chart.yaml')) || !existsSync(haValues))
    throw new Error(`the commit before ${newest.slice(0, 12)} has no chart at ${CHART_DIR} with ${HA_VALUES_FILE}: no previous chart to upgrade from`);
  return { chart, haValues, commit };
}

/** helm runs the e2e helm against the node's kube-apiserver (clone.mjs's helmOnNode with the suite's binaries). */
export const helm = (node: RealNode, dir: string, args: string[], values?: { name: string; values: object; valueFiles?: string[] }): Promise<ExecResult> =>
  helmOnNode(node, e2e().binDir, dir, args, values);

/**
 * installChart installs the chart as manifests/README.md tells an operator to: the release namespace created first
 * with the Pod Security level "restricted" enforced (so the server's pods must pass it), then `helm install` of chart
 * (this repository's, unless another is given).
 */
export async function installChart(
  node: RealNode,
  dir: string,
  release: string,
  namespace: string,
  values: { values: object; valueFiles?: string[] },
  chart = CHART,
): Promise<void> {
  for (const args of [
    ['create', 'namespace', namespace],
    ['label', 'namespace', namespace, 'pod-security.kubernetes.io/enforce=restricted'],
  ]) {
    const r = await node.kubectl(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  }
  const r = await helm(node, dir, ['install', release, chart, '-n', namespace], { name: 'install', ...values });
  if (r.code !== 0) throw new Error(`helm install: ${r.stderr}${r.stdout}`);
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
