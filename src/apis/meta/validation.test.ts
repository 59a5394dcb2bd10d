import { describe, expect, it } from 'vitest';
import type { ObjectMeta } from './types.js';
import {
  generateName,
  generateNameSuffix,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  validateObjectMetaCreate,
  validateObjectMetaUpdate,
} from './validation.js';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character " +
  "(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('isDNS1123Subdomain', () => {
  it.each<[string, string, string[]]>([
    ['accepts a dotted lowercase name', 'example.com', []],
    ['accepts a single character', 'a', []],
    ['accepts dashes inside labels', 'my-site.example-1.com', []],
    ['accepts exactly 253 characters', 'a'.repeat(253), []],
    ['rejects uppercase letters', 'Example.com', [SUBDOMAIN_MSG]],
    ['rejects an empty label between dots', 'a..b', [SUBDOMAIN_MSG]],
    ['rejects a leading dash', '-a', [SUBDOMAIN_MSG]],
    ['rejects a trailing dash', 'a-', [SUBDOMAIN_MSG]],
    ['rejects the empty string', '', [SUBDOMAIN_MSG]],
    ['rejects underscores', 'a_b', [SUBDOMAIN_MSG]],
    ['rejects 254 characters with only the length message', 'a'.repeat(254), ['must be no more than 253 characters']],
    ['reports both length and format when both fail', 'A'.repeat(254), ['must be no more than 253 characters', SUBDOMAIN_MSG]],
  ])('%s', (_name, value, expected) => {
    expect(isDNS1123Subdomain(value)).toEqual(expected);
  });
});

describe('isDNS1123Label', () => {
  it.each<[string, string, string[]]>([
    ['accepts a dashed lowercase name', 'my-name', []],
    ['accepts digits first', '123-abc', []],
    ['says dots are the problem for an otherwise valid subdomain', 'a.b', ['must not contain dots']],
    ['rejects uppercase letters with the label regex', 'A', [LABEL_MSG]],
    ['rejects 64 characters', 'a'.repeat(64), ['must be no more than 63 characters']],
  ])('%s', (_name, value, expected) => {
    expect(isDNS1123Label(value)).toEqual(expected);
  });
});

describe('isQualifiedName', () => {
  it.each<[string, string, string[]]>([
    ['accepts a plain name', 'app', []],
    ['accepts mixed case, underscores and dots in the name', 'App_1.x', []],
    ['accepts a DNS subdomain prefix', 'example.com/app', []],
    ['rejects an empty prefix', '/app', ['prefix part must be non-empty']],
    ['rejects an uppercase prefix', 'Example.com/app', [`prefix part ${SUBDOMAIN_MSG}`]],
    ['rejects an empty name after the prefix', 'example.com/', ['name part must be non-empty', NAME_PART_MSG]],
    ['rejects a name starting with a dash', '-app', [NAME_PART_MSG]],
    ['rejects a name longer than 63 characters', 'a'.repeat(64), ['name part must be no more than 63 characters']],
    [
      'rejects more than one slash with a single message',
      'a/b/c',
      [
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
          "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') " +
          "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
      ],
    ],
  ])('%s', (_name, value, expected) => {
    expect(isQualifiedName(value)).toEqual(expected);
  });
});

describe('isValidLabelValue', () => {
  it.each<[string, string, string[]]>([
    ['accepts the empty string', '', []],
    ['accepts mixed case with underscores', 'My_Value-1', []],
    ['rejects a leading dash', '-x', [LABEL_VALUE_MSG]],
    ['rejects 64 characters', 'a'.repeat(64), ['must be no more than 63 characters']],
  ])('%s', (_name, value, expected) => {
    expect(isValidLabelValue(value)).toEqual(expected);
  });
});

const meta = (m: Partial<ObjectMeta> = {}): ObjectMeta => ({ name: 'web', namespace: 'default', ...m });
const ns = { namespaced: true };

describe('validateObjectMetaCreate', () => {
  it.each<[string, ObjectMeta, { namespaced: boolean }]>([
    ['a plain namespaced object', meta({ labels: { app: 'web' }, annotations: { 'Example.com/Note': 'x' } }), ns],
    ['a generateName without a name', { generateName: 'web-', namespace: 'default' }, ns],
    ['a cluster-scoped object without a namespace', { name: 'web' }, { namespaced: false }],
    ['the standard and domain-qualified finalizers', meta({ finalizers: ['orphan', 'example.com/cleanup'] }), ns],
    ['foregroundDeletion alone', meta({ finalizers: ['foregroundDeletion'] }), ns],
    ['annotations exactly at the size limit', meta({ annotations: { k: 'v'.repeat(262143) } }), ns],
    [
      'one controller owner among several owners',
      meta({
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'a', uid: '1', controller: true },
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'b', uid: '2', controller: false },
        ],
      }),
      ns,
    ],
  ])('accepts %s', (_name, m, opts) => {
    expect(validateObjectMetaCreate(m, opts)).toEqual([]);
  });

  it.each<[string, ObjectMeta, { namespaced: boolean }, { type: string; field: string; message: string }[]]>([
    [
      'neither name nor generateName',
      { namespace: 'default' },
      ns,
      [{ type: 'FieldValueRequired', field: 'metadata.name', message: 'metadata.name: Required value: name or generateName is required' }],
    ],
    [
      'a name that is not a DNS subdomain',
      meta({ name: 'Web' }),
      ns,
      [{ type: 'FieldValueInvalid', field: 'metadata.name', message: `metadata.name: Invalid value: "Web": ${SUBDOMAIN_MSG}` }],
    ],
    [
      'a generateName that is invalid even with its trailing dash masked',
      { generateName: 'Web-', namespace: 'default' },
      ns,
      [{ type: 'FieldValueInvalid', field: 'metadata.generateName', message: `metadata.generateName: Invalid value: "Web-": ${SUBDOMAIN_MSG}` }],
    ],
    [
      'a missing namespace on a namespaced kind',
      { name: 'web' },
      ns,
      [{ type: 'FieldValueRequired', field: 'metadata.namespace', message: 'metadata.namespace: Required value' }],
    ],
    [
      'a namespace that is not a DNS label',
      meta({ namespace: 'a.b' }),
      ns,
      [{ type: 'FieldValueInvalid', field: 'metadata.namespace', message: 'metadata.namespace: Invalid value: "a.b": must not contain dots' }],
    ],
    [
      'a namespace on a cluster-scoped kind',
      meta(),
      { namespaced: false },
      [{ type: 'FieldValueForbidden', field: 'metadata.namespace', message: 'metadata.namespace: Forbidden: not allowed on this type' }],
    ],
    [
      'a negative generation',
      meta({ generation: -1 }),
      ns,
      [{ type: 'FieldValueInvalid', field: 'metadata.generation', message: 'metadata.generation: Invalid value: -1: must be greater than or equal to 0' }],
    ],
    [
      'a label key that is not a qualified name',
      meta({ labels: { 'bad key': 'v' } }),
      ns,
      [{ type: 'FieldValueInvalid', field: 'metadata.labels', message: `metadata.labels: Invalid value: "bad key": ${NAME_PART_MSG}` }],
    ],
    [
      'a label value that is not a label value',
      meta({ labels: { app: '-bad' } }),
      ns,
      [{ type: 'FieldValueInvalid', field: 'metadata.labels', message: `metadata.labels: Invalid value: "-bad": ${LABEL_VALUE_MSG}` }],
    ],
    [
      'an annotation key that is not a qualified name',
      meta({ annotations: { 'a b': 'v' } }),
      ns,
      [{ type: 'FieldValueInvalid', field: 'metadata.annotations', message: `metadata.annotations: Invalid value: "a b": ${NAME_PART_MSG}` }],
    ],
    [
      'annotations one byte over 256 KiB',
      meta({ annotations: { k: 'v'.repeat(262144) } }),
      ns,
      [{ type: 'FieldValueTooLong', field: 'metadata.annotations', message: 'metadata.annotations: Too long: may not be more than 262144 bytes' }],
    ],
    [
      'a finalizer that is not a qualified name',
      meta({ finalizers: ['bad finalizer'] }),
      ns,
      [{ type: 'FieldValueInvalid', field: 'metadata.finalizers', message: `metadata.finalizers: Invalid value: "bad finalizer": ${NAME_PART_MSG}` }],
    ],
    [
      'both orphan and foregroundDeletion finalizers',
      meta({ finalizers: ['orphan', 'foregroundDeletion'] }),
      ns,
      [
        {
          type: 'FieldValueInvalid',
          field: 'metadata.finalizers',
          message: 'metadata.finalizers: Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
        },
      ],
    ],
    // ValidateOwnerReferences in 1.37 (measured on kube-apiserver serving the Website CRD): indexed paths, Required.
    [
      'an owner reference with every required field empty',
      meta({ ownerReferences: [{ apiVersion: '', kind: '', name: '', uid: '' }] }),
      ns,
      [
        {
          type: 'FieldValueRequired',
          field: 'metadata.ownerReferences[0].apiVersion',
          message: 'metadata.ownerReferences[0].apiVersion: Required value: must not be empty',
        },
        {
          type: 'FieldValueRequired',
          field: 'metadata.ownerReferences[0].kind',
          message: 'metadata.ownerReferences[0].kind: Required value: must not be empty',
        },
        {
          type: 'FieldValueRequired',
          field: 'metadata.ownerReferences[0].name',
          message: 'metadata.ownerReferences[0].name: Required value: must not be empty',
        },
        { type: 'FieldValueRequired', field: 'metadata.ownerReferences[0].uid', message: 'metadata.ownerReferences[0].uid: Required value: must not be empty' },
      ],
    ],
    [
      'an owner apiVersion with a group but no version',
      meta({ ownerReferences: [{ apiVersion: 'apps/', kind: 'Deployment', name: 'a', uid: '1' }] }),
      ns,
      [
        {
          type: 'FieldValueInvalid',
          field: 'metadata.ownerReferences[0].apiVersion',
          message: 'metadata.ownerReferences[0].apiVersion: Invalid value: "apps/": must be <group>/<version> or <version>',
        },
      ],
    ],
    [
      'an owner apiVersion that does not parse',
      meta({
        ownerReferences: [
          { apiVersion: 'a', kind: 'K', name: 'a', uid: '1' },
          { apiVersion: 'a/b/c', kind: 'K', name: 'a', uid: '2' },
        ],
      }),
      ns,
      [
        {
          type: 'FieldValueInvalid',
          field: 'metadata.ownerReferences[1].apiVersion',
          message: 'metadata.ownerReferences[1].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>',
        },
      ],
    ],
  ])('rejects %s', (_name, m, opts, expected) => {
    expect(validateObjectMetaCreate(m, opts)).toEqual(expected);
  });

  it('rejects a second controller owner, naming both', () => {
    const errs = validateObjectMetaCreate(
      meta({
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'a', uid: '1', controller: true },
          { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'b', uid: '2', controller: true },
        ],
      }),
      ns,
    );
    expect(errs).toHaveLength(1);
    expect(errs[0]!.field).toBe('metadata.ownerReferences');
    expect(errs[0]!.message).toContain('Only one reference can have Controller set to true. Found "true" in references for Deployment/a and StatefulSet/b');
  });

  it('rejects a core v1 Event as an owner', () => {
    const errs = validateObjectMetaCreate(meta({ ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: '1' }] }), ns);
    expect(errs.map((e) => e.message)).toEqual([
      'metadata.ownerReferences[0]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"1"}: /v1, Kind=Event is disallowed from being an owner',
    ]);
  });

  it('collects every problem instead of stopping at the first', () => {
    const errs = validateObjectMetaCreate({ name: 'Web', labels: { app: '-bad' } }, ns);
    expect(errs.map((e) => e.field)).toEqual(['metadata.name', 'metadata.namespace', 'metadata.labels']);
  });
});

describe('validateObjectMetaUpdate', () => {
  const old: ObjectMeta = meta({ uid: 'u1', creationTimestamp: '2024-01-01T00:00:00Z', finalizers: ['example.com/a'] });

  it.each<[string, ObjectMeta]>([
    ['an unchanged object', { ...old }],
    ['a label change', { ...old, labels: { app: 'web' } }],
    ['removing a finalizer while the object is being deleted', { ...old, deletionTimestamp: '2024-02-01T00:00:00Z', finalizers: [] }],
  ])('accepts %s', (_name, next) => {
    const prev = next.deletionTimestamp ? { ...old, deletionTimestamp: next.deletionTimestamp } : old;
    expect(validateObjectMetaUpdate(next, prev, ns)).toEqual([]);
  });

  it('accepts adding a finalizer while the object is not being deleted', () => {
    expect(validateObjectMetaUpdate({ ...old, finalizers: ['example.com/a', 'example.com/b'] }, old, ns)).toEqual([]);
  });

  // Update errors appear twice: rest.ValidateUpdate's common checks, then the custom resource strategy's own.
  it.each<[string, ObjectMeta, string, string]>([
    ['a renamed object', { ...old, name: 'other' }, 'metadata.name', 'metadata.name: Invalid value: "other": field is immutable'],
    ['a moved namespace', { ...old, namespace: 'prod' }, 'metadata.namespace', 'metadata.namespace: Invalid value: "prod": field is immutable'],
    ['a changed uid', { ...old, uid: 'u2' }, 'metadata.uid', 'metadata.uid: Invalid value: "u2": field is immutable'],
    ['a dropped uid', { ...old, uid: undefined }, 'metadata.uid', 'metadata.uid: Invalid value: null: field is immutable'],
    [
      'a changed creationTimestamp',
      { ...old, creationTimestamp: '2025-01-01T00:00:00Z' },
      'metadata.creationTimestamp',
      'metadata.creationTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable',
    ],
    [
      'a deletionTimestamp set by a write',
      { ...old, deletionTimestamp: '2001-01-01T00:00:00Z' },
      'metadata.deletionTimestamp',
      'metadata.deletionTimestamp: Invalid value: "2001-01-01T00:00:00Z": field is immutable',
    ],
    [
      'a deletionGracePeriodSeconds set by a write',
      { ...old, deletionGracePeriodSeconds: 3 },
      'metadata.deletionGracePeriodSeconds',
      'metadata.deletionGracePeriodSeconds: Invalid value: 3: field is immutable',
    ],
  ])('rejects %s as immutable', (_name, next, field, message) => {
    const e = { type: 'FieldValueInvalid', field, message };
    expect(validateObjectMetaUpdate(next, old, ns)).toEqual(
      field === 'metadata.namespace'
        ? [
            // The common checks also validate the new namespace itself (here it is valid, so nothing more).
            e,
            e,
          ]
        : [e, e],
    );
  });

  it('checks a generateName only as a path segment on update: `/` and `%` are refused, upper case is not', () => {
    expect(validateObjectMetaUpdate({ ...old, generateName: 'UPPER-' }, old, ns)).toEqual([]);
    expect(validateObjectMetaUpdate({ ...old, generateName: 'a/b%' }, old, ns).map((e) => e.message)).toEqual([
      'metadata.generateName: Invalid value: "a/b%": may not contain \'/\'',
      'metadata.generateName: Invalid value: "a/b%": may not contain \'%\'',
    ]);
  });

  it.each<[string, string[], string]>([
    ['one new finalizer', ['example.com/a', 'x'], '[]string{"x"}'],
    ['several new finalizers, sorted', ['z', 'example.com/a', 'b'], '[]string{"b", "z"}'],
  ])('forbids %s once deletion has started', (_name, finalizers, list) => {
    const deleting = { ...old, deletionTimestamp: '2024-02-01T00:00:00Z' };
    const e = {
      type: 'FieldValueForbidden',
      field: 'metadata.finalizers',
      message: `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${list}`,
    };
    expect(validateObjectMetaUpdate({ ...deleting, finalizers }, deleting, ns)).toEqual([e, e]);
  });

  it('reports a bad label three times (common create checks, common update checks, the strategy) and a bad finalizer once', () => {
    const errs = validateObjectMetaUpdate({ ...old, labels: { 'bad key': 'v' }, finalizers: ['a b'] }, old, ns);
    expect(errs.map((e) => e.field)).toEqual(['metadata.labels', 'metadata.finalizers', 'metadata.labels', 'metadata.labels']);
  });
});

describe('name generation', () => {
  it('generateNameSuffix returns five characters from the vowel-free alphabet', () => {
    for (let i = 0; i < 200; i++) expect(generateNameSuffix()).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it.each<[string, string, RegExp]>([
    ['appends the suffix to a short prefix', 'web-', /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/],
    ['keeps a 58-character prefix whole', 'a'.repeat(58), new RegExp(`^${'a'.repeat(58)}[bcdfghjklmnpqrstvwxz2456789]{5}$`)],
    ['truncates a long prefix to 58 characters so the name fits 63', 'a'.repeat(100), new RegExp(`^${'a'.repeat(58)}[bcdfghjklmnpqrstvwxz2456789]{5}$`)],
  ])('generateName %s', (_name, prefix, pattern) => {
    expect(generateName(prefix)).toMatch(pattern);
  });

  it('generated names from a valid generateName pass name validation', () => {
    const name = generateName('web-');
    expect(validateObjectMetaCreate({ name, generateName: 'web-', namespace: 'default' }, ns)).toEqual([]);
  });
});
