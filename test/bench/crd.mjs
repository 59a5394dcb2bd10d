/**
 * @module bench/crd
 * The CRD baseline: a CustomResourceDefinition equivalent to our Website kind, built from the same definition
 * module (Website v1, the version the benchmark uses: schema, names, subresources), so kube-apiserver validates,
 * defaults and prunes the same fields.
 * What a CRD cannot express in code is spelled in its own terms: the git URL and branch rules become
 * `pattern`s, and printer columns become JSONPath columns (Ready splits into ready and desired replicas).
 */
import { website } from './dist.mjs';

const def = website.websiteDefinition;

/** @typedef {import('../../src/registry/resource.js').JSONSchema} JSONSchema */

// The same rules as websiteDefinition.validate, as regular expressions kube-apiserver evaluates (and one CEL rule
// below). The v1 rule a CRD cannot state (the node-port annotation reserved for v1alpha1) has no counterpart.
const GIT_URL_PATTERN = '^((https?|ssh|git)://[^\\s/]+(/\\S*)?|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:\\S+)$';
const BRANCH_PATTERN = '^$|^[^-\\s~^:?*\\[\\\\][^\\s~^:?*\\[\\\\]*$';

/**
 * websiteCrd is the CRD of our kind in `group` (ours by default). Another group gives a twin that can be served by
 * the same kube-apiserver as our APIService, which owns extensions.example.com there.
 * @returns {Record<string, unknown>} the CustomResourceDefinition object
 */
export function websiteCrd(group = def.group) {
  /** @type {JSONSchema} */
  const schema = structuredClone(def.schema);
  const props = /** @type {Record<string, JSONSchema>} */ (schema.properties);
  // A CRD's metadata schema may only constrain name and generateName; kube-apiserver owns the rest.
  props.metadata = { type: 'object' };
  const git = /** @type {Record<string, JSONSchema>} */ (props.spec?.properties?.git?.properties);
  git.repository = { ...git.repository, pattern: GIT_URL_PATTERN };
  git.branch = { ...git.branch, pattern: BRANCH_PATTERN };
  // websiteDefinition.validate refuses a node port on a ClusterIP Service: a CRD says so in CEL.
  const service = /** @type {JSONSchema} */ (props.spec?.properties?.service);
  props.spec = {
    ...props.spec,
    properties: {
      ...props.spec?.properties,
      service: {
        ...service,
        'x-kubernetes-validations': [
          { rule: "!has(self.nodePort) || self.type != 'ClusterIP'", message: 'nodePort may only be set when type is NodePort or LoadBalancer' },
        ],
      },
    },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${group}` },
    spec: {
      group,
      scope: def.namespaced ? 'Namespaced' : 'Cluster',
      names: { kind: def.kind, listKind: def.listKind, plural: def.plural, singular: def.singular, shortNames: def.shortNames, categories: def.categories },
      versions: [
        {
          name: def.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
          },
          additionalPrinterColumns: [
            { name: 'Git-Repo', type: 'string', jsonPath: '.spec.git.repository' },
            { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas' },
            { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'Type', type: 'string', jsonPath: '.spec.service.type' },
            { name: 'Port', type: 'integer', jsonPath: '.status.nodePort' },
            { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
            { name: 'Branch', type: 'string', jsonPath: '.spec.git.branch', priority: 1 },
            { name: 'Deployment', type: 'string', jsonPath: '.status.deployment', priority: 1 },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  };
}
