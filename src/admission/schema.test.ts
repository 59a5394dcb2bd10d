import { describe, expect, it } from 'vitest';
import type { JSONSchema } from '../apis/meta/json-schema.js';
import { CoercionError, compileSchemaAdmission } from './schema.js';
import { websiteSchema } from '../kinds/website/v1alpha1.js';

const admission = compileSchemaAdmission(websiteSchema);
const website = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'extensions.example.com/v1alpha1',
  kind: 'Website',
  metadata: { name: 'w', odd: 1 },
  spec: { gitRepo: 'https://x/y.git', ...spec },
  ...extra,
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
  it('refuses a whole number no Go client could decode as kube does: a float64 where an integer belongs', () => {
    const obj = website({ replicas: 2 }, { status: { observedGeneration: 2 ** 64 } });
    const errs = admission.defaultAndValidate(obj);
    expect(errs).toContainEqual({
      type: 'FieldValueTypeInvalid',
      field: 'status.observedGeneration',
      message: 'status.observedGeneration: Invalid value: "number": status.observedGeneration in body must be of type integer: "number"',
    });
  });

  it('accepts the largest int64-sized values', () => {
    const obj = website({ replicas: 2 }, { status: { observedGeneration: 2 ** 62 } });
    expect(admission.defaultAndValidate(obj).filter((e) => e.message.includes('must be of type integer'))).toEqual([]);
  });
});

// A schema with the features the website kind does not use (some are beyond JSONSchema's declared subset).
const widget = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        mode: { type: 'string', enum: ['Fast', 'Slow'], default: 'Fast' },
        level: { type: 'integer', enum: [1, 2] },
        name: { type: 'string', maxLength: 3 },
        note: { type: 'string' },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer', default: 80 } } },
        },
        limits: { type: 'object', additionalProperties: { type: 'object', properties: { unit: { type: 'string', default: 'Mi' } } } },
        strategy: { type: 'object', minProperties: 1, required: ['type'], properties: { type: { type: 'string' } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
    status: { type: 'object', properties: { phase: { type: 'string', enum: ['Ready'] } } },
  },
} as unknown as JSONSchema;
const widgets = compileSchemaAdmission(widget);
const obj = (spec: Record<string, unknown>) => ({ apiVersion: 'x.example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec });
const messages = (spec: Record<string, unknown>) => widgets.defaultAndValidate(obj(spec)).map((e) => e.message);

describe('defaulting', () => {
  it('fills missing members and non-nullable nulls, in list items and map values too', () => {
    const o = obj({ mode: null, ports: [{ name: 'a' }, { name: 'b', port: null }], limits: { cpu: {}, mem: { unit: 'Gi' } } });
    widgets.applyDefaults(o);
    expect(o.spec).toEqual({
      mode: 'Fast',
      ports: [
        { name: 'a', port: 80 },
        { name: 'b', port: 80 },
      ],
      limits: { cpu: { unit: 'Mi' }, mem: { unit: 'Gi' } },
    });
  });

  it('drops a null that is neither nullable nor defaulted, as if it had not been sent', () => {
    const o = obj({ note: null });
    expect(widgets.pruneUnknown(o)).toEqual([]);
    expect(o.spec).toEqual({});
    expect(widgets.defaultAndValidate(o)).toEqual([]);
    expect(o.spec).toEqual({ mode: 'Fast' });
  });
});

describe('kube-openapi value validation, in kube words', () => {
  it('lists a non-string enum as JSON, counts runes for maxLength, and reports property counts with required', () => {
    expect(messages({ level: 3 })).toEqual(['spec.level: Unsupported value: 3: supported values: "1", "2"']);
    expect(messages({ name: 'ééé' })).toEqual([]);
    expect(messages({ name: 'abcd' })).toEqual(['spec.name: Too long: may not be more than 3 bytes']);
    expect(messages({ strategy: {} })).toEqual([
      'spec.strategy: Invalid value: 0: spec.strategy in body should have at least 1 properties',
      'spec.strategy.type: Required value',
    ]);
  });

  it('reports a failed anyOf without a field, then the errors of its best branch', () => {
    expect(messages({ port: true })).toEqual([
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
      '<nil>: Invalid value: "": "spec.port" must validate at least one schema (anyOf)',
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer: "boolean"',
    ]);
  });
});

describe('x-kubernetes-list-type', () => {
  it('reports each repeated set value once, at its second appearance, after the value validations', () => {
    expect(messages({ tags: ['a', 'b', 'a', 'a', 'b'], level: 5 })).toEqual([
      'spec.level: Unsupported value: 5: supported values: "1", "2"',
      'spec.tags[2]: Duplicate value: "a"',
      'spec.tags[4]: Duplicate value: "b"',
    ]);
  });

  it('reports map items by their keys, {} for items without them', () => {
    expect(messages({ ports: [{ name: 'a' }, { name: 'a', port: 1 }] })).toEqual(['spec.ports[1]: Duplicate value: {"name":"a"}']);
    expect(messages({ ports: [{}, {}] })).toEqual([
      'spec.ports[0].name: Required value',
      'spec.ports[1].name: Required value',
      'spec.ports[1]: Duplicate value: {}',
    ]);
  });
});

describe('embedded resources', () => {
  it('decodes their metadata as ObjectMeta, reporting its unknown fields after the pruned ones', () => {
    const o = obj({ zz: 1, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', creationTimestamp: null, odd: 1 }, extra: true } });
    expect(widgets.pruneUnknown(o)).toEqual(['spec.zz', 'spec.template.metadata.odd']);
    expect(o.spec).toEqual({ template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, extra: true } });
  });

  it('refuses what the decoder cannot decode (a 400) and validates type and metadata', () => {
    expect(() => widgets.pruneUnknown(obj({ template: { apiVersion: 5, kind: 'Pod' } }))).toThrow(
      new CoercionError('spec.template.apiVersion: Invalid value: 5: must be a string'),
    );
    expect(messages({ template: { metadata: { namespace: 'Bad', labels: { 'a b': 'x' } } } })).toEqual([
      'spec.template.apiVersion: Required value',
      'spec.template.kind: Required value',
      "spec.template.metadata.namespace: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      "spec.template.metadata.labels: Invalid value: \"a b\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
  });
});

describe('the status subresource and updates', () => {
  it('validates the status alone, naming the path inside it as kube status strategy does', () => {
    const o = { ...obj({ level: 7 }), status: { phase: 'Lost' } };
    expect(widgets.defaultAndValidateStatus(o).map((e) => e.message)).toEqual(['status.phase: Unsupported value: "Lost": supported values: "Ready"']);
  });

  it('does not refuse again what an update leaves as it was stored (ratcheting), only what it changes', () => {
    const old = obj({ level: 7, name: 'long!', tags: ['a', 'a'] });
    expect(widgets.defaultAndValidateUpdate(obj({ level: 7, name: 'long!', tags: ['b', 'b'], note: 'new' }), old)).toEqual([]);
    expect(widgets.defaultAndValidateUpdate(obj({ level: 8, name: 'long!', tags: ['a', 'a'] }), old).map((e) => e.message)).toEqual([
      'spec.level: Unsupported value: 8: supported values: "1", "2"',
    ]);
    expect(widgets.defaultAndValidateUpdate(obj({ tags: ['c', 'c'] }), obj({})).map((e) => e.message)).toEqual(['spec.tags[1]: Duplicate value: "c"']);
  });
});
