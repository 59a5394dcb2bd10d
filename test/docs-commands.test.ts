/**
 * The commands the docs give run as written: every `npm run X` names a script of package.json, and every flag
 * passed to the server (`npm start -- …`, `node dist/main.js …`) or to a script (`npm run bench -- …`,
 * `npm run manifests -- …`, `npm run image -- …`) is one that command reads. A renamed flag or script fails here
 * before a reader meets it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, userDocs } from './helpers/docs.js';
import { FLAGS } from '../src/cmd/options.js';

const ROOT = REPO_ROOT;
const scripts = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);

const docs = userDocs;

// A command as written in a doc: up to the end of its code span, line or shell comment.
const commands = (text: string, start: RegExp) => [...text.matchAll(new RegExp(`${start.source}[^\`\\n#|]*`, 'g'))].map((m) => m[0].trim());
const flagsIn = (command: string) => [...command.matchAll(/(?:^|\s|\[)(--[a-z][a-z0-9-]*)/g)].map((m) => m[1] as string);

// What each script reads, as its own usage text says (the bench has no --help: its unknown-flag error is its usage).
const usageOf = (file: string) => {
  const r = spawnSync(process.execPath, [join(ROOT, file), '--help'], { encoding: 'utf8', cwd: ROOT, timeout: 30_000 });
  return `${r.stdout}${r.stderr}`;
};
const SCRIPT_USAGE: Record<string, () => string> = {
  bench: () => usageOf('test/bench/bench.mjs'),
  manifests: () => usageOf('dist/cmd/manifests.js'),
  image: () => usageOf('scripts/image/build-image.mjs'),
  demo: () => usageOf('test/e2e/demo.mjs'),
};
const serverFlags = new Set(['--help', '--version', ...FLAGS.map((f) => `--${f.name}`)]);

describe.each(docs())('%s', (doc) => {
  const text = readFileSync(join(ROOT, doc), 'utf8');

  it('names only npm scripts that exist', () => {
    const named = [...text.matchAll(/npm run ([a-z][a-z0-9:_-]*[a-z0-9])/g)].map((m) => m[1] as string);
    expect(named.filter((s) => !scripts.includes(s))).toEqual([]);
  });

  it('passes the server only flags it reads (npm start -- …, node dist/main.js …)', () => {
    const server = [...commands(text, /npm start -- /), ...commands(text, /node dist\/main\.js (?!backup|restore)/)];
    expect(server.flatMap(flagsIn).filter((f) => !serverFlags.has(f))).toEqual([]);
  });

  it('passes each script only flags its usage lists', () => {
    for (const [script, usage] of Object.entries(SCRIPT_USAGE)) {
      const flags = commands(text, new RegExp(`npm run ${script} -- `)).flatMap(flagsIn);
      if (flags.length === 0) continue;
      const known = new Set(flagsIn(usage()));
      expect(
        flags.filter((f) => !known.has(f)),
        `npm run ${script}`,
      ).toEqual([]);
    }
  });
});
