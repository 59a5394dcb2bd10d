/**
 * crdOf is the CustomResourceDefinition twin of one of our kind definitions: the same group (or `group`), names,
 * scope, structural schema (with its list and map types), and status subresource, so kube-apiserver validates,
 * defaults, prunes and merges (server-side apply) the same fields. A CRD's metadata schema may only constrain name
 * and generateName, so metadata becomes a plain object (kube-apiserver owns the rest). Printer columns are left
 * out: ours are computed in code. Website has its own, fuller twin (test/bench/crd.mjs websiteCrd).
 */
import type { JSONSchema } from '../../src/apis/meta/json-schema.js';
import type { ResourceDefinition } from '../../src/registry/resource.js';

export function crdOf(def: ResourceDefinition, group: string = def.group): Record<string, unknown> {
  const schema = structuredClone(def.schema) as JSONSchema;
  schema.properties = { ...schema.properties, metadata: { type: 'object' } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${group}` },
    spec: {
      group,
      scope: def.namespaced ? 'Namespaced' : 'Cluster',
      names: {
        kind: def.kind,
        listKind: def.listKind,
        plural: def.plural,
        singular: def.singular,
        ...(def.shortNames.length ? { shortNames: [...def.shortNames] } : {}),
        ...(def.categories.length ? { categories: [...def.categories] } : {}),
      },
      versions: [
        {
          name: def.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          ...(def.subresources.status ? { subresources: { status: {} } } : {}),
        },
      ],
    },
  };
}
