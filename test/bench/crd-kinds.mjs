/**
 * @module bench/crd-kinds
 * CRD-defined kinds for the benchmark, read in place from the shared corpus (../shared/crds beside the repository,
 * never copied into it): what a CustomResourceDefinition file serves (group, version, plural, scope), objects made
 * from its `.example.yaml` documents (names and labels varied), and the same CRD with its CEL rules removed, so the
 * cost of CEL per write can be measured as the difference between the two.
 */
import { existsSync, readFileSync } from 'node:fs';
import YAML from 'yaml';
import { CRD_CORPUS } from '../helpers/crd-corpus.mjs';

/** The shared corpus of real-world CRDs (test/helpers/crd-corpus.mjs says where it is looked for). */
export { CRD_CORPUS };

/**
 * @typedef {object} CrdKind what one CRD file serves, as the benchmark addresses it
 * @property {string} file the CRD file
 * @property {Record<string, any>} crd the CustomResourceDefinition
 * @property {string} group
 * @property {string} version the served version objects are written in (the examples', else the storage version)
 * @property {string} kind
 * @property {string} plural
 * @property {boolean} namespaced
 * @property {number} celRules x-kubernetes-validations rules in that version's schema
 * @property {Record<string, any>[]} examples the `.example.yaml` documents of that kind
 */

/**
 * readCrdKind reads a CRD file and its `.example.yaml` beside it (`X.yaml` → `X.example.yaml`).
 * @param {string} file
 * @returns {CrdKind}
 */
export function readCrdKind(file) {
  const crd = YAML.parse(readFileSync(file, 'utf8'));
  if (crd?.kind !== 'CustomResourceDefinition') throw new Error(`${file}: not a CustomResourceDefinition`);
  const exampleFile = file.replace(/\.ya?ml$/, '.example.yaml');
  const docs = existsSync(exampleFile)
    ? YAML.parseAllDocuments(readFileSync(exampleFile, 'utf8'))
        .map((d) => d.toJS())
        .filter(Boolean)
    : [];
  /** @type {Record<string, any>[]} */
  const examples = docs.filter((d) => d.kind === crd.spec.names.kind);
  /** @type {{name: string, served: boolean, storage: boolean, schema?: {openAPIV3Schema?: unknown}}[]} */
  const versions = crd.spec.versions;
  const served = versions.filter((v) => v.served);
  // The examples' own version when it is served (their fields are that version's), else the storage version.
  const exampleVersion = examples[0]?.apiVersion?.split('/')[1];
  const v = served.find((x) => x.name === exampleVersion) ?? versions.find((x) => x.storage && x.served) ?? served[0];
  if (!v) throw new Error(`${file}: no served version`);
  return {
    file,
    crd,
    group: crd.spec.group,
    version: v.name,
    kind: crd.spec.names.kind,
    plural: crd.spec.names.plural,
    namespaced: crd.spec.scope === 'Namespaced',
    celRules: countRules(v.schema?.openAPIV3Schema),
    examples,
  };
}

/**
 * forEachSchema calls fn on a structural schema and every schema below it (properties, items, additionalProperties,
 * and the logical junctors a CRD may use).
 * @param {unknown} s
 * @param {(s: Record<string, any>) => void} fn
 */
function forEachSchema(s, fn) {
  if (!s || typeof s !== 'object') return;
  const o = /** @type {Record<string, any>} */ (s);
  fn(o);
  for (const p of Object.values(o.properties ?? {})) forEachSchema(p, fn);
  forEachSchema(o.items, fn);
  if (typeof o.additionalProperties === 'object') forEachSchema(o.additionalProperties, fn);
  for (const k of ['allOf', 'anyOf', 'oneOf']) for (const x of o[k] ?? []) forEachSchema(x, fn);
  forEachSchema(o.not, fn);
}

/**
 * countRules counts the x-kubernetes-validations rules of a schema.
 * @param {unknown} schema
 */
export function countRules(schema) {
  let n = 0;
  forEachSchema(schema, (s) => {
    n += Array.isArray(s['x-kubernetes-validations']) ? s['x-kubernetes-validations'].length : 0;
  });
  return n;
}

/**
 * withoutCel is a copy of the CRD with every x-kubernetes-validations removed from every version's schema: the
 * baseline that tells what CEL costs (everything else, structural validation and defaults included, stays).
 * @param {Record<string, any>} crd
 */
export function withoutCel(crd) {
  const copy = structuredClone(crd);
  for (const v of copy.spec.versions ?? []) {
    forEachSchema(v.schema?.openAPIV3Schema, (s) => {
      delete s['x-kubernetes-validations'];
    });
  }
  return copy;
}

/**
 * objectOf makes object i of a kind from its examples (taken in turn): its name and labels are set (the example's
 * labels kept), its namespace left to the request path; `fix` may change the copy further.
 * @param {CrdKind} k
 * @param {string} name
 * @param {Record<string, string>} labels
 * @param {number} i
 * @param {(o: Record<string, any>, i: number) => void} [fix]
 * @returns {Record<string, any>}
 */
export function objectOf(k, name, labels, i, fix) {
  const example = k.examples.length ? k.examples[i % k.examples.length] : { spec: {} };
  const o = structuredClone(example);
  o.apiVersion = `${k.group}/${k.version}`;
  o.kind = k.kind;
  const meta = o.metadata ?? {};
  delete meta.namespace;
  o.metadata = { ...meta, name, labels: { ...(meta.labels ?? {}), ...labels } };
  fix?.(o, i);
  return o;
}

/**
 * collectionPath is the path of a kind's objects in a namespace (ignored for a cluster-scoped kind), or of all of
 * them when namespace is empty.
 * @param {CrdKind} k
 * @param {string} namespace
 */
export function collectionPath(k, namespace) {
  const base = `/apis/${k.group}/${k.version}`;
  return k.namespaced && namespace ? `${base}/namespaces/${namespace}/${k.plural}` : `${base}/${k.plural}`;
}
