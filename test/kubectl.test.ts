/**
 * The real kubectl binary against a real standalone server over HTTPS: discovery, explain, create/apply,
 * table printing, every mutating verb users reach for, validation messages, deletion with and without
 * finalizers, watch, wait, selectors, dry-run and diff, and today's answer to server-side apply.
 * Every test asserts on what kubectl printed or on the object state afterwards, never on exit codes alone.
 */
import { spawn } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { adminAgent, API, call, cleanupTempDirs, startServer, tempDir, website, type ServerProcess } from './helpers/server-process.js';
import { table } from './helpers/kubectl-table.js';

let server: ServerProcess;
let agent: Agent;
let work: string;

const GR = 'website.extensions.example.com';
const REPO = 'https://github.com/luksa/kubia-website-example.git';
const MERGE = { 'content-type': 'application/merge-patch+json' };
// kubectl reads and writes a kind in its group's preferred version, v1, unless told otherwise; the manifests here
// are v1alpha1 (the helpers' website()), which kubectl sends as they are.
const PREFERRED = '/apis/extensions.example.com/v1';
const V1_SPEC = { replicas: 1, git: { repository: REPO, syncIntervalSeconds: 60 }, service: { type: 'NodePort' } };

beforeAll(async () => {
  server = await startServer();
  agent = adminAgent(server.certDir);
  work = tempDir('ws-kubectl-');
});
afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

/** KubectlResult is what one kubectl run printed and how it ended (code -1: killed by our safety timeout). */
interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface KubectlOptions {
  /** written to stdin, then stdin is closed */
  input?: string;
  env?: Record<string, string>;
  /** safety net: SIGTERM after this long (default 30 s) */
  timeoutMs?: number;
  /** run `command` instead of kubectl (e.g. `timeout`), args unchanged */
  command?: string;
}

/** spawnKubectl starts kubectl against our server; stdout() shows output so far, result settles at exit and never rejects. */
function spawnKubectl(args: string[], o: KubectlOptions = {}) {
  const proc = spawn(o.command ?? 'kubectl', args, {
    env: { ...process.env, KUBECONFIG: server.kubeconfig, KUBECACHEDIR: join(work, 'cache'), ...o.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  proc.stdin.on('error', () => {});
  proc.stdin.end(o.input ?? '');
  const timer = setTimeout(() => proc.kill('SIGTERM'), o.timeoutMs ?? 30_000);
  let settled = false;
  const result = new Promise<KubectlResult>((res) => {
    const finish = (code: number) => {
      clearTimeout(timer);
      settled = true;
      res({ code, stdout, stderr });
    };
    proc.on('error', (e) => {
      stderr += String(e);
      finish(-1);
    });
    proc.on('close', (code) => finish(code ?? -1));
  });
  return { proc, stdout: () => stdout, settled: () => settled, result };
}

/** kubectl runs kubectl to completion and returns {code, stdout, stderr}; it never throws. */
function kubectl(args: string[], o: KubectlOptions = {}): Promise<KubectlResult> {
  return spawnKubectl(args, o).result;
}

/** file writes a manifest (object → JSON, string → as is) into the work dir and returns its path. */
let files = 0;
function file(content: unknown): string {
  const p = join(work, `m${++files}.yaml`);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return p;
}

/** getJson reads an object back through kubectl -o json. */
async function getJson(ns: string, name: string): Promise<any> {
  const r = await kubectl(['get', 'ws', name, '-n', ns, '-o', 'json']);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout);
}

const url = (ns: string, name = '') => `${server.url}${API}/namespaces/${ns}/websites${name ? `/${name}` : ''}`;

/** seed creates a Website directly over HTTPS (setup that is not under test). */
async function seed(ns: string, name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
  const r = await call(agent, url(ns), 'POST', website(name, spec, metadata));
  expect(r.status, r.text).toBe(201);
  return r.body;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** until polls cond every 50 ms until true or the deadline. */
async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

describe('kubectl against a standalone server', () => {
  it('api-resources lists websites with short name ws, its group version, namespaced true and kind Website', async () => {
    const r = await kubectl(['api-resources', '--api-group=extensions.example.com']);
    expect(r.code, r.stderr).toBe(0);
    const t = table(r.stdout);
    expect(t.header).toEqual(['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
    expect(t.rows).toEqual([{ NAME: 'websites', SHORTNAMES: 'ws', APIVERSION: 'extensions.example.com/v1', NAMESPACED: 'true', KIND: 'Website' }]);
  });

  it('explain prints the description of website.spec.git.repository and lists every field of website.spec, in v1 and with --api-version in v1alpha1', async () => {
    const field = await kubectl(['explain', 'website.spec.git.repository']);
    expect(field.code, field.stderr).toBe(0);
    expect(field.stdout).toMatch(/GROUP:\s+extensions\.example\.com/);
    expect(field.stdout).toMatch(/KIND:\s+Website/);
    expect(field.stdout).toMatch(/VERSION:\s+v1\n/);
    expect(field.stdout).toContain('FIELD: repository <string>');
    expect(field.stdout.replace(/\s+/g, ' ')).toContain('Repository is the URL of the git repository holding the site');

    const spec = await kubectl(['explain', 'ws.spec']);
    expect(spec.code, spec.stderr).toBe(0);
    expect(spec.stdout).toContain('WebsiteSpec is the desired state of a Website.');
    expect(spec.stdout).toMatch(/git\s+<Object> -required-/);
    for (const f of ['git', 'replicas', 'service']) expect(spec.stdout).toMatch(new RegExp(`^  ${f}\\s+<(Object|integer)>`, 'm'));
    const service = await kubectl(['explain', 'ws.spec.service']);
    expect(service.stdout).toMatch(/enum: NodePort, ClusterIP, LoadBalancer/);
    expect(service.stdout).toMatch(/^ {2}nodePort\s+<integer>/m);

    const alpha = await kubectl(['explain', 'website.spec', '--api-version=extensions.example.com/v1alpha1']);
    expect(alpha.code, alpha.stderr).toBe(0);
    expect(alpha.stdout).toMatch(/VERSION:\s+v1alpha1/);
    expect(alpha.stdout).toMatch(/gitRepo\s+<string> -required-/);
    expect(alpha.stdout).toMatch(/enum: NodePort, ClusterIP, LoadBalancer/);
    for (const f of ['branch', 'gitRepo', 'replicas', 'serviceType', 'syncIntervalSeconds']) {
      expect(alpha.stdout).toMatch(new RegExp(`^  ${f}\\s+<(string|integer)>`, 'm'));
    }
    const alphaField = await kubectl(['explain', 'website.spec.gitRepo', '--api-version=extensions.example.com/v1alpha1']);
    expect(alphaField.stdout.replace(/\s+/g, ' ')).toContain('GitRepo is the URL of the git repository holding the site');
  });

  it('get websites.v1alpha1.extensions.example.com reads the same objects in v1alpha1; a v1 manifest and a v1alpha1 one describe one object', async () => {
    const ns = 'kt-versions';
    await seed(ns, 'alpha', { branch: 'main' }, { annotations: { 'extensions.example.com/node-port': '30080' } });
    const v1 = {
      apiVersion: 'extensions.example.com/v1',
      kind: 'Website',
      metadata: { name: 'one' },
      spec: { git: { repository: REPO }, service: { nodePort: 30081 } },
    };
    expect((await kubectl(['apply', '-n', ns, '-f', file(v1)])).stdout.trim()).toBe(`${GR}/one created`);

    const asAlpha = await kubectl(['get', 'websites.v1alpha1.extensions.example.com', '-n', ns, '-o', 'json']);
    expect(asAlpha.code, asAlpha.stderr).toBe(0);
    const alphaItems = JSON.parse(asAlpha.stdout).items;
    expect(alphaItems.map((i: any) => [i.apiVersion, i.metadata.name])).toEqual([
      ['extensions.example.com/v1alpha1', 'alpha'],
      ['extensions.example.com/v1alpha1', 'one'],
    ]);
    expect(alphaItems[1].spec).toEqual({ gitRepo: REPO, replicas: 1, serviceType: 'NodePort', syncIntervalSeconds: 60 });
    expect(alphaItems[1].metadata.annotations['extensions.example.com/node-port']).toBe('30081');

    const asV1 = JSON.parse((await kubectl(['get', 'websites', '-n', ns, '-o', 'json'])).stdout).items;
    expect(asV1.map((i: any) => i.apiVersion)).toEqual(['extensions.example.com/v1', 'extensions.example.com/v1']);
    expect(asV1[0].spec).toEqual({ ...V1_SPEC, git: { ...V1_SPEC.git, branch: 'main' }, service: { type: 'NodePort', nodePort: 30080 } });
    expect(asV1[0].metadata.annotations?.['extensions.example.com/node-port']).toBeUndefined();
    expect(asV1.map((i: any) => i.metadata.resourceVersion)).toEqual(alphaItems.map((i: any) => i.metadata.resourceVersion));

    const table1 = table((await kubectl(['get', 'websites.v1alpha1.extensions.example.com', '-n', ns, '-o', 'wide'])).stdout);
    expect(table1.rows.map((r) => [r.NAME, r['GIT-REPO'], r.BRANCH])).toEqual([
      ['alpha', REPO, 'main'],
      ['one', REPO, ''],
    ]);

    // A v1 field set through v1alpha1: patching the annotation there moves spec.service.nodePort in v1.
    const patched = await kubectl([
      'annotate',
      '--overwrite',
      'websites.v1alpha1.extensions.example.com',
      'one',
      '-n',
      ns,
      'extensions.example.com/node-port=30099',
    ]);
    expect(patched.stdout.trim()).toBe(`${GR}/one annotated`);
    expect((await getJson(ns, 'one')).spec.service).toEqual({ type: 'NodePort', nodePort: 30099 });
  });

  it('create -f creates, and apply -f twice configures the object with the new replicas and the last-applied annotation', async () => {
    const ns = 'kt-apply';
    const created = await kubectl(['create', '-n', ns, '-f', file(website('created'))]);
    expect(created.stdout.trim()).toBe(`${GR}/created created`);
    expect((await getJson(ns, 'created')).spec).toEqual(V1_SPEC);

    const first = await kubectl(['apply', '-n', ns, '-f', file(website('applied', { replicas: 1 }))]);
    expect(first.stdout.trim()).toBe(`${GR}/applied created`);
    expect(first.stderr).toBe('');
    const before = await getJson(ns, 'applied');

    const second = await kubectl(['apply', '-n', ns, '-f', file(website('applied', { replicas: 4 }))]);
    expect(second.stdout.trim()).toBe(`${GR}/applied configured`);
    expect(second.stderr).toBe('');
    const after = await getJson(ns, 'applied');
    expect(after.spec.replicas).toBe(4);
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.metadata.generation).toBe(before.metadata.generation + 1);
    const lastApplied = JSON.parse(after.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    expect(lastApplied.spec).toEqual({ gitRepo: REPO, replicas: 4 });
    expect(lastApplied.metadata).toMatchObject({ name: 'applied', namespace: ns });

    // Applying the same file again is a no-op.
    const again = await kubectl(['apply', '-n', ns, '-f', file(website('applied', { replicas: 4 }))]);
    expect(again.stdout.trim()).toBe(`${GR}/applied unchanged`);
    expect((await getJson(ns, 'applied')).metadata.resourceVersion).toBe(after.metadata.resourceVersion);
  });

  it('get websites and get ws -A print the printer columns, -o wide adds BRANCH and DEPLOYMENT, and rows show repo, 0/1, NodePort, <none>, NoCluster', async () => {
    // The only test that uses the default namespace, so the kubeconfig's context namespace applies.
    await seed('default', 'kubia');
    await seed('kt-wide', 'branched', { branch: 'main', serviceType: 'ClusterIP', replicas: 2 });
    const row = { NAME: 'kubia', 'GIT-REPO': REPO, READY: '0/1', TYPE: 'NodePort', PORT: '<none>', STATUS: 'NoCluster' };

    const plain = await kubectl(['get', 'websites']);
    expect(plain.code, plain.stderr).toBe(0);
    const t = table(plain.stdout);
    expect(t.header).toEqual(['NAME', 'GIT-REPO', 'READY', 'TYPE', 'PORT', 'STATUS', 'AGE']);
    expect(t.rows).toHaveLength(1);
    expect(t.rows[0]).toMatchObject(row);
    expect(t.rows[0]?.AGE).toMatch(/^\d+s$/);

    const all = table((await kubectl(['get', 'ws', '-A'])).stdout);
    expect(all.header).toEqual(['NAMESPACE', 'NAME', 'GIT-REPO', 'READY', 'TYPE', 'PORT', 'STATUS', 'AGE']);
    expect(all.rows).toContainEqual(expect.objectContaining({ NAMESPACE: 'default', ...row }));
    expect(all.rows).toContainEqual(expect.objectContaining({ NAMESPACE: 'kt-wide', NAME: 'branched', READY: '0/2', TYPE: 'ClusterIP' }));

    const wide = table((await kubectl(['get', 'ws', '-o', 'wide'])).stdout);
    expect(wide.header).toEqual(['NAME', 'GIT-REPO', 'READY', 'TYPE', 'PORT', 'STATUS', 'AGE', 'BRANCH', 'DEPLOYMENT']);
    expect(wide.rows[0]).toMatchObject({ ...row, BRANCH: '', DEPLOYMENT: '' });

    const wideBranch = table((await kubectl(['get', 'ws', '-n', 'kt-wide', '-o', 'wide'])).stdout);
    expect(wideBranch.rows).toEqual([
      expect.objectContaining({ NAME: 'branched', READY: '0/2', TYPE: 'ClusterIP', STATUS: 'NoCluster', BRANCH: 'main', DEPLOYMENT: '' }),
    ]);
  });

  it('get -o yaml shows the uid, generation and resourceVersion the server assigned', async () => {
    const ns = 'kt-yaml';
    const stored = await seed(ns, 'kubia');
    const r = await kubectl(['get', 'ws', 'kubia', '-n', ns, '-o', 'yaml']);
    expect(r.code, r.stderr).toBe(0);
    const obj = YAML.parse(r.stdout);
    expect(obj).toMatchObject({ apiVersion: 'extensions.example.com/v1', kind: 'Website', metadata: { name: 'kubia', namespace: ns } });
    expect(obj.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(obj.metadata.uid).toBe(stored.metadata.uid);
    expect(obj.metadata.generation).toBe(1);
    expect(obj.metadata.resourceVersion).toMatch(/^[1-9]\d*$/);
    expect(obj.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
    expect(obj.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('label, annotate, patch --type merge, patch --type json, scale and edit each change the object, bumping generation only for spec changes', async () => {
    const ns = 'kt-verbs';
    await seed(ns, 'kubia');
    let prev = await getJson(ns, 'kubia');
    /** step runs one kubectl verb and returns the object before and after it */
    const step = async (args: string[], printed: string, env?: Record<string, string>) => {
      const r = await kubectl([...args, '-n', ns], { env });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe(`${GR}/kubia ${printed}`);
      const before = prev;
      prev = await getJson(ns, 'kubia');
      expect(Number(prev.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion));
      return { before, after: prev };
    };

    let s = await step(['label', 'ws', 'kubia', 'app=kubia', 'tier=web'], 'labeled');
    expect(s.after.metadata.labels).toEqual({ app: 'kubia', tier: 'web' });
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation);

    s = await step(['annotate', 'ws', 'kubia', 'example.com/note=hello'], 'annotated');
    expect(s.after.metadata.annotations).toEqual({ 'example.com/note': 'hello' });
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation);

    s = await step(['patch', 'ws', 'kubia', '--type', 'merge', '-p', '{"spec":{"git":{"branch":"main"}}}'], 'patched');
    expect(s.after.spec.git.branch).toBe('main');
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation + 1);

    s = await step(['patch', 'ws', 'kubia', '--type', 'json', '-p', '[{"op":"replace","path":"/spec/git/syncIntervalSeconds","value":30}]'], 'patched');
    expect(s.after.spec.git.syncIntervalSeconds).toBe(30);
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation + 1);

    s = await step(['scale', 'ws', 'kubia', '--replicas=3'], 'scaled');
    expect(s.after.spec.replicas).toBe(3);
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation + 1);

    const editor = join(work, 'editor.sh');
    writeFileSync(editor, '#!/bin/sh\nsed -i \'s/type: NodePort/type: ClusterIP/\' "$1"\n');
    chmodSync(editor, 0o755);
    s = await step(['edit', 'ws', 'kubia'], 'edited', { KUBE_EDITOR: editor });
    expect(s.after.spec.service.type).toBe('ClusterIP');
    expect(s.after.metadata.generation).toBe(s.before.metadata.generation + 1);

    // Nothing else was lost on the way.
    expect(s.after.spec).toEqual({ replicas: 3, git: { repository: REPO, branch: 'main', syncIntervalSeconds: 30 }, service: { type: 'ClusterIP' } });
    expect(s.after.metadata.labels).toEqual({ app: 'kubia', tier: 'web' });
    expect(s.after.metadata.generation).toBe(5);
  });

  it('patch without --type fails with the 415 message naming strategic merge patch and the accepted media types', async () => {
    const ns = 'kt-smp';
    await seed(ns, 'kubia');
    const before = await getJson(ns, 'kubia');
    const r = await kubectl(['patch', 'ws', 'kubia', '-n', ns, '-p', '{"spec":{"replicas":4}}']);
    expect(r.code).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('application/strategic-merge-patch+json is not supported by extensions.example.com/v1, Kind=Website');
    expect(r.stderr).toContain(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json',
    );
    const after = await getJson(ns, 'kubia');
    expect(after.spec.replicas).toBe(1);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('invalid objects are refused with the bad field named: replicas over 100, missing gitRepo, an unknown field and a bad name', async () => {
    const ns = 'kt-invalid';
    const cases: { name: string; manifest: unknown; expected: string[] }[] = [
      {
        name: 'too-many',
        manifest: website('too-many', { replicas: 500 }),
        expected: ['The Website "too-many" is invalid', 'spec.replicas: Invalid value: 500', 'less than or equal to 100'],
      },
      {
        name: 'no-repo',
        manifest: { ...website('no-repo'), spec: { replicas: 1 } },
        expected: ['The Website "no-repo" is invalid', 'spec.gitRepo: Required value'],
      },
      {
        name: 'unknown-field',
        manifest: website('unknown-field', { foo: 'bar' }),
        expected: ['Error from server (BadRequest)', 'unknown field "spec.foo"'],
      },
      {
        name: 'Bad_Name',
        manifest: website('Bad_Name'),
        expected: ['The Website "Bad_Name" is invalid', 'metadata.name: Invalid value: "Bad_Name"', 'RFC 1123'],
      },
    ];
    for (const c of cases) {
      const r = await kubectl(['create', '-n', ns, '-f', file(c.manifest)]);
      expect(r.code, c.name).not.toBe(0);
      expect(r.stdout, c.name).toBe('');
      for (const e of c.expected) expect(r.stderr, c.name).toContain(e);
    }
    // The same refusals through apply, and nothing was stored.
    const applied = await kubectl(['apply', '-n', ns, '-f', file(website('too-many', { replicas: 500 }))]);
    expect(applied.stderr).toContain('spec.replicas: Invalid value: 500');
    const list = await kubectl(['get', 'ws', '-n', ns, '-o', 'json']);
    expect(JSON.parse(list.stdout).items).toEqual([]);
  });

  it('delete waits until the object is gone, and with a finalizer delete --wait=false leaves it terminating until wait --for=delete sees the finalizer removed', async () => {
    const ns = 'kt-delete';
    await seed(ns, 'kubia');
    const started = Date.now();
    const del = await kubectl(['delete', 'ws', 'kubia', '-n', ns]);
    expect(del.stderr).toBe('');
    expect(del.stdout.trim()).toBe(`${GR} "kubia" deleted`);
    expect(Date.now() - started).toBeLessThan(10_000);
    const gone = await call(agent, url(ns, 'kubia'));
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ kind: 'Status', reason: 'NotFound', code: 404 });
    const missing = await kubectl(['get', 'ws', 'kubia', '-n', ns]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('Error from server (NotFound)');

    await seed(ns, 'x', {}, { finalizers: ['example.com/hold'] });
    const nowait = await kubectl(['delete', 'ws', 'x', '-n', ns, '--wait=false']);
    expect(nowait.stdout.trim()).toBe(`${GR} "x" deleted`);
    const terminating = await getJson(ns, 'x');
    expect(terminating.metadata.deletionTimestamp).toMatch(/Z$/);
    expect(terminating.metadata.finalizers).toEqual(['example.com/hold']);
    const row = table((await kubectl(['get', 'ws', 'x', '-n', ns])).stdout).rows[0];
    expect(row?.STATUS).toBe('Terminating');

    const waiting = spawnKubectl(['wait', '--for=delete', 'ws/x', '-n', ns, '--timeout=30s']);
    await sleep(1000);
    expect(waiting.settled()).toBe(false); // still waiting while the finalizer holds the object
    const patch = await kubectl(['patch', 'ws', 'x', '-n', ns, '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    expect(patch.stdout.trim()).toBe(`${GR}/x patched`);
    const w = await waiting.result;
    expect(w.stderr).toBe('');
    expect(w.code).toBe(0);
    expect(w.stdout.trim()).toBe(`${GR}/x condition met`);
    expect((await call(agent, url(ns, 'x'))).status).toBe(404);
  });

  it('get --watch prints the initial rows and then a row for each create, update and delete, and a named watch prints its initial row', async () => {
    const ns = 'kt-watch';
    await seed(ns, 'w0');
    const plain = spawnKubectl(['get', 'ws', '-n', ns, '-w', '--request-timeout=8s']);
    const events = spawnKubectl(['get', 'ws', '-n', ns, '--watch', '--output-watch-events', '--request-timeout=8s']);
    // A named watch alongside: `timeout` ends it (exit 124) after it printed the object's row; w0 never changes.
    const named = spawnKubectl(['3', 'kubectl', 'get', 'ws', 'w0', '-n', ns, '-w'], { command: 'timeout' });
    await until(() => /\bw0\b/.test(plain.stdout()) && /\bw0\b/.test(events.stdout()));
    // Both have listed; their watches start from the list's resourceVersion, so nothing below is missed.

    const created = await kubectl(['create', '-n', ns, '-f', file(website('w1'))]);
    expect(created.stdout).toContain('created');
    expect((await kubectl(['label', 'ws', 'w1', '-n', ns, 'app=x'])).stdout).toContain('labeled');
    expect((await kubectl(['delete', 'ws', 'w1', '-n', ns])).stdout).toContain('deleted');
    const rowsOf = (out: string) =>
      out
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => l.trim().split(/\s+/));

    const p = await plain.result; // ends by itself at --request-timeout
    expect(p.stderr).toBe('');
    const prow = rowsOf(p.stdout);
    expect(prow[0]).toEqual(['NAME', 'GIT-REPO', 'READY', 'TYPE', 'PORT', 'STATUS', 'AGE']);
    expect(prow[1]?.slice(0, 6)).toEqual(['w0', REPO, '0/1', 'NodePort', '<none>', 'NoCluster']);
    const w1rows = prow.filter((r) => r[0] === 'w1');
    expect(w1rows.length).toBeGreaterThanOrEqual(3); // added, labelled, deleted
    for (const r of w1rows) expect(r.slice(0, 6)).toEqual(['w1', REPO, '0/1', 'NodePort', '<none>', 'NoCluster']);

    const e = await events.result;
    const erows = rowsOf(e.stdout);
    expect(erows[0]?.[0]).toBe('EVENT');
    expect(erows.slice(1).map((r) => `${r[0]} ${r[1]}`)).toEqual(['ADDED w0', 'ADDED w1', 'MODIFIED w1', 'DELETED w1']);

    const n = await named.result;
    expect(n.code).toBe(124);
    expect(n.stderr).toBe('');
    const nrows = rowsOf(n.stdout);
    expect(nrows[0]).toEqual(['NAME', 'GIT-REPO', 'READY', 'TYPE', 'PORT', 'STATUS', 'AGE']);
    expect(nrows.slice(1).map((r) => r[0])).toEqual(['w0']);
  });

  it('wait --for=jsonpath returns once a patch sets replicas to 5, and wait --for=condition=Ready once the status subresource says Ready', async () => {
    const ns = 'kt-wait';
    await seed(ns, 'x');
    const replicas = spawnKubectl(['wait', '-n', ns, '--for=jsonpath={.spec.replicas}=5', 'ws/x', '--timeout=30s']);
    const ready = spawnKubectl(['wait', '-n', ns, '--for=condition=Ready', 'ws/x', '--timeout=30s']);
    await sleep(1000);
    expect(replicas.settled()).toBe(false);
    expect(ready.settled()).toBe(false);

    expect((await kubectl(['patch', 'ws', 'x', '-n', ns, '--type', 'merge', '-p', '{"spec":{"replicas":5}}'])).stdout).toContain('patched');
    const r = await replicas.result;
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(`${GR}/x condition met`);
    expect(ready.settled()).toBe(false);

    const condition = { type: 'Ready', status: 'True', reason: 'Test', message: 'm', lastTransitionTime: `${new Date().toISOString().slice(0, 19)}Z` };
    const st = await call(agent, `${url(ns, 'x')}/status`, 'PATCH', { status: { conditions: [condition] } }, MERGE);
    expect(st.status, st.text).toBe(200);
    const c = await ready.result;
    expect(c.stderr).toBe('');
    expect(c.stdout.trim()).toBe(`${GR}/x condition met`);
    const row = table((await kubectl(['get', 'ws', 'x', '-n', ns])).stdout).rows[0];
    expect(row).toMatchObject({ READY: '0/5', STATUS: 'Ready' });
  });

  it('label selectors pick objects for delete -l and get -l with set-based syntax, and --field-selector metadata.name selects by name', async () => {
    const ns = 'kt-select';
    await seed(ns, 'a1', {}, { labels: { app: 'x', tier: 'a' } });
    await seed(ns, 'a2', {}, { labels: { app: 'x', tier: 'b' } });
    await seed(ns, 'a3', {}, { labels: { app: 'other', tier: 'c' } });
    await seed(ns, 'a4', {}, { labels: { tier: 'b' } });
    const names = async (...args: string[]) => {
      const r = await kubectl(['get', 'ws', '-n', ns, '-o', 'name', ...args]);
      expect(r.stderr).toBe('');
      return r.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => l.replace(`${GR}/`, ''));
    };

    expect(await names('-l', 'tier in (a,b)')).toEqual(['a1', 'a2', 'a4']);
    expect(await names('-l', 'app=x,tier notin (a)')).toEqual(['a2']);
    expect(await names('-l', '!app')).toEqual(['a4']);
    expect(await names('--field-selector', 'metadata.name=a3')).toEqual(['a3']);
    expect(await names('--field-selector', 'metadata.name!=a3')).toEqual(['a1', 'a2', 'a4']);

    const del = await kubectl(['delete', 'ws', '-n', ns, '-l', 'app=x']);
    expect(del.stdout.trim().split('\n').sort()).toEqual([`${GR} "a1" deleted`, `${GR} "a2" deleted`]);
    expect(await names()).toEqual(['a3', 'a4']);
  });

  it('apply and create with --dry-run=server persist nothing, and diff -f shows the change for an edited file with exit code 1', async () => {
    const ns = 'kt-dryrun';
    const one = file(website('d', { replicas: 1 }));
    const seven = file(website('d', { replicas: 7 }));

    const dryApply = await kubectl(['apply', '-n', ns, '--dry-run=server', '-f', one]);
    expect(dryApply.stdout.trim()).toBe(`${GR}/d created (server dry run)`);
    expect((await call(agent, url(ns, 'd'))).status).toBe(404);

    const dryCreate = await kubectl(['create', '-n', ns, '--dry-run=server', '-f', one, '-o', 'json']);
    expect(dryCreate.stderr).toBe('');
    const echoed = JSON.parse(dryCreate.stdout);
    expect(echoed.spec).toEqual({ gitRepo: REPO, replicas: 1, serviceType: 'NodePort', syncIntervalSeconds: 60 }); // defaulted by the server
    expect(echoed.metadata.generation).toBe(1);
    expect((await call(agent, url(ns, 'd'))).status).toBe(404);
    expect(JSON.parse((await kubectl(['get', 'ws', '-n', ns, '-o', 'json'])).stdout).items).toEqual([]);

    expect((await kubectl(['apply', '-n', ns, '-f', one])).stdout.trim()).toBe(`${GR}/d created`);
    const live = await getJson(ns, 'd');

    const same = await kubectl(['diff', '-n', ns, '-f', one]);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toBe('');

    const changed = await kubectl(['diff', '-n', ns, '-f', seven]);
    expect(changed.code, changed.stderr).toBe(1);
    expect(changed.stdout).toMatch(/^-\s+replicas: 1$/m);
    expect(changed.stdout).toMatch(/^\+\s+replicas: 7$/m);
    expect(changed.stdout).toMatch(/^-\s+generation: 1$/m);
    expect(changed.stdout).toMatch(/^\+\s+generation: 2$/m);

    const dryConfigure = await kubectl(['apply', '-n', ns, '--dry-run=server', '-f', seven]);
    expect(dryConfigure.stdout.trim()).toBe(`${GR}/d configured (server dry run)`);
    const after = await getJson(ns, 'd');
    expect(after.spec.replicas).toBe(1);
    expect(after.metadata.generation).toBe(1);
    expect(after.metadata.resourceVersion).toBe(live.metadata.resourceVersion);
  });

  it('create namespace gets NotFound from the standalone server, which has no core API, rather than UnsupportedMediaType for its protobuf body', async () => {
    const r = await kubectl(['create', 'namespace', 'kt-nope']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe('Error from server (NotFound): the server could not find the requested resource');
  });

  it('apply --server-side creates and updates the object, refuses a conflicting field owned by another manager, and takes it with --force-conflicts', async () => {
    // Before server-side apply landed, kubectl printed (exit 1): error: Server-side apply not available on the server:
    // (the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json)
    const ns = 'kt-ssa';
    const managers = async (): Promise<any[]> =>
      JSON.parse((await kubectl(['get', 'ws', 'ssa', '-n', ns, '-o', 'json', '--show-managed-fields'])).stdout).metadata.managedFields;

    const created = await kubectl(['apply', '--server-side', '-n', ns, '-f', file(website('ssa'))]);
    expect(created.stderr).toBe('');
    expect(created.stdout.trim()).toBe(`${GR}/ssa serverside-applied`);
    expect((await getJson(ns, 'ssa')).spec).toEqual(V1_SPEC);
    // The entry keeps the version it was applied with, and its fields in that version's terms.
    expect(await managers()).toContainEqual(
      expect.objectContaining({
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'extensions.example.com/v1alpha1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:gitRepo': {} } },
      }),
    );

    const three = file(website('ssa', { replicas: 3 }));
    const updated = await kubectl(['apply', '--server-side', '-n', ns, '-f', three]);
    expect(updated.stdout.trim()).toBe(`${GR}/ssa serverside-applied`);
    const afterUpdate = await getJson(ns, 'ssa');
    expect(afterUpdate.spec.replicas).toBe(3);
    expect(afterUpdate.metadata.generation).toBe(2);

    // Another manager takes .spec.replicas (through v1, kubectl's preferred version); applying our value again in
    // v1alpha1 is a conflict and changes nothing.
    const other = await kubectl(['patch', 'ws', 'ssa', '-n', ns, '--type', 'merge', '--field-manager=other', '-p', '{"spec":{"replicas":4}}']);
    expect(other.stdout.trim()).toBe(`${GR}/ssa patched`);
    const conflict = await kubectl(['apply', '--server-side', '-n', ns, '-f', three]);
    expect(conflict.code).toBe(1);
    expect(conflict.stdout).toBe('');
    expect(conflict.stderr).toContain('error: Apply failed with 1 conflict: conflict with "other" using extensions.example.com/v1: .spec.replicas');
    expect(conflict.stderr).toContain('--force-conflicts');
    expect((await getJson(ns, 'ssa')).spec.replicas).toBe(4);

    const forced = await kubectl(['apply', '--server-side', '--force-conflicts', '-n', ns, '-f', three]);
    expect(forced.stdout.trim()).toBe(`${GR}/ssa serverside-applied`);
    expect((await getJson(ns, 'ssa')).spec.replicas).toBe(3);
    const owners = await managers();
    expect(owners.find((m) => m.manager === 'kubectl' && m.operation === 'Apply')?.fieldsV1).toEqual({ 'f:spec': { 'f:gitRepo': {}, 'f:replicas': {} } });
    expect(owners.filter((m) => m.manager === 'other')).toEqual([]); // it owned nothing else, so its entry is gone

    // Invalid values are refused like any write; server dry-run persists nothing.
    const invalid = await kubectl(['apply', '--server-side', '-n', ns, '-f', file(website('ssa', { replicas: 900 }))]);
    expect(invalid.stderr).toContain('spec.replicas: Invalid value: 900');
    const dry = await kubectl(['apply', '--server-side', '--dry-run=server', '-n', ns, '-f', file(website('ssa', { replicas: 9 }))]);
    expect(dry.stdout.trim()).toBe(`${GR}/ssa serverside-applied (server dry run)`);
    expect((await getJson(ns, 'ssa')).spec.replicas).toBe(3);
  });

  it('get --chunk-size=7 pages through 50 objects with limit and continue requests, printing each row exactly once, in one namespace and with -A -o name', async () => {
    const ns = 'kt-chunk';
    const mine = Array.from({ length: 50 }, (_, i) => `chunk-${String(i).padStart(2, '0')}`);
    await Promise.all(mine.map((n) => seed(ns, n)));
    /** pageRequests are the GETs of the websites collection kubectl logged at -v=6 (round_trippers: "GET <url> 200 OK"). */
    const pageRequests = (stderr: string, path: string) =>
      stderr
        .split('\n')
        .map((l) => / GET (\S+) 200 OK/.exec(l)?.[1])
        .filter((u): u is string => !!u && new URL(u).pathname === path);

    const r = await kubectl(['get', 'ws', '-n', ns, '--chunk-size=7', '-v=6']);
    expect(r.code, r.stderr).toBe(0);
    const t = table(r.stdout);
    expect(t.header).toEqual(['NAME', 'GIT-REPO', 'READY', 'TYPE', 'PORT', 'STATUS', 'AGE']);
    expect(t.rows.map((row) => row.NAME)).toEqual(mine);
    expect(r.stdout.match(/^NAME\s/gm)).toHaveLength(1);
    const nsPages = pageRequests(r.stderr, `${PREFERRED}/namespaces/${ns}/websites`);
    expect(nsPages).toHaveLength(8); // 7 × 7 + 1
    for (const u of nsPages) expect(new URL(u).searchParams.get('limit')).toBe('7');
    expect(nsPages.filter((u) => new URL(u).searchParams.has('continue'))).toHaveLength(7);
    expect(new URL(nsPages[0] ?? '').searchParams.has('continue')).toBe(false);
    for (const u of nsPages) expect(new URL(u).searchParams.has('resourceVersion')).toBe(false);

    // Across all namespaces: -o name prints no namespace, so compare with one unpaginated list over HTTPS.
    const full = await call(agent, `${server.url}${API}/websites`);
    expect(full.status).toBe(200);
    const all = await kubectl(['get', 'ws', '-A', '--chunk-size=7', '-o', 'name', '-v=6']);
    expect(all.code, all.stderr).toBe(0);
    const printed = all.stdout.trim().split('\n');
    expect(printed).toEqual(full.body.items.map((o: any) => `${GR}/${o.metadata.name}`));
    for (const n of mine) expect(printed).toContain(`${GR}/${n}`);
    const allPages = pageRequests(all.stderr, `${PREFERRED}/websites`);
    expect(allPages).toHaveLength(Math.ceil(full.body.items.length / 7));
    expect(allPages.filter((u) => new URL(u).searchParams.has('continue'))).toHaveLength(allPages.length - 1);
  });
});
