/** Airport (testing.example.com/v1, cluster-scoped): a test-only kind with no subresources at all. */
import type { KubeObject } from '../../src/apis/meta/types.js';
import type { ResourceDefinition } from '../../src/registry/resource.js';
import { objectSchema } from './object-schema.js';

export interface Airport extends KubeObject {
  spec: { city: string };
}

export const airport: ResourceDefinition<Airport> = {
  group: 'testing.example.com',
  version: 'v1',
  kind: 'Airport',
  listKind: 'AirportList',
  plural: 'airports',
  singular: 'airport',
  shortNames: [],
  categories: [],
  namespaced: false,
  description: 'Airport is where flights depart and land.',
  schema: objectSchema('Airport is where flights depart and land.', {
    spec: { type: 'object', required: ['city'], properties: { city: { type: 'string', minLength: 1 } } },
  }),
  printerColumns: [{ name: 'City', type: 'string', description: 'The city it serves.', priority: 0, cell: (a) => a.spec.city }],
  subresources: { status: false },
};
