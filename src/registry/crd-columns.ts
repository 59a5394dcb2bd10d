/**
 * @module registry/crd-columns
 * What kube-apiserver derives from a CRD version for tables and field selectors:
 * - printerColumnsOf: the columns after Name that apiextensions-apiserver's tableconvertor builds from
 *   additionalPrinterColumns (the handler first gives a version without columns one Age column), with its cells:
 *   the first JSONPath match, printed as client-go prints it for string columns, converted by cellForJSONValue for
 *   the other types, null when the path finds nothing or fails;
 * - selectableFieldValue: the value customResourceStrategy.selectableFields puts in the field set for a selectableField.
 */
import type { KubeObject } from '../apis/meta/types.js';
import { compileJsonPath, GoFloat, isGoInt, formatGoValue, printJsonPathValue } from './json-path.js';
import type { PrinterColumn } from './resource.js';
import { humanDuration } from './table.js';

/** CrdColumn is one additionalPrinterColumns entry (apiextensions.k8s.io/v1 CustomResourceColumnDefinition). */
export interface CrdColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** CREATION_TIMESTAMP_DESCRIPTION is ObjectMeta's swagger doc for creationTimestamp, the default Age column's description. */
export const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** DEFAULT_CRD_COLUMNS is what customresource_handler serves for a version without additionalPrinterColumns
 * (serveDefaultColumnsIfEmpty). */
export const DEFAULT_CRD_COLUMNS: readonly CrdColumn[] = Object.freeze([
  { name: 'Age', type: 'date', description: CREATION_TIMESTAMP_DESCRIPTION, jsonPath: '.metadata.creationTimestamp' },
]);

/** printerColumnsOf builds the table columns kube's tableconvertor builds for a CRD version's additionalPrinterColumns
 * (description default `Custom resource definition column (in JSONPath format): <path>`; cells per type exactly as
 * tableconvertor.go's cellForJSONValue and the string printing; date columns as kube renders them). An empty list
 * gets kube's default Age column. A column whose path does not parse ends the list there, as tableconvertor.New
 * returns the columns built so far (kube serves those and logs the error). `now` is for tests. */
export function printerColumnsOf(columns: readonly CrdColumn[], now: () => number = Date.now): PrinterColumn<KubeObject>[] {
  const out: PrinterColumn<KubeObject>[] = [];
  for (const col of columns.length > 0 ? columns : DEFAULT_CRD_COLUMNS) {
    let path: ReturnType<typeof compileJsonPath>;
    try {
      path = compileJsonPath(col.jsonPath);
    } catch {
      break;
    }
    const type = col.type;
    out.push({
      name: col.name,
      type: type as PrinterColumn<KubeObject>['type'],
      format: col.format ?? '',
      description: col.description ? col.description : `Custom resource definition column (in JSONPath format): ${col.jsonPath}`,
      priority: col.priority ?? 0,
      cell(obj: KubeObject): unknown {
        let results: unknown[][];
        try {
          results = path.findResults(obj);
        } catch {
          return null;
        }
        const first = results[0];
        if (!first || first.length === 0) return null;
        const value = first[0];
        return type === 'string' ? printJsonPathValue(value) : cellForJSONValue(type, value, now());
      },
    });
  }
  return out;
}

/** cellForJSONValue is tableconvertor.go's: the value if it has the column's type (numbers converted between
 * int64 and float64), a human age for a date, else null. */
export function cellForJSONValue(type: string, value: unknown, now: number): unknown {
  if (value === null || value === undefined) return null;
  const isFloat = value instanceof GoFloat || (typeof value === 'number' && !isGoInt(value));
  const n = value instanceof GoFloat ? value.value : value;
  switch (type) {
    case 'integer':
      if (typeof n === 'number') return isFloat ? Math.trunc(n) : n;
      return null;
    case 'number':
      return typeof n === 'number' ? n : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      return typeof value === 'string' ? value : null;
    case 'date': {
      if (typeof value !== 'string') return null;
      return humanReadableDate(value, now);
    }
  }
  return null;
}

/** humanReadableDate is metav1.Time.UnmarshalQueryParameter then table.ConvertToHumanReadableDateType: `<invalid>`
 * for what Go's time.Parse(RFC3339) refuses, `<unknown>` for the zero time ("" and "null" included), else the age. */
export function humanReadableDate(text: string, now: number): string {
  if (text === '' || text === 'null') return '<unknown>';
  const t = parseGoRFC3339(text);
  if (t === undefined) return '<invalid>';
  if (t === GO_ZERO_TIME) return '<unknown>';
  return humanDuration(now - t);
}

const GO_ZERO_TIME = utc(1, 1, 1, 0, 0, 0);

function utc(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}

/** parseGoRFC3339 is Go's time.Parse(time.RFC3339, s) as milliseconds since the epoch (fractions kept), or undefined
 * where Go returns an error: the general parser takes a one-digit hour and a comma before the fraction, checks
 * ranges (second 59 at most, day within the month, offset hour 24 and minute 60 at most) and no trailing text. */
export function parseGoRFC3339(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/.exec(s);
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || sec > 59) return undefined;
  const daysInMonth = new Date(utc(y, mo + 1, 1, 0, 0, 0) - 86_400_000).getUTCDate();
  if (d < 1 || d > daysInMonth) return undefined;
  let offset = 0;
  if (m[8]) {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 24 || om > 60) return undefined;
    offset = (m[8] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const frac = m[7] ? Number(`0.${m[7]}`) * 1000 : 0;
  return utc(y, mo, d, h, mi, sec) + frac - offset;
}

/** selectableFieldValue: the field selector value kube derives for a CRD selectableField (jsonPath) of an object:
 * apiextensions-apiserver's selectable field extraction (fmt.Sprint of the one match: string, integer, boolean;
 * "" when the path finds nothing or null). undefined where kube's GetAttrs fails instead (a path that does not
 * parse, an evaluation error, more than one match): kube then fails the request that filters. */
export function selectableFieldValue(jsonPath: string): (obj: KubeObject) => string | undefined {
  let path: ReturnType<typeof compileJsonPath>;
  try {
    path = compileJsonPath(jsonPath);
  } catch {
    return () => undefined;
  }
  return (obj) => {
    let results: unknown[][];
    try {
      results = path.findResults(obj);
    } catch {
      return undefined;
    }
    let value: unknown = null;
    const first = results[0];
    if (results.length > 0 && first && first.length > 0) {
      if (results.length > 1 || first.length > 1) return undefined;
      value = first[0];
    }
    return value === null || value === undefined ? '' : formatGoValue(value);
  };
}
