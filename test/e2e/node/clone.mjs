/**
 * @module e2e/node/clone
 * What the real-node suites (suite.ts) and the demo (../demo.mjs) take from this clone the same way: why a node
 * cannot run here, the offline images built from it, the chart's values for those images, helm run against the node,
 * and the volume the chart's lmdb claim binds to.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildNodeImages } from './images.mjs';
import { realNodeUnavailable } from './real-node.mjs';

const ROOT = resolve(import.meta.dirname, '../../..');
// git-sync's sources ship beside the repository (the module proxy here refuses k8s.io/git-sync).
const GIT_SYNC_SRC = resolve(ROOT, '../shared/third_party/git-sync-v4.4.0');

/**
 * nodeUnavailable says why a real node (with git-sync) cannot run here, or undefined when it can.
 * @returns {string | undefined}
 */
export function nodeUnavailable() {
  return realNodeUnavailable() ?? (existsSync(join(GIT_SYNC_SRC, 'go.mod')) ? undefined : `no git-sync sources at ${GIT_SYNC_SRC}`);
}

/**
 * nodeImages builds (or takes from .cache/e2e-images) pause, nginx, git-sync and website-apiserver.
 * @param {(m: string) => void} log
 */
export async function nodeImages(log) {
  const kubernetesModuleDir = JSON.parse(
    execFileSync('go', ['mod', 'download', '-json', 'k8s.io/kubernetes'], {
      cwd: join(ROOT, 'test/e2e/go/k8s'),
      encoding: 'utf8',
      env: { ...process.env, GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local', GONOSUMDB: '*' },
    }),
  ).Dir;
  return buildNodeImages({ cacheDir: join(ROOT, '.cache', 'e2e-images'), kubernetesModuleDir, gitSyncSourceDir: GIT_SYNC_SRC, log });
}

/** @typedef {Awaited<ReturnType<typeof nodeImages>>} NodeImages */

/**
 * chartValues are the chart's values for the offline images: the server's image as `image` (ref, or another tag of
 * it) and the images of the Websites' pods as extraArgs, followed by `moreArgs`.
 * @param {NodeImages} images
 * @param {{ref?: string, moreArgs?: string[]}} [o]
 */
export function chartValues(images, o = {}) {
  const ref = o.ref ?? images.websiteApiserver.ref;
  const colon = ref.lastIndexOf(':');
  return {
    image: { repository: ref.slice(0, colon), tag: ref.slice(colon + 1) },
    extraArgs: [`--nginx-image=${images.nginx.ref}`, `--git-sync-image=${images.gitSync.ref}`, ...(o.moreArgs ?? [])],
  };
}

/**
 * helmOnNode runs binDir's helm against the node's kube-apiserver (inside the sandbox's network namespace). Values
 * are written to a file under dir (JSON is YAML) and passed with -f after `valueFiles`; helm's cache and config stay
 * under dir, not in the home folder.
 * @param {import('./real-node.mjs').RealNode} node
 * @param {string} binDir
 * @param {string} dir
 * @param {string[]} args
 * @param {{name: string, values: object, valueFiles?: string[]}} [values]
 * @returns {Promise<import('./real-node.mjs').ExecResult>}
 */
export function helmOnNode(node, binDir, dir, args, values) {
  const files = [...(values?.valueFiles ?? [])];
  if (values) {
    const f = join(dir, `${values.name}.values.json`);
    writeFileSync(f, JSON.stringify(values.values, null, 2));
    files.push(f);
  }
  const home = (/** @type {string} */ what) => `HELM_${what.toUpperCase()}_HOME=${join(dir, 'helm', what)}`;
  return node.exec(
    'env',
    [home('cache'), home('config'), home('data'), join(binDir, 'helm'), '--kubeconfig', node.state.kubeconfig, ...args, ...files.flatMap((f) => ['-f', f])],
    { timeoutMs: 300_000 },
  );
}

/**
 * dataVolume is the stand-in for a storage class, for the chart's lmdb claim: this cluster has no default
 * StorageClass, so a hostPath PersistentVolume under dir, with no class, is what the claim (no class either) binds to.
 * @param {import('./real-node.mjs').RealNode} node
 * @param {string} dir
 */
export async function dataVolume(node, dir) {
  const path = join(dir, 'pv');
  mkdirSync(path, { recursive: true });
  chmodSync(path, 0o777); // the server runs as a non-root uid; fsGroup does not apply to hostPath
  const pv = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'website-apiserver-data' },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      hostPath: { path, type: 'Directory' },
    },
  };
  const r = await node.kubectl(['apply', '-f', '-'], { input: JSON.stringify(pv) });
  if (r.code !== 0) throw new Error(`kubectl apply of the PersistentVolume: ${r.stderr}`);
}
