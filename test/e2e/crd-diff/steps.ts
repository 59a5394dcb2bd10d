/**
 * @module e2e/crd-diff/steps
 * The request sequence for one CRD: discovery, then in every served version the examples created, read, listed (also
 * as Tables and by field selectors), updated (PUT, merge patch, JSON patch), applied by two managers (an added list
 * item, a conflict, a force), their status and scale written, the generated invalid objects and the CEL cases
 * refused, and everything deleted. A step computes its request on each side from that side's own state (the object
 * it read, the name it generated), so the two sequences run the same steps on different servers.
 */
import { celTests, type CrdCase, type Json, type ServedVersion } from './corpus.js';
import { listEdit, nest, scalarEdit, statusOf, transitionEdits } from './edits.js';
import { invalidsOf, selectInvalid } from './invalid.js';
import { at, pointer, setAt } from './schema-walk.js';
import type { Call, Caller, Reply, Side } from './sides.js';

export interface SideCtx {
  side: Side;
  call: Caller;
  memo: Map<string, Json>;
}
export interface Step {
  title: string;
  run: (ctx: SideCtx) => Promise<Reply>;
  /** The part of each side's body compared (discovery documents list every group a server serves). */
  pick?: (body: Json) => Json;
}

export const PATCH = { apply: 'application/apply-patch+yaml', merge: 'application/merge-patch+json', json: 'application/json-patch+json' } as const;
export const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
/** At most this many generated invalid objects per served version. */
export const INVALID_BOUND = 30;

const send =
  (call: Call): Step['run'] =>
  (ctx) =>
    ctx.call(call);
const step = (title: string, call: Call): Step => ({ title, run: send(call) });
/** withCurrent reads the object first, then sends what `make` builds from it. */
const withCurrent = (title: string, path: string, make: (cur: Json) => Call): Step => ({
  title,
  run: async (ctx) => {
    const cur = await ctx.call({ method: 'GET', path });
    if (cur.code !== 200) return cur;
    return ctx.call(make(cur.body));
  },
});
const q = (path: string, query: Record<string, string>) => `${path}?${new URLSearchParams(query)}`;

/** sequence lists every step for one CRD, in namespace `ns` when it is namespaced. */
export function sequence(c: CrdCase, ns: string): Step[] {
  // Two CRDs of the corpus share a group (gateways and gatewayclasses, shirts and crontabs) and are on kube-apiserver
  // together: a discovery document is compared on this CRD's group, and in it on this CRD's resources.
  const mine = (name: string) => name === c.plural || name.startsWith(`${c.plural}/`);
  const ofGroup = (body: Json) => {
    if (Array.isArray(body?.groups)) return body.groups.filter((g: Json) => g.name === c.group);
    if (!Array.isArray(body?.items)) return body;
    return body.items
      .filter((g: Json) => g.metadata?.name === c.group)
      .map((g: Json) => ({
        ...g,
        versions: (g.versions ?? []).map((v: Json) => ({ ...v, resources: (v.resources ?? []).filter((r: Json) => mine(r.resource)) })),
      }));
  };
  const ofResources = (body: Json) => (Array.isArray(body?.resources) ? { ...body, resources: body.resources.filter((r: Json) => mine(r.name)) } : body);
  const steps: Step[] = [
    { ...step(`discovery: GET /apis, the group ${c.group} in it`, { method: 'GET', path: '/apis' }), pick: ofGroup },
    {
      ...step(`discovery: GET /apis aggregated (apidiscovery.k8s.io/v2), the group ${c.group} in it`, { method: 'GET', path: '/apis', accept: AGGREGATED }),
      pick: ofGroup,
    },
    step(`discovery: GET /apis/${c.group}`, { method: 'GET', path: `/apis/${c.group}` }),
  ];
  for (const v of c.versions)
    steps.push({
      ...step(`discovery: GET /apis/${c.group}/${v.name}, the resources of ${c.plural}`, { method: 'GET', path: `/apis/${c.group}/${v.name}` }),
      pick: ofResources,
    });
  for (const v of c.versions) {
    const doc = `/openapi/v3/apis/${c.group}/${v.name}`;
    steps.push({ ...step(`OpenAPI v3 ${doc}: the schema of ${c.kind}`, { method: 'GET', path: doc }), pick: (b: Json) => kindSchema(b, c.kind) });
    steps.push({ ...step(`OpenAPI v3 ${doc}: the paths of ${c.plural}`, { method: 'GET', path: doc }), pick: (b: Json) => pathsOf(b, c.plural) });
  }
  for (const v of c.versions) steps.push(...versionSteps(c, v, ns));
  return steps;
}

/** kindSchema is the one component of an OpenAPI v3 document named for the kind (`io.k8s.networking.gateway.v1.Gateway`), by name. */
export function kindSchema(doc: Json, kind: string): Json {
  const schemas = doc?.components?.schemas;
  if (!schemas || typeof schemas !== 'object') return doc;
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => name.endsWith(`.${kind}`)));
}

/** pathsOf is the paths of an OpenAPI v3 document that serve `plural` (two CRDs of the corpus share a group). */
const pathsOf = (doc: Json, plural: string): Json =>
  doc?.paths && typeof doc.paths === 'object' ? Object.fromEntries(Object.entries(doc.paths).filter(([p]) => new RegExp(`/${plural}(/|$)`).test(p))) : doc;

function versionSteps(c: CrdCase, v: ServedVersion, ns: string): Step[] {
  const apiVersion = `${c.group}/${v.name}`;
  const base = `/apis/${apiVersion}${c.namespaced ? `/namespaces/${ns}` : ''}/${c.plural}`;
  const objPath = (name: string) => `${base}/${name}`;
  const V = `[${v.name}]`;
  const prepare = (ex: Json, name: string): Json => {
    const o = structuredClone(ex);
    o.apiVersion = apiVersion;
    o.metadata = { ...o.metadata, name };
    if (c.namespaced) o.metadata.namespace = ns;
    else delete o.metadata.namespace;
    return o;
  };
  // The examples written in this version, or all of them in it when none is.
  const own = c.examples.filter((e) => e.apiVersion === apiVersion);
  const names = new Set<string>();
  const examples = (own.length ? own : c.examples).map((ex, i) => {
    let name = `${v.name}-${ex.metadata?.name ?? `example${i}`}`;
    if (names.has(name)) name = `${name}-${i}`;
    names.add(name);
    return { name, object: prepare(ex, name) };
  });
  const steps: Step[] = [];
  const s = (title: string, call: Call) => steps.push(step(`${V} ${title}`, call));

  // Create, read, list.
  if (examples[0]) s(`create example ${examples[0].name} as a dry run`, { method: 'POST', path: q(base, { dryRun: 'All' }), body: examples[0].object });
  for (const e of examples) s(`create example ${e.name} (POST)`, { method: 'POST', path: base, body: e.object });
  if (examples[0]) s(`create example ${examples[0].name} again (exists)`, { method: 'POST', path: base, body: examples[0].object });
  for (const e of examples) s(`GET ${e.name} (defaults applied)`, { method: 'GET', path: objPath(e.name) });
  s('list', { method: 'GET', path: base });
  s('list as Table', { method: 'GET', path: base, accept: TABLE });
  const first = examples[0];
  if (first) s(`GET ${first.name} as Table`, { method: 'GET', path: objPath(first.name), accept: TABLE });
  s('GET an object that does not exist', { method: 'GET', path: objPath('does-not-exist') });

  // Field selectors: metadata.name, metadata.namespace, each selectable field, and one not supported.
  if (first) {
    s(`list with fieldSelector metadata.name=${first.name}`, { method: 'GET', path: q(base, { fieldSelector: `metadata.name=${first.name}` }) });
    s(`list with fieldSelector metadata.name!=${first.name}`, { method: 'GET', path: q(base, { fieldSelector: `metadata.name!=${first.name}` }) });
  }
  if (c.namespaced) s('list with fieldSelector metadata.namespace', { method: 'GET', path: q(base, { fieldSelector: `metadata.namespace=${ns}` }) });
  for (const f of v.selectableFields) {
    const value = first ? at(first.object, f.replace(/^\./, '').split('.')) : undefined;
    const sel = `${f.replace(/^\./, '')}=${value === undefined || typeof value === 'object' ? 'none' : String(value)}`;
    s(`list with selectable field ${sel}`, { method: 'GET', path: q(base, { fieldSelector: sel }) });
    s(`list as Table with selectable field ${sel}`, { method: 'GET', path: q(base, { fieldSelector: sel }), accept: TABLE });
  }
  s('list with an unsupported fieldSelector spec.unknownSelector=x', { method: 'GET', path: q(base, { fieldSelector: 'spec.unknownSelector=x' }) });

  // A generated name (normalised), deleted at once so that lists stay in the same order on both sides.
  if (first) {
    const gen = structuredClone(first.object);
    gen.metadata = { ...gen.metadata, generateName: `${v.name}-gen-` };
    delete gen.metadata.name;
    steps.push({
      title: `${V} create with generateName (POST)`,
      run: async (ctx) => {
        const r = await ctx.call({ method: 'POST', path: base, body: gen });
        if (r.code === 201) ctx.memo.set(`${v.name}-gen`, r.body.metadata.name);
        return r;
      },
    });
    steps.push({
      title: `${V} delete the generated-name object`,
      run: async (ctx) => ctx.call({ method: 'DELETE', path: objPath(ctx.memo.get(`${v.name}-gen`) ?? `${v.name}-gen-none`) }),
    });
  }

  // Updates on the first example.
  if (first) {
    const p = objPath(first.name);
    const edit = scalarEdit(v.schema, first.object);
    const change = (o: Json, to: 'to' | 'from') => (edit ? setAt(o, edit.path, edit[to]) : o);
    const what = edit ? `${edit.path.join('.')} ${JSON.stringify(edit.from)} → ${JSON.stringify(edit.to)}` : 'a label only (no scalar to change)';
    steps.push(
      withCurrent(`${V} PUT with a change: ${what}`, p, (cur) => ({
        method: 'PUT',
        path: p,
        body: change({ ...cur, metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, changed: 'put' } } }, 'to'),
      })),
    );
    steps.push(
      withCurrent(`${V} PUT with a stale resourceVersion`, p, (cur) => ({
        method: 'PUT',
        path: p,
        body: { ...cur, metadata: { ...cur.metadata, resourceVersion: '1' } },
      })),
    );
    steps.push(
      withCurrent(`${V} PUT without a resourceVersion, the name in the body differing`, p, (cur) => ({
        method: 'PUT',
        path: p,
        body: { ...cur, metadata: { ...cur.metadata, name: 'another-name', resourceVersion: undefined } },
      })),
    );
    s(`merge patch: ${edit ? `${edit.path.join('.')} back, ` : ''}a label`, {
      method: 'PATCH',
      path: p,
      contentType: PATCH.merge,
      body: { metadata: { labels: { merged: 'yes' } }, ...(edit ? nest(edit.path, edit.from) : {}) },
    });
    s(`JSON patch: a label added${edit ? `, ${edit.path.join('.')} replaced` : ''}`, {
      method: 'PATCH',
      path: p,
      contentType: PATCH.json,
      body: [{ op: 'add', path: '/metadata/labels/jsonpatched', value: 'yes' }, ...(edit ? [{ op: 'replace', path: pointer(edit.path), value: edit.to }] : [])],
    });
    s('JSON patch whose test fails', {
      method: 'PATCH',
      path: p,
      contentType: PATCH.json,
      body: [{ op: 'test', path: '/metadata/name', value: 'not-this-name' }],
    });
    s('merge patch that is not JSON', { method: 'PATCH', path: p, contentType: PATCH.merge, body: '{"spec": ' });
    s(`GET ${first.name} after the updates`, { method: 'GET', path: p });

    // Server-side apply by two managers.
    const applied = `${v.name}-applied`;
    const ap = objPath(applied);
    const config = prepare(first.object, applied);
    delete config.status;
    const apply = (title: string, manager: string, body: Json, force = false) =>
      s(`${manager} ${force ? 'force-' : ''}applies ${title}`, {
        method: 'PATCH',
        path: q(ap, { fieldManager: manager, ...(force ? { force: 'true' } : {}) }),
        contentType: PATCH.apply,
        body,
      });
    const head = { apiVersion, kind: c.kind, metadata: { name: applied, ...(c.namespaced ? { namespace: ns } : {}) } };
    apply('the example (creates it)', 'a', config);
    const le = listEdit(v.schema, config);
    if (le) apply(`an item added to the ${le.type === 'map' ? 'list map' : 'set'} ${le.path.join('.')}`, 'b', { ...head, ...nest(le.path, [le.item]) });
    if (edit) {
      apply(`${edit.path.join('.')} changed (conflict with a)`, 'b', { ...head, ...nest(edit.path, edit.to) });
      apply(`${edit.path.join('.')} changed`, 'b', { ...head, ...nest(edit.path, edit.to) }, true);
      apply('the example again (conflict with b)', 'a', config);
    }
    apply('a label only', 'b', { ...head, metadata: { ...head.metadata, labels: { by: 'b' } } });
    s(`GET ${applied} (managedFields of both)`, { method: 'GET', path: ap });

    // Status.
    if (v.status) {
      s(`GET ${first.name}/status`, { method: 'GET', path: `${p}/status` });
      steps.push(
        withCurrent(`${V} PUT /status (a spec change beside it is ignored)`, p, (cur) => ({
          method: 'PUT',
          path: `${p}/status`,
          body: { ...change(cur, 'from'), metadata: { ...cur.metadata, labels: { ...cur.metadata.labels, fromStatus: 'ignored' } }, status: statusOf(v, 2) },
        })),
      );
      s('merge patch /status', { method: 'PATCH', path: `${p}/status`, contentType: PATCH.merge, body: { status: statusOf(v, 3) } });
      s('merge patch /status with a status of the wrong type', {
        method: 'PATCH',
        path: `${p}/status`,
        contentType: PATCH.merge,
        body: { status: 'not-an-object' },
      });
      s('s applies /status', {
        method: 'PATCH',
        path: q(`${p}/status`, { fieldManager: 's', force: 'true' }),
        contentType: PATCH.apply,
        body: { apiVersion, kind: c.kind, metadata: { name: first.name }, status: statusOf(v, 4) },
      });
      s(`GET ${first.name} (status written)`, { method: 'GET', path: p });
    } else {
      s('GET /status where there is no status subresource', { method: 'GET', path: `${p}/status` });
    }

    // Scale.
    if (v.scale) {
      s(`GET ${first.name}/scale`, { method: 'GET', path: `${p}/scale` });
      steps.push(
        withCurrent(`${V} PUT /scale to 3 replicas`, `${p}/scale`, (cur) => ({ method: 'PUT', path: `${p}/scale`, body: { ...cur, spec: { replicas: 3 } } })),
      );
      s('merge patch /scale to 4 replicas', { method: 'PATCH', path: `${p}/scale`, contentType: PATCH.merge, body: { spec: { replicas: 4 } } });
      s('JSON patch /scale to 5 replicas', {
        method: 'PATCH',
        path: `${p}/scale`,
        contentType: PATCH.json,
        body: [{ op: 'replace', path: '/spec/replicas', value: 5 }],
      });
      s('merge patch /scale to -1 replicas', { method: 'PATCH', path: `${p}/scale`, contentType: PATCH.merge, body: { spec: { replicas: -1 } } });
      s(`GET ${first.name} (replicas from /scale)`, { method: 'GET', path: p });
    } else {
      s('GET /scale where there is no scale subresource', { method: 'GET', path: `${p}/scale` });
    }

    // Transition rules (oldSelf) broken by an update.
    for (const t of transitionEdits(v.schema, first.object)) {
      steps.push(
        withCurrent(`${V} PUT breaking the transition rule ${JSON.stringify(t.rule)}: ${t.path.join('.')} → ${JSON.stringify(t.to)}`, p, (cur) => ({
          method: 'PUT',
          path: p,
          body: setAt(cur, t.path, t.to),
        })),
      );
    }
  }

  // A body with a field given twice, which only Strict refuses.
  if (first) {
    const twice = `${JSON.stringify(setAt(first.object, ['metadata', 'name'], `${v.name}-twice`)).slice(0, -1)},"kind":${JSON.stringify(c.kind)}}`;
    s('create with a duplicate field, fieldValidation=Strict', { method: 'POST', path: q(base, { fieldValidation: 'Strict' }), body: twice });
  }

  // Invalid objects, generated from the schema.
  const invalid = selectInvalid(
    examples.flatMap((e) => invalidsOf(v.schema, e.object)),
    INVALID_BOUND,
  );
  invalid.forEach((inv, i) => {
    const name = `${v.name}-invalid-${String(i).padStart(2, '0')}`;
    const body = setAt(inv.object, ['metadata', 'name'], name);
    s(`invalid (${inv.category}): ${inv.title}`, {
      method: 'POST',
      path: inv.fieldValidation ? q(base, { fieldValidation: inv.fieldValidation }) : base,
      body,
    });
  });

  // The upstream CEL cases, where the CRD's project ships them.
  if (c.celTestsDir) {
    const cases = celTests(c.celTestsDir);
    for (const t of cases.single) s(`CEL case ${t.name} (POST)`, { method: 'POST', path: base, body: prepare(t.object, `${v.name}-cel-${t.name}`) });
    for (const t of cases.pairs) {
      const name = `${v.name}-celtx-${t.name}`;
      s(`CEL case ${t.name}: pre (POST)`, { method: 'POST', path: base, body: prepare(t.pre, name) });
      steps.push(
        withCurrent(`${V} CEL case ${t.name}: post (PUT)`, objPath(name), (cur) => ({
          method: 'PUT',
          path: objPath(name),
          body: { ...prepare(t.post, name), metadata: { ...prepare(t.post, name).metadata, resourceVersion: cur.metadata.resourceVersion } },
        })),
      );
    }
  }

  // Delete.
  for (const e of examples) s(`delete ${e.name}`, { method: 'DELETE', path: objPath(e.name) });
  if (first) s(`GET ${first.name} after its delete`, { method: 'GET', path: objPath(first.name) });
  s('delete an object that does not exist', { method: 'DELETE', path: objPath('does-not-exist') });
  s('delete the rest (collection)', { method: 'DELETE', path: base });
  s('list after deleting all', { method: 'GET', path: base });
  return steps;
}
