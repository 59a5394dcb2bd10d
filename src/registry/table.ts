/**
 * @module registry/table
 * Table conversion for `kubectl get` (meta.k8s.io Table): NAME first, the kind's priority-0 columns, AGE, then the
 * `-o wide` columns. Ages are rendered server-side the way kube's duration.HumanDuration does for CRD date columns.
 */
import type { KubeObject, ListMeta, Table, TableColumnDefinition, TableRow } from '../apis/meta/types.js';
import type { PrinterColumn, ResourceDefinition } from './resource.js';

/** IncludeObject is the Table `includeObject` option. */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** TableOptions selects the Table version and what each row carries. */
export interface TableOptions {
  /** meta.k8s.io version asked for: v1 or v1beta1. */
  version: string;
  includeObject: IncludeObject;
  /** Omit columnDefinitions (watch events after the first). */
  noHeaders?: boolean;
}

const NAME_COLUMN: TableColumnDefinition = {
  name: 'Name',
  type: 'string',
  format: 'name',
  priority: 0,
  description: 'Name must be unique within a namespace. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
};
const CRD_NAME_COLUMN: TableColumnDefinition = {
  ...NAME_COLUMN,
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
};
const AGE_COLUMN: TableColumnDefinition = {
  name: 'Age',
  type: 'string',
  format: '',
  priority: 0,
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
};

type Columns = { defs: TableColumnDefinition[]; cells: ((o: KubeObject) => unknown)[] };
// Columns depend only on the kind, and Table watches convert every event: build them once per kind.
const columnCache = new WeakMap<ResourceDefinition, Columns>();

/** columnsFor returns the ordered column definitions and cell functions of a kind (cached per kind). */
export function columnsFor(def: ResourceDefinition): Columns {
  let cols = columnCache.get(def);
  if (!cols) {
    cols = buildColumns(def);
    columnCache.set(def, cols);
  }
  return cols;
}

function buildColumns(def: ResourceDefinition): Columns {
  const toDef = (c: PrinterColumn<KubeObject>): TableColumnDefinition => ({
    name: c.name,
    type: c.type,
    format: c.format ?? '',
    description: c.description,
    priority: c.priority,
  });
  const narrow = def.printerColumns.filter((c) => c.priority === 0);
  const wide = def.printerColumns.filter((c) => c.priority > 0);
  const name = (o: KubeObject) => o.metadata.name ?? '';
  const age = (o: KubeObject) => humanAge(o.metadata.creationTimestamp);
  // A CRD's columns are the whole table after NAME, in their own order, and its NAME column is described with
  // ObjectMeta's full text (tableconvertor.go).
  if (def.columnsComplete) return { defs: [CRD_NAME_COLUMN, ...def.printerColumns.map(toDef)], cells: [name, ...def.printerColumns.map((c) => c.cell)] };
  return {
    defs: [NAME_COLUMN, ...narrow.map(toDef), AGE_COLUMN, ...wide.map(toDef)],
    cells: [name, ...narrow.map((c) => c.cell), age, ...wide.map((c) => c.cell)],
  };
}

/** ageColumnIndex is where the AGE cell is: the one cell that changes with time rather than with the object. */
export function ageColumnIndex(def: ResourceDefinition): number {
  return columnsFor(def).defs.indexOf(AGE_COLUMN);
}

/** toTable converts objects into a Table with one row each. */
export function toTable(def: ResourceDefinition, objects: KubeObject[], listMeta: ListMeta, opts: TableOptions): Table {
  const { defs, cells } = columnsFor(def);
  const rows: TableRow[] = objects.map((o) => {
    // An absent cell is empty; a null one stays null, as a CRD column's cell with no value is (tableconvertor.go).
    const row: TableRow = {
      cells: cells.map((c) => {
        const v = c(o);
        return v === undefined ? '' : v;
      }),
    };
    if (opts.includeObject === 'Object') row.object = o;
    else if (opts.includeObject === 'Metadata') {
      row.object = { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${opts.version}`, metadata: o.metadata };
    }
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${opts.version}`,
    metadata: listMeta,
    columnDefinitions: opts.noHeaders ? null : defs,
    rows,
  };
}

/** humanAge renders the time since `timestamp` as kube's tables do: 45s, 3m20s, 5h, 2d3h, 120d, 3y45d. */
export function humanAge(timestamp: string | undefined, now = Date.now()): string {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now - t);
}

/** humanDuration is apimachinery's duration.HumanDuration of a duration in milliseconds. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60_000);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(ms / 3_600_000);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${hours / 24}d` : `${Math.trunc(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}
