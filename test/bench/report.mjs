/**
 * @module bench/report
 * Renders a benchmark results JSON as a Markdown table of ratios and an SVG bar chart. Both renderers are pure
 * (string in, string out) so the benchmark can call them after a run and a committed JSON can be re-rendered
 * without running anything:
 *
 *     node test/bench/report.mjs results.json    # writes results.md and results.svg next to it
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * @typedef {{ value: number, p50Ms?: number, p99Ms?: number, count?: number, errors?: number,
 *   [detail: string]: number | undefined }} Measurement
 * One target's figures for one workload. `value` is the headline figure in the workload's unit; every other
 * field is a numeric detail.
 */

/**
 * @typedef {object} TargetFailure a target that could not run the workload
 * @property {string} error
 */

/**
 * @typedef {object} Workload
 * @property {string} id e.g. `create-c1`
 * @property {string} label e.g. `create, concurrency 1`
 * @property {string} unit of `value`: `req/s`, `ms`, `MiB`, ...
 * @property {'higher' | 'lower'} better which direction of `value` is better
 * @property {Record<string, Measurement | TargetFailure | undefined>} results by target id; a target may be absent
 */

/**
 * @typedef {object} BenchTarget
 * @property {string} id `ours`, `crd`, `ceiling`, `ours-aggregated`, ...
 * @property {string} label what was measured, e.g. `kube-apiserver v1.35.8 + etcd, Website CRD`
 */

/**
 * @typedef {object} BenchMachine
 * @property {number} cpus
 * @property {string} cpuModel
 * @property {number} memoryMiB
 * @property {string} os e.g. `Linux 6.1.0 x64`
 * @property {string} node e.g. `v20.20.2`
 * @property {string} [kubernetes] version of the CRD baseline, when it ran
 * @property {string} [etcd]
 */

/**
 * @typedef {{ creates?: number, gets?: number, listItems?: number, listRepeats?: number, patches?: number,
 *   deletes?: number, watchers?: number[], watchWritesPerSecond?: number, watchSeconds?: number,
 *   bulkObjects?: number, concurrency?: number,
 *   [name: string]: number | number[] | string | boolean | undefined }} BenchParameters
 */

/**
 * @typedef {object} BenchResults the JSON file `npm run bench` writes
 * @property {1} schema
 * @property {'quick' | 'full'} mode
 * @property {string} date ISO 8601, when the run started
 * @property {number} durationSeconds
 * @property {BenchMachine} machine
 * @property {BenchParameters} parameters
 * @property {BenchTarget[]} targets any subset; `ours` is always there
 * @property {Workload[]} workloads
 * @property {string[]} [notes] free text lines
 */

/**
 * @typedef {object} MarkdownOptions
 * @property {string} [chartHref] link to the SVG chart, embedded below the table when given
 */

const OURS = 'ours';
const AGGREGATED = 'ours-aggregated';
// The CRD twin on the kube-apiserver ours-aggregated is registered with: the pair users actually choose between.
const TWIN = 'crd-aggregated';
/** @type {Record<string, string>} short column names of the well-known targets; any other is named by its id */
const SHORT = { crd: 'CRD', ceiling: 'ceiling', [AGGREGATED]: 'through aggregator', 'ours-etcd': 'ours on etcd', [TWIN]: 'CRD on the same kube-apiserver' };
/** @type {Record<string, string>} the header of a variant of ours compared with the CRD */
const VS_CRD = { [AGGREGATED]: 'aggregated vs CRD', 'ours-etcd': 'on etcd vs CRD' };

/**
 * @param {Measurement | TargetFailure | undefined} r
 * @returns {r is TargetFailure}
 */
const isFailure = (r) => r !== undefined && typeof r.error === 'string';

/**
 * @param {Measurement | TargetFailure | undefined} r
 * @returns {r is Measurement}
 */
const isMeasurement = (r) => r !== undefined && !isFailure(r) && typeof r.value === 'number' && Number.isFinite(r.value);

/**
 * formatNumber rounds for reading, not for precision: ≥ 100 → integer, ≥ 10 → 1 decimal, else 2 decimals.
 * @param {number} n
 */
export function formatNumber(n) {
  if (!Number.isFinite(n)) return '—';
  const a = Math.abs(n);
  if (a >= 100) return String(Math.round(n));
  return n.toFixed(a >= 10 ? 1 : 2);
}

/**
 * advantage is how many times better ours is than the other figure, so that > 1 always means ours is better
 * whichever way the workload's unit points; undefined when either figure cannot be divided.
 * @param {'higher' | 'lower'} better
 * @param {number} ours
 * @param {number} other
 * @returns {number | undefined}
 */
export function advantage(better, ours, other) {
  if (!(ours > 0 && other > 0 && Number.isFinite(ours) && Number.isFinite(other))) return undefined;
  return better === 'lower' ? other / ours : ours / other;
}

/**
 * formatRatio: ratios near 1 need two decimals to tell 0.95× from 1.05×; large ones do not.
 * @param {number} x
 */
export function formatRatio(x) {
  if (x >= 10) return `${Math.round(x)}×`;
  return `${x.toFixed(x >= 1 ? 1 : 2)}×`;
}

/**
 * targetIds lists the targets compared with ours in column order: CRD, ceiling, any others; the aggregated path
 * is reported apart because it is ours too.
 * @param {BenchResults} results
 */
function targetIds(results) {
  const ids = new Set((results.targets ?? []).map((t) => t.id));
  // A target with figures but no entry in `targets` is still shown rather than silently dropped.
  for (const w of results.workloads) for (const id of Object.keys(w.results ?? {})) ids.add(id);
  ids.delete(OURS);
  // The twin is only compared with ours through the same kube-apiserver (the table the report leads with).
  const twin = ids.delete(TWIN);
  const known = ['crd', 'ceiling'].filter((id) => ids.has(id));
  // Variants of ours (`ours-…`: through the aggregator, on etcd) are ours too: reported apart, each against the CRD.
  const variants = [...ids].filter((id) => id.startsWith('ours-')).sort();
  const others = [...ids].filter((id) => !id.startsWith('ours-') && !known.includes(id)).sort();
  return { compared: [...known, ...others], aggregated: ids.has(AGGREGATED), variants, twin };
}

/**
 * @param {BenchResults} results
 * @param {string} id
 */
const hasFigures = (results, id) => results.workloads.some((w) => w.results?.[id] !== undefined);

/** @param {string} s text for a Markdown table cell or list item */
// `|` would split the cell and `<` could open an HTML tag; a backslash keeps both literal in CommonMark.
const mdText = (s) => String(s).replace(/\r?\n/g, ' ').replace(/[|<]/g, '\\$&');

/** @param {string} iso */
function readableDate(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** @param {number} s */
function readableDuration(s) {
  if (!Number.isFinite(s)) return '';
  const m = Math.floor(s / 60);
  return m > 0 ? `${m} min ${Math.round(s - m * 60)} s` : `${Math.round(s)} s`;
}

/** @param {BenchMachine | undefined} m */
function machineLine(m) {
  if (!m) return 'unknown';
  const parts = [];
  if (m.cpus !== undefined) parts.push(`${m.cpus} CPU${m.cpus === 1 ? '' : 's'}${m.cpuModel ? ` (${m.cpuModel})` : ''}`);
  if (m.memoryMiB !== undefined) parts.push(`${(m.memoryMiB / 1024).toFixed(1)} GiB RAM`);
  if (m.os) parts.push(m.os);
  if (m.node) parts.push(`Node.js ${m.node}`);
  if (m.kubernetes) parts.push(`Kubernetes ${m.kubernetes}`);
  if (m.etcd) parts.push(`etcd ${m.etcd}`);
  return parts.join(', ');
}

/** @param {BenchParameters | undefined} p */
function parametersLine(p) {
  if (!p) return 'none';
  return Object.entries(p)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} ${Array.isArray(v) ? v.join('/') : String(v)}`)
    .join(', ');
}

/**
 * The cell of one figure: headline with its unit, then the latencies when measured ("1234 req/s (p50 0.7 ms,
 * p99 2.1 ms)"), and any request errors, which make the figure suspect.
 * @param {Measurement} m
 * @param {string} unit
 */
function figureCell(m, unit) {
  const details = [];
  // A latency workload's headline is usually its p99; repeating it in the details adds nothing.
  const sameAsHeadline = (/** @type {number} */ v) => unit === 'ms' && formatNumber(v) === formatNumber(m.value);
  if (typeof m.p50Ms === 'number' && !sameAsHeadline(m.p50Ms)) details.push(`p50 ${formatNumber(m.p50Ms)} ms`);
  if (typeof m.p99Ms === 'number' && !sameAsHeadline(m.p99Ms)) details.push(`p99 ${formatNumber(m.p99Ms)} ms`);
  if (typeof m.errors === 'number' && m.errors > 0) details.push(`${m.errors} error${m.errors === 1 ? '' : 's'}`);
  if (typeof m.firstMs === 'number') details.push(`first ${formatNumber(m.firstMs)} ms`);
  // Watch figures mean little without how much was delivered and how fast the writes actually went.
  if (typeof m.delivered === 'number') details.push(`delivered ${formatNumber(m.delivered * 100)}%`);
  if (typeof m.achievedWritesPerSecond === 'number') details.push(`${formatNumber(m.achievedWritesPerSecond)} writes/s`);
  // Memory: anonymous (heap) versus file-backed pages (mapped database files, the binary), which the kernel can reclaim.
  if (typeof m.anonMiB === 'number' && typeof m.fileMiB === 'number') details.push(`anon ${formatNumber(m.anonMiB)}, file ${formatNumber(m.fileMiB)}`);
  if (typeof m.diskMiB === 'number') details.push(`${formatNumber(m.diskMiB)} MiB on disk`);
  const head = `${formatNumber(m.value)} ${mdText(unit)}`;
  return details.length ? `${head} (${details.join(', ')})` : head;
}

/** @param {number | undefined} x */
function ratioCell(x) {
  if (x === undefined) return '—';
  return x >= 1 ? `**${formatRatio(x)} ▲**` : `${formatRatio(x)} ▼`;
}

/**
 * markdownReport renders the run as Markdown: what ran where, then one row per workload with each target's
 * figure and ours' advantage over it, then the errors and notes.
 * @param {BenchResults} results
 * @param {MarkdownOptions} [options]
 * @returns {string}
 */
export function markdownReport(results, options = {}) {
  const { compared, variants, twin } = targetIds(results);
  const pair = twin && hasFigures(results, AGGREGATED) && hasFigures(results, TWIN);
  // With its twin, ours-aggregated has its own table; the main one keeps the direct comparisons.
  const shown = variants.filter((v) => hasFigures(results, v) && !(pair && v === AGGREGATED));
  const labels = new Map((results.targets ?? []).map((t) => [t.id, t.label]));
  const columnName = (/** @type {string} */ id) => SHORT[id] ?? id;

  /** @type {{ text: string, ref: number }[]} errors numbered once per distinct target and message */
  const footnotes = [];
  /**
   * @param {string} id
   * @param {string} message
   */
  const footnote = (id, message) => {
    const text = `${columnName(id)}: ${message}`;
    let f = footnotes.find((x) => x.text === text);
    if (!f) footnotes.push((f = { text, ref: footnotes.length + 1 }));
    return f.ref;
  };
  /**
   * @param {Workload} w
   * @param {string} id
   */
  const cell = (w, id) => {
    const r = w.results?.[id];
    if (isFailure(r)) return `error [${footnote(id, r.error)}]`;
    if (isMeasurement(r)) return figureCell(r, w.unit);
    return '—';
  };
  /**
   * @param {Workload} w
   * @param {string} ourId
   * @param {string} otherId
   */
  const ratio = (w, ourId, otherId) => {
    const a = w.results?.[ourId];
    const b = w.results?.[otherId];
    return ratioCell(isMeasurement(a) && isMeasurement(b) ? advantage(w.better, a.value, b.value) : undefined);
  };

  const header = ['Workload', 'ours'];
  for (const id of compared) header.push(columnName(id), `ours vs ${columnName(id)}`);
  // Users reach ours through kube-apiserver while the CRD is served by it directly, and ours on etcd shares the
  // CRD's kind of store: those pairs are the like-for-like comparisons, so each gets its ratio next to its figure.
  const vsCrd = compared.includes('crd');
  for (const v of shown) header.push(columnName(v), ...(vsCrd ? [VS_CRD[v] ?? `${v} vs CRD`] : []));

  // Built first so that error footnotes are numbered in reading order.
  const pairRows = !pair
    ? []
    : results.workloads
        .filter((w) => w.results?.[AGGREGATED] !== undefined || w.results?.[TWIN] !== undefined)
        .map((w) => `| ${[mdText(w.label), cell(w, AGGREGATED), cell(w, TWIN), ratio(w, AGGREGATED, TWIN)].join(' | ')} |`);
  const mainTable = hasFigures(results, OURS) || compared.some((id) => hasFigures(results, id)) || shown.length > 0;
  const rows = results.workloads.map((w) => {
    const row = [mdText(w.label), cell(w, OURS)];
    for (const id of compared) row.push(cell(w, id), ratio(w, OURS, id));
    for (const v of shown) row.push(cell(w, v), ...(vsCrd ? [ratio(w, v, 'crd')] : []));
    return row;
  });

  const lines = [`# Benchmark: website-apiserver (${mdText(results.mode)} run)`, ''];
  const duration = readableDuration(results.durationSeconds);
  lines.push(
    `- **Mode:** ${mdText(results.mode)}`,
    `- **Date:** ${mdText(readableDate(results.date))}${duration ? ` (took ${duration})` : ''}`,
    `- **Machine:** ${mdText(machineLine(results.machine))}`,
    `- **Parameters:** ${mdText(parametersLine(results.parameters))}`,
    '- **Targets:**',
  );
  for (const id of [OURS, ...compared, ...variants, ...(twin ? [TWIN] : [])].filter((t) => labels.has(t) || hasFigures(results, t))) {
    lines.push(`  - ${mdText(id === OURS ? 'ours' : columnName(id))}: ${mdText(labels.get(id) ?? id)}`);
  }
  if (pair) {
    lines.push(
      '',
      '## Through kube-apiserver',
      '',
      'What kubectl and controllers see: ours behind its APIService and the same kind as a CRD, both reached at one ' +
        'kube-apiserver by the same client. "ours vs CRD" is ours ÷ CRD (CRD ÷ ours when lower is better).',
      '',
      '| Workload | ours through aggregator | CRD on the same kube-apiserver | ours vs CRD |',
      '| --- | ---: | ---: | ---: |',
      ...pairRows,
    );
  }
  // When only the pair ran, there is no direct table to show.
  if (mainTable)
    lines.push(
      ...(pair ? ['', '## Each target on its own port'] : []),
      '',
      'The advantage "ours vs X" is how many times better ours is than X: ours ÷ X when higher is better, X ÷ ours ' +
        'when lower is better, so above 1× (**bold ▲**) ours wins and below 1× (▼) X wins.',
      '',
      `| ${header.join(' | ')} |`,
      `|${header.map((_, i) => (i === 0 ? ' --- ' : ' ---: ')).join('|')}|`,
      ...rows.map((r) => `| ${r.join(' | ')} |`),
    );
  if (footnotes.length) {
    lines.push('', '**Errors**', '');
    for (const f of footnotes) lines.push(`${f.ref}. ${mdText(f.text)}`);
  }
  if (options.chartHref) {
    lines.push(
      '',
      `![Advantage of ours per workload, log scale](${options.chartHref.replace(/[ ()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)})`,
    );
  }
  const notes = results.notes ?? [];
  if (notes.length) {
    lines.push('', '**Notes**', '');
    for (const n of notes) lines.push(`- ${mdText(n)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** @param {unknown} s */
const xml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c);

// Chart geometry, in SVG user units (≈ px at 800 wide).
const WIDTH = 800;
const MIN_LOG = -4; // 1/16×
const MAX_LOG = 6; // 64×
const PLOT_LEFT = 80; // room for a value printed left of a bar clamped at 1/16×
const PLOT_RIGHT = WIDTH - 80;
const BAR = 14;
const BAR_GAP = 4;
const LABEL_HEIGHT = 18;
const ROW_GAP = 14;
const COLOURS = ['#1f6fb4', '#e07b00', '#2a9d5c', '#8e44ad', '#c0392b'];

/** @param {number} log2 */
const xOf = (log2) => PLOT_LEFT + ((log2 - MIN_LOG) / (MAX_LOG - MIN_LOG)) * (PLOT_RIGHT - PLOT_LEFT);

/** @param {number} p power of two, from MIN_LOG to MAX_LOG */
const tickLabel = (p) => (p < 0 ? `1/${2 ** -p}×` : `${2 ** p}×`);

/**
 * svgChart draws ours' advantage per workload as horizontal bars on a log2 scale around a 1× line: right of it
 * ours is better, left of it worse; one bar per compared target (CRD, ceiling). Self-contained: no fonts,
 * scripts or external references.
 * @param {BenchResults} results
 * @returns {string}
 */
export function svgChart(results) {
  const { compared } = targetIds(results);
  const labels = new Map((results.targets ?? []).map((t) => [t.id, t.label]));
  const name = (/** @type {string} */ id) => SHORT[id] ?? id;
  const date = readableDate(results.date).slice(0, 10);
  const cpus = results.machine?.cpus;
  const title = `website-apiserver: advantage of ours per workload (${results.mode} run, ${date}${
    cpus !== undefined ? `, ${cpus} CPU${cpus === 1 ? '' : 's'}` : ''
  })`;

  const out = [];
  let y = 28;
  const body = [];
  body.push(`<text x="${WIDTH / 2}" y="${y}" text-anchor="middle" font-size="16" font-weight="bold">${xml(title)}</text>`);
  y += 20;
  body.push(
    `<text x="${WIDTH / 2}" y="${y}" text-anchor="middle" font-size="12" fill="#444">${xml(
      'times better than the other target, log2 scale; right of 1× = ours better, left = worse; bars clamped to 1/16×–64×',
    )}</text>`,
  );
  y += 18;

  // The bars of each workload: ours through kube-apiserver against the CRD on the same one first (what users choose
  // between), when both ran; then ours on its own port against each other target.
  const bothAggregated = hasFigures(results, AGGREGATED) && hasFigures(results, TWIN);
  const pairs = [
    ...(bothAggregated
      ? [{ ours: AGGREGATED, other: TWIN, text: `ours through kube-apiserver vs ${name(TWIN)}: ${labels.get(TWIN) ?? TWIN}`, short: 'aggregated vs CRD' }]
      : []),
    ...compared.map((id) => ({ ours: OURS, other: id, text: `ours vs ${name(id)}: ${labels.get(id) ?? id}`, short: `vs ${name(id)}` })),
  ];
  // Legend: one swatch per pair, one line each so long labels fit.
  const legendItems = pairs.map((pr, i) => ({ colour: COLOURS[i % COLOURS.length], text: pr.text }));
  if (legendItems.length) {
    body.push('<g font-size="12">');
    for (const item of legendItems) {
      body.push(
        `<rect x="${PLOT_LEFT}" y="${y}" width="12" height="12" fill="${item.colour}"/>`,
        `<text x="${PLOT_LEFT + 18}" y="${y + 10}">${xml(item.text)}</text>`,
      );
      y += 18;
    }
    body.push('</g>');
  } else {
    body.push(`<text x="${WIDTH / 2}" y="${y + 10}" text-anchor="middle" font-size="12">${xml('no other target ran: nothing to compare')}</text>`);
    y += 18;
  }
  y += 8;

  // Scale along the top; the grid lines are drawn after the rows' height is known.
  const axisY = y + 12;
  const axis = ['<g font-size="11" fill="#555" text-anchor="middle">'];
  for (let p = MIN_LOG; p <= MAX_LOG; p++) axis.push(`<text x="${xOf(p).toFixed(1)}" y="${axisY}">${xml(tickLabel(p))}</text>`);
  axis.push('</g>');
  body.push(...axis);
  const plotTop = axisY + 8;
  y = plotTop + 6;

  const slots = Math.max(pairs.length, 1);
  const rows = [];
  for (const w of results.workloads) {
    const row = [`<g>`, `<text x="${PLOT_LEFT}" y="${y + 13}" font-size="13" font-weight="bold">${xml(w.label)}</text>`];
    let barY = y + LABEL_HEIGHT;
    pairs.forEach((pr, i) => {
      const ours = w.results?.[pr.ours];
      const other = w.results?.[pr.other];
      const a = isMeasurement(ours) && isMeasurement(other) ? advantage(w.better, ours.value, other.value) : undefined;
      const mid = barY + BAR / 2 + 4;
      if (a === undefined) {
        // Keep the slot so bars line up, and say why it is empty.
        const why = isFailure(other) || isFailure(ours) ? 'error' : 'no figure';
        row.push(`<text x="${xOf(0) + 4}" y="${mid}" font-size="11" fill="#777">${xml(`${pr.short}: ${why}`)}</text>`);
      } else {
        const log = Math.min(MAX_LOG, Math.max(MIN_LOG, Math.log2(a)));
        const x0 = xOf(0);
        const x1 = xOf(log);
        const left = Math.min(x0, x1);
        const width = Math.max(Math.abs(x1 - x0), 1); // an exact 1× still shows a sliver
        const tip = `${pr.text.split(':')[0]}: ${formatRatio(a)} (${w.better} is better)`;
        row.push(
          `<rect x="${left.toFixed(1)}" y="${barY}" width="${width.toFixed(1)}" height="${BAR}" fill="${COLOURS[i % COLOURS.length]}"><title>${xml(tip)}</title></rect>`,
          a >= 1
            ? `<text x="${(x1 + 4).toFixed(1)}" y="${mid}" font-size="11">${xml(formatRatio(a))}</text>`
            : `<text x="${(x1 - 4).toFixed(1)}" y="${mid}" font-size="11" text-anchor="end">${xml(formatRatio(a))}</text>`,
        );
      }
      barY += BAR + BAR_GAP;
    });
    row.push('</g>');
    rows.push(...row);
    y += LABEL_HEIGHT + slots * (BAR + BAR_GAP) + ROW_GAP;
  }
  const plotBottom = y - ROW_GAP / 2;

  const grid = ['<g stroke="#ddd" stroke-width="1">'];
  for (let p = MIN_LOG; p <= MAX_LOG; p++) {
    if (p !== 0) grid.push(`<line x1="${xOf(p).toFixed(1)}" y1="${plotTop}" x2="${xOf(p).toFixed(1)}" y2="${plotBottom}"/>`);
  }
  grid.push('</g>');
  const one = `<line x1="${xOf(0).toFixed(1)}" y1="${plotTop}" x2="${xOf(0).toFixed(1)}" y2="${plotBottom}" stroke="#222" stroke-width="1.5"/>`;
  // The scale again under the last row, so a tall chart can be read without scrolling back up.
  const bottomAxis = ['<g font-size="11" fill="#555" text-anchor="middle">'];
  for (let p = MIN_LOG; p <= MAX_LOG; p++) {
    bottomAxis.push(`<text x="${xOf(p).toFixed(1)}" y="${plotBottom + 14}">${xml(tickLabel(p))}</text>`);
  }
  bottomAxis.push('</g>');
  const height = Math.ceil(plotBottom + 24);

  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif">`,
    `<title>${xml(title)}</title>`,
    // An explicit background keeps the dark text readable where the page behind the image is dark.
    `<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#fff"/>`,
    ...body,
    ...grid,
    one,
    ...bottomAxis,
    ...rows,
    '</svg>',
  );
  return `${out.join('\n')}\n`;
}

/**
 * renderFiles reads a results JSON and writes `<base>.md` and `<base>.svg` beside it (base = the path without
 * `.json`); the Markdown embeds the chart by its file name.
 * @param {string} jsonPath
 * @returns {{ markdown: string, svg: string }} the paths written
 */
export function renderFiles(jsonPath) {
  /** @type {BenchResults} */
  const results = JSON.parse(readFileSync(jsonPath, 'utf8'));
  if (results?.schema !== 1 || !Array.isArray(results.workloads)) {
    throw new Error(`${jsonPath}: not a benchmark results file of schema 1`);
  }
  const base = jsonPath.replace(/\.json$/i, '');
  const markdown = `${base}.md`;
  const svg = `${base}.svg`;
  writeFileSync(svg, svgChart(results));
  writeFileSync(markdown, markdownReport(results, { chartHref: basename(svg) }));
  return { markdown, svg };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file || process.argv.length > 3) {
    process.stderr.write('usage: node test/bench/report.mjs <results.json>\n');
    process.exit(2);
  }
  try {
    const written = renderFiles(file);
    process.stdout.write(`wrote ${written.markdown}\nwrote ${written.svg}\n`);
  } catch (e) {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
