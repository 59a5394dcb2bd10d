/**
 * Validation ratcheting of CEL rules (kube's CRDValidationRatcheting, apiextensions-apiserver schema/cel
 * validation.go): on an update, a rule without oldSelf that fails on a value left unchanged does not refuse the
 * write; kube sends its error as a Warning instead, also with a write refused for another reason. Here the server
 * restarts with a stricter rule over an object stored under the looser one. kube-apiserver 1.37.2 gave these same
 * three answers (the warning, the 422 with the warning, the 422 alone) to the same CRD and patches via kubectl.
 */
import { describe, expect, it } from 'vitest';
import { crdRestarts } from './helpers/crd-restarts.js';

const crd = (max: number) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gauges.ratchet.example.com' },
  spec: {
    group: 'ratchet.example.com',
    scope: 'Namespaced',
    names: { plural: 'gauges', singular: 'gauge', kind: 'Gauge' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  level: { type: 'integer', 'x-kubernetes-validations': [{ rule: `self < ${max}` }] },
                  label: { type: 'string', 'x-kubernetes-validations': [{ rule: "self != 'bad'", message: 'must not be bad' }] },
                },
              },
            },
          },
        },
      },
    ],
  },
});

const server = crdRestarts('crd-ratchet');
const start = (v: Parameters<typeof crd>[0]) => server.start(crd(v));
const kubectl = server.kubectl;
const patch = (spec: Record<string, unknown>) => kubectl(['patch', 'gauge', 'g1', '-n', 'default', '--type=merge', '-p', JSON.stringify({ spec })]);
const RATCHETED = 'Warning: spec.level: Invalid value: 5: failed rule: self < 3';

describe('a CEL rule tightened over a stored object', () => {
  it('ratchets a value left unchanged to a warning, and refuses the value changed', async () => {
    await start(10);
    const g = { apiVersion: 'ratchet.example.com/v1', kind: 'Gauge', metadata: { name: 'g1', namespace: 'default' }, spec: { level: 5, label: 'ok' } };
    expect((await kubectl(['create', '-f', '-'], JSON.stringify(g))).stdout.trim()).toBe('gauge.ratchet.example.com/g1 created');
    await start(3);

    // Another field changes: the write succeeds, and the failing rule on the unchanged level is a warning.
    const ok = await patch({ label: 'fine' });
    expect(ok.code).toBe(0);
    expect(ok.stdout.trim()).toBe('gauge.ratchet.example.com/g1 patched');
    expect(ok.stderr.trim()).toBe(RATCHETED);

    // Refused for another rule: the 422 names that one; the ratcheted one is still a warning.
    const refused = await patch({ label: 'bad' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(RATCHETED);
    expect(refused.stderr).toContain('spec.label: Invalid value: "bad": must not be bad');
    expect(refused.stderr).not.toMatch(/is invalid: .*spec.level/);

    // The level itself changed: no ratcheting, the rule refuses it.
    const changed = await patch({ level: 4 });
    expect(changed.code).toBe(1);
    expect(changed.stderr).not.toContain('Warning:');
    expect(changed.stderr).toContain('The Gauge "g1" is invalid: spec.level: Invalid value: 4: failed rule: self < 3');
  });
});
