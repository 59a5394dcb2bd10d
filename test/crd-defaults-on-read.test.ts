/**
 * Defaults on read: kube-apiserver defaults every custom resource it reads from storage, so when a CRD gains a
 * default, objects stored before show it at once (with their resourceVersion unchanged). Here the server restarts
 * on the same data with the CRD file changed to add defaults: a get, a list (the stored-text fast path) and a watch's
 * initial events show them, and the resourceVersion is the one stored.
 */
import { describe, expect, it } from 'vitest';
import { crdRestarts } from './helpers/crd-restarts.js';

const crd = (withDefaults: boolean) => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.defaults.example.com' },
  spec: {
    group: 'defaults.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  size: { type: 'integer' },
                  shape: { type: 'string', ...(withDefaults ? { default: 'round' } : {}) },
                  parts: {
                    type: 'array',
                    items: { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer', ...(withDefaults ? { default: 1 } : {}) } } },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
});

const server = crdRestarts('crd-defaults');
const start = (v: Parameters<typeof crd>[0]) => server.start(crd(v));
const kubectl = server.kubectl;

describe('a CRD that gains defaults', () => {
  it('shows them on objects stored before, in a get, a list and a watch, with the stored resourceVersion', async () => {
    await start(false);
    const w = {
      apiVersion: 'defaults.example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'default' },
      spec: { size: 3, parts: [{ name: 'a' }] },
    };
    expect((await kubectl(['create', '-f', '-'], JSON.stringify(w))).stdout.trim()).toBe('widget.defaults.example.com/w1 created');
    const before = JSON.parse((await kubectl(['get', 'widget', 'w1', '-n', 'default', '-o', 'json'])).stdout);
    expect(before.spec).toEqual({ size: 3, parts: [{ name: 'a' }] });
    await start(true);
    const want = { size: 3, shape: 'round', parts: [{ name: 'a', count: 1 }] };
    const got = JSON.parse((await kubectl(['get', 'widget', 'w1', '-n', 'default', '-o', 'json'])).stdout);
    expect(got.spec).toEqual(want);
    expect(got.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    // The list's fast path sends stored text as it is: it has the defaults once the walk has stored them.
    await expect
      .poll(async () => JSON.parse((await kubectl(['get', 'widgets', '-n', 'default', '-o', 'json'])).stdout).items[0].spec, { timeout: 10_000 })
      .toEqual(want);
    const listed = JSON.parse((await kubectl(['get', 'widgets', '-n', 'default', '-o', 'json'])).stdout).items[0];
    expect(listed.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const watched = await kubectl([
      'get',
      'widgets',
      '-n',
      'default',
      '--watch',
      '--output-watch-events',
      '-o',
      'jsonpath={.type} {.object.spec}{"\\n"}',
      '--request-timeout=2s',
    ]);
    const [type, ...spec] = (watched.stdout.split('\n')[0] ?? '').split(' ');
    expect(type).toBe('ADDED');
    expect(JSON.parse(spec.join(' '))).toEqual(want);
  });
});
