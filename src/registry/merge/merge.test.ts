/**
 * The merge machinery on a small schema, in structured-merge-diff's terms: FieldsV1 round trips (with `.` for nodes
 * that are members), field sets of list maps, sets and atomic parts, list merge order, and two or three managers
 * applying conditions, finalizers, owner references and a spec list map. The differential proof against
 * kube-apiserver is test/e2e/apply-differential.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../apis/meta/types.js';
import { serverSideApply, trackUpdate, type Managed } from '../managed-fields.js';
import { FieldSet, fromFieldsV1, pathString, toFieldsV1 } from './field-set.js';
import { fromJSONSchema } from './schema.js';
import { compare, merge, toFieldSet, typeErrors } from './typed.js';

const type = fromJSONSchema({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name', 'protocol'],
          items: { type: 'object', properties: { name: { type: 'string' }, protocol: { type: 'string', default: 'TCP' }, port: { type: 'integer' } } },
        },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        args: { type: 'array', items: { type: 'string' } },
        selector: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { app: { type: 'string' } } },
        env: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    status: {
      type: 'object',
      properties: {
        conditions: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' }, reason: { type: 'string' } } },
        },
      },
    },
  },
});
const managed: Managed = { type, apiVersion: 'x.example.com/v1', hasStatus: true };
const T = '2026-11-28T00:00:00Z';
const obj = (rest: Record<string, unknown> = {}, meta: Record<string, unknown> = {}): KubeObject =>
  ({ apiVersion: 'x.example.com/v1', kind: 'X', metadata: { name: 'a', ...meta }, ...rest }) as KubeObject;
const fields = (o: KubeObject, manager: string) =>
  (o.metadata.managedFields as { manager: string; fieldsV1: unknown }[]).find((e) => e.manager === manager)?.fieldsV1;

describe('field sets', () => {
  it('FieldsV1 marks a node that is itself a member with "." and reads back the same set', () => {
    const set = FieldSet.of([
      ['f:spec'],
      ['f:spec', 'f:replicas'],
      ['f:status', 'f:conditions', 'k:{"type":"Ready"}'],
      ['f:status', 'f:conditions', 'k:{"type":"Ready"}', 'f:status'],
    ]);
    const v1 = toFieldsV1(set);
    expect(v1).toEqual({ 'f:spec': { '.': {}, 'f:replicas': {} }, 'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:status': {} } } } });
    expect(Object.keys(v1['f:spec'] as object)[0]).toBe('.');
    expect(fromFieldsV1(v1).paths()).toEqual(set.paths());
  });

  it('orders elements as fieldpath does: fields, keys, values; numbers before strings', () => {
    const set = FieldSet.of([['v:"b"'], ['v:"a"'], ['v:10'], ['v:9'], ['k:{"x":"1"}'], ['f:z'], ['f:a']]);
    expect(Object.keys(toFieldsV1(set))).toEqual(['f:a', 'f:z', 'k:{"x":"1"}', 'v:9', 'v:10', 'v:"a"', 'v:"b"']);
  });

  it('prints paths as conflicts name them', () => {
    expect(pathString(['f:status', 'f:conditions', 'k:{"type":"Ready"}', 'f:status'])).toBe('.status.conditions[type="Ready"].status');
    expect(pathString(['f:metadata', 'f:finalizers', 'v:"a.example.com/x"'])).toBe('.metadata.finalizers[="a.example.com/x"]');
    expect(pathString(['f:spec', 'f:ports', 'k:{"name":"http","protocol":"TCP"}'])).toBe('.spec.ports[name="http",protocol="TCP"]');
  });

  it('a list map item is keyed by its keys (a missing key takes its default), a set item by its value, atomic parts are one field', () => {
    const set = toFieldSet({ spec: { ports: [{ name: 'http', port: 80 }], tags: ['a'], args: ['x', 'y'], selector: { app: 'w' }, env: { A: '1' } } }, type);
    expect(toFieldsV1(set)).toEqual({
      'f:spec': {
        'f:args': {},
        'f:env': { 'f:A': {} },
        'f:ports': { 'k:{"name":"http","protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {} } },
        'f:selector': {},
        'f:tags': { 'v:"a"': {} },
      },
    });
  });

  it('compare reports added, changed and removed leaves and the non-leaf nodes that appear or go', () => {
    const c = compare({ spec: { tags: ['a', 'b'], replicas: 1 } }, { spec: { tags: ['b', 'c'], replicas: 2, env: { A: '1' } } }, type);
    expect(c.added.paths().map(pathString)).toEqual(['.spec.env', '.spec.env.A', '.spec.tags[="c"]']);
    expect(c.modified.paths().map(pathString)).toEqual(['.spec.replicas']);
    expect(c.removed.paths().map(pathString)).toEqual(['.spec.tags[="a"]']);
  });

  it("refuses in structured-merge-diff's words what cannot be typed: a duplicate set or list map item, an item without its keys", () => {
    expect(typeErrors({ spec: { tags: ['a', 'b', 'a'] } }, type)).toBe('.spec.tags: duplicate entries for key [="a"]');
    // protocol has a default, so only name is missing.
    expect(typeErrors({ spec: { ports: [{ port: 1 }] } }, type)).toBe(
      '.spec.ports: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    );
    expect(typeErrors({ status: { conditions: [{ status: 'True' }] } }, type)).toBe(
      '.status.conditions: element 0: associative list with keys has an element that omits all key fields ["type"] (and doesn\'t have default values for any key fields)',
    );
    expect(typeErrors({ spec: { ports: [{ name: 'a' }, { name: 'a', protocol: 'TCP' }] } }, type)).toBe(
      '.spec.ports: duplicate entries for key [name="a",protocol="TCP"]',
    );
    expect(typeErrors({ spec: { ports: [null] } }, type)).toBe('.spec.ports: element 0: associative list with keys may not have a null element');
    expect(typeErrors({ spec: { ports: ['http'] } }, type)).toBe('.spec.ports: element 0: associative list with keys may not have non-map elements');
    expect(typeErrors({ spec: { tags: [{ a: 1 }] } }, type)).toBe(".spec.tags: element 0: associative list without keys has an element that's a map type");
    expect(typeErrors({ spec: { tags: [['a']] } }, type)).toBe('.spec.tags: element 0: not supported: associative list with lists as elements');
    expect(typeErrors({ spec: { ports: [{ name: 'a' }], tags: ['x'], args: ['y', 'y'] } }, type)).toBeUndefined();
  });

  it('merges list items as visitListItems orders them: shared items in the applied order, live-only ones where they stood', () => {
    expect(merge({ spec: { tags: ['a', 'b', 'c'] } }, { spec: { tags: ['c', 'd', 'a'] } }, type)).toEqual({ spec: { tags: ['b', 'c', 'd', 'a'] } });
    expect(merge({ spec: { args: ['a', 'b'] } }, { spec: { args: ['c'] } }, type)).toEqual({ spec: { args: ['c'] } });
  });
});

describe('managedFields sent with an update', () => {
  it('replace the stored ones; [{}] drops them all and the object is tracked no more, as kube-apiserver 1.37 does', () => {
    const o = obj({ spec: { replicas: 1 } });
    o.metadata.managedFields = trackUpdate(managed, undefined, o, 'creator', 'main', T);
    const next = obj({ spec: { replicas: 2 } }, { labels: { l: '1' } });
    expect(trackUpdate(managed, o, next, 'resetter', 'main', T, undefined, [{}])).toEqual([]);
    const untracked = { ...o, metadata: { ...o.metadata, managedFields: undefined } } as KubeObject;
    expect(trackUpdate(managed, untracked, next, 'later', 'main', T)).toEqual([]);
    const kept = trackUpdate(managed, o, next, 'editor', 'main', T, undefined, o.metadata.managedFields);
    expect(kept.map((e) => e.manager)).toEqual(['creator', 'editor']);
  });
});

describe('the Update manager cap', () => {
  it("folds the oldest of more than ten Update entries into ancient-changes, per apiVersion, with the last one's time", () => {
    let o = obj({ spec: { env: { a: '1' } } });
    o.metadata.managedFields = trackUpdate(managed, undefined, o, 'creator', 'main', '2026-11-28T00:00:00Z');
    for (let i = 1; i <= 11; i++) {
      const next = structuredClone(o);
      (next['spec'] as { env: Record<string, string> }).env[`k${i}`] = 'x';
      next.metadata.managedFields = trackUpdate(managed, o, next, `w${String(i).padStart(2, '0')}`, 'main', `2026-11-28T00:00:${String(i).padStart(2, '0')}Z`);
      o = next;
    }
    const entries = o.metadata.managedFields as { manager: string; time?: string }[];
    expect(entries).toHaveLength(10);
    expect(entries[0]).toMatchObject({ manager: 'ancient-changes', time: '2026-11-28T00:00:02Z' });
    expect(fields(o, 'ancient-changes')).toEqual({ 'f:spec': { '.': {}, 'f:env': { '.': {}, 'f:a': {}, 'f:k1': {}, 'f:k2': {} } } });
    expect(entries.map((e) => e.manager).slice(1)).toEqual(['w03', 'w04', 'w05', 'w06', 'w07', 'w08', 'w09', 'w10', 'w11']);
  });
});

describe('several managers', () => {
  const cond = (type: string, status = 'True') => ({ type, status, reason: `R${type}` });

  it('a controller applying its one condition keeps the conditions another manager wrote; its own leaves when it stops applying it', () => {
    let o = obj({ spec: { replicas: 1 } });
    o.metadata.managedFields = trackUpdate(managed, undefined, o, 'creator', 'main', T);
    const withStatus = { ...o, status: { conditions: [cond('Ready'), cond('Progressing', 'False')] } };
    withStatus.metadata = { ...o.metadata, managedFields: trackUpdate(managed, o, withStatus, 'reconciler', 'status', T) };
    o = withStatus;
    o = serverSideApply(managed, o, obj({ status: { conditions: [cond('Custom')] } }), 'ctrl', false, T, { part: 'status', subresource: 'status' });
    expect((o['status'] as { conditions: { type: string }[] }).conditions.map((c) => c.type)).toEqual(['Ready', 'Progressing', 'Custom']);
    expect(fields(o, 'ctrl')).toEqual({ 'f:status': { 'f:conditions': { 'k:{"type":"Custom"}': { '.': {}, 'f:reason': {}, 'f:status': {}, 'f:type': {} } } } });
    // Changing a condition the reconciler owns is a conflict on that condition's field only.
    expect(() =>
      serverSideApply(managed, o, obj({ status: { conditions: [cond('Ready', 'False')] } }), 'ctrl', false, T, { part: 'status', subresource: 'status' }),
    ).toThrow(
      /Apply failed with 1 conflict: conflict with "reconciler" with subresource "status" using x.example.com\/v1: .status.conditions\[type="Ready"\].status/,
    );
    // An empty status is a field of its own (`f:status`); no status at all owns nothing, and the entry goes.
    o = serverSideApply(managed, o, obj({ status: {} }), 'ctrl', false, T, { part: 'status', subresource: 'status' });
    expect((o['status'] as { conditions: { type: string }[] }).conditions.map((c) => c.type)).toEqual(['Ready', 'Progressing']);
    expect(fields(o, 'ctrl')).toEqual({ 'f:status': {} });
    o = serverSideApply(managed, o, obj(), 'ctrl', false, T, { part: 'status', subresource: 'status' });
    expect(fields(o, 'ctrl')).toBeUndefined();
  });

  it("finalizers are a set: each manager keeps its own, force takes only the conflicting item, removal leaves others' items", () => {
    let o = serverSideApply(managed, undefined, obj({}, { finalizers: ['a.example.com/x'] }), 'a', false, T);
    o = serverSideApply(managed, o, obj({}, { finalizers: ['b.example.com/y'] }), 'b', false, T);
    expect(o.metadata.finalizers).toEqual(['a.example.com/x', 'b.example.com/y']);
    o = serverSideApply(managed, o, obj({}, { finalizers: ['a.example.com/x', 'b.example.com/y'] }), 'b', true, T);
    o = serverSideApply(managed, o, obj({}, {}), 'a', false, T);
    // a's finalizer is also b's now, so it stays.
    expect(o.metadata.finalizers).toEqual(['a.example.com/x', 'b.example.com/y']);
    o = serverSideApply(managed, o, obj({}, { finalizers: ['b.example.com/y'] }), 'b', false, T);
    expect(o.metadata.finalizers).toEqual(['b.example.com/y']);
  });

  it("owner references are a map by uid of atomic items: one entry each, a change to another's reference conflicts", () => {
    const ref = (uid: string, name = uid) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid });
    let o = serverSideApply(managed, undefined, obj({}, { ownerReferences: [ref('u1')] }), 'a', false, T);
    o = serverSideApply(managed, o, obj({}, { ownerReferences: [ref('u2')] }), 'b', false, T);
    expect(o.metadata.ownerReferences?.map((r) => r.uid)).toEqual(['u1', 'u2']);
    expect(fields(o, 'b')).toEqual({ 'f:metadata': { 'f:ownerReferences': { 'k:{"uid":"u2"}': {} } } });
    expect(() => serverSideApply(managed, o, obj({}, { ownerReferences: [ref('u1', 'other')] }), 'b', false, T)).toThrow(
      /\.metadata\.ownerReferences\[uid="u1"\]$/,
    );
  });

  it('a list map in spec merges by its two keys across three managers, and an Update takes over only the item field it changed', () => {
    let o = serverSideApply(managed, undefined, obj({ spec: { ports: [{ name: 'http', port: 80 }] } }), 'a', false, T);
    o = serverSideApply(managed, o, obj({ spec: { ports: [{ name: 'http', protocol: 'UDP', port: 81 }] } }), 'b', false, T);
    o = serverSideApply(managed, o, obj({ spec: { ports: [{ name: 'dns', port: 53 }] } }), 'c', false, T);
    expect((o['spec'] as { ports: unknown[] }).ports).toEqual([
      { name: 'http', port: 80 },
      { name: 'http', protocol: 'UDP', port: 81 },
      { name: 'dns', port: 53 },
    ]);
    const edited = structuredClone(o);
    ((edited['spec'] as { ports: { port: number }[] }).ports[2] as { port: number }).port = 5353;
    edited.metadata.managedFields = trackUpdate(managed, o, edited, 'kubectl-edit', 'main', T);
    expect(fields(edited, 'kubectl-edit')).toEqual({ 'f:spec': { 'f:ports': { 'k:{"name":"dns","protocol":"TCP"}': { 'f:port': {} } } } });
    expect(fields(edited, 'c')).toEqual({ 'f:spec': { 'f:ports': { 'k:{"name":"dns","protocol":"TCP"}': { '.': {}, 'f:name': {} } } } });
  });
});
