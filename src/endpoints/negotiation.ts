/**
 * @module endpoints/negotiation
 * Accept-header negotiation (k8s.io/apiserver handlers/negotiation): walk the media ranges in order, skip what we
 * cannot produce (protobuf, CBOR, unknown `as=`), take the first we can. Never 406 while JSON is acceptable.
 */
import { notAcceptable } from '../apis/meta/errors.js';

/** Target is the representation a response should have. */
export type Target =
  | { kind: 'Object' }
  | { kind: 'Table'; version: string }
  | { kind: 'PartialObjectMetadata'; version: string }
  | { kind: 'PartialObjectMetadataList'; version: string };

/** MediaRange is one parsed clause of an Accept header. */
export interface MediaRange {
  type: string;
  subtype: string;
  params: Record<string, string>;
}

/** parseAccept splits an Accept header into media ranges, in order (q values are ignored, as kube-apiserver does). */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header) return [];
  const out: MediaRange[] = [];
  for (const clause of header.split(',')) {
    const [mt, ...rawParams] = clause.split(';').map((s) => s.trim());
    if (!mt) continue;
    const [type = '', subtype = ''] = mt.toLowerCase().split('/');
    const params: Record<string, string> = {};
    for (const p of rawParams) {
      const i = p.indexOf('=');
      if (i > 0) params[p.slice(0, i).trim().toLowerCase()] = p.slice(i + 1).trim().replace(/^"|"$/g, '');
    }
    out.push({ type, subtype, params });
  }
  return out;
}

const ACCEPTED = ['application/json', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io'];

/**
 * negotiate picks the target for a response. `single` tells whether the request addresses one object
 * (PartialObjectMetadata) or a collection (PartialObjectMetadataList); Table fits both.
 */
export function negotiate(header: string | undefined, single: boolean): Target {
  const ranges = parseAccept(header);
  if (ranges.length === 0) return { kind: 'Object' };
  for (const r of ranges) {
    const json = (r.type === 'application' && r.subtype === 'json') || (r.type === '*' && r.subtype === '*') || (r.type === 'application' && r.subtype === '*');
    if (!json) continue;
    const as = r.params['as'];
    if (!as) return { kind: 'Object' };
    const g = r.params['g'];
    const v = r.params['v'];
    if (g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) continue;
    if (as === 'Table') return { kind: 'Table', version: v };
    if (as === 'PartialObjectMetadata' && single) return { kind: 'PartialObjectMetadata', version: v };
    if (as === 'PartialObjectMetadataList' && !single) return { kind: 'PartialObjectMetadataList', version: v };
  }
  throw notAcceptable(ACCEPTED);
}

/** watchTarget negotiates a watch: events carry single objects, so `as=PartialObjectMetadata` applies per event. */
export function negotiateWatch(header: string | undefined): Target {
  return negotiate(header, true);
}
