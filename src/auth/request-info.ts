/**
 * @module auth/request-info
 * The authorization attributes of a request, derived from its method and URL exactly as kube-apiserver's
 * RequestInfoFactory does (k8s.io/apiserver pkg/endpoints/request/requestinfo.go): list vs get by the presence of a
 * name, watch from `?watch`, a name taken from `fieldSelector=metadata.name=X`, deletecollection, subresources. The
 * query is decoded by apis/meta/parameter-codec, exactly as the handlers decode it.
 */
import { parseQuery, requestInfoListOptions } from '../apis/meta/parameter-codec.js';

/** RequestAttributes is what an authorizer decides on (authorizer.Attributes without the user). */
export type RequestAttributes =
  | {
      isResourceRequest: true;
      verb: string;
      apiGroup: string;
      apiVersion: string;
      namespace: string;
      resource: string;
      subresource: string;
      name: string;
      path: string;
    }
  | { isResourceRequest: false; verb: string; path: string };

const API_PREFIXES = new Set(['api', 'apis']);
const GROUPLESS_PREFIXES = new Set(['api']);
const SPECIAL_VERBS = new Set(['proxy', 'watch']);
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const VERB_BY_METHOD: Record<string, string> = { POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' };

// A name usable as a path segment (path.IsValidPathSegmentName): not . or .., no / or %.
const validSegment = (s: string) => s !== '.' && s !== '..' && !s.includes('/') && !s.includes('%');

/** requestAttributes parses a request's method and URL (path plus query) into authorization attributes. */
export function requestAttributes(method: string, url: string): RequestAttributes {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const nonResource: RequestAttributes = { isResourceRequest: false, verb: method.toLowerCase(), path };
  let parts = path
    .split('/')
    .filter((p) => p !== '')
    .map((p) => {
      try {
        return decodeURIComponent(p);
      } catch {
        return p;
      }
    });
  if (parts.length < 3 || !API_PREFIXES.has(parts[0] as string)) return nonResource;
  const prefix = parts[0] as string;
  parts = parts.slice(1);
  let apiGroup = '';
  if (!GROUPLESS_PREFIXES.has(prefix)) {
    if (parts.length < 3) return nonResource;
    apiGroup = parts[0] as string;
    parts = parts.slice(1);
  }
  const apiVersion = parts[0] as string;
  parts = parts.slice(1);
  let verb: string;
  if (SPECIAL_VERBS.has(parts[0] as string)) {
    if (parts.length < 2) return nonResource;
    verb = parts[0] as string;
    parts = parts.slice(1);
  } else {
    verb = VERB_BY_METHOD[method.toUpperCase()] ?? '';
  }
  let namespace = '';
  if (parts[0] === 'namespaces') {
    if (parts.length > 1) {
      namespace = parts[1] as string;
      if (parts.length > 2 && !NAMESPACE_SUBRESOURCES.has(parts[2] as string)) parts = parts.slice(2);
    }
  }
  const resource = parts[0] ?? '';
  let name = parts[1] ?? '';
  const subresource = parts.length >= 3 ? (parts[2] as string) : '';
  if (name === '' && verb === 'get') {
    // The same decoding the list handler does (parameter-codec), so the verb authorized is the one served.
    const opts = requestInfoListOptions(parseQuery(q < 0 ? '' : url.slice(q + 1)));
    verb = opts.watch ? 'watch' : 'list';
    const selected = opts.field?.exactName();
    if (selected !== undefined && selected !== '' && validSegment(selected)) name = selected;
  }
  if (name === '' && verb === 'delete') verb = 'deletecollection';
  return { isResourceRequest: true, verb, apiGroup, apiVersion, namespace, resource, subresource, name, path };
}
