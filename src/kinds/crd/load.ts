/**
 * @module kinds/crd/load
 * Reading CRD files: each `--crd` path is a file or a directory of `.yaml`, `.yml` and `.json` files (not
 * descending into subdirectories, as `kubectl apply -f DIR` does not), each file holding one or more YAML documents.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/** CrdDocument is one non-empty document of a file, with where it came from for messages. */
export interface CrdDocument {
  file: string;
  /** 1-based position of the document in its file. */
  index: number;
  doc: unknown;
}

const MANIFEST = /\.(ya?ml|json)$/;

/** filesOf expands the paths: a directory's manifest files in name order, a file as it is. */
export function filesOf(paths: readonly string[]): string[] {
  return paths.flatMap((p) => {
    let dir: boolean;
    try {
      dir = statSync(p).isDirectory();
    } catch (e) {
      throw new Error(`--crd ${p}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`);
    }
    if (!dir) return [p];
    return readdirSync(p)
      .filter((f) => MANIFEST.test(f))
      .sort()
      .map((f) => join(p, f));
  });
}

/** readDocuments parses every document of the files; a syntax error names its file and line. */
export function readDocuments(files: readonly string[]): CrdDocument[] {
  const out: CrdDocument[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    // JSON is YAML; one parser reads both, with a YAML file's several `---` documents.
    const docs = parseAllDocuments(text, { prettyErrors: true });
    const list = Array.isArray(docs) ? docs : [docs];
    list.forEach((d, i) => {
      if (d.errors.length) throw new Error(`${file}: ${d.errors[0]?.message ?? 'cannot parse'}`);
      const value: unknown = d.toJS({ maxAliasCount: 100 });
      if (value !== null && value !== undefined) out.push({ file, index: i + 1, doc: value });
    });
  }
  return out;
}
