/**
 * CRD serving, differentially: every CRD file of the shared corpus (../shared/crds, and its seeds/, except the
 * `.as-written` file kube refuses) is served by kube-apiserver 1.37 (the e2e plane) and by our server in process
 * (`createServer` with the kinds `loadCrds` builds from the same file), and the same request sequence is sent to both
 * (test/e2e/crd-diff/steps.ts): discovery and OpenAPI v3; in every served version the examples created, read, listed, listed as
 * Tables and by field selectors, updated by PUT, merge patch and JSON patch, applied by two managers with a conflict
 * and a force, status and scale written, invalid objects generated from the schema and the upstream CEL cases
 * refused, and all deleted. kube-apiserver's answers are the specification: each step compares the status code, the
 * Warning headers and the body, with only what cannot match normalised (uid, resourceVersion, creationTimestamp,
 * managedFields times, generated name suffixes, Table ages; test/e2e/crd-diff/compare.ts).
 *
 * A mismatching step does not stop its CRD's sequence: each `it` fails at its end with a report naming every
 * differing step with both values, kube first. CRD_DIFF_TRACE=dir writes every step's normalised answers there.
 * A difference we will not remove is listed in ACCEPTED, narrowly, with its reason.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authentication } from '../../src/auth/authentication.js';
import { loadCrds } from '../../src/kinds/crd/index.js';
import { createServer } from '../../src/server/server.js';
import { LmdbStorage } from '../../src/storage/lmdb-storage.js';
import { report, type Accepted } from './crd-diff/compare.js';
import { crdFiles, loadCase, type CrdCase } from './crd-diff/corpus.js';
import { runSteps } from './crd-diff/run.js';
import { kubeCaller, oursCaller } from './crd-diff/sides.js';
import { kindSchema, sequence } from './crd-diff/steps.js';
import { suffix } from './helpers-access.js';
import { waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';

const env = e2e();
const NS = `crd-diff-${suffix()}`;
const TRACE = process.env['CRD_DIFF_TRACE'];
const kube = kubeCaller(env.server, readFileSync(env.caFile, 'utf8'), env.tokens.admin);
const CASES: CrdCase[] = crdFiles().map(loadCase);

/** Differences we will not remove, each with its reason (none yet). */
const ACCEPTED: Accepted[] = [];

const authentication: Authentication = {
  authenticate: async () => ({ name: 'admin', groups: ['system:masters', 'system:authenticated'] }),
  trustedCAs: () => [],
  onTrustChange: () => {},
};

/** ours serves one CRD file in process on a fresh store. */
async function ours(c: CrdCase) {
  const dir = mkdtempSync(join(tmpdir(), 'crd-differential-'));
  const storage = new LmdbStorage({ path: join(dir, 'data') });
  const { app } = createServer({ storage, kinds: loadCrds([c.path]).kinds, logger: pino({ level: 'silent' }), authentication, standalone: false });
  await app.ready();
  return {
    app,
    close: async () => {
      await app.close();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const crdPath = (c: CrdCase) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.crd.metadata.name}`;

beforeAll(async () => {
  expect((await kube.call({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } })).code).toBe(
    201,
  );
  // Every CRD at once, then each served version answering and published: no built-in API serves their groups.
  await Promise.all(
    CASES.map(async (c) => {
      const create = () => kube.call({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: c.crd });
      let r = await create();
      if (r.code === 409) {
        // Left by an earlier run on this plane: replaced, so that no object of it is left either.
        await kube.call({ method: 'DELETE', path: crdPath(c) });
        await waitFor(`CRD ${c.crd.metadata.name} gone`, async () => (await kube.call({ method: 'GET', path: crdPath(c) })).code === 404, 120_000, 250);
        r = await create();
      }
      if (r.code !== 201) throw new Error(`creating CRD ${c.file} on kube-apiserver: HTTP ${r.code} ${JSON.stringify(r.body)}`);
      await waitFor(
        `${c.crd.metadata.name} Established`,
        async () =>
          (await kube.call({ method: 'GET', path: crdPath(c) })).body?.status?.conditions?.some(
            (x: { type: string; status: string }) => x.type === 'Established' && x.status === 'True',
          ),
        60_000,
        100,
      );
      for (const v of c.versions) {
        await waitFor(
          `${c.plural}.${c.group}/${v.name} served`,
          async () => (await kube.call({ method: 'GET', path: `/apis/${c.group}/${v.name}/${c.plural}?limit=1` })).code === 200,
          60_000,
          100,
        );
        // kube-apiserver publishes a CRD's OpenAPI a moment after serving it.
        await waitFor(
          `${c.plural}.${c.group}/${v.name} in OpenAPI v3`,
          async () => Object.keys(kindSchema((await kube.call({ method: 'GET', path: `/openapi/v3/apis/${c.group}/${v.name}` })).body, c.kind)).length > 0,
          60_000,
          250,
        );
      }
    }),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(
    CASES.map(async (c) => {
      await kube.call({ method: 'DELETE', path: crdPath(c) });
      await waitFor(`CRD ${c.crd.metadata.name} gone`, async () => (await kube.call({ method: 'GET', path: crdPath(c) })).code === 404, 120_000, 250).catch(
        (e: unknown) => process.stderr.write(`${String(e)}\n`),
      );
    }),
  );
  await kube.call({ method: 'DELETE', path: `/api/v1/namespaces/${NS}` });
  await kube.close();
}, 180_000);

describe('CRDs served as kube-apiserver serves them, request for request', () => {
  for (const c of CASES) {
    it(`${c.file}: ${c.kind} (${c.versions.map((v) => v.name).join(', ')})`, async () => {
      const server = await ours(c);
      try {
        const results = await runSteps(c.file, sequence(c, NS), kube.call, oursCaller(server.app), ACCEPTED, TRACE);
        const text = report(c.file, results);
        process.stderr.write(`${text}\n`);
        const failing = results.filter((r) => r.differences.length);
        if (failing.length) expect.fail(`${failing.length} of ${results.length} steps differ from kube-apiserver\n${text}`);
      } finally {
        await server.close();
      }
    });
  }
});
