/**
 * Controllers of the test-only kinds, registered the way a kind registers its own: they need no cluster, so the
 * manager runs them in standalone mode. FlightTicket's books each ticket through its status subresource (in the
 * seat class its flag names); Airport's, on a cluster-scoped kind (keys are bare names), labels each airport.
 * Airport is served in two versions here (v1 stored, v1beta1 converted: airport-v1beta1.ts).
 */
import type { Kind } from '../../src/registry/kind-controller.js';
import { airport, type Airport } from './airport.js';
import { airportV1beta1 } from './airport-v1beta1.js';
import { flightTicket, type FlightTicket } from './flight-ticket.js';

const OPTS = { dryRun: false, fieldValidation: 'Strict' as const, manager: 'test-controller' };

// split reads a work-queue key: `namespace/name`, or a bare name for a cluster-scoped kind.
const split = (key: string): [string | undefined, string] => {
  const i = key.indexOf('/');
  return i < 0 ? [undefined, key] : [key.slice(0, i), key.slice(i + 1)];
};

export const flightTicketKind: Kind<FlightTicket> = {
  storage: flightTicket,
  controllers: {
    name: 'flightticket',
    needsCluster: false,
    flags: [{ name: 'seat-class', default: 'economy', help: 'Class every ticket is booked in.' }],
    load: async () => (store, flags) => ({
      name: 'flightticket',
      store,
      start: () => ({
        reconcile: async (key) => {
          const [ns, name] = split(key);
          let t: FlightTicket;
          try {
            t = (await store.get(ns, name)) as FlightTicket;
          } catch {
            return; // deleted meanwhile
          }
          if (t.status?.booked) return;
          await store.update(ns, name, { ...t, status: { booked: true, note: `booked in ${flags.get('seat-class') ?? 'economy'}` } }, 'status', OPTS);
        },
        synced: () => true,
        stop: async () => {},
      }),
    }),
  },
};

export const airportKind: Kind<Airport> = {
  storage: airport,
  converted: [airportV1beta1],
  controllers: {
    name: 'airport',
    needsCluster: false,
    load: async () => (store) => ({
      name: 'airport',
      store,
      start: () => ({
        reconcile: async (key) => {
          const [ns, name] = split(key);
          let a: Airport;
          try {
            a = (await store.get(ns, name)) as Airport;
          } catch {
            return;
          }
          if (a.metadata.labels?.['testing.example.com/reconciled'] === key) return;
          await store.patch(ns, name, 'application/merge-patch+json', { metadata: { labels: { 'testing.example.com/reconciled': key } } }, 'main', OPTS);
        },
        synced: () => true,
        stop: async () => {},
      }),
    }),
  },
};
