/**
 * @module kinds/crd/types
 * The apiextensions.k8s.io/v1 CustomResourceDefinition fields this server reads, as a file holds them after kube's
 * defaulting (validation.ts applies it in place): what a kind defined by a CRD is built from (kind.ts).
 */
import type { JSONSchema } from '../../apis/meta/json-schema.js';

/** CustomResourceColumnDefinition is one additionalPrinterColumns entry. */
export interface CrdColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** CrdScale is `subresources.scale`. */
export interface CrdScale {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

/** CrdVersion is one entry of `spec.versions`. */
export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchema };
  subresources?: { status?: Record<string, never>; scale?: CrdScale };
  additionalPrinterColumns?: CrdColumn[];
  selectableFields?: { jsonPath: string }[];
}

/** CustomResourceDefinition is the document as read (apiextensions.k8s.io/v1). */
export interface CustomResourceDefinition {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: {
      plural: string;
      singular?: string;
      kind: string;
      listKind?: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions: CrdVersion[];
    conversion?: { strategy: 'None' | 'Webhook' };
    preserveUnknownFields?: boolean;
  };
}
