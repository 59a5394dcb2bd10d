/**
 * @module discovery/openapi
 * Pure builders for the OpenAPI documents: one OpenAPI 3.0 document per group/version (`/openapi/v3/apis/<g>/<v>`),
 * the v3 discovery index (`/openapi/v3`) and one Swagger 2.0 document (`/openapi/v2`), all derived from each kind's
 * structural schema. Shaped like the documents kube-apiserver publishes for CRDs, because that is what kubectl reads:
 * `x-kubernetes-group-version-kind` as a LIST on schemas and an OBJECT on operations (explain), PATCH content types
 * without strategic merge (apply), a `fieldValidation` query parameter on PATCH (server-side field validation).
 * See API-CONVENTIONS §1.3 and mistake #15.
 */
import { SUPPORTED_PATCH_TYPES } from '../registry/patch.js';
import type { ResourceDefinition } from '../registry/resource.js';
import { groupVersions, isCustomResource, SCALE_GVK, versionInfo, type GroupVersionKind } from './discovery.js';
import { crdMetaDefinitions } from './crd-meta-definitions.js';
import { crdKindPaths } from './openapi-crd-paths.js';
import { operationGroupVersion, operationTag, type OpenAPISchema, type Operation, type Param, type PathItem } from './openapi-model.js';

export type { OpenAPISchema };

/** OpenAPIV3Document is the subset of an OpenAPI 3.0 document we produce. */
export interface OpenAPIV3Document {
  openapi: '3.0.0';
  info: { title: string; version: string };
  paths: Record<string, Record<string, unknown>>;
  /** securitySchemes and security are absent from a document of CRDs, as kube's CRD builder writes none. */
  components: { schemas: Record<string, OpenAPISchema>; securitySchemes?: Record<string, unknown> };
  security?: Record<string, string[]>[];
}

/** SwaggerDocument is the subset of a Swagger 2.0 document we produce. */
export interface SwaggerDocument {
  swagger: '2.0';
  info: { title: string; version: string };
  paths: Record<string, Record<string, unknown>>;
  definitions: Record<string, OpenAPISchema>;
  securityDefinitions: Record<string, unknown>;
  security: Record<string, string[]>[];
}

/** OpenAPIV3Discovery is the `/openapi/v3` index (kube-openapi handler3 OpenAPIV3Discovery). */
export interface OpenAPIV3Discovery {
  paths: Record<string, { serverRelativeURL: string }>;
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
// OBJECT_META is the schema name of metav1.ObjectMeta.
const OBJECT_META = `${META}ObjectMeta`;
// LIST_META is the schema name of metav1.ListMeta.
const LIST_META = `${META}ListMeta`;
// STATUS is the schema name of metav1.Status.
const STATUS = `${META}Status`;
// DELETE_OPTIONS is the schema name of metav1.DeleteOptions.
const DELETE_OPTIONS = `${META}DeleteOptions`;
// PATCH is the schema name of metav1.Patch (the PATCH request body).
const PATCH = `${META}Patch`;
// SCALE is the schema name of autoscaling/v1 Scale.
const SCALE = 'io.k8s.api.autoscaling.v1.Scale';
const STATUS_DETAILS = `${META}StatusDetails`;
const STATUS_CAUSE = `${META}StatusCause`;
const PRECONDITIONS = `${META}Preconditions`;
const OWNER_REFERENCE = `${META}OwnerReference`;
const MANAGED_FIELDS_ENTRY = `${META}ManagedFieldsEntry`;
const FIELDS_V1 = `${META}FieldsV1`;
const SCALE_SPEC = 'io.k8s.api.autoscaling.v1.ScaleSpec';
const SCALE_STATUS = 'io.k8s.api.autoscaling.v1.ScaleStatus';

/** schemaName is the component/definition name of a kind: reverse-domain group, version, kind (as kube names CRD schemas). */
export function schemaName(group: string, version: string, kind: string): string {
  return [...group.split('.').reverse(), version, kind].join('.');
}

// ---------------------------------------------------------------------------------------------------------------
// Dialects: v3 and v2 differ only in where refs point and how a described reference is spelled.

interface Dialect {
  v3: boolean;
  ref(name: string): string;
}

const V3: Dialect = { v3: true, ref: (name) => `#/components/schemas/${name}` };
const V2: Dialect = { v3: false, ref: (name) => `#/definitions/${name}` };

const ref = (d: Dialect, name: string): OpenAPISchema => ({ $ref: d.ref(name) });

// A field holding another object. v3 siblings of $ref are ignored, so kube wraps the ref in allOf (and kubectl explain
// follows single-element allOf); v2 keeps the sibling description next to $ref, as kube's v2 documents do.
function objectField(d: Dialect, name: string, description: string): OpenAPISchema {
  return d.v3 ? { description, default: {}, allOf: [ref(d, name)] } : { description, $ref: d.ref(name) };
}

const API_VERSION_DESC =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DESC =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const OBJECT_META_FIELD_DESC =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_META_FIELD_DESC =
  'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

const str = (description: string): OpenAPISchema => ({ type: 'string', description });
const time = (description: string): OpenAPISchema => ({ type: 'string', format: 'date-time', description });
const int = (format: 'int32' | 'int64', description: string): OpenAPISchema => ({ type: 'integer', format, description });
const stringMap = (description: string): OpenAPISchema => ({
  type: 'object',
  description,
  additionalProperties: { type: 'string', default: '' },
});
const typeMeta = () => ({ apiVersion: str(API_VERSION_DESC), kind: str(KIND_DESC) });

// The metav1 (and autoscaling/v1) types our paths reference, with the descriptions kube publishes for them.
function metaDefinitions(d: Dialect, withScale: boolean): Record<string, OpenAPISchema> {
  const defs: Record<string, OpenAPISchema> = {
    [OBJECT_META]: {
      description: 'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
      type: 'object',
      properties: {
        annotations: stringMap(
          'Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata. They are not queryable and should be preserved when modifying objects. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations',
        ),
        creationTimestamp: time(
          'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
        ),
        deletionGracePeriodSeconds: int(
          'int64',
          'Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set. May only be shortened. Read-only.',
        ),
        deletionTimestamp: time(
          'DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. This field is set by the server when a graceful deletion is requested by the user, and is not directly settable by a client. The resource is expected to be deleted (no longer visible from resource lists, and not reachable by name) after the time in this field, once the finalizers list is empty. As long as the finalizers list contains items, deletion is blocked. Once the deletionTimestamp is set, this value may not be unset or be set further into the future, although it may be shortened or the resource may be deleted prior to this time. If not set, graceful deletion of the object has not been requested.\n\nPopulated by the system when a graceful deletion is requested. Read-only. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
        ),
        finalizers: {
          type: 'array',
          description:
            'Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list. If the deletionTimestamp of the object is non-nil, entries in this list can only be removed. Finalizers may be processed and removed in any order.  Order is NOT enforced because it introduces significant risk of stuck finalizers. finalizers is a shared field, any actor with permission can reorder it.',
          items: { type: 'string', default: '' },
          'x-kubernetes-list-type': 'set',
          'x-kubernetes-patch-strategy': 'merge',
        },
        generateName: str(
          'GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided. If this field is used, the name returned to the client will be different than the name passed. This value will also be combined with a unique suffix. The provided value has the same validation rules as the Name field, and may be truncated by the length of the suffix required to make the value unique on the server.\n\nIf this field is specified and the generated name exists, the server will return a 409.\n\nApplied only if Name is not specified. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#idempotency',
        ),
        generation: int('int64', 'A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.'),
        labels: stringMap(
          'Map of string keys and values that can be used to organize and categorize (scope and select) objects. May match selectors of replication controllers and services. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels',
        ),
        managedFields: {
          type: 'array',
          description:
            "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow. This is mostly for internal housekeeping, and users typically shouldn't need to set or understand this field. A workflow can be the user's name, a controller's name, or the name of a specific apply path like \"ci-cd\". The set of fields is always in the version that the workflow used when modifying the object.",
          items: ref(d, MANAGED_FIELDS_ENTRY),
          'x-kubernetes-list-type': 'atomic',
        },
        name: str(
          'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
        ),
        namespace: str(
          'Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the "default" namespace, but "default" is the canonical representation. Not all objects are required to be scoped to a namespace - the value of this field for those objects will be empty.\n\nMust be a DNS_LABEL. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces',
        ),
        ownerReferences: {
          type: 'array',
          description:
            'List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected. If this object is managed by a controller, then an entry in this list will point to this controller, with the controller field set to true. There cannot be more than one managing controller.',
          items: ref(d, OWNER_REFERENCE),
          'x-kubernetes-list-map-keys': ['uid'],
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-patch-merge-key': 'uid',
          'x-kubernetes-patch-strategy': 'merge',
        },
        resourceVersion: str(
          'An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. May be used for optimistic concurrency, change detection, and the watch operation on a resource or set of resources. Clients must treat these values as opaque and passed unmodified back to the server. They may only be valid for a particular resource or set of resources.\n\nPopulated by the system. Read-only. Value must be treated as opaque by clients and . More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#concurrency-control-and-consistency',
        ),
        selfLink: str('Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.'),
        uid: str(
          'UID is the unique in time and space value for this object. It is typically generated by the server on successful creation of a resource and is not allowed to change on PUT operations.\n\nPopulated by the system. Read-only. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids',
        ),
      },
    },
    [OWNER_REFERENCE]: {
      description:
        'OwnerReference contains enough information to let you identify an owning object. An owning object must be in the same namespace as the dependent, or be cluster-scoped, so there is no namespace field.',
      type: 'object',
      required: ['apiVersion', 'kind', 'name', 'uid'],
      properties: {
        apiVersion: str('API version of the referent.'),
        blockOwnerDeletion: {
          type: 'boolean',
          description:
            'If true, AND if the owner has the "foregroundDeletion" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed. See https://kubernetes.io/docs/concepts/architecture/garbage-collection/#foreground-deletion for how the garbage collector interacts with this field and enforces the foreground deletion. Defaults to false. To set this field, a user needs "delete" permission of the owner, otherwise 422 (Unprocessable Entity) will be returned.',
        },
        controller: { type: 'boolean', description: 'If true, this reference points to the managing controller.' },
        kind: str('Kind of the referent. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds'),
        name: str('Name of the referent. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names'),
        uid: str('UID of the referent. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids'),
      },
      'x-kubernetes-map-type': 'atomic',
    },
    [MANAGED_FIELDS_ENTRY]: {
      description: 'ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.',
      type: 'object',
      properties: {
        apiVersion: str(
          'APIVersion defines the version of this resource that this field set applies to. The format is "group/version" just like the top-level APIVersion field. It is necessary to track the version of a field set because it cannot be automatically converted.',
        ),
        fieldsType: str('FieldsType is the discriminator for the different fields format and version. There is currently only one possible value: "FieldsV1"'),
        fieldsV1: objectField(d, FIELDS_V1, 'FieldsV1 holds the first JSON version format as described in the "FieldsV1" type.'),
        manager: str('Manager is an identifier of the workflow managing these fields.'),
        operation: str(
          "Operation is the type of operation which lead to this ManagedFieldsEntry being created. The only valid values for this field are 'Apply' and 'Update'.",
        ),
        subresource: str(
          'Subresource is the name of the subresource used to update that object, or empty string if the object was updated through the main resource. The value of this field is used to distinguish between managers, even if they share the same name. For example, a status update will be distinct from a regular update using the same manager name. Note that the APIVersion field is not related to the Subresource field and it always corresponds to the version of the main resource.',
        ),
        time: time(
          'Time is the timestamp of when the ManagedFields entry was added. The timestamp will also be updated if a field is added, the manager changes any of the owned fields value or removes a field. The timestamp does not update when a field is removed from the entry because another manager took it over.',
        ),
      },
    },
    [FIELDS_V1]: {
      description:
        "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.\n\nEach key is either a '.' representing the field itself, and will always map to an empty set, or a string representing a sub-field or item. The string will follow one of these four formats: 'f:<name>', where <name> is the name of a field in a struct, or key in a map 'v:<value>', where <value> is the exact json formatted value of a list item 'i:<index>', where <index> is position of a item in a list 'k:<keys>', where <keys> is a map of  a list item's key fields to their unique values If a key maps to an empty Fields value, the field that key represents is part of the set.\n\nThe exact format is defined in sigs.k8s.io/structured-merge-diff",
      type: 'object',
    },
    [LIST_META]: {
      description:
        'ListMeta describes metadata that synthetic resources must have, including lists and various status objects. A resource may have only one of {ObjectMeta, ListMeta}.',
      type: 'object',
      properties: {
        continue: str(
          'continue may be set if the user set a limit on the number of items returned, and indicates that the server has more data available. The value is opaque and may be used to issue another request to the endpoint that served this list to retrieve the next set of available objects. Continuing a consistent list may not be possible if the server configuration has changed or more than a few minutes have passed. The resourceVersion field returned when using this continue value will be identical to the value in the first response, unless you have received this token from an error message.',
        ),
        remainingItemCount: int(
          'int64',
          'remainingItemCount is the number of subsequent items in the list which are not included in this list response. If the list request contained label or field selectors, then the number of remaining items is unknown and the field will be left unset and omitted during serialization. If the list is complete (either because it is not chunking or because this is the last chunk), then there are no more remaining items and this field will be left unset and omitted during serialization. Servers older than v1.15 do not set this field. The intended use of the remainingItemCount is *estimating* the size of a collection. Clients should not rely on the remainingItemCount to be set or to be exact.',
        ),
        resourceVersion: str(
          "String that identifies the server's internal version of this object that can be used by clients to determine when objects have changed. Value must be treated as opaque by clients and passed unmodified back to the server. Populated by the system. Read-only. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#concurrency-control-and-consistency",
        ),
        selfLink: str('Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.'),
      },
    },
    [STATUS]: {
      description: "Status is a return value for calls that don't return other objects.",
      type: 'object',
      properties: {
        apiVersion: str(API_VERSION_DESC),
        code: int('int32', 'Suggested HTTP return code for this status, 0 if not set.'),
        details: objectField(
          d,
          STATUS_DETAILS,
          'Extended data associated with the reason.  Each reason may define its own extended details. This field is optional and the data returned is not guaranteed to conform to any schema except that defined by the reason type.',
        ),
        kind: str(KIND_DESC),
        message: str('A human-readable description of the status of this operation.'),
        metadata: objectField(d, LIST_META, LIST_META_FIELD_DESC),
        reason: str(
          'A machine-readable description of why this operation is in the "Failure" status. If this value is empty there is no information available. A Reason clarifies an HTTP status code but does not override it.',
        ),
        status: str(
          'Status of the operation. One of: "Success" or "Failure". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status',
        ),
      },
      'x-kubernetes-group-version-kind': [{ group: '', version: 'v1', kind: 'Status' }],
    },
    [STATUS_DETAILS]: {
      description:
        'StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response. The Reason field of a Status object defines what attributes will be set. Clients must ignore fields that do not match the defined type of each attribute, and should assume that any attribute may be empty, invalid, or under defined.',
      type: 'object',
      properties: {
        causes: {
          type: 'array',
          description: 'The Causes array includes more details associated with the StatusReason failure. Not all StatusReasons may provide detailed causes.',
          items: ref(d, STATUS_CAUSE),
          'x-kubernetes-list-type': 'atomic',
        },
        group: str('The group attribute of the resource associated with the status StatusReason.'),
        kind: str(
          'The kind attribute of the resource associated with the status StatusReason. On some operations may differ from the requested resource Kind. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        ),
        name: str('The name attribute of the resource associated with the status StatusReason (when there is a single name which can be described).'),
        retryAfterSeconds: int(
          'int32',
          'If specified, the time in seconds before the operation should be retried. Some errors may indicate the client must take an alternate action - for those errors this field may indicate how long to wait before taking the alternate action.',
        ),
        uid: str(
          'UID of the resource. (when there is a single resource which can be described). More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids',
        ),
      },
    },
    [STATUS_CAUSE]: {
      description: 'StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.',
      type: 'object',
      properties: {
        field: str(
          'The field of the resource that has caused this error, as named by its JSON serialization. May include dot and postfix notation for nested attributes. Arrays are zero-indexed.  Fields may appear more than once in an array of causes due to fields having multiple errors. Optional.\n\nExamples:\n  "name" - the field "name" on the current resource\n  "items[0].name" - the field "name" on the first array entry in "items"',
        ),
        message: str('A human-readable description of the cause of the error.  This field may be presented as-is to a reader.'),
        reason: str('A machine-readable description of the cause of the error. If this value is empty there is no information available.'),
      },
    },
    [DELETE_OPTIONS]: {
      description: 'DeleteOptions may be provided when deleting an API object.',
      type: 'object',
      properties: {
        apiVersion: str(API_VERSION_DESC),
        dryRun: {
          type: 'array',
          description:
            'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed',
          items: { type: 'string', default: '' },
          'x-kubernetes-list-type': 'atomic',
        },
        gracePeriodSeconds: int(
          'int64',
          'The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.',
        ),
        ignoreStoreReadErrorWithClusterBreakingPotential: {
          type: 'boolean',
          description:
            'if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. A resource is considered corrupt if it can not be retrieved from the underlying storage successfully because of a) its data can not be transformed e.g. decryption failure, or b) it fails to decode into an object. NOTE: unsafe deletion ignores finalizer constraints, skips precondition checks, and removes the object from the storage. WARNING: This may potentially break the cluster if the workload associated with the resource being unsafe-deleted relies on normal deletion flow. Use only if you REALLY know what you are doing. The default value is false, and the user must opt in to enable it',
        },
        kind: str(KIND_DESC),
        orphanDependents: {
          type: 'boolean',
          description:
            'Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the "orphan" finalizer will be added to/removed from the object\'s finalizers list. Either this field or PropagationPolicy may be set, but not both.',
        },
        preconditions: objectField(
          d,
          PRECONDITIONS,
          'Must be fulfilled before a deletion is carried out. If not possible, a 409 Conflict status will be returned.',
        ),
        propagationPolicy: str(
          "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.",
        ),
      },
      'x-kubernetes-group-version-kind': [
        { group: '', version: 'v1', kind: 'DeleteOptions' },
        { group: 'meta.k8s.io', version: 'v1', kind: 'DeleteOptions' },
      ],
    },
    [PRECONDITIONS]: {
      description: 'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.',
      type: 'object',
      properties: {
        resourceVersion: str('Specifies the target ResourceVersion'),
        uid: str('Specifies the target UID.'),
      },
    },
    [PATCH]: {
      description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
      type: 'object',
    },
  };
  if (withScale) {
    defs[SCALE] = {
      description: 'Scale represents a scaling request for a resource.',
      type: 'object',
      properties: {
        ...typeMeta(),
        metadata: objectField(
          d,
          OBJECT_META,
          'Standard object metadata; More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata.',
        ),
        spec: objectField(
          d,
          SCALE_SPEC,
          'spec defines the behavior of the scale. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status.',
        ),
        status: objectField(
          d,
          SCALE_STATUS,
          'status is the current status of the scale. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status. Read-only.',
        ),
      },
      'x-kubernetes-group-version-kind': [{ ...SCALE_GVK }],
    };
    defs[SCALE_SPEC] = {
      description: 'ScaleSpec describes the attributes of a scale subresource.',
      type: 'object',
      properties: { replicas: int('int32', 'replicas is the desired number of instances for the scaled object.') },
    };
    defs[SCALE_STATUS] = {
      description: 'ScaleStatus represents the current status of a scale subresource.',
      type: 'object',
      required: ['replicas'],
      properties: {
        replicas: { ...int('int32', 'replicas is the actual number of observed instances of the scaled object.'), default: 0 },
        selector: str(
          'selector is the label query over pods that should match the replicas count. This is same as the label selector but in the string format to avoid introspection by clients. The string will be in the same format as the query-param syntax. More info about label selectors: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/',
        ),
      },
    };
  }
  return defs;
}

// Swagger 2.0 has no `nullable` (gnostic rejects unknown keys); like kube's CRD v2 conversion, a nullable field loses
// its type so kubectl's client-side validation accepts null, and int-or-string loses its type for the same reason.
function toV2Schema(s: OpenAPISchema): OpenAPISchema {
  const out: OpenAPISchema = { ...s };
  if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties).map(([k, v]) => [k, toV2Schema(v)]));
  if (out.items) out.items = toV2Schema(out.items);
  if (out.additionalProperties && typeof out.additionalProperties === 'object') out.additionalProperties = toV2Schema(out.additionalProperties);
  if (out.allOf) out.allOf = out.allOf.map(toV2Schema);
  if (out.nullable) {
    delete out.type;
    delete out.items;
    delete out.properties;
    delete out.additionalProperties;
  }
  delete out.nullable;
  if (out['x-kubernetes-int-or-string']) delete out.type;
  return out;
}

// The kind's structural schema with metadata pointing at ObjectMeta (as kube publishes CRD schemas).
function kindSchema(d: Dialect, def: ResourceDefinition): OpenAPISchema {
  if (isCustomResource(def)) return customResourceSchema(d, def);
  const base = structuredClone(def.schema) as OpenAPISchema;
  const properties: Record<string, OpenAPISchema> = { ...typeMeta(), ...base.properties };
  properties.metadata = objectField(d, OBJECT_META, OBJECT_META_FIELD_DESC);
  let out: OpenAPISchema = { ...base, type: 'object', properties };
  if (def.description) out.description = def.description;
  if (!d.v3) out = toV2Schema(out);
  out['x-kubernetes-group-version-kind'] = [{ group: def.group, version: def.version, kind: def.kind }];
  return out;
}

// The int-or-string alternatives Structural.Unfold spells out for a field that does not spell them itself.
const INT_OR_STRING_ANY_OF = (): OpenAPISchema[] => [{ type: 'integer' }, { type: 'string' }];
const isIntOrStringAnyOf = (anyOf: unknown): boolean =>
  Array.isArray(anyOf) && anyOf.length === 2 && JSON.stringify(anyOf[0]) === '{"type":"integer"}' && JSON.stringify(anyOf[1]) === '{"type":"string"}';

// unfold publishes x-kubernetes-int-or-string with its anyOf, as kube's v3 builder does (Structural.Unfold): added when
// absent, or as a first allOf entry beside an anyOf of the schema's own.
function unfold(s: OpenAPISchema): OpenAPISchema {
  const out: OpenAPISchema = { ...s };
  if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties).map(([k, v]) => [k, unfold(v)]));
  if (out.items) out.items = unfold(out.items);
  if (out.additionalProperties && typeof out.additionalProperties === 'object') out.additionalProperties = unfold(out.additionalProperties);
  if (out['x-kubernetes-int-or-string'] === true && !isIntOrStringAnyOf(out.anyOf) && !isIntOrStringAnyOf(out.allOf?.[0]?.anyOf)) {
    if (out.anyOf === undefined) out.anyOf = INT_OR_STRING_ANY_OF();
    else out.allOf = [{ anyOf: INT_OR_STRING_ANY_OF() }, ...(out.allOf ?? [])];
  }
  return out;
}

// A described reference as kube's CRD builder writes one (RefSchema WithDescription): no default beside it.
const describedRef = (d: Dialect, name: string, description: string): OpenAPISchema =>
  d.v3 ? { description, allOf: [ref(d, name)] } : { description, $ref: d.ref(name) };

// x-kubernetes-selectable-fields, which kube publishes on a CRD's kind and list schemas when it declares any.
function withSelectableFields(out: OpenAPISchema, def: ResourceDefinition): OpenAPISchema {
  const selectable = def.selectableFields ?? [];
  if (selectable.length) out['x-kubernetes-selectable-fields'] = selectable.map((f) => ({ fieldPath: f.field }));
  return out;
}

// A CRD's schema as apiextensions-apiserver's openapi builder publishes it: TypeMeta's own apiVersion and kind
// replacing the CRD's, metadata a described reference to ObjectMeta (no default), the selectable fields listed.
function customResourceSchema(d: Dialect, def: ResourceDefinition): OpenAPISchema {
  const gvk = [{ group: def.group, version: def.version, kind: def.kind }];
  // v2 keeps nothing of a schema that preserves unknown fields at its root (kubectl would refuse the unknown ones).
  if (!d.v3 && def.schema['x-kubernetes-preserve-unknown-fields'] === true) {
    return withSelectableFields({ type: 'object', 'x-kubernetes-group-version-kind': gvk }, def);
  }
  const base = structuredClone(def.schema) as OpenAPISchema;
  let out: OpenAPISchema = { ...base, type: 'object' };
  if (def.description) out.description = def.description;
  out = d.v3 ? unfold(out) : crdToV2Schema(out);
  out.properties = { ...out.properties, ...typeMeta(), metadata: describedRef(d, OBJECT_META, OBJECT_META_FIELD_DESC) };
  addEmbeddedProperties(d, out);
  withSelectableFields(out, def);
  out['x-kubernetes-group-version-kind'] = gvk;
  return out;
}

const EMBEDDED_API_VERSION_DESC =
  'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const EMBEDDED_KIND_DESC =
  'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

// addEmbeddedProperties gives every x-kubernetes-embedded-resource object apiVersion, kind and metadata, kind and
// apiVersion required, as kube's CRD builder does; in v2 not where unknown fields are kept (kubectl would refuse them).
function addEmbeddedProperties(d: Dialect, s: OpenAPISchema): void {
  for (const v of Object.values(s.properties ?? {})) addEmbeddedProperties(d, v);
  if (s.items) addEmbeddedProperties(d, s.items);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') addEmbeddedProperties(d, s.additionalProperties);
  if (!d.v3 && s['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (s['x-kubernetes-embedded-resource'] !== true) return;
  s.properties = {
    ...s.properties,
    apiVersion: str(EMBEDDED_API_VERSION_DESC),
    kind: str(EMBEDDED_KIND_DESC),
    metadata: describedRef(d, OBJECT_META, OBJECT_META_FIELD_DESC),
  };
  const required = [...(s.required ?? [])];
  if (!required.includes('kind')) required.push('kind');
  if (!required.includes('apiVersion')) required.push('apiVersion');
  s.required = required;
}

/**
 * crdToV2Schema is ToStructuralOpenAPIV2 (apiextensions-apiserver controller/openapi/v2) with the defaults dropped, as
 * kube publishes a CRD in Swagger 2.0: no junctors, a nullable field untyped and without items or properties, a field
 * preserving unknown fields without items or properties (and untyped if an object), an array without items untyped,
 * and nullable fields not required.
 */
function crdToV2Schema(s: OpenAPISchema): OpenAPISchema {
  const out: OpenAPISchema = { ...s };
  if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties).map(([k, v]) => [k, crdToV2Schema(v)]));
  if (out.items) out.items = crdToV2Schema(out.items);
  if (out.additionalProperties && typeof out.additionalProperties === 'object') out.additionalProperties = crdToV2Schema(out.additionalProperties);
  const raw = out as Record<string, unknown>;
  for (const k of ['allOf', 'oneOf', 'anyOf', 'not', 'default']) delete raw[k];
  const nullable = (x: unknown) => typeof x === 'object' && x !== null && (x as OpenAPISchema).nullable === true;
  if (out.required && out.properties) {
    const props = s.properties ?? {};
    const kept = out.required.filter((f) => !nullable(props[f]));
    if (kept.length) out.required = kept;
    else delete out.required;
  }
  if (nullable(s.additionalProperties)) delete out.required;
  if (out.nullable) {
    delete out.type;
    delete out.items;
    delete out.properties;
  }
  delete out.nullable;
  if (out['x-kubernetes-preserve-unknown-fields'] === true) {
    delete out.items;
    delete out.properties;
  }
  if (out.items === undefined && out.type === 'array') delete out.type;
  if (out['x-kubernetes-preserve-unknown-fields'] === true && out.type === 'object') delete out.type;
  return out;
}

function listSchema(d: Dialect, def: ResourceDefinition): OpenAPISchema {
  const out: OpenAPISchema = {
    description: `${def.listKind} is a list of ${def.kind}`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: str(API_VERSION_DESC),
      items: {
        type: 'array',
        description: `List of ${def.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        items: ref(d, schemaName(def.group, def.version, def.kind)),
      },
      kind: str(KIND_DESC),
      // kube's CRD builder describes the reference without a default (the generic installer's types carry one).
      metadata: isCustomResource(def) ? describedRef(d, LIST_META, LIST_META_FIELD_DESC) : objectField(d, LIST_META, LIST_META_FIELD_DESC),
    },
    'x-kubernetes-group-version-kind': [{ group: def.group, version: def.version, kind: def.listKind }],
  };
  return isCustomResource(def) ? withSelectableFields(out, def) : out;
}

function sortKeys<T>(rec: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(rec).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function schemasFor(d: Dialect, kinds: readonly ResourceDefinition[], crdDocument = false): Record<string, OpenAPISchema> {
  const withScale = kinds.some((k) => k.subresources.scale);
  const defs = crdDocument ? crdMetaDefinitions(withScale) : metaDefinitions(d, withScale);
  for (const def of kinds) {
    defs[schemaName(def.group, def.version, def.kind)] = kindSchema(d, def);
    defs[schemaName(def.group, def.version, def.listKind)] = listSchema(d, def);
  }
  return sortKeys(defs);
}

// ---------------------------------------------------------------------------------------------------------------
// Paths: one dialect-neutral model, rendered as v3 or v2.

const q = (name: string, type: Param['type'], description: string): Param => ({ name, in: 'query', type, description });

const P = {
  pretty: q(
    'pretty',
    'string',
    "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
  ),
  allowWatchBookmarks: q(
    'allowWatchBookmarks',
    'boolean',
    'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server\'s discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored.',
  ),
  continue: q(
    'continue',
    'string',
    'The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token.',
  ),
  fieldSelector: q('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields. Defaults to everything.'),
  labelSelector: q('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels. Defaults to everything.'),
  limit: q(
    'limit',
    'integer',
    'limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results.',
  ),
  resourceVersion: q(
    'resourceVersion',
    'string',
    'resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset',
  ),
  resourceVersionMatch: q(
    'resourceVersionMatch',
    'string',
    'resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset',
  ),
  sendInitialEvents: q(
    'sendInitialEvents',
    'boolean',
    '`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic "Bookmark" event  will be sent. The bookmark will report the ResourceVersion (RV) corresponding to the set of objects, and be marked with `"k8s.io/initial-events-end": "true"` annotation.',
  ),
  timeoutSeconds: q(
    'timeoutSeconds',
    'integer',
    'Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.',
  ),
  watch: q(
    'watch',
    'boolean',
    'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion.',
  ),
  dryRun: q(
    'dryRun',
    'string',
    'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed',
  ),
  fieldManager: q(
    'fieldManager',
    'string',
    'fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.',
  ),
  fieldValidation: q(
    'fieldValidation',
    'string',
    'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default. - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.',
  ),
  force: q(
    'force',
    'boolean',
    'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.',
  ),
  gracePeriodSeconds: q(
    'gracePeriodSeconds',
    'integer',
    'The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.',
  ),
  ignoreStoreReadError: q(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'boolean',
    'if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. The default value is false, and the user must opt in to enable it',
  ),
  orphanDependents: q(
    'orphanDependents',
    'boolean',
    'Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the "orphan" finalizer will be added to/removed from the object\'s finalizers list. Either this field or PropagationPolicy may be set, but not both.',
  ),
  propagationPolicy: q(
    'propagationPolicy',
    'string',
    "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.",
  ),
};

const LIST_PARAMS: Param[] = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS: Param[] = [P.dryRun, P.fieldManager, P.fieldValidation];
const PATCH_PARAMS: Param[] = [...WRITE_PARAMS, P.force];
const DELETE_PARAMS: Param[] = [P.dryRun, P.gracePeriodSeconds, P.ignoreStoreReadError, P.orphanDependents, P.propagationPolicy];
const DELETECOLLECTION_PARAMS: Param[] = [
  P.continue,
  P.dryRun,
  P.fieldSelector,
  P.gracePeriodSeconds,
  P.ignoreStoreReadError,
  P.labelSelector,
  P.limit,
  P.orphanDependents,
  P.propagationPolicy,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
];

const pathParam = (name: string, description: string): Param => ({ name, in: 'path', type: 'string', description, required: true });
const NAMESPACE_PARAM = pathParam('namespace', 'object name and auth scope, such as for teams and projects');

const codeText: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted' };
const ok = (schema: string, ...codes: string[]) => codes.map((code) => ({ code, description: codeText[code] ?? 'OK', schema }));

function kindPaths(def: ResourceDefinition): PathItem[] {
  const gvk: GroupVersionKind = { group: def.group, version: def.version, kind: def.kind };
  const obj = schemaName(def.group, def.version, def.kind);
  const list = schemaName(def.group, def.version, def.listKind);
  const prefix = operationGroupVersion(def.group, def.version);
  const scoped = def.namespaced ? 'Namespaced' : '';
  const id = (verb: string, suffix = '', collection = '') => `${verb}${prefix}${collection}${scoped}${def.kind}${suffix}`;
  const base = `/apis/${def.group}/${def.version}`;
  const collectionPath = def.namespaced ? `${base}/namespaces/{namespace}/${def.plural}` : `${base}/${def.plural}`;
  const itemPath = `${collectionPath}/{name}`;
  const scopeParams = def.namespaced ? [NAMESPACE_PARAM] : [];
  const nameParam = (what: string) => pathParam('name', `name of the ${what}`);
  const anyBody = (schema: string, required: boolean) => ({ schema, contentTypes: ['*/*'], required });
  // Never strategic merge among the PATCH types: kubectl apply would then send SMP.
  const patchBody = { schema: PATCH, contentTypes: SUPPORTED_PATCH_TYPES, required: true };

  const listOp = (operationId: string): Operation => ({
    method: 'get',
    operationId,
    description: `list or watch objects of kind ${def.kind}`,
    action: 'list',
    gvk,
    params: LIST_PARAMS,
    responses: ok(list, '200'),
    watch: true,
  });

  const paths: PathItem[] = [];
  if (def.namespaced) {
    // The cross-namespace list: `kubectl get -A`, informers, garbage collector.
    paths.push({ path: `${base}/${def.plural}`, params: [P.pretty], ops: [listOp(`list${prefix}${def.kind}ForAllNamespaces`)] });
  }
  paths.push({
    path: collectionPath,
    params: [...scopeParams, P.pretty],
    ops: [
      listOp(id('list')),
      {
        method: 'post',
        operationId: id('create'),
        description: `create a ${def.kind}`,
        action: 'post',
        gvk,
        params: WRITE_PARAMS,
        body: anyBody(obj, true),
        responses: ok(obj, '200', '201', '202'),
      },
      {
        method: 'delete',
        operationId: id('delete', '', 'Collection'),
        description: `delete collection of ${def.kind}`,
        action: 'deletecollection',
        gvk,
        params: DELETECOLLECTION_PARAMS,
        body: anyBody(DELETE_OPTIONS, false),
        responses: ok(STATUS, '200'),
      },
    ],
  });
  paths.push({
    path: itemPath,
    params: [nameParam(def.kind), ...scopeParams, P.pretty],
    ops: [
      { method: 'get', operationId: id('read'), description: `read the specified ${def.kind}`, action: 'get', gvk, params: [], responses: ok(obj, '200') },
      {
        method: 'put',
        operationId: id('replace'),
        description: `replace the specified ${def.kind}`,
        action: 'put',
        gvk,
        params: WRITE_PARAMS,
        body: anyBody(obj, true),
        responses: ok(obj, '200', '201'),
      },
      {
        method: 'patch',
        operationId: id('patch'),
        description: `partially update the specified ${def.kind}`,
        action: 'patch',
        gvk,
        params: PATCH_PARAMS,
        body: patchBody,
        responses: ok(obj, '200', '201'),
      },
      {
        method: 'delete',
        operationId: id('delete'),
        description: `delete a ${def.kind}`,
        action: 'delete',
        gvk,
        params: DELETE_PARAMS,
        body: anyBody(DELETE_OPTIONS, false),
        responses: ok(STATUS, '200', '202'),
      },
    ],
  });
  const subresource = (sub: 'status' | 'scale', schema: string, subGvk: GroupVersionKind): PathItem => {
    const Sub = sub[0]!.toUpperCase() + sub.slice(1);
    return {
      path: `${itemPath}/${sub}`,
      params: [nameParam(def.kind), ...scopeParams, P.pretty],
      ops: [
        {
          method: 'get',
          operationId: id('read', Sub),
          description: `read ${sub} of the specified ${def.kind}`,
          action: 'get',
          gvk: subGvk,
          params: [],
          responses: ok(schema, '200'),
        },
        {
          method: 'put',
          operationId: id('replace', Sub),
          description: `replace ${sub} of the specified ${def.kind}`,
          action: 'put',
          gvk: subGvk,
          params: WRITE_PARAMS,
          body: anyBody(schema, true),
          responses: ok(schema, '200', '201'),
        },
        {
          method: 'patch',
          operationId: id('patch', Sub),
          description: `partially update ${sub} of the specified ${def.kind}`,
          action: 'patch',
          gvk: subGvk,
          params: PATCH_PARAMS,
          body: patchBody,
          responses: ok(schema, '200', '201'),
        },
      ],
    };
  };
  if (def.subresources.status) paths.push(subresource('status', obj, gvk));
  if (def.subresources.scale) paths.push(subresource('scale', SCALE, { ...SCALE_GVK }));
  return paths;
}

const UNAUTHORIZED = { description: 'Unauthorized' };

function renderV3(d: Dialect, item: PathItem, tag: string): Record<string, unknown> {
  const param = (p: Param) => ({
    name: p.name,
    in: p.in,
    description: p.description,
    ...(p.required ? { required: true } : {}),
    schema: { type: p.type, uniqueItems: true },
  });
  const out: Record<string, unknown> = {};
  for (const op of item.ops) {
    const rendered: Record<string, unknown> = { tags: [tag], description: op.description, operationId: op.operationId };
    if (op.params.length) rendered.parameters = op.params.map(param);
    if (op.body) {
      rendered.requestBody = {
        content: Object.fromEntries(op.body.contentTypes.map((ct) => [ct, { schema: ref(d, op.body!.schema) }])),
        ...(op.body.required !== undefined ? { required: op.body.required } : {}),
      };
    }
    const responses: Record<string, unknown> = {};
    for (const r of op.responses) {
      const content = Object.fromEntries(produces(op).map((ct) => [ct, { schema: ref(d, r.schema) }]));
      responses[r.code] = { description: r.description, content };
    }
    out[op.method] = finishOperation(rendered, responses, op);
  }
  out.parameters = item.params.map(param);
  return out;
}

// The response content types of an operation: the generic installer's JSON (and the watch stream of a list) unless set.
const produces = (op: Operation): readonly string[] => op.produces ?? (op.watch ? ['application/json', 'application/json;stream=watch'] : ['application/json']);

// finishOperation ends an operation the same way in both dialects: the 401 response and the
// x-kubernetes-action / x-kubernetes-group-version-kind extensions kubectl reads.
function finishOperation(rendered: Record<string, unknown>, responses: Record<string, unknown>, op: { action: string; gvk: object }): Record<string, unknown> {
  responses['401'] = UNAUTHORIZED;
  rendered.responses = responses;
  rendered['x-kubernetes-action'] = op.action;
  rendered['x-kubernetes-group-version-kind'] = { ...op.gvk };
  return rendered;
}

function renderV2(d: Dialect, item: PathItem, tag: string): Record<string, unknown> {
  const param = (p: Param) => ({
    uniqueItems: true,
    type: p.type,
    description: p.description,
    name: p.name,
    in: p.in,
    ...(p.required ? { required: true } : {}),
  });
  const out: Record<string, unknown> = {};
  for (const op of item.ops) {
    const parameters: unknown[] = [];
    if (op.body) parameters.push({ name: 'body', in: 'body', ...(op.body.required ? { required: true } : {}), schema: ref(d, op.body.schema) });
    parameters.push(...op.params.map(param));
    const responses: Record<string, unknown> = {};
    for (const r of op.responses) responses[r.code] = { description: r.description, schema: ref(d, r.schema) };
    const rendered: Record<string, unknown> = {
      description: op.description,
      // kubectl's v2 patch-type detection reads `consumes` of the PATCH operation.
      consumes: op.body ? [...op.body.contentTypes] : [...(op.consumes ?? ['*/*'])],
      produces: [...produces(op)],
      schemes: ['https'],
      tags: [tag],
      operationId: op.operationId,
    };
    if (parameters.length) rendered.parameters = parameters;
    out[op.method] = finishOperation(rendered, responses, op);
  }
  out.parameters = item.params.map(param);
  return out;
}

const SECURITY_SCHEME = { type: 'apiKey', name: 'authorization', in: 'header', description: 'Bearer Token authentication' };

function pathsFor(d: Dialect, kinds: readonly ResourceDefinition[]): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const def of kinds) {
    const tag = operationTag(def.group, def.version);
    const items = isCustomResource(def)
      ? crdKindPaths(def, {
          object: schemaName(def.group, def.version, def.kind),
          list: schemaName(def.group, def.version, def.listKind),
          status: STATUS,
          deleteOptions: DELETE_OPTIONS,
          patch: PATCH,
          scale: SCALE,
        })
      : kindPaths(def);
    for (const item of items) paths[item.path] = d.v3 ? renderV3(d, item, tag) : renderV2(d, item, tag);
  }
  return sortKeys(paths);
}

/** openApiV3GroupVersion builds the OpenAPI 3.0 document for one group/version; undefined when it is not served. */
export function openApiV3GroupVersion(kinds: readonly ResourceDefinition[], group: string, version: string): OpenAPIV3Document | undefined {
  const defs = kinds.filter((k) => k.group === group && k.version === version);
  if (defs.length === 0) return undefined;
  // A group/version of CRDs alone is the document apiextensions-apiserver's builder writes, with its info and metav1.
  if (defs.every(isCustomResource)) {
    return {
      openapi: '3.0.0',
      info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' },
      paths: pathsFor(V3, defs),
      components: { schemas: schemasFor(V3, defs, true) },
    };
  }
  return {
    openapi: '3.0.0',
    info: { title: 'website-apiserver', version: versionInfo().gitVersion },
    paths: pathsFor(V3, defs),
    components: { schemas: schemasFor(V3, defs), securitySchemes: { BearerToken: { ...SECURITY_SCHEME } } },
    security: [{ BearerToken: [] }],
  };
}

/** openApiV3Path is the discovery key of a group/version: `apis/<g>/<v>` (no leading slash, as handler3 keys it). */
export const openApiV3Path = (group: string, version: string) => `apis/${group}/${version}`;

/** openApiV3URL is the serverRelativeURL of a group/version document with the given hash (uppercase sha512 hex). */
export const openApiV3URL = (group: string, version: string, hash: string) => `/openapi/v3/${openApiV3Path(group, version)}?hash=${encodeURIComponent(hash)}`;

/** openApiV3Discovery builds the `/openapi/v3` index from the hashes (keyed by `apis/<g>/<v>`) of the serialized group/version documents. */
export function openApiV3Discovery(kinds: readonly ResourceDefinition[], hashes: ReadonlyMap<string, string>): OpenAPIV3Discovery {
  const paths: OpenAPIV3Discovery['paths'] = {};
  for (const { group, version } of groupVersions(kinds)) {
    const key = openApiV3Path(group, version);
    const hash = hashes.get(key);
    if (hash === undefined) throw new Error(`no serialized OpenAPI document for ${key}`);
    paths[key] = { serverRelativeURL: openApiV3URL(group, version, hash) };
  }
  return { paths };
}

/** openApiV2 builds the Swagger 2.0 document covering every served group/version (paths only under `/apis/<g>/<v>/`). */
export function openApiV2(kinds: readonly ResourceDefinition[]): SwaggerDocument {
  return {
    swagger: '2.0',
    info: { title: 'website-apiserver', version: versionInfo().gitVersion },
    paths: pathsFor(V2, kinds),
    definitions: schemasFor(V2, kinds),
    securityDefinitions: { BearerToken: { ...SECURITY_SCHEME } },
    security: [{ BearerToken: [] }],
  };
}
