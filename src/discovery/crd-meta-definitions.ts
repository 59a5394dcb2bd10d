/**
 * @module discovery/crd-meta-definitions
 * The metav1 (and autoscaling/v1 Scale) component schemas of the OpenAPI v3 document kube-apiserver 1.37.2 serves for
 * a group/version of CRDs, as it serves them (recorded from /openapi/v3/apis/<group>/<version> of the e2e plane's
 * kube-apiserver). They differ from the generic installer's (discovery/openapi): times refer to meta.v1.Time, no
 * defaults on references, ListMeta's shardInfo, and DeleteOptions names every group kube-apiserver serves.
 */
import type { OpenAPISchema } from './openapi-model.js';

// The group/versions whose DeleteOptions kube-apiserver's scheme registers, in the order it lists them.
const DELETE_OPTIONS_GROUPS: readonly [string, readonly string[]][] = [
  ['', ['v1']],
  ['admissionregistration.k8s.io', ['v1', 'v1alpha1', 'v1beta1']],
  ['apps', ['v1', 'v1beta1', 'v1beta2']],
  ['authentication.k8s.io', ['v1', 'v1alpha1', 'v1beta1']],
  ['authorization.k8s.io', ['v1', 'v1beta1']],
  ['autoscaling', ['v1', 'v2']],
  ['batch', ['v1', 'v1beta1']],
  ['certificates.k8s.io', ['v1', 'v1alpha1', 'v1beta1']],
  ['coordination.k8s.io', ['v1', 'v1alpha2', 'v1beta1']],
  ['discovery.k8s.io', ['v1', 'v1beta1']],
  ['events.k8s.io', ['v1', 'v1beta1']],
  ['extensions', ['v1beta1']],
  ['flowcontrol.apiserver.k8s.io', ['v1', 'v1beta1', 'v1beta2', 'v1beta3']],
  ['internal.apiserver.k8s.io', ['v1alpha1']],
  ['lifecycle.k8s.io', ['v1alpha1']],
  ['networking.k8s.io', ['v1', 'v1beta1']],
  ['node.k8s.io', ['v1', 'v1alpha1', 'v1beta1']],
  ['policy', ['v1', 'v1beta1']],
  ['rbac.authorization.k8s.io', ['v1', 'v1alpha1', 'v1beta1']],
  ['resource.k8s.io', ['v1', 'v1alpha3', 'v1beta1', 'v1beta2']],
  ['scheduling.k8s.io', ['v1', 'v1alpha3', 'v1beta1']],
  ['storage.k8s.io', ['v1', 'v1alpha1', 'v1beta1']],
  ['storagemigration.k8s.io', ['v1', 'v1beta1']],
];

const META: Record<string, OpenAPISchema> = {
  'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions': {
    description: 'DeleteOptions may be provided when deleting an API object.',
    type: 'object',
    properties: {
      apiVersion: {
        description:
          'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
        type: 'string',
      },
      dryRun: {
        description:
          'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed',
        type: 'array',
        items: {
          type: 'string',
        },
        'x-kubernetes-list-type': 'atomic',
      },
      gracePeriodSeconds: {
        description:
          'The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.',
        type: 'integer',
        format: 'int64',
      },
      ignoreStoreReadErrorWithClusterBreakingPotential: {
        description:
          'if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. A resource is considered corrupt if it can not be retrieved from the underlying storage successfully because of a) its data can not be transformed e.g. decryption failure, or b) it fails to decode into an object. NOTE: unsafe deletion ignores finalizer constraints, skips precondition checks, and removes the object from the storage. WARNING: This may potentially break the cluster if the workload associated with the resource being unsafe-deleted relies on normal deletion flow. Use only if you REALLY know what you are doing. The default value is false, and the user must opt in to enable it',
        type: 'boolean',
      },
      kind: {
        description:
          'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        type: 'string',
      },
      orphanDependents: {
        description:
          'Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the "orphan" finalizer will be added to/removed from the object\'s finalizers list. Either this field or PropagationPolicy may be set, but not both.',
        type: 'boolean',
      },
      preconditions: {
        description: 'Must be fulfilled before a deletion is carried out. If not possible, a 409 Conflict status will be returned.',
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions',
          },
        ],
      },
      propagationPolicy: {
        description:
          "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. The default policy is decided by the existing finalizer set in the metadata.finalizers and the resource-specific default policy. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground.",
        type: 'string',
      },
    },
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1': {
    description:
      "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.\n\nEach key is either a '.' representing the field itself, and will always map to an empty set, or a string representing a sub-field or item. The string will follow one of these four formats: 'f:<name>', where <name> is the name of a field in a struct, or key in a map 'v:<value>', where <value> is the exact json formatted value of a list item 'i:<index>', where <index> is position of a item in a list 'k:<keys>', where <keys> is a map of  a list item's key fields to their unique values If a key maps to an empty Fields value, the field that key represents is part of the set.\n\nThe exact format is defined in sigs.k8s.io/structured-merge-diff",
    type: 'object',
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta': {
    description:
      'ListMeta describes metadata that synthetic resources must have, including lists and various status objects. A resource may have only one of {ObjectMeta, ListMeta}.',
    type: 'object',
    properties: {
      continue: {
        description:
          'continue may be set if the user set a limit on the number of items returned, and indicates that the server has more data available. The value is opaque and may be used to issue another request to the endpoint that served this list to retrieve the next set of available objects. Continuing a consistent list may not be possible if the server configuration has changed or more than a few minutes have passed. The resourceVersion field returned when using this continue value will be identical to the value in the first response, unless you have received this token from an error message.',
        type: 'string',
      },
      remainingItemCount: {
        description:
          'remainingItemCount is the number of subsequent items in the list which are not included in this list response. If the list request contained label or field selectors, then the number of remaining items is unknown and the field will be left unset and omitted during serialization. If the list is complete (either because it is not chunking or because this is the last chunk), then there are no more remaining items and this field will be left unset and omitted during serialization. Servers older than v1.15 do not set this field. The intended use of the remainingItemCount is *estimating* the size of a collection. Clients should not rely on the remainingItemCount to be set or to be exact.',
        type: 'integer',
        format: 'int64',
      },
      resourceVersion: {
        description:
          "String that identifies the server's internal version of this object that can be used by clients to determine when objects have changed. Value must be treated as opaque by clients and passed unmodified back to the server. Populated by the system. Read-only. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#concurrency-control-and-consistency",
        type: 'string',
      },
      selfLink: {
        description: 'Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.',
        type: 'string',
      },
      shardInfo: {
        description:
          'shardInfo is set when the list is a filtered subset of the full collection, as selected by a shard selector on the request. It echoes back the selector so clients can verify which shard they received and merge sharded responses. Clients should not cache sharded list responses as a full representation of the collection.\n\nThis is an alpha field and requires enabling the ShardedListAndWatch feature gate.',
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ShardInfo',
          },
        ],
      },
    },
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry': {
    description: 'ManagedFieldsEntry is a workflow-id, a FieldSet and the group version of the resource that the fieldset applies to.',
    type: 'object',
    properties: {
      apiVersion: {
        description:
          'APIVersion defines the version of this resource that this field set applies to. The format is "group/version" just like the top-level APIVersion field. It is necessary to track the version of a field set because it cannot be automatically converted.',
        type: 'string',
      },
      fieldsType: {
        description: 'FieldsType is the discriminator for the different fields format and version. There is currently only one possible value: "FieldsV1"',
        type: 'string',
      },
      fieldsV1: {
        description: 'FieldsV1 holds the first JSON version format as described in the "FieldsV1" type.',
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1',
          },
        ],
      },
      manager: {
        description: 'Manager is an identifier of the workflow managing these fields.',
        type: 'string',
      },
      operation: {
        description:
          "Operation is the type of operation which lead to this ManagedFieldsEntry being created. The only valid values for this field are 'Apply' and 'Update'.",
        type: 'string',
      },
      subresource: {
        description:
          'Subresource is the name of the subresource used to update that object, or empty string if the object was updated through the main resource. The value of this field is used to distinguish between managers, even if they share the same name. For example, a status update will be distinct from a regular update using the same manager name. Note that the APIVersion field is not related to the Subresource field and it always corresponds to the version of the main resource.',
        type: 'string',
      },
      time: {
        description:
          'Time is the timestamp of when the ManagedFields entry was added. The timestamp will also be updated if a field is added, the manager changes any of the owned fields value or removes a field. The timestamp does not update when a field is removed from the entry because another manager took it over.',
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time',
          },
        ],
      },
    },
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': {
    description: 'ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.',
    type: 'object',
    properties: {
      annotations: {
        description:
          'Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata. They are not queryable and should be preserved when modifying objects. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/annotations',
        type: 'object',
        additionalProperties: {
          type: 'string',
        },
      },
      creationTimestamp: {
        description:
          'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time',
          },
        ],
      },
      deletionGracePeriodSeconds: {
        description:
          'Number of seconds allowed for this object to gracefully terminate before it will be removed from the system. Only set when deletionTimestamp is also set. May only be shortened. Read-only.',
        type: 'integer',
        format: 'int64',
      },
      deletionTimestamp: {
        description:
          'DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted. This field is set by the server when a graceful deletion is requested by the user, and is not directly settable by a client. The resource is expected to be deleted (no longer visible from resource lists, and not reachable by name) after the time in this field, once the finalizers list is empty. As long as the finalizers list contains items, deletion is blocked. Once the deletionTimestamp is set, this value may not be unset or be set further into the future, although it may be shortened or the resource may be deleted prior to this time. For example, a user may request that a pod is deleted in 30 seconds. The Kubelet will react by sending a graceful termination signal to the containers in the pod. After that 30 seconds, the Kubelet will send a hard termination signal (SIGKILL) to the container and after cleanup, remove the pod from the API. In the presence of network partitions, this object may still exist after this timestamp, until an administrator or automated process can determine the resource is fully terminated. If not set, graceful deletion of the object has not been requested.\n\nPopulated by the system when a graceful deletion is requested. Read-only. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time',
          },
        ],
      },
      finalizers: {
        description:
          'Must be empty before the object is deleted from the registry. Each entry is an identifier for the responsible component that will remove the entry from the list. If the deletionTimestamp of the object is non-nil, entries in this list can only be removed. Finalizers may be processed and removed in any order.  Order is NOT enforced because it introduces significant risk of stuck finalizers. finalizers is a shared field, any actor with permission can reorder it. If the finalizer list is processed in order, then this can lead to a situation in which the component responsible for the first finalizer in the list is waiting for a signal (field value, external system, or other) produced by a component responsible for a finalizer later in the list, resulting in a deadlock. Without enforced ordering finalizers are free to order amongst themselves and are not vulnerable to ordering changes in the list.',
        type: 'array',
        items: {
          type: 'string',
        },
        'x-kubernetes-list-type': 'set',
        'x-kubernetes-patch-strategy': 'merge',
      },
      generateName: {
        description:
          'GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided. If this field is used, the name returned to the client will be different than the name passed. This value will also be combined with a unique suffix. The provided value has the same validation rules as the Name field, and may be truncated by the length of the suffix required to make the value unique on the server.\n\nIf this field is specified and the generated name exists, the server will return a 409.\n\nApplied only if Name is not specified. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#idempotency',
        type: 'string',
      },
      generation: {
        description: 'A sequence number representing a specific generation of the desired state. Populated by the system. Read-only.',
        type: 'integer',
        format: 'int64',
      },
      labels: {
        description:
          'Map of string keys and values that can be used to organize and categorize (scope and select) objects. May match selectors of replication controllers and services. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels',
        type: 'object',
        additionalProperties: {
          type: 'string',
        },
      },
      managedFields: {
        description:
          "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow. This is mostly for internal housekeeping, and users typically shouldn't need to set or understand this field. A workflow can be the user's name, a controller's name, or the name of a specific apply path like \"ci-cd\". The set of fields is always in the version that the workflow used when modifying the object.",
        type: 'array',
        items: {
          $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry',
        },
        'x-kubernetes-list-type': 'atomic',
      },
      name: {
        description:
          'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
        type: 'string',
      },
      namespace: {
        description:
          'Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the "default" namespace, but "default" is the canonical representation. Not all objects are required to be scoped to a namespace - the value of this field for those objects will be empty.\n\nMust be a DNS_LABEL. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/namespaces',
        type: 'string',
      },
      ownerReferences: {
        description:
          'List of objects depended by this object. If ALL objects in the list have been deleted, this object will be garbage collected. If this object is managed by a controller, then an entry in this list will point to this controller, with the controller field set to true. There cannot be more than one managing controller.',
        type: 'array',
        items: {
          $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference',
        },
        'x-kubernetes-list-map-keys': ['uid'],
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-patch-merge-key': 'uid',
        'x-kubernetes-patch-strategy': 'merge',
      },
      resourceVersion: {
        description:
          'An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed. May be used for optimistic concurrency, change detection, and the watch operation on a resource or set of resources. Clients must treat these values as opaque and passed unmodified back to the server. They may only be valid for a particular resource or set of resources.\n\nPopulated by the system. Read-only. Value must be treated as opaque by clients and . More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#concurrency-control-and-consistency',
        type: 'string',
      },
      selfLink: {
        description: 'Deprecated: selfLink is a legacy read-only field that is no longer populated by the system.',
        type: 'string',
      },
      uid: {
        description:
          'UID is the unique in time and space value for this object. It is typically generated by the server on successful creation of a resource and is not allowed to change on PUT operations.\n\nPopulated by the system. Read-only. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids',
        type: 'string',
      },
    },
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference': {
    description:
      'OwnerReference contains enough information to let you identify an owning object. An owning object must be in the same namespace as the dependent, or be cluster-scoped, so there is no namespace field.',
    type: 'object',
    required: ['apiVersion', 'kind', 'name', 'uid'],
    properties: {
      apiVersion: {
        description: 'API version of the referent.',
        type: 'string',
        default: '',
      },
      blockOwnerDeletion: {
        description:
          'If true, AND if the owner has the "foregroundDeletion" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed. See https://kubernetes.io/docs/concepts/architecture/garbage-collection/#foreground-deletion for how the garbage collector interacts with this field and enforces the foreground deletion. Defaults to false. To set this field, a user needs "delete" permission of the owner, otherwise 422 (Unprocessable Entity) will be returned.',
        type: 'boolean',
      },
      controller: {
        description: 'If true, this reference points to the managing controller.',
        type: 'boolean',
      },
      kind: {
        description: 'Kind of the referent. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        type: 'string',
        default: '',
      },
      name: {
        description: 'Name of the referent. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
        type: 'string',
        default: '',
      },
      uid: {
        description: 'UID of the referent. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids',
        type: 'string',
        default: '',
      },
    },
    'x-kubernetes-map-type': 'atomic',
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Patch': {
    description: 'Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.',
    type: 'object',
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Preconditions': {
    description: 'Preconditions must be fulfilled before an operation (update, delete, etc.) is carried out.',
    type: 'object',
    properties: {
      resourceVersion: {
        description: 'Specifies the target ResourceVersion',
        type: 'string',
      },
      uid: {
        description: 'Specifies the target UID.',
        type: 'string',
      },
    },
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.ShardInfo': {
    description:
      'ShardInfo describes the shard selector that was applied to produce a list response. Its presence on a list response indicates the list is a filtered subset.',
    type: 'object',
    required: ['selector'],
    properties: {
      selector: {
        description:
          'selector is the shard selector string from the request, echoed back so clients can verify which shard they received and merge responses from multiple shards.',
        type: 'string',
        default: '',
      },
    },
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Status': {
    description: "Status is a return value for calls that don't return other objects.",
    type: 'object',
    properties: {
      apiVersion: {
        description:
          'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
        type: 'string',
      },
      code: {
        description: 'Suggested HTTP return code for this status, 0 if not set.',
        type: 'integer',
        format: 'int32',
      },
      details: {
        description:
          'Extended data associated with the reason.  Each reason may define its own extended details. This field is optional and the data returned is not guaranteed to conform to any schema except that defined by the reason type.',
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails',
          },
        ],
      },
      kind: {
        description:
          'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        type: 'string',
      },
      message: {
        description: 'A human-readable description of the status of this operation.',
        type: 'string',
      },
      metadata: {
        description: 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        default: {},
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta',
          },
        ],
      },
      reason: {
        description:
          'A machine-readable description of why this operation is in the "Failure" status. If this value is empty there is no information available. A Reason clarifies an HTTP status code but does not override it.',
        type: 'string',
      },
      status: {
        description:
          'Status of the operation. One of: "Success" or "Failure". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status',
        type: 'string',
      },
    },
    'x-kubernetes-group-version-kind': [
      {
        group: '',
        kind: 'Status',
        version: 'v1',
      },
    ],
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause': {
    description: 'StatusCause provides more information about an api.Status failure, including cases when multiple errors are encountered.',
    type: 'object',
    properties: {
      field: {
        description:
          'The field of the resource that has caused this error, as named by its JSON serialization. May include dot and postfix notation for nested attributes. Arrays are zero-indexed.  Fields may appear more than once in an array of causes due to fields having multiple errors. Optional.\n\nExamples:\n  "name" - the field "name" on the current resource\n  "items[0].name" - the field "name" on the first array entry in "items"',
        type: 'string',
      },
      message: {
        description: 'A human-readable description of the cause of the error.  This field may be presented as-is to a reader.',
        type: 'string',
      },
      reason: {
        description: 'A machine-readable description of the cause of the error. If this value is empty there is no information available.',
        type: 'string',
      },
    },
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails': {
    description:
      'StatusDetails is a set of additional properties that MAY be set by the server to provide additional information about a response. The Reason field of a Status object defines what attributes will be set. Clients must ignore fields that do not match the defined type of each attribute, and should assume that any attribute may be empty, invalid, or under defined.',
    type: 'object',
    properties: {
      causes: {
        description: 'The Causes array includes more details associated with the StatusReason failure. Not all StatusReasons may provide detailed causes.',
        type: 'array',
        items: {
          $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause',
        },
        'x-kubernetes-list-type': 'atomic',
      },
      group: {
        description: 'The group attribute of the resource associated with the status StatusReason.',
        type: 'string',
      },
      kind: {
        description:
          'The kind attribute of the resource associated with the status StatusReason. On some operations may differ from the requested resource Kind. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        type: 'string',
      },
      name: {
        description: 'The name attribute of the resource associated with the status StatusReason (when there is a single name which can be described).',
        type: 'string',
      },
      retryAfterSeconds: {
        description:
          'If specified, the time in seconds before the operation should be retried. Some errors may indicate the client must take an alternate action - for those errors this field may indicate how long to wait before taking the alternate action.',
        type: 'integer',
        format: 'int32',
      },
      uid: {
        description:
          'UID of the resource. (when there is a single resource which can be described). More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#uids',
        type: 'string',
      },
    },
  },
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time': {
    description:
      'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.  Wrappers are provided for many of the factory methods that the time package offers.',
    type: 'string',
    format: 'date-time',
  },
};

const SCALE: Record<string, OpenAPISchema> = {
  'io.k8s.api.autoscaling.v1.Scale': {
    description: 'Scale represents a scaling request for a resource.',
    type: 'object',
    properties: {
      apiVersion: {
        description:
          'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
        type: 'string',
      },
      kind: {
        description:
          'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        type: 'string',
      },
      metadata: {
        description:
          'metadata is the standard object metadata; More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata.',
        default: {},
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
          },
        ],
      },
      spec: {
        description:
          'spec defines the behavior of the scale. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status.',
        default: {},
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.api.autoscaling.v1.ScaleSpec',
          },
        ],
      },
      status: {
        description:
          'status is the current status of the scale. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#spec-and-status. Read-only.',
        default: {},
        allOf: [
          {
            $ref: '#/components/schemas/io.k8s.api.autoscaling.v1.ScaleStatus',
          },
        ],
      },
    },
    'x-kubernetes-group-version-kind': [
      {
        group: 'autoscaling',
        kind: 'Scale',
        version: 'v1',
      },
    ],
  },
  'io.k8s.api.autoscaling.v1.ScaleSpec': {
    description: 'ScaleSpec describes the attributes of a scale subresource.',
    type: 'object',
    properties: {
      replicas: {
        description: 'replicas is the desired number of instances for the scaled object.',
        type: 'integer',
        format: 'int32',
        default: 0,
      },
    },
  },
  'io.k8s.api.autoscaling.v1.ScaleStatus': {
    description: 'ScaleStatus represents the current status of a scale subresource.',
    type: 'object',
    required: ['replicas'],
    properties: {
      replicas: {
        description: 'replicas is the actual number of observed instances of the scaled object.',
        type: 'integer',
        format: 'int32',
        default: 0,
      },
      selector: {
        description:
          'selector is the label query over pods that should match the replicas count. This is same as the label selector but in the string format to avoid introspection by clients. The string will be in the same format as the query-param syntax. More info about label selectors: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/',
        type: 'string',
      },
    },
  },
};

/** crdMetaDefinitions is a fresh copy of those schemas; the Scale ones only when a kind has a scale subresource. */
export function crdMetaDefinitions(withScale: boolean): Record<string, OpenAPISchema> {
  const out = structuredClone({ ...META, ...(withScale ? SCALE : {}) });
  out['io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions']!['x-kubernetes-group-version-kind'] = DELETE_OPTIONS_GROUPS.flatMap(([group, versions]) =>
    versions.map((version) => ({ group, kind: 'DeleteOptions', version })),
  );
  return out;
}
