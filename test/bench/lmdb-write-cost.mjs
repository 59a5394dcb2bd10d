#!/usr/bin/env node
/**
 * @module bench/lmdb-write-cost
 * What each part of our lmdb write costs, on lmdb alone (no server, no HTTP):
 *
 *     node test/bench/lmdb-write-cost.mjs [--op update|create] [--writes 30000] [--concurrency 64] [--size 1455]
 *
 * Every variant writes objects of about `size` bytes of JSON, one write transaction each, as
 * src/storage/lmdb-storage.ts does (read the current object, put the object, its history entry and the revision
 * counter), `concurrency` transactions in flight so lmdb-js batches them, and adds one of our choices at a time: the
 * child transaction around the puts, LZ4 compression of objects and history (lmdb-js's default dictionary, and for
 * comparison an 8-byte one), and for updates the previous object in the history entry, for creates the two object
 * counts; `ours` has what our store does. It reports writes per second and the process's CPU time per write (every
 * thread: the commit and its fsync run on lmdb's writer thread).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { open } from 'lmdb';

/**
 * @typedef {{ child?: boolean, compression?: boolean, tinyDictionary?: boolean, prev?: boolean, counts?: boolean }} Choices
 * @typedef {{ name: string, choices: Choices }} Variant
 * @typedef {'update' | 'create'} Op
 * @typedef {{ name: string, perSecond: number, cpuUs: number, storedBytes: number, jsonBytes: number }} Cost
 */

// The choices both kinds of write make; an update also keeps the previous object, a create counts (an update keeps
// the counts as they are).
const SHARED = [
  { name: 'object, history entry, counter', choices: {} },
  { name: '+ child transaction', choices: { child: true } },
  { name: '+ LZ4 compression', choices: { compression: true } },
  // What the dictionary costs: lmdb-js loads it before compressing each value (not what ours does).
  { name: '+ LZ4 compression, 8-byte dictionary', choices: { compression: true, tinyDictionary: true } },
];

/** @type {Record<Op, Variant[]>} the variants of each kind of write */
export const VARIANTS = {
  update: [
    ...SHARED,
    { name: '+ previous object in the history entry', choices: { prev: true } },
    { name: 'ours (child transaction, LZ4, previous object)', choices: { child: true, compression: true, prev: true } },
  ],
  create: [
    ...SHARED,
    { name: '+ two object counts', choices: { counts: true } },
    { name: 'ours (child transaction, LZ4, counts)', choices: { child: true, compression: true, counts: true } },
  ],
};

/**
 * website is a stored Website of about `size` bytes of JSON (an annotation pads it), at revision `rv`.
 * @param {number} i
 * @param {number} rv
 * @param {number} size
 */
export function website(i, rv, size) {
  const o = {
    apiVersion: 'extensions.example.com/v1',
    kind: 'Website',
    metadata: {
      name: `w${i}`,
      namespace: 'bench',
      uid: '7b0f6f0e-8e0c-4c39-9d7a-6f1a0c2b3d4e',
      resourceVersion: String(rv),
      generation: 2,
      creationTimestamp: '2026-11-27T16:00:00Z',
      labels: { app: 'web', patched: String(rv) },
      annotations: { pad: '' },
      managedFields: [
        {
          manager: 'bench',
          operation: 'Update',
          apiVersion: 'extensions.example.com/v1',
          time: '2026-11-27T16:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:patched': {} } }, 'f:spec': { '.': {}, 'f:gitRepo': {}, 'f:replicas': {} } },
        },
      ],
    },
    spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', replicas: (rv % 5) + 1 },
    status: {
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'False', reason: 'Pending', message: 'waiting for the deployment', lastTransitionTime: '2026-11-27T16:00:00Z' }],
    },
  };
  o.metadata.annotations.pad = 'x'.repeat(Math.max(0, size - JSON.stringify(o).length));
  return o;
}

/**
 * measure runs `writes` writes with one variant's choices in a fresh environment: updates of `objects` stored
 * objects in turn, or creates of new ones.
 * @param {Variant} variant
 * @param {{ op: Op, writes: number, concurrency: number, size: number, objects?: number }} o
 * @returns {Promise<Cost>}
 */
export async function measure(variant, o) {
  const { child, compression, tinyDictionary, prev, counts } = variant.choices;
  const objects = o.objects ?? 2000;
  const dir = mkdtempSync(join(tmpdir(), 'lmdb-write-cost-'));
  // Synced commits, as ours (never noSync).
  const root = open({ path: dir, maxDbs: 8, noSubdir: false });
  const compressed = compression ? { compression: tinyDictionary ? { dictionary: Buffer.alloc(8, 32) } : true } : {};
  const db = root.openDB('objects', { encoding: 'json', ...compressed });
  // Without compression: the stored bytes as they are on disk.
  const raw = root.openDB('objects', { encoding: 'binary' });
  const events = root.openDB('events', { encoding: 'json', ...compressed });
  const meta = root.openDB('meta', { encoding: 'json' });
  try {
    const update = o.op === 'update';
    const keyOf = (/** @type {number} */ i) => ['extensions.example.com/websites', 'bench', update ? `w${i % objects}` : `c${i}`];
    if (update) {
      await root.transaction(() => {
        for (let i = 0; i < objects; i++) db.put(keyOf(i), website(i, 0, o.size));
      });
    }
    let revision = 0;
    const write = (/** @type {number} */ i) =>
      root.transaction(() => {
        const k = keyOf(i);
        const cur = db.get(k);
        if (!update && cur !== undefined) throw new Error(`${k.join('/')} exists`);
        const rv = ++revision;
        const next = website(update ? i % objects : i, rv, o.size);
        const entry = update ? { t: 'M', k, o: next, ts: Date.now(), ...(prev ? { p: cur } : {}) } : { t: 'A', k, o: next, ts: Date.now() };
        const puts = () => {
          db.put(k, next);
          events.put(rv, entry);
          meta.put('revision', rv);
          if (counts) for (const c of ['count/websites', 'count/websites/bench']) meta.put(c, (meta.get(c) ?? 0) + 1);
        };
        if (child) root.childTransaction(puts);
        else puts();
      });
    let next = 0;
    const cpu = process.cpuUsage();
    const start = performance.now();
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (next < o.writes) await write(next++);
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    const used = process.cpuUsage(cpu);
    const stored = /** @type {Uint8Array} */ (raw.getBinary(keyOf(0)));
    return {
      name: variant.name,
      perSecond: o.writes / seconds,
      cpuUs: (used.user + used.system) / o.writes,
      storedBytes: stored.length,
      jsonBytes: JSON.stringify(db.get(keyOf(0))).length,
    };
  } finally {
    await root.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * table renders the costs as Markdown, each against the first (the base).
 * @param {Cost[]} costs
 */
export function table(costs) {
  const base = costs[0];
  const rows = ['| variant | writes/s | CPU µs/write | vs base | stored bytes of one object |', '| --- | ---: | ---: | ---: | ---: |'];
  for (const c of costs) {
    const delta = base ? `${c.cpuUs >= base.cpuUs ? '+' : '−'}${Math.abs(c.cpuUs - base.cpuUs).toFixed(0)} µs` : '';
    rows.push(`| ${c.name} | ${Math.round(c.perSecond)} | ${c.cpuUs.toFixed(0)} | ${delta} | ${c.storedBytes} of ${c.jsonBytes} |`);
  }
  return rows.join('\n');
}

async function main() {
  const { values } = parseArgs({
    options: {
      op: { type: 'string', default: 'update' },
      writes: { type: 'string', default: '30000' },
      concurrency: { type: 'string', default: '64' },
      size: { type: 'string', default: '1455' },
    },
    strict: true,
  });
  if (values.op !== 'update' && values.op !== 'create') throw new Error('--op: update or create');
  const o = { op: /** @type {Op} */ (values.op), writes: Number(values.writes), concurrency: Number(values.concurrency), size: Number(values.size) };
  /** @type {Cost[]} */
  const costs = [];
  for (const v of VARIANTS[o.op]) costs.push(await measure(v, o));
  console.log(`${o.writes} ${o.op}s, ${o.concurrency} in flight, objects of ${o.size} bytes of JSON\n\n${table(costs)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
