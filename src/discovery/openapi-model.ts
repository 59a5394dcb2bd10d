/**
 * @module discovery/openapi-model
 * The published schema type, the dialect-neutral model of the OpenAPI paths of one kind (operations, parameters,
 * bodies, responses), which discovery/openapi renders as OpenAPI v3 or Swagger 2.0, and the operation-ID and tag names
 * kube gives a group.
 */
import type { JSONSchema } from '../registry/resource.js';
import type { GroupVersionKind } from './discovery.js';

/** OpenAPISchema is a schema as published: JSONSchema plus `$ref` and `allOf`, which the published documents need. */
export interface OpenAPISchema extends Omit<JSONSchema, 'type' | 'properties' | 'additionalProperties' | 'items'> {
  type?: string;
  properties?: Record<string, OpenAPISchema>;
  additionalProperties?: OpenAPISchema | boolean;
  items?: OpenAPISchema;
  $ref?: string;
  allOf?: OpenAPISchema[];
  anyOf?: OpenAPISchema[];
}

/** Param is one query or path parameter. */
export interface Param {
  name: string;
  in: 'query' | 'path';
  type: 'string' | 'boolean' | 'integer';
  description: string;
  required?: boolean;
}

/** Operation is one HTTP method on a path. */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  operationId: string;
  description: string;
  action: string;
  gvk: GroupVersionKind;
  params: Param[];
  /** The request body; `required` absent is published as absent (kube omits a false `required`). */
  body?: { schema: string; contentTypes: readonly string[]; required?: boolean };
  responses: { code: string; description: string; schema: string }[];
  /** List operations can also stream watch events. */
  watch?: boolean;
  /** Response content types when not the default (application/json, plus the watch stream for a list). */
  produces?: readonly string[];
  /** The v2 `consumes` of an operation without a body, when not `*∕*`. */
  consumes?: readonly string[];
}

/** PathItem is one path: parameters common to its operations, and the operations. */
export interface PathItem {
  path: string;
  params: Param[];
  ops: Operation[];
}

/**
 * toValidOperationID keeps letters, underscores and (not first) digits, capitalising what follows a dropped
 * character, as k8s.io/apiserver endpoints/openapi ToValidOperationID does.
 */
export function toValidOperationID(s: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  let i = 0;
  for (const r of s) {
    if (/\p{L}/u.test(r) || r === '_' || (i !== 0 && /\p{Nd}/u.test(r))) {
      out += capitalize ? r.toUpperCase() : r;
      capitalize = false;
    } else {
      capitalize = true;
    }
    i += Buffer.byteLength(r);
  }
  return out;
}

// GetOperationIDAndTags drops the `.k8s.io` of a group before naming it.
const groupName = (group: string) => (group.endsWith('.k8s.io') ? group.slice(0, -'.k8s.io'.length) : group);

/** operationGroupVersion is what GetOperationIDAndTags puts after an operation's verb: `SamplecontrollerV1alpha1`. */
export const operationGroupVersion = (group: string, version: string) => toValidOperationID(groupName(group), true) + toValidOperationID(version, true);

/** operationTag is the tag of a group/version's operations: `samplecontroller_v1alpha1`, `stableExampleCom_v1`. */
export const operationTag = (group: string, version: string) => `${toValidOperationID(groupName(group), false)}_${toValidOperationID(version, false)}`;
