import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { goKeyLess, readsAsString, toGoYaml } from './go-yaml.js';

const TESTDATA = join(import.meta.dirname, 'testdata', 'go-yaml');
const read = (name: string) => readFileSync(join(TESTDATA, name), 'utf8');

describe('toGoYaml', () => {
  // kube-apiserver's own answers (testdata/go-yaml/README.md): the JSON rendered here must be its YAML, byte for byte.
  it.each(['object', 'quoting', 'strings', 'table', 'status-422'])('renders %s as kube-apiserver 1.37 did', (name) => {
    expect(toGoYaml(JSON.parse(read(`${name}.json`)))).toBe(read(`${name}.yaml`));
  });

  // The strings fixture holds texts that readers disagree on (a YAML 1.2 reader takes `.` as NaN, 2026-02-30 as
  // a date); the rest must read back whole.
  it('reads back as the same value', () => {
    const values = [
      JSON.parse(read('object.json')),
      JSON.parse(read('table.json')),
      JSON.parse(read('status-422.json')),
      { a: ['x', ['y', []], { b: {}, c: [{ d: 1.5 }] }], e: null, f: true, g: -3, h: 'multi\nline\n', i: '\ttab' },
      { s: `${'word '.repeat(40)}\n${' indented'.repeat(12)}`, t: `${"it's ".repeat(30)}`, u: `"${'x '.repeat(60)}\u0001"` },
    ];
    for (const v of values) expect(YAML.parse(toGoYaml(v))).toEqual(v);
  });

  it('prints numbers as go-yaml prints what it read from their JSON', () => {
    expect(toGoYaml({ a: 3, b: -7, c: 1.5, d: 1234567.5, e: 0.0001, f: 0.00001, g: 1e21, h: 1e20, i: 1e19, j: 100000.25 })).toBe(
      'a: 3\nb: -7\nc: 1.5\nd: 1.2345675e+06\ne: 0.0001\nf: 1e-05\ng: 1e+21\nh: 1e+20\ni: 10000000000000000000\nj: 100000.25\n',
    );
  });

  it('writes a key over 128 bytes as a complex key, as kube-apiserver did', () => {
    const long = `${'a'.repeat(60)}.${'b'.repeat(60)}.com/${'c'.repeat(20)}`;
    expect(toGoYaml({ annotations: { [long]: 'v', x: 'y' }, f: { [`f:${long}`]: {} } })).toBe(
      `annotations:\n  ? ${long}\n  : v\n  x: "y"\nf:\n  ? f:${long}\n  : {}\n`,
    );
  });

  it("writes empty collections in flow style and sequences at their key's column", () => {
    expect(toGoYaml({})).toBe('{}\n');
    expect(toGoYaml({ a: [], b: {}, c: [[1, 2], { d: [] }] })).toBe('a: []\nb: {}\nc:\n- - 1\n  - 2\n- d: []\n');
  });
});

describe('readsAsString', () => {
  it('quotes what go-yaml v2 would read as another type', () => {
    for (const s of [
      '',
      'true',
      'On',
      'y',
      'NULL',
      '~',
      '123',
      '0x1F',
      '012',
      '+1',
      '1_000',
      '1e3',
      '.5',
      '.inf',
      '2026-01-01',
      '2026-1-2',
      '2026-01-02T03:04:05Z',
      '0b101',
    ]) {
      expect(readsAsString(s), s).toBe(false);
    }
    for (const s of ['x', '.', '<<', '-', '2026-02-30', '1e999', 'yes!', '12a', 'https://x/y']) expect(readsAsString(s), s).toBe(true);
  });
});

describe('goKeyLess', () => {
  it('puts other characters before letters and compares runs of digits by value', () => {
    const keys = ['aB', 'a10', 'a9', 'a_b', 'a.b', 'A', '123', 'a-b', 'aZb', 'a001', 'a01'];
    expect([...keys].sort((x, y) => (goKeyLess(x, y) ? -1 : goKeyLess(y, x) ? 1 : 0))).toEqual([
      '123',
      'A',
      'a-b',
      'a.b',
      'a_b',
      'a01',
      'a001',
      'a9',
      'a10',
      'aB',
      'aZb',
    ]);
  });
});
