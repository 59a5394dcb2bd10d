import { describe, expect, it } from 'vitest';
import { frameName, summarize } from './alloc.mjs';

const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber, scriptId: '0', columnNumber: 0 });

describe('bench allocation profile summary', () => {
  it('names frames by function, file below dist/ or node_modules/, and 1-based line', () => {
    expect(frameName(frame('copy', 'file:///work/main/dist/apis/meta/json-clone.js', 10))).toBe('copy apis/meta/json-clone.js:11');
    expect(frameName(frame('', 'file:///x/node_modules/fastify/lib/reply.js', 0))).toBe('(anonymous) fastify/lib/reply.js:1');
  });

  it('totals self bytes per function and inclusive bytes once per stack, recursion included', () => {
    const leaf = { callFrame: frame('walk', 'file:///d/dist/a.js'), selfSize: 100, children: [] };
    const recursive = { callFrame: frame('walk', 'file:///d/dist/a.js'), selfSize: 50, children: [leaf] };
    const head = {
      callFrame: frame('(root)', ''),
      selfSize: 0,
      children: [{ callFrame: frame('handler', 'file:///d/dist/b.js'), selfSize: 10, children: [recursive] }],
    };
    const s = summarize(head);
    expect(s.total).toBe(160);
    expect(s.self.get('walk a.js:1')).toBe(150);
    expect(s.inclusive.get('walk a.js:1')).toBe(150);
    expect(s.inclusive.get('handler b.js:1')).toBe(160);
  });
});
