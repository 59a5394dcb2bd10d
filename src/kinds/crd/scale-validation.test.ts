import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../apis/meta/types.js';
import { scaleValidation } from './scale-validation.js';

const check = scaleValidation({ specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' });
const obj = (spec: unknown, status: unknown = {}): KubeObject => ({ metadata: { name: 'x' }, spec, status }) as KubeObject;

// The non-negative and accessor-error wordings are those kube-apiserver 1.37.2 answered in the CRD differential
// (test/e2e/crd-differential.test.ts, which compares them live); the other values follow unstructured's accessors.
describe('scaleValidation', () => {
  it('refuses negative replicas through the spec path', () => {
    expect(check(obj({ replicas: -1 }), 'main').map((e) => e.message)).toEqual(['.spec.replicas: Invalid value: -1: should be a non-negative integer']);
  });
  it("words a value of the wrong type as unstructured's accessor error", () => {
    expect(check(obj({ replicas: 'seven' }, { replicas: 1.5, selector: 3 }), 'main').map((e) => e.message)).toEqual([
      '.spec.replicas: Invalid value: 0: .spec.replicas accessor error: seven is of the type string, expected int64',
      '.status.replicas: Invalid value: 0: .status.replicas accessor error: 1.5 is of the type float64, expected int64',
      '.status.selector: Invalid value: "": .status.selector accessor error: 3 is of the type int64, expected string',
    ]);
  });
  it('checks only the status values on /status, and nothing that is absent', () => {
    expect(check(obj({ replicas: -1 }), 'status')).toEqual([]);
    expect(check(obj({}), 'main')).toEqual([]);
  });
});
