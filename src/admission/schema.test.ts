import { describe, expect, it } from 'vitest';
import { compileSchemaAdmission } from './schema.js';
import { websiteSchema } from '../kinds/website/v1alpha1.js';

const admission = compileSchemaAdmission(websiteSchema);
const website = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'extensions.example.com/v1alpha1', kind: 'Website', metadata: { name: 'w', odd: 1 }, spec: { gitRepo: 'https://x/y.git', ...spec }, ...extra,
});

describe('pruneUnknown', () => {
  it('finds nothing in a clean object and leaves it as it was (metadata is not its business)', () => {
    const obj = website({ replicas: 2 });
    const before = structuredClone(obj);
    expect(admission.pruneUnknown(obj)).toEqual([]);
    expect(obj).toEqual(before);
  });

  it('removes unknown members and reports them depth first in sorted order, whatever order they came in', () => {
    const obj = website({ zeta: 1, alpha: { b: 1 }, replicas: 2 }, { zz: true, status: { conditions: [{ type: 'Ready', status: 'True', x: 1 }] } });
    expect(admission.pruneUnknown(obj)).toEqual(['spec.alpha', 'spec.zeta', 'status.conditions[0].x', 'zz']);
    expect(obj.spec).toEqual({ gitRepo: 'https://x/y.git', replicas: 2 });
    expect(obj).not.toHaveProperty('zz');
  });

  it('prunes members named like Object.prototype properties (not mistaken for declared fields)', () => {
    const obj = website({ constructor: 1, toString: 'x' });
    expect(admission.pruneUnknown(obj)).toEqual(['spec.constructor', 'spec.toString']);
    expect(Object.keys(obj.spec)).toEqual(['gitRepo']);
  });
});

describe('defaultAndValidate: integers beyond int64', () => {
  it('names the field of each whole number no Go client could decode, inside lists too', () => {
    const obj = website({ replicas: 2 }, { status: { observedGeneration: 2 ** 64, conditions: [{ type: 'Ready', status: 'True', observedGeneration: 1 }, { type: 'Progressing', status: 'True', observedGeneration: -(2 ** 64) }] } });
    const fields = admission.defaultAndValidate(obj).filter((e) => e.message.includes('must be of type integer')).map((e) => e.field);
    expect(fields).toEqual(['status.observedGeneration', 'status.conditions[1].observedGeneration']);
  });

  it('accepts the largest int64-sized values', () => {
    const obj = website({ replicas: 2 }, { status: { observedGeneration: 2 ** 62 } });
    expect(admission.defaultAndValidate(obj).filter((e) => e.message.includes('must be of type integer'))).toEqual([]);
  });
});
