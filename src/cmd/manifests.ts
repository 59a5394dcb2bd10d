#!/usr/bin/env node
/**
 * @module cmd/manifests
 * `npm run manifests -- [--namespace NS] [--out DIR] [--image IMG] [--storage-backend etcd --etcd-servers URL[,URL]
 * [--etcd-prefix P] [--etcd-tls | --etcd-client-secret NAME] [--replicas N]] [--crd PATH]... [--no-crd-apiservices] [--force]`: writes the
 * deployment manifests and the serving certificate (Secret + APIService with caBundle) into a directory.
 *
 * Without --namespace it refreshes the repository's manifests/ (the committed files plus the git-ignored
 * serving-certificate file). Another namespace, the etcd backend, more than one replica or CRD files need --out, so
 * the committed files stay the lmdb bundle of Website alone for the default namespace.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { kinds } from '../kinds/index.js';
import { readCrdFiles, type CrdBundle } from '../manifests/crd-files.js';
import { writeManifests } from '../manifests/generate.js';
import { writeDeployFiles } from '../manifests/deploy-files.js';
import {
  CRD_FILE,
  CRD_MOUNT_DIR,
  DEFAULT_ETCD_CLIENT_SECRET_NAME,
  DEFAULT_ETCD_PREFIX,
  DEFAULT_IMAGE,
  DEFAULT_NAMESPACE,
  ETCD_CLIENT_SECRET_KEYS,
  SERVING_CERTIFICATE_FILE,
  storageProblem,
  validateNamespace,
  type StorageOptions,
} from '../manifests/render.js';

// dist/cmd/manifests.js → <package root>/manifests, independent of the working directory.
const REPO_MANIFESTS = fileURLToPath(new URL('../../manifests/', import.meta.url));

// The kinds' controller flags (--nginx-image, --git-sync-image): set here, they are passed to the server.
const KIND_FLAGS = kinds.flatMap((k) => k.controllers?.flags ?? []);

const USAGE = `Usage: npm run manifests -- [--namespace NS] [--out DIR] [--image IMG] ${KIND_FLAGS.map((f) => `[--${f.name} VALUE]`).join(' ')}
                             [--image-pull-policy P] [--storage-class NAME] [--data-volume-size SIZE]
                             [--storage-backend etcd --etcd-servers URL[,URL] [--etcd-prefix P]
                              [--etcd-tls | --etcd-client-secret NAME] [--replicas N]]
                             [--crd PATH]... [--no-crd-apiservices] [--force]

Writes the Kubernetes manifests of website-apiserver and its serving certificate, then:
  kubectl apply -f <DIR>/

  --namespace NS  namespace to install into (default ${DEFAULT_NAMESPACE}); any other needs --out
  --out DIR       output directory (default: the repository's manifests/)
  --image IMG     container image (default ${DEFAULT_IMAGE})
${KIND_FLAGS.map((f) => `  --${f.name} VALUE\n                  ${f.help} (default: the server's, ${f.default})`).join('\n')}
  --image-pull-policy P
                  Always, IfNotPresent (default) or Never
  --storage-class NAME
                  storage class of the lmdb data volume (default: the cluster's default class)
  --data-volume-size SIZE
                  size of the lmdb data volume (default 1Gi)
  --storage-backend B
                  lmdb (default: one replica, its store on a PersistentVolumeClaim) or etcd (no volume, any
                  number of replicas sharing the etcd cluster); etcd needs --out
  --etcd-servers URL[,URL]
                  with etcd, required: its client URLs, http:// or https:// (scheme, host and port)
  --etcd-prefix P with etcd: the key prefix (default ${DEFAULT_ETCD_PREFIX})
  --etcd-tls      with etcd: mount the client certificate from the Secret ${DEFAULT_ETCD_CLIENT_SECRET_NAME}
                  (keys ${ETCD_CLIENT_SECRET_KEYS.join(', ')}; you create it, it is not rendered); needs https:// servers
  --etcd-client-secret NAME
                  like --etcd-tls, from the Secret NAME
  --replicas N    replicas of the server (default 1); more than one needs --storage-backend etcd
  --crd PATH      a CustomResourceDefinition file (YAML or JSON, several documents allowed) or a directory of them,
                  as the server's --crd; repeatable; needs --out. Each CRD is checked as kube-apiserver checks it;
                  the files go into ConfigMaps (${CRD_FILE}) mounted at ${CRD_MOUNT_DIR}, and their
                  kinds get APIServices and the view/edit/admin roles
  --no-crd-apiservices
                  with --crd: no APIService for the CRDs' kinds, for CRDs still in the cluster whose objects
                  \`website-apiserver migrate\` moves here (it points kube-aggregator's own APIServices at the server)
  --force         replace the serving certificate even if the existing one is still valid
  --help          print this text`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

let values: {
  namespace?: string;
  out?: string;
  image?: string;
  force?: boolean;
  help?: boolean;
  'image-pull-policy'?: string;
  'storage-class'?: string;
  'data-volume-size'?: string;
  'storage-backend'?: string;
  'etcd-servers'?: string;
  'etcd-prefix'?: string;
  'etcd-tls'?: boolean;
  'etcd-client-secret'?: string;
  replicas?: string;
  crd?: string[];
  'no-crd-apiservices'?: boolean;
} & Record<string, string | boolean | string[] | undefined>;
try {
  ({ values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      namespace: { type: 'string' },
      out: { type: 'string' },
      image: { type: 'string' },
      ...Object.fromEntries(KIND_FLAGS.map((f) => [f.name, { type: 'string' as const }])),
      'image-pull-policy': { type: 'string' },
      'storage-class': { type: 'string' },
      'data-volume-size': { type: 'string' },
      'storage-backend': { type: 'string' },
      'etcd-servers': { type: 'string' },
      'etcd-prefix': { type: 'string' },
      'etcd-tls': { type: 'boolean' },
      'etcd-client-secret': { type: 'string' },
      replicas: { type: 'string' },
      crd: { type: 'string', multiple: true },
      'no-crd-apiservices': { type: 'boolean' },
      force: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  }));
} catch (e) {
  fail((e as Error).message);
}
if (values.help === true) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const namespace = values.namespace ?? DEFAULT_NAMESPACE;
const nsProblem = validateNamespace(namespace);
if (nsProblem !== undefined) fail(nsProblem);
const storage = storageFromFlags();
const replicasText = values.replicas ?? '1';
if (!/^[0-9]+$/.test(replicasText) || Number(replicasText) < 1) fail(`invalid --replicas ${JSON.stringify(replicasText)}: a positive integer`);
const replicas = Number(replicasText);
const storeProblem = storageProblem(storage, replicas);
if (storeProblem !== undefined) fail(storeProblem);
// manifests/ is the committed bundle: lmdb, one replica, the default namespace. Any other goes elsewhere.
if (values.out === undefined) {
  if (namespace !== DEFAULT_NAMESPACE) fail(`--namespace ${namespace} needs --out DIR: manifests/ holds the files for ${DEFAULT_NAMESPACE}`);
  if (storage.backend !== 'lmdb') fail(`--storage-backend ${storage.backend} needs --out DIR: manifests/ holds the lmdb bundle`);
  if (replicas !== 1) fail(`--replicas ${replicas} needs --out DIR: manifests/ holds the one-replica bundle`);
  if (values.crd !== undefined) fail('--crd needs --out DIR: manifests/ holds the bundle of Website alone');
}
if (values.image !== undefined && (values.image === '' || /\s/.test(values.image))) {
  fail(`invalid --image ${JSON.stringify(values.image)}`);
}
const pullPolicy = values['image-pull-policy'];
if (pullPolicy !== undefined && pullPolicy !== 'Always' && pullPolicy !== 'IfNotPresent' && pullPolicy !== 'Never') {
  fail(`invalid --image-pull-policy ${JSON.stringify(pullPolicy)}: Always, IfNotPresent or Never`);
}
// npm runs scripts in the package root; INIT_CWD is where the user typed the command.
const userDir = process.env.INIT_CWD || process.cwd();
const outDir = values.out !== undefined ? resolve(userDir, values.out) : REPO_MANIFESTS;
const crds = crdsFromFlags();
const noCrdAPIServices = values['no-crd-apiservices'] === true;
if (noCrdAPIServices && crds === undefined) fail('--no-crd-apiservices needs --crd: it leaves out the APIServices of CRD files');

try {
  const result = writeManifests({
    outDir,
    namespace,
    ...(values.image !== undefined ? { image: values.image } : {}),
    kindFlags: Object.fromEntries(KIND_FLAGS.flatMap((f) => (typeof values[f.name] === 'string' ? [[f.name, values[f.name] as string]] : []))),
    ...(pullPolicy !== undefined ? { imagePullPolicy: pullPolicy } : {}),
    ...(values['storage-class'] !== undefined ? { storageClassName: values['storage-class'] } : {}),
    ...(values['data-volume-size'] !== undefined ? { dataVolumeSize: values['data-volume-size'] } : {}),
    ...(storage.backend !== 'lmdb' ? { storage } : {}),
    ...(replicas !== 1 ? { replicas } : {}),
    ...(crds !== undefined ? { crds } : {}),
    ...(noCrdAPIServices ? { crdAPIServices: false } : {}),
    force: values.force === true,
  });
  for (const f of result.files) process.stdout.write(`${f.changed ? 'wrote    ' : 'unchanged'} ${f.path}\n`);
  // The repository's own bundle: the Helm chart and the kustomize forms under deploy/ come from the same code.
  if (outDir === REPO_MANIFESTS) for (const p of writeDeployFiles(resolve(REPO_MANIFESTS, '..'))) process.stdout.write(`wrote     ${p}\n`);
  for (const p of result.removed) process.stdout.write(`removed   ${p} (no --crd this time)\n`);
  if (result.dropped.length) {
    // kubectl apply creates and updates, never deletes: an APIService left behind would point at a version we no longer serve.
    process.stdout.write(`No longer in the bundle; kubectl apply leaves them in the cluster, so delete them:\n`);
    for (const r of result.dropped) {
      process.stdout.write(
        `  kubectl delete ${r.kind.toLowerCase()}${r.apiVersion.includes('/') ? `.${r.apiVersion.split('/')[0]}` : ''} ${r.name}${r.namespace !== undefined ? ` -n ${r.namespace}` : ''}\n`,
      );
    }
  }
  const c = result.certificate;
  process.stdout.write(
    c.action === 'kept' ? `serving certificate: kept the existing one (--force replaces it)\n` : `serving certificate: generated (${c.reason})\n`,
  );
  process.stdout.write(`${SERVING_CERTIFICATE_FILE} holds a private key; keep it out of version control.\n`);
  if (storage.backend === 'etcd' && storage.tls === true) {
    const secret = storage.clientSecretName ?? DEFAULT_ETCD_CLIENT_SECRET_NAME;
    process.stdout.write(
      `Before the pods can start, create the Secret ${namespace}/${secret} with ${ETCD_CLIENT_SECRET_KEYS.join(', ')} (see the header of 20-apiserver.yaml).\n`,
    );
  }
  const large = result.files.find((f) => f.serverSideApply);
  if (large !== undefined) {
    // Client-side apply would store each object in an annotation, and kube refuses one over 256 KiB.
    process.stdout.write(`${large.path} holds a ConfigMap too large for client-side kubectl apply: install with --server-side.\n`);
    process.stdout.write(`Install: kubectl apply --server-side -f ${outDir}\n`);
  } else {
    process.stdout.write(`Install: kubectl apply -f ${outDir}\n`);
  }
} catch (e) {
  process.stderr.write(`manifests: ${(e as Error).message}\n`);
  process.exit(1);
}

// crdsFromFlags reads and checks the --crd files (paths relative to where the command was typed): a CRD kube would
// refuse stops here with kube's message, as it would stop the server.
function crdsFromFlags(): CrdBundle | undefined {
  if (values.crd === undefined) return undefined;
  try {
    const {
      files,
      kinds: crdKinds,
      warnings,
    } = readCrdFiles(
      values.crd.map((p) => resolve(userDir, p)),
      kinds,
    );
    for (const w of warnings) process.stderr.write(`Warning: ${w}\n`);
    return { files, kinds: crdKinds };
  } catch (e) {
    // loadCrds' CrdRefused (kube's message, file named) or a file that cannot be read.
    process.stderr.write(`manifests: ${(e as Error).message}\n`);
    process.exit(1);
  }
}

// storageFromFlags reads --storage-backend and the --etcd-* flags; the etcd ones only with --storage-backend etcd, and the
// lmdb volume's only without it.
function storageFromFlags(): StorageOptions {
  const backend = values['storage-backend'] ?? 'lmdb';
  const etcdFlags = (['etcd-servers', 'etcd-prefix', 'etcd-tls', 'etcd-client-secret'] as const).filter((f) => values[f] !== undefined);
  if (backend === 'lmdb') {
    if (etcdFlags.length) fail(`--${etcdFlags[0]} needs --storage-backend etcd`);
    return { backend };
  }
  if (backend !== 'etcd') fail(`invalid --storage-backend ${JSON.stringify(backend)}: lmdb or etcd`);
  const lmdbFlags = (['storage-class', 'data-volume-size'] as const).filter((f) => values[f] !== undefined);
  if (lmdbFlags.length) fail(`--${lmdbFlags[0]} shapes the lmdb data volume: the etcd bundle has none`);
  if (values['etcd-servers'] === undefined) fail('--storage-backend etcd needs --etcd-servers URL[,URL]');
  const secret = values['etcd-client-secret'];
  return {
    backend,
    servers: values['etcd-servers']
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean),
    ...(values['etcd-prefix'] !== undefined ? { prefix: values['etcd-prefix'] } : {}),
    ...(values['etcd-tls'] === true || secret !== undefined ? { tls: true } : {}),
    ...(secret !== undefined ? { clientSecretName: secret } : {}),
  };
}
