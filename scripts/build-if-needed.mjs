// Builds dist/ when it is missing or older than any file under src/, so `npm start` always runs current code: tsc
// (type-check, dist/ modules) then the bundle dist/main.js loads (scripts/bundle.mjs). A dist/main.js that tsc alone
// rewrote (it works, unbundled and slower to start) is bundled again too.
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
const bundle = 'dist/bundle/main.js';
const bundled = existsSync(bundle) && existsSync('dist/main.js') && readFileSync('dist/main.js', 'utf8').includes('./bundle/main.js');
const inputs = Math.max(newest('src'), statSync('tsconfig.json').mtimeMs, statSync('scripts/bundle.mjs').mtimeMs, statSync('package-lock.json').mtimeMs);
if (!bundled || statSync(bundle).mtimeMs < inputs) {
  process.stderr.write(`building dist/ (TypeScript, about 30 s the first time)…\n`);
  const started = Date.now();
  execSync('npx tsc -p tsconfig.json', { stdio: 'inherit' });
  execSync('node scripts/bundle.mjs', { stdio: 'inherit' });
  process.stderr.write(`built dist/ in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}
