/**
 * @module discovery/openapi-crd-paths
 * The OpenAPI paths of a CRD-defined kind as kube-apiserver publishes them: the routes apiextensions-apiserver's
 * openapi builder (controller/openapi/builder) declares, with the option parameters of the metav1 option types, as
 * kube-openapi's builders render them (a parameter every operation of a path shares moves to the path, both lists
 * sorted by name). The code-defined kinds keep the generic installer's shape (discovery/openapi).
 */
import { SUPPORTED_PATCH_TYPES } from '../registry/patch.js';
import type { ResourceDefinition } from '../registry/resource.js';
import type { GroupVersionKind } from './discovery.js';
import { operationGroupVersion, type Operation, type Param, type PathItem } from './openapi-model.js';

/** CrdSchemaNames names the schemas a CRD's paths refer to. */
export interface CrdSchemaNames {
  object: string;
  list: string;
  status: string;
  deleteOptions: string;
  patch: string;
  scale: string;
}

const q = (name: string, type: Param['type'], description: string): Param => ({ name, in: 'query', type, description });

// The metav1 option fields' documentation, as kube-apiserver 1.37 publishes it for a CRD.
const P = {
  allowWatchBookmarks: q(
    'allowWatchBookmarks',
    'boolean',
    'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server\'s discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored.',
  ),
  continue: q(
    'continue',
    'string',
    'The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue) and the server may reject a continue value it does not recognize. If the specified continue value is no longer valid whether due to expiration (generally five to fifteen minutes) or a configuration change on the server, the server will respond with a 410 ResourceExpired error together with a continue token. If the client needs a consistent list, it must restart their list without the continue field. Otherwise, the client may send another list request with the token received with the 410 error, the server will respond with a list starting from the next key, but from the latest snapshot, which is inconsistent from the previous list results - objects that are created, modified, or deleted after the first list request will be included in the response, as long as their keys are after the "next key".\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications.',
  ),
  fieldSelector: q('fieldSelector', 'string', 'A selector to restrict the list of returned objects by their fields. Defaults to everything.'),
  labelSelector: q('labelSelector', 'string', 'A selector to restrict the list of returned objects by their labels. Defaults to everything.'),
  limit: q(
    'limit',
    'integer',
    'limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. Setting a limit may return fewer than the requested amount of items (up to zero items) in the event all requested objects are filtered out and clients should only use the presence of the continue field to determine whether more results are available. Servers may choose not to support the limit argument and will return all of the available results. If limit is specified and the continue field is empty, clients may assume that no more results are available. This field is not supported if watch is true.\n\nThe server guarantees that the objects returned when using continue will be identical to issuing a single list call without a limit - that is, no objects created, modified, or deleted after the first request is issued will be included in any subsequent continued requests. This is sometimes referred to as a consistent snapshot, and ensures that a client that is using limit to receive smaller chunks of a very large result can ensure they see all possible objects. If objects are updated during a chunked list the version of the object that was present at the time the first list result was calculated is returned.',
  ),
  pretty: q(
    'pretty',
    'string',
    "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
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
    '`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic "Bookmark" event  will be sent. The bookmark will report the ResourceVersion (RV) corresponding to the set of objects, and be marked with `"k8s.io/initial-events-end": "true"` annotation. Afterwards, the watch stream will proceed as usual, sending watch events corresponding to changes (subsequent to the RV) to objects watched.\n\nWhen `sendInitialEvents` option is set, we require `resourceVersionMatch` option to also be set. The semantic of the watch request is as following: - `resourceVersionMatch` = NotOlderThan\n  is interpreted as "data at least as new as the provided `resourceVersion`"\n  and the bookmark event is send when the state is synced\n  to a `resourceVersion` at least as fresh as the one provided by the ListOptions.\n  If `resourceVersion` is unset, this is interpreted as "consistent read" and the\n  bookmark event is send when the state is synced at least to the moment\n  when request started being processed.\n- `resourceVersionMatch` set to any other value or unset\n  Invalid error is returned.\n\nDefaults to true if `resourceVersion=""` or `resourceVersion="0"` (for backward compatibility reasons) and to false otherwise.',
  ),
  shardSelector: q(
    'shardSelector',
    'string',
    "shardSelector restricts the list of returned objects using a CEL-based shard selector expression. The format uses the shardRange() function combined with || (logical OR) to specify one or more hash ranges:\n\n  shardRange(object.metadata.uid, '0x0', '0x8000000000000000')\n  shardRange(object.metadata.uid, '0x0', '0x8000000000000000') || shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')\n\nField paths use CEL-style object-rooted syntax (e.g. \"object.metadata.uid\"), NOT the fieldSelector format (\"metadata.uid\"). Currently supported paths:\n  - object.metadata.uid\n  - object.metadata.namespace\n\nhexStart and hexEnd are single-quoted CEL string literals with a '0x' prefix, defining the inclusive lower and exclusive upper bounds over the 64-bit FNV-1a hash space. The full range is [0x0, 0x10000000000000000), where the exclusive upper bound equals 2^64.\n\nExamples:\n  2-shard split:\n    shard 0: shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')\n    shard 1: shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')\n  4-shard split:\n    shard 0: shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')\n    shard 1: shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000')\n    shard 2: shardRange(object.metadata.uid, '0x8000000000000000', '0xc000000000000000')\n    shard 3: shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')\n\nThis is an alpha field and requires enabling the ShardedListAndWatch feature gate.",
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
  fieldValidation: q(
    'fieldValidation',
    'string',
    'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.',
  ),
  gracePeriodSeconds: q(
    'gracePeriodSeconds',
    'integer',
    'The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used. Defaults to a per object value if not specified. zero means delete immediately.',
  ),
  ignoreStoreReadError: q(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'boolean',
    'if set to true, it will trigger an unsafe deletion of the resource in case the normal deletion flow fails with a corrupt object error. A resource is considered corrupt if it can not be retrieved from the underlying storage successfully because of a) its data can not be transformed e.g. decryption failure, or b) it fails to decode into an object. NOTE: unsafe deletion ignores finalizer constraints, skips precondition checks, and removes the object from the storage. WARNING: This may potentially break the cluster if the workload associated with the resource being unsafe-deleted relies on normal deletion flow. Use only if you REALLY know what you are doing. The default value is false, and the user must opt in to enable it',
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
  force: q(
    'force',
    'boolean',
    'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.',
  ),
  fieldManager: q(
    'fieldManager',
    'string',
    'fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.',
  ),
  fieldManagerPatch: q(
    'fieldManager',
    'string',
    'fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types (JsonPatch, MergePatch, StrategicMergePatch).',
  ),
};

// metav1.ListOptions (list, watch and deletecollection), GetOptions, CreateOptions/UpdateOptions, PatchOptions, DeleteOptions.
const LIST: Param[] = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.shardSelector,
  P.timeoutSeconds,
  P.watch,
];
const GET: Param[] = [P.resourceVersion];
const WRITE: Param[] = [P.dryRun, P.fieldManager, P.fieldValidation];
const PATCH: Param[] = [P.dryRun, P.fieldManagerPatch, P.fieldValidation, P.force];
const DELETE: Param[] = [P.dryRun, P.gracePeriodSeconds, P.ignoreStoreReadError, P.orphanDependents, P.propagationPolicy];

/** The content types every CRD route produces, and consumes unless it is a PATCH. */
const JSON_YAML: readonly string[] = ['application/json', 'application/yaml'];

const codeText: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted' };
const returns = (schema: string, ...codes: string[]) => codes.map((code) => ({ code, description: codeText[code]!, schema }));

const byName = (a: Param, b: Param) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.in < b.in ? -1 : a.in > b.in ? 1 : 0);

// One route: its path and its operation with every parameter it takes (path parameters and pretty included).
interface Route {
  path: string;
  op: Operation;
}

// kube-openapi moves a parameter all of a path's operations share to the path, and sorts both lists by name.
function group(routes: readonly Route[]): PathItem[] {
  const items: PathItem[] = [];
  for (const path of [...new Set(routes.map((r) => r.path))]) {
    const ops = routes.filter((r) => r.path === path).map((r) => r.op);
    const key = (p: Param) => `${p.in}/${p.name}`;
    const shared = ops[0]!.params.filter((p) => ops.every((o) => o.params.some((x) => key(x) === key(p))));
    const sharedKeys = new Set(shared.map(key));
    items.push({
      path,
      params: [...shared].sort(byName),
      ops: ops.map((o) => ({ ...o, params: o.params.filter((p) => !sharedKeys.has(key(p))).sort(byName) })),
    });
  }
  return items;
}

// GetArticleForNoun (apiserver endpoints), padded: no article for a plural-looking kind ("Settings", not "Class").
function articleFor(kind: string): string {
  if (!kind.endsWith('ss') && kind.endsWith('s')) return ' ';
  return /^[aeiou]/i.test(kind) ? ' an ' : ' a ';
}

/** crdKindPaths lists the paths of one CRD-defined kind in one version, as kube-apiserver publishes them. */
export function crdKindPaths(def: ResourceDefinition, names: CrdSchemaNames): PathItem[] {
  // Every route names the CRD's own kind, the scale routes too.
  const gvk: GroupVersionKind = { group: def.group, version: def.version, kind: def.kind };
  const gv = operationGroupVersion(def.group, def.version);
  const scoped = def.namespaced ? 'Namespaced' : '';
  const base = `/apis/${def.group}/${def.version}`;
  const root = def.namespaced ? `${base}/namespaces/{namespace}/${def.plural}` : `${base}/${def.plural}`;
  const pretty = q(
    'pretty',
    'string',
    "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
  );
  const pathParam = (name: string, description: string): Param => ({ name, in: 'path', type: 'string', description, required: true });
  const namespace = pathParam('namespace', 'object name and auth scope, such as for teams and projects');
  const name = pathParam('name', `name of the ${def.kind}`);
  const article = articleFor(def.kind);

  const routes: Route[] = [];
  const route = (path: string, op: Omit<Operation, 'gvk' | 'produces'>) => {
    const params = [pretty, ...(path.includes('{namespace}') ? [namespace] : []), ...(path.includes('{name}') ? [name] : []), ...op.params];
    routes.push({ path, op: { ...op, params, gvk, produces: JSON_YAML, consumes: op.method === 'patch' ? SUPPORTED_PATCH_TYPES : JSON_YAML } });
  };
  const id = (verb: string, suffix = '') => `${verb}${gv}${scoped}${def.kind}${suffix}`;
  const list = (operationId: string, path: string) =>
    route(path, {
      method: 'get',
      operationId,
      description: `list objects of kind ${def.kind}`,
      action: 'list',
      params: LIST,
      responses: returns(names.list, '200'),
    });
  const bodyOf = (schema: string) => ({ schema, contentTypes: JSON_YAML, required: true });
  const patchBody = { schema: names.patch, contentTypes: SUPPORTED_PATCH_TYPES, required: true };

  if (def.namespaced) list(`list${gv}${def.kind}ForAllNamespaces`, `${base}/${def.plural}`);
  list(id('list'), root);
  route(root, {
    method: 'post',
    operationId: id('create'),
    description: `create${article}${def.kind}`,
    action: 'post',
    params: WRITE,
    body: bodyOf(names.object),
    responses: returns(names.object, '200', '201', '202'),
  });
  route(root, {
    method: 'delete',
    operationId: `delete${gv}Collection${scoped}${def.kind}`,
    description: `delete collection of ${def.kind}`,
    action: 'deletecollection',
    params: LIST,
    responses: returns(names.status, '200'),
  });
  const item = `${root}/{name}`;
  route(item, {
    method: 'get',
    operationId: id('read'),
    description: `read the specified ${def.kind}`,
    action: 'get',
    params: GET,
    responses: returns(names.object, '200'),
  });
  route(item, {
    method: 'put',
    operationId: id('replace'),
    description: `replace the specified ${def.kind}`,
    action: 'put',
    params: WRITE,
    body: bodyOf(names.object),
    responses: returns(names.object, '200', '201'),
  });
  route(item, {
    method: 'delete',
    operationId: id('delete'),
    description: `delete${article}${def.kind}`,
    action: 'delete',
    params: DELETE,
    body: { schema: names.deleteOptions, contentTypes: JSON_YAML },
    responses: returns(names.status, '200', '202'),
  });
  route(item, {
    method: 'patch',
    operationId: id('patch'),
    description: `partially update the specified ${def.kind}`,
    action: 'patch',
    params: PATCH,
    body: patchBody,
    responses: returns(names.object, '200'),
  });
  const subresource = (sub: 'status' | 'scale', schema: string) => {
    const Sub = sub[0]!.toUpperCase() + sub.slice(1);
    const path = `${item}/${sub}`;
    route(path, {
      method: 'get',
      operationId: id('read', Sub),
      description: `read ${sub} of the specified ${def.kind}`,
      action: 'get',
      params: GET,
      responses: returns(schema, '200'),
    });
    route(path, {
      method: 'put',
      operationId: id('replace', Sub),
      description: `replace ${sub} of the specified ${def.kind}`,
      action: 'put',
      params: WRITE,
      body: bodyOf(schema),
      responses: returns(schema, '200', '201'),
    });
    route(path, {
      method: 'patch',
      operationId: id('patch', Sub),
      description: `partially update ${sub} of the specified ${def.kind}`,
      action: 'patch',
      params: PATCH,
      body: patchBody,
      responses: returns(schema, '200'),
    });
  };
  if (def.subresources.status) subresource('status', names.object);
  if (def.subresources.scale) subresource('scale', names.scale);
  return group(routes);
}
