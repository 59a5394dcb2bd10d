import { defineConfig } from 'vitest/config';

// lmdb is a native addon: keep each test file in its own forked process (DEPENDENCIES.md §3).
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
