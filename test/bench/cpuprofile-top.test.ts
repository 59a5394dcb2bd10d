import { describe, expect, it } from 'vitest';
import { selfTimes, where } from './cpuprofile-top.mjs';

describe('cpuprofile-top', () => {
  it('sums self time per function over every node naming it, and per package', () => {
    const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', '') },
        { id: 2, callFrame: frame('parse', 'file:///x/node_modules/fast-json/index.js', 9) },
        { id: 3, callFrame: frame('parse', 'file:///x/node_modules/fast-json/index.js', 9) },
        { id: 4, callFrame: frame('handle', 'file:///x/dist/server/server.js', 41) },
        { id: 5, callFrame: frame('writev', 'node:internal/stream_base_commons', 3) },
      ],
      samples: [2, 3, 4, 5, 2, 1],
      timeDeltas: [1000, 2000, 500, 250, 1000, 250],
    };
    const t = selfTimes(profile);
    expect(t.totalMs).toBe(5);
    expect(t.functions[0]).toEqual(['parse node_modules/fast-json/index.js:10', 4]);
    expect(t.functions.find(([k]) => k.startsWith('handle'))).toEqual(['handle dist/server/server.js:42', 0.5]);
    expect(Object.fromEntries(t.places)).toEqual({ 'fast-json': 4, ours: 0.5, node: 0.25, '(engine)': 0.25 });
  });

  it('names scoped packages whole', () => {
    expect(where('file:///a/node_modules/@grpc/grpc-js/build/x.js')).toBe('@grpc/grpc-js');
    expect(where('node:net')).toBe('node');
  });
});
