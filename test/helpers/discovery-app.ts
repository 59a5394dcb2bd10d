/**
 * discoveryApp is a fastify app serving the discovery and OpenAPI routes of the registered kinds, with the server's
 * own error mapping, so inject() tests see the Status bodies clients see.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { registerDiscoveryRoutes } from '../../src/discovery/routes.js';
import { kinds } from '../../src/kinds/index.js';
import { servedDefinitions } from '../../src/registry/resource.js';
import { toStatusError } from '../../src/server/server.js';

export async function discoveryApp(): Promise<FastifyInstance> {
  const app = Fastify();
  app.setErrorHandler((err: Error, _req, reply) => {
    const s = toStatusError(err);
    return reply.code(s.code).send(s.status);
  });
  registerDiscoveryRoutes(app, servedDefinitions(kinds));
  await app.ready();
  return app;
}
