/**
 * The hostile-input cases: thousands of requests across every class of input a client controls, each with the
 * codes kube-apiserver serving the Website CRD could answer. Where kube's exact code is uncertain (400, 422 or
 * 415 for the same mistake) the whole set is accepted; a 5xx or an answer that is not a metav1.Status never is.
 *
 * Safety rule of the generator: a request aimed at a fixture object (or the fixture namespace) is one that kube
 * refuses, so the fixtures must come out unchanged; every request kube would accept goes to the scratch
 * namespace under a name of its own.
 *
 * Kubernetes sources behind the expectations (k8s.io/apiserver unless noted):
 * - pkg/endpoints/handlers/{create,update,patch,delete,get}.go: body decoding, 400 for undecodable bodies,
 *   422 for a patched object that does not decode, DeleteOptions from body or query, ValidateDeleteOptions;
 * - apiextensions-apiserver pkg/apiserver/customresource_handler.go and schema/objectmeta/coerce.go: a custom
 *   resource's metadata is unmarshalled into metav1.ObjectMeta, so a wrongly typed member is a decoding error;
 * - apimachinery pkg/apis/meta/v1/validation (ValidateDeleteOptions, ValidateDryRun, field manager and
 *   fieldValidation) and pkg/api/validation/objectmeta.go (ValidateObjectMeta);
 * - pkg/endpoints/handlers/rest.go (maxJSONPatchOperations 10000), pkg/server/config.go (MaxRequestBodyBytes
 *   3 MiB), sigs.k8s.io/json (max nesting depth 10000, invalid UTF-8 in strings becomes U+FFFD),
 * - pkg/registry/rest/meta.go and k8s.io/apimachinery/pkg/api/validation/path (IsValidPathSegmentName: "." and
 *   ".." and names holding "/" or "%" are 400).
 */
import type { Answer } from './runner.js';

/** Step is one request and the codes it may answer. */
export interface Step {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** raw sends hand-written bytes over a fresh TLS socket (for what undici will not send). */
  raw?: boolean;
  rawHead?: Buffer;
  chunked?: boolean;
  timeoutMs?: number;
  expect: readonly number[];
  /** watch: a 2xx body is a stream of JSON lines. */
  watch?: boolean;
  /**
   * freshRv: before sending, read this object and put its current resourceVersion in place of `"resourceVersion":
   * "<rv>"` in the body, so an update is judged on its body, not refused as stale after an earlier case's damage.
   */
  freshRv?: { path: string; rv: string };
  /** keepConnection: send over the keep-alive connection even when the head is huge (see Client.send). */
  keepConnection?: boolean;
  /** check adds a condition on a 2xx answer; it returns the problem. */
  check?: (a: Answer) => string | undefined;
}

/** HostileCase is one case of one class: usually one step, a few for lifecycles. */
export interface HostileCase {
  cls: string;
  name: string;
  steps: Step[];
  /** ownConnection: the steps share one keep-alive connection of their own. */
  ownConnection?: boolean;
}

/** Fixture is an object written before the run, as read back. */
export interface Fixture {
  ns: string;
  name: string;
  object: Record<string, any>;
}

export const API = '/apis/extensions.example.com/v1alpha1';
/** fixtureNamespace holds one class's own copy of the fixtures, so damage done by one class shows as that class's. */
export const fixtureNamespace = (cls: string) => `hostile-fx-${cls}`;
// FX is the fixture namespace of the class being generated (generation is synchronous, one class at a time);
// only requests kube refuses go there.
let FX = fixtureNamespace('none');
/** SCRATCH takes every request kube accepts. */
export const SCRATCH = 'hostile-ok';
/** DC is where deletecollection's limit is checked. */
export const DC = 'hostile-dc';
const GIT = 'https://github.com/luksa/kubia-website-example.git';
const GV = 'extensions.example.com/v1alpha1';
const MiB = 1024 * 1024;

const J = { 'content-type': 'application/json' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JP = { 'content-type': 'application/json-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

const FAIL = [400, 422] as const;
const list = (ns: string) => `${API}/namespaces/${ns}/websites`;
const obj = (ns: string, name: string) => `${list(ns)}/${name}`;

let seq = 0;
/** uniq is a fresh object name. */
const uniq = (p = 'h') => `${p}-${(seq++).toString(36)}`;

// RAW marks where a raw JSON text replaces a string after JSON.stringify.
const RAW = '@@RAW@@';
const withRaw = (value: unknown, raw: string) => JSON.stringify(value).replace(`"${RAW}"`, () => raw);

function websiteText(name: string, metadata: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) {
  return { apiVersion: GV, kind: 'Website', metadata: { name, ...metadata }, spec: { gitRepo: GIT, ...spec } };
}

// ---------------------------------------------------------------------------------------------------------------
// Values and Go's decoding rules

/** A value as raw JSON text. */
const VALUES = [
  'true',
  'false',
  '0',
  '1',
  '-1',
  '42',
  '1.5',
  '1e3',
  '-0.0',
  '1e400',
  '-1e400',
  '99999999999999999999',
  '""',
  '"x"',
  '"ü✓"',
  '"2020-01-01T00:00:00Z"',
  '[]',
  '["x"]',
  '[1]',
  '[true]',
  '[{}]',
  '[[]]',
  '[null]',
  '{}',
  '{"a":"b"}',
  '{"a":1}',
  '{"a":true}',
  '{"a":{}}',
  '{"a":[]}',
  '{"a":null}',
  '{"a":1.5}',
];

type Go = 'string' | 'bool' | 'int64' | 'time' | 'strmap' | 'strslice' | 'objslice' | 'struct';

const isNumberText = (raw: string) => /^-?\d/.test(raw);
const INT_TEXT = /^-?(0|[1-9]\d*)$/;

/** goAccepts says whether encoding/json decodes the raw JSON into a Go value of this type (null aside). */
function goAccepts(raw: string, type: Go): boolean {
  if (isNumberText(raw)) {
    if (type !== 'int64') return false;
    // A custom resource is decoded into unstructured (float64 for 1e3 and -0.0) and re-marshalled before
    // ObjectMeta is unmarshalled (apiextensions schema/objectmeta GetObjectMeta): an integral value in range passes.
    const n = Number(raw);
    return Number.isInteger(n) && Math.abs(n) < 2 ** 63;
  }
  const v = JSON.parse(raw) as unknown;
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'bool':
      return typeof v === 'boolean';
    case 'int64':
      return false;
    case 'time':
      return typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(v);
    case 'strmap':
      return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => x === null || typeof x === 'string');
    case 'strslice':
      return Array.isArray(v) && v.every((x) => x === null || typeof x === 'string');
    case 'objslice':
      return Array.isArray(v) && v.every((x) => x === null || (typeof x === 'object' && !Array.isArray(x)));
    case 'struct':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
  }
}

const wrongFor = (type: Go) => VALUES.filter((raw) => !goAccepts(raw, type));
// In YAML a number may come back as another number (1e3 is 1000) or as a string (1e400 overflows, so goyaml keeps
// the text): only non-numeric wrong values, and numbers that stay numbers for a string member, stay wrong.
const wrongForYaml = (type: Go) =>
  wrongFor(type).filter(
    (raw) => !isNumberText(raw) || ((type === 'string' || type === 'strmap' || type === 'strslice' || type === 'time') && !/e400/.test(raw)),
  );

/** The members of metav1.ObjectMeta and their Go types (k8s.io/apimachinery/pkg/apis/meta/v1/types.go). */
const META_FIELDS: [string, Go][] = [
  ['name', 'string'],
  ['generateName', 'string'],
  ['namespace', 'string'],
  ['selfLink', 'string'],
  ['uid', 'string'],
  ['resourceVersion', 'string'],
  ['generation', 'int64'],
  ['creationTimestamp', 'time'],
  ['deletionTimestamp', 'time'],
  ['deletionGracePeriodSeconds', 'int64'],
  ['labels', 'strmap'],
  ['annotations', 'strmap'],
  ['ownerReferences', 'objslice'],
  ['finalizers', 'strslice'],
  ['managedFields', 'objslice'],
];
const OWNER_REF_FIELDS: [string, Go][] = [
  ['apiVersion', 'string'],
  ['kind', 'string'],
  ['name', 'string'],
  ['uid', 'string'],
  ['controller', 'bool'],
  ['blockOwnerDeletion', 'bool'],
];
const MANAGED_FIELDS: [string, Go][] = [
  ['manager', 'string'],
  ['operation', 'string'],
  ['apiVersion', 'string'],
  ['time', 'time'],
  ['fieldsType', 'string'],
  ['subresource', 'string'],
];
const OWNER_REF = { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: '6f1c7a52-9a55-4b7e-8a39-2b3b4c5d6e7f' };
const MANAGED = { manager: 'm', operation: 'Update', apiVersion: GV, time: '2020-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1: {} };

/** A wrongly typed member somewhere in metadata: the path below metadata and the raw value. */
interface MetaWrong {
  label: string;
  path: string[];
  raw: string;
  /** container: the list member around a nested wrong value (an owner reference, a managedFields entry). */
  container?: unknown;
}

function metaWrongs(yaml: boolean): MetaWrong[] {
  const pick = yaml ? wrongForYaml : wrongFor;
  const out: MetaWrong[] = [];
  for (const [f, t] of META_FIELDS) for (const raw of pick(t)) out.push({ label: `metadata.${f}=${raw}`, path: [f], raw });
  for (const [f, t] of OWNER_REF_FIELDS) {
    for (const raw of pick(t)) out.push({ label: `metadata.ownerReferences[0].${f}=${raw}`, path: ['ownerReferences', '0', f], raw, container: OWNER_REF });
  }
  // Apply ignores a wrongly typed managedFields (kube's unstructured accessor drops it, then the field manager sets
  // its own), so only the other vehicles must refuse one.
  if (!yaml) {
    for (const [f, t] of MANAGED_FIELDS) {
      for (const raw of pick(t)) out.push({ label: `metadata.managedFields[0].${f}=${raw}`, path: ['managedFields', '0', f], raw, container: MANAGED });
    }
  }
  return out;
}

/** metaMember builds the metadata member holding the wrong value (a list around a nested member). */
function metaMember(w: MetaWrong): [string, unknown] {
  const [top] = w.path as [string];
  if (w.path.length === 1) return [top, RAW];
  return [top, [{ ...(w.container as object), [w.path[2] as string]: RAW }]];
}

// ---------------------------------------------------------------------------------------------------------------
// Classes

/** The five ways a body reaches an object: create, update, merge patch, JSON patch, apply. */
function vehicles(
  fx: Fixture,
  cls: string,
  label: string,
  top: 'metadata' | 'spec' | 'status',
  member: [string, unknown],
  raw: string,
  yamlOk: boolean,
  subresource = '',
): HostileCase[] {
  const [key, value] = member;
  const path = `${obj(fx.ns, fx.name)}${subresource}`;
  const cases: HostileCase[] = [];
  const section = (extra: Record<string, unknown> = {}) => ({ ...extra, [key]: value });
  if (!subresource) {
    const body = websiteText(uniq(), {}, {}) as Record<string, any>;
    body[top] = top === 'metadata' ? { ...body.metadata, ...section() } : top === 'spec' ? { ...body.spec, ...section() } : section();
    cases.push({ cls, name: `create ${label}`, steps: [{ method: 'POST', path: list(FX), headers: J, body: withRaw(body, raw), expect: FAIL }] });
  }
  const put = structuredClone(fx.object);
  put[top] = { ...(put[top] ?? {}), ...section() };
  const freshRv = { path: obj(fx.ns, fx.name), rv: String(fx.object.metadata.resourceVersion) };
  cases.push({
    cls,
    name: `update ${fx.name}${subresource} ${label}`,
    steps: [{ method: 'PUT', path, headers: J, body: withRaw(put, raw), expect: FAIL, freshRv }],
  });
  cases.push({
    cls,
    name: `merge patch ${fx.name}${subresource} ${label}`,
    steps: [{ method: 'PATCH', path, headers: MERGE, body: withRaw({ [top]: section() }, raw), expect: FAIL }],
  });
  const pointer = `/${top}/${key}`;
  cases.push({
    cls,
    name: `json patch ${fx.name}${subresource} ${label}`,
    steps: [{ method: 'PATCH', path, headers: JP, body: withRaw([{ op: 'add', path: pointer, value }], raw), expect: FAIL }],
  });
  if (yamlOk) {
    const apply: Record<string, any> = { apiVersion: GV, kind: 'Website', metadata: { name: fx.name } };
    apply[top] = top === 'metadata' ? { name: fx.name, ...section() } : section();
    // kube checks apply conflicts with the fields' owner first: a 409 changes nothing either. Conditions are a list
    // map keyed by type: items it cannot key (no type, not an object) or keys twice are kube's 500 before anything.
    let actual: unknown = value;
    if (value === RAW) {
      try {
        actual = JSON.parse(raw);
      } catch {
        actual = undefined;
      }
    }
    const types =
      key === 'conditions' && Array.isArray(actual)
        ? actual.map((c) =>
            typeof c === 'object' && c !== null && !Array.isArray(c) && 'type' in c ? JSON.stringify((c as { type: unknown }).type) : undefined,
          )
        : [];
    const untypable = types.some((t) => t === undefined) || new Set(types).size < types.length;
    cases.push({
      cls,
      name: `apply ${fx.name}${subresource} ${label}`,
      steps: [
        { method: 'PATCH', path: `${path}?fieldManager=hostile`, headers: APPLY, body: withRaw(apply, raw), expect: untypable ? [500] : [400, 409, 422] },
      ],
    });
  }
  return cases;
}

function metadataTypes(fixtures: Fixture[]): HostileCase[] {
  const cases: HostileCase[] = [];
  // kube's apply also drops a wrongly typed creationTimestamp (it keeps the stored one): 200, nothing stored wrong.
  const yamlLabels = new Set(
    metaWrongs(true)
      .filter((w) => w.path[0] !== 'managedFields' && w.path[0] !== 'creationTimestamp')
      .map((w) => w.label),
  );
  let i = 0;
  for (const w of metaWrongs(false)) {
    const fx = fixtures[i++ % fixtures.length] as Fixture;
    cases.push(...vehicles(fx, 'metadata-types', w.label, 'metadata', metaMember(w), w.raw, yamlLabels.has(w.label)));
  }
  // metadata itself, and the top-level members, wrongly typed.
  for (const raw of wrongFor('struct')) {
    const fx = fixtures[i++ % fixtures.length] as Fixture;
    cases.push({
      cls: 'metadata-types',
      name: `create metadata=${raw}`,
      steps: [
        {
          method: 'POST',
          path: list(FX),
          headers: J,
          body: withRaw({ apiVersion: GV, kind: 'Website', metadata: RAW, spec: { gitRepo: GIT } }, raw),
          expect: FAIL,
        },
      ],
    });
    cases.push({
      cls: 'metadata-types',
      name: `merge patch metadata=${raw}`,
      steps: [{ method: 'PATCH', path: obj(fx.ns, fx.name), headers: MERGE, body: `{"metadata":${raw}}`, expect: FAIL }],
    });
    cases.push({
      cls: 'metadata-types',
      name: `json patch replace /metadata ${raw}`,
      steps: [{ method: 'PATCH', path: obj(fx.ns, fx.name), headers: JP, body: `[{"op":"replace","path":"/metadata","value":${raw}}]`, expect: FAIL }],
    });
    cases.push({
      cls: 'metadata-types',
      name: `update metadata=${raw}`,
      steps: [{ method: 'PUT', path: obj(fx.ns, fx.name), headers: J, body: withRaw({ ...fx.object, metadata: RAW }, raw), expect: FAIL }],
    });
  }
  for (const [member, raws] of [
    ['apiVersion', wrongFor('string')],
    ['kind', wrongFor('string')],
  ] as const) {
    for (const raw of raws) {
      const body = { ...websiteText(uniq()), [member]: RAW };
      cases.push({
        cls: 'metadata-types',
        name: `create ${member}=${raw}`,
        steps: [{ method: 'POST', path: list(FX), headers: J, body: withRaw(body, raw), expect: FAIL }],
      });
    }
  }
  // Values of the right type that ValidateObjectMeta refuses (422), in creates.
  const invalid: [string, Record<string, unknown>][] = [
    ['label key with a space', { labels: { 'a b': 'c' } }],
    ['label value too long', { labels: { a: 'x'.repeat(64) } }],
    ['label value of U+FFFD', { labels: { a: '\ufffd' } }],
    ['annotation key invalid', { annotations: { '-bad-': 'x' } }],
    ['finalizer without a name', { finalizers: ['example.com/'] }],
    ['finalizer with a space', { finalizers: ['a b'] }],
    ['ownerReference without uid', { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: '' }] }],
    [
      'two controllers',
      {
        ownerReferences: [
          { ...OWNER_REF, controller: true },
          { ...OWNER_REF, name: 'o2', uid: 'a', controller: true },
        ],
      },
    ],
    ['generateName invalid', { name: undefined, generateName: 'UPPER_' }],
    ['namespace differs from the URL', { namespace: 'elsewhere' }],
    ['name with capitals', { name: 'UPPER' }],
    ['name with an underscore', { name: 'a_b' }],
    ['name of 254 characters', { name: 'a'.repeat(254) }],
    ['name empty', { name: '' }],
    ['name ".."', { name: '..' }],
    ['name with a slash', { name: 'a/b' }],
    ['name with a percent', { name: 'a%b' }],
  ];
  for (const [label, meta] of invalid) {
    const body = websiteText(uniq(), meta);
    cases.push({
      cls: 'metadata-types',
      name: `create ${label}`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: JSON.stringify(body), expect: [400, 409, 422] }],
    });
  }
  return cases;
}

// Spec and status members: the raw values the CRD's structural schema refuses.
const SPEC_WRONG: [string, string[]][] = [
  ['gitRepo', [...wrongFor('string'), '""', '"x"', '"ü✓"']],
  ['branch', wrongFor('string')],
  [
    'replicas',
    [...VALUES.filter((r) => !/^(0|1|42|-0\.0|1e3)$/.test(r) && !(isNumberText(r) && INT_TEXT.test(r) && Number(r) >= 0 && Number(r) <= 100)), '101', '-5'],
  ],
  ['syncIntervalSeconds', [...VALUES.filter((r) => !/^(42|1e3)$/.test(r)), '4', '86401']],
  ['serviceType', [...wrongFor('string'), '""', '"x"', '"nodeport"']],
  [
    'secretRef',
    VALUES.filter((r) => !['{}', '{"a":"b"}', '{"a":1}', '{"a":true}', '{"a":{}}', '{"a":[]}', '{"a":null}', '{"a":1.5}'].includes(r)).concat([
      '{}',
      '{"name":""}',
    ]),
  ],
];
// (wrongFor('int64') already leaves out 1e3 and -0.0, which the structural schema takes as integers.)
const STATUS_WRONG: [string, string[]][] = [
  ['observedGeneration', [...wrongFor('int64'), '-1']],
  ['replicas', [...wrongFor('int64'), '-1']],
  ['readyReplicas', [...wrongFor('int64'), '-2']],
  ['selector', wrongFor('string')],
  ['deployment', wrongFor('string')],
  ['service', wrongFor('string')],
  ['nodePort', [...wrongFor('int64'), '-1', '65536']],
  ['conditions', VALUES.filter((r) => !/^(\[\]|\[null\])$/.test(r))],
];
const CONDITION = { type: 'Ready', status: 'True', reason: 'R', message: 'm', lastTransitionTime: '2020-01-01T00:00:00Z' };
const CONDITION_WRONG: [string, string[]][] = [
  ['type', wrongFor('string')],
  ['status', [...wrongFor('string'), '"x"', '""']],
  ['reason', wrongFor('string')],
  ['message', wrongFor('string')],
  ['lastTransitionTime', [...wrongFor('string'), '"x"', '"2020-13-01T00:00:00Z"']],
  ['observedGeneration', [...wrongFor('int64'), '-1']],
];

function specStatusTypes(fixtures: Fixture[], statusFixture: Fixture, scaleFixture: Fixture): HostileCase[] {
  const cls = 'spec-status-types';
  const cases: HostileCase[] = [];
  let i = 0;
  for (const [field, raws] of SPEC_WRONG) {
    for (const raw of raws) {
      const fx = fixtures[i++ % fixtures.length] as Fixture;
      const yamlOk =
        !isNumberText(raw) || ((field === 'gitRepo' || field === 'branch' || field === 'serviceType' || field === 'secretRef') && !/e400/.test(raw));
      cases.push(...vehicles(fx, cls, `spec.${field}=${raw}`, 'spec', [field, RAW], raw, yamlOk));
    }
  }
  for (const raw of VALUES.filter((r) => !r.startsWith('{'))) {
    const fx = fixtures[i++ % fixtures.length] as Fixture;
    cases.push({
      cls,
      name: `create spec=${raw}`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: withRaw({ ...websiteText(uniq()), spec: RAW }, raw), expect: FAIL }],
    });
    cases.push({
      cls,
      name: `merge patch spec=${raw}`,
      steps: [{ method: 'PATCH', path: obj(fx.ns, fx.name), headers: MERGE, body: `{"spec":${raw}}`, expect: FAIL }],
    });
  }
  for (const raw of ['{}', '{"a":"b"}', 'null']) {
    cases.push({
      cls,
      name: `create spec=${raw} (no gitRepo)`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: withRaw({ ...websiteText(uniq()), spec: RAW }, raw), expect: FAIL }],
    });
  }
  for (const [field, raws] of STATUS_WRONG) {
    for (const raw of raws) cases.push(...vehicles(statusFixture, cls, `status.${field}=${raw}`, 'status', [field, RAW], raw, !isNumberText(raw), '/status'));
  }
  for (const [field, raws] of CONDITION_WRONG) {
    for (const raw of raws) {
      cases.push(
        ...vehicles(
          statusFixture,
          cls,
          `status.conditions[0].${field}=${raw}`,
          'status',
          ['conditions', [{ ...CONDITION, [field]: RAW }]],
          raw,
          !isNumberText(raw),
          '/status',
        ),
      );
    }
  }
  // A wrongly typed status in a create is dropped with the rest of status (customresource strategy
  // PrepareForCreate), so kube creates the object: the stored object must still decode.
  for (const raw of ['"x"', '1', '[]', 'true', '{"replicas":"x"}', '{"conditions":"x"}']) {
    const name = uniq();
    cases.push({
      cls,
      name: `create with status=${raw} (status is dropped)`,
      steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: withRaw({ ...websiteText(name), status: RAW }, raw), expect: [201] }],
    });
  }
  // The autoscaling/v1 Scale of /scale: a typed Go struct, then the Website's own bounds.
  const scale = (replicas: string, extra = '') =>
    `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"${scaleFixture.name}","namespace":"${scaleFixture.ns}"${extra}},"spec":{"replicas":${replicas}}}`;
  const scalePath = `${obj(scaleFixture.ns, scaleFixture.name)}/scale`;
  for (const raw of ['"x"', 'true', '1.5', '1e400', '99999999999999999999', '[]', '{}', '-1', '101', '"3"']) {
    cases.push({ cls, name: `update /scale spec.replicas=${raw}`, steps: [{ method: 'PUT', path: scalePath, headers: J, body: scale(raw), expect: FAIL }] });
    cases.push({
      cls,
      name: `merge patch /scale spec.replicas=${raw}`,
      steps: [{ method: 'PATCH', path: scalePath, headers: MERGE, body: `{"spec":{"replicas":${raw}}}`, expect: FAIL }],
    });
    cases.push({
      cls,
      name: `json patch /scale spec.replicas=${raw}`,
      steps: [{ method: 'PATCH', path: scalePath, headers: JP, body: `[{"op":"replace","path":"/spec/replicas","value":${raw}}]`, expect: FAIL }],
    });
  }
  for (const [label, body] of [
    ['kind Pod', scale('2').replace('"Scale"', '"Pod"')],
    ['apiVersion v9', scale('2').replace('autoscaling/v1', 'autoscaling/v9')],
    ['labels true', scale('2', ',"labels":true')],
    ['spec "x"', `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"${scaleFixture.name}"},"spec":"x"}`],
    ['not JSON', '{"spec":'],
    ['an array', '[]'],
  ] as const) {
    cases.push({ cls, name: `update /scale ${label}`, steps: [{ method: 'PUT', path: scalePath, headers: J, body, expect: FAIL }] });
  }
  return cases;
}

/** A valid create body whose bytes the syntax cases take apart. */
function sampleCreate(name: string): string {
  return JSON.stringify(websiteText(name, { labels: { app: 'web', tier: 'front' }, annotations: { note: 'ünï ✓' } }, { branch: 'main', replicas: 2 }));
}

function jsonSyntax(fixtures: Fixture[]): HostileCase[] {
  const cls = 'json-syntax';
  const cases: HostileCase[] = [];
  const fx = fixtures[0] as Fixture;
  const fxPath = obj(fx.ns, fx.name);
  // Truncated at every byte: never JSON.
  const create = sampleCreate('truncated');
  for (let n = 0; n < create.length; n++) {
    cases.push({ cls, name: `create truncated at ${n}`, steps: [{ method: 'POST', path: list(FX), headers: J, body: create.slice(0, n), expect: [400] }] });
  }
  const put = JSON.stringify(fx.object);
  for (let n = 1; n < put.length; n += Math.max(1, Math.floor(put.length / 150))) {
    cases.push({ cls, name: `update truncated at ${n}`, steps: [{ method: 'PUT', path: fxPath, headers: J, body: put.slice(0, n), expect: [400] }] });
  }
  const merge = '{"metadata":{"labels":{"a":"b"}},"spec":{"replicas":2}}';
  const jp = '[{"op":"replace","path":"/spec/replicas","value":2},{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]';
  const del = '{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}';
  for (const [i, f] of fixtures.entries()) {
    const p = obj(f.ns, f.name);
    for (let n = 1 + i; n < merge.length; n += fixtures.length)
      cases.push({
        cls,
        name: `merge patch truncated at ${n}`,
        steps: [{ method: 'PATCH', path: p, headers: MERGE, body: merge.slice(0, n), expect: [400, 422] }],
      });
    for (let n = 1 + i; n < jp.length; n += fixtures.length)
      cases.push({ cls, name: `json patch truncated at ${n}`, steps: [{ method: 'PATCH', path: p, headers: JP, body: jp.slice(0, n), expect: [400, 422] }] });
    // Never an empty body here: an empty DELETE body means "no options" and deletes.
    for (let n = 1 + i; n < del.length; n += fixtures.length)
      cases.push({ cls, name: `delete body truncated at ${n}`, steps: [{ method: 'DELETE', path: p, headers: J, body: del.slice(0, n), expect: [400] }] });
  }
  // Not JSON at all, or JSON that is not an object.
  const notJson = [
    '',
    ' ',
    '\n',
    'null',
    'true',
    '1',
    '"x"',
    '[]',
    '[{}]',
    '{}',
    'NaN',
    'Infinity',
    '-Infinity',
    '{"a":NaN}',
    "{'a':1}",
    '{a:1}',
    '{"a":1,}',
    '{"a":01}',
    '{"a":+1}',
    '{"a":.5}',
    '{"a":0x10}',
    '{"a":"\t"}',
    '{"a":"\n"}',
    '{"a":"\\x41"}',
    '{"a":"\\u12"}',
    '{"a":"\\u12zz"}',
    '{"a":1}{"b":2}',
    '{"a":1} x',
    '{"a":1}//c',
    '/*c*/{}',
    '{"a":1]',
    '<xml/>',
    '\u0000{}',
    '{"a":"b"\u0000}',
    '{"a" "b"}',
    '{"a"::1}',
    '{,}',
    '{"a":[1,]}',
    '{"a":tru}',
    '{"a":nul}',
    '{"a":True}',
    '\u001f',
    '}',
    ']',
    '{{}}',
    '{"\\ud800":1',
    '1e400',
    '"\\',
  ];
  for (const body of notJson) {
    cases.push({ cls, name: `create body ${JSON.stringify(body)}`, steps: [{ method: 'POST', path: list(FX), headers: J, body, expect: FAIL }] });
    if (body !== '' && body.trim() !== '' && body !== 'null' && body !== '{}') {
      cases.push({ cls, name: `delete body ${JSON.stringify(body)}`, steps: [{ method: 'DELETE', path: fxPath, headers: J, body, expect: [400, 415, 422] }] });
    }
    if (!['{}', '[]', '[{}]'].includes(body)) {
      cases.push({ cls, name: `update body ${JSON.stringify(body)}`, steps: [{ method: 'PUT', path: fxPath, headers: J, body, expect: FAIL }] });
      if (body.trim() !== '' && body !== 'null') {
        cases.push({ cls, name: `json patch body ${JSON.stringify(body)}`, steps: [{ method: 'PATCH', path: fxPath, headers: JP, body, expect: FAIL }] });
      }
      if (!['"x"', '1', 'true'].includes(body) && body.trim() !== '' && body !== 'null') {
        cases.push({ cls, name: `merge patch body ${JSON.stringify(body)}`, steps: [{ method: 'PATCH', path: fxPath, headers: MERGE, body, expect: FAIL }] });
      }
    }
  }
  // Invalid UTF-8: outside strings a syntax error; inside a string Go's decoder makes each bad byte U+FFFD.
  const badUtf8 = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc3], [0xe2, 0x82], [0x80], [0xfe, 0xff]];
  const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
  for (const bad of badUtf8) {
    const hex = Buffer.from(bad).toString('hex');
    const name = uniq();
    const [pre, post] = JSON.stringify(websiteText(name, {}, { branch: 'BAD' })).split('BAD') as [string, string];
    cases.push({
      cls,
      name: `invalid UTF-8 ${hex} in spec.branch`,
      steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: bytes(pre.replace(`"${name}"`, `"${uniq()}"`), 'x', bad, post), expect: [201] }],
    });
    const n2 = uniq();
    const [apre, apost] = JSON.stringify(websiteText(n2, { annotations: { a: 'BAD' } })).split('BAD') as [string, string];
    cases.push({
      cls,
      name: `invalid UTF-8 ${hex} in an annotation value`,
      steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: bytes(apre, bad, apost), expect: [201] }],
    });
    const n3 = uniq();
    const [upre, upost] = JSON.stringify(websiteText(n3, {}, { BAD: 1 })).split('BAD') as [string, string];
    cases.push({
      cls,
      name: `invalid UTF-8 ${hex} in an unknown field's name`,
      steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: bytes(upre, 'u', bad, upost), expect: [201] }],
    });
    for (const [where, meta] of [
      ['metadata.name', { name: 'BAD' }],
      ['a label value', { labels: { a: 'BAD' } }],
      ['a label key', { labels: { BAD: 'a' } }],
      ['an annotation key', { annotations: { BAD: 'a' } }],
      ['a finalizer', { finalizers: ['example.com/BAD'] }],
    ] as const) {
      const [p1, p2] = JSON.stringify(websiteText(uniq(), meta)).split('BAD') as [string, string];
      cases.push({
        cls,
        name: `invalid UTF-8 ${hex} in ${where}`,
        steps: [{ method: 'POST', path: list(FX), headers: J, body: bytes(p1, bad, p2), expect: FAIL }],
      });
    }
    const [spre, spost] = JSON.stringify(websiteText(uniq())).split('"spec"') as [string, string];
    cases.push({
      cls,
      name: `invalid UTF-8 ${hex} between tokens`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: bytes(spre, bad, '"spec"', spost), expect: [400] }],
    });
    cases.push({
      cls,
      name: `invalid UTF-8 ${hex} in a merge patch label value`,
      steps: [{ method: 'PATCH', path: fxPath, headers: MERGE, body: bytes('{"metadata":{"labels":{"a":"', bad, '"}}}'), expect: FAIL }],
    });
    cases.push({
      cls,
      name: `invalid UTF-8 ${hex} as a delete body`,
      steps: [{ method: 'DELETE', path: fxPath, headers: J, body: bytes(bad, '{}'), expect: [400] }],
    });
  }
  // Byte order marks: JSON has none (encoding/json: invalid character 'ï' looking for beginning of value).
  const valid = sampleCreate('bom');
  const utf16 = (s: string, be: boolean) => {
    const b = Buffer.from(s, 'utf16le');
    if (be) b.swap16();
    return b;
  };
  for (const [label, body] of [
    ['UTF-8 BOM', bytes([0xef, 0xbb, 0xbf], valid)],
    ['UTF-16LE BOM', Buffer.concat([Buffer.from([0xff, 0xfe]), utf16(valid, false)])],
    ['UTF-16BE BOM', Buffer.concat([Buffer.from([0xfe, 0xff]), utf16(valid, true)])],
    ['UTF-16LE without BOM', utf16(valid, false)],
    ['UTF-32LE BOM', Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), Buffer.from(valid)])],
    ['two UTF-8 BOMs', bytes([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf], valid)],
    ['BOM at the end', bytes(valid, [0xef, 0xbb, 0xbf])],
  ] as const) {
    cases.push({ cls, name: `create with ${label}`, steps: [{ method: 'POST', path: list(FX), headers: J, body, expect: [400] }] });
    cases.push({
      cls,
      name: `merge patch with ${label}`,
      steps: [
        {
          method: 'PATCH',
          path: fxPath,
          headers: MERGE,
          body: label.includes('16')
            ? utf16('{"metadata":{"labels":{"x":"y"}}}', label.includes('BE'))
            : bytes([0xef, 0xbb, 0xbf], '{"metadata":{"labels":{"x":"y"}}}'),
          expect: FAIL,
        },
      ],
    });
    cases.push({
      cls,
      name: `delete body with ${label}`,
      steps: [{ method: 'DELETE', path: fxPath, headers: J, body: bytes([0xef, 0xbb, 0xbf], '{"propagationPolicy":"Background"}'), expect: [400] }],
    });
  }
  cases.push({
    cls,
    name: 'create with U+FEFF inside an annotation value',
    steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: JSON.stringify(websiteText(uniq(), { annotations: { a: '\ufeffx' } })), expect: [201] }],
  });
  // Lone surrogates written as escapes decode to U+FFFD in Go.
  cases.push({
    cls,
    name: 'create with a lone surrogate escape in spec.branch',
    steps: [
      {
        method: 'POST',
        path: list(SCRATCH),
        headers: J,
        body: JSON.stringify(websiteText(uniq(), {}, { branch: 'x' })).replace('"branch":"x"', '"branch":"x\\ud800"'),
        expect: [201],
      },
    ],
  });
  cases.push({
    cls,
    name: 'create with a lone surrogate escape in a label value',
    steps: [
      {
        method: 'POST',
        path: list(FX),
        headers: J,
        body: JSON.stringify(websiteText(uniq(), { labels: { a: 'x' } })).replace('"a":"x"', '"a":"x\\udc00"'),
        expect: FAIL,
      },
    ],
  });
  // Duplicate members: the last wins; fieldValidation Warn (the default) warns, Strict refuses.
  const dupes: [string, (n: string) => string, boolean][] = [
    ['spec', (n) => `{"apiVersion":"${GV}","kind":"Website","metadata":{"name":"${n}"},"spec":{"gitRepo":"bad"},"spec":{"gitRepo":"${GIT}"}}`, true],
    ['metadata', (n) => `{"apiVersion":"${GV}","kind":"Website","metadata":{"name":"UPPER"},"metadata":{"name":"${n}"},"spec":{"gitRepo":"${GIT}"}}`, true],
    ['metadata.name', (n) => `{"apiVersion":"${GV}","kind":"Website","metadata":{"name":"UPPER","name":"${n}"},"spec":{"gitRepo":"${GIT}"}}`, true],
    [
      'labels, wrong type first',
      (n) => `{"apiVersion":"${GV}","kind":"Website","metadata":{"name":"${n}","labels":true,"labels":{"a":"b"}},"spec":{"gitRepo":"${GIT}"}}`,
      true,
    ],
    ['a label key', (n) => `{"apiVersion":"${GV}","kind":"Website","metadata":{"name":"${n}","labels":{"a":"1","a":"2"}},"spec":{"gitRepo":"${GIT}"}}`, true],
    [
      'spec.replicas',
      (n) => `{"apiVersion":"${GV}","kind":"Website","metadata":{"name":"${n}"},"spec":{"gitRepo":"${GIT}","replicas":"x","replicas":3}}`,
      true,
    ],
    [
      'labels, wrong type last',
      (n) => `{"apiVersion":"${GV}","kind":"Website","metadata":{"name":"${n}","labels":{"a":"b"},"labels":true},"spec":{"gitRepo":"${GIT}"}}`,
      false,
    ],
    [
      'spec.replicas, invalid last',
      (n) => `{"apiVersion":"${GV}","kind":"Website","metadata":{"name":"${n}"},"spec":{"gitRepo":"${GIT}","replicas":3,"replicas":"x"}}`,
      false,
    ],
  ];
  const warned = (a: Answer) => (a.headers.warning ? undefined : 'no Warning header for the duplicate field');
  for (const [label, body, ok] of dupes) {
    if (ok) {
      cases.push({
        cls,
        name: `duplicate ${label} (Warn)`,
        steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: body(uniq()), expect: [201], check: warned }],
      });
      cases.push({
        cls,
        name: `duplicate ${label} (Ignore)`,
        steps: [{ method: 'POST', path: `${list(SCRATCH)}?fieldValidation=Ignore`, headers: J, body: body(uniq()), expect: [201] }],
      });
    } else {
      cases.push({ cls, name: `duplicate ${label}`, steps: [{ method: 'POST', path: list(FX), headers: J, body: body(uniq()), expect: FAIL }] });
    }
    cases.push({
      cls,
      name: `duplicate ${label} (Strict)`,
      steps: [{ method: 'POST', path: `${list(FX)}?fieldValidation=Strict`, headers: J, body: body(uniq()), expect: FAIL }],
    });
  }
  cases.push({
    cls,
    name: 'duplicate label key in a merge patch (Strict)',
    steps: [{ method: 'PATCH', path: `${fxPath}?fieldValidation=Strict`, headers: MERGE, body: '{"metadata":{"labels":{"a":"1","a":"2"}}}', expect: FAIL }],
  });
  // Deep nesting. sigs.k8s.io/json stops at depth 10000; below that an unknown field is pruned.
  const deep = (d: number, open = '[', close = ']') => open.repeat(d) + close.repeat(d);
  const deepObj = (d: number) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`;
  // A deliberate difference: this server refuses nesting deeper than 500 levels (src/apis/meta/json-syntax.ts), where
  // kube prunes up to 10000, since its JavaScript write path cannot recurse that deep; refused, never a crash.
  for (const d of [10, 100, 1000, 5000]) {
    for (const [kind, v] of [
      ['arrays', deep(d)],
      ['objects', deepObj(d)],
    ] as const) {
      const n = uniq();
      cases.push({
        cls,
        name: `${d} nested ${kind} in an unknown spec field`,
        steps: [
          {
            method: 'POST',
            path: list(SCRATCH),
            headers: J,
            body: JSON.stringify(websiteText(n, {}, { x: RAW })).replace(`"${RAW}"`, v),
            expect: d <= 500 ? [201] : [400],
          },
        ],
      });
    }
  }
  for (const d of [9990, 10010]) {
    const n = uniq();
    cases.push({
      cls,
      name: `${d} nested arrays in an unknown spec field (at the decoder's limit)`,
      steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: withRaw(websiteText(n, {}, { x: RAW }), deep(d)), expect: [201, 400] }],
    });
  }
  for (const d of [10_100, 20_000, 100_000, 1_000_000]) {
    for (const [kind, v] of [
      ['arrays', deep(d)],
      ['objects', deepObj(d)],
    ] as const) {
      cases.push({
        cls,
        name: `${d} nested ${kind} in an unknown spec field`,
        steps: [{ method: 'POST', path: list(FX), headers: J, body: withRaw(websiteText(uniq(), {}, { x: RAW }), v), expect: [400, 413, 422] }],
      });
      cases.push({
        cls,
        name: `${d} nested ${kind} in annotations`,
        steps: [{ method: 'POST', path: list(FX), headers: J, body: withRaw(websiteText(uniq(), { annotations: { a: RAW } }), v), expect: [400, 413, 422] }],
      });
      cases.push({ cls, name: `${d} nested ${kind} as the body`, steps: [{ method: 'POST', path: list(FX), headers: J, body: v, expect: [400, 413, 422] }] });
      cases.push({
        cls,
        name: `${d} nested ${kind} in a merge patch`,
        steps: [{ method: 'PATCH', path: fxPath, headers: MERGE, body: `{"spec":{"x":${v}}}`, expect: [400, 413, 422] }],
      });
      cases.push({
        cls,
        name: `${d} nested ${kind} in a json patch value`,
        steps: [{ method: 'PATCH', path: fxPath, headers: JP, body: `[{"op":"add","path":"/spec/x","value":${v}}]`, expect: [400, 413, 422] }],
      });
      cases.push({
        cls,
        name: `${d} nested ${kind} in a delete body`,
        steps: [{ method: 'DELETE', path: fxPath, headers: J, body: `{"x":${v}}`, expect: [400, 413] }],
      });
      const freshRv = { path: fxPath, rv: String(fx.object.metadata.resourceVersion) };
      cases.push({
        cls,
        name: `${d} nested ${kind} in an update`,
        steps: [
          {
            method: 'PUT',
            path: fxPath,
            headers: J,
            body: withRaw({ ...fx.object, spec: { ...fx.object.spec, x: RAW } }, v),
            expect: [400, 413, 422],
            freshRv,
          },
        ],
      });
    }
  }
  for (const d of [1000, 10_100]) {
    cases.push({
      cls,
      name: `${d} nested arrays in labels`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: withRaw(websiteText(uniq(), { labels: RAW }), deep(d)), expect: [400, 422] }],
    });
    cases.push({
      cls,
      name: `${d} nested arrays in a merge patch of labels`,
      steps: [{ method: 'PATCH', path: fxPath, headers: MERGE, body: `{"metadata":{"labels":{"a":${deep(d)}}}}`, expect: [400, 422] }],
    });
  }
  // Huge numbers: Go's float64 refuses 1e400 even in a field that would be pruned.
  for (const raw of ['1e400', '-1e400', '1e309']) {
    cases.push({
      cls,
      name: `number ${raw} in an unknown spec field`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: withRaw(websiteText(uniq(), {}, { x: RAW }), raw), expect: [400] }],
    });
    cases.push({
      cls,
      name: `number ${raw} in an unknown metadata field`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: withRaw(websiteText(uniq(), { x: RAW }), raw), expect: [400] }],
    });
  }
  for (const raw of ['123456789012345678901234567890', '1e308', '-0', '0.000000000000000000001', '9223372036854775808']) {
    cases.push({
      cls,
      name: `number ${raw} in an unknown spec field (pruned)`,
      steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: withRaw(websiteText(uniq(), {}, { x: RAW }), raw), expect: [201] }],
    });
  }
  for (const raw of ['9223372036854775808', '-9223372036854775809', '1e19', '12345678901234567890123']) {
    // A known difference: -9223372036854775809 reads as the float64 -2^63, a valid int64 once parsed, so this server
    // stores generation -9223372036854775808 (a Go client decodes it) where kube refuses the literal.
    const generation = raw === '-9223372036854775809' ? [...FAIL, 201] : FAIL;
    const where = raw === '-9223372036854775809' ? SCRATCH : FX;
    cases.push({
      cls,
      name: `metadata.generation=${raw}`,
      steps: [{ method: 'POST', path: list(where), headers: J, body: withRaw(websiteText(uniq(), { generation: RAW }), raw), expect: generation }],
    });
    cases.push({
      cls,
      name: `spec.replicas=${raw}`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: withRaw(websiteText(uniq(), {}, { replicas: RAW }), raw), expect: FAIL }],
    });
  }
  // Huge strings: refused with a bounded answer, or pruned.
  const big = (n: number) => 'x'.repeat(n);
  // (kube quotes the whole value back in the 422, 2 MiB for a 1 MiB label: no bound on the answer's size is asserted.)
  for (const [label, meta, spec] of [
    ['a 1 MiB name', { name: big(MiB) }, {}],
    ['a 1 MiB label value', { labels: { a: big(MiB) } }, {}],
    ['a 1 MiB label key', { labels: { [big(MiB)]: 'a' } }, {}],
    ['300 KiB of annotations', { annotations: { a: big(300 * 1024) } }, {}],
    ['a 1 MiB finalizer', { finalizers: [`example.com/${big(MiB)}`] }, {}],
    ['a 1 MiB generateName', { name: undefined, generateName: big(MiB) }, {}],
    ['a 1 MiB spec.gitRepo', {}, { gitRepo: `https://example.com/${big(MiB)}` }],
    ['a 1 MiB spec.branch', {}, { branch: big(MiB) }],
    ['a 1 MiB spec.serviceType', {}, { serviceType: big(MiB) }],
    ['a 1 MiB secretRef.name', {}, { secretRef: { name: big(MiB) } }],
  ] as const) {
    cases.push({
      cls,
      name: `create with ${label}`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: JSON.stringify(websiteText(uniq(), meta, spec)), expect: FAIL }],
    });
  }
  cases.push({
    cls,
    name: 'create with 200 KiB of annotations',
    steps: [
      { method: 'POST', path: list(SCRATCH), headers: J, body: JSON.stringify(websiteText(uniq(), { annotations: { a: big(200 * 1024) } })), expect: [201] },
    ],
  });
  cases.push({
    cls,
    name: 'create with a 2.5 MiB unknown spec field',
    steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: JSON.stringify(websiteText(uniq(), {}, { x: big(2.5 * MiB) })), expect: [201] }],
  });
  cases.push({
    cls,
    name: 'merge patch with a 1 MiB label value',
    steps: [{ method: 'PATCH', path: fxPath, headers: MERGE, body: JSON.stringify({ metadata: { labels: { a: big(MiB) } } }), expect: FAIL }],
  });
  const freshRv = { path: fxPath, rv: String(fx.object.metadata.resourceVersion) };
  cases.push({
    cls,
    name: 'update with a 1 MiB spec.branch',
    steps: [
      { method: 'PUT', path: fxPath, headers: J, body: JSON.stringify({ ...fx.object, spec: { ...fx.object.spec, branch: big(MiB) } }), expect: FAIL, freshRv },
    ],
  });
  cases.push({
    cls,
    name: 'create with a 1 MiB fieldManager',
    steps: [{ method: 'POST', path: `${list(FX)}?fieldManager=${big(MiB)}`, headers: J, body: sampleCreate(uniq()), expect: [400, 414, 422, 431] }],
  });
  return cases;
}

function patches(fixtures: Fixture[]): HostileCase[] {
  const cls = 'patch';
  const cases: HostileCase[] = [];
  let i = 0;
  const next = () => fixtures[i++ % fixtures.length] as Fixture;
  const onFixture = (label: string, headers: Record<string, string>, body: string, expect: readonly number[] = FAIL, query = '') => {
    const f = next();
    cases.push({ cls, name: `${label} on ${f.name}`, steps: [{ method: 'PATCH', path: `${obj(f.ns, f.name)}${query}`, headers, body, expect }] });
  };
  // Merge patches that kube refuses.
  const mergeCases: [string, string, readonly number[], string?][] = [
    ['metadata null', '{"metadata":null}', [400, 409, 422]],
    ['metadata empty with the name removed', '{"metadata":{"name":null}}', [400, 409, 422]],
    ['metadata.name other', '{"metadata":{"name":"other"}}', [400, 409, 422]],
    ['metadata.namespace other', '{"metadata":{"namespace":"other"}}', [400, 409, 422]],
    ['metadata.uid changed', '{"metadata":{"uid":"6f1c7a52-0000-0000-0000-000000000000"}}', [400, 409, 422]],
    ['metadata.resourceVersion stale', '{"metadata":{"resourceVersion":"1"}}', [409]],
    ['metadata.resourceVersion garbage', '{"metadata":{"resourceVersion":"x"}}', [400, 409, 422]],
    ['apiVersion other', '{"apiVersion":"extensions.example.com/v9"}', [400, 409, 422]],
    ['apiVersion null', '{"apiVersion":null}', [400, 409, 422]],
    ['kind Pod', '{"kind":"Pod"}', [400, 409, 422]],
    ['kind null', '{"kind":null}', [400, 409, 422]],
    ['spec null', '{"spec":null}', FAIL],
    ['spec.gitRepo null', '{"spec":{"gitRepo":null}}', FAIL],
    ['spec.replicas -1', '{"spec":{"replicas":-1}}', FAIL],
    ['a JSON array', '[]', FAIL],
    ['a JSON array of ops', '[{"op":"add","path":"/spec/replicas","value":3}]', FAIL],
    ['a string', '"x"', FAIL],
    ['a number', '1', FAIL],
    ['true', 'true', FAIL],
    ['labels set to an array', '{"metadata":{"labels":["a"]}}', FAIL],
    ['a label value too long', `{"metadata":{"labels":{"a":"${'x'.repeat(64)}"}}}`, FAIL],
    ['a finalizer that is not qualified', '{"metadata":{"finalizers":["a b"]}}', FAIL],
    ['an unknown field with Strict', '{"spec":{"nope":1}}', FAIL, '?fieldValidation=Strict'],
    ['force on a merge patch', '{"spec":{"replicas":3}}', [422], '?force=true'],
    ['dryRun=Some', '{"spec":{"replicas":3}}', [422], '?dryRun=Some'],
    ['dryRun empty', '{"spec":{"replicas":3}}', [422], '?dryRun='],
    ['fieldValidation=strict (lower case)', '{"spec":{"replicas":3}}', [422], '?fieldValidation=strict'],
    ['a fieldManager of 129 characters', '{"spec":{"replicas":3}}', [422], `?fieldManager=${'m'.repeat(129)}`],
    ['a fieldManager with a control character', '{"spec":{"replicas":3}}', [422], '?fieldManager=a%01b'],
  ];
  for (const [label, body, expect, query] of mergeCases) onFixture(`merge patch ${label}`, MERGE, body, expect, query ?? '');
  // JSON patches: malformed documents, unknown operations, bad pointers, failed tests, invalid results.
  const badDocs = [
    '{}',
    '"x"',
    '1',
    'true',
    '[1]',
    '["x"]',
    '[null]',
    '[[]]',
    '[{}]',
    '[{"op":1,"path":"/spec"}]',
    '[{"op":"add"}]',
    '[{"path":"/spec/replicas","value":3}]',
    '[{"op":"add","path":1,"value":3}]',
    '[{"op":"add","path":["spec"],"value":3}]',
    '[{"op":"add","path":null,"value":3}]',
    '[{"op":"foo","path":"/spec/replicas","value":3}]',
    '[{"op":"ADD","path":"/spec/replicas","value":3}]',
    '[{"op":"move","path":"/spec/x"}]',
    '[{"op":"copy","path":"/spec/x"}]',
    '[{"op":"move","from":1,"path":"/spec/x"}]',
    '[{"op":"test","path":"/spec/replicas"}]',
  ];
  for (const body of badDocs) onFixture(`json patch ${body}`, JP, body, [400, 422]);
  // (evanphx/json-patch v4 also takes "spec/replicas", "/~" and "#/spec"; kube answers 200 to those.)
  const badPointers = [
    '/nonexistent/a/b',
    '/spec/replicas/x',
    '/spec/gitRepo/0',
    '/metadata/finalizers/99',
    '/metadata/finalizers/-5',
    '/metadata/labels/a/b/c',
    '/spec/secretRef/name/x',
  ];
  for (const op of ['add', 'remove', 'replace', 'move', 'copy', 'test']) {
    for (const p of badPointers) {
      const o = op === 'move' || op === 'copy' ? { op, from: p, path: '/spec/x' } : op === 'remove' ? { op, path: p } : { op, path: p, value: 3 };
      onFixture(`json patch ${op} ${p}`, JP, JSON.stringify([o]), [400, 422]);
    }
    if (op === 'move' || op === 'copy')
      for (const p of badPointers) onFixture(`json patch ${op} to ${p}`, JP, JSON.stringify([{ op, from: '/spec/replicas', path: p }]), [400, 422]);
  }
  for (const [label, ops, expect] of [
    ['remove /metadata', [{ op: 'remove', path: '/metadata' }], [400, 409, 422]],
    ['replace /metadata {}', [{ op: 'replace', path: '/metadata', value: {} }], [400, 409, 422]],
    ['remove /metadata/name', [{ op: 'remove', path: '/metadata/name' }], [400, 409, 422]],
    ['replace /metadata/name', [{ op: 'replace', path: '/metadata/name', value: 'other' }], [400, 409, 422]],
    ['replace /metadata/namespace', [{ op: 'replace', path: '/metadata/namespace', value: 'other' }], [400, 409, 422]],
    ['replace /metadata/uid', [{ op: 'replace', path: '/metadata/uid', value: '6f1c7a52-0000-0000-0000-000000000000' }], [400, 409, 422]],
    ['replace /metadata/resourceVersion stale', [{ op: 'replace', path: '/metadata/resourceVersion', value: '1' }], [409]],
    ['replace /apiVersion', [{ op: 'replace', path: '/apiVersion', value: 'v1' }], [400, 409, 422]],
    ['replace /kind', [{ op: 'replace', path: '/kind', value: 'Pod' }], [400, 409, 422]],
    ['remove /kind', [{ op: 'remove', path: '/kind' }], [400, 409, 422]],
    ['remove /spec', [{ op: 'remove', path: '/spec' }], FAIL],
    ['remove /spec/gitRepo', [{ op: 'remove', path: '/spec/gitRepo' }], FAIL],
    ['replace / with a string', [{ op: 'replace', path: '', value: 'x' }], FAIL],
    ['replace / with an array', [{ op: 'replace', path: '', value: [] }], FAIL],
    [
      'a failed test before a remove of labels',
      [
        { op: 'test', path: '/spec/gitRepo', value: 'nope' },
        { op: 'remove', path: '/metadata/labels' },
      ],
      [422],
    ],
    [
      'a remove of labels before a failed test',
      [
        { op: 'add', path: '/metadata/labels', value: {} },
        { op: 'test', path: '/kind', value: 'Pod' },
      ],
      [422],
    ],
    [
      'test of 1 against 1.0',
      [
        { op: 'add', path: '/metadata/labels', value: { z: 'z' } },
        { op: 'test', path: '/apiVersion', value: 1.0 },
      ],
      [422],
    ],
  ] as const) {
    onFixture(`json patch ${label}`, JP, JSON.stringify(ops), expect);
  }
  // 10001 operations: 413 before any is applied (patch.go maxJSONPatchOperations).
  onFixture(
    'json patch of 10001 tests',
    JP,
    JSON.stringify(Array.from({ length: 10_001 }, () => ({ op: 'test', path: '/kind', value: 'Website' }))),
    [413, 422],
  );
  // Copies that double the document: the accumulated copy size limit of evanphx/json-patch.
  const bomb = [{ op: 'add', path: '/spec/x', value: 'x'.repeat(64 * 1024) }];
  for (let k = 0; k < 60; k++) bomb.push({ op: 'copy', from: '/spec', path: `/spec/c${k}` } as never);
  onFixture('json patch copy bomb', JP, JSON.stringify(bomb), [400, 413, 422]);
  // Server-side apply: needs a field manager; YAML syntax errors, aliases, bombs, tags.
  const applyBody = (extra = '') => `apiVersion: ${GV}\nkind: Website\nmetadata:\n  name: NAME\n${extra}`;
  const billion = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let k = 0; k < 8; k++)
    billion.push(
      `${String.fromCharCode(98 + k)}: &${String.fromCharCode(98 + k)} [${Array(9)
        .fill(`*${String.fromCharCode(97 + k)}`)
        .join(',')}]`,
    );
  const applyCases: [string, string, readonly number[], string?][] = [
    ['without a fieldManager', applyBody('spec:\n  replicas: 3\n'), [422], ''],
    ['invalid YAML', 'a: b: c', [400, 422]],
    ['a tab indentation', 'apiVersion: x\n\tkind: y', [400, 422]],
    ['an unclosed quote', 'metadata: "x', [400, 422]],
    ['an unclosed flow sequence', 'spec: [', [400, 422]],
    ['a YAML list', '- a\n- b', [400, 422]],
    ['a YAML scalar', 'hello', [400, 422]],
    ['kind Pod', applyBody('spec:\n  replicas: 3\n').replace('kind: Website', 'kind: Pod'), [400, 409, 422]],
    ['apiVersion v1', applyBody('spec:\n  replicas: 3\n').replace(`apiVersion: ${GV}`, 'apiVersion: v1'), [400, 409, 422]],
    ['no apiVersion', applyBody('spec:\n  replicas: 3\n').replace(`apiVersion: ${GV}\n`, ''), [400, 409, 422]],
    ['another name', applyBody('spec:\n  replicas: 3\n').replace('NAME', 'someone-else'), [400, 409, 422]],
    ['a billion laughs', `${billion.join('\n')}\n${applyBody('spec:\n  x: *i\n')}`, [400, 413, 422]],
    ['an alias to labels of the wrong type', applyBody('  labels: &l [1, 2]\n  annotations: *l\n'), [400, 422]],
    ['a merge key into metadata with a wrong type', applyBody('  <<: {labels: true}\n'), [400, 422]],
    ['an undefined alias', applyBody('spec: *nope\n'), [400, 422]],
    ['a recursive alias', applyBody('spec: &r\n  x: *r\n'), [400, 422]],
    ['a !!js/function tag', applyBody('spec: !!js/function "function(){}"\n'), [400, 422]],
    ['10000 nested flow sequences', applyBody(`spec:\n  x: ${'['.repeat(10_001)}${']'.repeat(10_001)}\n`), [400, 413, 422]],
    [
      '10000 nested block mappings in labels',
      applyBody(`  labels:\n${Array.from({ length: 2000 }, (_, d) => `${' '.repeat(4 + 2 * d)}k${d}:`).join('\n')} x\n`),
      [400, 413, 422],
    ],
    ['managedFields set', applyBody('  managedFields: [{manager: x, operation: Apply}]\n'), [400, 422]],
    ['two documents, the second wrongly typed', `${applyBody()}---\nmetadata: true\n`, [400, 422, 200]],
    ['JSON with labels true', `{"apiVersion":"${GV}","kind":"Website","metadata":{"name":"NAME","labels":true}}`, [400, 422]],
    // A known difference: status in an apply to the main resource is dropped before it is typed (kube refuses its
    // wrong type); the object is left as it was either way.
    ['status on the main resource, wrongly typed, with Strict', applyBody('status: {replicas: x}\n'), [200, 400, 422], '&fieldValidation=Strict'],
    ['an unknown field with Strict', applyBody('spec: {nope: 1}\n'), [400, 422], '&fieldValidation=Strict'],
    ['a duplicate key with Strict', applyBody('spec: {replicas: 1, replicas: 2}\n'), [400, 422], '&fieldValidation=Strict'],
    ['force=x with a bad body', 'a: b: c', [400, 422], '&force=x'],
  ];
  for (const [label, body, expect0, query] of applyCases) {
    const f = next();
    // A conflict with the fields' owner may come first (409), which changes nothing either.
    const expect = query === '' ? expect0 : [...new Set([...expect0, 409])];
    const q = query === '' ? '' : `?fieldManager=hostile${query ?? ''}`;
    // "two documents": kube decodes the first document only, which is a no-op apply by a new manager: a fixture must
    // not get that entry, so it runs against the scratch object made for it.
    if (label.startsWith('two documents')) continue;
    cases.push({
      cls,
      name: `apply ${label} on ${f.name}`,
      steps: [{ method: 'PATCH', path: `${obj(f.ns, f.name)}${q}`, headers: APPLY, body: body.replace('NAME', f.name), expect }],
    });
  }
  // Patch media types: strategic merge is 415 for a custom resource; unknown ones too.
  for (const ct of [
    'application/strategic-merge-patch+json',
    'application/json',
    'text/plain',
    'application/yaml',
    'application/apply-patch+json',
    'application/apply-patch+cbor',
    'application/merge-patch+yaml',
    'application/json-patch+yaml',
    'application/x-www-form-urlencoded',
    'application/vnd.kubernetes.protobuf',
    '*/*',
    'merge-patch',
    'application/merge-patch+json+json',
  ]) {
    onFixture(`patch with Content-Type ${ct}`, { 'content-type': ct }, '{"spec":{"replicas":3}}', [400, 415]);
  }
  onFixture('patch without a Content-Type', {}, '{"spec":{"replicas":3}}', [400, 415]);
  // Valid patches, on scratch objects: kube answers 200 and the object stays decodable.
  const lifecycle = (
    label: string,
    body: string,
    headers: Record<string, string>,
    expect: readonly number[],
    check?: (a: Answer) => string | undefined,
    query = '',
  ) => {
    const name = uniq('p');
    body = body.replace('NAME', name);
    cases.push({
      cls,
      name: `${label} (scratch)`,
      steps: [
        { method: 'POST', path: list(SCRATCH), headers: J, body: sampleCreate(name), expect: [201] },
        { method: 'PATCH', path: `${obj(SCRATCH, name)}${query}`, headers, body, expect, check },
      ],
    });
  };
  const same = (field: string) => (a: Answer) => {
    const o = JSON.parse(a.text) as any;
    return o.metadata?.[field] === '2000-01-01T00:00:00Z' || o.metadata?.[field] === 99 ? `metadata.${field} was changed by a patch` : undefined;
  };
  lifecycle('merge patch {}', '{}', MERGE, [200]);
  lifecycle('merge patch {"metadata":{}}', '{"metadata":{}}', MERGE, [200]);
  lifecycle('merge patch removing labels', '{"metadata":{"labels":null}}', MERGE, [200]);
  lifecycle('merge patch with labels {"a":null} removes a', '{"metadata":{"labels":{"app":null}}}', MERGE, [200]);
  lifecycle('json patch []', '[]', JP, [200]);
  lifecycle(
    'json patch test of a missing member against null',
    '[{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["example.com/f"]}]',
    JP,
    [200],
  );
  lifecycle(
    'json patch replace of creationTimestamp (ignored)',
    '[{"op":"replace","path":"/metadata/creationTimestamp","value":"2000-01-01T00:00:00Z"}]',
    JP,
    [200],
    same('creationTimestamp'),
  );
  lifecycle('json patch replace of generation (ignored)', '[{"op":"replace","path":"/metadata/generation","value":99}]', JP, [200], same('generation'));
  lifecycle('json patch with an unknown member in an operation', '[{"op":"add","path":"/spec/replicas","value":3,"extra":1}]', JP, [200]);
  lifecycle(
    'apply of two YAML documents',
    `${applyBody(`spec:\n  gitRepo: ${GIT}\n`)}---\nmetadata: true\n`,
    APPLY,
    [200, 400, 422],
    undefined,
    '?fieldManager=hostile',
  );
  lifecycle(
    'apply with an alias of a valid value',
    applyBody(`  labels: &l {a: b}\n  annotations: *l\nspec:\n  gitRepo: ${GIT}\n`),
    APPLY,
    [200],
    undefined,
    '?fieldManager=hostile',
  );
  // kube decodes the tag's value (!!binary is base64) or ignores an unknown tag: either answer, on a scratch object.
  lifecycle(
    'apply with a !!binary label value',
    applyBody(`  labels: {a: !!binary aGVsbG8=}\nspec:\n  gitRepo: ${GIT}\n`),
    APPLY,
    [200, 400, 422],
    undefined,
    '?fieldManager=hostile',
  );
  lifecycle(
    'apply with a !!python/object tag',
    applyBody(`spec: !!python/object:os.system {gitRepo: ${GIT}}\n`),
    APPLY,
    [200, 400, 422],
    undefined,
    '?fieldManager=hostile',
  );
  lifecycle('merge patch with Content-Type parameters', '{"spec":{"replicas":4}}', { 'content-type': 'application/merge-patch+json; charset=utf-8' }, [200]);
  return cases;
}

// ---------------------------------------------------------------------------------------------------------------
// Query parameters

/** What the ParameterCodec makes of a value (k8s.io/apimachinery/pkg/runtime/conversion.go). */
const isGoInt = (v: string) => /^[+-]?\d+$/.test(v) && BigInt(v) < 2n ** 63n && BigInt(v) >= -(2n ** 63n);
const GARBAGE = [
  '',
  'x',
  '-1',
  '0',
  '1',
  '+1',
  '1.5',
  '1e3',
  '99999999999999999999',
  'true',
  'false',
  'TRUE',
  ' ',
  'ü',
  '日本',
  '🙂',
  '\u0000',
  '%',
  'a=b',
  'a,b',
  'x'.repeat(2000),
  '0x10',
  '\ufffd',
  '-0',
];

function listParamExpect(param: string, v: string): readonly number[] | undefined {
  switch (param) {
    case 'limit':
      return isGoInt(v) ? (v.startsWith('-') ? [200, 422] : [200]) : [400];
    case 'timeoutSeconds':
      return isGoInt(v) ? [200] : [400];
    case 'resourceVersion':
      if (v === '' || v === '0') return [200];
      if (/^\d+$/.test(v) && BigInt(v) < 50n) return [200];
      return /^\d+$/.test(v) && BigInt(v) < 2n ** 64n ? undefined : [400];
    case 'resourceVersionMatch':
      return v === '' ? [200] : [422];
    case 'continue':
      return v === '' ? [200] : [400, 410, 422];
    case 'sendInitialEvents':
      return [422];
    case 'timeout':
      // The request's `timeout` is a Go duration (time.ParseDuration): "0" and "-0" are, "1" has no unit.
      return v === '' || /^[+-]?0$/.test(v) || /^[+-]?(\d+(\.\d*)?(ns|us|µs|ms|s|m|h))+$/.test(v) ? [200] : [400];
    case 'labelSelector':
      return undefined;
    case 'fieldSelector':
      return undefined;
    default:
      return [200];
  }
}

const SELECTORS: [string, readonly number[], readonly number[]][] = [
  // [selector, as labelSelector, as fieldSelector]
  ['', [200], [200]],
  ['app', [200], [400]],
  ['app=web', [200], [400]],
  ['metadata.name=fx-plain', [400, 200], [200]],
  ['metadata.namespace!=x', [400, 200], [200]],
  ['metadata.name==a,metadata.namespace=b', [400, 200], [200]],
  ['spec.gitRepo=x', [400, 200], [400]],
  ['!app', [200], [400]],
  ['app in (a,b)', [200], [400]],
  ['app notin (a)', [200], [400]],
  ['app in (', [400], [400]],
  ['app in a', [400], [400]],
  ['=', [400], [200]],
  ['==', [400], [200]],
  ['!', [400], [400]],
  ['!!app', [400], [400]],
  ['app=', [200], [400]],
  ['=web', [400], [400]],
  ['ü=1', [400], [400]],
  ['app=ü', [400], [400]],
  ['app=🙂', [400], [400]],
  ['a b', [400], [400]],
  ['app,', [400], [400]],
  [',', [400], [200]],
  ['app>1', [200], [400]],
  ['app<x', [400], [400]],
  [`${'a'.repeat(300)}=b`, [400], [400]],
  [`app=${'b'.repeat(64)}`, [400], [400]],
  ['metadata.name=\\', [400, 200], [200, 400]],
  ['metadata.name=a\\,b', [400, 200], [200, 400]],
  // kube's label lexer takes a NUL as an empty selector (200); refusing it is as good.
  ['\u0000', [200, 400], [400]],
];

function queries(fixtures: Fixture[]): HostileCase[] {
  const cls = 'query';
  const cases: HostileCase[] = [];
  const fx = fixtures[0] as Fixture;
  const q = (s: string) => encodeURIComponent(s);
  const listParams = [
    'limit',
    'timeoutSeconds',
    'resourceVersion',
    'resourceVersionMatch',
    'continue',
    'sendInitialEvents',
    'allowWatchBookmarks',
    'pretty',
    'fieldValidation',
    'dryRun',
    'fieldManager',
    'force',
    'gracePeriodSeconds',
    'propagationPolicy',
    'orphanDependents',
    'timeout',
    'includeObject',
    'nope',
    'LIMIT',
    'Limit',
  ];
  for (const param of listParams) {
    for (const v of GARBAGE) {
      const expect = listParamExpect(param, v);
      if (!expect) continue;
      cases.push({ cls, name: `list ?${param}=${JSON.stringify(v.slice(0, 20))}`, steps: [{ method: 'GET', path: `${list(FX)}?${param}=${q(v)}`, expect }] });
      // Repeated: the first value wins.
      cases.push({
        cls,
        name: `list ?${param}=${JSON.stringify(v.slice(0, 20))}&${param}=0`,
        steps: [{ method: 'GET', path: `${list(FX)}?${param}=${q(v)}&${param}=0`, expect }],
      });
    }
    cases.push({
      cls,
      name: `list ?${param} with no value`,
      steps: [{ method: 'GET', path: `${list(FX)}?${param}`, expect: listParamExpect(param, '') ?? [200, 400] }],
    });
  }
  for (const [sel, asLabel, asField] of SELECTORS) {
    cases.push({
      cls,
      name: `list ?labelSelector=${JSON.stringify(sel.slice(0, 30))}`,
      steps: [{ method: 'GET', path: `${list(FX)}?labelSelector=${q(sel)}`, expect: asLabel }],
    });
    cases.push({
      cls,
      name: `list ?fieldSelector=${JSON.stringify(sel.slice(0, 30))}`,
      steps: [{ method: 'GET', path: `${list(FX)}?fieldSelector=${q(sel)}`, expect: asField }],
    });
    cases.push({
      cls,
      name: `list all namespaces ?labelSelector=${JSON.stringify(sel.slice(0, 30))}`,
      steps: [{ method: 'GET', path: `${API}/websites?labelSelector=${q(sel)}`, expect: asLabel }],
    });
    if (!asLabel.includes(200)) {
      cases.push({
        cls,
        name: `deletecollection ?labelSelector=${JSON.stringify(sel.slice(0, 30))}`,
        steps: [{ method: 'DELETE', path: `${list(FX)}?labelSelector=${q(sel)}`, expect: asLabel }],
      });
    }
    if (!asField.includes(200)) {
      cases.push({
        cls,
        name: `deletecollection ?fieldSelector=${JSON.stringify(sel.slice(0, 30))}`,
        steps: [{ method: 'DELETE', path: `${list(FX)}?fieldSelector=${q(sel)}`, expect: asField }],
      });
    }
  }
  // Query strings Go's url.ParseQuery drops whole (a bad escape, a semicolon): the request is as if they were absent.
  for (const raw of [
    '%zz=1',
    'limit=%zz',
    'labelSelector=a%3',
    'limit=1;x',
    ';',
    '&&&',
    '=',
    '==',
    '&=&',
    'limit',
    '%00=%00',
    '%C3%BC=1',
    'a=%C3%28',
    '%',
    'x=%',
    '+=+',
  ]) {
    cases.push({ cls, name: `list ?${raw}`, steps: [{ method: 'GET', path: `${list(FX)}?${raw}`, expect: raw === 'limit' ? [400] : [200] }] });
  }
  cases.push({
    cls,
    name: 'list with 10001 parameters (Go drops them all)',
    steps: [{ method: 'GET', path: `${list(FX)}?${Array.from({ length: 10_001 }, (_, k) => `p${k}=1`).join('&')}&limit=x`, expect: [200, 414, 431] }],
  });
  cases.push({
    cls,
    name: 'list with a 100 KiB query',
    steps: [{ method: 'GET', path: `${list(FX)}?pretty=${'x'.repeat(100 * 1024)}`, expect: [200, 414, 431] }],
  });
  cases.push({ cls, name: 'list with raw UTF-8 in the query', steps: [{ method: 'GET', path: `${list(FX)}?labelSelector=ü`, raw: true, expect: [400] }] });
  cases.push({ cls, name: 'list with a raw space in the query', steps: [{ method: 'GET', path: `${list(FX)}?labelSelector=a b`, raw: true, expect: [400] }] });
  // Get: only resourceVersion matters.
  for (const param of ['resourceVersion', 'pretty', 'limit', 'watch', 'labelSelector', 'nope']) {
    for (const v of GARBAGE) {
      let expect: readonly number[] = [200];
      if (param === 'resourceVersion' && !(v === '' || v === '0' || (/^\d+$/.test(v) && BigInt(v) < 50n))) {
        if (/^\d+$/.test(v) && BigInt(v) < 2n ** 64n) continue;
        expect = [400];
      }
      cases.push({
        cls,
        name: `get ?${param}=${JSON.stringify(v.slice(0, 20))}`,
        steps: [{ method: 'GET', path: `${obj(fx.ns, fx.name)}?${param}=${q(v)}`, expect }],
      });
    }
  }
  // Watches (short): any truthy watch value makes one; a bad resourceVersion or option is refused first.
  for (const v of ['', '1', 'true', 'True', 'x', 'ü', '0', 'false', 'FALSE']) {
    const isWatch = !(v === '0' || v.toLowerCase() === 'false');
    cases.push({
      cls,
      name: `list ?watch=${JSON.stringify(v)}`,
      steps: [{ method: 'GET', path: `${list(FX)}?watch=${q(v)}&timeoutSeconds=1`, expect: [200], watch: isWatch, timeoutMs: 20_000 }],
    });
  }
  for (const [label, query, expect] of [
    ['resourceVersion=x', 'resourceVersion=x', [400]],
    ['resourceVersion=-1', 'resourceVersion=-1', [400]],
    ['timeoutSeconds=x', 'timeoutSeconds=x', [400]],
    ['resourceVersionMatch=Exact', 'resourceVersionMatch=Exact&timeoutSeconds=1', [422]],
    ['sendInitialEvents=true without resourceVersionMatch', 'sendInitialEvents=true&timeoutSeconds=1', [422]],
    ['sendInitialEvents=x, resourceVersionMatch=x', 'sendInitialEvents=x&resourceVersionMatch=x&timeoutSeconds=1', [422]],
    ['fieldSelector=spec.x=1', 'fieldSelector=spec.x%3D1&timeoutSeconds=1', [400]],
    ['labelSelector=a in (', 'labelSelector=a%20in%20(&timeoutSeconds=1', [400]],
    ['continue=x', 'continue=x&timeoutSeconds=1', [200, 400, 410, 422]],
  ] as const) {
    cases.push({
      cls,
      name: `watch with ${label}`,
      steps: [{ method: 'GET', path: `${list(FX)}?watch=true&${query}`, expect, watch: true, timeoutMs: 20_000 }],
    });
  }
  // Write options on create: valid ones create (scratch), invalid ones are refused (fixture namespace).
  const createParams: [string, string, boolean][] = [];
  for (const v of ['All', '', 'all', 'x', 'All,All', 'ü']) createParams.push(['dryRun', v, v === 'All']);
  for (const v of ['', 'Strict', 'Warn', 'Ignore', 'strict', 'x', 'ü', 'Strict '])
    createParams.push(['fieldValidation', v, ['', 'Strict', 'Warn', 'Ignore'].includes(v)]);
  for (const v of ['', 'm', 'ü', '日本', 'm'.repeat(128), 'm'.repeat(129), 'a\u0001b', 'a\nb', 'a\u007fb', '\u00a0'])
    createParams.push(['fieldManager', v, Buffer.byteLength(v) <= 128 && !/[\u0000-\u001f\u007f\u00a0]/.test(v)]);
  for (const v of GARBAGE.slice(0, 12)) {
    for (const p of ['pretty', 'force', 'gracePeriodSeconds', 'propagationPolicy', 'limit', 'nope']) createParams.push([p, v, true]);
  }
  for (const [p, v, ok] of createParams) {
    const name = uniq();
    cases.push({
      cls,
      name: `create ?${p}=${JSON.stringify(v.slice(0, 20))}`,
      steps: [{ method: 'POST', path: `${list(ok ? SCRATCH : FX)}?${p}=${q(v)}`, headers: J, body: sampleCreate(name), expect: ok ? [201] : [422] }],
    });
  }
  // ValidateDryRun checks a set: All twice is a dry run (nothing stored, so the fixture namespace stays as it was).
  cases.push({
    cls,
    name: 'create ?dryRun=All&dryRun=All',
    steps: [{ method: 'POST', path: `${list(FX)}?dryRun=All&dryRun=All`, headers: J, body: sampleCreate(uniq()), expect: [201] }],
  });
  cases.push({
    cls,
    name: 'create ?dryRun=x&dryRun=All',
    steps: [{ method: 'POST', path: `${list(FX)}?dryRun=x&dryRun=All`, headers: J, body: sampleCreate(uniq()), expect: [422] }],
  });
  cases.push({
    cls,
    name: 'create ?fieldValidation=x&fieldValidation=Strict',
    steps: [{ method: 'POST', path: `${list(FX)}?fieldValidation=x&fieldValidation=Strict`, headers: J, body: sampleCreate(uniq()), expect: [422] }],
  });
  cases.push({
    cls,
    name: 'create ?dryRun=All in the fixture namespace stores nothing',
    steps: [{ method: 'POST', path: `${list(FX)}?dryRun=All`, headers: J, body: sampleCreate(uniq()), expect: [201] }],
  });
  // Delete options from the query, on fixtures: each is refused before anything is deleted.
  const deleteQueries: [string, readonly number[]][] = [];
  for (const v of GARBAGE) if (!isGoInt(v)) deleteQueries.push([`gracePeriodSeconds=${q(v)}`, [400]]);
  for (const v of ['', 'x', 'background', 'FOREGROUND', 'ü', 'Orphan ', 'Background,Orphan']) deleteQueries.push([`propagationPolicy=${q(v)}`, [422]]);
  for (const v of ['', 'x', 'all', 'All,All']) deleteQueries.push([`dryRun=${q(v)}`, [422]]);
  deleteQueries.push(['dryRun=All&dryRun=All', [200]]);
  for (const v of ['true', 'x', 'false', '']) deleteQueries.push([`orphanDependents=${q(v)}&propagationPolicy=Background`, [422]]);
  deleteQueries.push(['propagationPolicy=x&propagationPolicy=Background', [422]]);
  deleteQueries.push(['gracePeriodSeconds=x&gracePeriodSeconds=0', [400]]);
  for (const [i, [query, expect]] of deleteQueries.entries()) {
    const f = fixtures[i % fixtures.length] as Fixture;
    cases.push({ cls, name: `delete ${f.name} ?${query}`, steps: [{ method: 'DELETE', path: `${obj(f.ns, f.name)}?${query}`, expect }] });
    cases.push({
      cls,
      name: `deletecollection ?${query}`,
      steps: [
        { method: 'DELETE', path: `${list(FX)}?${query}`, expect: expect.includes(200) ? [200] : [...expect, ...(expect.includes(400) ? [422] : [400])] },
      ],
    });
  }
  for (const [query, expect] of [
    ['limit=x', [400]],
    ['limit=', [400]],
    ['continue=x', [400, 410, 422]],
    // A well-formed token of kube's own shape at revision 1: kube lists (and deletes) nothing from there.
    ['continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0', [200, 400, 410, 422]],
    ['continue=%C3%BC', [400, 410, 422]],
    ['resourceVersionMatch=x', [422]],
    ['resourceVersionMatch=Exact', [422]],
    ['resourceVersion=x', [400]],
    ['timeoutSeconds=x', [400]],
  ] as const) {
    cases.push({ cls, name: `deletecollection ?${query}`, steps: [{ method: 'DELETE', path: `${list(FX)}?${query}`, expect }] });
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------------------------
// Headers

function headerCases(fixtures: Fixture[]): HostileCase[] {
  const cls = 'headers';
  const cases: HostileCase[] = [];
  const fx = fixtures[0] as Fixture;
  const create = (ct: string | undefined, ok: readonly number[], label = `create with Content-Type ${JSON.stringify(ct)}`, raw = false) => {
    const name = uniq();
    const headers: Record<string, string> = ct === undefined ? {} : { 'content-type': ct };
    const ns = ok.includes(201) ? SCRATCH : FX;
    cases.push({ cls, name: label, steps: [{ method: 'POST', path: list(ns), headers, body: sampleCreate(name), expect: ok, raw }] });
  };
  for (const ct of [
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/json;charset=UTF-8',
    'application/json ',
    'application/yaml',
  ])
    create(ct, [201]);
  create(undefined, [201], 'create without a Content-Type');
  for (const ct of [
    'application/x-yaml',
    'application/json; charset=latin1',
    '*/*',
    'application/*',
    'application/json; foo=bar',
    'application/json;v=v1',
    'application/json; charset=utf-16',
  ])
    create(ct, [201, 415]);
  for (const ct of [
    'text/plain',
    'application/xml',
    'application/vnd.kubernetes.protobuf',
    'application/cbor',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/merge-patch+json',
    'application/json-patch+json',
    'application/strategic-merge-patch+json',
    'text/json',
    'application/jsonx',
    'image/png',
  ])
    create(ct, [400, 415]);
  for (const ct of [
    ';',
    'application/json;;',
    'application/json; charset',
    '/',
    'json',
    '"application/json"',
    'application/json, text/plain',
    'a'.repeat(10_000),
    'application/json; charset="',
    'application/json;a=1;a=2',
    '\u00e9',
  ]) {
    create(ct, [400, 415]);
  }
  create('application/jsön', [400, 415], 'create with a non-Latin-1 Content-Type', true);
  create('application/json; charset=ü', [201, 400, 415], 'create with a non-Latin-1 charset parameter', true);
  // Accept on a list.
  const accept = (a: string | undefined, expect: readonly number[], raw = false) =>
    cases.push({
      cls,
      name: `list with Accept ${JSON.stringify(a?.slice(0, 80))}`,
      steps: [{ method: 'GET', path: list(FX), headers: a === undefined ? {} : { accept: a }, expect, raw }],
    });
  for (const a of [
    undefined,
    'application/json',
    '*/*',
    'application/*',
    'application/json, */*',
    '',
    'application/json;q=0.9',
    'text/html, application/json',
    'application/json;as=Table;g=meta.k8s.io;v=v1',
    'application/json;as=Table;v=v1beta1;g=meta.k8s.io',
    'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1',
    'application/vnd.kubernetes.protobuf, application/json',
    'application/json;as=Bogus, application/json',
    'application/json;as=Table;g=meta.k8s.io;v=v1;includeObject=Object',
  ])
    accept(a, [200]);
  for (const a of [
    'application/yaml',
    'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
    'application/json;pretty=1',
    'application/json;g=meta.k8s.io;v=v1',
    'application/json;stream=watch',
    'application/json; charset=utf-8',
    'application/json;profile=x',
  ])
    accept(a, [200, 406]);
  for (const a of [
    'application/vnd.kubernetes.protobuf',
    'text/html',
    'application/xml',
    'application/json;as=Table;g=meta.k8s.io;v=v9',
    'application/json;as=Bogus;g=meta.k8s.io;v=v1',
    'application/json;as=Table',
    'application/cbor',
    'image/png',
    'application/json;as=Table;g=other.io;v=v1',
  ])
    accept(a, [406]);
  for (const a of [
    ';;;',
    ',',
    'a/b/c',
    'application/json;as=Table;g=meta.k8s.io;v=v1;as=Table',
    '"application/json"',
    'x'.repeat(10_000),
    'application/json;=',
    'application/',
  ])
    accept(a, [200, 400, 406]);
  accept('application/jsön', [200, 400, 406], true);
  // Sizes and counts of headers (Go's limit is 1 MiB of header; Node's default 16 KiB: 431).
  const getWith = (label: string, headers: Record<string, string>, expect: readonly number[], raw = false) =>
    cases.push({ cls, name: label, steps: [{ method: 'GET', path: obj(fx.ns, fx.name), headers, expect, raw }] });
  getWith('an 8 KiB header', { 'x-big': 'x'.repeat(8 * 1024) }, [200]);
  for (const k of [20, 100, 500]) getWith(`a ${k} KiB header`, { 'x-big': 'x'.repeat(k * 1024) }, [200, 431]);
  getWith('a 2 MiB header', { 'x-big': 'x'.repeat(2 * MiB) }, [431]);
  getWith('a 20 KiB header name', { [`x-${'n'.repeat(20 * 1024)}`]: '1' }, [200, 431]);
  getWith('200 headers', Object.fromEntries(Array.from({ length: 200 }, (_, k) => [`x-h${k}`, 'v'])), [200]);
  getWith('3000 headers', Object.fromEntries(Array.from({ length: 3000 }, (_, k) => [`x-h${k}`, 'v'])), [200, 400, 431]);
  getWith('a 100 KiB Accept', { accept: `application/json;${'p=1;'.repeat(20 * 1024)}` }, [200, 400, 406, 431]);
  getWith('a 100 KiB Authorization', { authorization: `Bearer ${'t'.repeat(100 * 1024)}` }, [200, 401, 431]);
  // Bytes outside Latin-1 (UTF-8 on the wire) and control characters.
  getWith('a UTF-8 header value', { 'x-name': 'ünïcødé ✓' }, [200], true);
  getWith('an emoji header value', { 'x-name': '🙂' }, [200], true);
  getWith('a UTF-8 User-Agent', { 'user-agent': 'klient/ü 🙂' }, [200], true);
  getWith('a UTF-8 Accept', { accept: 'application/json;x=ü' }, [200, 400, 406], true);
  getWith('a UTF-8 header name', { 'x-ñame': '1' }, [400], true);
  getWith('a header name with a space', { 'x name': '1' }, [400], true);
  getWith('a NUL in a header value', { 'x-a': 'a\u0000b' }, [400], true);
  getWith('a DEL in a header name', { 'x-\u007f': '1' }, [400], true);
  getWith('a UTF-8 Impersonate-User', { 'impersonate-user': 'ünï' }, [200, 400, 403, 404], true);
  getWith('a UTF-8 Impersonate-Group without a user', { 'impersonate-group': 'ünï' }, [400, 403], true);
  // Creates whose unknown fields have non-Latin-1 names: the Warning header must be encoded, not thrown.
  for (const [label, body] of [
    ['an unknown spec field named in UTF-8', () => JSON.stringify(websiteText(uniq(), {}, { 'ünïcødé✓': 1 }))],
    ['an unknown metadata field named in UTF-8', () => JSON.stringify(websiteText(uniq(), { ñame: 1 }))],
    ['an unknown top-level field named with an emoji', () => JSON.stringify({ ...websiteText(uniq()), '🙂': 1 })],
    ['an unknown field named with a newline and quotes', () => JSON.stringify(websiteText(uniq(), {}, { 'a\n"b"\r\n': 1 })), false],
    ['an unknown field with a 10 KiB name', () => JSON.stringify(websiteText(uniq(), {}, { ['n'.repeat(10 * 1024)]: 1 }))],
    ['2000 unknown fields', () => JSON.stringify(websiteText(uniq(), {}, Object.fromEntries(Array.from({ length: 2000 }, (_, k) => [`u${k}`, k]))))],
  ] as [string, () => string, boolean?][]) {
    // (kube leaves out a warning whose text holds control characters.)
    const check = (a: Answer) => (a.headers.warning || label.includes('newline') ? undefined : 'no Warning header for the unknown field');
    cases.push({ cls, name: `create with ${label}`, steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: body(), expect: [201], check }] });
    cases.push({
      cls,
      name: `create with ${label} (Strict)`,
      steps: [{ method: 'POST', path: `${list(FX)}?fieldValidation=Strict`, headers: J, body: body(), expect: [400] }],
    });
  }
  // Framing that Go and Node refuse (request smuggling shapes) and odd request lines, as raw bytes.
  const host = 'Host: 127.0.0.1';
  const rawCase = (label: string, head: string, expect: readonly number[], body = '') =>
    cases.push({ cls, name: label, steps: [{ method: 'RAW', path: '(raw)', raw: true, rawHead: Buffer.from(head, 'utf8'), body, expect }] });
  const p = obj(fx.ns, fx.name);
  // Framing shapes on requests that change nothing whatever the server makes of the body (Go answers a
  // Content-Length beside chunked framing with the chunked body).
  rawCase(
    'Content-Length and Transfer-Encoding both',
    `GET ${p} HTTP/1.1\r\n${host}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`,
    [200, 400],
    '0\r\n\r\n',
  );
  rawCase('a Content-Length of "abc"', `GET ${p} HTTP/1.1\r\n${host}\r\nContent-Length: abc\r\nConnection: close\r\n\r\n`, [400]);
  rawCase('a negative Content-Length', `GET ${p} HTTP/1.1\r\n${host}\r\nContent-Length: -1\r\nConnection: close\r\n\r\n`, [400]);
  rawCase(
    'two different Content-Lengths',
    `POST ${list(FX)} HTTP/1.1\r\n${host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\nConnection: close\r\n\r\n`,
    [400],
    '{}x',
  );
  rawCase('Transfer-Encoding gzip', `POST ${list(FX)} HTTP/1.1\r\n${host}\r\nTransfer-Encoding: gzip\r\nConnection: close\r\n\r\n`, [400]);
  rawCase(
    'a bad chunk size',
    `POST ${list(FX)} HTTP/1.1\r\n${host}\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n`,
    [400],
    'zz\r\n{}\r\n0\r\n\r\n',
  );
  rawCase('HTTP/1.0', `GET ${p} HTTP/1.0\r\n${host}\r\n\r\n`, [200]);
  // (kube-apiserver answers 505 to HTTP/2.0 and 400 to a doubled space; Node's parser reads both as GETs, harmless.)
  rawCase('HTTP/2.0 on an HTTP/1 connection', `GET ${p} HTTP/2.0\r\n${host}\r\nConnection: close\r\n\r\n`, [505]);
  rawCase('HTTP/1.1 without Host', `GET ${p} HTTP/1.1\r\nConnection: close\r\n\r\n`, [200, 400]);
  rawCase('a garbage request line', 'HELLO\r\n\r\n', [400]);
  rawCase('a request line with two spaces', `GET  ${p} HTTP/1.1\r\n${host}\r\nConnection: close\r\n\r\n`, [200, 400]);
  rawCase('LF-only line ends', `GET ${p} HTTP/1.1\n${host}\nConnection: close\n\n`, [200, 400]);
  rawCase('an obsolete folded header', `GET ${p} HTTP/1.1\r\n${host}\r\nX-A: a\r\n b\r\nConnection: close\r\n\r\n`, [200, 400]);
  rawCase('a header line without a colon', `GET ${p} HTTP/1.1\r\n${host}\r\nnocolon\r\nConnection: close\r\n\r\n`, [400]);
  rawCase('absolute-form request target', `GET https://127.0.0.1${p} HTTP/1.1\r\n${host}\r\nConnection: close\r\n\r\n`, [200, 400]);
  rawCase('asterisk-form with GET', `GET * HTTP/1.1\r\n${host}\r\nConnection: close\r\n\r\n`, [400, 404]);
  rawCase('a target without a leading slash', `GET apis HTTP/1.1\r\n${host}\r\nConnection: close\r\n\r\n`, [400, 404]);
  rawCase('CONNECT to a host', `CONNECT 127.0.0.1:80 HTTP/1.1\r\n${host}\r\nConnection: close\r\n\r\n`, [400, 404, 405]);
  rawCase(
    'Expect: 100-continue then a body',
    `POST ${list(SCRATCH)} HTTP/1.1\r\n${host}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${Buffer.byteLength(sampleCreate('expect-continue'))}\r\nConnection: close\r\n\r\n`,
    [201],
    sampleCreate('expect-continue'),
  );
  rawCase('Expect: something-else', `GET ${p} HTTP/1.1\r\n${host}\r\nExpect: foo\r\nConnection: close\r\n\r\n`, [200, 400, 417]);
  // A keep-alive connection outlives a refused request, or the refusal says Connection: close: the next request on
  // it must be answered (a reset would fail a client's next, innocent request).
  for (const [label, first] of [
    ['a 100 KiB header', { method: 'GET', path: p, headers: { 'x-big': 'x'.repeat(100 * 1024) }, expect: [200, 431], keepConnection: true }],
    ['a bad escape in the path', { method: 'GET', path: obj(FX, 'x%zz'), expect: [400] }],
    ['an unknown method', { method: 'FOO', path: p, expect: [400, 405] }],
    ['a 4 MiB body', { method: 'POST', path: list(FX), headers: J, body: `{"x":"${'x'.repeat(4 * MiB)}"}`, expect: [413] }],
    ['a body that is not JSON', { method: 'POST', path: list(FX), headers: J, body: '{', expect: [400] }],
    ['a 100 KiB path', { method: 'GET', path: `/apis/${'a'.repeat(100 * 1024)}`, expect: [404, 414, 431], keepConnection: true }],
  ] as [string, Step][]) {
    cases.push({
      cls,
      name: `the connection after ${label}`,
      ownConnection: true,
      steps: [first, { method: 'GET', path: p, expect: [200] }, { method: 'GET', path: p, expect: [200] }],
    });
  }
  cases.push({
    cls,
    name: 'create with a gzip body',
    steps: [
      {
        method: 'POST',
        path: list(FX),
        headers: { ...J, 'content-encoding': 'gzip' },
        body: Buffer.from('1f8b0800000000000003abae0500', 'hex'),
        expect: [400, 415],
      },
    ],
  });
  return cases;
}

// ---------------------------------------------------------------------------------------------------------------
// Sizes

function sizeCases(fixtures: Fixture[]): HostileCase[] {
  const cls = 'sizes';
  const cases: HostileCase[] = [];
  const fx = fixtures[0] as Fixture;
  const p = obj(fx.ns, fx.name);
  const limit = 3 * MiB;
  // A create of exactly n bytes, padded in an unknown field that is pruned.
  const sized = (n: number, name = uniq()) => {
    const base = JSON.stringify(websiteText(name, {}, { x: '' }));
    return base.replace('"x":""', `"x":"${'p'.repeat(n - base.length)}"`);
  };
  for (const n of [limit - 1024, limit - 1, limit]) {
    cases.push({
      cls,
      name: `create of ${n} bytes`,
      steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: sized(n), expect: [201], timeoutMs: 30_000 }],
    });
  }
  for (const n of [limit + 1, limit + 64 * 1024, 4 * MiB, 8 * MiB, 16 * MiB]) {
    cases.push({
      cls,
      name: `create of ${n} bytes`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: sized(n), expect: [413], timeoutMs: 30_000 }],
    });
  }
  for (const n of [limit + 1, 8 * MiB]) {
    cases.push({
      cls,
      name: `chunked create of ${n} bytes`,
      steps: [{ method: 'POST', path: list(FX), headers: J, body: sized(n), chunked: true, expect: [413], timeoutMs: 30_000 }],
    });
  }
  cases.push({
    cls,
    name: `chunked create of ${limit - 1024} bytes`,
    steps: [{ method: 'POST', path: list(SCRATCH), headers: J, body: sized(limit - 1024), chunked: true, expect: [201], timeoutMs: 30_000 }],
  });
  const big = 'x'.repeat(4 * MiB);
  for (const [label, method, path, headers, body] of [
    ['update', 'PUT', p, J, JSON.stringify({ ...fx.object, spec: { ...fx.object.spec, x: big } })],
    ['merge patch', 'PATCH', p, MERGE, JSON.stringify({ spec: { x: big } })],
    ['json patch', 'PATCH', p, JP, JSON.stringify([{ op: 'add', path: '/spec/x', value: big }])],
    ['apply', 'PATCH', `${p}?fieldManager=hostile`, APPLY, `apiVersion: ${GV}\nkind: Website\nmetadata:\n  name: ${fx.name}\nspec:\n  x: ${big}\n`],
    ['delete body', 'DELETE', p, J, JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', x: big })],
    ['deletecollection body', 'DELETE', list(FX), J, JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', x: big })],
    ['status update', 'PUT', `${p}/status`, J, JSON.stringify({ ...fx.object, status: { x: big } })],
    [
      'scale update',
      'PUT',
      `${p}/scale`,
      J,
      JSON.stringify({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: fx.name, annotations: { x: big } }, spec: { replicas: 1 } }),
    ],
    ['strategic merge patch', 'PATCH', p, { 'content-type': 'application/strategic-merge-patch+json' }, JSON.stringify({ spec: { x: big } })],
    ['text/plain create', 'POST', list(FX), { 'content-type': 'text/plain' }, big],
  ] as const) {
    cases.push({
      cls,
      name: `${label} of 4 MiB`,
      steps: [{ method, path, headers, body, expect: label.includes('strategic') || label.includes('text/plain') ? [413, 415] : [413], timeoutMs: 30_000 }],
    });
  }
  // Many small members: within the limits kube creates them.
  cases.push({
    cls,
    name: '10000 labels',
    steps: [
      {
        method: 'POST',
        path: list(SCRATCH),
        headers: J,
        body: JSON.stringify(websiteText(uniq(), { labels: Object.fromEntries(Array.from({ length: 10_000 }, (_, k) => [`l${k}`, 'v'])) })),
        expect: [201],
      },
    ],
  });
  cases.push({
    cls,
    name: '2000 finalizers',
    steps: [
      {
        method: 'POST',
        path: list(SCRATCH),
        headers: J,
        body: JSON.stringify(websiteText(uniq(), { finalizers: Array.from({ length: 2000 }, (_, k) => `example.com/f${k}`) })),
        expect: [201],
      },
    ],
  });
  cases.push({
    cls,
    name: '1000 ownerReferences',
    steps: [
      {
        method: 'POST',
        path: list(SCRATCH),
        headers: J,
        body: JSON.stringify(
          websiteText(uniq(), { ownerReferences: Array.from({ length: 1000 }, (_, k) => ({ ...OWNER_REF, name: `o${k}`, uid: `u-${k}` })) }),
        ),
        expect: [201],
      },
    ],
  });
  cases.push({
    cls,
    name: '100000 labels (2 MiB)',
    steps: [
      {
        method: 'POST',
        path: list(FX),
        headers: J,
        body: JSON.stringify(
          websiteText(uniq(), {
            labels: Object.fromEntries(Array.from({ length: 100_000 }, (_, k) => [`l${k}`, 'v'])),
            annotations: { a: 'x'.repeat(300 * 1024) },
          }),
        ),
        expect: [413, 422],
        timeoutMs: 30_000,
      },
    ],
  });
  return cases;
}

// ---------------------------------------------------------------------------------------------------------------
// Methods on every path

type PathKind = 'discovery' | 'health' | 'collection' | 'all' | 'missing' | 'missing-sub' | 'fixture' | 'fixture-sub' | 'unknown' | 'root' | 'core';

function methodCases(fixtures: Fixture[]): HostileCase[] {
  const cls = 'methods';
  const cases: HostileCase[] = [];
  const fx = fixtures[0] as Fixture;
  const paths: [string, PathKind][] = [
    ['/', 'root'],
    ['/apis', 'discovery'],
    ['/apis/extensions.example.com', 'discovery'],
    [API, 'discovery'],
    ['/api', 'discovery'],
    ['/api/v1', 'discovery'],
    ['/version', 'discovery'],
    ['/openapi/v2', 'discovery'],
    ['/openapi/v3', 'discovery'],
    [`/openapi/v3/apis/extensions.example.com/v1alpha1`, 'discovery'],
    ['/livez', 'health'],
    ['/readyz', 'health'],
    ['/healthz', 'health'],
    ['/metrics', 'health'],
    [`${API}/websites`, 'all'],
    [list(FX), 'collection'],
    [obj(FX, 'nonexistent'), 'missing'],
    [`${obj(FX, 'nonexistent')}/status`, 'missing-sub'],
    [`${obj(FX, 'nonexistent')}/scale`, 'missing-sub'],
    [`${obj(FX, 'nonexistent')}/logs`, 'unknown'],
    ['/apis/other.example.com/v1/things', 'unknown'],
    ['/api/v1/pods', 'core'],
    ['/nope', 'unknown'],
    [`${API}/namespaces/${FX}/things`, 'unknown'],
    [obj(fx.ns, fx.name), 'fixture'],
    [`${obj(fx.ns, fx.name)}/status`, 'fixture-sub'],
    [`${obj(fx.ns, fx.name)}/scale`, 'fixture-sub'],
  ];
  const odd = [
    'OPTIONS',
    'TRACE',
    'PROPFIND',
    'PROPPATCH',
    'MKCOL',
    'COPY',
    'MOVE',
    'LOCK',
    'UNLOCK',
    'PURGE',
    'SEARCH',
    'REPORT',
    'LINK',
    'UNLINK',
    'ACL',
    'BIND',
    'REBIND',
    'UNBIND',
    'MERGE',
    'NOTIFY',
    'SUBSCRIBE',
    'UNSUBSCRIBE',
    'M-SEARCH',
    'MKACTIVITY',
    'CHECKOUT',
    'MKCALENDAR',
    'SOURCE',
    'QUERY',
  ];
  const rawOdd = ['FOO', 'get', 'Get', 'GETX', 'G3T', 'DELETEX', 'X'.repeat(1000), 'BREW'];
  const anyMethod = (kind: PathKind) => kind === 'root' || kind === 'discovery' || kind === 'health';
  for (const [path, kind] of paths) {
    for (const m of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const expect = restExpect(m, kind);
      if (!expect) continue;
      const step: Step = { method: m, path, expect };
      if (m === 'POST' || m === 'PUT' || m === 'PATCH') Object.assign(step, { headers: J, body: '' });
      cases.push({ cls, name: `${m} ${path}`, steps: [step] });
    }
    const oddExpect = anyMethod(kind) ? [200, 204, 400, 404, 405] : UNKNOWN_METHOD;
    for (const m of odd)
      cases.push({ cls, name: `${m} ${path}`, steps: [{ method: m, path, expect: m === 'OPTIONS' ? [200, 204, 400, 404, 405] : oddExpect }] });
    for (const m of rawOdd) cases.push({ cls, name: `${m.slice(0, 20)} ${path}`, steps: [{ method: m, path, raw: true, expect: oddExpect }] });
    cases.push({ cls, name: `CONNECT ${path}`, steps: [{ method: 'CONNECT', path, raw: true, expect: oddExpect }] });
  }
  return cases;
}

// An unknown method on a resource path: 405 (or 400 from an HTTP parser that knows no such method, 404 off-route).
const UNKNOWN_METHOD = [400, 404, 405];

function restExpect(m: string, kind: PathKind): readonly number[] | undefined {
  const body = [400, 415, 422];
  switch (kind) {
    // kube-apiserver's discovery, version, OpenAPI and health handlers answer every method as a GET.
    case 'root':
      return m === 'GET' || m === 'HEAD' ? [200, 404] : [200, 404, 405];
    case 'discovery':
      return m === 'GET' ? [200] : [200, 404, 405];
    case 'health':
      return m === 'GET' || m === 'HEAD' ? [200] : [200, 404, 405];
    case 'all':
      // kube-apiserver routes no write on the all-namespaces path (404); a 405 says the same.
      return m === 'GET' || m === 'HEAD' ? [200] : [404, 405];
    case 'collection':
      if (m === 'GET' || m === 'HEAD') return [200];
      if (m === 'POST') return body;
      if (m === 'DELETE') return undefined; // would delete the fixtures: deletecollection is covered with refused options
      // kube: PUT is an update without a name (400 "name must be provided"), PATCH one without a media type (415).
      return [400, 405, 415];
    case 'missing':
      if (m === 'GET' || m === 'HEAD' || m === 'DELETE') return [404];
      // kube takes a POST to a name as a create, whose empty body is a 400.
      if (m === 'POST') return [400, 405];
      return [400, 404, 415, 422];
    case 'missing-sub':
      if (m === 'GET' || m === 'HEAD') return [404];
      if (m === 'POST' || m === 'DELETE') return [404, 405];
      return [400, 404, 415, 422];
    case 'fixture':
      if (m === 'GET' || m === 'HEAD') return [200];
      if (m === 'POST') return [400, 405];
      if (m === 'DELETE') return undefined;
      return body;
    case 'fixture-sub':
      if (m === 'GET' || m === 'HEAD') return [200];
      if (m === 'POST' || m === 'DELETE') return [404, 405];
      return body;
    case 'unknown':
      return [404, 405];
    case 'core':
      // kube-apiserver serves pods itself; standalone, ours serves only namespaces under /api/v1.
      return m === 'GET' ? [200, 404] : [400, 404, 405, 415];
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Paths

function pathCases(fixtures: Fixture[]): HostileCase[] {
  const cls = 'paths';
  const cases: HostileCase[] = [];
  const fx = fixtures[0] as Fixture;
  const add = (name: string, step: Step) => cases.push({ cls, name, steps: [step] });
  // Bad escapes: Go's URL parser refuses them (400); a good escape of an odd name is a missing object (404).
  const badEscapes = ['%zz', '%', '%2', '%g0', 'a%', 'a%zzb', '%%', '%u00e9', 'x%2'];
  const goodEscapes = ['%C3%BC', '%F0%9F%98%80', '%20', '%23', '%3F', '%c3%28', '%ff', '%e2%82', '%41BC', '%7E'];
  // kube-apiserver splits the decoded path, so "websites/%2F" lists (and a DELETE of it deletes the collection);
  // ours may refuse it instead, but must never delete anything for it (see the fixture check).
  const nameSegments = ['%00', 'a%2Fb', '%5C', '%25', 'a%25b', '%2e', '%2E%2E'];
  add('GET name %2F', { method: 'GET', path: obj(FX, '%2F'), expect: [200, 400, 404] });
  for (const e of badEscapes) {
    for (const m of ['GET', 'DELETE', 'PUT', 'PATCH']) {
      const step: Step = { method: m, path: obj(FX, `x${e}`), expect: [400] };
      if (m === 'PUT') Object.assign(step, { headers: J, body: sampleCreate('x') });
      if (m === 'PATCH') Object.assign(step, { headers: MERGE, body: '{}' });
      add(`${m} name with ${e}`, step);
    }
    add(`GET namespace with ${e}`, { method: 'GET', path: list(`ns${e}`), expect: [400] });
    add(`GET query key with ${e} (dropped)`, { method: 'GET', path: `${list(FX)}?a${e}=1`, expect: [200] });
  }
  for (const e of goodEscapes) {
    add(`GET name ${e}`, { method: 'GET', path: obj(FX, `x${e}`), expect: [404] });
    add(`DELETE name ${e}`, { method: 'DELETE', path: obj(FX, `x${e}`), expect: [404] });
    add(`PATCH name ${e}`, { method: 'PATCH', path: obj(FX, `x${e}`), headers: MERGE, body: '{}', expect: [404] });
    add(`create in namespace ${e}`, { method: 'POST', path: list(`n${e}`), headers: J, body: sampleCreate(uniq()), expect: [400, 404, 422] });
  }
  for (const e of nameSegments) {
    add(`GET name ${e}`, { method: 'GET', path: obj(FX, e), expect: [400, 404] });
    add(`DELETE name ${e}`, { method: 'DELETE', path: obj(FX, e), expect: [400, 404] });
  }
  // Names of every length: up to 253 a Website can be named; longer ones are missing objects (or a 414/431 for
  // a request line too long to read).
  for (const n of [63, 64, 100, 101, 200, 252, 253, 254, 300, 1000, 4000]) {
    const name = 'a'.repeat(n);
    add(`GET a name of ${n}`, { method: 'GET', path: obj(FX, name), expect: [404] });
    add(`DELETE a name of ${n}`, { method: 'DELETE', path: obj(FX, name), expect: [404] });
    add(`PATCH a name of ${n}`, { method: 'PATCH', path: obj(FX, name), headers: MERGE, body: '{}', expect: [404] });
    add(`GET /status of a name of ${n}`, { method: 'GET', path: `${obj(FX, name)}/status`, expect: [404] });
    add(`PUT a name of ${n}`, {
      method: 'PUT',
      path: obj(FX, name),
      headers: J,
      body: JSON.stringify({ ...websiteText(name), metadata: { name, resourceVersion: '1' } }),
      expect: n > 253 ? [400, 404, 422] : [404],
    });
  }
  for (const n of [8000, 16_000, 70_000, 300_000]) {
    add(`GET a name of ${n}`, { method: 'GET', path: obj(FX, 'a'.repeat(n)), expect: [404, 414, 431] });
    add(`DELETE a name of ${n}`, { method: 'DELETE', path: obj(FX, 'a'.repeat(n)), expect: [404, 414, 431] });
  }
  // Lifecycles of long names: created, then read, patched, scaled and deleted by name (issue 14, point 4).
  for (const n of [64, 101, 150, 200, 252, 253]) {
    const name = `l${n}-`.padEnd(n, 'x');
    const p = obj(SCRATCH, name);
    cases.push({
      cls,
      name: `a name of ${n} characters through its life`,
      steps: [
        { method: 'POST', path: list(SCRATCH), headers: J, body: JSON.stringify(websiteText(name)), expect: [201] },
        { method: 'GET', path: p, expect: [200] },
        { method: 'PATCH', path: p, headers: MERGE, body: '{"spec":{"replicas":2}}', expect: [200] },
        { method: 'GET', path: `${p}/status`, expect: [200] },
        { method: 'GET', path: `${p}/scale`, expect: [200] },
        { method: 'PATCH', path: `${p}/scale`, headers: MERGE, body: '{"spec":{"replicas":3}}', expect: [200] },
        {
          method: 'PATCH',
          path: `${p}?fieldManager=hostile`,
          headers: APPLY,
          body: `apiVersion: ${GV}\nkind: Website\nmetadata:\n  name: ${name}\nspec:\n  gitRepo: ${GIT}\n`,
          expect: [200],
        },
        {
          method: 'GET',
          path: `${list(SCRATCH)}?fieldSelector=metadata.name%3D${name}`,
          expect: [200],
          check: (a) => (JSON.parse(a.text).items?.length === 1 ? undefined : 'the field selector does not find it'),
        },
        { method: 'DELETE', path: p, expect: [200] },
        { method: 'GET', path: p, expect: [404] },
      ],
    });
  }
  for (const n of [254, 300]) {
    add(`create a name of ${n}`, { method: 'POST', path: list(FX), headers: J, body: JSON.stringify(websiteText('b'.repeat(n))), expect: [422] });
  }
  // Dots: "." and ".." are not names (IsValidPathSegmentName); other dotted names are just missing.
  for (const d of ['.', '..']) {
    for (const m of ['GET', 'DELETE']) add(`${m} name ${d}`, { method: m, path: obj(FX, d), expect: [400, 404] });
    add(`PATCH name ${d}`, { method: 'PATCH', path: obj(FX, d), headers: MERGE, body: '{}', expect: [400, 404] });
    add(`GET namespace ${d}`, { method: 'GET', path: list(d), expect: [400, 404] });
  }
  for (const d of ['...', 'a..b', '.a', 'a.', 'a.b']) {
    add(`GET name ${d}`, { method: 'GET', path: obj(FX, d), expect: [404] });
    add(`create name ${d}`, {
      method: 'POST',
      path: list(d === 'a.b' ? SCRATCH : FX),
      headers: J,
      body: JSON.stringify(websiteText(d === 'a.b' ? `${uniq('d')}.b` : d)),
      expect: d === 'a.b' ? [201] : [422],
    });
  }
  // Unicode names and namespaces, escaped and raw.
  for (const u of ['ü', '日本', '🙂', 'İ', 'a\u0301', '\u200b', 'ａ']) {
    add(`GET name ${JSON.stringify(u)} escaped`, { method: 'GET', path: obj(FX, encodeURIComponent(u)), expect: [404] });
    add(`GET name ${JSON.stringify(u)} raw`, { method: 'GET', path: obj(FX, u), raw: true, expect: [400, 404] });
    add(`DELETE name ${JSON.stringify(u)} raw`, { method: 'DELETE', path: obj(FX, u), raw: true, expect: [400, 404] });
    add(`create name ${JSON.stringify(u)}`, { method: 'POST', path: list(FX), headers: J, body: JSON.stringify(websiteText(u)), expect: [422] });
    add(`list namespace ${JSON.stringify(u)} escaped`, { method: 'GET', path: list(encodeURIComponent(u)), expect: [200, 400, 404] });
  }
  // Slashes.
  for (const [label, path, expect] of [
    ['a trailing slash on a list', `${list(FX)}/`, [200, 404]],
    ['a trailing slash on an object', `${obj(fx.ns, fx.name)}/`, [200, 404]],
    ['a trailing slash on the group version', `${API}/`, [200, 404]],
    ['a trailing slash on /apis', '/apis/', [200, 404]],
    ['two trailing slashes', `${list(FX)}//`, [200, 400, 404]],
    ['a double slash at the start', `/${list(FX)}`, [200, 400, 404]],
    ['a double slash after /apis', `/apis//extensions.example.com/v1alpha1/websites`, [200, 400, 404]],
    ['an empty namespace', `${API}/namespaces//websites`, [200, 400, 404]],
    ['an empty name', `${list(FX)}//status`, [400, 404, 405]],
    ['/namespaces without a name', `${API}/namespaces`, [404]],
    ['/namespaces/x without a resource', `${API}/namespaces/${FX}`, [404]],
    ['a backslash', `${API}\\websites`, [400, 404]],
  ] as const) {
    add(`GET ${label}`, { method: 'GET', path, expect });
  }
  add('DELETE with a double slash before the name', { method: 'DELETE', path: `${list(FX)}//${fx.name}`, expect: [400, 404] });
  // kube-apiserver ignores a trailing slash after a name (and deletes): only on a scratch object.
  const slashed = uniq('s');
  cases.push({
    cls,
    name: 'DELETE with a trailing slash after the name (scratch)',
    steps: [
      { method: 'POST', path: list(SCRATCH), headers: J, body: JSON.stringify(websiteText(slashed)), expect: [201] },
      { method: 'DELETE', path: `${obj(SCRATCH, slashed)}/`, expect: [200, 400, 404, 405] },
    ],
  });
  add('PATCH with a trailing slash after the name', {
    method: 'PATCH',
    path: `${obj(fx.ns, fx.name)}/`,
    headers: MERGE,
    body: '{"metadata":{"labels":true}}',
    expect: [400, 404, 405, 422],
  });
  // Unknown subresources, resources, versions, groups; names that look like query or fragment.
  for (const sub of ['logs', 'exec', 'status/x', 'scale/x', 'STATUS', 'Status', 'proxy', 'finalize', 'binding', 'eviction', 'status/', 'approval', 'a/b/c/d']) {
    // kube-apiserver serves "status/x" and "status/" as the status subresource (its RequestInfo keeps only the
    // first segment after the name); ours may, or may answer 404.
    const asStatus = sub.startsWith('status/') || sub.startsWith('scale/');
    add(`GET unknown subresource ${sub}`, { method: 'GET', path: `${obj(fx.ns, fx.name)}/${sub}`, expect: asStatus ? [200, 404] : [404] });
    // The body is wrongly typed, so that no reading of the path may store it.
    const body = JSON.stringify({ ...fx.object, metadata: { ...fx.object.metadata, labels: true } });
    add(`PUT unknown subresource ${sub}`, {
      method: 'PUT',
      path: `${obj(fx.ns, fx.name)}/${sub}`,
      headers: J,
      body,
      expect: asStatus ? [400, 404, 405, 409, 422] : [404, 405],
    });
    add(`DELETE unknown subresource ${sub}`, { method: 'DELETE', path: `${obj(fx.ns, fx.name)}/${sub}`, expect: [404, 405] });
  }
  for (const r of ['Websites', 'WEBSITES', 'ws', 'website', 'websites.extensions.example.com', 'websitesx', '']) {
    add(`GET resource ${JSON.stringify(r)}`, { method: 'GET', path: `${API}/namespaces/${FX}/${r}`, expect: r === '' ? [404] : [404] });
  }
  for (const v of ['v2', 'v1beta1', 'V1ALPHA1', 'V1', 'v1alpha2', ''])
    add(`GET version ${JSON.stringify(v)}`, { method: 'GET', path: `/apis/extensions.example.com/${v}/websites`, expect: [404] });
  for (const g of ['Extensions.Example.Com', 'extensions.example.com.', 'example.com', 'apps'])
    add(`GET group ${g}`, { method: 'GET', path: `/apis/${g}/v1alpha1/websites`, expect: [404] });
  add('GET a 100 KiB path', { method: 'GET', path: `/apis/${'a'.repeat(100 * 1024)}`, expect: [404, 414, 431] });
  add('GET a path of 5000 segments', { method: 'GET', path: `${API}/${'a/'.repeat(5000)}`, expect: [404, 414, 431] });
  add('GET a path with a raw space', { method: 'GET', path: `${obj(FX, 'a b')}`, raw: true, expect: [400] });
  add('GET a path with a raw fragment', { method: 'GET', path: `${obj(FX, 'a#b')}`, raw: true, expect: [400, 404] });
  add('GET a path with raw invalid UTF-8', { method: 'GET', path: obj(FX, 'a\udcff'), raw: true, expect: [400, 404] });
  add('GET a path with a control character', { method: 'GET', path: obj(FX, 'a\u0001b'), raw: true, expect: [400] });
  add('GET the deprecated watch path', {
    method: 'GET',
    path: `${API}/watch/namespaces/${FX}/websites?timeoutSeconds=1`,
    expect: [200, 404],
    watch: true,
    timeoutMs: 20_000,
  });
  return cases;
}

// ---------------------------------------------------------------------------------------------------------------
// DeleteOptions bodies

function deleteOptionCases(fixtures: Fixture[]): HostileCase[] {
  const cls = 'delete-options';
  const cases: HostileCase[] = [];
  let i = 0;
  const next = () => fixtures[i++ % fixtures.length] as Fixture;
  const bodies: [string, string, readonly number[]][] = [
    ['an array', '[]', [400]],
    ['a string', '"x"', [400]],
    ['a number', '1', [400]],
    ['true', 'true', [400]],
    ['another kind', `{"kind":"Website","apiVersion":"${GV}"}`, [400, 422]],
    ['a Pod', '{"kind":"Pod","apiVersion":"v1"}', [400, 422]],
    ['ListOptions', '{"kind":"ListOptions","apiVersion":"meta.k8s.io/v1"}', [400, 422]],
    ['kind 1', '{"kind":1,"apiVersion":"v1"}', [400]],
    ['apiVersion true', '{"kind":"DeleteOptions","apiVersion":true}', [400]],
    ['dryRun "All" (not a list)', '{"dryRun":"All"}', [400]],
    ['dryRun [1]', '{"dryRun":[1]}', [400]],
    ['dryRun {}', '{"dryRun":{}}', [400]],
    ['dryRun ["x"]', '{"dryRun":["x"]}', [422]],
    ['dryRun [""]', '{"dryRun":[""]}', [422]],
    ['dryRun ["All","All"]', '{"dryRun":["All","All"]}', [200]],
    ['propagationPolicy "x"', '{"propagationPolicy":"x"}', [422]],
    ['propagationPolicy ""', '{"propagationPolicy":""}', [422]],
    ['propagationPolicy "background"', '{"propagationPolicy":"background"}', [422]],
    ['orphanDependents and propagationPolicy', '{"orphanDependents":false,"propagationPolicy":"Background"}', [422]],
    ['preconditions.uid that does not match', '{"preconditions":{"uid":"00000000-0000-0000-0000-000000000000"}}', [409]],
    ['preconditions.resourceVersion that does not match', '{"preconditions":{"resourceVersion":"1"}}', [409]],
    ['preconditions.resourceVersion "x"', '{"preconditions":{"resourceVersion":"x"}}', [400, 409]],
    ['preconditions.uid "" and resourceVersion "1"', '{"preconditions":{"uid":"","resourceVersion":"1"}}', [409]],
  ];
  for (const raw of ['"x"', '"0"', 'true', '1.5', '1e3', '1e400', '99999999999999999999', '[]', '{}', '-9223372036854775809'])
    bodies.push([`gracePeriodSeconds ${raw}`, `{"gracePeriodSeconds":${raw}}`, [400]]);
  for (const raw of ['"x"', '1', '[]', 'true']) bodies.push([`preconditions ${raw}`, `{"preconditions":${raw}}`, [400]]);
  for (const raw of ['1', 'true', '[]', '{}']) {
    bodies.push([`preconditions.uid ${raw}`, `{"preconditions":{"uid":${raw}}}`, [400]]);
    bodies.push([`preconditions.resourceVersion ${raw}`, `{"preconditions":{"resourceVersion":${raw}}}`, [400]]);
    bodies.push([`propagationPolicy ${raw}`, `{"propagationPolicy":${raw}}`, [400]]);
  }
  for (const raw of ['"x"', '1', '[]', '{}', '"true"']) bodies.push([`orphanDependents ${raw}`, `{"orphanDependents":${raw}}`, [400]]);
  for (const [label, body, expect] of bodies) {
    const f = next();
    cases.push({ cls, name: `delete ${f.name} with ${label}`, steps: [{ method: 'DELETE', path: obj(f.ns, f.name), headers: J, body, expect }] });
    const dc = expect.includes(200)
      ? [200]
      : label.startsWith('preconditions') && !label.includes(' "x"') && expect.includes(409)
        ? [200, 409, 422]
        : [...new Set([...expect, 400, 422])];
    cases.push({ cls, name: `deletecollection with ${label}`, steps: [{ method: 'DELETE', path: list(FX), headers: J, body, expect: dc }] });
  }
  // The deletecollection cases with unmatched preconditions above may answer 200 only if nothing was deleted; the
  // end-of-run fixture comparison decides that. Body media types:
  for (const [ct, body, expect] of [
    ['text/plain', '{"propagationPolicy":"Background"}', [400, 415]],
    ['application/vnd.kubernetes.protobuf', 'garbage', [400, 415]],
    ['application/yaml', 'kind: DeleteOptions\npropagationPolicy: x\n', [400, 415, 422]],
    ['application/yaml', 'a: b: c', [400, 415]],
    ['application/merge-patch+json', '{"propagationPolicy":"x"}', [400, 415, 422]],
    ['application/cbor', '\u00a0', [400, 415]],
  ] as const) {
    const f = next();
    cases.push({
      cls,
      name: `delete ${f.name} with a ${ct} body`,
      steps: [{ method: 'DELETE', path: obj(f.ns, f.name), headers: { 'content-type': ct }, body, expect }],
    });
  }
  // Dry runs answer 200 and delete nothing (the fixtures are compared at the end).
  for (const f of fixtures) {
    cases.push({
      cls,
      name: `dry-run delete of ${f.name} (body)`,
      steps: [{ method: 'DELETE', path: obj(f.ns, f.name), headers: J, body: '{"dryRun":["All"]}', expect: [200] }],
    });
    cases.push({ cls, name: `dry-run delete of ${f.name} (query)`, steps: [{ method: 'DELETE', path: `${obj(f.ns, f.name)}?dryRun=All`, expect: [200] }] });
  }
  cases.push({ cls, name: 'dry-run deletecollection', steps: [{ method: 'DELETE', path: `${list(FX)}?dryRun=All`, expect: [200] }] });
  cases.push({
    cls,
    name: 'dry-run deletecollection (body)',
    steps: [{ method: 'DELETE', path: list(FX), headers: J, body: '{"kind":"DeleteOptions","apiVersion":"v1","dryRun":["All"]}', expect: [200] }],
  });
  // Valid but odd bodies kube accepts, on scratch objects.
  for (const [label, body, expect] of [
    ['an unknown member', '{"foo":1}', [200]],
    ['meta.k8s.io/v1 DeleteOptions', '{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","propagationPolicy":"Foreground"}', [200]],
    ["the group's own DeleteOptions", `{"kind":"DeleteOptions","apiVersion":"${GV}"}`, [200]],
    ['gracePeriodSeconds -1', '{"gracePeriodSeconds":-1}', [200, 422]],
    ['gracePeriodSeconds 0', '{"gracePeriodSeconds":0}', [200]],
    ['{}', '{}', [200]],
    ['preconditions that match nothing but are empty', '{"preconditions":{}}', [200]],
    // kube decodes DeleteOptions of any version as DeleteOptions and deletes; refusing is as good.
    ['DeleteOptions of x/y', '{"kind":"DeleteOptions","apiVersion":"x/y"}', [200, 400, 422]],
    ['DeleteOptions of v2', '{"kind":"DeleteOptions","apiVersion":"v2"}', [200, 400, 422]],
  ] as const) {
    const name = uniq('d');
    cases.push({
      cls,
      name: `delete with ${label} (scratch)`,
      steps: [
        { method: 'POST', path: list(SCRATCH), headers: J, body: JSON.stringify(websiteText(name)), expect: [201] },
        { method: 'DELETE', path: obj(SCRATCH, name), headers: J, body, expect },
      ],
    });
  }
  // deletecollection honours limit, and a garbage continue deletes nothing (issue 14, point 3).
  const count = (n: number) => (a: Answer) => {
    const got = (JSON.parse(a.text) as { items?: unknown[] }).items?.length;
    return got === n ? undefined : `${got} objects left, expected ${n}`;
  };
  cases.push({
    cls,
    name: 'deletecollection with limit=2 deletes at most 2; a bad continue deletes none',
    steps: [
      ...Array.from(
        { length: 5 },
        (_, k): Step => ({ method: 'POST', path: list(DC), headers: J, body: JSON.stringify(websiteText(`dc-${k}`)), expect: [201] }),
      ),
      { method: 'DELETE', path: `${list(DC)}?limit=2`, expect: [200] },
      { method: 'GET', path: list(DC), expect: [200], check: count(3) },
      { method: 'DELETE', path: `${list(DC)}?limit=1&continue=garbage`, expect: [400, 410, 422] },
      { method: 'DELETE', path: `${list(DC)}?labelSelector=a%20in%20(`, expect: [400] },
      { method: 'DELETE', path: `${list(DC)}?propagationPolicy=x`, expect: [400, 422] },
      { method: 'GET', path: list(DC), expect: [200], check: count(3) },
    ],
  });
  return cases;
}

/** CLASSES are the classes in the order they run. */
export const CLASSES = [
  'metadata-types',
  'spec-status-types',
  'json-syntax',
  'patch',
  'query',
  'headers',
  'sizes',
  'methods',
  'paths',
  'delete-options',
] as const;

/** generateCases builds every class against that class's fixtures (one with a status, one with a full spec). */
export function generateCases(fixturesOf: (cls: string) => Fixture[]): HostileCase[] {
  seq = 0;
  const generators: Record<(typeof CLASSES)[number], (f: Fixture[]) => HostileCase[]> = {
    'metadata-types': metadataTypes,
    'spec-status-types': (f) => specStatusTypes(f, byName(f, 'fx-status'), byName(f, 'fx-spec')),
    'json-syntax': jsonSyntax,
    patch: patches,
    query: queries,
    headers: headerCases,
    sizes: sizeCases,
    methods: methodCases,
    paths: pathCases,
    'delete-options': deleteOptionCases,
  };
  const out: HostileCase[] = [];
  for (const cls of CLASSES) {
    FX = fixtureNamespace(cls);
    out.push(...generators[cls](fixturesOf(cls).filter((f) => f.ns === FX)));
  }
  return out;
}

const byName = (fixtures: Fixture[], n: string) => fixtures.find((f) => f.name === n) ?? (fixtures[0] as Fixture);
