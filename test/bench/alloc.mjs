#!/usr/bin/env node
/**
 * @module bench/alloc
 * `node test/bench/alloc.mjs [--main DIST_MAIN] [--workload create|patch|get] [--count 4000] [--top 25]`
 *
 * Where a built server's memory goes per request: it starts the server (default: this checkout's dist/main.js) with
 * the inspector on a loopback port, warms it up with `count` creates, then records V8's sampling heap profile
 * (objects already collected included, so this is allocation, not retention) over `count` requests of the workload
 * and prints the bytes allocated per request in total, by the function that allocated them and by our functions
 * with what they call. Garbage is what a young-generation collection pays for; this finds who makes it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { expectStatus, httpClient, runOps } from './client.mjs';
import { startOurs } from './targets.mjs';
import { websiteBody } from './workloads.mjs';

const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
// The version requests use (--api-version): v1, the stored one, or v1alpha1 (converted; what builds before v1 serve).
/** @type {'v1' | 'v1alpha1'} */
let VERSION = 'v1';
let COLLECTION = '/apis/extensions.example.com/v1/namespaces/alloc/websites';
const CONCURRENCY = 64;
const INSPECTOR_PORT = 9339;

/**
 * @typedef {{ functionName: string, url: string, lineNumber: number }} CallFrame
 * @typedef {{ callFrame: CallFrame, selfSize: number, children: Node[] }} Node
 */

/** frameName names a profile node: function, file below dist/ or node_modules/, line. */
export function frameName(/** @type {CallFrame} */ f) {
  const file = f.url.replace(/^.*node_modules\//, '').replace(/^.*dist\//, '');
  return `${f.functionName || '(anonymous)'} ${file}:${f.lineNumber + 1}`;
}

/**
 * summarize totals a sampling heap profile: bytes by allocating function (self) and by function with its callees
 * (inclusive, each function counted once per stack).
 * @param {Node} head
 */
export function summarize(head) {
  /** @type {Map<string, number>} */
  const self = new Map();
  /** @type {Map<string, number>} */
  const inclusive = new Map();
  let total = 0;
  /** @type {{ node: Node, stack: Set<string> }[]} */
  const todo = [{ node: head, stack: new Set() }];
  while (todo.length > 0) {
    const { node, stack } = /** @type {{ node: Node, stack: Set<string> }} */ (todo.pop());
    const name = frameName(node.callFrame);
    const here = new Set(stack).add(name);
    total += node.selfSize;
    self.set(name, (self.get(name) ?? 0) + node.selfSize);
    for (const n of here) inclusive.set(n, (inclusive.get(n) ?? 0) + node.selfSize);
    for (const c of node.children) todo.push({ node: c, stack: here });
  }
  return { total, self, inclusive };
}

/** inspector opens the DevTools protocol of the process listening on the loopback inspector port. */
async function inspector() {
  const [target] = /** @type {{ webSocketDebuggerUrl: string }[]} */ (await (await fetch(`http://127.0.0.1:${INSPECTOR_PORT}/json/list`)).json());
  if (!target) throw new Error('the server offers no inspector target');
  const ws = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((ok, fail) => {
    ws.once('open', ok);
    ws.once('error', fail);
  });
  let id = 0;
  /** @type {Map<number, (m: any) => void>} */
  const pending = new Map();
  ws.on('message', (data) => {
    const m = JSON.parse(String(data));
    pending.get(m.id)?.(m);
    pending.delete(m.id);
  });
  return {
    /** @param {string} method @param {object} [params] @returns {Promise<any>} */
    call: (method, params = {}) =>
      new Promise((ok, fail) => {
        const n = ++id;
        pending.set(n, (m) => (m.error ? fail(new Error(`${method}: ${m.error.message}`)) : ok(m.result)));
        ws.send(JSON.stringify({ id: n, method, params }));
      }),
    close: () => ws.close(),
  };
}

async function main() {
  const args = process.argv.slice(2);
  const flag = (/** @type {string} */ name, /** @type {string} */ fallback) => {
    const i = args.indexOf(name);
    return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
  };
  const workload = flag('--workload', 'create');
  if (!['create', 'patch', 'get'].includes(workload)) throw new Error('--workload is create, patch or get');
  const count = Number(flag('--count', '4000'));
  const top = Number(flag('--top', '25'));
  const apiVersion = flag('--api-version', 'v1');
  if (apiVersion !== 'v1' && apiVersion !== 'v1alpha1') throw new Error('--api-version: v1 or v1alpha1');
  VERSION = apiVersion;
  COLLECTION = `/apis/extensions.example.com/${VERSION}/namespaces/alloc/websites`;
  process.env.BENCH_OURS_MAIN = resolve(flag('--main', join(REPO, 'dist', 'main.js')));
  process.env.BENCH_NODE_OPTIONS = `${process.env.BENCH_NODE_OPTIONS ?? ''} --inspect=127.0.0.1:${INSPECTOR_PORT}`;
  const dir = mkdtempSync(join(tmpdir(), 'bench-alloc-'));
  const target = await startOurs(dir);
  const client = httpClient(target.url, target.tls, CONCURRENCY);
  const devtools = await inspector();
  try {
    const create = (/** @type {string} */ prefix) => async (/** @type {number} */ i) =>
      expectStatus(await client.request('POST', COLLECTION, { body: websiteBody(`${prefix}${i}`, VERSION) }), 201);
    await runOps(count, CONCURRENCY, create('warm'));
    /** @type {Record<string, (i: number) => Promise<string | void>>} */
    const ops = {
      create: create('w'),
      get: async (i) => expectStatus(await client.request('GET', `${COLLECTION}/warm${i % count}`), 200),
      patch: async (i) =>
        expectStatus(
          await client.request('PATCH', `${COLLECTION}/warm${i % count}`, {
            body: { metadata: { labels: { patched: String(i) } }, spec: { replicas: (i % 5) + 1 } },
            contentType: 'application/merge-patch+json',
          }),
          200,
        ),
    };
    await devtools.call('HeapProfiler.enable');
    await devtools.call('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    const r = await runOps(count, CONCURRENCY, /** @type {(i: number) => Promise<string | void>} */ (ops[workload]));
    if (r.errors > 0) throw new Error(`${r.errors} requests failed, first: ${r.firstError}`);
    const { profile } = await devtools.call('HeapProfiler.stopSampling');
    const { total, self, inclusive } = summarize(profile.head);
    const rows = (/** @type {Map<string, number>} */ m, /** @type {(k: string) => boolean} */ keep) =>
      [...m]
        .filter(([k]) => keep(k))
        .sort((a, b) => b[1] - a[1])
        .slice(0, top)
        .map(([k, v]) => `${String(Math.round(v / count)).padStart(8)} B  ${k}`)
        .join('\n');
    const ours = (/** @type {string} */ k) => /^\S+ [a-z-]+\/[\w./-]+\.js:/.test(k) && !/^\S+ (fastify|lmdb|pino|ajv|find-my-way|avvio|prom-client)\//.test(k);
    console.log(`${workload} × ${count} (${process.env.BENCH_OURS_MAIN}): ${Math.round(total / count)} bytes allocated per request (sampled)\n`);
    console.log(`allocated by (self):\n${rows(self, () => true)}\n`);
    console.log(`our functions with what they call (inclusive):\n${rows(inclusive, ours)}`);
  } finally {
    devtools.close();
    await client.close();
    await target.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
