/**
 * @module observability/metrics
 * Every Prometheus metric the server exports, declared in one place and served on /metrics (prom-client).
 * Names follow kube-apiserver where a counterpart exists (apiserver_request_total, apiserver_request_duration_seconds).
 */
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Metrics holds the registry and the instruments. */
export interface Metrics {
  registry: Registry;
  requests: Counter<'verb' | 'resource' | 'code'>;
  requestDuration: Histogram<'verb' | 'resource'>;
  watchers: Gauge;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The resource plural a route serves, for metric labels. */
    resource?: string;
  }
}

/** createMetrics builds a fresh registry (one per server, so tests can run several in one process). */
export function createMetrics(openWatches: () => number): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new Counter({ name: 'apiserver_request_total', help: 'Requests by kube verb, resource and HTTP code.', labelNames: ['verb', 'resource', 'code'], registers: [registry] }),
    requestDuration: new Histogram({
      name: 'apiserver_request_duration_seconds', help: 'Request latency by kube verb and resource (watches excluded).',
      labelNames: ['verb', 'resource'], buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry],
    }),
    watchers: new Gauge({
      name: 'apiserver_registered_watchers', help: 'Open watch streams.', registers: [registry],
      collect() {
        this.set(openWatches());
      },
    }),
  };
}

/** kubeVerb maps a request to the Kubernetes verb (requestinfo.go): list vs watch vs get, deletecollection. */
export function kubeVerb(method: string, url: string, hasName: boolean): string {
  const watch = /[?&]watch=(true|1)(&|$)/.test(url);
  switch (method) {
    case 'GET': return watch ? 'watch' : hasName ? 'get' : 'list';
    case 'POST': return 'create';
    case 'PUT': return 'update';
    case 'PATCH': return 'patch';
    case 'DELETE': return hasName ? 'delete' : 'deletecollection';
    default: return method.toLowerCase();
  }
}

/** registerMetrics records every response and serves /metrics. */
export function registerMetrics(app: FastifyInstance, m: Metrics): void {
  app.addHook('onResponse', async (req, reply) => {
    const params = (req.params ?? {}) as Record<string, string>;
    const resource = req.routeOptions.config.resource;
    if (!resource) return;
    const verb = kubeVerb(req.method, req.url, params['name'] !== undefined);
    m.requests.inc({ verb, resource, code: String(reply.statusCode) });
    if (verb !== 'watch') m.requestDuration.observe({ verb, resource }, reply.elapsedTime / 1000);
  });
  app.get('/metrics', async (_req, reply) => {
    reply.type(m.registry.contentType);
    return m.registry.metrics();
  });
}
