import { defineConfig } from 'vitest/config';

// Runs the hostile cases against kube-apiserver serving the Website as a CRD (test/hostile/crd.check.ts), to check
// the suite's expectations against the specification itself. Needs the e2e binaries (test/e2e/scripts/build-binaries.sh):
//   npx vitest run --config test/hostile/vitest.crd.config.ts
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/hostile/*.check.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
