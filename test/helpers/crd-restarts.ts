/**
 * crdRestarts runs the server in this process, serving a CRD file the test rewrites between starts, on the same data
 * and certificates: what a CRD that changes over stored objects does (defaults gained, rules tightened). Each start
 * stops the one before; the suite's afterAll stops the last and removes the directories.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { parseOptions } from '../../src/cmd/options.js';
import { run, type Running } from '../../src/cmd/run.js';
import { kubectlRun, type KubectlResult } from './kubectl-run.js';
import { cleanupTempDirs, tempDir } from './server-process.js';

export function crdRestarts(name: string): { start(crd: object): Promise<Running>; kubectl(args: string[], input?: string): Promise<KubectlResult> } {
  const dataDir = tempDir(`${name}-data-`);
  const certDir = tempDir(`${name}-certs-`);
  const work = tempDir(`${name}-work-`);
  const file = join(work, 'crd.json');
  let running: Running | undefined;
  afterAll(async () => {
    await running?.stop();
    cleanupTempDirs();
  });
  return {
    async start(crd) {
      await running?.stop();
      running = undefined;
      writeFileSync(file, JSON.stringify(crd));
      const parsed = parseOptions(['--port', '0', '--data-dir', dataDir, '--cert-dir', certDir, '--log-level', 'silent', '--crd', file], {});
      if (parsed.kind !== 'ok') throw new Error('options');
      running = await run(parsed.options);
      return running;
    },
    kubectl: (args, input) => kubectlRun(join(certDir, 'kubeconfig'), join(work, 'cache'), args, input),
  };
}
