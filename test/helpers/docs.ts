/** The user-facing Markdown the docs tests read: README.md, manifests/README.md and everything under docs/. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** REPO_ROOT is the repository's root directory. */
export const REPO_ROOT = resolve(import.meta.dirname, '../..');

/** userDocs lists the user-facing Markdown files, as paths relative to the repository root. */
export function userDocs(): string[] {
  const out = ['README.md', 'manifests/README.md'].filter((f) => existsSync(join(REPO_ROOT, f)));
  const walk = (dir: string) => {
    if (!existsSync(join(REPO_ROOT, dir))) return;
    for (const e of readdirSync(join(REPO_ROOT, dir))) {
      const p = join(dir, e);
      if (statSync(join(REPO_ROOT, p)).isDirectory()) walk(p);
      else if (p.endsWith('.md')) out.push(p);
    }
  };
  walk('docs');
  return out;
}
