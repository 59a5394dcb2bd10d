/**
 * Kinds defined by CustomResourceDefinition files, through the whole server as `npm start -- --crd PATH` runs it
 * (cmd/run.ts), driven by the real kubectl: the seed's CronTab (../shared/crds/seeds) applied, listed by its short
 * name with kube's default Age column, explained; a CRD of our own with two versions (one deprecated), printer
 * columns, selectable fields, status and scale; and a CRD kube refuses, refused at start with kube's message.
 * The expected columns and messages are kube-apiserver's for the same CRDs (test/e2e/crd-differential.test.ts
 * compares every answer with a real one).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../src/cmd/options.js';
import { run, type Running } from '../src/cmd/run.js';
import { CrdRefused } from '../src/kinds/crd/index.js';
import { kubectlRun } from './helpers/kubectl-run.js';
import { table } from './helpers/kubectl-table.js';
import { cleanupTempDirs, tempDir } from './helpers/server-process.js';
import { CRD_CORPUS } from './helpers/crd-corpus.mjs';

const SEEDS = join(CRD_CORPUS, 'seeds');
const CRONTAB_CRD = join(SEEDS, 'stable.example.com_crontabs.yaml');
const CRONTAB = join(SEEDS, 'stable.example.com_crontabs.example.yaml');

// A CRD with what CronTab lacks: two served versions (v1beta1 deprecated), columns, selectable fields, a CEL rule,
// status and scale.
const gadgets = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.crdtest.example.com' },
  spec: {
    group: 'crdtest.example.com',
    scope: 'Cluster',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', shortNames: ['gd'], categories: ['all'] },
    versions: ['v1', 'v1beta1'].map((name) => ({
      name,
      served: true,
      storage: name === 'v1',
      ...(name === 'v1beta1' ? { deprecated: true } : {}),
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: {
            spec: {
              type: 'object',
              properties: {
                color: { type: 'string', enum: ['red', 'green', 'blue'], default: 'red' },
                replicas: { type: 'integer', minimum: 0 },
                maxReplicas: { type: 'integer' },
              },
              'x-kubernetes-validations': [
                { rule: '!has(self.maxReplicas) || self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' },
              ],
            },
            status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' } } },
          },
        },
      },
      subresources: {
        status: {},
        scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
      },
      additionalPrinterColumns: [
        { name: 'Color', type: 'string', jsonPath: '.spec.color' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
      selectableFields: [{ jsonPath: '.spec.color' }],
    })),
  },
};

let running: Running;
let certDir: string;
let work: string;

beforeAll(async () => {
  certDir = tempDir('crd-kubectl-certs-');
  work = tempDir('crd-kubectl-work-');
  const gadgetFile = join(work, 'gadgets.json');
  writeFileSync(gadgetFile, JSON.stringify(gadgets));
  const parsed = parseOptions(
    ['--port', '0', '--data-dir', tempDir('crd-kubectl-data-'), '--cert-dir', certDir, '--log-level', 'silent', '--crd', CRONTAB_CRD, '--crd', gadgetFile],
    {},
  );
  if (parsed.kind !== 'ok') throw new Error(`options: ${JSON.stringify(parsed)}`);
  running = await run(parsed.options);
}, 30_000);

afterAll(async () => {
  await running?.stop();
  cleanupTempDirs();
});

const kubectl = (args: string[], input?: string) => kubectlRun(join(certDir, 'kubeconfig'), join(work, 'cache'), args, input);

describe('CRD files served through the real server and kubectl', () => {
  it('the seed CronTab: apply, get ct (NAME and Age only, as kube), get -o json, explain crontab.spec', async () => {
    const applied = await kubectl(['apply', '-n', 'default', '-f', CRONTAB]);
    expect(applied.stdout.trim(), applied.stderr).toBe('crontab.stable.example.com/my-new-cron-object created');
    const got = await kubectl(['get', 'ct', '-n', 'default']);
    expect(got.stderr).toBe('');
    const t = table(got.stdout);
    expect(t.header).toEqual(['NAME', 'AGE']);
    expect(t.rows.map((r) => r['NAME'])).toEqual(['my-new-cron-object']);
    const obj = JSON.parse((await kubectl(['get', 'crontab', 'my-new-cron-object', '-n', 'default', '-o', 'json'])).stdout);
    expect(obj.spec).toEqual({ cronSpec: '* * * * */5', image: 'my-awesome-cron-image' });
    const explained = await kubectl(['explain', 'crontab.spec']);
    expect(explained.stderr).toBe('');
    expect(explained.stdout).toMatch(/^KIND:\s+CronTab$/m);
    expect(explained.stdout).toMatch(/^\s+cronSpec\s+<string>$/m);
    expect(explained.stdout).toMatch(/^\s+replicas\s+<integer>$/m);
    const resources = await kubectl(['api-resources', '--api-group=stable.example.com']);
    expect(table(resources.stdout).rows).toEqual([
      { NAME: 'crontabs', SHORTNAMES: 'ct', APIVERSION: 'stable.example.com/v1', NAMESPACED: 'true', KIND: 'CronTab' },
    ]);
  });

  it('Gadget: defaults, columns, CEL rule, selectable field, scale, and the deprecated version warns', async () => {
    const g = { apiVersion: 'crdtest.example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { replicas: 2 } };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(g))).stdout.trim()).toBe('gadget.crdtest.example.com/g1 created');
    const blue = { ...g, metadata: { name: 'g2' }, spec: { color: 'blue', replicas: 1, maxReplicas: 3 } };
    expect((await kubectl(['apply', '-f', '-'], JSON.stringify(blue))).stdout.trim()).toBe('gadget.crdtest.example.com/g2 created');
    const t = table((await kubectl(['get', 'gadgets'])).stdout);
    expect(t.header).toEqual(['NAME', 'COLOR', 'REPLICAS', 'AGE']);
    expect(t.rows.map((r) => [r['NAME'], r['COLOR'], r['REPLICAS']])).toEqual([
      ['g1', 'red', '2'],
      ['g2', 'blue', '1'],
    ]);
    const bad = await kubectl(['apply', '-f', '-'], JSON.stringify({ ...blue, spec: { ...blue.spec, replicas: 5 } }));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('The Gadget "g2" is invalid: spec: Invalid value: replicas must not exceed maxReplicas');
    const selected = await kubectl(['get', 'gadgets', '--field-selector', 'spec.color=blue', '-o', 'name']);
    expect(selected.stdout.trim(), selected.stderr).toBe('gadget.crdtest.example.com/g2');
    const unsupported = await kubectl(['get', 'gadgets', '--field-selector', 'spec.replicas=1']);
    expect(unsupported.stderr).toContain('field label not supported: spec.replicas');
    const scaled = await kubectl(['scale', 'gadget', 'g1', '--replicas=4']);
    expect(scaled.stdout.trim(), scaled.stderr).toBe('gadget.crdtest.example.com/g1 scaled');
    expect(JSON.parse((await kubectl(['get', 'gadget', 'g1', '-o', 'json'])).stdout).spec).toEqual({ color: 'red', replicas: 4 });
    const beta = await kubectl(['get', 'gadgets.v1beta1.crdtest.example.com', 'g1', '-o', 'json']);
    expect(JSON.parse(beta.stdout).apiVersion).toBe('crdtest.example.com/v1beta1');
    expect(beta.stderr).toContain('Warning: crdtest.example.com/v1beta1 Gadget is deprecated; use crdtest.example.com/v1 Gadget');
  });

  it("a CRD kube refuses stops the start with kube's message, naming the file", async () => {
    const file = join(SEEDS, 'flights.com_flighttickets.as-written.yaml');
    const parsed = parseOptions(
      ['--port', '0', '--data-dir', tempDir('crd-refused-'), '--cert-dir', tempDir('crd-refused-certs-'), '--log-level', 'silent', '--crd', file],
      {},
    );
    if (parsed.kind !== 'ok') throw new Error('options');
    const started = run(parsed.options);
    await expect(started).rejects.toBeInstanceOf(CrdRefused);
    await expect(started).rejects.toThrow(
      `${file} (document 1): CustomResourceDefinition.apiextensions.k8s.io "flighttickets.flights.com" is invalid: spec.scope: Unsupported value: "Namespced": supported values: "Cluster", "Namespaced"`,
    );
  });
});
