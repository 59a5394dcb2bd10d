import { describe, expect, it } from 'vitest';
import { celCost, mixedShare, mixKinds, mixStages, MIX_PARAMS } from './crd-mix.mjs';
import { mixMarkdown, mixRecord } from './crd-mix-report.mjs';

/** The messages of every CEL rule in a schema. */
function ruleMessages(s: any, out: string[] = []): string[] {
  if (!s || typeof s !== 'object') return out;
  for (const r of s['x-kubernetes-validations'] ?? []) out.push(r.message);
  for (const p of Object.values(s.properties ?? {})) ruleMessages(p, out);
  ruleMessages(s.items, out);
  if (typeof s.additionalProperties === 'object') ruleMessages(s.additionalProperties, out);
  return out;
}

describe('six-kind CEL workload', () => {
  const kinds = mixKinds();

  it('uses six CRDs of the corpus, each with CEL rules in the version it writes', () => {
    expect(kinds).toHaveLength(6);
    expect(new Set(kinds.map((k) => `${k.group}/${k.plural}`)).size).toBe(6);
    for (const k of kinds) expect(k.celRules, k.plural).toBeGreaterThan(0);
    expect(kinds.some((k) => !k.namespaced)).toBe(true);
  });

  it("expects, for each kind's refused write, the message of one of its own rules", () => {
    for (const k of kinds) {
      const version = k.crd.spec.versions.find((v: any) => v.name === k.version);
      expect(ruleMessages(version.schema.openAPIV3Schema), k.plural).toContain(k.spec.refusal.message);
      expect(Boolean(k.spec.refusal.create) !== Boolean(k.spec.refusal.patch), k.plural).toBe(true);
    }
  });

  it("counts the mixed stage's creates per kind as the stage makes them", () => {
    for (const n of [MIX_PARAMS.quick.mixedOps, MIX_PARAMS.full.mixedOps, 7, 31]) {
      let creates = 0;
      for (let j = 0; j < n; j++) if (Math.floor(j / 6) % 5 < 2) creates++;
      const shares = [0, 1, 2, 3, 4, 5].map((ki) => mixedShare(n, 6, ki));
      expect(shares.reduce((a, b) => a + b, 0)).toBe(creates);
    }
    // 300 ops over 6 kinds: 50 rounds each, of which rounds 0, 1, 5, 6, ... create: 20.
    expect(mixedShare(300, 6, 5)).toBe(20);
  });

  it('costs CEL as the difference with the same CRDs without rules', () => {
    const withRules = {
      create: { cpuMsPerOp: { server: 3.5 } },
      update: { cpuMsPerOp: { server: 4 } },
      'serial-create': { value: 2, cpuMsPerOp: { server: 2 }, byKind: { gateways: { p50Ms: 2.5, cpuMsPerOp: { server: 2.2 } } } },
      'serial-update': { value: 3, byKind: { gateways: { p50Ms: 3.25 } } },
    };
    const without = {
      create: { cpuMsPerOp: { server: 3 } },
      update: { cpuMsPerOp: { server: 3.25 } },
      'serial-create': { value: 1.5, cpuMsPerOp: { server: 1.8 }, byKind: { gateways: { p50Ms: 1.5, cpuMsPerOp: { server: 1.7 } } } },
      'serial-update': { error: 'gone' },
    };
    const c = celCost(withRules, without, 'server') as any;
    expect(c.createCpuMs).toEqual({ withRules: 3.5, withoutRules: 3, cel: 0.5 });
    expect(c.updateCpuMs.cel).toBe(0.75);
    expect(c['serial-createP50Ms'].cel).toBe(0.5);
    expect(c['serial-createP50Ms'].byKind.gateways).toEqual({ withRules: 2.5, withoutRules: 1.5, cel: 1 });
    expect(c['serial-createCpuMs'].cel).toBe(0.2);
    expect(c['serial-createCpuMs'].byKind.gateways).toEqual({ withRules: 2.2, withoutRules: 1.7, cel: 0.5 });
    // A stage that failed gives no difference rather than a wrong one.
    expect(c['serial-updateP50Ms'].cel).toBeUndefined();
  });

  it("reports every stage by target, ours against kube-apiserver, and CEL's cost on each server", () => {
    const p = MIX_PARAMS.quick;
    const fig = (create: number, cpu: number, proc: string) => ({
      create: { value: create, p50Ms: 10, p99Ms: 20, errors: 0, cpuMsPerOp: { [proc]: cpu } },
      update: { value: 100, cpuMsPerOp: { [proc]: cpu + 1 } },
      'serial-create': { value: 2, byKind: { gateways: { p50Ms: cpu, cpuMsPerOp: { [proc]: cpu / 2 } } } },
      refusals: { value: 6 },
    });
    const r = mixRecord(
      {
        schema: 1,
        mode: 'crd-mix',
        date: '2026-11-29T00:00:00Z',
        durationSeconds: 9,
        machine: { cpus: 2, cpuModel: 'x', node: 'v20', kubernetes: 'v1.37.2' },
        parameters: { ...p },
        targets: ['ours', 'ours-nocel', 'crd', 'crd-nocel'].map((id) => ({ id, label: `${id} | label` })),
        notes: ['a note'],
      },
      kinds,
      mixStages(p),
      {
        ours: { ...fig(400, 2, 'server'), select: { error: 'HTTP 500' } },
        'ours-nocel': fig(500, 1.5, 'server'),
        crd: fig(100, 4, 'kube-apiserver'),
        'crd-nocel': fig(120, 3, 'kube-apiserver'),
      },
    );
    expect(r.celCost.ours?.createCpuMs.cel).toBe(0.5);
    expect(r.celCost['kube-apiserver']?.createCpuMs.cel).toBe(1);
    const md = mixMarkdown(r);
    expect(md).toContain('| Gateway | gateway.networking.k8s.io/v1 | Namespaced | 16 |');
    // Ours creates 4× as fast as kube-apiserver, with half the CPU time per create (2 ms against 4 ms); a failed
    // stage is a numbered error.
    expect(md).toMatch(/\| create 300 objects of six kinds[^\n]*\| 400 req\/s[^\n]*\| \*\*4\.0× ▲\*\* \| \*\*2\.0× ▲\*\* \|/);
    expect(md).toMatch(/\| label-selector list[^\n]*\| error \[1\] \|/);
    expect(md).toContain('1. HTTP 500');
    expect(md).toContain('| CPU per create, concurrent | 2.00 ms / 1.50 ms / **0.50 ms** | 4.00 ms / 3.00 ms / **1.00 ms** |');
    expect(md).toContain('| &nbsp;&nbsp;gateways (16 rules): CPU per create | 1.00 ms / 0.75 ms / **0.25 ms** | 2.00 ms / 1.50 ms / **0.50 ms** |');
    expect(md).toContain('| &nbsp;&nbsp;rollouts (1 rule): CPU per create | — | — |');
    expect(md).toContain('- ours: ours \\| label');
  });
});
