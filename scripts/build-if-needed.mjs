// Builds dist/ when it is missing or older than any file under src/, so `npm start` always runs current code.
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}
const out = 'dist/main.js';
if (!existsSync(out) || statSync(out).mtimeMs < Math.max(newest('src'), statSync('tsconfig.json').mtimeMs)) {
  execSync('npx tsc -p tsconfig.json', { stdio: 'inherit' });
}
