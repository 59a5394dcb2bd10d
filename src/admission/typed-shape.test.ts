import { describe, expect, it } from 'vitest';
import type { JSONSchema } from '../apis/meta/json-schema.js';
import { typedShapeErrors } from './typed-shape.js';

const schema: JSONSchema = {
  type: 'object',
  properties: {
    status: {
      type: 'object',
      properties: {
        conditions: {
          type: 'array',
          items: { type: 'object', properties: { lastTransitionTime: { type: 'string', format: 'date-time' }, reason: { type: 'string' } } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string', format: 'date-time' } },
      },
    },
  },
};

describe('typedShapeErrors', () => {
  it("refuses an array where a string with a format is declared, at any depth, in kube-openapi's words", () => {
    expect(
      typedShapeErrors(schema, { status: { conditions: [{ lastTransitionTime: '2026-01-01T00:00:00Z' }, { lastTransitionTime: [] }], labels: { a: ['x'] } } }),
    ).toEqual([
      {
        type: 'FieldValueTypeInvalid',
        field: 'status.conditions[1].lastTransitionTime',
        message:
          'status.conditions[1].lastTransitionTime: Invalid value: "array": status.conditions[1].lastTransitionTime in body must be of type string: "array"',
      },
      {
        type: 'FieldValueTypeInvalid',
        field: 'status.labels.a',
        message: 'status.labels.a: Invalid value: "array": status.labels.a in body must be of type string: "array"',
      },
    ]);
  });
  it('leaves strings, and arrays where no format is declared, to the schema validator', () => {
    expect(typedShapeErrors(schema, { status: { conditions: [{ lastTransitionTime: 'x', reason: [] }] } })).toEqual([]);
  });
});
