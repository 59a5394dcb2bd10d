/**
 * @module bench/crd-mix-report
 * The record and the Markdown of a six-kind CEL run (crd-mix.mjs): figures by stage and target, ours against
 * kube-apiserver as ratios (of the figure, and of the CPU time each server's processes spent per operation, which
 * other work on the machine changes far less), and what CEL costs per write on each server (with rules minus
 * without). Pure: a
 * committed JSON can be re-rendered without running anything (`node test/bench/crd-mix-report.mjs FILE.json`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { advantage, formatNumber, formatRatio } from './report.mjs';
import { celCost } from './crd-mix.mjs';

/**
 * @typedef {object} MixRecord
 * @property {1} schema
 * @property {'crd-mix'} mode
 * @property {string} date
 * @property {number} durationSeconds
 * @property {Record<string, unknown>} machine
 * @property {Record<string, unknown>} parameters
 * @property {{id: string, label: string}[]} targets
 * @property {{kind: string, plural: string, apiVersion: string, namespaced: boolean, celRules: number, schemaKiB: number, file: string}[]} kinds
 * @property {(import('./crd-mix.mjs').MixStage & {results: Record<string, Record<string, any>>})[]} stages
 * @property {Record<string, Record<string, any>>} celCost by server (ours, kube-apiserver), when both of its targets ran
 * @property {string[]} notes
 * @property {{start: number[], end: number[]}} [loadAverage] the machine's 1, 5 and 15 min load averages
 */

// The validating process of each server, and the targets with and without the CRDs' rules.
const SERVERS = [
  { id: 'ours', name: 'ours', with: 'ours', without: 'ours-nocel', process: 'server' },
  { id: 'kube-apiserver', name: 'kube-apiserver', with: 'crd', without: 'crd-nocel', process: 'kube-apiserver' },
];

/**
 * mixRecord assembles the results file: the stages with each target's figures, and CEL's cost on each server
 * both of whose targets ran.
 * @param {Omit<MixRecord, 'stages' | 'celCost' | 'kinds'>} head
 * @param {import('./crd-mix.mjs').MixKind[]} kinds
 * @param {import('./crd-mix.mjs').MixStage[]} stages
 * @param {Record<string, Record<string, Record<string, any>>>} figures by target, then stage
 * @returns {MixRecord}
 */
export function mixRecord(head, kinds, stages, figures) {
  /** @type {Record<string, Record<string, any>>} */
  const cost = {};
  for (const s of SERVERS) {
    const a = figures[s.with];
    const b = figures[s.without];
    if (a && b) cost[s.id] = celCost(a, b, s.process);
  }
  return {
    ...head,
    kinds: kinds.map((k) => ({
      kind: k.kind,
      plural: k.plural,
      apiVersion: `${k.group}/${k.version}`,
      namespaced: k.namespaced,
      celRules: k.celRules,
      schemaKiB: Math.round(JSON.stringify(k.crd).length / 1024),
      file: k.file.split('/').slice(-1)[0] ?? k.file,
    })),
    stages: stages.map((st) => ({
      ...st,
      results: Object.fromEntries(
        Object.entries(figures)
          .filter(([, f]) => f[st.id])
          .map(([t, f]) => [t, f[st.id] ?? {}]),
      ),
    })),
    celCost: cost,
  };
}

/** @param {string} s */
const md = (s) => String(s).replace(/\r?\n/g, ' ').replace(/[|<]/g, '\\$&');

/**
 * cell is one target's figure: the headline with its unit, p50/p99 where they are not the headline, errors.
 * @param {Record<string, any> | undefined} f
 * @param {string} unit
 * @param {(e: string) => number} footnote
 */
function cell(f, unit, footnote) {
  if (!f) return '—';
  if (typeof f.error === 'string') return `error [${footnote(f.error)}]`;
  const d = [];
  if (typeof f.p50Ms === 'number' && unit !== 'ms') d.push(`p50 ${formatNumber(f.p50Ms)} ms`);
  if (typeof f.p99Ms === 'number' && f.p99Ms !== f.value) d.push(`p99 ${formatNumber(f.p99Ms)} ms`);
  /** @type {[string, unknown][]} */
  const cpu = Object.entries(f.cpuMsPerOp ?? {}).filter(([, v]) => typeof v === 'number' && Number.isFinite(v));
  if (cpu.length) d.push(`CPU/op ${cpu.map(([k, v]) => `${k} ${formatNumber(Number(v))} ms`).join(', ')}`);
  if (f.errors > 0) d.push(`${f.errors} errors: ${md(String(f.firstError ?? '').slice(0, 120))}`);
  const head = `${formatNumber(f.value)} ${unit}`;
  return d.length ? `${head} (${d.join('; ')})` : head;
}

/**
 * loadLine states the machine's load average (1, 5, 15 min) at the start and end of the run, when recorded.
 * @param {any} l
 */
const loadLine = (l) => (l?.start && l?.end ? `; load average ${l.start.join('/')} at the start, ${l.end.join('/')} at the end` : '');

/**
 * cpuSum is the CPU time per operation of all of a target's server processes (kube-apiserver and etcd; ours).
 * @param {Record<string, any> | undefined} f
 */
const cpuSum = (f) => {
  const v = Object.values(f?.cpuMsPerOp ?? {});
  return v.length && v.every((x) => typeof x === 'number' && Number.isFinite(x)) ? v.reduce((a, b) => a + b, 0) : undefined;
};

/** @param {unknown} x */
const ms = (x) => (typeof x === 'number' && Number.isFinite(x) ? `${formatNumber(x)} ms` : '—');

/**
 * mixMarkdown renders the record: the kinds, every stage by target with ours against kube-apiserver, then CEL's
 * cost per write on each server, overall and by kind.
 * @param {MixRecord} r
 * @returns {string}
 */
export function mixMarkdown(r) {
  const ids = r.targets.map((t) => t.id);
  /** @type {string[]} */
  const errors = [];
  const footnote = (/** @type {string} */ e) => {
    const i = errors.indexOf(e);
    return i < 0 ? errors.push(e) : i + 1;
  };
  const lines = [
    '# Six CRD-defined kinds with CEL rules at once',
    '',
    `${r.date}, took ${r.durationSeconds} s; ${r.machine.cpus} × ${r.machine.cpuModel}, Node.js ${r.machine.node}, Kubernetes ${r.machine.kubernetes}${loadLine(r.loadAverage)}`,
    '',
    `Parameters: ${Object.entries(r.parameters)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    '',
    ...r.targets.map((t) => `- ${t.id}: ${md(t.label)}`),
    '',
    '| kind | apiVersion | scope | CEL rules | schema | CRD file |',
    '|---|---|---|---:|---:|---|',
    ...r.kinds.map((k) => `| ${k.kind} | ${k.apiVersion} | ${k.namespaced ? 'Namespaced' : 'Cluster'} | ${k.celRules} | ${k.schemaKiB} KiB | ${k.file} |`),
    '',
  ];
  const vs = ids.includes('ours') && ids.includes('crd');
  lines.push(
    `| stage | ${ids.join(' | ')}${vs ? ' | ours vs kube | CPU per op, ours vs kube |' : ' |'}`,
    `|---|${ids.map(() => '---:').join('|')}|${vs ? '---:|---:|' : ''}`,
  );
  const ratio = (/** @type {number | undefined} */ x) => (x === undefined ? '—' : x >= 1 ? `**${formatRatio(x)} ▲**` : `${formatRatio(x)} ▼`);
  for (const st of r.stages) {
    const row = ids.map((id) => cell(st.results[id], st.unit, footnote));
    if (vs) {
      const a = st.results.ours;
      const b = st.results.crd;
      const x =
        a && b && typeof a.value === 'number' && typeof b.value === 'number' && st.unit !== 'refused' && st.unit !== 'objects'
          ? advantage(st.better, a.value, b.value)
          : undefined;
      row.push(ratio(x), ratio(advantage('lower', cpuSum(a), cpuSum(b))));
    }
    lines.push(`| ${md(st.label)} | ${row.join(' | ')} |`);
  }
  const servers = Object.keys(r.celCost);
  if (servers.length) {
    lines.push(
      '',
      '## What CEL costs per write',
      '',
      "The same run with the six CRDs stripped of their `x-kubernetes-validations` (everything else kept): the difference is the time spent in CEL. CPU per write is the validating process's CPU time (user + system, read from /proc in 10 ms ticks) over a stage divided by its writes, which other work on the machine barely changes; the latency of one write at a time is the median of a write with nothing else in flight, which it does. A difference of a few hundredths of a millisecond is noise.",
      '',
      `| per write | ${servers.map((s) => `${s}: with rules / without / CEL`).join(' | ')} |`,
      `|---|${servers.map(() => '---:').join('|')}|`,
    );
    /** @param {string} label @param {(c: Record<string, any>) => any} pick */
    const row = (label, pick) =>
      lines.push(
        `| ${label} | ${servers
          .map((s) => {
            const c = pick(r.celCost[s] ?? {});
            return c ? `${ms(c.withRules)} / ${ms(c.withoutRules)} / **${ms(c.cel)}**` : '—';
          })
          .join(' | ')} |`,
      );
    row('CPU per create, concurrent', (c) => c.createCpuMs);
    row('CPU per merge patch, concurrent', (c) => c.updateCpuMs);
    row('CPU per create, one at a time', (c) => c['serial-createCpuMs']);
    row('CPU per merge patch, one at a time', (c) => c['serial-updateCpuMs']);
    for (const k of r.kinds) {
      row(`&nbsp;&nbsp;${k.plural} (${k.celRules} rule${k.celRules === 1 ? '' : 's'}): CPU per create`, (c) => c['serial-createCpuMs']?.byKind?.[k.plural]);
      row(`&nbsp;&nbsp;${k.plural}: CPU per merge patch`, (c) => c['serial-updateCpuMs']?.byKind?.[k.plural]);
    }
    row('latency of one create at a time, p50', (c) => c['serial-createP50Ms']);
    row('latency of one merge patch at a time, p50', (c) => c['serial-updateP50Ms']);
  }
  if (errors.length) lines.push('', '**Errors**', '', ...errors.map((e, i) => `${i + 1}. ${md(e)}`));
  if (r.notes.length) lines.push('', '**Notes**', '', ...r.notes.map((n) => `- ${md(n)}`));
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node test/bench/crd-mix-report.mjs <crd-mix results.json>\n');
    process.exit(2);
  }
  writeFileSync(file.replace(/\.json$/, '.md'), mixMarkdown(JSON.parse(readFileSync(file, 'utf8'))));
}
