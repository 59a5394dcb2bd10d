// The list `continue` token: opaque to clients, but it must round-trip the snapshot revision and the position, and a
// token this server did not make must be a 400 BadRequest (as kube-apiserver answers), never a 500.
import { describe, expect, it } from 'vitest';
import { StatusError } from '../apis/meta/errors.js';
import { decodeContinue, encodeContinue } from './continue-token.js';

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

function rejection(token: string): StatusError {
  let thrown: unknown;
  try {
    decodeContinue(token);
  } catch (e) {
    thrown = e;
  }
  expect(thrown, `token ${JSON.stringify(token)} was accepted`).toBeInstanceOf(StatusError);
  return thrown as StatusError;
}

describe('continue token', () => {
  it('drops a count it cannot read but keeps the position (the count only spares counting)', () => {
    for (const counted of [{ n: -1, scope: 's' }, { n: 1.5, scope: 's' }, { n: 3 }, 'x', { n: 0, scope: 's' }]) {
      const token = b64({ v: 'meta.k8s.io/v1', rv: 5, start: ['ns', 'a'], counted });
      expect(decodeContinue(token)).toEqual({ revision: 5, namespace: 'ns', name: 'a' });
    }
  });

  it('round-trips the revision and the position', () => {
    for (const p of [
      { revision: 1, namespace: 'default', name: 'a' },
      { revision: 123456789, namespace: 'kube-system', name: 'my.site-1' },
      { revision: Number.MAX_SAFE_INTEGER, namespace: '', name: 'cluster-scoped' },
      { revision: 7, namespace: 'ns', name: 'a', counted: { n: 500, scope: '["g","websites",null]' } },
    ]) {
      const token = encodeContinue(p);
      expect(decodeContinue(token)).toEqual(p);
    }
  });

  it('is URL-safe: only base64url characters, no padding', () => {
    // Names chosen so the JSON has bytes that standard base64 would render as + and /.
    for (const name of ['a', '??>>', '~~~~~', 'x'.repeat(61)]) {
      const token = encodeContinue({ revision: 99, namespace: 'ns', name });
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeContinue(token).name).toBe(name);
    }
  });

  it('differs for different positions and revisions', () => {
    const a = encodeContinue({ revision: 5, namespace: 'ns', name: 'a' });
    expect(encodeContinue({ revision: 6, namespace: 'ns', name: 'a' })).not.toBe(a);
    expect(encodeContinue({ revision: 5, namespace: 'ns', name: 'b' })).not.toBe(a);
    expect(encodeContinue({ revision: 5, namespace: 'nt', name: 'a' })).not.toBe(a);
  });

  it('answers a token that is not base64 JSON with 400 BadRequest', () => {
    for (const token of ['', 'garbage!!', '%%%', b64('{"v":'), b64('not json'), 'eyJ2Ijoi']) {
      const e = rejection(token);
      expect(e.code).toBe(400);
      expect(e.status).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 400, reason: 'BadRequest' });
      expect(e.status.message).toMatch(/^continue key is not valid/);
    }
  });

  it('answers JSON that is not a token object with 400, not a TypeError', () => {
    for (const value of ['null', '5', '"text"', '[]', 'true']) {
      const e = rejection(b64(value));
      expect(e.code).toBe(400);
      expect(e.status.reason).toBe('BadRequest');
    }
  });

  it('answers a token of another encoding version with 400', () => {
    for (const v of [undefined, 'meta.k8s.io/v2', 'v1', 1]) {
      const e = rejection(b64({ v, rv: 5, start: ['ns', 'a'] }));
      expect(e.code).toBe(400);
      expect(e.status.reason).toBe('BadRequest');
      expect(e.status.message).toContain('version');
    }
  });

  it('answers a token with a missing or malformed resourceVersion with 400', () => {
    for (const rv of [undefined, null, '5', 0, -3, 1.5, Number.MAX_SAFE_INTEGER + 2, 'NaN', [5]]) {
      const e = rejection(b64({ v: 'meta.k8s.io/v1', rv, start: ['ns', 'a'] }));
      expect(e.code, `rv ${JSON.stringify(rv)}`).toBe(400);
      expect(e.status.reason).toBe('BadRequest');
      expect(e.status.message).toContain('resourceVersion');
    }
  });

  it('answers a token with a malformed start key with 400', () => {
    for (const start of [undefined, null, 'ns/a', ['ns'], ['ns', 'a', 'b'], ['ns', ''], [1, 'a'], ['ns', 2], { 0: 'ns', 1: 'a' }]) {
      const e = rejection(b64({ v: 'meta.k8s.io/v1', rv: 5, start }));
      expect(e.code, `start ${JSON.stringify(start)}`).toBe(400);
      expect(e.status.reason).toBe('BadRequest');
      expect(e.status.message).toContain('start key');
    }
  });
});
