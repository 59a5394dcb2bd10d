/**
 * The typed decoders against what Go answers. Every expected text below is what kube-apiserver 1.37 serving the
 * Website CRD answered (its decoder is apiextensions-apiserver objectmeta.GetObjectMetaWithOptions over
 * sigs.k8s.io/json, and metav1.Time over Go's time.Parse), or what that same Go code returned for the input when run
 * directly. During development the decoders were also compared with that Go code on some 40,000 generated metadata
 * objects, DeleteOptions and Scale bodies (no disagreement).
 */
import { describe, expect, it } from 'vitest';
import { decodeDeleteOptionsBody, decodeObjectMeta, decodeScaleBody, GoDecodeError, interpretTypeMeta, objectMetaDecodes, repairObjectMeta } from './decode.js';
import { formatGoTime, parseGoTime } from './go-time.js';

const decodeError = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    if (e instanceof GoDecodeError) return e.message;
    throw e;
  }
  throw new Error('decoded without an error');
};

describe("decodeObjectMeta refuses what metav1.ObjectMeta cannot hold, with Go's message", () => {
  it.each<[string, unknown, string]>([
    ['labels that are not a map', { name: 'b', labels: true }, 'json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type map[string]string'],
    [
      'an annotation that is not a string',
      { name: 'b', annotations: { a: 1 } },
      'json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type string',
    ],
    [
      'finalizers that are not a list',
      { name: 'b', finalizers: 'x' },
      'json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string',
    ],
    [
      'a finalizer that is not a string',
      { name: 'b', finalizers: ['a', 1] },
      'json: cannot unmarshal number into Go struct field ObjectMeta.finalizers of type string',
    ],
    [
      'ownerReferences that are not a list',
      { name: 'b', ownerReferences: '' },
      'json: cannot unmarshal string into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference',
    ],
    [
      'an owner name that is not a string',
      { name: 'b', ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 1, uid: 'u' }] },
      'json: cannot unmarshal number into Go struct field OwnerReference.ownerReferences.name of type string',
    ],
    [
      'an owner controller flag that is not a bool',
      { name: 'b', ownerReferences: [{ controller: 'yes' }] },
      'json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool',
    ],
    [
      'a generateName that is a number',
      { name: 'b', generateName: 0 },
      'json: cannot unmarshal number into Go struct field ObjectMeta.generateName of type string',
    ],
    ['a name that is a number', { name: 5 }, 'json: cannot unmarshal number into Go struct field ObjectMeta.name of type string'],
    ['a uid that is a number', { uid: 5 }, 'json: cannot unmarshal number into Go struct field ObjectMeta.uid of type types.UID'],
    ['a generation that is a string', { generation: '1' }, 'json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64'],
    ['a generation that is not whole', { generation: 1.5 }, 'json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.generation of type int64'],
    [
      'a generation beyond int64',
      { generation: 1e20 },
      'json: cannot unmarshal number 100000000000000000000 into Go struct field ObjectMeta.generation of type int64',
    ],
    [
      'a deletionGracePeriodSeconds that is a string',
      { deletionGracePeriodSeconds: 'x' },
      'json: cannot unmarshal string into Go struct field ObjectMeta.deletionGracePeriodSeconds of type int64',
    ],
    [
      'a creationTimestamp that is not RFC 3339',
      { creationTimestamp: 'yesterday' },
      'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
    ],
    [
      'a creationTimestamp without a zone',
      { creationTimestamp: '2020-01-01T00:00:00' },
      'parsing time "2020-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"',
    ],
    [
      'a creationTimestamp that is a number',
      { creationTimestamp: 5 },
      'json: cannot unmarshal number into Go struct field ObjectMeta.creationTimestamp of type string',
    ],
    ['a deletionTimestamp that does not parse', { deletionTimestamp: 'x' }, 'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'],
    [
      'managedFields that are an object',
      { managedFields: {} },
      'json: cannot unmarshal object into Go struct field ObjectMeta.managedFields of type []v1.ManagedFieldsEntry',
    ],
    [
      'a managedFields entry that is a number',
      { managedFields: [1] },
      'json: cannot unmarshal number into Go struct field ObjectMeta.managedFields of type v1.ManagedFieldsEntry',
    ],
    [
      'a manager that is a number',
      { managedFields: [{ manager: 5 }] },
      'json: cannot unmarshal number into Go struct field ManagedFieldsEntry.managedFields.manager of type string',
    ],
    [
      'a managedFields time that does not parse',
      { managedFields: [{ time: 'bad' }] },
      'parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"',
    ],
    ['metadata that is a list', [], 'json: cannot unmarshal array into Go value of type v1.ObjectMeta'],
    ['metadata that is a string', 'x', 'json: cannot unmarshal string into Go value of type v1.ObjectMeta'],
    // Keys are visited sorted (the map is marshaled first): annotations is reported before labels.
    [
      'two bad fields: the first in sorted order',
      { zz: 1, labels: true, annotations: 5 },
      'json: cannot unmarshal number into Go struct field ObjectMeta.annotations of type map[string]string',
    ],
    // A time error ends decoding at once and wins over a type error met before it.
    [
      'a type error, then a time error',
      { annotations: 5, creationTimestamp: 'bad' },
      'parsing time "bad" as "2006-01-02T15:04:05Z07:00": cannot parse "bad" as "2006"',
    ],
  ])('%s', (_name, metadata, message) => {
    expect(decodeError(() => decodeObjectMeta(metadata))).toBe(message);
  });
});

describe('decodeObjectMeta gives the metadata kube-apiserver stores (SetObjectMeta: ToUnstructured)', () => {
  it.each<[string, unknown, object, string[]]>(
    [
      ['null is empty metadata', null, {}, []],
      [
        'nulls: a nil map, an empty label value, an empty finalizer',
        { name: 'b', labels: { a: null }, annotations: null, finalizers: [null] },
        { name: 'b', labels: { a: '' }, finalizers: [''] },
      ],
      ['empty collections and zero values are left out', { name: 'b', labels: {}, finalizers: [], generation: 0, uid: '' }, { name: 'b' }],
      [
        'an owner reference is written whole, its flags only when set',
        { ownerReferences: [null, { name: 'n', controller: false }] },
        {
          ownerReferences: [
            { apiVersion: '', kind: '', name: '', uid: '' },
            { apiVersion: '', kind: '', name: 'n', uid: '', controller: false },
          ],
        },
      ],
      [
        'times in UTC at second precision',
        { creationTimestamp: '2020-01-01T00:00:00.123+02:00', deletionTimestamp: null },
        { creationTimestamp: '2019-12-31T22:00:00Z' },
      ],
      [
        'a whole float is an integer (the map was marshaled first)',
        { generation: 1.0, deletionGracePeriodSeconds: 0 },
        { generation: 1, deletionGracePeriodSeconds: 0 },
      ],
      [
        'fieldsV1 keeps any JSON (FieldsV1.UnmarshalJSON)',
        { managedFields: [{ manager: 'm', fieldsV1: 5 }, {}] },
        { managedFields: [{ manager: 'm', fieldsV1: 5 }, {}] },
      ],
    ].map(([n, m, out, unknown]) => [n, m, out, unknown ?? []] as [string, unknown, object, string[]]),
  )('%s', (_name, metadata, stored, unknown) => {
    expect(decodeObjectMeta(metadata)).toEqual({ meta: stored, unknownFields: unknown });
  });

  it('drops unknown fields, case-sensitively, and reports each with its path in sorted order', () => {
    const r = decodeObjectMeta({ name: 'b', Name: 'c', zz: 1, clusterName: 'x', ownerReferences: [{ name: 'n', q: 1 }], managedFields: [{ x: 1 }] });
    expect(r.unknownFields).toEqual(['metadata.Name', 'metadata.clusterName', 'metadata.managedFields[0].x', 'metadata.ownerReferences[0].q', 'metadata.zz']);
    expect(Object.keys(r.meta)).toEqual(['name', 'ownerReferences', 'managedFields']);
  });

  it('writes maps in sorted key order, as Go marshals a map, however the client ordered them', () => {
    const meta = decodeObjectMeta({ labels: { zz: '1', b: '2', a: '3' }, annotations: { é: '1', z: '2' }, name: 'n' }).meta;
    expect(Object.keys(meta.labels ?? {})).toEqual(['a', 'b', 'zz']);
    expect(Object.keys(meta.annotations ?? {})).toEqual(['z', 'é']);
  });

  it('keeps a label named __proto__ as an ordinary key', () => {
    const meta = JSON.parse('{"labels":{"__proto__":"x"}}') as unknown;
    expect(Object.keys(decodeObjectMeta(meta).meta.labels ?? {})).toEqual(['__proto__']);
  });
});

describe('repairObjectMeta drops each malformed field, as kube-apiserver reads a stored custom resource', () => {
  it('keeps every field that decodes on its own', () => {
    expect(repairObjectMeta({ name: 'b', namespace: 'n', labels: true, annotations: { a: 1 }, finalizers: ['f'], generation: '1', uid: 'u' })).toEqual({
      meta: { name: 'b', namespace: 'n', uid: 'u', finalizers: ['f'] },
      dropped: ['labels', 'annotations', 'generation'],
    });
  });

  it('objectMetaDecodes answers what decodeObjectMeta would, without building the result', () => {
    for (const m of [{ labels: true }, { creationTimestamp: 'x' }, { ownerReferences: [{ uid: 5 }] }, { generation: 1.5 }, [], 'x']) {
      expect(objectMetaDecodes(m)).toBe(false);
    }
    for (const m of [null, {}, { labels: { a: null }, foo: [1], managedFields: [{ fieldsV1: 5 }] }, { creationTimestamp: '2020-01-01T00:00:00+01:00' }]) {
      expect(objectMetaDecodes(m)).toBe(true);
      expect(() => decodeObjectMeta(m)).not.toThrow();
    }
  });

  it('has nothing to drop in good metadata', () => {
    expect(repairObjectMeta({ name: 'b', labels: { a: 'b' } })).toEqual({ meta: { name: 'b', labels: { a: 'b' } }, dropped: [] });
  });
});

describe('interpretTypeMeta (the JSON serializer reading apiVersion and kind)', () => {
  it.each<[string, unknown, string]>([
    [
      'a list',
      [],
      'couldn\'t get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }',
    ],
    [
      'a kind that is a number',
      { apiVersion: 'v1', kind: 5 },
      "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string",
    ],
    [
      'an apiVersion that is a number',
      { apiVersion: 5, kind: 'Website' },
      "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string",
    ],
  ])('refuses %s', (_name, body, message) => {
    expect(decodeError(() => interpretTypeMeta(body))).toBe(message);
  });
});

describe('decodeDeleteOptionsBody (handlers/delete.go with the meta codecs)', () => {
  it.each<[string, unknown, string]>([
    ['a body of another kind', { kind: 'Pod', apiVersion: 'v1' }, 'no kind "Pod" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"'],
    ['another kind without apiVersion', { kind: 'Foo' }, 'no kind "Foo" is registered for version "meta.k8s.io/v1" in scheme "pkg/runtime/scheme.go:111"'],
    ['another options kind', { kind: 'ListOptions', apiVersion: 'meta.k8s.io/v1' }, 'converting (v1.ListOptions) to (v1.DeleteOptions): unknown conversion'],
    ['a Status', { kind: 'Status', apiVersion: 'v1' }, 'converting (v1.Status) to (v1.DeleteOptions): unknown conversion'],
    ['an apiVersion that does not parse', { kind: 'DeleteOptions', apiVersion: 'a/b/c' }, 'unexpected GroupVersion string: a/b/c'],
    [
      'a grace period that is a string',
      { gracePeriodSeconds: '5' },
      'json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64',
    ],
    [
      'a grace period beyond int64',
      { gracePeriodSeconds: 1e30 },
      'json: cannot unmarshal number 1e+30 into Go struct field DeleteOptions.gracePeriodSeconds of type int64',
    ],
    [
      'a propagation policy that is a number',
      { propagationPolicy: 5 },
      'json: cannot unmarshal number into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation',
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
    ['dryRun that is a string', { dryRun: 'All' }, 'json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string'],
  ])('refuses %s', (_name, body, message) => {
    expect(decodeError(() => decodeDeleteOptionsBody(body))).toBe(message);
  });

  it('reads numbers as written when it has the bytes (Go decodes the typed body from them)', () => {
    const raw = (text: string) => decodeError(() => decodeDeleteOptionsBody(JSON.parse(text), Buffer.from(text)));
    expect(raw('{"gracePeriodSeconds":1e3}')).toBe('json: cannot unmarshal number 1e3 into Go struct field DeleteOptions.gracePeriodSeconds of type int64');
    expect(raw('{"gracePeriodSeconds":-9223372036854775809}')).toBe(
      'json: cannot unmarshal number -9223372036854775809 into Go struct field DeleteOptions.gracePeriodSeconds of type int64',
    );
    expect(raw('{"propagationPolicy":1e3}')).toBe(
      'json: cannot unmarshal number into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation',
    );
    expect(raw('{"kind":1.0}')).toBe("couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string");
    const ok = '{"gracePeriodSeconds":-9223372036854775808,"gracePeriodSeconds":30}';
    expect(decodeDeleteOptionsBody(JSON.parse(ok), Buffer.from(ok))).toEqual({ gracePeriodSeconds: 30 });
  });

  it('takes DeleteOptions of any group version, ignores unknown fields, and keeps empty preconditions', () => {
    expect(decodeDeleteOptionsBody({ kind: 'DeleteOptions', apiVersion: 'apps/v1', foo: 1, gracePeriodSeconds: -5, preconditions: { uid: '' } })).toEqual({
      gracePeriodSeconds: -5,
      preconditions: { uid: '' },
    });
    expect(decodeDeleteOptionsBody(null)).toEqual({});
    expect(decodeDeleteOptionsBody({ preconditions: null, orphanDependents: null })).toEqual({});
  });
});

describe('decodeScaleBody (autoscaling/v1 Scale, decoded from the body in document order)', () => {
  it.each<[string, unknown, string]>([
    ['replicas that are a string', { spec: { replicas: '3' } }, 'json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32'],
    [
      'replicas beyond int32',
      { spec: { replicas: 2 ** 31 } },
      'json: cannot unmarshal number 2147483648 into Go struct field ScaleSpec.spec.replicas of type int32',
    ],
    [
      'labels that are a number',
      { metadata: { labels: 5 } },
      'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type map[string]string',
    ],
    [
      'a status selector that is a number',
      { status: { selector: 1 } },
      'json: cannot unmarshal number into Go struct field ScaleStatus.status.selector of type string',
    ],
  ])('refuses %s', (_name, body, message) => {
    expect(decodeError(() => decodeScaleBody(body))).toBe(message);
  });

  it('reads a missing replicas as 0 (what a Go client sends to scale to zero) and reports unknown fields in document order', () => {
    const s = decodeScaleBody({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'a' }, spec: { foo: 1 }, bar: 2 });
    expect(s.spec.replicas).toBe(0);
    expect(s.unknownFields).toEqual(['spec.foo', 'bar']);
  });
});

describe("metav1.Time: Go's time.Parse(time.RFC3339) and its error texts", () => {
  it.each<[string, string]>([
    ['2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z'],
    ['2020-01-01T00:00:00.123+02:00', '2019-12-31T22:00:00Z'],
    ['2020-01-01T1:02:03Z', '2020-01-01T01:02:03Z'],
    ['0001-01-01T00:00:00+01:00', '0000-12-31T23:00:00Z'],
    ['2024-02-29T23:59:59-00:30', '2024-03-01T00:29:59Z'],
  ])('accepts %s as %s', (value, utc) => {
    const r = parseGoTime(value);
    expect(r.ok && formatGoTime(r.unixSeconds)).toBe(utc);
  });

  it.each<[string, string]>([
    ['2020-13-01T00:00:00Z', 'parsing time "2020-13-01T00:00:00Z": month out of range'],
    ['2020-02-30T00:00:00Z', 'parsing time "2020-02-30T00:00:00Z": day out of range'],
    ['2020-01-01T24:00:00Z', 'parsing time "2020-01-01T24:00:00Z": hour out of range'],
    ['2020-01-01T00:60:00Z', 'parsing time "2020-01-01T00:60:00Z": minute out of range'],
    ['2020-01-01T00:00:60Z', 'parsing time "2020-01-01T00:00:60Z": second out of range'],
    ['2020-01-01T00:00:00+25:00', 'parsing time "2020-01-01T00:00:00+25:00": time zone offset hour out of range'],
    ['2020-01-01T00:00:00z', 'parsing time "2020-01-01T00:00:00z" as "2006-01-02T15:04:05Z07:00": cannot parse "z" as "Z07:00"'],
    ['2020-01-01T00:00:00Zjunk', 'parsing time "2020-01-01T00:00:00Zjunk": extra text: "junk"'],
    ['2020-01-01 00:00:00Z', 'parsing time "2020-01-01 00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 00:00:00Z" as "T"'],
    ['ä2020', 'parsing time "\\xc3\\xa42020" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xc3\\xa42020" as "2006"'],
  ])('refuses %s', (value, error) => {
    expect(parseGoTime(value)).toEqual({ ok: false, error });
  });
});
