/**
 * @module discovery/core-routes
 * The core-group roots a standalone server answers itself, because no kube-apiserver is in front to answer them:
 * `GET /api` (APIVersions, or aggregated discovery v2 by Accept), `GET /api/v1` (APIResourceList) and
 * `GET /api/v1/namespaces/<name>`. Generic discovery clients walk `/api` and `/api/v1` before `/apis` and give up on
 * a 404 (the Python client's dynamic discovery, kube-rs Discovery::run, which also refuses an empty version list), and
 * kubectl reads the namespace after a NotFound to tell a missing object from a missing namespace
 * (cli-runtime resource/visitor.go Info.Get).
 *
 * What is advertised is what is served: `v1` holds one resource, `namespaces`, with the single verb `get`. A namespace
 * exists while it holds an object of some namespaced kind, and `default` always exists (kube-apiserver creates it at
 * start); any other name is kube's 404 `namespaces "<name>" not found`. The Namespace carries no uid,
 * resourceVersion or creationTimestamp: nothing stores one.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notAcceptable, notFound } from '../apis/meta/errors.js';
import type { KubeObject, Table } from '../apis/meta/types.js';
import { negotiate } from '../endpoints/negotiation.js';
import { parseIncludeObject } from '../endpoints/transform.js';
import { requestQuery } from '../endpoints/query.js';
import type { ResourceDefinition } from '../registry/resource.js';
import type { Storage } from '../storage/interface.js';
import { DISCOVERY_V2_CONTENT_TYPE, serializeDocument, type APIResource, type APIResourceDiscovery, type APIResourceList } from './discovery.js';
import { discoveryFormat, ifNoneMatchHits } from './routes.js';

/** DEFAULT_NAMESPACE always exists, as on every cluster. */
export const DEFAULT_NAMESPACE = 'default';

const NAMESPACES: APIResource = {
  name: 'namespaces',
  singularName: 'namespace',
  namespaced: false,
  kind: 'Namespace',
  verbs: ['get'],
  shortNames: ['ns'],
};

/** coreResourceList is `GET /api/v1`: the legacy group's list carries no apiVersion (kube writes it without one). */
export function coreResourceList(): Omit<APIResourceList, 'apiVersion'> {
  return { kind: 'APIResourceList', groupVersion: 'v1', resources: [structuredClone(NAMESPACES)] };
}

/** coreAggregatedDiscovery is `GET /api` as apidiscovery.k8s.io/v2: one item, the unnamed core group. */
export function coreAggregatedDiscovery() {
  const namespaces: APIResourceDiscovery = {
    resource: 'namespaces',
    responseKind: { group: '', version: 'v1', kind: 'Namespace' },
    scope: 'Cluster',
    singularResource: 'namespace',
    verbs: ['get'],
    shortNames: ['ns'],
  };
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: [{ metadata: {}, versions: [{ version: 'v1', resources: [namespaces], freshness: 'Current' }] }],
  };
}

/** apiVersions is `GET /api`: the core versions and the address clients reach this server at (legacy.go APIVersions). */
export function apiVersions(serverAddress: string) {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

/** namespaceObject is the Namespace served for a name that exists: phase Active, with the name label kube sets. */
export function namespaceObject(name: string): KubeObject {
  return {
    kind: 'Namespace',
    apiVersion: 'v1',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: {},
    status: { phase: 'Active' },
  };
}

/** namespaceExists tells whether a namespace holds an object of any namespaced kind (or is `default`). */
export async function namespaceExists(storage: Storage, kinds: readonly ResourceDefinition[], name: string): Promise<boolean> {
  if (name === DEFAULT_NAMESPACE) return true;
  // One kind at a time, stopping at the first that has an object there (as `some` did).
  for (const k of kinds) {
    if (k.namespaced && (await storage.list({ resource: `${k.group}/${k.plural}`, namespace: name }, { limit: 1 })).items.length > 0) return true;
  }
  return false;
}

// The address this request reached, as `host:port` (kube reports its advertised address; the Host header is what the
// client dialled, which is the useful equivalent here).
function serverAddress(req: FastifyRequest): string {
  // HTTP/2 carries the host in :authority.
  const host = req.headers.host ?? (req.headers[':authority'] as string | undefined) ?? '';
  const port = req.socket.localPort;
  if (host === '') return `${req.socket.localAddress ?? ''}:${port}`;
  return /:\d+$/.test(host) ? host : `${host}:${port}`;
}

// The Namespace as a kubectl Table: the columns of kube's namespace printer (pkg/printers/internalversion).
function namespaceTable(ns: KubeObject, version: string, includeObject: string): Table {
  const row: Table['rows'][number] = { cells: [ns.metadata.name, 'Active', '<unknown>'] };
  if (includeObject === 'Object') row.object = ns;
  else if (includeObject === 'Metadata') row.object = { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: ns.metadata };
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${version}`,
    metadata: {},
    columnDefinitions: [
      { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 },
      { name: 'Status', type: 'string', format: '', description: 'The status of the namespace', priority: 0 },
      {
        name: 'Age',
        type: 'string',
        format: '',
        description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
        priority: 0,
      },
    ],
    rows: [row],
  };
}

/** registerStandaloneCoreRoutes installs `/api`, `/api/v1` and `/api/v1/namespaces/:name` (standalone only). */
export function registerStandaloneCoreRoutes(app: FastifyInstance, kinds: readonly ResourceDefinition[], storage: Storage): void {
  const resourceList = serializeDocument(coreResourceList());
  const aggregated = serializeDocument(coreAggregatedDiscovery());
  const DISCOVERY_TYPES = ['application/json', DISCOVERY_V2_CONTENT_TYPE];

  app.get('/api', async (req, reply) => {
    reply.header('vary', 'Accept');
    const format = discoveryFormat(req.headers.accept);
    if (format === undefined) throw notAcceptable(DISCOVERY_TYPES);
    if (format === 'legacy') return reply.type('application/json').send(Buffer.from(JSON.stringify(apiVersions(serverAddress(req)))));
    // As for /apis: kube's aggregated discovery handler serves /api too, with an ETag.
    reply.header('cache-control', 'public').header('etag', aggregated.etag);
    if (ifNoneMatchHits(req.headers['if-none-match'], aggregated.etag)) return reply.code(304).send();
    return reply.type(DISCOVERY_V2_CONTENT_TYPE).send(aggregated.body);
  });

  app.get('/api/v1', async (_req, reply) => reply.type('application/json').send(resourceList.body));

  app.get<{ Params: { name: string } }>('/api/v1/namespaces/:name', async (req, reply) => {
    const { name } = req.params;
    const target = negotiate(req.headers.accept, true);
    if (!(await namespaceExists(storage, kinds, name))) throw notFound({ group: '', resource: 'namespaces' }, name);
    const ns = namespaceObject(name);
    switch (target.kind) {
      case 'Object':
        return reply.type('application/json').send(ns);
      case 'Table':
        return reply.type('application/json').send(namespaceTable(ns, target.version, parseIncludeObject(requestQuery(req))));
      default:
        return reply.type('application/json').send({ kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${target.version}`, metadata: ns.metadata });
    }
  });
}
