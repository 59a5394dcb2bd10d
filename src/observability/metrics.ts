/**
 * @module observability/metrics
 * Every Prometheus metric the server exports, declared in one place and served on /metrics (prom-client).
 * Names follow kube-apiserver where a counterpart exists (apiserver_request_total, apiserver_request_duration_seconds).
 */
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { requestAttributes } from '../auth/request-info.js';
import { onRequestDone } from '../util/request-done.js';
import { registerProcessMemory } from './process-memory.js';

/** Metrics holds the registry and the instruments. */
export interface Metrics {
  registry: Registry;
  requests: Counter<'verb' | 'resource' | 'code'>;
  requestDuration: Histogram<'verb' | 'resource'>;
  watchers: Gauge;
  watchEvents: Counter;
  watchEventsEncoded: Counter;
  watchEventsDropped: Counter;
  terminatedWatchers: Counter;
}

/** WatchStats is what the watch layer reports (endpoints/watch WatchRegistry has this shape). */
export interface WatchStats {
  readonly size: number;
  readonly counters: { readonly sent: number; readonly encoded: number; readonly dropped: number; readonly terminated: number };
}

// A counter whose value lives elsewhere: read at scrape time so the watch hot path pays nothing.
function mirroredCounter(registry: Registry, name: string, help: string, read: () => number): Counter {
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The resource plural a route serves, for metric labels. */
    resource?: string;
    /** The API group and version of the route's resource. */
    group?: string;
    version?: string;
  }
}

/** createMetrics builds a fresh registry (one per server, so tests can run several in one process). */
export function createMetrics(watch: WatchStats): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  registerProcessMemory(registry);
  return {
    registry,
    requests: new Counter({
      name: 'apiserver_request_total',
      help: 'Requests by kube verb, resource and HTTP code.',
      labelNames: ['verb', 'resource', 'code'],
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Request latency by kube verb and resource (watches excluded).',
      labelNames: ['verb', 'resource'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    watchers: new Gauge({
      name: 'apiserver_registered_watchers',
      help: 'Open watch streams.',
      registers: [registry],
      collect() {
        this.set(watch.size);
      },
    }),
    watchEvents: mirroredCounter(
      registry,
      'apiserver_watch_events_total',
      'Watch events written to clients (BOOKMARK and ERROR included).',
      () => watch.counters.sent,
    ),
    watchEventsEncoded: mirroredCounter(
      registry,
      'website_apiserver_watch_event_encodings_total',
      'Watch events serialized; each change is encoded once per representation and shared by all its watchers.',
      () => watch.counters.encoded,
    ),
    watchEventsDropped: mirroredCounter(
      registry,
      'apiserver_watch_events_dropped_total',
      'Watch events discarded because their client fell too far behind.',
      () => watch.counters.dropped,
    ),
    terminatedWatchers: mirroredCounter(
      registry,
      'apiserver_terminated_watchers_total',
      'Watches the server ended because their client fell too far behind (the client gets 410 and re-lists).',
      () => watch.counters.terminated,
    ),
  };
}

/** registerMetrics records every response and serves /metrics. */
export function registerMetrics(app: FastifyInstance, m: Metrics): void {
  onRequestDone(app, (req, code, ms) => {
    const resource = req.routeOptions.config.resource;
    if (!resource) return;
    const { verb } = req.attributes ?? requestAttributes(req.method, req.url);
    m.requests.inc({ verb, resource, code: String(code) });
    if (verb !== 'watch') m.requestDuration.observe({ verb, resource }, ms / 1000);
  });
  app.get('/metrics', async (_req, reply) => {
    reply.type(m.registry.contentType);
    return m.registry.metrics();
  });
}
