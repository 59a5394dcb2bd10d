/**
 * @module endpoints/negotiation
 * Accept-header negotiation (k8s.io/apiserver handlers/negotiation): walk the media ranges by q (highest first, header order among equals), skip what we
 * cannot produce (protobuf, CBOR, unknown `as=`), take the first we can, in JSON or YAML. Never 406 while JSON is
 * acceptable. A watch takes the first range the same way and refuses YAML, which has no stream framing.
 */
import { notAcceptable } from '../apis/meta/errors.js';
import { KUBE_MEDIA_TYPES, KUBE_WATCH_MEDIA_TYPES } from './media-types.js';

/** Target is the representation a response should have; `yaml` when it goes out as YAML rather than JSON. */
export type Target = (
  | { kind: 'Object' }
  | { kind: 'Table'; version: string }
  | { kind: 'PartialObjectMetadata'; version: string }
  | { kind: 'PartialObjectMetadataList'; version: string }
) & { yaml?: true };

/** MediaRange is one clause of an Accept header. */
export interface MediaRange {
  type: string;
  subtype: string;
  /** Parameters other than q; names lowercased, values unquoted and case-preserved. */
  params: Map<string, string>;
  q: number;
}

// Splits on `sep` outside double-quoted strings (parameter values may be quoted).
function splitOutsideQuotes(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '"') quoted = !quoted;
    if (c === '\\' && quoted && i + 1 < s.length) {
      cur += c + s[++i];
      continue;
    }
    if (c === sep && !quoted) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

/** parseAccept parses an Accept header into its media ranges, in header order; malformed clauses are dropped. */
export function parseAccept(header: string | undefined): MediaRange[] {
  const out: MediaRange[] = [];
  for (const clause of splitOutsideQuotes(header ?? '', ',')) {
    const [mediaType = '', ...rawParams] = splitOutsideQuotes(clause, ';');
    const [type, subtype, extra] = mediaType.trim().toLowerCase().split('/');
    if (!type || !subtype || extra !== undefined) continue;
    const params = new Map<string, string>();
    let q = 1;
    for (const raw of rawParams) {
      const eq = raw.indexOf('=');
      if (eq < 0) continue;
      const key = raw.slice(0, eq).trim().toLowerCase();
      let value = raw.slice(eq + 1).trim();
      if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1).replace(/\\(.)/g, '$1');
      if (key === 'q') {
        const n = Number(value);
        q = Number.isFinite(n) ? n : 1;
      } else params.set(key, value);
    }
    out.push({ type, subtype, params, q });
  }
  return out;
}

/** isJsonRange tells whether a media range admits JSON: application/json, application/any or any/any. */
export const isJsonRange = (r: MediaRange) =>
  (r.type === 'application' && (r.subtype === 'json' || r.subtype === '*')) || (r.type === '*' && r.subtype === '*');

/** isYamlRange tells whether a media range is application/yaml (kube's YAML serializer knows no other name). */
export const isYamlRange = (r: MediaRange) => r.type === 'application' && r.subtype === 'yaml';

/**
 * negotiate picks the target for a response. `single` tells whether the request addresses one object
 * (PartialObjectMetadata) or a collection (PartialObjectMetadataList); Table fits both.
 */
export function negotiate(header: string | undefined, single: boolean): Target {
  // Highest q first, header order among equals (goautoneg.ParseAccept sorts the same way; Array.sort is stable).
  const ranges = parseAccept(header).sort((a, b) => b.q - a.q);
  if (ranges.length === 0) return { kind: 'Object' };
  for (const r of ranges) {
    const yaml = isYamlRange(r);
    if (r.q <= 0 || !(yaml || isJsonRange(r))) continue;
    const target = rangeTarget(r, single);
    if (target) return yaml ? { ...target, yaml } : target;
  }
  throw notAcceptable([...KUBE_MEDIA_TYPES]);
}

// rangeTarget is the representation one JSON or YAML media range asks for, if it is one we make.
function rangeTarget(r: MediaRange, single: boolean): Target | undefined {
  const as = r.params.get('as');
  if (!as) return { kind: 'Object' };
  const g = r.params.get('g');
  const v = r.params.get('v');
  if (g !== 'meta.k8s.io' || (v !== 'v1' && v !== 'v1beta1')) return undefined;
  if (as === 'Table') return { kind: 'Table', version: v };
  if (as === 'PartialObjectMetadata' && single) return { kind: 'PartialObjectMetadata', version: v };
  if (as === 'PartialObjectMetadataList' && !single) return { kind: 'PartialObjectMetadataList', version: v };
  return undefined;
}

/**
 * negotiateWatch negotiates a watch: events carry single objects, so `as=PartialObjectMetadata` applies per event.
 * YAML, even when JSON comes later in the header, is kube's 406 (NegotiateOutputMediaTypeStream takes the first
 * match, then finds it has no stream serializer).
 */
export function negotiateWatch(header: string | undefined): Target {
  let target: Target;
  try {
    target = negotiate(header, true);
  } catch {
    throw notAcceptable([...KUBE_WATCH_MEDIA_TYPES]);
  }
  if (target.yaml) throw notAcceptable([...KUBE_WATCH_MEDIA_TYPES]);
  return target;
}

/**
 * errorFormat is the form of an error's Status for this Accept header (responsewriters.ErrorNegotiated with the
 * default endpoint restrictions: no `as=` transform): the first JSON or YAML range, JSON for protobuf (which kube
 * would use and we do not make), and `raw` when nothing fits: kube then writes the Status as indented JSON
 * (WriteRawJSON).
 */
export function errorFormat(header: string | undefined): 'json' | 'yaml' | 'raw' {
  const ranges = parseAccept(header).sort((a, b) => b.q - a.q);
  if (ranges.length === 0) return 'json';
  for (const r of ranges) {
    if (r.q <= 0 || r.params.has('as')) continue;
    if (isYamlRange(r)) return 'yaml';
    if (isJsonRange(r) || (r.type === 'application' && r.subtype === 'vnd.kubernetes.protobuf')) return 'json';
  }
  return 'raw';
}
