// CRD printer columns and selectable fields against what kube-apiserver 1.37.2 answered for the same CRDs and objects
// (test/fixtures/crd-columns/tables.json, recorded by record.mjs there: the corpus CRDs with their examples, and probe
// CRDs with odd values and odd paths), plus the rules behind those answers one by one.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../apis/meta/types.js';
import {
  CREATION_TIMESTAMP_DESCRIPTION,
  type CrdColumn,
  cellForJSONValue,
  humanReadableDate,
  parseGoRFC3339,
  printerColumnsOf,
  selectableFieldValue,
} from './crd-columns.js';
import { humanDuration } from './table.js';

interface RecordedTable {
  version: string;
  additionalPrinterColumns: CrdColumn[] | null;
  date: string;
  columnDefinitions: { name: string; type: string; format: string; description: string; priority: number }[];
  rows: { cells: unknown[]; object: KubeObject }[];
}
interface Recorded {
  crds: { source: string; name: string; versions: RecordedTable[]; fieldSelectors?: { selector: string; status: number; names: string[] }[] }[];
}
const recorded = JSON.parse(readFileSync(new URL('../../test/fixtures/crd-columns/tables.json', import.meta.url), 'utf8')) as Recorded;

describe('against kube-apiserver', () => {
  it('recorded every corpus CRD, the probes and their rows', () => {
    expect(recorded.crds.length).toBeGreaterThanOrEqual(28);
    expect(recorded.crds.reduce((n, c) => n + c.versions.reduce((m, v) => m + v.rows.length, 0), 0)).toBeGreaterThan(60);
  });

  for (const crd of recorded.crds) {
    it(`${crd.source}: the same column definitions and cells`, () => {
      // one set of columns per version, reused for every table and row in order, as kube reuses its convertor
      const byVersion = new Map<string, ReturnType<typeof printerColumnsOf>>();
      for (const table of crd.versions) {
        let now = Date.parse(table.date);
        const columns = byVersion.get(table.version) ?? printerColumnsOf(table.additionalPrinterColumns ?? [], () => now);
        byVersion.set(table.version, columns);
        expect(columns.map((c) => ({ name: c.name, type: c.type, format: c.format, description: c.description, priority: c.priority }))).toEqual(
          table.columnDefinitions.slice(1),
        );
        for (const row of table.rows) {
          const want = row.cells.slice(1);
          columns.forEach((column, i) => {
            const at = `${row.object.metadata.name} ${column.name}`;
            if (column.type !== 'date') {
              expect(column.cell(row.object), at).toEqual(want[i]);
              return;
            }
            // kube computed the age a moment before the response's Date header (whole seconds): one of these instants
            const ages = [-1000, 0, 999].map((d) => {
              now = Date.parse(table.date) + d;
              return column.cell(row.object);
            });
            expect(ages, at).toContainEqual(want[i]);
          });
        }
      }
    });
  }

  it('selects by selectableFields as kube does: the value printed, "" for a missing field', () => {
    const probe = recorded.crds.find((c) => c.source === 'probe')!;
    const objects = probe.versions[0]!.rows.map((r) => r.object);
    const fields = {
      'spec.selS': selectableFieldValue('.spec.selS'),
      'spec.selI': selectableFieldValue('.spec.selI'),
      'spec.selB': selectableFieldValue('.spec.selB'),
    };
    for (const q of probe.fieldSelectors!) {
      const [, field, op, value] = /^([^!=]+)(!=|=)(.*)$/.exec(q.selector)!;
      const get = fields[field as keyof typeof fields];
      const names = objects
        .filter((o) => (op === '=' ? get(o) === value : get(o) !== value))
        .map((o) => o.metadata.name!)
        .sort();
      expect(names, q.selector).toEqual(q.names);
    }
  });
});

describe('printerColumnsOf', () => {
  const obj = (spec: Record<string, unknown>, extra: Partial<KubeObject> = {}): KubeObject =>
    ({ apiVersion: 'x/v1', kind: 'X', metadata: { name: 'n', creationTimestamp: '2026-01-01T00:00:00Z' }, spec, ...extra }) as KubeObject;
  const now = () => Date.parse('2026-01-01T00:05:00Z');
  const cell = (type: string, jsonPath: string, spec: Record<string, unknown>) => printerColumnsOf([{ name: 'C', type, jsonPath }], now)[0]!.cell(obj(spec));

  it('describes a column as kube does, and gives a version without columns the Age column', () => {
    const [plain, described] = printerColumnsOf([
      { name: 'A', type: 'string', jsonPath: '.spec.a' },
      { name: 'B', type: 'integer', format: 'int32', description: 'the b', priority: 2, jsonPath: '.spec.b' },
    ]);
    expect(plain).toMatchObject({
      name: 'A',
      type: 'string',
      format: '',
      priority: 0,
      description: 'Custom resource definition column (in JSONPath format): .spec.a',
    });
    expect(described).toMatchObject({ name: 'B', type: 'integer', format: 'int32', priority: 2, description: 'the b' });
    const [age, ...rest] = printerColumnsOf([], now);
    expect(rest).toEqual([]);
    expect(age).toMatchObject({ name: 'Age', type: 'date', format: '', priority: 0, description: CREATION_TIMESTAMP_DESCRIPTION });
    expect(age!.cell(obj({}))).toBe('5m');
  });

  it('keeps only the columns before one whose path client-go cannot parse', () => {
    const cols = printerColumnsOf([
      { name: 'A', type: 'string', jsonPath: '.spec.a' },
      { name: 'Bad', type: 'string', jsonPath: '.spec.x[' },
      { name: 'C', type: 'string', jsonPath: '.spec.c' },
    ]);
    expect(cols.map((c) => c.name)).toEqual(['A']);
  });

  it('prints string cells as client-go does', () => {
    expect(cell('string', '.spec.v', { v: 'text' })).toBe('text');
    expect(cell('string', '.spec.v', { v: 42 })).toBe('42');
    expect(cell('string', '.spec.v', { v: 1234567.5 })).toBe('1.2345675e+06');
    expect(cell('string', '.spec.v', { v: true })).toBe('true');
    expect(cell('string', '.spec.v', { v: null })).toBe('<no value>');
    expect(cell('string', '.spec.v', { v: { b: 1, a: [1, 'x'] } })).toBe('{"a":[1,"x"],"b":1}');
    expect(cell('string', '.spec.v', {})).toBeNull();
    expect(cell('string', '.spec.v[0]', { v: [] })).toBeNull(); // out of range: an error, so no cell
    expect(cell('string', '.spec.v[*].x', { v: [{ x: 'first' }, { x: 'second' }] })).toBe('first');
    expect(
      cell('string', '.spec.v[?(@.t=="R")].s', {
        v: [
          { t: 1, s: 'a' },
          { t: 'R', s: 'b' },
        ],
      }),
    ).toBeNull(); // int vs string
    expect(cell('string', '.spec.v[?(@.t=="R")].s', { v: [{ s: 'a' }, { t: 'R', s: 'b' }] })).toBe('b');
  });

  it('converts the other types as cellForJSONValue does, and gives null for a value of another type', () => {
    expect(cell('integer', '.spec.v', { v: 7 })).toBe(7);
    expect(cell('integer', '.spec.v', { v: -2.7 })).toBe(-2);
    expect(cell('integer', '.spec.v', { v: '7' })).toBeNull();
    expect(cell('integer', '.spec.v', { v: true })).toBeNull();
    expect(cell('integer', '.spec.s.*', { s: 'a' })).toBeNull(); // a byte (uint8) is not an int64
    expect(cell('number', '.spec.v', { v: 7 })).toBe(7);
    expect(cell('number', '.spec.v', { v: 0.5 })).toBe(0.5);
    expect(cell('number', '.spec.v', { v: '0.5' })).toBeNull();
    expect(cell('boolean', '.spec.v', { v: false })).toBe(false);
    expect(cell('boolean', '.spec.v', { v: 'true' })).toBeNull();
    expect(cell('date', '.spec.v', { v: '2025-12-31T23:00:00Z' })).toBe('65m');
    expect(cell('date', '.spec.v', { v: 5 })).toBeNull();
    expect(cell('date', '.spec.v', { v: 'yesterday' })).toBe('<invalid>');
    expect(cell('integer', '.spec.v', { v: null })).toBeNull();
    expect(cellForJSONValue('string', 'x', 0)).toBe('x');
    expect(cellForJSONValue('nonsense', 'x', 0)).toBeNull();
  });
});

describe('dates as metav1.Time and duration.HumanDuration render them', () => {
  it('parses what Go time.Parse(RFC3339) parses', () => {
    expect(parseGoRFC3339('2020-01-02T03:04:05Z')).toBe(Date.UTC(2020, 0, 2, 3, 4, 5));
    expect(parseGoRFC3339('2020-01-02T3:04:05Z')).toBe(Date.UTC(2020, 0, 2, 3, 4, 5));
    expect(parseGoRFC3339('2020-01-02T03:04:05.5+01:00')).toBe(Date.UTC(2020, 0, 2, 2, 4, 5, 500));
    expect(parseGoRFC3339('2020-01-02T03:04:05,25Z')).toBe(Date.UTC(2020, 0, 2, 3, 4, 5, 250));
    expect(parseGoRFC3339('2020-02-29T00:00:00Z')).toBe(Date.UTC(2020, 1, 29));
    for (const bad of [
      '2020-01-02',
      '2020-01-02t03:04:05z',
      '2020-02-30T00:00:00Z',
      '2021-02-29T00:00:00Z',
      '2020-01-02T24:00:00Z',
      '2020-01-02T03:04:60Z',
      '2020-01-02T03:04:05+25:00',
      '2020-01-02T03:04:05',
      '2020-13-01T00:00:00Z',
      ' 2020-01-02T03:04:05Z',
    ]) {
      expect(parseGoRFC3339(bad), bad).toBeUndefined();
    }
  });

  it('says <unknown> for the zero time and <invalid> for the future', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(humanReadableDate('', now)).toBe('<unknown>');
    expect(humanReadableDate('null', now)).toBe('<unknown>');
    expect(humanReadableDate('0001-01-01T00:00:00Z', now)).toBe('<unknown>');
    expect(humanReadableDate('0001-01-01T01:00:00+01:00', now)).toBe('<unknown>');
    expect(humanReadableDate('2026-01-01T00:00:01Z', now)).toBe('0s'); // within the 2 s kube tolerates
    expect(humanReadableDate('2026-01-01T00:00:02Z', now)).toBe('<invalid>');
  });

  it.each([
    [0, '0s'],
    [-1500, '0s'],
    [-2000, '<invalid>'],
    [119_999, '119s'],
    [120_000, '2m'],
    [125_000, '2m5s'],
    [599_000, '9m59s'],
    [600_000, '10m'],
    [179 * 60_000, '179m'],
    [180 * 60_000, '3h'],
    [(3 * 60 + 7) * 60_000, '3h7m'],
    [8 * 3_600_000, '8h'],
    [47 * 3_600_000, '47h'],
    [48 * 3_600_000, '2d'],
    [(2 * 24 + 5) * 3_600_000, '2d5h'],
    [8 * 86_400_000, '8d'],
    [729 * 86_400_000, '729d'],
    [730 * 86_400_000, '2y'],
    [(730 + 10) * 86_400_000, '2y10d'],
    [8 * 365 * 86_400_000, '8y'],
  ])('HumanDuration(%d ms) is %s', (ms, want) => expect(humanDuration(ms)).toBe(want));
});

describe('selectableFieldValue', () => {
  const o = (spec: Record<string, unknown>) => ({ apiVersion: 'x/v1', kind: 'X', metadata: { name: 'n' }, spec }) as KubeObject;
  it('prints the value as fmt.Sprint does, with "" for a missing or null field', () => {
    expect(selectableFieldValue('.spec.s')(o({ s: 'red' }))).toBe('red');
    expect(selectableFieldValue('.spec.i')(o({ i: 5 }))).toBe('5');
    expect(selectableFieldValue('.spec.b')(o({ b: false }))).toBe('false');
    expect(selectableFieldValue('.spec.s')(o({}))).toBe('');
    expect(selectableFieldValue('.spec.s')(o({ s: null }))).toBe('');
  });
  it('has no value where kube fails the request: more than one match, an evaluation error, a path that does not parse', () => {
    expect(selectableFieldValue('.spec.l[*]')(o({ l: [1, 2] }))).toBeUndefined();
    expect(selectableFieldValue('.spec.l[3]')(o({ l: [1] }))).toBeUndefined();
    expect(selectableFieldValue('.spec.x[')(o({}))).toBeUndefined();
  });
});
