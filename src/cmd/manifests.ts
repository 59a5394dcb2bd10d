#!/usr/bin/env node
/**
 * @module cmd/manifests
 * `npm run manifests -- [--namespace NS] [--out DIR] [--image IMG] [--force]`: writes the deployment
 * manifests and the serving certificate (Secret + APIService with caBundle) into a directory.
 *
 * Without --namespace it refreshes the repository's manifests/ (the committed files plus the git-ignored
 * serving-certificate file). Another namespace needs --out, so the committed files never leave the default.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { kinds } from '../kinds/index.js';
import { writeManifests } from '../manifests/generate.js';
import { DEFAULT_IMAGE, DEFAULT_NAMESPACE, SERVING_CERTIFICATE_FILE, validateNamespace } from '../manifests/render.js';

// dist/cmd/manifests.js → <package root>/manifests, independent of the working directory.
const REPO_MANIFESTS = fileURLToPath(new URL('../../manifests/', import.meta.url));

// The kinds' controller flags (--nginx-image, --git-sync-image): set here, they are passed to the server.
const KIND_FLAGS = kinds.flatMap((k) => k.controllers?.flags ?? []);

const USAGE = `Usage: npm run manifests -- [--namespace NS] [--out DIR] [--image IMG] ${KIND_FLAGS.map((f) => `[--${f.name} VALUE]`).join(' ')}
                             [--image-pull-policy P] [--storage-class NAME] [--data-volume-size SIZE] [--force]

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
  --force         replace the serving certificate even if the existing one is still valid
  --help          print this text`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

let values: {
  namespace?: string; out?: string; image?: string; force?: boolean; help?: boolean;
  'image-pull-policy'?: string; 'storage-class'?: string; 'data-volume-size'?: string;
} & Record<string, string | boolean | undefined>;
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
if (namespace !== DEFAULT_NAMESPACE && values.out === undefined) {
  fail(`--namespace ${namespace} needs --out DIR: manifests/ holds the files for ${DEFAULT_NAMESPACE}`);
}
if (values.image !== undefined && (values.image === '' || /\s/.test(values.image))) {
  fail(`invalid --image ${JSON.stringify(values.image)}`);
}
const pullPolicy = values['image-pull-policy'];
if (pullPolicy !== undefined && pullPolicy !== 'Always' && pullPolicy !== 'IfNotPresent' && pullPolicy !== 'Never') {
  fail(`invalid --image-pull-policy ${JSON.stringify(pullPolicy)}: Always, IfNotPresent or Never`);
}
// npm runs scripts in the package root; INIT_CWD is where the user typed the command.
const outDir = values.out !== undefined ? resolve(process.env.INIT_CWD || process.cwd(), values.out) : REPO_MANIFESTS;

try {
  const result = writeManifests({
    outDir,
    namespace,
    ...(values.image !== undefined ? { image: values.image } : {}),
    kindFlags: Object.fromEntries(KIND_FLAGS.flatMap((f) => (typeof values[f.name] === 'string' ? [[f.name, values[f.name] as string]] : []))),
    ...(pullPolicy !== undefined ? { imagePullPolicy: pullPolicy } : {}),
    ...(values['storage-class'] !== undefined ? { storageClassName: values['storage-class'] } : {}),
    ...(values['data-volume-size'] !== undefined ? { dataVolumeSize: values['data-volume-size'] } : {}),
    force: values.force === true,
  });
  for (const f of result.files) process.stdout.write(`${f.changed ? 'wrote    ' : 'unchanged'} ${f.path}\n`);
  const c = result.certificate;
  process.stdout.write(
    c.action === 'kept'
      ? `serving certificate: kept the existing one (--force replaces it)\n`
      : `serving certificate: generated (${c.reason})\n`,
  );
  process.stdout.write(`${SERVING_CERTIFICATE_FILE} holds a private key; keep it out of version control.\n`);
  process.stdout.write(`Install: kubectl apply -f ${outDir}\n`);
} catch (e) {
  process.stderr.write(`manifests: ${(e as Error).message}\n`);
  process.exit(1);
}
