/**
 * FlightTicket (testing.example.com/v1, namespaced): a test-only kind from the seeds' operator-sdk example, with a
 * status subresource, no scale and no standalone status: its status belongs to clients and controllers alone.
 */
import type { KubeObject } from '../../src/apis/meta/types.js';
import type { ResourceDefinition } from '../../src/registry/resource.js';
import { objectSchema } from './object-schema.js';

export interface FlightTicket extends KubeObject {
  spec: { departure: string; destination: string; seats?: number };
  status?: { booked?: boolean; note?: string };
}

export const flightTicket: ResourceDefinition<FlightTicket> = {
  group: 'testing.example.com',
  version: 'v1',
  kind: 'FlightTicket',
  listKind: 'FlightTicketList',
  plural: 'flighttickets',
  singular: 'flightticket',
  shortNames: ['ft'],
  categories: [],
  namespaced: true,
  description: 'FlightTicket is a seat booked on a flight.',
  schema: objectSchema('FlightTicket is a seat booked on a flight.', {
    spec: {
      type: 'object',
      required: ['departure', 'destination'],
      properties: { departure: { type: 'string' }, destination: { type: 'string' }, seats: { type: 'integer', minimum: 1, default: 1 } },
    },
    status: { type: 'object', properties: { booked: { type: 'boolean' }, note: { type: 'string' } } },
  }),
  printerColumns: [
    { name: 'Route', type: 'string', description: 'From and to.', priority: 0, cell: (t) => `${t.spec.departure}-${t.spec.destination}` },
    { name: 'Booked', type: 'boolean', description: 'Whether the seat is booked.', priority: 0, cell: (t) => t.status?.booked ?? false },
  ],
  subresources: { status: true },
  validate(t) {
    return t.spec.departure === t.spec.destination
      ? [{ type: 'FieldValueInvalid', field: 'spec.destination', message: `spec.destination: Invalid value: "${t.spec.destination}": must differ from spec.departure` }]
      : [];
  },
};
