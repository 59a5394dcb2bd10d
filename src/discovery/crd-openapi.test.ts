/**
 * @module discovery/crd-openapi.test
 * Discovery and OpenAPI v3 of a CRD-defined kind (customResource) over HTTP, beside a code-defined kind in the same
 * server: what kube-apiserver 1.37.2 answers for the same CRD (recorded by test/e2e/crd-differential.test.ts from the
 * corpus' samplecontroller.k8s.io Foo), where the CRD's shape differs from the generic installer's.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceDefinition } from '../registry/resource.js';
import { DISCOVERY_V2_CONTENT_TYPE, type APIGroupDiscoveryList, type APIResourceList } from './discovery.js';
import type { OpenAPISchema, OpenAPIV3Document, SwaggerDocument } from './openapi.js';
import { registerDiscoveryRoutes } from './routes.js';

const G = 'samplecontroller.k8s.io';
const V = 'v1alpha1';

const scale = { specReplicas: () => 1, setSpecReplicas: () => undefined, statusReplicas: () => 1, selector: () => '' };

// A CRD's definition as src/kinds/crd builds it: complete columns, its own apiVersion/kind descriptions.
const FOO: ResourceDefinition = {
  group: G,
  version: V,
  kind: 'Foo',
  listKind: 'FooList',
  plural: 'foos',
  singular: 'foo',
  shortNames: [],
  categories: [],
  namespaced: true,
  description: 'Foo is a sample.',
  printerColumns: [],
  columnsComplete: true,
  customResource: true,
  selectableFields: [{ field: 'spec.deploymentName', value: () => undefined }],
  subresources: { status: true, scale },
  schema: {
    type: 'object',
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion defines\nthe versioned schema.' },
      kind: { type: 'string', description: 'Kind is\na string.' },
      spec: {
        type: 'object',
        properties: {
          deploymentName: { type: 'string' },
          size: { type: 'string', 'x-kubernetes-int-or-string': true },
          port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } as never,
          replicas: { type: 'integer', default: 1 },
          note: { type: 'string', nullable: true },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'string' } } },
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        },
        required: ['deploymentName', 'note'],
      },
    },
  },
};

// A code-defined kind served beside it in another group: the generic installer's shape.
const BAR: ResourceDefinition = {
  ...FOO,
  group: 'bars.example.com',
  version: 'v1',
  kind: 'Bar',
  listKind: 'BarList',
  plural: 'bars',
  singular: 'bar',
  columnsComplete: undefined,
  customResource: undefined,
  selectableFields: undefined,
};

let app: FastifyInstance;
let doc: OpenAPIV3Document;

beforeAll(async () => {
  app = Fastify();
  registerDiscoveryRoutes(app, [FOO, BAR]);
  await app.ready();
  doc = (await app.inject({ method: 'GET', url: `/openapi/v3/apis/${G}/${V}` })).json();
});

afterAll(async () => {
  await app.close();
});

const KUBE_CRD_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];
const INSTALLER_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

describe('discovery of a CRD-defined kind', () => {
  it('lists its verbs in the apiextensions order and its status before its scale (APIResourceList)', async () => {
    const foo: APIResourceList = (await app.inject({ method: 'GET', url: `/apis/${G}/${V}` })).json();
    expect(foo.resources.map((r) => [r.name, r.verbs])).toEqual([
      ['foos', KUBE_CRD_VERBS],
      ['foos/status', ['get', 'patch', 'update']],
      ['foos/scale', ['get', 'patch', 'update']],
    ]);
    const bar: APIResourceList = (await app.inject({ method: 'GET', url: '/apis/bars.example.com/v1' })).json();
    expect(bar.resources.map((r) => [r.name, r.verbs])).toEqual([
      ['bars', INSTALLER_VERBS],
      ['bars/scale', ['get', 'patch', 'update']],
      ['bars/status', ['get', 'patch', 'update']],
    ]);
  });

  it('does the same in aggregated discovery v2', async () => {
    const res = await app.inject({ method: 'GET', url: '/apis', headers: { accept: DISCOVERY_V2_CONTENT_TYPE } });
    const list: APIGroupDiscoveryList = res.json();
    const resource = (g: string) => list.items.find((i) => i.metadata.name === g)!.versions[0]!.resources[0]!;
    expect(resource(G).verbs).toEqual(KUBE_CRD_VERBS);
    expect(resource(G).subresources!.map((s) => s.subresource)).toEqual(['status', 'scale']);
    expect(resource('bars.example.com').verbs).toEqual(INSTALLER_VERBS);
    expect(resource('bars.example.com').subresources!.map((s) => s.subresource)).toEqual(['scale', 'status']);
  });
});

type Param = { name: string; in: string; description: string; required?: boolean };
type Op = {
  tags: string[];
  description: string;
  operationId: string;
  parameters?: Param[];
  requestBody?: { content: Record<string, unknown>; required?: boolean };
  responses: Record<string, { content?: Record<string, unknown> }>;
  'x-kubernetes-group-version-kind': unknown;
};
type Item = Record<string, Op> & { parameters: Param[] };

const ALL = `/apis/${G}/${V}/foos`;
const COLLECTION = `/apis/${G}/${V}/namespaces/{namespace}/foos`;
const ITEM = `${COLLECTION}/{name}`;
const path = (p: string) => doc.paths[p] as unknown as Item;
const names = (ps: Param[] | undefined) => (ps ?? []).map((p) => p.name);
const LIST = [
  'allowWatchBookmarks',
  'continue',
  'fieldSelector',
  'labelSelector',
  'limit',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'shardSelector',
  'timeoutSeconds',
  'watch',
];

describe('OpenAPI v3 paths of a CRD-defined kind', () => {
  it('tags and names operations as GetOperationIDAndTags does (a group without its .k8s.io)', () => {
    expect(path(ALL).get!.tags).toEqual(['samplecontroller_v1alpha1']);
    expect(path(ALL).get!.operationId).toBe('listSamplecontrollerV1alpha1FooForAllNamespaces');
    expect(path(COLLECTION).delete!.operationId).toBe('deleteSamplecontrollerV1alpha1CollectionNamespacedFoo');
    expect(path(`${ITEM}/scale`).patch!.operationId).toBe('patchSamplecontrollerV1alpha1NamespacedFooScale');
  });

  it('puts the parameters every operation of a path shares at the path, sorted by name', () => {
    expect(names(path(ALL).parameters)).toEqual([...LIST.slice(0, 5), 'pretty', ...LIST.slice(5)]);
    expect(path(ALL).get!.parameters).toBeUndefined();
    expect(names(path(COLLECTION).parameters)).toEqual(['namespace', 'pretty']);
    expect(names(path(ITEM).parameters)).toEqual(['name', 'namespace', 'pretty']);
    expect(path(ITEM).parameters[0]).toMatchObject({ in: 'path', required: true, description: 'name of the Foo' });
  });

  it('takes the option parameters of kube`s CRD routes', () => {
    expect(names(path(COLLECTION).get!.parameters)).toEqual(LIST);
    expect(names(path(COLLECTION).delete!.parameters)).toEqual(LIST);
    expect(names(path(ITEM).get!.parameters)).toEqual(['resourceVersion']);
    expect(names(path(ITEM).patch!.parameters)).toEqual(['dryRun', 'fieldManager', 'fieldValidation', 'force']);
    expect(names(path(ITEM).delete!.parameters)).toEqual([
      'dryRun',
      'gracePeriodSeconds',
      'ignoreStoreReadErrorWithClusterBreakingPotential',
      'orphanDependents',
      'propagationPolicy',
    ]);
    const limit = path(COLLECTION).get!.parameters!.find((p) => p.name === 'limit')!;
    expect(limit.description).toMatch(
      /^limit is a maximum number .* If objects are updated during a chunked list the version of the object that was present at the time the first list result was calculated is returned\.$/s,
    );
    const fieldManager = path(ITEM).patch!.parameters!.find((p) => p.name === 'fieldManager')!;
    expect(fieldManager.description).toMatch(/This field is required for apply requests \(application\/apply-patch\) but optional for non-apply patch types/);
  });

  it('describes lists as kube does, answers JSON and YAML, and takes no body on deletecollection', () => {
    expect(path(ALL).get!.description).toBe('list objects of kind Foo');
    expect(Object.keys(path(ALL).get!.responses['200']!.content!)).toEqual(['application/json', 'application/yaml']);
    expect(Object.keys(path(COLLECTION).post!.requestBody!.content)).toEqual(['application/json', 'application/yaml']);
    expect(path(COLLECTION).delete!.requestBody).toBeUndefined();
    expect(path(ITEM).delete!.requestBody).toEqual({
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions' } },
        'application/yaml': { schema: { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions' } },
      },
    });
    expect(Object.keys(path(ITEM).patch!.responses)).toEqual(['200', '401']);
    expect(Object.keys(path(COLLECTION).post!.responses)).toEqual(['200', '201', '202', '401']);
    expect(path(`${ITEM}/scale`).get!['x-kubernetes-group-version-kind']).toEqual({ group: G, version: V, kind: 'Foo' });
  });
});

describe('OpenAPI v3 schema of a CRD-defined kind', () => {
  const foo = () => doc.components.schemas['io.k8s.samplecontroller.v1alpha1.Foo']!;
  const spec = () => foo().properties!.spec!.properties! as Record<string, OpenAPISchema & { anyOf?: unknown }>;

  it('takes TypeMeta`s one-line apiVersion and kind, and metadata without a default', () => {
    expect(foo().properties!.apiVersion!.description).toMatch(
      /^APIVersion defines the versioned schema of this representation of an object\. Servers should convert/,
    );
    expect(foo().properties!.kind!.description).toMatch(/^Kind is a string value representing the REST resource this object represents\. Servers may infer/);
    expect(foo().properties!.metadata).toEqual({
      description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }],
    });
  });

  it('lists the selectable fields and keeps an int-or-string field`s anyOf (added where the CRD has none)', () => {
    expect(foo()['x-kubernetes-selectable-fields' as keyof OpenAPISchema]).toEqual([{ fieldPath: 'spec.deploymentName' }]);
    expect(spec().size!.anyOf).toEqual([{ type: 'integer' }, { type: 'string' }]);
    expect(spec().port!.anyOf).toEqual([{ type: 'integer' }, { type: 'string' }]);
    expect(spec().port!.allOf).toBeUndefined();
  });

  it('gives an embedded resource apiVersion, kind and metadata, kind and apiVersion required', () => {
    expect(spec().template).toEqual({
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
      required: ['kind', 'apiVersion'],
      properties: {
        apiVersion: {
          type: 'string',
          description:
            'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
        },
        kind: {
          type: 'string',
          description:
            'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        },
        metadata: {
          description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
          allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }],
        },
      },
    });
  });
});

describe('OpenAPI of a CRD-defined kind: its list, and Swagger 2.0', () => {
  it('publishes the list with ListMeta described (no default) and the selectable fields', () => {
    const list = doc.components.schemas['io.k8s.samplecontroller.v1alpha1.FooList']!;
    expect(list.properties!.metadata).toEqual({
      description: 'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
      allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta' }],
    });
    expect(list['x-kubernetes-selectable-fields' as keyof OpenAPISchema]).toEqual([{ fieldPath: 'spec.deploymentName' }]);
  });

  it('converts the schema as ToStructuralOpenAPIV2 does, without defaults, and keeps kube`s CRD routes', async () => {
    const v2: SwaggerDocument = (await app.inject({ method: 'GET', url: '/openapi/v2' })).json();
    const foo = v2.definitions['io.k8s.samplecontroller.v1alpha1.Foo']!;
    const spec = foo.properties!.spec!;
    // An int-or-string field keeps its declared type; its anyOf goes.
    expect(spec.properties!.size).toEqual({ type: 'string', 'x-kubernetes-int-or-string': true });
    expect(spec.properties!.port).toEqual({ 'x-kubernetes-int-or-string': true });
    expect(spec.properties!.replicas).toEqual({ type: 'integer' });
    expect(spec.properties!.note).toEqual({});
    expect(spec.properties!.extra).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    // Where unknown fields are kept, v2 adds nothing to an embedded resource (kubectl would refuse the unknown ones).
    expect(spec.properties!.template).toEqual({ 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true });
    expect(spec.required).toEqual(['deploymentName']);
    expect(foo.properties!.metadata).toEqual({
      description: "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
      $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    });
    const list = v2.paths[COLLECTION] as Record<string, { consumes: string[]; produces: string[]; parameters?: { name: string }[] }>;
    expect(list.get!.produces).toEqual(['application/json', 'application/yaml']);
    expect(list.delete!.parameters!.map((p) => p.name)).toEqual(LIST);
    expect((v2.paths[ITEM] as Record<string, { consumes: string[] }>).patch!.consumes).toEqual([
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/apply-patch+yaml',
    ]);
  });
});

describe('the OpenAPI v3 document of a group/version of CRDs', () => {
  it('is the document kube`s CRD builder writes: its info, no security, metav1 as kube publishes it beside a CRD', () => {
    expect(doc.info).toEqual({ title: 'Kubernetes CRD Swagger', version: 'v0.1.0' });
    expect(doc.security).toBeUndefined();
    expect(doc.components.securitySchemes).toBeUndefined();
    const objectMeta = doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']!;
    expect(objectMeta.properties!.creationTimestamp!.allOf).toEqual([{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time' }]);
    expect(doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.Time']).toMatchObject({ type: 'string', format: 'date-time' });
    expect(doc.components.schemas['io.k8s.api.autoscaling.v1.ScaleSpec']!.properties!.replicas!.default).toBe(0);
  });

  it('leaves a code-defined kind`s document as the generic installer`s', async () => {
    const bar: OpenAPIV3Document = (await app.inject({ method: 'GET', url: '/openapi/v3/apis/bars.example.com/v1' })).json();
    expect(bar.info.title).toBe('website-apiserver');
    expect(bar.security).toEqual([{ BearerToken: [] }]);
    expect(bar.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.Time']).toBeUndefined();
    const list = (bar.paths['/apis/bars.example.com/v1/namespaces/{namespace}/bars'] as Record<string, { description: string }>).get!;
    expect(list.description).toBe('list or watch objects of kind Bar');
  });
});
