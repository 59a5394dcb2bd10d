/**
 * Airport in testing.example.com/v1beta1: a second, older version of the cluster-scoped test kind, so the version
 * machinery (conversion, discovery order, migration, managedFields paths) is shown generic, not Website's. v1beta1
 * names the city `spec.town`; the conversion renames it both ways.
 */
import type { KubeObject } from '../../src/apis/meta/types.js';
import type { ConvertedVersion, ResourceDefinition } from '../../src/registry/resource.js';
import { airport, type Airport } from './airport.js';
import { objectSchema } from './object-schema.js';

export interface AirportV1beta1 extends KubeObject {
  spec: { town: string };
}

// The names are the kind's, the same in every version.
const { group, kind, listKind, plural, singular, shortNames, categories, namespaced, description } = airport;

const definition: ResourceDefinition<AirportV1beta1> = {
  group,
  kind,
  listKind,
  plural,
  singular,
  shortNames,
  categories,
  namespaced,
  description,
  version: 'v1beta1',
  schema: objectSchema('Airport is where flights depart and land.', {
    spec: { type: 'object', required: ['town'], properties: { town: { type: 'string', minLength: 1 } } },
  }),
  printerColumns: [{ name: 'Town', type: 'string', description: 'The town it serves.', priority: 0, cell: (a) => a.spec.town }],
  subresources: { status: false },
};

const rename = (p: readonly string[], from: string, to: string) => (p[0] === 'spec' && p[1] === from ? ['spec', to, ...p.slice(2)] : [...p]);

export const airportV1beta1: ConvertedVersion<AirportV1beta1, Airport> = {
  definition,
  conversion: {
    toStorage: ({ spec, ...rest }) => ({ ...rest, apiVersion: 'testing.example.com/v1', spec: { city: spec.town } }),
    fromStorage: ({ spec, ...rest }) => ({ ...rest, apiVersion: 'testing.example.com/v1beta1', spec: { town: spec.city } }),
    fieldToStorage: (p) => rename(p, 'town', 'city'),
    fieldFromStorage: (p) => rename(p, 'city', 'town'),
  },
};
