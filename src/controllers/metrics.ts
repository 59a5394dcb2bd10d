/**
 * @module controllers/metrics
 * Prometheus instruments of the controller runtime, named like controller-runtime's (`workqueue_*` from its
 * client-go workqueue provider, `controller_runtime_*` from `pkg/internal/controller/metrics`). Entry point:
 * `controllerMetrics(registry)`, then `queueMetrics(m, name)` for a WorkQueue and `reconcileMetrics(m, name, max)`
 * for a controller; both bind the label values once and zero the series so dashboards have them from the start.
 *
 * ## Guarantees
 * - `controllerMetrics` registers the instruments once per Registry; calling it again returns the same set, so
 *   several controllers can share one registry.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WorkQueueMetrics } from './work-queue.js';

/** ReconcileResultLabel is the `result` label of `controller_runtime_reconcile_total`. */
export type ReconcileResultLabel = 'success' | 'error' | 'requeue_after';

/** ControllerMetrics holds the instruments registered into one Registry. */
export interface ControllerMetrics {
  readonly workqueueDepth: Gauge<'name'>;
  readonly workqueueAdds: Counter<'name'>;
  readonly workqueueRetries: Counter<'name'>;
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly terminalReconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly maxConcurrentReconciles: Gauge<'controller'>;
}

/** ReconcileMetrics is what a controller reports, with its `controller` label already bound. */
export interface ReconcileMetrics {
  /** reconciled records one finished reconcile: its outcome and its duration in milliseconds. */
  reconciled(result: ReconcileResultLabel, ms: number, terminal?: boolean): void;
  /** activeWorkers reports how many reconciles run right now. */
  activeWorkers(n: number): void;
}

// Same buckets as controller-runtime's controller_runtime_reconcile_time_seconds.
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8,
  9, 10, 15, 20, 25, 30, 40, 50, 60,
];

const RESULTS: readonly ReconcileResultLabel[] = ['success', 'error', 'requeue_after'];

const byRegistry = new WeakMap<Registry, ControllerMetrics>();

/** controllerMetrics returns the controller instruments of `registry`, registering them on first use. */
export function controllerMetrics(registry: Registry): ControllerMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const registers = [registry];
  const m: ControllerMetrics = {
    workqueueDepth: new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers }),
    workqueueAdds: new Counter({ name: 'workqueue_adds_total', help: 'Total number of adds handled by workqueue', labelNames: ['name'], registers }),
    workqueueRetries: new Counter({ name: 'workqueue_retries_total', help: 'Total number of retries handled by workqueue', labelNames: ['name'], registers }),
    reconcileTotal: new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    }),
    reconcileErrors: new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    }),
    terminalReconcileErrors: new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    }),
    reconcileTime: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_TIME_BUCKETS,
      registers,
    }),
    activeWorkers: new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    }),
    maxConcurrentReconciles: new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    }),
  };
  byRegistry.set(registry, m);
  return m;
}

/** queueMetrics binds the workqueue instruments to queue `name` and zeroes its series. */
export function queueMetrics(m: ControllerMetrics, name: string): WorkQueueMetrics {
  const labels = { name };
  m.workqueueDepth.set(labels, 0);
  m.workqueueAdds.inc(labels, 0);
  m.workqueueRetries.inc(labels, 0);
  return {
    added: () => m.workqueueAdds.inc(labels),
    depth: (n) => m.workqueueDepth.set(labels, n),
    retried: () => m.workqueueRetries.inc(labels),
  };
}

/** reconcileMetrics binds the reconcile instruments to `controller`, records its worker limit and zeroes its series. */
export function reconcileMetrics(m: ControllerMetrics, controller: string, maxConcurrentReconciles: number): ReconcileMetrics {
  const labels = { controller };
  for (const result of RESULTS) m.reconcileTotal.inc({ controller, result }, 0);
  m.reconcileErrors.inc(labels, 0);
  m.terminalReconcileErrors.inc(labels, 0);
  m.reconcileTime.zero(labels);
  m.activeWorkers.set(labels, 0);
  m.maxConcurrentReconciles.set(labels, maxConcurrentReconciles);
  return {
    reconciled(result, ms, terminal = false) {
      m.reconcileTotal.inc({ controller, result });
      if (result === 'error') m.reconcileErrors.inc(labels);
      if (terminal) m.terminalReconcileErrors.inc(labels);
      m.reconcileTime.observe(labels, ms / 1000);
    },
    activeWorkers: (n) => m.activeWorkers.set(labels, n),
  };
}
