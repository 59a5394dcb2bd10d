/**
 * @module util/build-info
 * What this build is: the version in package.json and, when the server runs from a git checkout, the commit it was
 * checked out at. `--version` prints both and `/version` reports them (discovery/discovery.ts versionInfo). Read at run
 * time from the files themselves (no `git` binary, no build step): outside a checkout, or with an unreadable `.git`,
 * the commit is simply unknown ('').
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** BuildInfo names this build. */
export interface BuildInfo {
  /** `version` of package.json (`0.0.0` if it cannot be read). */
  readonly version: string;
  /** The full commit hash of the checkout's HEAD, '' when not known. */
  readonly gitCommit: string;
}

// The repository root: two levels up from both src/util/ and dist/util/.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

// packageVersion reads `version` from the repository's package.json.
function packageVersion(root: string): string {
  try {
    const pkg = JSON.parse(read(join(root, 'package.json')) ?? '') as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const HASH = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * gitCommit reads HEAD's commit from `<root>/.git` as git itself does: a detached HEAD holds the hash, else it names
 * a ref found loose under refs/ or in packed-refs. `.git` may be a file pointing elsewhere (a worktree or submodule),
 * whose refs live in the common directory. '' when any of it is missing.
 */
export function gitCommit(root: string = ROOT): string {
  let gitDir = join(root, '.git');
  try {
    if (statSync(gitDir).isFile()) {
      const target = /^gitdir:\s*(.+?)\s*$/m.exec(read(gitDir) ?? '')?.[1];
      if (!target) return '';
      gitDir = isAbsolute(target) ? target : resolve(root, target);
    }
  } catch {
    return '';
  }
  const head = read(join(gitDir, 'HEAD'))?.trim() ?? '';
  if (HASH.test(head)) return head;
  const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
  if (!ref) return '';
  const common = read(join(gitDir, 'commondir'))?.trim();
  const refsDir = common ? resolve(gitDir, common) : gitDir;
  for (const dir of new Set([gitDir, refsDir])) {
    const loose = read(join(dir, ref))?.trim();
    if (loose && HASH.test(loose)) return loose;
  }
  for (const line of (read(join(refsDir, 'packed-refs')) ?? '').split('\n')) {
    const [hash, name] = line.trim().split(' ');
    if (name === ref && hash && HASH.test(hash)) return hash;
  }
  return '';
}

let cached: BuildInfo | undefined;

/** buildInfo is read once per process. */
export function buildInfo(): BuildInfo {
  cached ??= Object.freeze({ version: packageVersion(ROOT), gitCommit: gitCommit(ROOT) });
  return cached;
}

/** versionLine is what `--version` prints: `website-apiserver 0.1.0 (commit 71bd3dd4c2e1)`, the commit when known. */
export function versionLine(info: BuildInfo = buildInfo()): string {
  return `website-apiserver ${info.version}${info.gitCommit ? ` (commit ${info.gitCommit.slice(0, 12)})` : ''}`;
}
