/**
 * @module registry/resource
 * ResourceDefinition: everything the generic machinery (routes, admission, store, discovery, OpenAPI, tables)
 * needs to know about one kind. A kind is one folder under `src/kinds/` exporting one of these; `src/kinds/index.ts`
 * lists them.
 *
 * The functions a kind supplies are declared as methods: TypeScript compares method parameters bivariantly, so a
 * `ResourceDefinition<Website>` is a `ResourceDefinition` without a cast. The machinery only ever hands a kind's
 * functions objects of that kind (decoded, defaulted and validated against its schema).
 */
import type { FieldError } from '../apis/meta/field-path.js';
import type { JSONSchema } from '../apis/meta/json-schema.js';
import type { KubeObject } from '../apis/meta/types.js';

export type { JSONSchema };

/** PrinterColumn is one `kubectl get` column, like a CRD's additionalPrinterColumns but computed in code. */
export interface PrinterColumn<T> {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  /** 0 = always shown; >0 = only with `-o wide`. */
  priority: number;
  cell(obj: T): unknown;
}

/** ScaleMapping maps the /scale subresource onto the kind (autoscaling/v1 Scale). */
export interface ScaleMapping<T> {
  specReplicas(obj: T): number;
  setSpecReplicas(obj: T, replicas: number): void;
  statusReplicas(obj: T): number;
  selector(obj: T): string;
}

/** ResourceDefinition describes one kind served by this server. */
export interface ResourceDefinition<T extends KubeObject = KubeObject> {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  categories: string[];
  namespaced: boolean;
  /** Schema of the whole object (apiVersion, kind, metadata, spec, status). metadata is filled in by the machinery. */
  schema: JSONSchema;
  /** Human description of the kind (OpenAPI + kubectl explain). */
  description: string;
  /** Table columns after NAME (NAME and AGE are added by the machinery: NAME first, AGE where `age` is placed). */
  printerColumns: PrinterColumn<T>[];
  subresources: { status: boolean; scale?: ScaleMapping<T> };
  /** Semantic validation beyond the schema, run after defaulting. `old` is set on update. */
  validate?(obj: T, old: T | undefined): FieldError[];
  /**
   * standaloneStatus is the status the server itself writes when no cluster is configured, so that no controller
   * will (Website: Ready=False, reason NoCluster): at create and whenever the spec changes, as a kube strategy's
   * PrepareForCreate sets an initial status. Without it the status is the client's and the controllers' alone.
   */
  standaloneStatus?(obj: T): unknown;
}
