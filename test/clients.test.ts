/**
 * Real client libraries of other ecosystems against a standalone server over HTTPS with its admin kubeconfig
 * (issue 13): the official Python client (current and classic generation) and fabric8 (Java), each doing CRUD,
 * selected and paginated lists, watch resumed from a resourceVersion, an informer, every patch type, /status and
 * /scale. Each check expects what kube-apiserver answers for the Website served as a CRD
 * (`node test/clients/run.mjs crd` runs the same programs against one). Environments are prepared once and cached
 * outside the clone (test/clients/run.mjs).
 */
import { afterAll, beforeAll } from 'vitest';
import { defineClientSuites } from './clients/suites.js';
import { cleanupTempDirs, startServer, type ServerProcess } from './helpers/server-process.js';

let server: ServerProcess;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
  cleanupTempDirs();
});

// Standalone, any namespace name is usable; one per suite keeps each suite's list totals its own.
defineClientSuites('standalone', {
  kubeconfig: () => server.kubeconfig,
  namespace: async (id) => `clients-${id}`,
});
