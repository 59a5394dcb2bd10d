#!/usr/bin/env node
/**
 * @module bench/cpuprofile-top
 * The functions a V8 CPU profile (`node --cpu-prof`) spent the most self time in:
 *
 *     node test/bench/cpuprofile-top.mjs FILE.cpuprofile [--top 25]
 *
 * A profile is a tree of nodes (function, url, line) with the samples taken in each and the time between samples;
 * a function's self time is its samples' time summed over every node naming it. Also totals by package
 * (node_modules/<name>, node: internals, our dist/) so the share of our own code is visible.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * @typedef {object} ProfileNode
 * @property {number} id
 * @property {{functionName: string, url: string, lineNumber: number}} callFrame
 */

/**
 * @typedef {object} CpuProfile
 * @property {ProfileNode[]} nodes
 * @property {number[]} samples node id per sample
 * @property {number[]} timeDeltas µs before each sample
 */

/**
 * where names the code a URL belongs to: a package, Node's internals, our build or the engine.
 * @param {string} url
 */
export function where(url) {
  if (!url) return '(engine)';
  if (url.startsWith('node:')) return 'node';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1] ?? url;
  if (url.includes('/dist/')) return 'ours';
  return url;
}

/**
 * selfTimes sums each function's self time in ms, and each place's.
 * @param {CpuProfile} profile
 */
export function selfTimes(profile) {
  /** @type {Map<number, ProfileNode>} */
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  /** @type {Map<string, number>} */
  const fns = new Map();
  /** @type {Map<string, number>} */
  const places = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const f = byId.get(id)?.callFrame;
    if (!f) return;
    const file = f.url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules|dist)\//, '$1/');
    const key = `${f.functionName || '(anonymous)'} ${file ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + ms);
    const place = where(f.url);
    places.set(place, (places.get(place) ?? 0) + ms);
    total += ms;
  });
  const sorted = (/** @type {Map<string, number>} */ m) => [...m].sort((a, b) => b[1] - a[1]);
  return { totalMs: total, functions: sorted(fns), places: sorted(places) };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
  if (args.length !== 1) {
    process.stderr.write('usage: node test/bench/cpuprofile-top.mjs FILE.cpuprofile [--top N]\n');
    process.exit(2);
  }
  const t = selfTimes(JSON.parse(readFileSync(args[0] ?? '', 'utf8')));
  const pct = (/** @type {number} */ ms) => `${((ms / t.totalMs) * 100).toFixed(1).padStart(5)}%`;
  process.stdout.write(`total ${Math.round(t.totalMs)} ms sampled\n\nby place:\n`);
  for (const [k, ms] of t.places.slice(0, 12)) process.stdout.write(`${pct(ms)} ${Math.round(ms).toString().padStart(7)} ms  ${k}\n`);
  process.stdout.write(`\ntop ${top} functions by self time:\n`);
  for (const [k, ms] of t.functions.slice(0, top)) process.stdout.write(`${pct(ms)} ${Math.round(ms).toString().padStart(7)} ms  ${k}\n`);
}
