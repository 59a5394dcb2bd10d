/**
 * A controller-runtime controller beside our reconciler (issue 25): `client.Status().Apply` of one condition of its
 * own on a Website, through kube-apiserver, from a real controller-runtime v0.25 client (test/e2e/go/statusapply,
 * linked as `status-apply`). Kube's rules, as kube-apiserver applies them to the same schema as a CRD:
 * status.conditions is a list map keyed by `type`, so
 * - the applier's condition is added beside the reconciler's Ready, Progressing and Degraded, none of them lost;
 * - its Apply entry (subresource status) owns exactly its own `k:{"type":...}` under f:status.f:conditions, and the
 *   reconciler's status entry keeps owning its three;
 * - the reconciler writing status again (after a spec change) keeps the applied condition as it was;
 * - the applier changing its condition changes only that condition;
 * - a second applier's condition of another type, applied without force, conflicts with nobody and both stay.
 * The reconciler's turn after each write is awaited from its `reconcile done` log lines (the server runs at debug
 * level with its reconcilers on), so a reconciler that drops the condition a moment later is caught.
 */
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIELD_MANAGER } from '../../src/kinds/website/controllers/children.js';
import { suffix } from './helpers-access.js';
import { kubectl, kubectlOk, waitFor } from './harness/kubectl.js';
import { reconcilersOff, reconcilersOn } from './harness/reconcilers.js';
import { e2e } from './harness/state.js';

const env = e2e();
const NS = `status-apply-${suffix()}`;
const NAME = 'site';
const STATUS_APPLY = join(env.binDir, 'status-apply');
const RESOURCE = 'websites.v1.extensions.example.com';
const RECONCILER_TYPES = ['Degraded', 'Progressing', 'Ready'];
const CUSTOM = { owner: 'custom-controller', type: 'CustomReady' };
const OTHER = { owner: 'other-controller', type: 'CacheWarm' };

type Json = any;
interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  observedGeneration?: number;
}
interface Entry {
  manager: string;
  operation: string;
  apiVersion: string;
  subresource?: string;
  fieldsType?: string;
  fieldsV1?: Json;
}

const k = (args: string[], input?: string) => kubectlOk(env.kubeconfig.admin, args, input === undefined ? {} : { input });
/** read gets the Website in v1 with its managedFields. */
const read = async (): Promise<Json> => JSON.parse(await k(['get', RESOURCE, NAME, '-n', NS, '-o', 'json', '--show-managed-fields']));
const conditionOf = (o: Json, type: string): Condition | undefined => o.status?.conditions?.find((c: Condition) => c.type === type);
const types = (o: Json): string[] => (o.status?.conditions ?? []).map((c: Condition) => c.type).sort();
/** statusEntries are the managedFields entries of `manager` on the status subresource. */
const statusEntries = (o: Json, manager: string): Entry[] =>
  (o.metadata.managedFields ?? []).filter((e: Entry) => e.manager === manager && e.subresource === 'status');
const listKey = (type: string) => `k:${JSON.stringify({ type })}`;
/**
 * conditionKeys are the list-map keys an entry owns under f:status.f:conditions (an atomic list has none). An Update
 * that created the list also owns the list itself ('.'), which is not a condition.
 */
const conditionKeys = (e: Entry | undefined): string[] =>
  Object.keys(e?.fieldsV1?.['f:status']?.['f:conditions'] ?? {})
    .filter((key) => key.startsWith('k:'))
    .sort();
/** appliedFields is kube's FieldsV1 of an Apply that sets one condition with every field but observedGeneration. */
const appliedFields = (type: string) => ({
  'f:status': {
    'f:conditions': {
      [listKey(type)]: { '.': {}, 'f:type': {}, 'f:status': {}, 'f:reason': {}, 'f:message': {}, 'f:lastTransitionTime': {} },
    },
  },
});
const show = (o: Json) => JSON.stringify({ conditions: o.status?.conditions, managedFields: o.metadata?.managedFields }, null, 1);

interface ApplyArgs {
  owner: string;
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
  force?: boolean;
}

/** statusApply runs the controller-runtime client once and returns the object the server answered. */
function statusApply(a: ApplyArgs): Promise<Json> {
  const args = [
    '-kubeconfig',
    env.kubeconfig.admin,
    '-namespace',
    NS,
    '-name',
    NAME,
    '-field-owner',
    a.owner,
    '-type',
    a.type,
    '-status',
    a.status,
    '-reason',
    a.reason,
    '-message',
    a.message,
    '-last-transition-time',
    a.lastTransitionTime,
    `-force=${a.force ?? true}`,
  ];
  return new Promise((resolve, reject) => {
    execFile(STATUS_APPLY, args, { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`status-apply ${a.owner} ${a.type}=${a.status} failed (${err.code ?? err.signal}): ${stderr.trim()}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

// The reconciler's runs of this Website, from our server's log (debug level with the reconcilers on).
let logOffset = 0;
function runsSince(t0: number): number[] {
  const text = readFileSync(env.website.logFile).subarray(logOffset).toString('utf8');
  const starts: number[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"reconcile done"') || !line.includes(`"${NS}/${NAME}"`)) continue;
    try {
      const o = JSON.parse(line) as { key?: string; msg?: string; startedAt?: number };
      if (o.msg === 'reconcile done' && o.key === `${NS}/${NAME}` && (o.startedAt ?? 0) >= t0) starts.push(o.startedAt ?? 0);
    } catch {
      /* a line being written */
    }
  }
  return starts;
}

/**
 * settled waits until the reconciler has run on the Website since `t0` (taken before the last write, which queues a
 * run) and then done nothing more for 1.5 s, and reads the Website.
 */
async function settled(t0: number): Promise<Json> {
  await waitFor('a reconcile of the Website after the write', () => runsSince(t0).length > 0, 30_000, 100);
  let seen = -1;
  let quietSince = Date.now();
  await waitFor(
    'the reconciler to be done with the Website',
    () => {
      const n = runsSince(t0).length;
      if (n !== seen) [seen, quietSince] = [n, Date.now()];
      return Date.now() - quietSince >= 1500;
    },
    60_000,
    100,
  );
  return read();
}

/** withoutCondition is a status minus one condition type. */
const withoutCondition = (status: Json, type: string) => ({ ...status, conditions: status.conditions.filter((c: Condition) => c.type !== type) });

/** expectReconcilerOwnsItsConditions: one status entry of the reconciler, owning Ready, Progressing and Degraded by key. */
function expectReconcilerOwnsItsConditions(o: Json): void {
  const entries = statusEntries(o, FIELD_MANAGER);
  expect(entries, `the reconciler's status entry\n${show(o)}`).toHaveLength(1);
  expect(conditionKeys(entries[0]), `what the reconciler's status entry owns under f:status.f:conditions\n${show(o)}`).toEqual(
    RECONCILER_TYPES.map(listKey).sort(),
  );
}

/** expectAppliedEntry: one Apply entry of `owner` on status, owning exactly its condition. */
function expectAppliedEntry(o: Json, owner: string, type: string): void {
  const entries = statusEntries(o, owner);
  expect(
    entries.map((e) => `${e.manager}/${e.operation}/${e.subresource}`),
    show(o),
  ).toEqual([`${owner}/Apply/status`]);
  expect(entries[0]?.apiVersion).toBe('extensions.example.com/v1');
  expect(entries[0]?.fieldsType).toBe('FieldsV1');
  expect(entries[0]?.fieldsV1, `${owner}'s fields\n${show(o)}`).toEqual(appliedFields(type));
}

const T1 = '2026-01-02T03:04:05Z';
const T2 = '2026-01-02T03:09:00Z';
const custom: ApplyArgs = { ...CUSTOM, status: 'True', reason: 'AllGood', message: 'the custom check passed', lastTransitionTime: T1 };

beforeAll(async () => {
  await reconcilersOn(env);
  logOffset = statSync(env.website.logFile).size;
  await k(['create', 'namespace', NS]);
});
afterAll(async () => {
  // With the reconcilers still on, so our finalizer is honoured and the namespace really goes.
  await kubectl(env.kubeconfig.admin, ['delete', 'namespace', NS, '--timeout=90s'], { timeoutMs: 100_000 });
  await reconcilersOff(env);
});

describe('controller-runtime Status().Apply beside our reconciler', () => {
  // Each step builds on the one before: `before` is the Website as the last step read it (set before its assertions,
  // so a failed step does not leave the next comparing with an older object).
  let before: Json;

  it('the reconciler writes its conditions on a new Website', async () => {
    const t0 = Date.now();
    await k(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'extensions.example.com/v1',
        kind: 'Website',
        metadata: { name: NAME, namespace: NS },
        spec: { replicas: 1, git: { repository: 'https://github.com/luksa/kubia-website-example.git' } },
      }),
    );
    await waitFor(
      "the reconciler's status",
      async () => {
        const o = await read();
        return o.status?.observedGeneration === o.metadata.generation && types(o).length === 3 && statusEntries(o, FIELD_MANAGER).length > 0;
      },
      60_000,
      200,
    );
    before = await settled(t0);
    expect(types(before)).toEqual(RECONCILER_TYPES);
    expectReconcilerOwnsItsConditions(before);
  });

  it("applies CustomReady as custom-controller: added beside the reconciler's conditions, owned by key", async () => {
    const t0 = Date.now();
    const answered = await statusApply(custom);
    const prev = before;
    const o = (before = await settled(t0));
    // The client decodes the server's answer into its object: the Website in v1 with the condition as applied.
    expect(answered.apiVersion).toBe('extensions.example.com/v1');
    expect(conditionOf(answered, CUSTOM.type)).toEqual({
      type: CUSTOM.type,
      status: 'True',
      reason: 'AllGood',
      message: 'the custom check passed',
      lastTransitionTime: T1,
    });
    expect(types(answered), `the answer to the apply\n${show(answered)}`).toEqual([...RECONCILER_TYPES, CUSTOM.type].sort());
    expect(types(o), `after the reconciler's turn\n${show(o)}`).toEqual([...RECONCILER_TYPES, CUSTOM.type].sort());
    expect(conditionOf(o, CUSTOM.type)).toEqual(conditionOf(answered, CUSTOM.type));
    // The reconciler's conditions are as they were, and so is the rest of the object.
    expect(withoutCondition(o.status, CUSTOM.type)).toEqual(prev.status);
    expect(o.spec).toEqual(prev.spec);
    expect(o.metadata.generation).toBe(prev.metadata.generation);
    expectAppliedEntry(o, CUSTOM.owner, CUSTOM.type);
    expectReconcilerOwnsItsConditions(o);
  });

  it('keeps CustomReady when a spec change makes the reconciler write status again', async () => {
    const t0 = Date.now();
    const prev = before;
    await k(['patch', RESOURCE, NAME, '-n', NS, '--type', 'merge', '-p', JSON.stringify({ spec: { replicas: 2 } })]);
    await waitFor(
      'the reconciler to write status for the new generation',
      async () => {
        const o = await read();
        return o.metadata.generation > prev.metadata.generation && o.status?.observedGeneration === o.metadata.generation;
      },
      60_000,
      200,
    );
    const o = (before = await settled(t0));
    expect(o.status.observedGeneration).toBe(o.metadata.generation);
    expect(types(o), `after the reconciler wrote status for generation ${o.metadata.generation}\n${show(o)}`).toEqual(
      [...RECONCILER_TYPES, CUSTOM.type].sort(),
    );
    expect(conditionOf(o, CUSTOM.type), 'the applied condition, untouched by the reconciler').toEqual(conditionOf(prev, CUSTOM.type));
    // The reconciler stamps its own conditions with the generation it saw.
    for (const t of RECONCILER_TYPES) expect(conditionOf(o, t)?.observedGeneration).toBe(o.metadata.generation);
    expectAppliedEntry(o, CUSTOM.owner, CUSTOM.type);
    expectReconcilerOwnsItsConditions(o);
  });

  it('applies CustomReady again with another status: only that condition changes', async () => {
    const t0 = Date.now();
    const changed = { ...custom, status: 'False', reason: 'CheckFailed', message: 'the custom check failed', lastTransitionTime: T2 };
    const answered = await statusApply(changed);
    const prev = before;
    const o = (before = await settled(t0));
    expect(conditionOf(answered, CUSTOM.type)).toEqual({
      type: CUSTOM.type,
      status: 'False',
      reason: 'CheckFailed',
      message: 'the custom check failed',
      lastTransitionTime: T2,
    });
    expect(conditionOf(o, CUSTOM.type), show(o)).toEqual(conditionOf(answered, CUSTOM.type));
    expect(withoutCondition(o.status, CUSTOM.type), 'everything else in status').toEqual(withoutCondition(prev.status, CUSTOM.type));
    expect(o.spec).toEqual(prev.spec);
    expect(o.metadata.finalizers).toEqual(prev.metadata.finalizers);
    expect(o.metadata.generation).toBe(prev.metadata.generation);
    expectAppliedEntry(o, CUSTOM.owner, CUSTOM.type);
    expectReconcilerOwnsItsConditions(o);
  });

  it("a second applier (other-controller, without force) adds CacheWarm: no conflict, both appliers' conditions kept", async () => {
    const t0 = Date.now();
    const answered = await statusApply({ ...OTHER, status: 'True', reason: 'Warmed', message: 'the cache is warm', lastTransitionTime: T1, force: false });
    const o = await settled(t0);
    expect(types(answered), show(answered)).toEqual([...RECONCILER_TYPES, CUSTOM.type, OTHER.type].sort());
    expect(types(o), show(o)).toEqual([...RECONCILER_TYPES, CUSTOM.type, OTHER.type].sort());
    expect(conditionOf(o, OTHER.type)).toEqual({ type: OTHER.type, status: 'True', reason: 'Warmed', message: 'the cache is warm', lastTransitionTime: T1 });
    expect(conditionOf(o, CUSTOM.type)).toEqual(conditionOf(before, CUSTOM.type));
    expect(withoutCondition(o.status, OTHER.type)).toEqual(before.status);
    expectAppliedEntry(o, CUSTOM.owner, CUSTOM.type);
    expectAppliedEntry(o, OTHER.owner, OTHER.type);
    expectReconcilerOwnsItsConditions(o);
  });
});
