/**
 * @module kinds/crd/kind
 * crdKind: a CustomResourceDefinition (validated and defaulted, validation.ts) as a kind of this server, served by
 * the same generic machinery as the kinds written in code. Each served version becomes a ResourceDefinition with the
 * version's structural schema, CEL rules, printer columns, selectable fields and subresources; versions convert as a
 * CRD's `conversion: None` does (only apiVersion changes); nothing runs a controller.
 */
import { compileCelRules } from '../../admission/cel/index.js';
import type { FieldError } from '../../apis/meta/field-path.js';
import { compareKubeVersions } from '../../discovery/discovery.js';
import type { JSONSchema } from '../../apis/meta/json-schema.js';
import type { KubeObject } from '../../apis/meta/types.js';
import { printerColumnsOf, selectableFieldValue } from '../../registry/crd-columns.js';
import type { Kind } from '../../registry/kind-controller.js';
import { getAt, setAt } from '../../registry/object-paths.js';
import type { ConvertedVersion, ResourceDefinition, ScaleMapping, VersionConversion } from '../../registry/resource.js';
import { scaleValidation } from './scale-validation.js';
import type { CrdScale, CrdVersion, CustomResourceDefinition } from './types.js';

/** crdKind builds the kind a CRD defines: its storage version and its other served versions. */
export function crdKind(crd: CustomResourceDefinition): Kind {
  const versions = crd.spec.versions;
  const storage = versions.find((v) => v.storage);
  if (!storage) throw new Error(`${crd.metadata.name}: no storage version`);
  // The machinery serves every version from the storage version's objects, so that one must be served. kube
  // allows an unserved storage version (objects reachable only through the others); this server does not yet.
  if (!storage.served) throw new Error(`${crd.metadata.name}: storage version ${storage.name} is not served; this server needs the storage version served`);
  const storageApiVersion = `${crd.spec.group}/${storage.name}`;
  const converted: ConvertedVersion<KubeObject, KubeObject>[] = versions
    .filter((v) => v.served && !v.storage)
    .map((v) => ({ definition: versionDefinition(crd, v), conversion: noneConversion(`${crd.spec.group}/${v.name}`, storageApiVersion) }));
  return { storage: versionDefinition(crd, storage), converted };
}

// noneConversion is `conversion: strategy: None`: the object is the same in every version but for its apiVersion,
// and so are managedFields paths.
function noneConversion(apiVersion: string, storageApiVersion: string): VersionConversion<KubeObject, KubeObject> {
  return {
    toStorage: (o) => ({ ...o, apiVersion: storageApiVersion }),
    fromStorage: (o) => ({ ...o, apiVersion }),
    fieldToStorage: (p) => [...p],
    fieldFromStorage: (p) => [...p],
  };
}

/** versionDefinition is one served version of the CRD as the machinery serves it. */
function versionDefinition(crd: CustomResourceDefinition, v: CrdVersion): ResourceDefinition {
  const { names } = crd.spec;
  const schema = objectSchema(v.schema?.openAPIV3Schema);
  const at = `spec.versions[${crd.spec.versions.indexOf(v)}].schema.openAPIV3Schema`;
  const cel = compileCelRules(schema, at);
  // validation.ts has refused a CRD whose rules do not compile; this is a second guard, not the message a user sees.
  if (cel.errors.length) throw new Error(`${crd.metadata.name}: ${cel.errors.map((e: FieldError) => e.message).join('; ')}`);
  const rules = cel.rules;
  const def: ResourceDefinition = {
    group: crd.spec.group,
    version: v.name,
    kind: names.kind,
    listKind: names.listKind ?? `${names.kind}List`,
    plural: names.plural,
    singular: names.singular ?? names.kind.toLowerCase(),
    shortNames: [...(names.shortNames ?? [])],
    categories: [...(names.categories ?? [])],
    namespaced: crd.spec.scope === 'Namespaced',
    schema,
    description: schema.description ?? '',
    printerColumns: printerColumnsOf(v.additionalPrinterColumns ?? []),
    columnsComplete: true,
    customResource: true,
    subresources: {
      status: v.subresources?.status !== undefined,
      ...(v.subresources?.scale ? { scale: scaleMapping(v.subresources.scale) } : {}),
    },
    ...(v.subresources?.scale ? { validateScalePaths: scaleValidation(v.subresources.scale) } : {}),
    selectableFields: (v.selectableFields ?? []).map((f) => ({ field: f.jsonPath.slice(1), value: selectableFieldValue(f.jsonPath) })),
    ...(v.deprecated ? { deprecationWarning: v.deprecationWarning ?? defaultDeprecationWarning(crd, v.name) } : {}),
  };
  if (rules.ruleCount > 0) {
    def.validateRules = (obj: KubeObject, old: KubeObject | undefined, warn: (message: string) => void): FieldError[] => {
      const r = rules.validate(obj, old);
      for (const w of r.warnings) warn(w);
      return r.errors;
    };
  }
  return def;
}

/**
 * objectSchema is the version's schema with what kube's structural schema always has at the root: apiVersion, kind
 * and metadata, which are never pruned (a CRD may omit them, or declare metadata with only name constraints).
 */
function objectSchema(s: JSONSchema | undefined): JSONSchema {
  const base: JSONSchema = s ? structuredClone(s) : { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const props = { ...(base.properties ?? {}) };
  props['apiVersion'] ??= { type: 'string' };
  props['kind'] ??= { type: 'string' };
  props['metadata'] ??= { type: 'object' };
  return { ...base, type: 'object', properties: props };
}

// A scale path is a simple JSON path (`.spec.replicas`), validation.ts made sure of it.
const segments = (p: string) => p.split('.').slice(1);

/** scaleMapping maps autoscaling/v1 Scale onto the CRD's paths as kube's scale subresource does. */
function scaleMapping(s: CrdScale): ScaleMapping<KubeObject> {
  const spec = segments(s.specReplicasPath);
  const status = segments(s.statusReplicasPath);
  const selector = s.labelSelectorPath ? segments(s.labelSelectorPath) : undefined;
  const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : 0);
  return {
    specReplicas: (o) => int(getAt(o, spec)),
    setSpecReplicas: (o, n) => setAt(o as unknown as Record<string, unknown>, spec, n),
    statusReplicas: (o) => int(getAt(o, status)),
    selector: (o) => {
      const v = selector ? getAt(o, selector) : undefined;
      return typeof v === 'string' ? v : '';
    },
  };
}

/**
 * defaultDeprecationWarning is kube's warning for a deprecated version without its own: the group, version and kind,
 * and the highest served, not deprecated version that ranks above it (customresource_handler.go).
 */
function defaultDeprecationWarning(crd: CustomResourceDefinition, version: string): string {
  const { group, names } = crd.spec;
  const msg = `${group}/${version} ${names.kind} is deprecated`;
  const newer = crd.spec.versions
    // compareKubeVersions sorts the most preferred first: a version above this one compares before it.
    .filter((v) => v.served && !v.deprecated && compareKubeVersions(v.name, version) < 0)
    .map((v) => v.name)
    .sort(compareKubeVersions);
  return newer.length ? `${msg}; use ${group}/${newer[0]} ${names.kind}` : msg;
}
