/**
 * The layering of src/, checked by `npm test` (test/layering.test.ts runs it): a module may import from its own
 * layer and from the layers below it, never from a layer above, and no import cycle is allowed. The order is the
 * data path of README's Layout section, bottom up; tests (*.test.ts) are not checked.
 */
const LAYERS = [
  ['util', 'certs'], // small structures shared by every layer; certificates (node-forge)
  ['apis'], // metav1: types, Status errors, field paths, selectors, Go decoding and validation
  ['storage'], // the storage interface and its backends
  ['admission'], // structural schema: prune, default, validate
  ['registry'], // the generic store (the write pipeline), patches, tables, ResourceDefinition
  ['auth'], // request attributes, authentication, authorization
  ['observability'], // logging, metrics, audit
  ['endpoints'], // routes per kind, query options, negotiation, lists, watches
  ['discovery'], // discovery documents and OpenAPI
  ['server'], // fastify assembly
  ['cluster'], // the cluster connection: delegated auth configmap, reviews, namespace lifecycle, informers
  ['controllers'], // the controller machinery and the manager
  ['kinds'], // the kinds served, each with its versions and controllers
  ['manifests'], // rendering of manifests/
  ['migration'], // moving a CRD's objects between kube-apiserver and this server (the migrate command's work)
  ['cmd'], // flags, startup, subcommands
];

const folder = (names) => `^src/(${names.join('|')})/`;
const above = (i) => LAYERS.slice(i + 1).flat();

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle: split the shared part out, into the lower module or one below both.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...LAYERS.slice(0, -1).map((names, i) => ({
      name: `layer-${names.join('-')}`,
      comment: `${names.join(', ')} may not import from a higher layer (${above(i).join(', ')}, main.ts)`,
      severity: 'error',
      from: { path: folder(names) },
      to: { path: [folder(above(i)), '^src/main\\.ts$'] },
    })),
    {
      name: 'layer-cmd',
      comment: 'cmd may not import main.ts',
      severity: 'error',
      from: { path: folder(['cmd']) },
      to: { path: '^src/main\\.ts$' },
    },
    {
      name: 'known-layer',
      comment: 'every folder of src/ has a place in LAYERS (.dependency-cruiser.cjs) and the README',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: folder(LAYERS.flat()) },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
