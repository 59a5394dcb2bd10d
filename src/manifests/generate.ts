/**
 * @module manifests/generate
 * writeManifests: renders the bundle into a directory. The serving certificate already in the directory's
 * serving-certificate file is kept while it is valid for the namespace (so re-running does not churn the
 * APIService caBundle or restart the pod); `force` makes a new one.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  CRD_FILE,
  DEFAULT_IMAGE,
  DEFAULT_NAMESPACE,
  SERVING_CERTIFICATE_FILE,
  generateServingCertificate,
  groupVersionsOf,
  renderManifests,
  servingCertificateFromObjects,
  servingCertificateProblem,
  storageProblem,
  validateNamespace,
  type RenderOptions,
  type ServingCertificate,
} from './render.js';

/** WriteOptions configures writeManifests. */
export interface WriteOptions
  extends Pick<RenderOptions, 'kindFlags' | 'imagePullPolicy' | 'storageClassName' | 'dataVolumeSize' | 'storage' | 'replicas' | 'crds' | 'crdAPIServices'> {
  outDir: string;
  namespace?: string;
  image?: string;
  servicePort?: number;
  /** force replaces a still valid serving certificate. */
  force?: boolean;
  /** now overrides the clock (tests): validity checks and new certificates use it. */
  now?: Date;
}

/** WriteResult says what writeManifests did. */
export interface WriteResult {
  /** files are the paths of the bundle in apply order, each written or left as it was (same content). */
  files: Array<{ path: string; changed: boolean; serverSideApply?: true }>;
  /** removed: a CRD file left by an earlier run with --crd, deleted since this bundle has none (it would still apply). */
  removed: string[];
  /**
   * dropped: APIServices and CRD ConfigMaps the directory's files held before and the new bundle does not (a CRD no
   * longer given, fewer ConfigMaps). `kubectl apply` does not delete them, and an APIService left pointing at the
   * server would stay unavailable (and fail discovery for every client).
   */
  dropped: ObjectRef[];
  /** certificate: kept from the existing file, or generated with the reason. */
  certificate: { action: 'kept' } | { action: 'generated'; reason: string };
  servingCert: ServingCertificate;
}

/** ObjectRef names an object of the bundle. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** writeManifests renders every file of the bundle into outDir (created if missing). */
export function writeManifests(opts: WriteOptions): WriteResult {
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  const problem = validateNamespace(namespace) ?? storageProblem(opts.storage, opts.replicas);
  if (problem !== undefined) throw new Error(problem);

  const certPath = join(opts.outDir, SERVING_CERTIFICATE_FILE);
  const existing = readServingCertificate(certPath, namespace);
  let servingCert: ServingCertificate;
  let certificate: WriteResult['certificate'];
  const why =
    opts.force === true
      ? 'forced'
      : typeof existing === 'string'
        ? existing
        : servingCertificateProblem(existing, namespace, opts.now !== undefined ? { now: opts.now } : {});
  if (why === undefined && typeof existing !== 'string') {
    servingCert = existing;
    certificate = { action: 'kept' };
  } else {
    servingCert = generateServingCertificate(namespace, opts.now !== undefined ? { now: opts.now } : {});
    certificate = { action: 'generated', reason: why ?? 'unusable' };
  }

  const rendered = renderManifests({
    namespace,
    image: opts.image ?? DEFAULT_IMAGE,
    servingCert,
    ...(opts.servicePort !== undefined ? { servicePort: opts.servicePort } : {}),
    ...pickDefined(opts, ['kindFlags', 'imagePullPolicy', 'storageClassName', 'dataVolumeSize', 'storage', 'replicas', 'crds', 'crdAPIServices']),
  });
  const before = objectsIn(opts.outDir, [CRD_FILE, SERVING_CERTIFICATE_FILE]).filter((r) => r.kind === 'APIService' || r.kind === 'ConfigMap');
  const after = new Set(rendered.flatMap((f) => f.objects).map((o) => refKey(o.apiVersion, o.kind, o.metadata.name, o.metadata.namespace)));
  // Without crdAPIServices the CRDs' APIServices are kube-aggregator's or migrate's, never ours to delete.
  const leftToMigrate = new Set(opts.crdAPIServices === false ? groupVersionsOf(opts.crds?.kinds ?? []).map((gv) => `${gv.version}.${gv.group}`) : []);
  const dropped = before.filter(
    (r) => !after.has(refKey(r.apiVersion, r.kind, r.name, r.namespace)) && !(r.kind === 'APIService' && leftToMigrate.has(r.name)),
  );
  mkdirSync(opts.outDir, { recursive: true });
  const files = rendered.map((f) => {
    const path = join(opts.outDir, f.name);
    const secret = f.name === SERVING_CERTIFICATE_FILE;
    const changed = tryRead(path) !== f.text;
    // Unchanged files are not rewritten, so their mtime (and `kubectl apply` noise) stays put.
    if (changed) writeFileSync(path, f.text, { mode: secret ? 0o600 : 0o644 });
    if (secret) chmodSync(path, 0o600); // writeFileSync's mode applies to new files only
    return { path, changed, ...(f.serverSideApply ? { serverSideApply: f.serverSideApply } : {}) };
  });
  const removed: string[] = [];
  const staleCrds = join(opts.outDir, CRD_FILE);
  if (!rendered.some((f) => f.name === CRD_FILE) && existsSync(staleCrds)) {
    rmSync(staleCrds);
    removed.push(staleCrds);
  }
  return { files, removed, dropped, certificate, servingCert };
}

/** readServingCertificate loads the Secret of `namespace` from a serving-certificate file, or says why not. */
function readServingCertificate(path: string, namespace: string): ServingCertificate | string {
  if (!existsSync(path)) return `${path} missing`;
  const text = tryRead(path);
  if (text === undefined) return `${path} unreadable`;
  const docs = parseAllDocuments(text); // an empty file gives an empty array
  const bad = docs.find((d) => d.errors.length > 0);
  if (bad !== undefined) return `${path} is not valid YAML: ${bad.errors[0]!.message}`;
  const sc = servingCertificateFromObjects(
    docs.map((d) => d.toJS() as unknown),
    namespace,
  );
  return sc ?? `${path} holds no serving-certificate Secret for namespace ${namespace}`;
}

const refKey = (apiVersion: string, kind: string, name: string, namespace?: string) => `${apiVersion}/${kind}/${namespace ?? ''}/${name}`;

/** objectsIn lists the objects of the named files in dir, skipping what is missing or does not parse (best effort). */
function objectsIn(dir: string, names: readonly string[]): ObjectRef[] {
  const out: ObjectRef[] = [];
  for (const name of names) {
    const text = tryRead(join(dir, name));
    if (text === undefined) continue;
    for (const d of parseAllDocuments(text)) {
      if (d.errors.length) continue;
      const o = d.toJS() as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
      if (typeof o?.apiVersion !== 'string' || typeof o.kind !== 'string' || typeof o.metadata?.name !== 'string') continue;
      out.push({
        apiVersion: o.apiVersion,
        kind: o.kind,
        name: o.metadata.name,
        ...(typeof o.metadata.namespace === 'string' ? { namespace: o.metadata.namespace } : {}),
      });
    }
  }
  return out;
}

function tryRead(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** pickDefined copies the named options that are set (exactOptionalPropertyTypes forbids passing undefined). */
function pickDefined<T extends object, K extends keyof T>(o: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
