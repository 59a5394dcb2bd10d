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

/** SelectableField is a field a field selector may name (`spec.color`) and how to read it from an object. */
export interface SelectableField<T> {
  field: string;
  value(obj: T): string | undefined;
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
  /**
   * columnsComplete: printerColumns are every column after NAME, AGE included where wanted (a CRD's
   * additionalPrinterColumns: kube adds no Age column of its own to those).
   */
  columnsComplete?: boolean;
  /**
   * Fields a field selector may name beside metadata.name and metadata.namespace (a CRD's selectableFields), each with
   * its value for an object (undefined: the field is absent, which matches as kube's does).
   */
  selectableFields?: readonly SelectableField<T>[];
  /**
   * customResource: a kind defined by a CRD, answered as apiextensions-apiserver answers (unstructured lists whose
   * metadata always has `continue`; discovery's custom-resource verb order; the CRD OpenAPI builder's documents).
   */
  customResource?: boolean;
  /** A deprecated served version: the Warning every request to it gets (a CRD's deprecationWarning). */
  deprecationWarning?: string;
  subresources: { status: boolean; scale?: ScaleMapping<T> };
  /** Semantic validation beyond the schema, run after defaulting. `old` is set on update. */
  validate?(obj: T, old: T | undefined): FieldError[];
  /**
   * The values behind a CRD's scale paths, checked after the schema whatever it found (the custom resource
   * validator's ValidateScaleSpec and, on every write, ValidateScaleStatus; a write to /status checks status only).
   */
  validateScalePaths?(obj: T, sub: 'main' | 'status'): FieldError[];
  /**
   * Validation rules (a CRD's x-kubernetes-validations), run after the schema as kube runs them: unless the schema
   * found a type, required, enum or size error, which the rules were not written for. `old` is set on update; a
   * failure on a value unchanged from it is ratcheted: a warning (`warn`) instead of an error.
   */
  validateRules?(obj: T, old: T | undefined, warn: (message: string) => void): FieldError[];
  /**
   * standaloneStatus is the status the server itself writes when no cluster is configured, so that no controller
   * will (Website: Ready=False, reason NoCluster): at create and whenever the spec changes, as a kube strategy's
   * PrepareForCreate sets an initial status. Without it the status is the client's and the controllers' alone.
   */
  standaloneStatus?(obj: T): unknown;
  /** The version objects are stored in, when not this one (servedVersions sets it; discovery hashes it). */
  storageVersion?: string;
}

/**
 * VersionConversion converts one served version to and from the storage version, in code (no webhook). Both ways
 * must be lossless: what one version cannot hold survives a round trip (in an annotation, as kube does).
 * The field-path functions translate managedFields paths the same way, so ownership recorded in one version is
 * honoured in another; a path with no counterpart answers undefined and is kept as it is.
 */
export interface VersionConversion<T extends KubeObject, Hub extends KubeObject> {
  toStorage(obj: T): Hub;
  fromStorage(obj: Hub): T;
  fieldToStorage(path: readonly string[]): string[] | undefined;
  fieldFromStorage(path: readonly string[]): string[] | undefined;
}

/** ConvertedVersion is a served version other than the storage version, with its conversion. */
export interface ConvertedVersion<T extends KubeObject, Hub extends KubeObject> {
  definition: ResourceDefinition<T>;
  conversion: VersionConversion<T, Hub>;
}

/**
 * KindDefinition is a kind as registered: the version its objects are stored in and the other versions it serves.
 * Every version is served from the same objects: a write in any version is converted to the storage version, a read
 * or watch event converted to the version asked for. Discovery prefers the highest version (kube's version priority).
 */
export interface KindDefinition<Hub extends KubeObject = KubeObject> {
  storage: ResourceDefinition<Hub>;
  /** The other served versions (same group, kind and names as `storage`). */
  converted?: readonly ConvertedVersion<KubeObject, Hub>[];
}

/** ServedVersion is one served version as the machinery sees it: its definition and its way to the storage form. */
export interface ServedVersion {
  definition: ResourceDefinition;
  /** The storage version's apiVersion (group/version). */
  storageApiVersion: string;
  /** Absent for the storage version itself. */
  conversion?: VersionConversion<KubeObject, KubeObject>;
}

/**
 * servedVersions lists a kind's versions with what the machinery needs for each: a converted version's definition
 * takes the storage version's standaloneStatus through the conversion (status is the kind's, not a version's).
 */
export function servedVersions(kind: KindDefinition): ServedVersion[] {
  const storage = kind.storage;
  const storageApiVersion = `${storage.group}/${storage.version}`;
  const out: ServedVersion[] = [{ definition: storage, storageApiVersion }];
  for (const { definition, conversion } of kind.converted ?? []) {
    const checks: [string, unknown, unknown][] = [
      ['group', definition.group, storage.group],
      ['kind', definition.kind, storage.kind],
      ['plural', definition.plural, storage.plural],
      ['namespaced', definition.namespaced, storage.namespaced],
    ];
    for (const [what, got, want] of checks) {
      if (got !== want) throw new Error(`${storage.kind} ${definition.version}: ${what} ${String(got)} differs from the storage version's ${String(want)}`);
    }
    const standaloneStatus = storage.standaloneStatus;
    const served: ResourceDefinition = standaloneStatus
      ? { ...definition, storageVersion: storage.version, standaloneStatus: (o: KubeObject) => standaloneStatus.call(storage, conversion.toStorage(o)) }
      : { ...definition, storageVersion: storage.version };
    out.push({ definition: served, storageApiVersion, conversion });
  }
  return out;
}

/** servedDefinitions is every served version's definition of every kind, storage versions first. */
export function servedDefinitions(kinds: readonly KindDefinition[]): ResourceDefinition[] {
  return kinds.flatMap((k) => servedVersions(k).map((v) => v.definition));
}
