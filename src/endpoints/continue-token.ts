/**
 * @module endpoints/continue-token
 * The opaque `continue` token of a paginated list (storage/etcd3 continue.go has the same idea): base64url JSON of
 * the snapshot revision and the last key returned, so every page of one list reads the same snapshot and starts
 * strictly after the previous page. It may also carry how many objects of the snapshot the pages so far covered, with
 * the collection they were counted in, so the next page tells remainingItemCount without counting the rest.
 * Clients never look inside; only this server decodes it.
 */
import { badRequest } from '../apis/meta/errors.js';

const VERSION = 'meta.k8s.io/v1';

/** ContinuePosition is what a token carries. */
export interface ContinuePosition {
  /** The revision of the snapshot the list reads. */
  revision: number;
  namespace: string;
  name: string;
  /**
   * How many objects of the snapshot sort at or before the position, counted in the collection `scope` names
   * (ListScope): only a list of that same collection may use the count.
   */
  counted?: { n: number; scope: string };
}

/** listScope names the collection a list reads: one resource, in one namespace or in all. */
export function listScope(group: string, resource: string, namespace: string | undefined): string {
  return JSON.stringify([group, resource, namespace ?? null]);
}

/** encodeContinue makes the token for the page after `p`. */
export function encodeContinue(p: ContinuePosition): string {
  const counted = p.counted ? { n: p.counted.n, scope: p.counted.scope } : undefined;
  return Buffer.from(JSON.stringify({ v: VERSION, rv: p.revision, start: [p.namespace, p.name], ...(counted ? { counted } : {}) })).toString('base64url');
}

/** decodeContinue reads a token, or throws 400 as kube-apiserver does for one it cannot parse. */
export function decodeContinue(token: string): ContinuePosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badRequest(`continue key is not valid: it is not base64-encoded JSON`);
  }
  const t = parsed as { v?: unknown; rv?: unknown; start?: unknown; counted?: { n?: unknown; scope?: unknown } };
  if (t?.v !== VERSION) throw badRequest(`continue key is not valid: server does not recognize this encoded version`);
  const start = t.start;
  if (typeof t.rv !== 'number' || !Number.isSafeInteger(t.rv) || t.rv < 1) {
    throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  if (!Array.isArray(start) || start.length !== 2 || typeof start[0] !== 'string' || typeof start[1] !== 'string' || !start[1]) {
    throw badRequest('continue key is not valid: encoded start key is malformed');
  }
  const c = t.counted;
  // A count that does not parse is only a lost shortcut: the position alone still makes the page.
  const counted = c && typeof c.n === 'number' && Number.isSafeInteger(c.n) && c.n >= 1 && typeof c.scope === 'string' ? { n: c.n, scope: c.scope } : undefined;
  return { revision: t.rv, namespace: start[0], name: start[1], ...(counted ? { counted } : {}) };
}
