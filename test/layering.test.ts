/**
 * The layering rules of .dependency-cruiser.cjs hold for src/, and they bite: the same configuration run over a
 * small tree with an upward import and a cycle reports both.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEPCRUISE = join(REPO, 'node_modules', '.bin', 'depcruise');
const run = promisify(execFile);

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

async function cruise(cwd: string): Promise<Violation[]> {
  // depcruise exits non-zero when it finds violations; the JSON report is on stdout either way.
  const out = await run(DEPCRUISE, ['src', '--config', join(REPO, '.dependency-cruiser.cjs'), '--output-type', 'json'], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }));
  return (JSON.parse(out.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const fixture = mkdtempSync(join(tmpdir(), 'layering-'));
afterAll(() => rmSync(fixture, { recursive: true, force: true }));

describe('layering', () => {
  it('src/ imports only downward and has no cycle', async () => {
    const violations = await cruise(REPO);
    expect(violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
  }, 60_000);

  it('an upward import, a cycle and an unknown folder are each reported', async () => {
    const file = (path: string, text: string) => {
      mkdirSync(dirname(join(fixture, path)), { recursive: true });
      writeFileSync(join(fixture, path), text);
    };
    cpSync(join(REPO, 'tsconfig.json'), join(fixture, 'tsconfig.json'));
    file('src/storage/store.ts', "import { registryThing } from '../registry/thing.js';\nexport const s = registryThing;\n");
    file('src/registry/thing.ts', 'export const registryThing = 1;\n');
    file('src/registry/a.ts', "import { b } from './b.js';\nexport const a = () => b;\n");
    file('src/registry/b.ts', "import { a } from './a.js';\nexport const b = () => a;\n");
    file('src/elsewhere/x.ts', "import { registryThing } from '../registry/thing.js';\nexport const x = registryThing;\n");
    // A cycle is reported once, from whichever of its modules the cruise met first.
    const names = (await cruise(fixture)).map((v) => `${v.rule.name}: ${v.rule.name === 'no-circular' ? dirname(v.from) : v.from}`).sort();
    expect(names).toEqual(['known-layer: src/elsewhere/x.ts', 'layer-storage: src/storage/store.ts', 'no-circular: src/registry']);
  }, 60_000);
});
