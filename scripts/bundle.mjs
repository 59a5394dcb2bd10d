// Bundles the server (src/main.ts and what it imports) into dist/bundle/ with esbuild, and makes dist/main.js load it;
// run after tsc, which type-checks and writes the rest of dist/.
//
// Why: a start spent most of its time loading modules, not starting (about 1,000 files from dist/ and node_modules
// read, resolved and compiled one by one; a CPU profile of a start, BENCH_NODE_OPTIONS=--cpu-prof with
// test/bench/cpuprofile-top.mjs, shows it). Everything that runs the server runs dist/main.js (npm start, the image, the tests), so it is the bundle
// that is tested. The other dist/ modules stay as tsc wrote them (the benchmark and a few tests import them).
//
// Left out of the bundle, loaded from node_modules as usual: packages with native code (lmdb and its msgpackr), the
// etcd client (grpc reads .proto files next to its own sources) and pino (its transports start workers from files).
import { build } from 'esbuild';
import { rmSync, writeFileSync } from 'node:fs';

const EXTERNAL = ['lmdb', 'msgpackr', 'ordered-binary', 'etcd3', '@grpc/*', 'protobufjs', 'pino', 'pino-pretty'];

rmSync('dist/bundle', { recursive: true, force: true });
await build({
  entryPoints: { main: 'src/main.ts' },
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // Code loaded on demand (the etcd backend, the controllers, backup) stays in chunks of its own.
  splitting: true,
  outdir: 'dist/bundle',
  external: EXTERNAL,
  // CommonJS dependencies call require() for Node's modules; ESM output has none of its own.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  // No source maps: the bundle is not minified, so a stack trace's file and line still read (each module's code
  // follows a `// src/<path>` comment), and the image stays ~20 MB smaller.
  logLevel: 'warning',
});
writeFileSync(
  'dist/main.js',
  "#!/usr/bin/env node\n// The server, bundled by scripts/bundle.mjs (src/main.ts is its entry point).\nimport './bundle/main.js';\n",
);
