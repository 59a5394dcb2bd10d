/**
 * @module manifests/crd-files
 * readCrdFiles: what `npm run manifests -- --crd PATH` reads before rendering. The paths mean what the server's
 * `--crd` means (a file, or a directory's .yaml/.yml/.json files); every CRD is checked as the server will check it
 * at start (loadCrds: a CRD kube would refuse fails here with kube's message), so a bundle that renders is one the
 * server starts with. The texts go into the ConfigMaps verbatim; the kinds give the APIServices and the roles.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { loadCrds } from '../kinds/crd/index.js';
import { filesOf } from '../kinds/crd/load.js';
import type { Kind } from '../registry/kind-controller.js';
import type { CrdFile } from './crd-configmaps.js';

/** CrdBundle is what renderManifests needs of the CRD files: their names and texts, and the kinds they define. */
export interface CrdBundle {
  files: CrdFile[];
  kinds: Kind[];
}

/** readCrdFiles reads and checks the `--crd` paths; `builtIn` are the kinds served from code (a CRD may not shadow one). */
export function readCrdFiles(paths: readonly string[], builtIn: readonly Kind[] = []): CrdBundle & { warnings: string[] } {
  // Checked first: loadCrds' refusal (CrdRefused) is the message for a missing or unreadable path too.
  const { kinds, warnings } = loadCrds(paths, builtIn);
  const files = filesOf(paths).map((p) => ({ name: basename(p), text: readFileSync(p, 'utf8') }));
  return { files, kinds, warnings };
}
