/** objectSchema is a test kind's whole-object schema: apiVersion, kind and metadata as every kind has them, plus its own. */
import type { JSONSchema } from '../../src/apis/meta/json-schema.js';

export function objectSchema(description: string, own: Record<string, JSONSchema>): JSONSchema {
  return {
    type: 'object',
    description,
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      ...own,
    },
  };
}
