/**
 * @module e2e/crd-diff/corpus
 * The CRD files the differential suite serves (../shared/crds beside the repository, read in place, never copied),
 * each with its example objects and what a sequence needs to know of each served version.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import YAML from 'yaml';
import { CRD_CORPUS } from '../../helpers/crd-corpus.mjs';

export type Json = any;

/** CRDS is the shared corpus, relative to the repository root (test/e2e/crd-diff/ → ../../../../shared/crds). */
export const CRDS = CRD_CORPUS;

export interface ServedVersion {
  name: string;
  storage: boolean;
  deprecated: boolean;
  schema: Json;
  status: boolean;
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  selectableFields: string[];
  printerColumns: Json[];
}

export interface CrdCase {
  /** The file, relative to CRDS (`seeds/stable.example.com_crontabs.yaml`). */
  file: string;
  path: string;
  crd: Json;
  group: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  versions: ServedVersion[];
  /** The example objects of this kind, in file order. */
  examples: Json[];
  /** Extra files of cases the upstream project ships (volumesnapshots' cel-tests), when present. */
  celTestsDir?: string;
}

const parseAll = (text: string): Json[] =>
  YAML.parseAllDocuments(text)
    .map((d) => d.toJSON())
    .filter((d) => d && typeof d === 'object');

/** crdFiles lists every CRD of the corpus kube serves: *.yaml and seeds/*.yaml, without examples and `.as-written` files (kube refuses those). */
export function crdFiles(): string[] {
  const list = (sub: string) =>
    readdirSync(join(CRDS, sub))
      .filter((f) => f.endsWith('.yaml') && !f.endsWith('.example.yaml') && !f.endsWith('.as-written.yaml'))
      .sort()
      .map((f) => (sub ? `${sub}/${f}` : f));
  return [...list(''), ...list('seeds')];
}

/** loadCase reads one CRD file, its examples and its served versions. */
export function loadCase(file: string): CrdCase {
  const path = join(CRDS, file);
  const [crd] = parseAll(readFileSync(path, 'utf8'));
  const spec = crd.spec;
  const examplesFile = path.replace(/\.yaml$/, '.example.yaml');
  const examples = existsSync(examplesFile) ? parseAll(readFileSync(examplesFile, 'utf8')).filter((o) => o.kind === spec.names.kind) : [];
  const celTestsDir = path.replace(/\.yaml$/, '.cel-tests');
  const versions: ServedVersion[] = spec.versions
    .filter((v: Json) => v.served)
    .map((v: Json) => {
      const sub = v.subresources ?? spec.subresources ?? {};
      return {
        name: v.name,
        storage: !!v.storage,
        deprecated: !!v.deprecated,
        schema: (v.schema ?? spec.validation)?.openAPIV3Schema ?? {},
        status: !!sub.status,
        ...(sub.scale ? { scale: sub.scale } : {}),
        selectableFields: (v.selectableFields ?? []).map((f: Json) => f.jsonPath as string),
        printerColumns: v.additionalPrinterColumns ?? [],
      };
    });
  return {
    file,
    path,
    crd,
    group: spec.group,
    plural: spec.names.plural,
    kind: spec.names.kind,
    namespaced: spec.scope === 'Namespaced',
    versions,
    examples,
    ...(existsSync(celTestsDir) ? { celTestsDir } : {}),
  };
}

/** celTests reads an upstream cel-tests folder: single objects (valid or not) and pre/post pairs (an update). */
export function celTests(dir: string): { single: { name: string; object: Json }[]; pairs: { name: string; pre: Json; post: Json }[] } {
  const files = readdirSync(dir).sort();
  const read = (f: string) => parseAll(readFileSync(join(dir, f), 'utf8'))[0];
  const single = files
    .filter((f) => f.endsWith('.yaml') && !f.endsWith('.pre.yaml') && !f.endsWith('.post.yaml'))
    .map((f) => ({ name: basename(f, '.yaml'), object: read(f) }));
  const pairs = files
    .filter((f) => f.endsWith('.pre.yaml'))
    .map((f) => {
      const name = basename(f, '.pre.yaml');
      return { name, pre: read(f), post: read(`${name}.post.yaml`) };
    });
  return { single, pairs };
}
