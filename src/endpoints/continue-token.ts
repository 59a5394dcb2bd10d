/**
 * @module endpoints/continue-token
 * The opaque `continue` token of a paginated list (storage/etcd3 continue.go has the same idea): base64url JSON of
 * the snapshot revision and the last key returned, so every page of one list reads the same snapshot and starts
 * strictly after the previous page. Clients never look inside; only this server decodes it.
 */
import { badRequest } from '../apis/meta/errors.js';

const VERSION = 'meta.k8s.io/v1';

/** ContinuePosition is what a token carries. */
export interface ContinuePosition {
  /** The revision of the snapshot the list reads. */
  revision: number;
  namespace: string;
  name: string;
}

/** encodeContinue makes the token for the page after `p`. */
export function encodeContinue(p: ContinuePosition): string {
  return Buffer.from(JSON.stringify({ v: VERSION, rv: p.revision, start: [p.namespace, p.name] })).toString('base64url');
}

/** decodeContinue reads a token, or throws 400 as kube-apiserver does for one it cannot parse. */
export function decodeContinue(token: string): ContinuePosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badRequest(`continue key is not valid: it is not base64-encoded JSON`);
  }
  const t = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (t?.v !== VERSION) throw badRequest(`continue key is not valid: server does not recognize this encoded version`);
  const start = t.start;
  if (typeof t.rv !== 'number' || !Number.isSafeInteger(t.rv) || t.rv < 1) {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  if (!Array.isArray(start) || start.length !== 2 || typeof start[0] !== 'string' || typeof start[1] !== 'string' || !start[1]) {
    throw badRequest('continue key is not valid: encoded start key is malformed');
  }
  return { revision: t.rv, namespace: start[0], name: start[1] };
}
