/**
 * FlightTicket (testing.example.com/v1, namespaced): a test-only kind from the seeds' operator-sdk example, with a
 * status subresource, no scale and no standalone status: its status belongs to clients and controllers alone.
 * Its optional spec lists and maps cover every merge strategy server-side apply has (structured-merge-diff, driven by
 * the schema), for the differential test against kube-apiserver serving it as a CRD (e2e/apply-differential):
 * `passengers` a list map keyed by name, `legs` a list map keyed by from and to, `tags` a set, `notes` an atomic list,
 * `extras` a granular string map, `payment` an atomic object, and `status.conditions` a list map keyed by type.
 */
import { conditionsSchema, type Condition } from '../../src/apis/meta/conditions.js';
import type { KubeObject } from '../../src/apis/meta/types.js';
import type { ResourceDefinition } from '../../src/registry/resource.js';
import { objectSchema } from './object-schema.js';

export interface FlightTicket extends KubeObject {
  spec: {
    departure: string;
    destination: string;
    seats?: number;
    passengers?: { name: string; seat?: string; meal?: string }[];
    legs?: { from: string; to: string; flight?: string; cabin?: string }[];
    tags?: string[];
    notes?: string[];
    extras?: Record<string, string>;
    payment?: { method?: string; amount?: number; currency?: string };
  };
  status?: { booked?: boolean; note?: string; conditions?: Condition[] };
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
      properties: {
        departure: { type: 'string' },
        destination: { type: 'string' },
        seats: { type: 'integer', minimum: 1, default: 1 },
        passengers: {
          type: 'array',
          description: 'Passengers on the ticket, one per name.',
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, seat: { type: 'string' }, meal: { type: 'string' } } },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
        },
        legs: {
          type: 'array',
          description: 'Legs of the journey, one per origin and destination.',
          items: {
            type: 'object',
            required: ['from', 'to'],
            properties: { from: { type: 'string' }, to: { type: 'string' }, flight: { type: 'string' }, cabin: { type: 'string' } },
          },
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['from', 'to'],
        },
        tags: { type: 'array', description: 'Tags, each once.', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        notes: { type: 'array', description: 'Notes, replaced as a whole.', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
        extras: { type: 'object', description: 'Extras by name.', additionalProperties: { type: 'string' } },
        payment: {
          type: 'object',
          description: 'Payment, replaced as a whole.',
          properties: { method: { type: 'string' }, amount: { type: 'integer' }, currency: { type: 'string' } },
          'x-kubernetes-map-type': 'atomic',
        },
      },
    },
    status: {
      type: 'object',
      properties: { booked: { type: 'boolean' }, note: { type: 'string' }, conditions: conditionsSchema(['Ready', 'Progressing', 'Degraded', 'Custom']) },
    },
  }),
  printerColumns: [
    { name: 'Route', type: 'string', description: 'From and to.', priority: 0, cell: (t) => `${t.spec.departure}-${t.spec.destination}` },
    { name: 'Booked', type: 'boolean', description: 'Whether the seat is booked.', priority: 0, cell: (t) => t.status?.booked ?? false },
  ],
  subresources: { status: true },
  validate(t) {
    return t.spec.departure === t.spec.destination
      ? [
          {
            type: 'FieldValueInvalid',
            field: 'spec.destination',
            message: `spec.destination: Invalid value: "${t.spec.destination}": must differ from spec.departure`,
          },
        ]
      : [];
  },
};
