/**
 * kubectl as cluster admin against kube-apiserver, which proxies every websites request to our server through the
 * APIService: the verbs of the standalone kubectl test (test/kubectl.test.ts), now with discovery, table printing,
 * watches and subresources all going through aggregation.
 */
import { writeFileSync, chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';
import { API_VERSION, GR, GROUP, REPO, kubectlAs, table, websiteManifest } from './helpers-kubectl.js';

// kubectl reads and writes in the group's preferred version, v1; the manifests here are v1alpha1 (API_VERSION),
// which kubectl sends as they are.
const PREFERRED = `${GROUP}/v1`;
const V1_SPEC = { replicas: 1, git: { repository: REPO, syncIntervalSeconds: 60 }, service: { type: 'NodePort' } };

const env = e2e();
const k = kubectlAs(env.kubeconfig.admin);
// Namespaces of this file only (the suite shares one control plane).
const NS = 'e2e-kubectl';
const NS2 = 'e2e-kubectl-other';
const COLUMNS = ['NAME', 'GIT-REPO', 'READY', 'TYPE', 'PORT', 'STATUS', 'AGE'];
let work: string;

/** ok runs kubectl in NS and insists on exit 0 and no stderr. */
async function ok(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  const r = await k([...args, '-n', NS], opts);
  expect(r.stderr, `kubectl ${args.join(' ')}`).toBe('');
  expect(r.code, `kubectl ${args.join(' ')}`).toBe(0);
  return r.stdout;
}

/** getJson reads a Website back through kubectl. */
async function getJson(name: string, ns = NS): Promise<any> {
  return JSON.parse(await ok(['get', 'ws', name, '-o', 'json', ...(ns === NS ? [] : ['-n', ns])]));
}

const manifest = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) =>
  JSON.stringify(websiteManifest(name, spec, metadata));

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'e2e-kubectl-'));
  for (const ns of [NS, NS2]) {
    const r = await k(['create', 'namespace', ns]);
    expect(r.stdout.trim(), r.stderr).toBe(`namespace/${ns} created`);
  }
});

afterAll(async () => {
  // The namespace controller removes what the tests left behind; nothing here waits for it.
  await k(['delete', 'namespace', NS, NS2, '--wait=false', '--ignore-not-found']);
  k.dispose();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('kubectl as admin through kube-apiserver', () => {
  it('create, apply, apply again (unchanged) and apply --server-side, each printing what kubectl prints for a built-in', async () => {
    expect((await ok(['create', '-f', '-'], { input: manifest('created') })).trim()).toBe(`${GR}/created created`);
    const created = await getJson('created');
    expect(created.spec).toEqual(V1_SPEC);
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.metadata.generation).toBe(1);

    expect((await ok(['apply', '-f', '-'], { input: manifest('applied', { replicas: 1 }) })).trim()).toBe(`${GR}/applied created`);
    const before = await getJson('applied');
    expect((await ok(['apply', '-f', '-'], { input: manifest('applied', { replicas: 4 }) })).trim()).toBe(`${GR}/applied configured`);
    const after = await getJson('applied');
    expect(after.spec.replicas).toBe(4);
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.metadata.generation).toBe(2);
    const lastApplied = JSON.parse(after.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    expect(lastApplied).toMatchObject({
      apiVersion: API_VERSION,
      kind: 'Website',
      metadata: { name: 'applied', namespace: NS },
      spec: { gitRepo: REPO, replicas: 4 },
    });
    expect((await ok(['apply', '-f', '-'], { input: manifest('applied', { replicas: 4 }) })).trim()).toBe(`${GR}/applied unchanged`);
    expect((await getJson('applied')).metadata.resourceVersion).toBe(after.metadata.resourceVersion);

    expect((await ok(['apply', '--server-side', '-f', '-'], { input: manifest('ssa', { replicas: 2 }) })).trim()).toBe(`${GR}/ssa serverside-applied`);
    expect((await ok(['apply', '--server-side', '-f', '-'], { input: manifest('ssa', { replicas: 3 }) })).trim()).toBe(`${GR}/ssa serverside-applied`);
    const ssa = JSON.parse(await ok(['get', 'ws', 'ssa', '-o', 'json', '--show-managed-fields']));
    expect(ssa.spec.replicas).toBe(3);
    expect(ssa.metadata.generation).toBe(2);
    expect(ssa.metadata.managedFields).toContainEqual(
      expect.objectContaining({
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: API_VERSION,
        fieldsV1: { 'f:spec': { 'f:gitRepo': {}, 'f:replicas': {} } },
      }),
    );
    // Another manager owns replicas now, so applying our old value is a conflict kubectl explains.
    expect((await ok(['patch', 'ws', 'ssa', '--type', 'merge', '--field-manager=other', '-p', '{"spec":{"replicas":5}}'])).trim()).toBe(`${GR}/ssa patched`);
    const conflict = await k(['apply', '--server-side', '-n', NS, '-f', '-'], { input: manifest('ssa', { replicas: 3 }) });
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain(`error: Apply failed with 1 conflict: conflict with "other" using ${PREFERRED}: .spec.replicas`);
    expect((await getJson('ssa')).spec.replicas).toBe(5);
  });

  it('get prints the printer columns, get -A adds NAMESPACE across namespaces, -o wide adds BRANCH and DEPLOYMENT', async () => {
    await ok(['create', '-f', '-'], { input: manifest('kubia') });
    const other = await k(['create', '-n', NS2, '-f', '-'], { input: manifest('branched', { branch: 'main', serviceType: 'ClusterIP', replicas: 2 }) });
    expect(other.stdout.trim(), other.stderr).toBe(`${GR}/branched created`);
    const kubia = { NAME: 'kubia', 'GIT-REPO': REPO, READY: '0/1', TYPE: 'NodePort', PORT: '<none>', STATUS: 'Pending' };

    const plain = table(await ok(['get', 'websites']));
    expect(plain.header).toEqual(COLUMNS);
    const row = plain.rows.find((r) => r['NAME'] === 'kubia');
    expect(row).toMatchObject(kubia);
    expect(row?.['AGE']).toMatch(/^\d+s$/);

    const all = table(await ok(['get', 'ws', '-A']));
    expect(all.header).toEqual(['NAMESPACE', ...COLUMNS]);
    expect(all.rows).toContainEqual(expect.objectContaining({ NAMESPACE: NS, ...kubia }));
    expect(all.rows).toContainEqual(expect.objectContaining({ NAMESPACE: NS2, NAME: 'branched', READY: '0/2', TYPE: 'ClusterIP', STATUS: 'Pending' }));

    const wide = table(await ok(['get', 'ws', 'kubia', '-o', 'wide']));
    expect(wide.header).toEqual([...COLUMNS, 'BRANCH', 'DEPLOYMENT']);
    expect(wide.rows).toEqual([expect.objectContaining({ ...kubia, BRANCH: '', DEPLOYMENT: '' })]);
    const wideOther = table((await k(['get', 'ws', '-n', NS2, '-o', 'wide'])).stdout);
    expect(wideOther.rows).toEqual([expect.objectContaining({ NAME: 'branched', BRANCH: 'main', DEPLOYMENT: '' })]);

    const yaml = YAML.parse(await ok(['get', 'ws', 'kubia', '-o', 'yaml']));
    expect(yaml).toMatchObject({ apiVersion: PREFERRED, kind: 'Website', metadata: { name: 'kubia', namespace: NS, generation: 1 } });
    expect(yaml.metadata.resourceVersion).toMatch(/^[1-9]\d*$/);
  });

  it("describe prints metadata, the spec in kubectl's generic layout, and Events (none yet)", async () => {
    await ok(['create', '-f', '-'], { input: manifest('described', { branch: 'main' }, { labels: { app: 'kubia' } }) });
    const uid = (await getJson('described')).metadata.uid;
    const out = await ok(['describe', 'ws', 'described']);
    expect(out).toMatch(/^Name:\s+described$/m);
    expect(out).toMatch(new RegExp(`^Namespace:\\s+${NS}$`, 'm'));
    expect(out).toMatch(/^Labels:\s+app=kubia$/m);
    expect(out).toMatch(/^Annotations:\s+<none>$/m);
    expect(out).toMatch(new RegExp(`^API Version:\\s+${PREFERRED.replace(/\./g, '\\.')}$`, 'm'));
    expect(out).toMatch(/^Kind:\s+Website$/m);
    expect(out).toMatch(new RegExp(`^\\s+UID:\\s+${uid}$`, 'm'));
    expect(out).toMatch(/^Spec:$/m);
    // v1, kubectl's preferred version: the git fields under Git, the Service's under Service.
    expect(out).toMatch(/^\s+Git:$/m);
    expect(out).toMatch(/^\s+Branch:\s+main$/m);
    expect(out).toMatch(new RegExp(`^\\s+Repository:\\s+${REPO.replace(/\./g, '\\.')}$`, 'm'));
    expect(out).toMatch(/^\s+Replicas:\s+1$/m);
    expect(out).toMatch(/^\s+Service:\n\s+Type:\s+NodePort$/m);
    expect(out).toMatch(/^Events:\s+<none>$/m);
  });

  it('label, annotate, patch --type merge, patch --type json, scale and edit each change the object; only spec changes bump generation', async () => {
    await ok(['create', '-f', '-'], { input: manifest('verbs') });
    let prev = await getJson('verbs');
    const step = async (args: string[], printed: string, extraEnv?: NodeJS.ProcessEnv) => {
      expect((await ok(args, extraEnv ? { env: extraEnv } : {})).trim()).toBe(`${GR}/verbs ${printed}`);
      const before = prev;
      prev = await getJson('verbs');
      expect(BigInt(prev.metadata.resourceVersion) > BigInt(before.metadata.resourceVersion)).toBe(true);
      return { before, after: prev };
    };

    let s = await step(['label', 'ws', 'verbs', 'app=kubia', 'tier=web'], 'labeled');
    expect(s.after.metadata.labels).toEqual({ app: 'kubia', tier: 'web' });
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation);

    s = await step(['annotate', 'ws', 'verbs', 'example.com/note=hello'], 'annotated');
    expect(s.after.metadata.annotations).toEqual({ 'example.com/note': 'hello' });
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation);

    s = await step(['patch', 'ws', 'verbs', '--type', 'merge', '-p', '{"spec":{"git":{"branch":"main"}}}'], 'patched');
    expect(s.after.spec.git.branch).toBe('main');
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation + 1);

    s = await step(['patch', 'ws', 'verbs', '--type', 'json', '-p', '[{"op":"replace","path":"/spec/git/syncIntervalSeconds","value":30}]'], 'patched');
    expect(s.after.spec.git.syncIntervalSeconds).toBe(30);
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation + 1);

    // scale goes through the /scale subresource (autoscaling/v1 Scale), proxied like the rest.
    s = await step(['scale', 'ws', 'verbs', '--replicas=3'], 'scaled');
    expect(s.after.spec.replicas).toBe(3);
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation + 1);
    const scale = JSON.parse(await ok(['get', '--raw', `/apis/${API_VERSION}/namespaces/${NS}/websites/verbs/scale`]));
    expect(scale).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 3 } });

    const editor = join(work, 'editor.sh');
    writeFileSync(editor, '#!/bin/sh\nsed -i \'s/type: NodePort/type: ClusterIP/\' "$1"\n');
    chmodSync(editor, 0o755);
    s = await step(['edit', 'ws', 'verbs'], 'edited', { KUBE_EDITOR: editor });
    expect(s.after.spec.service.type).toBe('ClusterIP');
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation + 1);

    expect(s.after.spec).toEqual({ replicas: 3, git: { repository: REPO, branch: 'main', syncIntervalSeconds: 30 }, service: { type: 'ClusterIP' } });
    expect(s.after.metadata.labels).toEqual({ app: 'kubia', tier: 'web' });
    expect(s.after.metadata.generation).toBe(5);
  });

  it('patch without --type (strategic merge) fails with the 415 message kubectl prints for a custom type, changing nothing', async () => {
    await ok(['create', '-f', '-'], { input: manifest('smp') });
    const before = await getJson('smp');
    const r = await k(['patch', 'ws', 'smp', '-n', NS, '-p', '{"spec":{"replicas":4}}']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`application/strategic-merge-patch+json is not supported by ${PREFERRED}, Kind=Website`);
    expect(r.stderr).toContain(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json',
    );
    const after = await getJson('smp');
    expect(after.spec.replicas).toBe(1);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('get -w prints the current rows, then one row per create, update and delete; --output-watch-events names each change', async () => {
    const ns = NS2;
    const rowsOf = (out: string) =>
      out
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => l.trim().split(/\s+/));
    const plain = k.background(['get', 'ws', '-n', ns, '-w']);
    const events = k.background(['get', 'ws', '-n', ns, '-w', '--output-watch-events']);
    try {
      // Both have listed (branched exists from the table test); their watches start at the list's resourceVersion.
      await waitFor('both watches listed', () => /\bbranched\b/.test(plain.stdout()) && /\bbranched\b/.test(events.stdout()), 30_000, 100);
      const create = await k(['create', '-n', ns, '-f', '-'], { input: manifest('w1') });
      expect(create.stdout.trim(), create.stderr).toBe(`${GR}/w1 created`);
      expect((await k(['scale', 'ws', 'w1', '-n', ns, '--replicas=2'])).stdout.trim()).toBe(`${GR}/w1 scaled`);
      expect((await k(['delete', 'ws', 'w1', '-n', ns])).stdout.trim()).toBe(`${GR} "w1" deleted from ${ns} namespace`);
      await waitFor('the DELETED event', () => /^DELETED\s+w1\b/m.test(events.stdout()), 30_000, 100);
      await waitFor('three w1 rows', () => rowsOf(plain.stdout()).filter((r) => r[0] === 'w1').length >= 3, 30_000, 100);
    } finally {
      await plain.stop();
      await events.stop();
    }
    expect(plain.stderr()).toBe('');
    const prow = rowsOf(plain.stdout());
    expect(prow[0]).toEqual(COLUMNS);
    expect(prow[1]?.slice(0, 6)).toEqual(['branched', REPO, '0/2', 'ClusterIP', '<none>', 'Pending']);
    // added (0/1), scaled (0/2), deleted (last state, 0/2)
    expect(prow.filter((r) => r[0] === 'w1').map((r) => r.slice(0, 6))).toEqual([
      ['w1', REPO, '0/1', 'NodePort', '<none>', 'Pending'],
      ['w1', REPO, '0/2', 'NodePort', '<none>', 'Pending'],
      ['w1', REPO, '0/2', 'NodePort', '<none>', 'Pending'],
    ]);
    const erows = rowsOf(events.stdout());
    expect(erows[0]).toEqual(['EVENT', ...COLUMNS]);
    expect(erows.slice(1).map((r) => `${r[0]} ${r[1]}`)).toEqual(['ADDED branched', 'ADDED w1', 'MODIFIED w1', 'DELETED w1']);
  });

  it('wait --for=jsonpath returns after a patch, wait --for=condition=Ready after a /status merge patch sets the condition', async () => {
    await ok(['create', '-f', '-'], { input: manifest('waited') });
    const replicas = k.background(['wait', '-n', NS, '--for=jsonpath={.spec.replicas}=5', 'ws/waited', '--timeout=60s']);
    const ready = k.background(['wait', '-n', NS, '--for=condition=Ready', 'ws/waited', '--timeout=60s']);
    try {
      // No race with the patch below: kubectl wait reads the object first, then watches from that resourceVersion.
      expect(replicas.settled() || ready.settled()).toBe(false);
      expect((await ok(['patch', 'ws', 'waited', '--type', 'merge', '-p', '{"spec":{"replicas":5}}'])).trim()).toBe(`${GR}/waited patched`);
      const r = await replicas.result;
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe(`${GR}/waited condition met`);
      expect(ready.settled()).toBe(false);

      const condition = {
        type: 'Ready',
        status: 'True',
        reason: 'Test',
        message: 'set by the e2e test',
        lastTransitionTime: `${new Date().toISOString().slice(0, 19)}Z`,
      };
      const st = await ok(['patch', 'ws', 'waited', '--subresource=status', '--type', 'merge', '-p', JSON.stringify({ status: { conditions: [condition] } })]);
      expect(st.trim()).toBe(`${GR}/waited patched`);
      const c = await ready.result;
      expect(c.stderr).toBe('');
      expect(c.stdout.trim()).toBe(`${GR}/waited condition met`);
    } finally {
      await replicas.stop();
      await ready.stop();
    }
    const row = table(await ok(['get', 'ws', 'waited'])).rows[0];
    expect(row).toMatchObject({ READY: '0/5', STATUS: 'Ready' });
    // A /status write changes only status: spec and generation stay.
    const obj = await getJson('waited');
    expect(obj.metadata.generation).toBe(2);
    expect(obj.status.conditions).toEqual([expect.objectContaining({ type: 'Ready', status: 'True', reason: 'Test' })]);
  });

  it('delete (default --wait) returns only once the object is gone: right away without finalizers, after the finalizer is removed with one', async () => {
    await ok(['create', '-f', '-'], { input: manifest('plain') });
    const del = await k(['delete', 'ws', 'plain', '-n', NS]);
    expect(del.stderr).toBe('');
    expect(del.stdout.trim()).toBe(`${GR} "plain" deleted from ${NS} namespace`);
    const gone = await k(['get', 'ws', 'plain', '-n', NS]);
    expect(gone.code).toBe(1);
    expect(gone.stderr.trim()).toBe(`Error from server (NotFound): websites.${GROUP} "plain" not found`);

    await ok(['create', '-f', '-'], { input: manifest('held', {}, { finalizers: ['example.com/hold'] }) });
    const deleting = k.background(['delete', 'ws', 'held', '-n', NS, '--timeout=60s']);
    try {
      const terminating = await waitFor(
        'deletionTimestamp on held',
        async () => {
          const o = await getJson('held');
          return o.metadata.deletionTimestamp ? o : undefined;
        },
        30_000,
        100,
      );
      expect(terminating.metadata.finalizers).toEqual(['example.com/hold']);
      expect(table(await ok(['get', 'ws', 'held'])).rows[0]?.['STATUS']).toBe('Terminating');
      // kubectl is still waiting: the object exists.
      expect(deleting.settled()).toBe(false);
      expect((await ok(['patch', 'ws', 'held', '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]'])).trim()).toBe(`${GR}/held patched`);
      const r = await deleting.result;
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe(`${GR} "held" deleted from ${NS} namespace`);
    } finally {
      await deleting.stop();
    }
    expect((await k(['get', 'ws', 'held', '-n', NS])).stderr.trim()).toBe(`Error from server (NotFound): websites.${GROUP} "held" not found`);
  });
});
