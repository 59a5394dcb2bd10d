/**
 * @module registry/store-types
 * The types of ResourceStore's interface (registry/store.ts re-exports them all): the options its verbs take, what
 * they answer, and its collaborators. They live apart so that the modules of the write pipeline can name them
 * without importing the store.
 */
import type { GroupResource } from '../apis/meta/errors.js';
import type { FieldSelector } from '../apis/meta/fields.js';
import type { LabelSelector } from '../apis/meta/labels.js';
import type { FieldValidation, KubeObject, ListMeta, Status } from '../apis/meta/types.js';
import type { FieldVersions } from './managed-fields.js';

/** WriteOptions are the query options every write takes. */
export interface WriteOptions {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** The field manager recorded in managedFields (the `fieldManager` parameter, else derived from the User-Agent). */
  manager: string;
}

/** ApplyOptions adds `force` for server-side apply. */
export interface ApplyOptions extends WriteOptions {
  force: boolean;
}

/** WriteResult is the stored (or dry-run) object and the warnings to send as `Warning` headers. */
export interface WriteResult {
  object: KubeObject;
  warnings: string[];
}

/** Selectors restrict a list, watch or deletecollection. */
export interface Selectors {
  label?: LabelSelector | undefined;
  field?: FieldSelector | undefined;
}

/**
 * CollectionLister reads one page of the collection a deletecollection addresses: the request's first page for no
 * token, else the page after `continueToken` (endpoints/list-page.ts gives list semantics).
 */
export type CollectionLister = (continueToken: string | undefined) => Promise<{ items: KubeObject[]; meta: ListMeta }>;

/** DeleteResult is a delete's response: the object while finalizers hold it, else a Success Status. */
export type DeleteResult = { code: 200 | 202; body: KubeObject | Status };

/** CreateAdmission vets a create before defaults and validation (namespace lifecycle when delegated). */
export interface CreateAdmission {
  admitCreate(namespace: string, gr: GroupResource, name: string): Promise<void>;
}

/** StoreOptions are the optional collaborators of a ResourceStore. */
export interface StoreOptions {
  admission?: CreateAdmission | undefined;
  /** No cluster is configured: the kind's standaloneStatus, if it has one, is written at create and on spec changes. */
  standalone?: boolean | undefined;
  /** How managedFields paths translate between the kind's versions (a kind served in several versions). */
  fieldVersions?: FieldVersions | undefined;
}
