/**
 * The shared corpus of real-world CRDs (`shared/crds`, read in place, never copied into the repository): beside the
 * repository (`../shared/crds`), or where WEBSITE_APISERVER_CRD_CORPUS says, or this machine's /work/shared/crds (a
 * clean clone elsewhere, as CI makes, has no shared/ beside it).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '../..');

/** @type {string} */
export const CRD_CORPUS =
  [process.env['WEBSITE_APISERVER_CRD_CORPUS'], join(REPO, '..', 'shared', 'crds'), '/work/shared/crds'].find(
    (d) => d !== undefined && d !== '' && existsSync(d),
  ) ?? join(REPO, '..', 'shared', 'crds');
