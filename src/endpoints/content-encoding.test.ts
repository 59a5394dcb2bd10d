import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { acceptsGzip, compressesBody, GzipMembers } from './content-encoding.js';

describe('acceptsGzip (ContentEncodingSupported)', () => {
  it('takes an exact gzip token only', () => {
    for (const h of ['gzip', 'deflate, gzip', ' gzip ,br', ['gzip', 'br']]) expect(acceptsGzip(h), String(h)).toBe(true);
    for (const h of [undefined, '', 'deflate', 'gzip;q=1', 'GZIP', 'x-gzip', ['br', 'gzip']]) expect(acceptsGzip(h), String(h)).toBe(false);
  });
});

describe('compressesBody (defaultGzipThresholdBytes)', () => {
  it('counts the newline kube ends a body with', () => {
    expect(compressesBody(Buffer.alloc(131071))).toBe(false);
    expect(compressesBody(Buffer.alloc(131072))).toBe(true);
    expect(compressesBody(Buffer.concat([Buffer.alloc(131071), Buffer.from('\n')]))).toBe(false);
    expect(compressesBody(Buffer.concat([Buffer.alloc(131072), Buffer.from('\n')]))).toBe(true);
  });
});

describe('GzipMembers', () => {
  const settle = () => new Promise((r) => setTimeout(r, 50));

  it('makes one member per turn of the event loop, in order, each ended by a sync flush', async () => {
    const written: Buffer[] = [];
    const m = new GzipMembers(
      (b) => {
        written.push(b);
        return true;
      },
      () => {},
    );
    m.send('a\n');
    m.send('b\n');
    await settle();
    m.send('c\n');
    await settle();
    expect(written.map((w) => gunzipSync(w).toString())).toEqual(['a\nb\n', 'c\n']);
    for (const w of written) expect([...w.subarray(-14, -8)]).toEqual([0x00, 0x00, 0xff, 0xff, 0x03, 0x00]);
  });

  it('reports no room while the transport is full, until it drains', async () => {
    let full = true;
    const m = new GzipMembers(
      () => !full,
      () => {},
    );
    expect(m.send('a\n')).toBe(true);
    await settle();
    expect(m.send('b\n')).toBe(false);
    full = false;
    m.drained();
    expect(m.send('c\n')).toBe(true);
  });

  it('reports no room while more than 1 MiB waits to be compressed, and calls room once it is written', async () => {
    let rooms = 0;
    const m = new GzipMembers(
      () => true,
      () => rooms++,
    );
    const big = Buffer.alloc(600 * 1024, 'a');
    expect(m.send(big)).toBe(true);
    expect(m.send(big)).toBe(false);
    await settle();
    expect(rooms).toBe(1);
    expect(m.send('c\n')).toBe(true);
  });

  it('writes whatever is pending before end calls back, and nothing after discard', async () => {
    const written: Buffer[] = [];
    const m = new GzipMembers(
      (b) => {
        written.push(b);
        return true;
      },
      () => {},
    );
    m.send('last\n');
    await new Promise<void>((r) => m.end(r));
    expect(gunzipSync(Buffer.concat(written)).toString()).toBe('last\n');
    const d = new GzipMembers(
      (b) => {
        written.push(b);
        return true;
      },
      () => {},
    );
    d.send('dropped\n');
    d.flush();
    d.discard();
    await settle();
    expect(written).toHaveLength(1);
  });
});
