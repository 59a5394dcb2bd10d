/**
 * @module kinds/crd/validation-cases
 * The recorded kube-apiserver answers for CRD mutations (testdata/validation-cases.json) and how to rebuild each
 * mutated document from the shared corpus. Used by validation.test.ts and the live e2e comparison; not by the server.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

/** CORPUS_DIR is /work/shared/crds, found relative to the repository root (../shared/crds). */
export const CORPUS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'shared', 'crds');

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
