import { defineConfig } from 'vitest/config';

// The e2e suite: one real control plane (etcd, kube-apiserver, kube-controller-manager) and one website-apiserver
// behind it, shared by every file, so files run one after another.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/e2e/**/*.test.ts'],
    globalSetup: ['test/e2e/harness/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 300_000,
  },
});
