/**
 * The recorded kube-apiserver answers for CRD mutations (test/fixtures/crd-validation/validation-cases.json) and how
 * to rebuild each mutated document from the shared corpus. Used by src/kinds/crd/validation.test.ts and the live e2e
 * comparison (test/e2e/crd-validation.test.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { CRD_CORPUS } from './crd-corpus.mjs';

/** CORPUS_DIR is the shared CRD corpus (crd-corpus.mjs). */
export const CORPUS_DIR = CRD_CORPUS;

/** CASES_FILE holds kube-apiserver's recorded answers. */
export const CASES_FILE = new URL('../fixtures/crd-validation/validation-cases.json', import.meta.url);

/** CrdCase is one mutation of a corpus CRD and what kube-apiserver answered to its create. */
export interface CrdCase {
  name: string;
  /** Corpus file, relative to CORPUS_DIR. */
  file: string;
  /** Set `value` at `path` (or delete the member when there is no value). */
  ops: { path: (string | number)[]; value?: unknown }[];
  kube: { code: number; message: string | null; warnings: string[] };
}

/** applyCaseOps reads the case's corpus file and applies its edits. */
export function applyCaseOps(c: CrdCase): Record<string, unknown> {
  const doc = YAML.parse(readFileSync(join(CORPUS_DIR, c.file), 'utf8')) as Record<string, unknown>;
  for (const op of c.ops) {
    let o = doc as Record<string | number, unknown>;
    for (const k of op.path.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
    const last = op.path[op.path.length - 1]!;
    if ('value' in op) o[last] = structuredClone(op.value);
    else delete o[last];
  }
  return doc;
}
