import { describe, expect, it } from 'vitest';
import { measure, table, VARIANTS, website } from './lmdb-write-cost.mjs';

describe('bench lmdb-write-cost', () => {
  it('pads a Website to the size asked for', () => {
    expect(JSON.stringify(website(1, 7, 1455)).length).toBe(1455);
  });

  it('stores compressed objects only in the variants that compress, with either dictionary, for updates and creates', async () => {
    for (const op of ['update', 'create'] as const) {
      const small = { op, writes: 40, concurrency: 4, size: 1455, objects: 10 };
      const [plain, ours] = [await measure(VARIANTS[op][0]!, small), await measure(VARIANTS[op].at(-1)!, small)];
      expect(plain.jsonBytes).toBe(1455);
      expect(plain.storedBytes).toBe(1455);
      expect(ours.jsonBytes).toBe(1455);
      expect(ours.storedBytes).toBeLessThan(1000);
      const tiny = await measure(VARIANTS[op].find((v) => v.choices.tinyDictionary)!, small);
      expect(tiny.jsonBytes).toBe(1455);
      expect(tiny.storedBytes).toBeLessThan(1000);
      const rows = table([plain, ours]).split('\n');
      expect(rows).toHaveLength(4);
      expect(rows[3]).toMatch(/^\| ours \(child transaction, LZ4, [a-z ]+\) \| \d+ \| \d+ \| [+−]\d+ µs \| \d+ of 1455 \|$/);
    }
  });
});
