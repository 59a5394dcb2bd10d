/**
 * @module clients/suites
 * Vitest's view of the multi-language client suites (run.mjs): one describe per client library, one test per
 * check the program reported, so a failure names the check and carries the program's own account of it (what it
 * sent and what the server answered). Used standalone (test/clients.test.ts) and through kube-apiserver
 * (test/e2e/clients.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { prepareSuites, runSuite, type SuiteRun } from './run.mjs';

export interface ClientSuiteTarget {
  /** The kubeconfig the clients use (read when the suites run, after the server started). */
  kubeconfig: () => string;
  /** A fresh, usable namespace for one suite. */
  namespace: (suiteId: string) => Promise<string>;
}

/** defineClientSuites prepares the client environments (cached; a missing toolchain skips with one line) and declares the tests. */
export function defineClientSuites(where: string, target: ClientSuiteTarget): void {
  const log = (m: string) => console.log(`[clients ${where}] ${m}`);
  for (const s of prepareSuites({ log })) {
    describe.skipIf(!s.command)(`${s.def.label}, ${where}`, () => {
      let run: SuiteRun;
      beforeAll(async () => {
        run = await runSuite(s, { kubeconfig: target.kubeconfig(), namespace: await target.namespace(s.def.id), timeoutMs: 170_000 });
        const failed = [...run.checks.values()].filter((c) => !c.ok).map((c) => c.check);
        log(
          `${s.def.label}: ${run.checks.size - failed.length} of ${s.def.checks.length} checks passed in ${run.ms} ms${failed.length ? `; failed: ${failed.join(', ')}` : ''}`,
        );
      }, 200_000);

      for (const check of s.def.checks) {
        it(check, () => {
          const r = run.checks.get(check);
          expect(r, `${check} was not reported (exit ${run.exitCode}):\n${run.stderr.slice(-2000)}`).toBeDefined();
          expect(r?.ok, `${check}: ${r?.detail}`).toBe(true);
        });
      }

      it('reports exactly its checks and exits 0 only when all passed', () => {
        expect([...run.checks.keys()]).toEqual(s.def.checks);
        const allPassed = [...run.checks.values()].every((c) => c.ok);
        expect(run.exitCode, run.stderr.slice(-2000)).toBe(allPassed ? 0 : 1);
      });
    });
  }
}
