/**
 * @module endpoints/transform
 * Pure transforms from stored objects to the negotiated representation (handlers/response.go
 * transformResponseObject): the full object or list, Table, PartialObjectMetadata(List). Watch events use the same.
 */
import type { KubeObject, ListMeta } from '../apis/meta/types.js';
import type { ResourceDefinition } from '../registry/resource.js';
import { toTable, type IncludeObject } from '../registry/table.js';
import type { Target } from './negotiation.js';
import { parseTableOptions, toQueryValues, type Query, type QueryValues } from './query.js';

/** parseIncludeObject reads the Table `includeObject` option (default Metadata), validated as ValidateTableOptions does. */
export function parseIncludeObject(q: Query | QueryValues): IncludeObject {
  return parseTableOptions(toQueryValues(q)).includeObject;
}

/** transformObject renders one object for the target. */
export function transformObject(def: ResourceDefinition, obj: KubeObject, target: Target, includeObject: IncludeObject, noHeaders = false): unknown {
  switch (target.kind) {
    case 'Object':
      return obj;
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${target.version}`, metadata: obj.metadata };
    case 'Table':
      return toTable(def, [obj], { resourceVersion: obj.metadata.resourceVersion ?? '' }, { version: target.version, includeObject, noHeaders });
  }
}

/** transformList renders a list for the target; `items` is always an array, `[]` when empty. */
export function transformList(
  def: ResourceDefinition,
  items: KubeObject[],
  listMeta: ListMeta,
  target: Target,
  includeObject: IncludeObject,
  noHeaders = false,
): unknown {
  switch (target.kind) {
    case 'Object':
      return { kind: def.listKind, apiVersion: `${def.group}/${def.version}`, metadata: objectListMeta(def, listMeta), items };
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${target.version}`,
        metadata: listMeta,
        items: items.map((o) => ({ kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${target.version}`, metadata: o.metadata })),
      };
    case 'Table':
      return toTable(def, items, listMeta, { version: target.version, includeObject, noHeaders });
  }
}

// A custom resource's list is an UnstructuredList, whose metadata always has `continue` (SetContinue("") sets it).
function objectListMeta(def: ResourceDefinition, listMeta: ListMeta): ListMeta {
  return def.customResource && listMeta.continue === undefined ? { ...listMeta, continue: '' } : listMeta;
}

/** encodedList is transformList's Object case for items that are already JSON text: the same bytes, joined. */
export function encodedList(def: ResourceDefinition, listMeta: ListMeta, items: Uint8Array[]): Buffer {
  // The envelope up to and including `"items":[`, then the items, then `]}`.
  const head = JSON.stringify({ kind: def.listKind, apiVersion: `${def.group}/${def.version}`, metadata: objectListMeta(def, listMeta), items: [] }).slice(
    0,
    -2,
  );
  const parts: Uint8Array[] = [Buffer.from(head)];
  items.forEach((item, i) => {
    if (i > 0) parts.push(COMMA);
    parts.push(item);
  });
  parts.push(Buffer.from(']}'));
  return Buffer.concat(parts);
}
const COMMA = Buffer.from(',');

/** bookmarkObject is the object of a BOOKMARK event: an empty object of the watched representation with only a resourceVersion. */
export function bookmarkObject(def: ResourceDefinition, target: Target, resourceVersion: string, annotations?: Record<string, string>): unknown {
  const metadata = annotations ? { resourceVersion, annotations } : { resourceVersion };
  switch (target.kind) {
    case 'Object':
      return { kind: def.kind, apiVersion: `${def.group}/${def.version}`, metadata };
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${target.version}`, metadata };
    case 'Table':
      return { kind: 'Table', apiVersion: `meta.k8s.io/${target.version}`, metadata, columnDefinitions: null, rows: [] };
  }
}
