/**
 * @module cluster/namespace-lifecycle.test
 * NamespaceLifecycle against a fake API server: the errors kube's NamespaceLifecycle admission plugin gives for a create
 * in a missing namespace (404 from errors.NewNotFound(namespaces)) and in a terminating one (403 from
 * admission.NewForbidden with a NamespaceTerminating cause; plugin/pkg/admission/namespace/lifecycle/admission.go),
 * namespaces read from the informer rather than per request, and a live lookup for one the informer has not seen.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startFakeKube, type Collection, type FakeKube, type KubeObject } from '../../test/helpers/fake-kube.js';
import { StatusError } from '../apis/meta/errors.js';
import { namespaceLifecycle, NAMESPACE_TERMINATING_CAUSE, type NamespaceLifecycle } from './namespace-lifecycle.js';

const NAMESPACES = '/api/v1/namespaces';
const WEBSITES = { group: 'extensions.example.com', resource: 'websites' };
const namespace = (name: string, phase: 'Active' | 'Terminating' = 'Active'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, ...(phase === 'Terminating' ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { finalizers: ['kubernetes'] },
  status: { phase },
});

/** rejection returns the StatusError admitCreate throws. */
async function rejection(p: Promise<void>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    return e as StatusError;
  }
  throw new Error('expected admitCreate to reject');
}

let kube: FakeKube;
let nss: Collection;
let lc: NamespaceLifecycle;
const gets = () => kube.requests.filter((r) => r.startsWith(`GET ${NAMESPACES}/`));

beforeAll(async () => {
  kube = await startFakeKube();
  nss = kube.collection(NAMESPACES, 'NamespaceList');
  for (const ns of [namespace('default'), namespace('doomed', 'Terminating')]) nss.items.set(ns.metadata.name, ns);
  lc = namespaceLifecycle(kube.kubeconfig, pino({ level: 'silent' }));
  await eventually(lc.synced, 5000, 'namespace informer sync');
  await eventually(() => kube.openWatches(NAMESPACES) === 1, 5000, 'namespace watch');
});
afterAll(async () => {
  await lc?.stop();
  await kube?.close();
});

describe('namespaceLifecycle', () => {
  it('admits a create in an active namespace from the informer, without a request per create', async () => {
    const before = kube.requests.length;
    await lc.admitCreate('default', WEBSITES, 'kubia');
    await lc.admitCreate('default', WEBSITES, 'kubia-2');
    expect(kube.requests.length).toBe(before);
  });

  it('rejects a create in a missing namespace with 404 NotFound for the namespace, after one live lookup', async () => {
    const e = await rejection(lc.admitCreate('missing', WEBSITES, 'kubia'));
    expect(e.status).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 404,
      reason: 'NotFound',
      message: 'namespaces "missing" not found',
      details: { name: 'missing', kind: 'namespaces' },
    });
    expect(gets()).toContain(`GET ${NAMESPACES}/missing`);
  });

  it('rejects a create in a terminating namespace with 403 Forbidden and a NamespaceTerminating cause', async () => {
    const e = await rejection(lc.admitCreate('doomed', WEBSITES, 'kubia'));
    expect(e.status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'websites.extensions.example.com "kubia" is forbidden: unable to create new content in namespace doomed because it is being terminated',
      details: { name: 'kubia', group: 'extensions.example.com', kind: 'websites' },
    });
    expect(e.status.details?.causes).toEqual([expect.objectContaining({ reason: NAMESPACE_TERMINATING_CAUSE, field: 'metadata.namespace' })]);
    expect(NAMESPACE_TERMINATING_CAUSE).toBe('NamespaceTerminating');
  });

  it('words the 403 without a name for a create that has none yet (generateName)', async () => {
    const e = await rejection(lc.admitCreate('doomed', WEBSITES, ''));
    expect(e.status.message).toBe(
      'websites.extensions.example.com is forbidden: unable to create new content in namespace doomed because it is being terminated',
    );
    expect(e.status.details).not.toHaveProperty('name');
  });

  // lifecycle/admission.go: the cause's message is `namespace %s is being terminated`, not the error's message.
  // Expected to fail until namespace-lifecycle.ts uses that wording (see the report); then drop `.fails`.
  it('the cause says "namespace <ns> is being terminated"', async () => {
    const e = await rejection(lc.admitCreate('doomed', WEBSITES, 'kubia'));
    expect(e.status.details?.causes).toEqual([
      { reason: 'NamespaceTerminating', message: 'namespace doomed is being terminated', field: 'metadata.namespace' },
    ]);
  });

  // errors.NewNotFound(v1.Resource("namespaces"), ns) has Group "", which metav1.StatusDetails omits (omitempty).
  // Expected to fail while errors.ts writes `"group":""`; then drop `.fails`.
  it('the 404 details carry no empty group', async () => {
    const e = await rejection(lc.admitCreate('missing', WEBSITES, 'kubia'));
    expect(JSON.parse(JSON.stringify(e.status.details))).toEqual({ name: 'missing', kind: 'namespaces' });
  });

  it('admits a create in a namespace created a moment ago that only a live lookup finds', async () => {
    nss.getOnly.set('fresh', namespace('fresh'));
    await lc.admitCreate('fresh', WEBSITES, 'kubia');
    expect(gets()).toContain(`GET ${NAMESPACES}/fresh`);
  });

  it('follows watch events: a namespace that appears, starts terminating, and is deleted', async () => {
    // After each event the fake's own list/get state is set to say the opposite, so only the watch can explain the outcome.
    kube.emit(NAMESPACES, 'ADDED', namespace('later'));
    nss.items.delete('later');
    await waitFor(async () => (await settle(lc.admitCreate('later', WEBSITES, 'a'))) === 'ok');
    // Until the event arrived a live lookup may have run; from now on the informer answers alone.
    const lookups = gets().length;
    kube.emit(NAMESPACES, 'MODIFIED', namespace('later', 'Terminating'));
    nss.items.delete('later');
    await waitFor(async () => (await settle(lc.admitCreate('later', WEBSITES, 'a'))) === 403);
    expect(gets().length).toBe(lookups);
    nss.items.set('later', namespace('later'));
    kube.emit(NAMESPACES, 'DELETED', namespace('later', 'Terminating'));
    await waitFor(async () => (await settle(lc.admitCreate('later', WEBSITES, 'a'))) === 404);
  });
});

/** settle says how an admission ended: ok, or the status code. */
async function settle(p: Promise<void>): Promise<'ok' | number> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return e instanceof StatusError ? e.code : -1;
  }
}
async function waitFor(cond: () => Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
