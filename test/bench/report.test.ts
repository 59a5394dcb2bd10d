import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { advantage, formatNumber, markdownReport, svgChart, type BenchResults } from './report.mjs';

function sample(): BenchResults {
  return {
    schema: 1,
    mode: 'quick',
    date: '2026-11-21T10:00:00.000Z',
    durationSeconds: 95,
    machine: { cpus: 2, cpuModel: 'Test CPU', memoryMiB: 4096, os: 'Linux 6.1.0 x64', node: 'v20.20.2', kubernetes: 'v1.35.8' },
    parameters: { creates: 100, watchers: [1, 10], concurrency: 8 },
    targets: [
      { id: 'ours', label: 'website-apiserver (lmdb)' },
      { id: 'crd', label: 'kube-apiserver + etcd, Website CRD' },
      { id: 'ceiling', label: 'raw fastify + lmdb' },
    ],
    workloads: [
      {
        id: 'create-c1',
        label: 'create, concurrency 1',
        unit: 'req/s',
        better: 'higher',
        results: {
          ours: { value: 1234.5, p50Ms: 0.7, p99Ms: 2.1, count: 100, errors: 0 },
          crd: { value: 300, p50Ms: 3.1, p99Ms: 9, count: 100, errors: 0 },
          ceiling: { error: 'connection refused' },
        },
      },
      {
        id: 'watch-10',
        label: 'watch p99 <10 watchers> & "friends"',
        unit: 'ms',
        better: 'lower',
        // Ours is slower here (lower is better), so the advantage is below 1.
        results: { ours: { value: 40, p50Ms: 5, p99Ms: 40 }, crd: { value: 10 }, ceiling: { value: 20 } },
      },
      {
        id: 'rss-100k',
        label: 'RSS after 100k objects',
        unit: 'MiB',
        better: 'lower',
        results: { ours: { value: 150 }, ceiling: { value: 100 } },
      },
    ],
    notes: ['a note with a | pipe'],
  };
}

/** The cells of the table row whose first cell starts with `label`. */
function row(md: string, label: string): string[] {
  const line = md.split('\n').find((l) => l.startsWith(`| ${label}`));
  expect(line, `row ${label}`).toBeDefined();
  return line!
    .slice(2, -2)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

/**
 * Well-formedness without a parser dependency: every tag closes in order, and text has no bare `<` or `&`.
 * The chart writes no comments, CDATA or processing instructions, so a tag regex covers everything it emits.
 */
function checkXml(svg: string): string[] {
  const stack: string[] = [];
  const problems: string[] = [];
  const tag = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>/g;
  let last = 0;
  for (const m of svg.matchAll(tag)) {
    const text = svg.slice(last, m.index);
    if (/[<>]|&(?!(?:amp|lt|gt|quot|apos|#\d+);)/.test(text)) problems.push(`bad text ${JSON.stringify(text)}`);
    last = m.index + m[0].length;
    const [, closing, name, , selfClosing] = m;
    if (selfClosing) continue;
    if (!closing) stack.push(name!);
    else if (stack.pop() !== name) problems.push(`unbalanced </${name}>`);
  }
  if (svg.slice(last).trim()) problems.push('text after the root element');
  if (stack.length) problems.push(`unclosed ${stack.join(',')}`);
  return problems;
}

describe('bench report', () => {
  it('formats figures by size', () => {
    expect(formatNumber(1234.5)).toBe('1235');
    expect(formatNumber(12.34)).toBe('12.3');
    expect(formatNumber(0.7)).toBe('0.70');
  });

  it('defines the advantage so that above 1 means ours is better in both directions', () => {
    expect(advantage('higher', 1200, 300)).toBe(4);
    expect(advantage('lower', 10, 40)).toBe(4);
    expect(advantage('lower', 40, 10)).toBe(0.25);
    expect(advantage('higher', 0, 300)).toBeUndefined();

    const md = markdownReport(sample());
    const create = row(md, 'create');
    // Workload | ours | CRD | ours vs CRD | ceiling | ours vs ceiling
    expect(create[1]).toBe('1235 req/s (p50 0.70 ms, p99 2.10 ms)');
    expect(create[3]).toBe('**4.1× ▲**');
    const watch = row(md, 'watch');
    expect(watch[3]).toBe('0.25× ▼');
    expect(watch[5]).toBe('0.50× ▼');
    expect(md).toMatch(/how many times better ours is/);
  });

  it('shows a missing figure as a dash and an error with its message in a footnote', () => {
    const md = markdownReport(sample());
    const create = row(md, 'create');
    expect(create[4]).toBe('error [1]');
    expect(create[5]).toBe('—');
    expect(md).toContain('1. ceiling: connection refused');
    const rss = row(md, 'RSS');
    expect(rss[2]).toBe('—');
    expect(rss[3]).toBe('—');
    expect(rss[5]).toBe('0.67× ▼');
  });

  it('has columns only for the targets that ran', () => {
    const only = sample();
    only.targets = only.targets.filter((t) => t.id !== 'ceiling');
    for (const w of only.workloads) delete w.results['ceiling'];
    const md = markdownReport(only);
    expect(md).toContain('| Workload | ours | CRD | ours vs CRD |\n');
    expect(md).not.toContain('through aggregator');

    const agg = sample();
    agg.targets.push({ id: 'ours-aggregated', label: 'website-apiserver through kube-apiserver' });
    agg.workloads[0]!.results['ours-aggregated'] = { value: 600 };
    const header = markdownReport(agg)
      .split('\n')
      .find((l) => l.startsWith('| Workload'));
    expect(header).toBe('| Workload | ours | CRD | ours vs CRD | ceiling | ours vs ceiling | through aggregator | aggregated vs CRD |');
    expect(row(markdownReport(agg), 'create')[7]).toBe('**2.0× ▲**');
  });

  it('leads with ours through kube-apiserver against the CRD on the same kube-apiserver when both ran', () => {
    const agg = sample();
    agg.targets.push(
      { id: 'ours-aggregated', label: 'website-apiserver behind kube-apiserver (APIService)' },
      { id: 'crd-aggregated', label: 'the Website CRD as crd.example.com on the same kube-apiserver' },
    );
    agg.workloads[0]!.results['ours-aggregated'] = { value: 600 };
    agg.workloads[0]!.results['crd-aggregated'] = { value: 400 };
    agg.workloads[1]!.results['ours-aggregated'] = { value: 30 };
    agg.workloads[1]!.results['crd-aggregated'] = { error: 'watch: HTTP 503' };
    const md = markdownReport(agg);
    const lead = md.indexOf('## Through kube-apiserver');
    const direct = md.indexOf('## Each target on its own port');
    expect(lead).toBeGreaterThan(0);
    expect(direct).toBeGreaterThan(lead);
    // The first rows found are the pair's: Workload | through aggregator | CRD there | ratio.
    expect(row(md, 'create')).toEqual(['create, concurrency 1', '600 req/s', '400 req/s', '**1.5× ▲**']);
    expect(row(md, 'watch')).toEqual(['watch p99 \\<10 watchers> & "friends"', '30.0 ms', 'error [1]', '—']);
    expect(md).toContain('1. CRD on the same kube-apiserver: watch: HTTP 503');
    // The direct table keeps its columns; the twin is compared with ours-aggregated only.
    const header = md.split('\n').filter((l) => l.startsWith('| Workload'))[1];
    expect(header).toBe('| Workload | ours | CRD | ours vs CRD | ceiling | ours vs ceiling |');
    expect(md).toContain('  - CRD on the same kube-apiserver: the Website CRD as crd.example.com on the same kube-apiserver');
    // The chart's first bar of a workload is the pair's too, then ours on its own port against each other target.
    const svg = svgChart(agg);
    expect(checkXml(svg)).toEqual([]);
    const tips = [...svg.matchAll(/<title>([^<]*)<\/title><\/rect>/g)].map((m) => m[1]);
    expect(tips[0]).toBe('ours through kube-apiserver vs CRD on the same kube-apiserver: 1.5× (higher is better)');
    expect(tips[1]).toMatch(/^ours vs CRD: /);
    expect(svg).toContain('aggregated vs CRD: error');

    // Only the pair ran: no direct table.
    const onlyPair = agg;
    onlyPair.targets = onlyPair.targets.filter((t) => t.id.endsWith('-aggregated'));
    for (const w of onlyPair.workloads) for (const id of ['ours', 'crd', 'ceiling']) delete w.results[id];
    const md2 = markdownReport(onlyPair);
    expect(md2).toContain('## Through kube-apiserver');
    expect(md2).not.toContain('## Each target on its own port');
    expect(md2).not.toContain('  - ours: ');
  });

  it('draws a self-contained, well-formed SVG', () => {
    const svg = svgChart(sample());
    expect(svg.startsWith('<svg ')).toBe(true);
    expect(svg).toMatch(/viewBox="0 0 800 \d+"/);
    expect(svg).toContain('watch p99 &lt;10 watchers&gt; &amp; &quot;friends&quot;');
    expect(svg).toContain('create, concurrency 1');
    expect(svg).toContain('RSS after 100k objects');
    expect(svg).not.toMatch(/<script|href=|@import|url\(/);
    expect(checkXml(svg)).toEqual([]);
    // Height grows with the number of workloads.
    const more = sample();
    more.workloads.push({ ...more.workloads[0]!, id: 'extra', label: 'extra' });
    const h = (s: string) => Number(/viewBox="0 0 800 (\d+)"/.exec(s)![1]);
    expect(h(svgChart(more))).toBeGreaterThan(h(svg));
  });

  describe('CLI', () => {
    let dir: string | undefined;
    afterEach(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('writes the Markdown and the SVG next to the JSON', () => {
      dir = mkdtempSync(join(tmpdir(), 'bench-report-'));
      const json = join(dir, 'results-quick.json');
      writeFileSync(json, JSON.stringify(sample()));
      const script = fileURLToPath(new URL('./report.mjs', import.meta.url));
      const r = spawnSync(process.execPath, [script, json], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(existsSync(join(dir, 'results-quick.md'))).toBe(true);
      expect(readFileSync(join(dir, 'results-quick.md'), 'utf8')).toContain('![Advantage of ours per workload, log scale](results-quick.svg)');
      expect(readFileSync(join(dir, 'results-quick.svg'), 'utf8').startsWith('<svg ')).toBe(true);

      const bad = spawnSync(process.execPath, [script, join(dir, 'missing.json')], { encoding: 'utf8' });
      expect(bad.status).toBe(1);
    });
  });
});
