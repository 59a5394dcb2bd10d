/**
 * @module e2e/crd-diff/compare
 * What two answers are compared on: normalise removes what cannot match between two servers (uids,
 * resourceVersions, creation times, managedFields times, generated name suffixes, Table ages), diff lists the paths
 * where the rest differs, and report tells each step with both values, kube first.
 */
import type { Json } from './corpus.js';
import type { Reply } from './sides.js';

/** A generated name: the prefix the sequences use for generateName, then kube's five random characters. */
const GENERATED = /(gen-)[bcdfghjklmnpqrstvwxz2456789]{5}\b/g;
/** A Table cell of a date column: kube prints an age (`5s`, `2m3s`) or, without printer columns, the RFC 3339 time. */
const AGE = /^(\d+[smhdy])+$|^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

function normaliseMeta(meta: Json): void {
  if (!meta || typeof meta !== 'object') return;
  delete meta.uid;
  delete meta.resourceVersion;
  delete meta.creationTimestamp;
  if (typeof meta.deletionTimestamp === 'string') meta.deletionTimestamp = '<time>';
  if (Array.isArray(meta.managedFields)) for (const e of meta.managedFields) if (e && typeof e.time === 'string') e.time = '<time>';
}

/** normalise returns a copy of a response body with what cannot match replaced. */
export function normalise(body: Json): Json {
  if (body === undefined || body === null || typeof body !== 'object') return typeof body === 'string' ? body.replace(GENERATED, '$1<generated>') : body;
  const out = JSON.parse(JSON.stringify(body).replace(GENERATED, '$1<generated>'));
  const visit = (o: Json) => {
    if (!o || typeof o !== 'object') return;
    if (o.kind === 'Status') {
      // A Status carries no object metadata of its own; a deleted object's uid is in details.
      if (o.details?.uid) o.details.uid = '<uid>';
      // structured-merge-diff lists a configuration's errors in Go map order, which changes from one run to the next.
      // Its walker also stops visiting a map at the first undeclared field it meets in that random order, so which
      // undeclared fields kube names, and which other errors it reaches first, vary from run to run: such a refusal
      // is compared up to its list of errors (both sides must name undeclared fields).
      if (typeof o.message === 'string') {
        o.message = /: field not declared in schema/.test(o.message)
          ? o.message.replace(/^(failed to create typed patch object \([^)]*\): )[\s\S]*$/, '$1<errors naming fields not declared in schema>')
          : o.message.replace(
              /(errors:\n)((?: {2}.*(?:\n|$))+)/,
              (_: string, head: string, lines: string) => head + lines.split('\n').filter(Boolean).sort().join('\n'),
            );
      }
      return;
    }
    if (o.metadata) normaliseMeta(o.metadata);
    if (typeof o.metadata?.continue === 'string' && o.metadata.continue) o.metadata.continue = '<continue>';
    if (Array.isArray(o.items)) o.items.forEach(visit);
    if (o.kind === 'Table' && Array.isArray(o.rows)) {
      const dates = new Set((o.columnDefinitions ?? []).flatMap((c: Json, i: number) => (c.type === 'date' ? [i] : [])));
      for (const row of o.rows) {
        if (Array.isArray(row.cells)) row.cells = row.cells.map((c: Json, i: number) => (dates.has(i) && typeof c === 'string' && AGE.test(c) ? '<age>' : c));
        visit(row.object);
      }
    }
  };
  visit(out);
  return out;
}

export interface Difference {
  path: string;
  kube: Json;
  ours: Json;
}

/** diff lists where two JSON values differ (arrays by index, objects by key; the order of an object's keys is not compared). */
export function diff(kubeV: Json, oursV: Json, path = ''): Difference[] {
  if (Object.is(kubeV, oursV)) return [];
  const kind = (v: Json) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);
  if (kind(kubeV) !== kind(oursV) || (kind(kubeV) !== 'array' && kind(kubeV) !== 'object')) return [{ path: path || '.', kube: kubeV, ours: oursV }];
  const out: Difference[] = [];
  if (Array.isArray(kubeV)) {
    const ours = oursV as Json[];
    for (let i = 0; i < Math.max(kubeV.length, ours.length); i++) {
      if (i >= kubeV.length) out.push({ path: `${path}[${i}]`, kube: '<absent>', ours: ours[i] });
      else if (i >= ours.length) out.push({ path: `${path}[${i}]`, kube: kubeV[i], ours: '<absent>' });
      else out.push(...diff(kubeV[i], ours[i], `${path}[${i}]`));
    }
    return out;
  }
  for (const k of new Set([...Object.keys(kubeV), ...Object.keys(oursV)])) {
    const at = k !== '' && !/[.[\]]/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;
    if (!Object.hasOwn(oursV, k)) out.push({ path: at, kube: kubeV[k], ours: '<absent>' });
    else if (!Object.hasOwn(kubeV, k)) out.push({ path: at, kube: '<absent>', ours: oursV[k] });
    else out.push(...diff(kubeV[k], oursV[k], at));
  }
  return out;
}

/** compareReplies is the differences of one step: the code, the Warning headers, then the body. */
export function compareReplies(kube: Reply, ours: Reply): Difference[] {
  return [
    ...(kube.code !== ours.code ? [{ path: 'code', kube: kube.code, ours: ours.code }] : []),
    ...diff(kube.warnings.map(normalise), ours.warnings.map(normalise), 'warnings'),
    ...diff(normalise(kube.body), normalise(ours.body), 'body'),
  ];
}

/** A difference we will not remove: matched narrowly by file, step title and path, with the reason. */
export interface Accepted {
  file: RegExp;
  step: RegExp;
  path: RegExp;
  reason: string;
}

export interface StepResult {
  index: number;
  title: string;
  codes: { kube: number; ours: number };
  differences: Difference[];
  /** Differences an Accepted entry names, with its reason. */
  accepted: (Difference & { reason: string })[];
}

const show = (v: Json) => {
  const s = typeof v === 'string' && v.startsWith('<') ? v : JSON.stringify(v);
  return s === undefined ? '<undefined>' : s.length > 500 ? `${s.slice(0, 500)}…` : s;
};

/** split separates a step's differences into those an Accepted entry names and the rest. */
export function split(file: string, title: string, differences: Difference[], accepted: readonly Accepted[]): Pick<StepResult, 'differences' | 'accepted'> {
  const out: StepResult['accepted'] = [];
  const rest: Difference[] = [];
  for (const d of differences) {
    const a = accepted.find((x) => x.file.test(file) && x.step.test(title) && x.path.test(d.path));
    if (a) out.push({ ...d, reason: a.reason });
    else rest.push(d);
  }
  return { differences: rest, accepted: out };
}

/** report is the readable account of a CRD's sequence: one line per step, and each differing step's paths with both values. */
export function report(name: string, results: readonly StepResult[]): string {
  const lines = [`${name}:`];
  for (const r of results) {
    lines.push(`  step ${String(r.index).padStart(3)} ${r.differences.length ? 'DIFFERS' : 'same   '} (kube ${r.codes.kube}, ours ${r.codes.ours}) ${r.title}`);
    for (const d of r.differences.slice(0, 10)) lines.push(`      ${d.path}\n        kube: ${show(d.kube)}\n        ours: ${show(d.ours)}`);
    if (r.differences.length > 10) lines.push(`      … and ${r.differences.length - 10} more`);
    for (const d of r.accepted) lines.push(`      (accepted: ${d.reason}) ${d.path}`);
  }
  return lines.join('\n');
}
