/**
 * Server-side apply, differentially: the same request sequences sent to kube-apiserver (1.37, the e2e plane) serving
 * our kinds as CRDs and to our server, compared after every step. kube-apiserver's answers are the specification:
 * nothing here states an expected managedFields entry, a merged list or a conflict message; each step compares
 * - the response: status code and body (an object, or for errors the whole Status: message, reason, details, causes);
 * - the object read back afterwards, managedFields exactly (order, manager, operation, apiVersion, subresource, fieldsV1).
 * Normalized away are what cannot match: uid, resourceVersion, creationTimestamp, and the twin's API group (Website's
 * twin is served as crd.example.com beside our APIService, which owns extensions.example.com; FlightTicket's is served
 * in its own group, testing.example.com, which nothing else serves on that kube-apiserver). Each step runs in a second
 * of its own, on both servers at once, and a managedFields time is compared as the step it was written in: kube sorts
 * entries by operation, then time in seconds, then manager, so their order is compared too, and when a time moves.
 *
 * Ours runs in process (createServer on a temporary lmdb file, app.inject), with no controllers and not standalone
 * (whose Website status the server would write itself): the objects change only by the requests sent. The kinds:
 * FlightTicket (test/kinds/flight-ticket.ts) declares a spec list map keyed by one key (passengers) and by two (legs),
 * a set (tags), an atomic list (notes), a granular map (extras), an atomic map (payment) and status.conditions keyed by
 * type; Website declares status.conditions keyed by type. Metadata is kube's: finalizers a set, ownerReferences a map
 * keyed by uid, labels and annotations granular maps. Owner references name two real ConfigMaps, so kube's garbage
 * collector leaves the twins alone.
 *
 * A mismatching step does not stop its sequence: every step is run and compared, and the sequence fails at its end
 * with a report naming each differing step and its differing paths with both values (kube first). With
 * APPLY_DIFF_TRACE=dir, every step's normalized responses and objects of both sides are also written there.
 *
 * The last block sends Website sequences through the aggregated path (our real server behind kube-apiserver) with
 * its reconcilers on: there the reconciler writes status too, so only that both managers' entries are kept is asserted.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authentication } from '../../src/auth/authentication.js';
import { website } from '../../src/kinds/website/index.js';
import { createServer } from '../../src/server/server.js';
import { LmdbStorage } from '../../src/storage/lmdb-storage.js';
import { websiteCrd } from '../bench/crd.mjs';
import { crdOf } from '../kinds/crd.js';
import { flightTicket } from '../kinds/flight-ticket.js';
import { suffix } from './helpers-access.js';
import { waitFor } from './harness/kubectl.js';
import { reconcilersOff, reconcilersOn } from './harness/reconcilers.js';
import { e2e } from './harness/state.js';

const env = e2e();
const NS = `apply-diff-${suffix()}`;
const kube = new Agent({ connect: { ca: readFileSync(env.caFile, 'utf8') } });
const bearer = { authorization: `Bearer ${env.tokens.admin}` };
/** APPLY_DIFF_TRACE=dir writes every step's normalized responses and objects, both sides, to dir/Kind-name-NN.json. */
const TRACE = process.env['APPLY_DIFF_TRACE'];

// ---------------------------------------------------------------------------------------------------------------
// The two servers

type Json = any;
interface Reply {
  code: number;
  body: Json;
}
type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

async function kubeCall(method: Method, path: string, body?: unknown, contentType = 'application/json'): Promise<Reply> {
  const r = await request(`${env.server}${path}`, {
    method,
    dispatcher: kube,
    headers: { ...bearer, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': contentType }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await r.body.text();
  return { code: r.statusCode, body: text ? JSON.parse(text) : undefined };
}

const authentication: Authentication = {
  authenticate: async () => ({ name: 'admin', groups: ['system:masters', 'system:authenticated'] }),
  trustedCAs: () => [],
  onTrustChange: () => {},
};
const dir = mkdtempSync(join(tmpdir(), 'apply-differential-'));
const storage = new LmdbStorage({ path: join(dir, 'data') });
const { app } = createServer({ storage, kinds: [website, { storage: flightTicket }], logger: pino({ level: 'silent' }), authentication, standalone: false });

async function oursCall(method: Method, path: string, body?: unknown, contentType = 'application/json'): Promise<Reply> {
  const r = await app.inject({
    method,
    url: path,
    headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': contentType }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return { code: r.statusCode, body: r.body ? JSON.parse(r.body) : undefined };
}

// ---------------------------------------------------------------------------------------------------------------
// Kinds, their twins, and the requests of a sequence

interface Target {
  kind: string;
  plural: string;
  /** Our group (ours serves it; request bodies are written in it). */
  group: string;
  /** The group kube-apiserver serves the twin CRD in. */
  twin: string;
  /** A valid spec. */
  spec: Json;
}

const FT: Target = {
  kind: 'FlightTicket',
  plural: 'flighttickets',
  group: flightTicket.group,
  twin: flightTicket.group,
  spec: { departure: 'ICN', destination: 'SFO' },
};
const WS: Target = {
  kind: 'Website',
  plural: 'websites',
  group: website.storage.group,
  twin: 'crd.example.com',
  spec: { git: { repository: 'https://github.com/luksa/kubia-website-example.git' } },
};

type Side = 'kube' | 'ours';
const callOn = (side: Side) => (side === 'kube' ? kubeCall : oursCall);

/** Step is one request of a sequence; its body may be computed from the side's current object (a PUT needs its resourceVersion). */
interface Step {
  title: string;
  method: 'POST' | 'PUT' | 'PATCH';
  patch?: 'apply' | 'merge' | 'json';
  status?: boolean;
  /** To /scale (a Website's autoscaling/v1 Scale). */
  scale?: boolean;
  manager: string;
  force?: boolean;
  /** More query parameters (dryRun). */
  query?: Record<string, string>;
  body: Json | ((current: Json) => Json);
}

const PATCH_TYPES = { apply: 'application/apply-patch+yaml', merge: 'application/merge-patch+json', json: 'application/json-patch+json' } as const;

const collection = (t: Target, side: Side, ns = NS) => `/apis/${side === 'kube' ? t.twin : t.group}/v1/namespaces/${ns}/${t.plural}`;

/** inGroup rewrites a body's apiVersion into the side's group. */
function inGroup(t: Target, side: Side, body: Json): Json {
  if (side === 'ours' || body === null || typeof body !== 'object' || Array.isArray(body) || typeof body.apiVersion !== 'string') return body;
  return { ...body, apiVersion: body.apiVersion.replace(`${t.group}/`, `${t.twin}/`) };
}

/**
 * normalize removes what cannot match between the two servers, and speaks of the twin's group as ours. A
 * managedFields time becomes the step it was written in (`<step 3>`): each step runs in a second of its own on both
 * servers, so the times, and the order kube sorts entries in (operation, then time in seconds, then manager), can be
 * compared although the clocks' readings cannot.
 */
function normalize(t: Target, v: Json, stepAt: ReadonlyMap<number, number>): Json {
  if (v === undefined) return v;
  const out = t.twin === t.group ? structuredClone(v) : JSON.parse(JSON.stringify(v).replaceAll(t.twin, t.group));
  // Our Website's Scale names its pods' selector before the reconciler reports one (podSelector); the CRD's reads
  // .status.selector, which only a controller writes, and none runs here.
  if (out?.kind === 'Scale' && out.status) delete out.status.selector;
  const meta = out?.metadata;
  if (meta && typeof meta === 'object' && out.kind !== 'Status') {
    delete meta.uid;
    delete meta.resourceVersion;
    delete meta.creationTimestamp;
    if (Array.isArray(meta.managedFields)) {
      for (const e of meta.managedFields) {
        if (!e || typeof e !== 'object' || typeof e.time !== 'string') continue;
        const step = stepAt.get(Math.floor(Date.parse(e.time) / 1000));
        e.time = step === undefined ? `<not in a step: ${e.time}>` : `<step ${step}>`;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Comparison

interface Difference {
  path: string;
  kube: Json;
  ours: Json;
}

/** diff lists where two JSON values differ (arrays by index, objects by key; the order of an object's keys is not compared). */
function diff(kubeV: Json, oursV: Json, path = ''): Difference[] {
  if (Object.is(kubeV, oursV)) return [];
  const kind = (v: Json) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);
  if (kind(kubeV) !== kind(oursV) || (kind(kubeV) !== 'array' && kind(kubeV) !== 'object')) return [{ path: path || '.', kube: kubeV, ours: oursV }];
  const out: Difference[] = [];
  if (Array.isArray(kubeV)) {
    const ours = oursV as Json[];
    for (let i = 0; i < Math.max(kubeV.length, ours.length); i++) {
      if (i >= kubeV.length) out.push({ path: `${path}[${i}]`, kube: '<absent>', ours: ours[i] });
      else if (i >= ours.length) out.push({ path: `${path}[${i}]`, kube: kubeV[i], ours: '<absent>' });
      else out.push(...diff(kubeV[i], ours[i], `${path}[${i}]`));
    }
    return out;
  }
  for (const k of new Set([...Object.keys(kubeV), ...Object.keys(oursV)])) {
    // FieldsV1 keys are paths of their own (`f:spec`, `k:{"name":"a"}`, `v:"example.com/a"`, `.`): bracketed when they hold a dot.
    const at = k !== '' && !/[.[\]]/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;
    if (!Object.hasOwn(oursV, k)) out.push({ path: at, kube: kubeV[k], ours: '<absent>' });
    else if (!Object.hasOwn(kubeV, k)) out.push({ path: at, kube: '<absent>', ours: oursV[k] });
    else out.push(...diff(kubeV[k], oursV[k], at));
  }
  return out;
}

const show = (v: Json) => {
  const s = typeof v === 'string' && v.startsWith('<') ? v : JSON.stringify(v);
  return s.length > 400 ? `${s.slice(0, 400)}…` : s;
};

interface StepResult {
  index: number;
  title: string;
  codes: { kube: number; ours: number };
  differences: Difference[];
}

/**
 * runSequence sends each step to both servers, then compares the two responses and the two objects read back.
 * Returns every step's result; the caller fails on any difference.
 */
async function runSequence(t: Target, name: string, steps: Step[]): Promise<StepResult[]> {
  const results: StepResult[] = [];
  const objectPath = (side: Side) => `${collection(t, side)}/${name}`;
  const stepAt = new Map<number, number>();
  const send = async (side: Side, step: Step): Promise<Reply> => {
    const current = typeof step.body === 'function' ? (await callOn(side)('GET', objectPath(side))).body : undefined;
    const body = inGroup(t, side, typeof step.body === 'function' ? step.body(structuredClone(current)) : step.body);
    const query = new URLSearchParams({ fieldManager: step.manager, ...(step.force ? { force: 'true' } : {}), ...step.query });
    const path = `${step.method === 'POST' ? collection(t, side) : objectPath(side)}${step.status ? '/status' : step.scale ? '/scale' : ''}?${query}`;
    return callOn(side)(step.method, path, body, step.patch ? PATCH_TYPES[step.patch] : 'application/json');
  };
  for (const [index, step] of steps.entries()) {
    // Each step in a second of its own, sent to both servers at once: managedFields times name the step.
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20));
    const second = Math.floor(Date.now() / 1000);
    stepAt.set(second, index);
    const [kubeReply, oursReply] = await Promise.all([send('kube', step), send('ours', step)]);
    const replies = { kube: kubeReply, ours: oursReply };
    const ended = Math.floor(Date.now() / 1000);
    const straddled = ended !== second;
    // The next step waits for a second after this one's last: the seconds it ran into are still its own.
    for (let s = second + 1; s <= ended; s++) stepAt.set(s, index);
    const after = {
      kube: (await kubeCall('GET', objectPath('kube'))).body,
      ours: (await oursCall('GET', objectPath('ours'))).body,
    };
    const inResponse = diff(normalize(t, replies.kube.body, stepAt), normalize(t, replies.ours.body, stepAt));
    const inObject = diff(normalize(t, after.kube, stepAt), normalize(t, after.ours, stepAt));
    // A write answers the object it wrote: when the object read back differs the same way, it is said once.
    const sameAsResponse = inObject.length > 0 && JSON.stringify(inObject) === JSON.stringify(inResponse);
    // The content before the bookkeeping: the code, then what the objects hold, then their managedFields.
    const rank = (d: Difference) => (d.path === 'response code' ? 0 : d.path === 'object read back' ? 3 : d.path.includes('.managedFields') ? 2 : 1);
    const differences = [
      ...(replies.kube.code !== replies.ours.code ? [{ path: 'response code', kube: replies.kube.code, ours: replies.ours.code }] : []),
      ...inResponse.map((d) => ({ ...d, path: `response${d.path}` })),
      ...(sameAsResponse
        ? [{ path: 'object read back', kube: '<differs as the response>', ours: '<differs as the response>' }]
        : inObject.map((d) => ({ ...d, path: `object${d.path}` }))),
    ].sort((a, b) => rank(a) - rank(b));
    // A step that ran into the next second can make managedFields times and order differ for that reason alone.
    const title = straddled && differences.length ? `${step.title} [ran into the next second: managedFields order may differ for that alone]` : step.title;
    results.push({ index, title, codes: { kube: replies.kube.code, ours: replies.ours.code }, differences });
    if (TRACE) {
      mkdirSync(TRACE, { recursive: true });
      const normalized = (side: Side) => ({
        code: replies[side].code,
        response: normalize(t, replies[side].body, stepAt),
        object: normalize(t, after[side], stepAt),
      });
      writeFileSync(
        join(TRACE, `${t.kind}-${name}-${String(index).padStart(2, '0')}.json`),
        `${JSON.stringify({ step: step.title, kube: normalized('kube'), ours: normalized('ours') }, null, 2)}\n`,
      );
    }
  }
  return results;
}

/** report is the readable account of a sequence: one line per step, and the differences of each failing one. */
function report(sequence: string, results: StepResult[]): string {
  const lines = [`sequence "${sequence}":`];
  for (const r of results) {
    lines.push(`  step ${r.index} ${r.differences.length ? 'DIFFERS' : 'same   '} (kube ${r.codes.kube}, ours ${r.codes.ours}) ${r.title}`);
    for (const d of r.differences.slice(0, 12)) lines.push(`      ${d.path}\n        kube: ${show(d.kube)}\n        ours: ${show(d.ours)}`);
    if (r.differences.length > 12) lines.push(`      … and ${r.differences.length - 12} more`);
  }
  return lines.join('\n');
}

/** compare runs a sequence on fresh objects named `name` and fails with the report when any step differs. */
async function compare(t: Target, sequence: string, name: string, steps: Step[]): Promise<void> {
  const results = await runSequence(t, name, steps);
  const text = report(`${t.kind} ${sequence}`, results);
  process.stderr.write(`${text}\n`);
  const failing = results.filter((r) => r.differences.length);
  if (failing.length) expect.fail(`${failing.length} of ${results.length} steps differ from kube-apiserver\n${text}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Bodies

const obj = (t: Target, name: string, rest: Json = {}): Json => ({ apiVersion: `${t.group}/v1`, kind: t.kind, ...rest, metadata: { name, ...rest.metadata } });
const create = (t: Target, name: string, manager = 'creator', rest: Json = {}): Step => ({
  title: `${manager} creates (POST)`,
  method: 'POST',
  manager,
  body: obj(t, name, { spec: t.spec, ...rest }),
});
const apply = (
  title: string,
  manager: string,
  body: Json,
  opts: { force?: boolean; status?: boolean; scale?: boolean; query?: Record<string, string> } = {},
): Step => ({
  title: `${manager} ${opts.force ? 'force-' : ''}applies${opts.status ? ' /status' : opts.scale ? ' /scale' : ''}: ${title}`,
  method: 'PATCH',
  patch: 'apply',
  manager,
  body,
  ...opts,
});
const condition = (type: string, status: string, reason: string) => ({
  type,
  status,
  reason,
  message: `${type} is ${status}`,
  lastTransitionTime: '2026-01-02T03:04:05Z',
});

// Filled in beforeAll: two ConfigMaps on kube-apiserver whose uids the owner references name.
const owners = { a: { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-a', uid: '' }, b: { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner-b', uid: '' } };

function conditionsSequence(t: Target, name: string): Step[] {
  const status = (conditions: Json[]) => obj(t, name, { status: { conditions } });
  return [
    create(t, name),
    {
      title: 'the reconciler writes Ready, Progressing and Degraded (PUT /status, an Update)',
      method: 'PUT',
      status: true,
      manager: 'reconciler',
      body: (cur: Json) => ({
        ...cur,
        status: { conditions: [condition('Ready', 'True', 'Available'), condition('Progressing', 'False', 'Done'), condition('Degraded', 'False', 'Fine')] },
      }),
    },
    apply('condition Custom (all four kept)', 'b', status([condition('Custom', 'True', 'Mine')]), { status: true }),
    apply('condition Ready with another status (conflict with the reconciler)', 'c', status([condition('Ready', 'False', 'NotYet')]), { status: true }),
    apply('condition Ready with another status (Ready moves to c, the others kept)', 'c', status([condition('Ready', 'False', 'NotYet')]), {
      status: true,
      force: true,
    }),
    apply('no conditions (its Custom removed, the others kept)', 'b', obj(t, name), { status: true }),
    {
      title: 'the reconciler writes its three again (PUT /status), Ready as before',
      method: 'PUT',
      status: true,
      manager: 'reconciler',
      body: (cur: Json) => ({
        ...cur,
        status: { conditions: [condition('Ready', 'True', 'Available'), condition('Progressing', 'False', 'Done'), condition('Degraded', 'False', 'Fine')] },
      }),
    },
  ];
}

function finalizersSequence(t: Target, name: string): Step[] {
  const fin = (...finalizers: string[]) => obj(t, name, { metadata: { finalizers } });
  return [
    create(t, name),
    apply('finalizer example.com/a', 'a', fin('example.com/a')),
    apply('finalizer example.com/b (both kept)', 'b', fin('example.com/b')),
    apply('its own finalizer again (nothing removed)', 'b', fin('example.com/b'), { force: true }),
    apply('no finalizers (only b remains)', 'a', obj(t, name)),
    {
      title: 'editor adds example.com/c (merge patch, an Update)',
      method: 'PATCH',
      patch: 'merge',
      manager: 'editor',
      body: { metadata: { finalizers: ['example.com/b', 'example.com/c'] } },
    },
    apply('finalizer example.com/a again', 'a', fin('example.com/a')),
    apply('finalizer example.com/c, which editor set (same value, shared)', 'c', fin('example.com/c')),
    apply('no finalizers (b removed, c and a kept)', 'b', obj(t, name)),
    apply('no finalizers', 'a', obj(t, name)),
    { title: 'editor removes them all (merge patch)', method: 'PATCH', patch: 'merge', manager: 'editor', body: { metadata: { finalizers: null } } },
  ];
}

function ownerReferencesSequence(t: Target, name: string): Step[] {
  const refs = (...ownerReferences: Json[]) => obj(t, name, { metadata: { ownerReferences } });
  return [
    create(t, name),
    apply('owner reference to owner-a', 'a', refs(owners.a)),
    apply('owner reference to owner-b (both kept)', 'b', refs(owners.b)),
    apply('its reference with controller: true', 'a', refs({ ...owners.a, controller: true })),
    apply("its own and owner-a's with controller: false (conflict with a)", 'b', refs(owners.b, { ...owners.a, controller: false })),
    apply("its own and owner-a's with controller: false", 'b', refs(owners.b, { ...owners.a, controller: false }), { force: true }),
    apply('no owner references (owner-a stays: b holds it)', 'a', obj(t, name)),
    apply("only its own (owner-a's dropped)", 'b', refs(owners.b)),
    {
      title: 'editor sets blockOwnerDeletion on owner-b (merge patch replaces the list)',
      method: 'PATCH',
      patch: 'merge',
      manager: 'editor',
      body: { metadata: { ownerReferences: [{ ...owners.b, blockOwnerDeletion: false }] } },
    },
    apply('owner-b with blockOwnerDeletion: true (conflict with editor)', 'b', refs({ ...owners.b, blockOwnerDeletion: true })),
  ];
}

function labelsSequence(t: Target, name: string): Step[] {
  const meta = (labels: Json, annotations?: Json) => obj(t, name, { metadata: { labels, ...(annotations ? { annotations } : {}) } });
  return [
    create(t, name, 'creator', { metadata: { labels: { app: 'x' } } }),
    apply('labels a and shared, annotation note-a', 'a', meta({ a: '1', shared: 's' }, { 'example.com/note-a': 'A' })),
    apply('label b, annotation note-b', 'b', meta({ b: '2' }, { 'example.com/note-b': 'B' })),
    apply('label shared with another value (conflict with a)', 'b', meta({ b: '2', shared: 'other' })),
    apply('label shared with the same value (shared ownership; note-b left out, so removed)', 'b', meta({ b: '2', shared: 's' })),
    apply('label shared changed (conflict with b)', 'a', meta({ a: '1', shared: 't' }, { 'example.com/note-a': 'A' })),
    apply('label shared changed', 'a', meta({ a: '1', shared: 't' }, { 'example.com/note-a': 'A' }), { force: true }),
    apply("label app, the creator's (conflict with an Update manager)", 'b', meta({ b: '2', app: 'y' })),
    apply('label app', 'b', meta({ b: '2', app: 'y' }), { force: true }),
    apply('label a only, no annotations (shared and note-a removed)', 'a', meta({ a: '1' })),
    {
      title: 'editor sets label b and annotation note-c (merge patch)',
      method: 'PATCH',
      patch: 'merge',
      manager: 'editor',
      body: { metadata: { labels: { b: '3' }, annotations: { 'example.com/note-c': 'C' } } },
    },
    apply('label b back to 2 (conflict with editor)', 'b', meta({ b: '2', app: 'y' })),
    apply(
      'only annotation note-b (its label app removed; b stays, editor set it)',
      'b',
      obj(t, name, { metadata: { annotations: { 'example.com/note-b': 'B' } } }),
    ),
  ];
}

const fullSpec = {
  departure: 'ICN',
  destination: 'SFO',
  passengers: [{ name: 'alice', seat: '1A' }],
  legs: [{ from: 'ICN', to: 'NRT', flight: 'KE1' }],
  tags: ['t1'],
  notes: ['n1'],
  extras: { wifi: 'yes' },
  payment: { method: 'card', amount: 100, currency: 'USD' },
};

function specListsSequence(name: string): Step[] {
  const spec = (s: Json) => obj(FT, name, { spec: s });
  const cConfig = spec({ passengers: [{ name: 'alice', seat: '3C' }], tags: ['t1'], notes: ['n2'], payment: { method: 'cash' }, extras: { wifi: 'no' } });
  return [
    apply('creates with every kind of list and map', 'a', spec(fullSpec)),
    apply(
      'passenger bob, leg NRT-SFO, tags t2 and t1, extra meal',
      'b',
      spec({ passengers: [{ name: 'bob', seat: '2B' }], legs: [{ from: 'NRT', to: 'SFO', flight: 'UA2' }], tags: ['t2', 't1'], extras: { meal: 'veg' } }),
    ),
    apply("alice's seat, tag t1, notes, payment, extra wifi (conflicts with a)", 'c', cConfig),
    apply("alice's seat, tag t1, notes, payment, extra wifi", 'c', cConfig, { force: true }),
    apply('its first configuration again (conflicts with c)', 'a', spec(fullSpec)),
    apply('without bob and t1', 'b', spec({ legs: [{ from: 'NRT', to: 'SFO', flight: 'UA2' }], tags: ['t2'], extras: { meal: 'veg' } })),
    {
      title: "editor sets alice's meal, leg NRT-SFO's cabin and reorders the tags (PUT, an Update)",
      method: 'PUT',
      manager: 'editor',
      body: (cur: Json) => ({
        ...cur,
        spec: {
          ...cur.spec,
          passengers: cur.spec.passengers.map((p: Json) => (p.name === 'alice' ? { ...p, meal: 'vegan' } : p)),
          legs: cur.spec.legs.map((l: Json) => (l.to === 'SFO' ? { ...l, cabin: 'business' } : l)),
          tags: [...cur.spec.tags].reverse(),
        },
      }),
    },
    apply(
      "leg NRT-SFO's cabin (conflict with editor)",
      'b',
      spec({ legs: [{ from: 'NRT', to: 'SFO', flight: 'UA2', cabin: 'economy' }], tags: ['t2'], extras: { meal: 'veg' } }),
    ),
    apply("its configuration with alice's meal", 'a', spec({ ...fullSpec, passengers: [{ name: 'alice', seat: '1A', meal: 'kosher' }] }), { force: true }),
    apply('an empty configuration (it owned only what others own too)', 'c', obj(FT, name)),
    apply('only departure and destination (its items removed)', 'a', spec({ departure: 'ICN', destination: 'SFO' })),
    apply(
      'two legs in a new order, a second passenger',
      'b',
      spec({
        passengers: [{ name: 'carol' }],
        legs: [
          { from: 'SFO', to: 'LAX' },
          { from: 'NRT', to: 'SFO', flight: 'UA2' },
        ],
        tags: ['t3', 't2'],
        extras: { meal: 'veg' },
      }),
    ),
    {
      title: 'editor appends a tag and a note (JSON patch)',
      method: 'PATCH',
      patch: 'json',
      manager: 'editor',
      body: [
        { op: 'add', path: '/spec/tags/-', value: 't9' },
        { op: 'add', path: '/spec/notes', value: ['e1'] },
      ],
    },
    apply(
      "its configuration without LAX (the leg goes, the editor's tag stays)",
      'b',
      spec({ passengers: [{ name: 'carol' }], legs: [{ from: 'NRT', to: 'SFO', flight: 'UA2' }], tags: ['t3', 't2'], extras: { meal: 'veg' } }),
    ),
  ];
}

function createSequence(name: string, how: 'POST' | 'apply'): Step[] {
  const content = {
    metadata: { labels: { app: 'x' }, annotations: { 'example.com/a': '1' }, finalizers: ['example.com/f'], ownerReferences: [owners.a] },
    spec: {
      ...fullSpec,
      passengers: [{ name: 'alice', seat: '1A' }, { name: 'bob' }],
      legs: [...fullSpec.legs, { from: 'NRT', to: 'SFO' }],
      tags: ['t1', 't2'],
      extras: { wifi: 'yes', bag: '2' },
    },
  };
  // The applier's next configuration: after a POST only what it takes over; after its own create, its whole
  // configuration changed (bob's seat, label app, extra bag) and without leg NRT-SFO and tag t2, which it removes.
  const next =
    how === 'POST'
      ? obj(FT, name, { metadata: { labels: { app: 'z' } }, spec: { passengers: [{ name: 'bob', seat: '2B' }], extras: { bag: '3' } } })
      : obj(FT, name, {
          metadata: { ...content.metadata, labels: { app: 'z' } },
          spec: {
            ...content.spec,
            passengers: [
              { name: 'alice', seat: '1A' },
              { name: 'bob', seat: '2B' },
            ],
            legs: fullSpec.legs,
            tags: ['t1'],
            extras: { wifi: 'yes', bag: '3' },
          },
        });
  return [
    how === 'POST' ? create(FT, name, 'poster', content) : apply('creates', 'applier', obj(FT, name, content)),
    {
      title: "editor changes bob's seat, a label, a tag and an extra (PUT)",
      method: 'PUT',
      manager: 'editor',
      body: (cur: Json) => ({
        ...cur,
        metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, app: 'y' } },
        spec: {
          ...cur.spec,
          passengers: cur.spec.passengers.map((p: Json) => (p.name === 'bob' ? { ...p, seat: '9Z' } : p)),
          tags: ['t1', 't3'],
          extras: { ...cur.spec.extras, bag: '1' },
        },
      }),
    },
    {
      title: 'patcher adds a label, an extra and a passenger (merge patch)',
      method: 'PATCH',
      patch: 'merge',
      manager: 'patcher',
      body: (cur: Json) => ({ metadata: { labels: { p: '1' } }, spec: { extras: { p: 'yes' }, passengers: [...cur.spec.passengers, { name: 'pat' }] } }),
    },
    apply("bob's seat, label app, extra bag (conflicts with editor)", 'applier', next),
    apply("bob's seat, label app, extra bag", 'applier', next, { force: true }),
    { title: 'patcher removes the finalizers (merge patch)', method: 'PATCH', patch: 'merge', manager: 'patcher', body: { metadata: { finalizers: null } } },
  ];
}

/**
 * scaleSequence: spec.replicas written through /scale (as an autoscaler does) beside an applier of the main resource.
 * No apply is sent to /scale: kube-apiserver 1.37 answers one to a CRD with a 500 (`failed to convert new object
 * (/name; autoscaling/v1, Kind=Scale) to proper version: request to convert CR to an invalid group/version`) once
 * it gets past the conflict check, which is a bug of its own and not a behaviour to copy.
 */
function scaleSequence(name: string): Step[] {
  const replicas = (n?: number) => obj(WS, name, { spec: { ...WS.spec, ...(n === undefined ? {} : { replicas: n }) } });
  const putScale = (n: number) => (cur: Json) => ({
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name, namespace: NS, resourceVersion: cur.metadata.resourceVersion },
    spec: { replicas: n },
  });
  return [
    apply('creates with 2 replicas', 'a', replicas(2)),
    {
      title: 'scaler sets 3 replicas (merge patch /scale, an Update)',
      method: 'PATCH',
      patch: 'merge',
      scale: true,
      manager: 'scaler',
      body: { spec: { replicas: 3 } },
    },
    apply('2 replicas again (conflict with scaler)', 'a', replicas(2)),
    apply('2 replicas again', 'a', replicas(2), { force: true }),
    { title: 'scaler sets 6 replicas (PUT /scale)', method: 'PUT', scale: true, manager: 'scaler', body: putScale(6) },
    apply('without replicas (scaler keeps them)', 'a', replicas()),
    {
      title: 'hpa sets 4 replicas (JSON patch /scale)',
      method: 'PATCH',
      patch: 'json',
      scale: true,
      manager: 'hpa',
      body: [{ op: 'replace', path: '/spec/replicas', value: 4 }],
    },
    apply('2 replicas (conflict with hpa)', 'a', replicas(2)),
  ];
}

/** invalidSequence: configurations structured-merge-diff cannot type (duplicates in a set or list map, an item without its key). */
function invalidSequence(name: string): Step[] {
  const spec = (s: Json) => obj(FT, name, { spec: s });
  return [
    apply('creates with passengers and tags', 'a', spec({ departure: 'ICN', destination: 'SFO', passengers: [{ name: 'alice', seat: '1A' }], tags: ['t1'] })),
    apply('a set with a duplicate', 'b', spec({ tags: ['t2', 't2'] })),
    apply('a list map item without its key', 'b', spec({ passengers: [{ seat: '9Z' }] })),
    apply('two list map items with the same key', 'b', spec({ passengers: [{ name: 'carol' }, { name: 'carol', seat: '2B' }] })),
    apply('a valid configuration after them', 'b', spec({ passengers: [{ name: 'carol' }], tags: ['t2'] })),
  ];
}

/** capSequence: twelve Update managers, each writing its own extra: kube folds the oldest into "ancient-changes". */
function capSequence(name: string): Step[] {
  const writers = Array.from({ length: 12 }, (_, i) => `writer-${String(i + 1).padStart(2, '0')}`);
  return [
    apply('creates with one extra', 'a', obj(FT, name, { spec: { departure: 'ICN', destination: 'SFO', extras: { a: '1' } } })),
    ...writers.map(
      (w): Step => ({ title: `${w} sets its own extra (merge patch)`, method: 'PATCH', patch: 'merge', manager: w, body: { spec: { extras: { [w]: 'x' } } } }),
    ),
    {
      title: 'writer-12 sets another extra (its entry moves to the newest)',
      method: 'PATCH',
      patch: 'merge',
      manager: 'writer-12',
      body: { spec: { extras: { late: 'y' } } },
    },
  ];
}

/** edgesSequence: nulls, status and managedFields in a configuration, dry runs, an empty list applied, a managedFields reset. */
function edgesSequence(name: string): Step[] {
  const spec = (s: Json, rest: Json = {}) => obj(FT, name, { ...rest, spec: s });
  const aConfig = spec({
    departure: 'ICN',
    destination: 'SFO',
    passengers: [{ name: 'alice', seat: '1A' }, { name: 'bob' }],
    tags: ['t1'],
    extras: { wifi: 'yes' },
  });
  return [
    apply('creates with passengers, tags and extras', 'a', aConfig),
    apply('extra meal and notes', 'b', spec({ extras: { meal: 'veg' }, notes: ['n1'] })),
    // One null only: kube-apiserver lists several schema errors in no fixed order.
    apply('its extra meal as null', 'b', spec({ extras: { meal: null }, notes: ['n1'] })),
    apply(
      'status in a configuration for the main resource (not its to own)',
      'b',
      obj(FT, name, { spec: { tags: ['t3'] }, status: { booked: true, conditions: [condition('Custom', 'True', 'Mine')] } }),
    ),
    apply(
      'managedFields in the configuration',
      'b',
      obj(FT, name, { metadata: { managedFields: [{ manager: 'x', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} }] }, spec: { tags: ['t3'] } }),
    ),
    apply("alice's seat as a dry run (nothing stored)", 'c', spec({ passengers: [{ name: 'alice', seat: '3C' }] }), { force: true, query: { dryRun: 'All' } }),
    apply('an explicitly empty list map and set', 'b', spec({ passengers: [], tags: [] })),
    {
      title: 'editor moves bob before alice (JSON patch)',
      method: 'PATCH',
      patch: 'json',
      manager: 'editor',
      body: [{ op: 'move', from: '/spec/passengers/1', path: '/spec/passengers/0' }],
    },
    apply('an applier named as an Update manager: its entries are separate', 'editor', spec({ tags: ['t4'] })),
    {
      title: 'editor resets managedFields ([{}], merge patch)',
      method: 'PATCH',
      patch: 'merge',
      manager: 'editor',
      body: { metadata: { managedFields: [{}] } },
    },
    apply('its configuration again, after the reset', 'a', aConfig),
    {
      title: 'editor writes status through the main resource (PUT: status ignored, the rest owned)',
      method: 'PUT',
      manager: 'editor',
      body: (cur: Json) => ({ ...cur, metadata: { ...cur.metadata, labels: { e: '1' } }, status: { booked: true } }),
    },
    apply(
      'without bob',
      'a',
      spec({ departure: 'ICN', destination: 'SFO', passengers: [{ name: 'alice', seat: '1A' }], tags: ['t1'], extras: { wifi: 'yes' } }),
    ),
  ];
}

// ---------------------------------------------------------------------------------------------------------------

async function installCrd(crd: Json, group: string, plural: string): Promise<void> {
  const r = await kubeCall('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  if (r.code !== 201 && r.code !== 409) throw new Error(`creating CRD ${crd.metadata.name}: HTTP ${r.code} ${JSON.stringify(r.body)}`);
  await waitFor(`${plural}.${group} served`, async () => (await kubeCall('GET', `/apis/${group}/v1/${plural}?limit=1`)).code === 200, 60_000, 100);
}

beforeAll(async () => {
  await installCrd(crdOf(flightTicket), FT.twin, FT.plural);
  await installCrd(websiteCrd(WS.twin), WS.twin, WS.plural);
  const ns = await kubeCall('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  expect(ns.code).toBe(201);
  // Warm both up (connections, first requests), so that a step's requests take milliseconds, within its second.
  for (const t of [FT, WS]) for (const side of ['kube', 'ours'] as const) expect((await callOn(side)('GET', collection(t, side))).code).toBe(200);
  for (const o of Object.values(owners)) {
    const cm = await kubeCall('POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: o.name } });
    expect(cm.code).toBe(201);
    o.uid = cm.body.metadata.uid;
  }
});

afterAll(async () => {
  // The CRDs go, and are waited for: a Website twin left behind would give later files' `kubectl get websites` two
  // groups to choose from (wire-formats.test.ts installs its own). Finalizers a failed run left are removed first, as
  // kube-apiserver deletes a CRD's objects before the CRD.
  for (const t of [FT, WS]) {
    for (const o of (await kubeCall('GET', collection(t, 'kube'))).body?.items ?? []) {
      if (o.metadata.finalizers?.length)
        await kubeCall('PATCH', `${collection(t, 'kube')}/${o.metadata.name}`, { metadata: { finalizers: null } }, PATCH_TYPES.merge);
    }
    const crd = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${t.plural}.${t.twin}`;
    await kubeCall('DELETE', crd);
    await waitFor(`CRD ${t.plural}.${t.twin} gone`, async () => (await kubeCall('GET', crd)).code === 404, 120_000, 250);
  }
  await kubeCall('DELETE', `/api/v1/namespaces/${NS}`);
  await kube.close();
  await app.close();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('server-side apply compared with kube-apiserver serving the same schema as a CRD', () => {
  describe('FlightTicket (testing.example.com)', () => {
    it('status.conditions, a list map keyed by type: an Update manager and two appliers', () =>
      compare(FT, 'conditions', 'conditions', conditionsSequence(FT, 'conditions')));
    it('metadata.finalizers, a set: three appliers and an Update manager', () => compare(FT, 'finalizers', 'finalizers', finalizersSequence(FT, 'finalizers')));
    it('metadata.ownerReferences, a list map keyed by uid: two appliers and an Update manager', () =>
      compare(FT, 'ownerReferences', 'owners', ownerReferencesSequence(FT, 'owners')));
    it('metadata.labels and annotations, granular maps: two appliers, the creator and an Update manager', () =>
      compare(FT, 'labels and annotations', 'labels', labelsSequence(FT, 'labels')));
    it('spec: list maps by one and two keys, a set, an atomic list, a granular and an atomic map; three appliers and an Update manager', () =>
      compare(FT, 'spec lists and maps', 'spec-lists', specListsSequence('spec-lists')));
    it('created by POST (Update entry), then a PUT, a merge patch and an applier', () =>
      compare(FT, 'create via POST', 'created-by-post', createSequence('created-by-post', 'POST')));
    it('created by apply (Apply entry), then a PUT, a merge patch and the applier again', () =>
      compare(FT, 'create via apply', 'created-by-apply', createSequence('created-by-apply', 'apply')));
    it('configurations that cannot be typed: duplicates in a set and a list map, an item without its key', () =>
      compare(FT, 'invalid configurations', 'invalid', invalidSequence('invalid')));
    it('edges: nulls, status and managedFields applied, a dry run, an empty list applied, an applier named as an Update manager, a managedFields reset', () =>
      compare(FT, 'edges', 'edges', edgesSequence('edges')));
    it('more than ten Update managers: the oldest fold into ancient-changes', () => compare(FT, 'update manager cap', 'cap', capSequence('cap')));
  });

  describe('Website (extensions.example.com, twin crd.example.com)', () => {
    it('status.conditions keyed by type', () => compare(WS, 'conditions', 'conditions', conditionsSequence(WS, 'conditions')));
    it('metadata.finalizers', () => compare(WS, 'finalizers', 'finalizers', finalizersSequence(WS, 'finalizers')));
    it('metadata.ownerReferences', () => compare(WS, 'ownerReferences', 'owners', ownerReferencesSequence(WS, 'owners')));
    it('spec.replicas through /scale beside an applier', () => compare(WS, 'scale', 'scale', scaleSequence('scale')));
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Through the aggregated path, with our reconciler writing Website status beside the appliers.

describe('through kube-apiserver to our server, with its reconcilers on', () => {
  const AGG_NS = `apply-agg-${suffix()}`;
  const base = `/apis/extensions.example.com/v1/namespaces/${AGG_NS}/websites`;
  const APPLY = PATCH_TYPES.apply;
  const RECONCILER = 'website-apiserver';
  const managers = (o: Json) => (o.metadata.managedFields ?? []).map((e: Json) => `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`);

  beforeAll(async () => {
    await reconcilersOn(env);
    expect((await kubeCall('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: AGG_NS } })).code).toBe(201);
  }, 300_000);
  afterAll(async () => {
    // The appliers' finalizers may be left by a failure: removed (the reconciler's own it removes itself on delete), so
    // the namespace is gone, with its Websites in our store, before the next file.
    const list = (await kubeCall('GET', base)).body;
    for (const w of list?.items ?? []) {
      const finalizers = (w.metadata.finalizers ?? []).filter((f: string) => !f.startsWith('example.com/'));
      await kubeCall('PATCH', `${base}/${w.metadata.name}`, { metadata: { finalizers, resourceVersion: w.metadata.resourceVersion } }, PATCH_TYPES.merge);
    }
    await kubeCall('DELETE', `/api/v1/namespaces/${AGG_NS}`);
    await waitFor(`namespace ${AGG_NS} gone`, async () => (await kubeCall('GET', `/api/v1/namespaces/${AGG_NS}`)).code === 404, 120_000, 500).catch(
      (e: unknown) => {
        process.stderr.write(`${String(e)}\n`);
      },
    );
    await reconcilersOff(env);
  }, 300_000);

  /** created makes a Website and waits for the reconciler's first status (its conditions and its status entry). */
  async function created(name: string): Promise<void> {
    const r = await kubeCall('POST', `${base}?fieldManager=creator`, obj(WS, name, { spec: WS.spec }));
    expect(r.code, JSON.stringify(r.body)).toBe(201);
    await waitFor(
      `the reconciler's status on ${name}`,
      async () => {
        const o = (await kubeCall('GET', `${base}/${name}`)).body;
        return o.status?.conditions?.some((c: Json) => c.type === 'Ready') && managers(o).includes(`${RECONCILER}/Update/status`);
      },
      60_000,
      200,
    );
  }

  /** settled reads the object once the reconciler has had its turn after the last write. */
  async function settled(name: string): Promise<Json> {
    await new Promise((r) => setTimeout(r, 3000));
    return (await kubeCall('GET', `${base}/${name}`)).body;
  }

  it("status.conditions: b's applied Custom condition is kept beside the reconciler's", async () => {
    await created('conditions');
    const r = await kubeCall(
      'PATCH',
      `${base}/conditions/status?fieldManager=b`,
      obj(WS, 'conditions', { status: { conditions: [condition('Custom', 'True', 'Mine')] } }),
      APPLY,
    );
    expect(r.code, JSON.stringify(r.body)).toBe(200);
    const o = await settled('conditions');
    expect(o.status.conditions.map((c: Json) => c.type)).toEqual(expect.arrayContaining(['Ready', 'Custom']));
    expect(managers(o)).toEqual(expect.arrayContaining([`${RECONCILER}/Update/status`, 'b/Apply/status']));
  });

  it("metadata.finalizers: both appliers' finalizers and entries are kept", async () => {
    await created('finalizers');
    for (const m of ['a', 'b']) {
      const r = await kubeCall(
        'PATCH',
        `${base}/finalizers?fieldManager=${m}`,
        obj(WS, 'finalizers', { metadata: { finalizers: [`example.com/${m}`] } }),
        APPLY,
      );
      expect(r.code, JSON.stringify(r.body)).toBe(200);
    }
    const o = await settled('finalizers');
    expect(o.metadata.finalizers).toEqual(expect.arrayContaining(['example.com/a', 'example.com/b']));
    expect(managers(o)).toEqual(expect.arrayContaining(['a/Apply', 'b/Apply', `${RECONCILER}/Update/status`]));
    for (const m of ['a', 'b']) await kubeCall('PATCH', `${base}/finalizers?fieldManager=${m}`, obj(WS, 'finalizers'), APPLY);
  });

  it("metadata.ownerReferences: both appliers' references and entries are kept", async () => {
    await created('owners');
    // Owners in this namespace, so kube's garbage collector does not take the Website for an orphan.
    const uids: Record<string, string> = {};
    for (const m of ['a', 'b']) {
      const cm = await kubeCall('POST', `/api/v1/namespaces/${AGG_NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `owner-${m}` } });
      expect(cm.code).toBe(201);
      uids[m] = cm.body.metadata.uid;
    }
    for (const m of ['a', 'b']) {
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: `owner-${m}`, uid: uids[m] };
      const r = await kubeCall('PATCH', `${base}/owners?fieldManager=${m}`, obj(WS, 'owners', { metadata: { ownerReferences: [ref] } }), APPLY);
      expect(r.code, JSON.stringify(r.body)).toBe(200);
    }
    const o = await settled('owners');
    expect(o.metadata.ownerReferences.map((r: Json) => r.uid)).toEqual(expect.arrayContaining([uids['a'], uids['b']]));
    expect(managers(o)).toEqual(expect.arrayContaining(['a/Apply', 'b/Apply', `${RECONCILER}/Update/status`]));
  });
});
