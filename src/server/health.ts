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
 * registerHealthRoutes installs the three health endpoints; `ready` checks (none yet: the delegated-authentication
 * issue adds them) apply to /readyz and /healthz. While the server closes, fastify itself answers 503.
 */
export function registerHealthRoutes(app: FastifyInstance, ready: HealthCheck[]): void {
  const serve = (path: string, checks: HealthCheck[]) => {
    app.get<{ Querystring: Record<string, string> }>(path, async (req, reply) => {
      const results = checks.map((c) => {
        try {
          return { name: c.name, ok: c.check() };
        } catch {
          return { name: c.name, ok: false };
        }
      });
      const failed = results.some((r) => !r.ok);
      reply.type('text/plain; charset=utf-8').header('x-content-type-options', 'nosniff');
      if (!failed && req.query.verbose === undefined) return 'ok';
      const lines = results.map((r) => (r.ok ? `[+]${r.name} ok` : `[-]${r.name} failed: reason withheld`));
      const name = path.slice(1);
      lines.push(failed ? `${name} check failed` : `${name} check passed`);
      reply.code(failed ? 500 : 200);
      return `${lines.join('\n')}\n`;
    });
  };
  const ping: HealthCheck = { name: 'ping', check: () => true };
  serve('/livez', [ping]);
  serve('/healthz', [ping, ...ready]);
  serve('/readyz', [ping, ...ready]);
}
