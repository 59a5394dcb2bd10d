/**
 * Deletes validate first, over HTTPS on a real server process: DeleteOptions from the body decoded as a typed
 * metav1.DeleteOptions, or from the query with its preconditions (k8s.io/apiserver handlers/delete.go,
 * meta/v1 conversion.go Convert_url_Values_To_v1_DeleteOptions), validated (ValidateDeleteOptions), preconditions
 * checked as rest.BeforeDelete words them, and deletecollection reading the collection with the request's
 * ListOptions as registry/store.go DeleteCollection does (at most `limit` items, a continue token honoured, a bad
 * one refused). Every expected answer is what kube-apiserver 1.37 serving the Website CRD answered; after every
 * refusal the objects are read back to show nothing was deleted.
 */
import type { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { API, call, useServer, website, type ServerProcess } from './helpers/server-process.js';

let server: ServerProcess;
let agent: Agent;
const ns = (n: string) => `${server.url}${API}/namespaces/${n}/websites`;
let seq = 0;

useServer((s, a) => {
  server = s;
  agent = a;
});

const status = (code: number, reason: string, message: string) => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  code,
});

/** one creates a Website in a fresh namespace and returns [namespace, the stored object]. */
async function one(extra: Record<string, unknown> = {}): Promise<[string, any]> {
  const namespace = `d${++seq}`;
  const r = await call(agent, ns(namespace), 'POST', website('w', {}, extra));
  expect(r.status).toBe(201);
  return [namespace, r.body];
}

/** names lists what is left in a namespace. */
const names = async (namespace: string): Promise<string[]> => (await call(agent, ns(namespace))).body.items.map((i: any) => i.metadata.name);

describe('DELETE: a body that is not a DeleteOptions is 400 and nothing is deleted', () => {
  it.each<[string, unknown, string]>([
    ['a body of another kind', { kind: 'Pod', apiVersion: 'v1' }, 'no kind "Pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"'],
    [
      'the object itself',
      { kind: 'Website', apiVersion: 'extensions.example.com/v1alpha1' },
      'no kind "Website" is registered for version "extensions.example.com/v1alpha1" in scheme "pkg/runtime/scheme.go:111"',
    ],
    ['other options', { kind: 'ListOptions' }, 'converting (v1.ListOptions) to (v1.DeleteOptions): unknown conversion'],
    ['an apiVersion that does not parse', { kind: 'DeleteOptions', apiVersion: 'a/b/c' }, 'unexpected GroupVersion string: a/b/c'],
    [
      'a list',
      [],
      'couldn\'t get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }',
    ],
    [
      'a kind that is a number',
      { kind: 5 },
      "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string",
    ],
    [
      'gracePeriodSeconds as a string',
      { gracePeriodSeconds: '5' },
      'json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64',
    ],
    [
      'gracePeriodSeconds not whole',
      { gracePeriodSeconds: 1.5 },
      'json: cannot unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64',
    ],
    [
      'gracePeriodSeconds beyond int64',
      { gracePeriodSeconds: 1e30 },
      'json: cannot unmarshal number 1e+30 into Go struct field DeleteOptions.gracePeriodSeconds of type int64',
    ],
    [
      'a propagationPolicy that is a number',
      { propagationPolicy: 5 },
      'json: cannot unmarshal number into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation',
    ],
    [
      'orphanDependents as a string',
      { orphanDependents: 'yes' },
      'json: cannot unmarshal string into Go struct field DeleteOptions.orphanDependents of type bool',
    ],
    [
      'preconditions that are a string',
      { preconditions: 'x' },
      'json: cannot unmarshal string into Go struct field DeleteOptions.preconditions of type v1.Preconditions',
    ],
    [
      'a precondition uid that is a number',
      { preconditions: { uid: 5 } },
      'json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID',
    ],
    ['dryRun as a string', { dryRun: 'All' }, 'json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string'],
    [
      'the unsafe option as a string',
      { ignoreStoreReadErrorWithClusterBreakingPotential: 'x' },
      'json: cannot unmarshal string into Go struct field DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential of type bool',
    ],
  ])('%s', async (_name, body, message) => {
    const [namespace] = await one();
    const r = await call(agent, `${ns(namespace)}/w`, 'DELETE', body);
    expect(r.body).toEqual(status(400, 'BadRequest', message));
    expect(await names(namespace)).toEqual(['w']);
  });

  it.each<[string, string]>([
    ['{"gracePeriodSeconds":1e3}', 'json: cannot unmarshal number 1e3 into Go struct field DeleteOptions.gracePeriodSeconds of type int64'],
    [
      '{"gracePeriodSeconds":-9223372036854775809}',
      'json: cannot unmarshal number -9223372036854775809 into Go struct field DeleteOptions.gracePeriodSeconds of type int64',
    ],
    ['{"gracePeriodSeconds":5.0}', 'json: cannot unmarshal number 5.0 into Go struct field DeleteOptions.gracePeriodSeconds of type int64'],
  ])('a body read from its bytes as Go reads it: %s is 400, on one object and on the collection', async (text, message) => {
    const [namespace] = await one();
    const r = await call(agent, `${ns(namespace)}/w`, 'DELETE', text, { 'content-type': 'application/json' });
    expect(r.body).toEqual(status(400, 'BadRequest', message));
    const all = await call(agent, ns(namespace), 'DELETE', text, { 'content-type': 'application/json' });
    expect(all.body).toEqual(status(400, 'BadRequest', message));
    expect(await names(namespace)).toEqual(['w']);
  });

  it('a query gracePeriodSeconds beyond int64 is 400 too', async () => {
    const [namespace] = await one();
    const r = await call(agent, `${ns(namespace)}/w?gracePeriodSeconds=99999999999999999999`, 'DELETE');
    expect(r.body).toEqual(status(400, 'BadRequest', 'strconv.ParseInt: parsing "99999999999999999999": value out of range'));
    expect(await names(namespace)).toEqual(['w']);
  });

  it('an unsupported propagationPolicy is 422 (ValidateDeleteOptions)', async () => {
    const [namespace] = await one();
    const r = await call(agent, `${ns(namespace)}/w`, 'DELETE', { propagationPolicy: 'Nope' });
    expect(r.status).toBe(422);
    expect(r.body.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Nope": supported values: "Foreground", "Background", "Orphan", "nil"',
    );
    expect(await names(namespace)).toEqual(['w']);
  });

  it('any group version of DeleteOptions, unknown fields and a negative grace period are accepted', async () => {
    const [namespace, w] = await one();
    const r = await call(agent, `${ns(namespace)}/w`, 'DELETE', { kind: 'DeleteOptions', apiVersion: 'apps/v1', foo: 1, gracePeriodSeconds: -5 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'w', uid: w.metadata.uid } });
    expect(await names(namespace)).toEqual([]);
  });
});

describe('DELETE: preconditions are never dropped', () => {
  it.each<[string, unknown, (w: any) => string]>([
    [
      'another uid',
      { preconditions: { uid: 'nope' } },
      (w) => `the UID in the precondition (nope) does not match the UID in record (${w.metadata.uid}). The object might have been deleted and then recreated`,
    ],
    [
      'an empty uid (still a precondition)',
      { preconditions: { uid: '' } },
      (w) => `the UID in the precondition () does not match the UID in record (${w.metadata.uid}). The object might have been deleted and then recreated`,
    ],
    [
      'an old resourceVersion',
      { preconditions: { resourceVersion: '1' } },
      (w) =>
        `the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${w.metadata.resourceVersion}). The object might have been modified`,
    ],
    [
      'an empty resourceVersion',
      { preconditions: { resourceVersion: '' } },
      (w) =>
        `the ResourceVersion in the precondition () does not match the ResourceVersion in record (${w.metadata.resourceVersion}). The object might have been modified`,
    ],
  ])('%s in the body is 409 (rest.BeforeDelete) and nothing is deleted', async (_n, body, why) => {
    const [namespace, w] = await one();
    const r = await call(agent, `${ns(namespace)}/w`, 'DELETE', body);
    expect(r.body).toEqual({
      ...status(409, 'Conflict', `Operation cannot be fulfilled on Website.extensions.example.com "w": ${why(w)}`),
      details: { name: 'w', group: 'extensions.example.com', kind: 'Website' },
    });
    expect(await names(namespace)).toEqual(['w']);
  });

  it('uid and resourceVersion query parameters are preconditions when there is no body', async () => {
    const [namespace, w] = await one();
    const uid = await call(agent, `${ns(namespace)}/w?uid=nope`, 'DELETE');
    expect(uid.status).toBe(409);
    expect(uid.body.message).toContain('the UID in the precondition (nope) does not match');
    const rv = await call(agent, `${ns(namespace)}/w?resourceVersion=1`, 'DELETE');
    expect(rv.status).toBe(409);
    expect(await names(namespace)).toEqual(['w']);
    const ok = await call(agent, `${ns(namespace)}/w?uid=${w.metadata.uid}&resourceVersion=${w.metadata.resourceVersion}`, 'DELETE');
    expect(ok.status).toBe(200);
    expect(await names(namespace)).toEqual([]);
  });

  it('a body, even {}, is the options: the query is then not read (handlers/delete.go)', async () => {
    const [namespace] = await one();
    const r = await call(agent, `${ns(namespace)}/w?uid=nope`, 'DELETE', {});
    expect(r.status).toBe(200);
    expect(await names(namespace)).toEqual([]);
  });

  it('a delete that leaves the object to its finalizers answers 202 when orphanDependents is false', async () => {
    const [namespace] = await one({ finalizers: ['example.com/hold'] });
    const r = await call(agent, `${ns(namespace)}/w`, 'DELETE', { orphanDependents: false });
    expect(r.status).toBe(202);
    expect(r.body.metadata.deletionTimestamp).toBeDefined();
  });
});

describe("deletecollection lists with the request's ListOptions first", () => {
  /** three creates w0, w1, w2 in a fresh namespace. */
  async function three(extra: Record<string, unknown> = {}): Promise<string> {
    const namespace = `c${++seq}`;
    for (const n of ['w0', 'w1', 'w2']) expect((await call(agent, ns(namespace), 'POST', website(n, {}, extra))).status).toBe(201);
    return namespace;
  }

  it('deletes at most `limit` items, answers that page with its continue token, and the token deletes the next page', async () => {
    const namespace = await three();
    const first = await call(agent, `${ns(namespace)}?limit=1`, 'DELETE');
    expect(first.status).toBe(200);
    expect(first.body.kind).toBe('WebsiteList');
    expect(first.body.items.map((i: any) => i.metadata.name)).toEqual(['w0']);
    expect(first.body.metadata.remainingItemCount).toBe(2);
    expect(typeof first.body.metadata.continue).toBe('string');
    expect(await names(namespace)).toEqual(['w1', 'w2']);
    const next = await call(agent, `${ns(namespace)}?limit=1&continue=${encodeURIComponent(first.body.metadata.continue)}`, 'DELETE');
    expect(next.body.items.map((i: any) => i.metadata.name)).toEqual(['w1']);
    expect(await names(namespace)).toEqual(['w2']);
  });

  it.each<[string, string, unknown, number]>([
    ['a continue token that is not one', 'continue=garbage', undefined, 400],
    ['a limited list with such a token', 'limit=1&continue=abc', undefined, 400],
    ['a resourceVersion that does not parse', 'resourceVersion=abc', undefined, 400],
    ['a body that is not DeleteOptions', '', { kind: 'Pod' }, 400],
    ['a grace period that is not a number', 'gracePeriodSeconds=x', undefined, 400],
    ['an unsupported field selector', 'fieldSelector=spec.x%3D1', undefined, 400],
    ['an unsupported propagation policy', 'propagationPolicy=Nope', undefined, 422],
  ])('%s is refused and nothing is deleted', async (_n, query, body, code) => {
    const namespace = await three();
    const r = await call(agent, `${ns(namespace)}?${query}`, 'DELETE', body);
    expect(r.status).toBe(code);
    expect(r.body.kind).toBe('Status');
    expect(await names(namespace)).toEqual(['w0', 'w1', 'w2']);
  });

  it('passes preconditions to every item: one that fails stops the deletion at that item with its 409', async () => {
    const namespace = await three();
    const r = await call(agent, ns(namespace), 'DELETE', { preconditions: { uid: 'nope' } });
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(
      /^Operation cannot be fulfilled on Website\.extensions\.example\.com "w0": the UID in the precondition \(nope\) does not match/,
    );
    expect(await names(namespace)).toEqual(['w0', 'w1', 'w2']);
    // The query's resourceVersion is both the list's and a precondition (kube-apiserver answers the same 409).
    const rv0 = await call(agent, `${ns(namespace)}?resourceVersion=0`, 'DELETE');
    expect(rv0.status).toBe(409);
    expect(rv0.body.message).toContain('the ResourceVersion in the precondition (0) does not match');
    expect(await names(namespace)).toEqual(['w0', 'w1', 'w2']);
  });

  it('answers the items as they were listed; with finalizers they are only marked', async () => {
    const namespace = await three({ finalizers: ['example.com/hold'] });
    const r = await call(agent, ns(namespace), 'DELETE', { propagationPolicy: 'Foreground' });
    expect(r.status).toBe(200);
    expect(r.body.items.map((i: any) => [i.metadata.name, i.metadata.deletionTimestamp])).toEqual([
      ['w0', undefined],
      ['w1', undefined],
      ['w2', undefined],
    ]);
    const after = (await call(agent, ns(namespace))).body.items;
    expect(after.map((i: any) => [i.metadata.name, typeof i.metadata.deletionTimestamp, i.metadata.finalizers])).toEqual([
      ['w0', 'string', ['example.com/hold', 'foregroundDeletion']],
      ['w1', 'string', ['example.com/hold', 'foregroundDeletion']],
      ['w2', 'string', ['example.com/hold', 'foregroundDeletion']],
    ]);
  });

  it('a dry run deletes nothing and answers what it would delete', async () => {
    const namespace = await three();
    const r = await call(agent, `${ns(namespace)}?dryRun=All&limit=2`, 'DELETE');
    expect(r.body.items.map((i: any) => i.metadata.name)).toEqual(['w0', 'w1']);
    expect(await names(namespace)).toEqual(['w0', 'w1', 'w2']);
  });
});
