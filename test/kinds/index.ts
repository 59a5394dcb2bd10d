/**
 * The test-only kinds as a kinds list, for tests of the generic machinery (server assembly, shutdown, core routes,
 * discovery), which must not depend on the production kinds list: FlightTicket (namespaced, /status, no /scale) and
 * Airport (cluster-scoped).
 */
import type { Kind } from '../../src/registry/kind-controller.js';
import { airport } from './airport.js';
import { flightTicket } from './flight-ticket.js';

export const testKinds: readonly Kind[] = [{ storage: flightTicket }, { storage: airport }];

/** TICKETS is FlightTicket's collection in a namespace. */
export const tickets = (namespace: string) => `/apis/testing.example.com/v1/namespaces/${namespace}/flighttickets`;

/** ticket is a valid FlightTicket body. */
export const ticket = (name: string, namespace?: string) => ({
  apiVersion: 'testing.example.com/v1',
  kind: 'FlightTicket',
  metadata: { name, ...(namespace ? { namespace } : {}) },
  spec: { departure: 'ICN', destination: 'SFO' },
});
