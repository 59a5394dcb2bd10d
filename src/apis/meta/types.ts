/**
 * @module apis/meta/types
 * The metav1 wire types the server reads and writes (ObjectMeta, Status, lists, Table, PartialObjectMetadata).
 * Only the fields we use are typed; everything else passes through as unknown JSON.
 */

/** OwnerReference mirrors metav1.OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** ObjectMeta mirrors metav1.ObjectMeta (fields the server owns are set by the registry). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
  [extra: string]: unknown;
}

/** KubeObject is any object with kind, apiVersion and metadata. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** ListMeta mirrors metav1.ListMeta. */
export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** StatusCause mirrors metav1.StatusCause. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** StatusDetails mirrors metav1.StatusDetails; `kind` holds the resource plural, as kube-apiserver does. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** Status mirrors metav1.Status (an "unversioned" type: apiVersion v1). */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never> | ListMeta;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  /** Absent in the Success of a delete by the generic store (successStatus). */
  code?: number;
}

/** TableColumnDefinition mirrors metav1.TableColumnDefinition. */
export interface TableColumnDefinition {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  priority: number;
}

/** TableRow mirrors metav1.TableRow. */
export interface TableRow {
  cells: unknown[];
  object?: unknown;
}

/** Table mirrors metav1.Table. */
export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: ListMeta;
  columnDefinitions: TableColumnDefinition[] | null;
  rows: TableRow[];
}

/** The annotation that marks the BOOKMARK ending the initial events of a watch-list (metav1.InitialEventsAnnotationKey). */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** FieldValidation is the `fieldValidation` option of a write (metav1.CreateOptions and friends). */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';
