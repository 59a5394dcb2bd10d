/**
 * The objects written before the hostile run, one of each shape a Website can have (labels and annotations,
 * finalizers, owner references, a status, server-side apply ownership, a generated name), and the checks made
 * after it: every fixture reads back byte-for-byte the same (resourceVersion included), the fixture namespace holds
 * nothing else, and every stored object still decodes into Go's types, as a metadata-only list (what client-go's
 * metadata informers, the garbage collector and the namespace controller read) and as a typed list.
 */
import { isDeepStrictEqual } from 'node:util';
import { API, type Fixture } from './cases.js';
import { goDecodeErrors, partialObjectMetadataList, websiteList } from './go-types.js';
import type { Client } from './runner.js';

const GV = 'extensions.example.com/v1alpha1';
const GIT = 'https://github.com/luksa/kubia-website-example.git';
const J = { 'content-type': 'application/json' };
const OTHER_NS = 'hostile-fx2';

async function call(client: Client, method: string, path: string, body?: unknown, headers: Record<string, string> = J) {
  const a = await client.send({
    method,
    path,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    expect: [],
  });
  let parsed: any;
  try {
    parsed = JSON.parse(a.text);
  } catch {
    parsed = undefined;
  }
  return { ...a, body: parsed };
}

const site = (name: string, metadata: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  apiVersion: GV,
  kind: 'Website',
  metadata: { name, ...metadata },
  spec: { gitRepo: GIT, ...spec },
});

/** OTHER_NAMESPACE holds one more fixture, outside every class's namespace. */
export const OTHER_NAMESPACE = OTHER_NS;

/** writeFixtures creates the fixtures in each namespace (plus one in OTHER_NAMESPACE) and reads them back. */
export async function writeFixtures(client: Client, namespaces: string[]): Promise<Fixture[]> {
  for (const ns of namespaces) await writeSet(client, ns);
  must(await call(client, 'POST', `${API}/namespaces/${OTHER_NS}/websites`, site('fx-other', { labels: { app: 'web' } })), 'fx-other');
  return readFixtures(client, [...namespaces, OTHER_NS]);
}

function must(r: { status: number; text: string }, what: string, codes = [200, 201]) {
  if (!codes.includes(r.status)) throw new Error(`writing fixture ${what}: HTTP ${r.status} ${r.text.slice(0, 400)}`);
}

async function writeSet(client: Client, ns: string): Promise<void> {
  const list = (ns: string) => `${API}/namespaces/${ns}/websites`;
  const creates = [
    site('fx-plain'),
    site('fx-labels', { labels: { app: 'web', tier: 'front' }, annotations: { note: 'ünïcødé ✓ 🙂', 'example.com/x': 'y' } }),
    site('fx-fin', { finalizers: ['example.com/keep'] }),
    site('fx-owner', {
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: '6f1c7a52-9a55-4b7e-8a39-2b3b4c5d6e7f', controller: true, blockOwnerDeletion: false },
      ],
    }),
    site('fx-spec', {}, { branch: 'main', replicas: 3, syncIntervalSeconds: 30, serviceType: 'ClusterIP', secretRef: { name: 'creds' } }),
    site('fx-status'),
    { ...site('', { generateName: 'fx-gen-' }), metadata: { generateName: 'fx-gen-', labels: { gen: 'yes' } } },
  ];
  for (const o of creates) must(await call(client, 'POST', list(ns), o), JSON.stringify(o.metadata));
  const status = await call(client, 'GET', `${list(ns)}/fx-status`);
  must(status, 'fx-status read');
  must(
    await call(client, 'PUT', `${list(ns)}/fx-status/status`, {
      ...status.body,
      status: {
        observedGeneration: 1,
        replicas: 1,
        readyReplicas: 1,
        selector: 'app=x',
        deployment: 'fx-status-website',
        service: 'fx-status-website',
        nodePort: 30080,
        conditions: [{ type: 'Ready', status: 'True', reason: 'Ok', message: 'fine', lastTransitionTime: '2020-01-01T00:00:00Z', observedGeneration: 1 }],
      },
    }),
    'fx-status status',
  );
  const apply = `apiVersion: ${GV}\nkind: Website\nmetadata:\n  name: fx-applied\n  labels:\n    owner: fixture\nspec:\n  gitRepo: ${GIT}\n  replicas: 2\n`;
  must(await call(client, 'PATCH', `${list(ns)}/fx-applied?fieldManager=fixture`, apply, { 'content-type': 'application/apply-patch+yaml' }), 'fx-applied');
}

/** readFixtures reads every object of the fixture namespaces. */
export async function readFixtures(client: Client, namespaces: string[]): Promise<Fixture[]> {
  const out: Fixture[] = [];
  for (const ns of namespaces) {
    const r = await call(client, 'GET', `${API}/namespaces/${ns}/websites`);
    if (r.status !== 200) throw new Error(`listing ${ns}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
    for (const item of r.body.items as Record<string, any>[]) {
      const one = await call(client, 'GET', `${API}/namespaces/${ns}/websites/${item.metadata.name}`);
      if (one.status !== 200) throw new Error(`reading ${ns}/${item.metadata.name}: HTTP ${one.status}`);
      out.push({ ns, name: item.metadata.name, object: one.body });
    }
  }
  return out;
}

/** fixtureChanges lists every difference between the fixtures before and after the run. */
export async function fixtureChanges(client: Client, before: Fixture[]): Promise<string[]> {
  const problems: string[] = [];
  const after = await readFixtures(client, [...new Set(before.map((f) => f.ns))]);
  const key = (f: Fixture) => `${f.ns}/${f.name}`;
  const afterByKey = new Map(after.map((f) => [key(f), f]));
  for (const f of before) {
    const now = afterByKey.get(key(f));
    if (!now) {
      problems.push(`${key(f)} is gone`);
      continue;
    }
    if (!isDeepStrictEqual(now.object, f.object)) {
      problems.push(`${key(f)} changed:\n  before ${JSON.stringify(f.object).slice(0, 600)}\n  after  ${JSON.stringify(now.object).slice(0, 600)}`);
    }
  }
  for (const f of after)
    if (!before.some((b) => key(b) === key(f))) problems.push(`${key(f)} appeared in a fixture namespace: ${JSON.stringify(f.object).slice(0, 300)}`);
  return problems;
}

/** decodeProblems lists every stored object that a Go client could not decode, as metadata and as a Website. */
export async function decodeProblems(client: Client): Promise<{ problems: string[]; items: number }> {
  const problems: string[] = [];
  const meta = await call(client, 'GET', `${API}/websites`, undefined, { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' });
  if (meta.status !== 200 || meta.body?.kind !== 'PartialObjectMetadataList') {
    problems.push(`metadata-only list: HTTP ${meta.status} ${meta.text.slice(0, 300)}`);
    return { problems, items: 0 };
  }
  for (const e of goDecodeErrors(meta.body, partialObjectMetadataList)) problems.push(`metadata-only list: ${e}`);
  const full = await call(client, 'GET', `${API}/websites`);
  if (full.status !== 200) problems.push(`list: HTTP ${full.status} ${full.text.slice(0, 300)}`);
  else {
    for (const e of goDecodeErrors(full.body, websiteList)) problems.push(`typed list: ${e}`);
    if (full.body.items.length !== meta.body.items.length)
      problems.push(`the metadata list has ${meta.body.items.length} items, the list ${full.body.items.length}`);
  }
  return { problems, items: meta.body.items.length as number };
}
