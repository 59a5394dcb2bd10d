/**
 * @module e2e/crd-diff/run
 * Runs a CRD's sequence on both servers, step by step (each step sent to both at once), compares each step's
 * answers, and writes every step's normalised answers to CRD_DIFF_TRACE when set.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareReplies, normalise, split, type Accepted, type StepResult } from './compare.js';
import type { Caller, Reply } from './sides.js';
import type { SideCtx, Step } from './steps.js';

/** runSteps sends every step to both sides; a differing step does not stop the sequence. */
export async function runSteps(
  file: string,
  steps: readonly Step[],
  kube: Caller,
  ours: Caller,
  accepted: readonly Accepted[],
  trace?: string,
): Promise<StepResult[]> {
  const ctx = { kube: { side: 'kube', call: kube, memo: new Map() } satisfies SideCtx, ours: { side: 'ours', call: ours, memo: new Map() } satisfies SideCtx };
  const results: StepResult[] = [];
  const failed = (e: unknown): Reply => ({ code: 0, body: `<request failed: ${String(e)}>`, warnings: [] });
  for (const [index, s] of steps.entries()) {
    const picked = (r: Reply): Reply => (s.pick && r.code === 200 ? { ...r, body: s.pick(r.body) } : r);
    const [k, o] = (await Promise.all([s.run(ctx.kube).catch(failed), s.run(ctx.ours).catch(failed)])).map(picked) as [Reply, Reply];
    results.push({ index, title: s.title, codes: { kube: k.code, ours: o.code }, ...split(file, s.title, compareReplies(k, o), accepted) });
    if (trace) {
      mkdirSync(trace, { recursive: true });
      const side = (r: Reply) => ({ code: r.code, warnings: r.warnings, body: normalise(r.body) });
      writeFileSync(
        join(trace, `${file.replaceAll('/', '_').replace(/\.yaml$/, '')}-${String(index).padStart(3, '0')}.json`),
        `${JSON.stringify({ step: s.title, kube: side(k), ours: side(o) }, null, 2)}\n`,
      );
    }
  }
  return results;
}
