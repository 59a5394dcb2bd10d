// The build's version and commit: package.json and HEAD of the checkout, read from the files as git lays them out.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildInfo, gitCommit, versionLine } from './build-info.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const root = mkdtempSync(join(tmpdir(), 'build-info-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
function tree(name: string, files: Record<string, string>): string {
  const dir = join(root, name);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('gitCommit', () => {
  it('reads a detached HEAD, a loose branch and a packed one', () => {
    expect(gitCommit(tree('detached', { '.git/HEAD': `${A}\n` }))).toBe(A);
    expect(
      gitCommit(tree('loose', { '.git/HEAD': 'ref: refs/heads/main\n', '.git/refs/heads/main': `${B}\n`, '.git/packed-refs': `${C} refs/heads/main\n` })),
    ).toBe(B);
    expect(
      gitCommit(
        tree('packed', {
          '.git/HEAD': 'ref: refs/heads/main\n',
          '.git/packed-refs': `# pack-refs with: peeled fully-peeled sorted\n${A} refs/heads/other\n${C} refs/heads/main\n^${B}\n`,
        }),
      ),
    ).toBe(C);
  });

  it('follows a .git file to a worktree whose refs are in the common directory', () => {
    tree('repo', { '.git/refs/heads/feature': `${A}\n`, '.git/worktrees/wt/HEAD': 'ref: refs/heads/feature\n', '.git/worktrees/wt/commondir': '../..\n' });
    expect(gitCommit(tree('wt', { '.git': `gitdir: ${join(root, 'repo/.git/worktrees/wt')}\n` }))).toBe(A);
    expect(gitCommit(tree('wt-relative', { '.git': 'gitdir: ../repo/.git/worktrees/wt\n' }))).toBe(A);
  });

  it('is empty, without failing, outside a checkout or with a HEAD it cannot resolve', () => {
    expect(gitCommit(tree('none', { 'package.json': '{}' }))).toBe('');
    expect(gitCommit(tree('unborn', { '.git/HEAD': 'ref: refs/heads/main\n' }))).toBe('');
    expect(gitCommit(tree('garbage', { '.git/HEAD': 'not a ref\n' }))).toBe('');
    expect(gitCommit(tree('bad-file', { '.git': 'nonsense\n' }))).toBe('');
    expect(gitCommit(join(root, 'missing'))).toBe('');
  });

  it('agrees with git in this repository', () => {
    const repo = join(import.meta.dirname, '../..');
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim();
    expect(gitCommit(repo)).toBe(head);
  });
});

describe('buildInfo and versionLine', () => {
  it("carry package.json's version and the commit", () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    expect(buildInfo().version).toBe(pkg.version);
    expect(versionLine({ version: '1.2.3', gitCommit: A })).toBe(`website-apiserver 1.2.3 (commit ${A.slice(0, 12)})`);
    expect(versionLine({ version: '1.2.3', gitCommit: '' })).toBe('website-apiserver 1.2.3');
  });
});
