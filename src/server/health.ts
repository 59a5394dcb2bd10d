/**
 * @module server/health
 * /healthz, /livez and /readyz built from named checks, in the format of k8s.io/apiserver pkg/server/healthz:
 * `ok` (200, text/plain), `?verbose` lists `[+]name ok`, a failure is 500 with `[-]name failed: reason withheld`.
 */
import type { FastifyInstance } from 'fastify';

/** HealthCheck is one named check; it throws or returns false when unhealthy. */
export interface HealthCheck {
  name: string;
  check: () => boolean;
}

/**
 * storageChecks are kube-apiserver's pair for its store (`etcd` on /livez and /readyz, `etcd-readiness` on /readyz
 * only). `storage-readiness` fails while the storage cannot commit writes (a full disk, an I/O error): reads and
 * watches are still served and a restart frees no space, so liveness stays ok. `storage` fails only when the
 * storage cannot work again until the process restarts (lmdb's MDB_PANIC), which is what a liveness probe is for.
 */
export function storageChecks(storage: { writable?(): boolean; readable?(): boolean; needsRestart?(): boolean }): {
  live: HealthCheck;
  ready: HealthCheck;
  read: HealthCheck;
} {
  return {
    live: { name: 'storage', check: () => !(storage.needsRestart?.() ?? false) },
    ready: { name: 'storage-readiness', check: () => storage.writable?.() ?? true },
    // A real read, as requests read: fails while no read can be served (lmdb: every reader slot held, MDB_READERS_FULL).
    read: { name: 'storage-read', check: () => storage.readable?.() ?? true },
  };
}

/**
 * registerHealthRoutes installs the three health endpoints; `live` checks apply to all three, `ready` checks to
 * /readyz and /healthz, `readyOnly` ones (kube's `shutdown`, failing from SIGTERM on) to /readyz alone. Served
 * during a shutdown too.
 */
export function registerHealthRoutes(app: FastifyInstance, ready: HealthCheck[], readyOnly: HealthCheck[] = [], live: HealthCheck[] = []): void {
  const serve = (path: string, checks: HealthCheck[]) => {
    app.get<{ Querystring: Record<string, string | string[]> }>(path, async (req, reply) => {
      // ?exclude=name (repeatable) skips a check, as healthz.go handleRootHealth does: e.g. a readiness probe that
      // should not take a server whose disk is full out of its Service (`/readyz?exclude=storage-readiness`).
      const excluded = new Set([req.query.exclude ?? []].flat());
      const unknown = new Set(excluded);
      const results = checks.map((c) => {
        if (excluded.has(c.name)) {
          unknown.delete(c.name);
          return { name: c.name, ok: true, excluded: true };
        }
        try {
          return { name: c.name, ok: c.check(), excluded: false };
        } catch {
          return { name: c.name, ok: false, excluded: false };
        }
      });
      const failed = results.some((r) => !r.ok);
      reply.type('text/plain; charset=utf-8').header('x-content-type-options', 'nosniff');
      if (!failed && req.query.verbose === undefined) return 'ok';
      const lines = results.map((r) => (r.excluded ? `[+]${r.name} excluded: ok` : r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
      if (unknown.size)
        lines.push(
          `warn: some health checks cannot be excluded: no matches for ${[...unknown]
            .sort()
            .map((n) => `"${n}"`)
            .join(',')}`,
        );
      const name = path.slice(1);
      lines.push(failed ? `${name} check failed` : `${name} check passed`);
      reply.code(failed ? 500 : 200);
      return `${lines.join('\n')}\n`;
    });
  };
  const ping: HealthCheck = { name: 'ping', check: () => true };
  serve('/livez', [ping, ...live]);
  serve('/healthz', [ping, ...live, ...ready]);
  serve('/readyz', [ping, ...live, ...ready, ...readyOnly]);
}
