// k8s.io/apimachinery pkg/util/net/http.go NewWarningHeader and k8s.io/apiserver pkg/endpoints/filters/warning.go
// (the recorder; its tests Test_recorder_AddWarning and TestTruncation, scaled to the real limits).
import { describe, expect, it } from 'vitest';
import { warningHeaders } from './warning-header.js';

// A header value as the bytes on the wire, read back as UTF-8.
const wire = (v: string) => Buffer.from(v, 'latin1').toString('utf8');

describe('warningHeaders', () => {
  it('quotes the text, escaping only " and \\, and carries it as UTF-8 bytes', () => {
    expect(warningHeaders(['mytext']).map(wire)).toEqual(['299 - "mytext"']);
    expect(warningHeaders(['unknown field "spec.a"b\\c"']).map(wire)).toEqual(['299 - "unknown field \\"spec.a\\"b\\\\c\\""']);
    const [v] = warningHeaders(['unknown field "spec.日本語"']);
    expect(wire(v as string)).toBe('299 - "unknown field \\"spec.日本語\\""');
    // Node can carry it: one character per byte, none above 0xff.
    expect(/^[\x20-\xff]*$/.test(v as string)).toBe(true);
  });

  it('drops empty, duplicate, control-character and invalid UTF-16 texts, as NewWarningHeader refuses them', () => {
    expect(warningHeaders(['', 'a', 'a', 'my\ntext', 'tab\there', 'c1\u0085', 'lone \ud800', 'b']).map(wire)).toEqual(['299 - "a"', '299 - "b"']);
  });

  it('past 4096 runes, texts are cut to 256 runes and the rest left out once 4096 are written again', () => {
    const long = (c: string) => c.repeat(1000);
    const texts = ['short', long('a'), long('b'), long('c'), long('d'), long('é'), ...Array.from({ length: 20 }, (_, i) => `${long(String(i % 10))}-${i}`)];
    const got = warningHeaders(texts).map(wire);
    // Before the limit everything fits whole; the fifth long text crosses it and triggers truncation of all.
    expect(got[0]).toBe('299 - "short"');
    expect(got[1]).toBe(`299 - "${'a'.repeat(256)}"`);
    expect(got[5]).toBe(`299 - "${'é'.repeat(256)}"`);
    const runes = got.reduce((n, h) => n + Array.from(h).length - '299 - ""'.length, 0);
    expect(runes).toBeGreaterThanOrEqual(4096);
    expect(runes).toBeLessThan(4096 + 256);
    expect(warningHeaders(['a'.repeat(4096)]).map(wire)).toEqual([`299 - "${'a'.repeat(4096)}"`]);
  });
});
