/**
 * @module kinds/crd/crd-decode
 * Decoding a CustomResourceDefinition document as kube-apiserver's handler and typed decoder do for
 * `apiextensions.k8s.io/v1` with fieldValidation=Warn: unknown fields are dropped (in place) and reported as
 * `unknown field "spec.names.shortnames"`; a value of the wrong JSON type makes the whole body undecodable with Go's
 * text (`json: cannot unmarshal string into Go struct field CustomResourceDefinitionVersion.spec.versions.served of
 * type bool`), which kube answers with a 400 rather than a 422.
 *
 * Facts checked against kube-apiserver 1.37: unknown fields are reported in document order with map keys as plain
 * path segments (`openAPIV3Schema.properties.spec.foo`); inside `items` and `additionalProperties` the schema is
 * decoded by a custom UnmarshalJSON that does not report unknown fields, yet wrong types there still name the path;
 * `items: 5` is silently nil; `additionalProperties: 5` fails with `boolean or JSON schema expected`.
 * Duplicate keys (`duplicate field "spec.scope"`) cannot be seen here: the document arrives already parsed.
 */

import { OBJECT_META } from '../../apis/meta/decode.js';
import { GoDecodeError, goUnmarshal } from '../../apis/meta/go-struct.js';
import type { ObjectMeta } from '../../apis/meta/types.js';

type T =
  | { k: 'string'; name?: string }
  | { k: 'bool' }
  | { k: 'int'; name: 'int64' | 'int32' }
  | { k: 'float' }
  | { k: 'raw' }
  | { k: 'slice'; name: string; elem: T }
  | { k: 'map'; name: string; elem: T }
  | { k: 'struct'; name: string; fields: Record<string, T> }
  /** JSONSchemaPropsOrBool: a bool or a schema. */
  | { k: 'orBool' }
  /** JSONSchemaPropsOrArray: a schema or a list of schemas; anything else is nil. */
  | { k: 'orArray' }
  /** JSONSchemaPropsOrStringArray: a schema or a list of property names. */
  | { k: 'orStringArray' }
  /** metav1.ObjectMeta, decoded by the shared Go-struct decoder. */
  | { k: 'objectMeta' };

const str: T = { k: 'string' };
const bool: T = { k: 'bool' };
const int64: T = { k: 'int', name: 'int64' };
const int32: T = { k: 'int', name: 'int32' };
const strings: T = { k: 'slice', name: '[]string', elem: str };

// JSONSchemaProps refers to itself; its field table is filled in below.
const PROPS_FIELDS: Record<string, T> = {};
const PROPS: T = { k: 'struct', name: 'JSONSchemaProps', fields: PROPS_FIELDS };
const VALIDATION_RULE: T = {
  k: 'struct',
  name: 'ValidationRule',
  fields: { rule: str, message: str, messageExpression: str, reason: { k: 'string', name: 'v1.FieldValueErrorReason' }, fieldPath: str, optionalOldSelf: bool },
};
Object.assign(PROPS_FIELDS, {
  id: str,
  $schema: { k: 'string', name: 'v1.JSONSchemaURL' },
  $ref: str,
  description: str,
  type: str,
  format: str,
  title: str,
  default: { k: 'raw' },
  maximum: { k: 'float' },
  exclusiveMaximum: bool,
  minimum: { k: 'float' },
  exclusiveMinimum: bool,
  maxLength: int64,
  minLength: int64,
  pattern: str,
  maxItems: int64,
  minItems: int64,
  uniqueItems: bool,
  multipleOf: { k: 'float' },
  enum: { k: 'slice', name: '[]v1.JSON', elem: { k: 'raw' } },
  maxProperties: int64,
  minProperties: int64,
  required: strings,
  items: { k: 'orArray' },
  allOf: { k: 'slice', name: '[]v1.JSONSchemaProps', elem: PROPS },
  oneOf: { k: 'slice', name: '[]v1.JSONSchemaProps', elem: PROPS },
  anyOf: { k: 'slice', name: '[]v1.JSONSchemaProps', elem: PROPS },
  not: PROPS,
  properties: { k: 'map', name: 'map[string]v1.JSONSchemaProps', elem: PROPS },
  additionalProperties: { k: 'orBool' },
  patternProperties: { k: 'map', name: 'map[string]v1.JSONSchemaProps', elem: PROPS },
  dependencies: { k: 'map', name: 'v1.JSONSchemaDependencies', elem: { k: 'orStringArray' } },
  additionalItems: { k: 'orBool' },
  definitions: { k: 'map', name: 'v1.JSONSchemaDefinitions', elem: PROPS },
  externalDocs: { k: 'struct', name: 'ExternalDocumentation', fields: { description: str, url: str } },
  example: { k: 'raw' },
  nullable: bool,
  'x-kubernetes-preserve-unknown-fields': bool,
  'x-kubernetes-embedded-resource': bool,
  'x-kubernetes-int-or-string': bool,
  'x-kubernetes-list-map-keys': strings,
  'x-kubernetes-list-type': str,
  'x-kubernetes-map-type': str,
  'x-kubernetes-validations': { k: 'slice', name: 'v1.ValidationRules', elem: VALIDATION_RULE },
} satisfies Record<string, T>);

const NAMES: T = {
  k: 'struct',
  name: 'CustomResourceDefinitionNames',
  fields: { plural: str, singular: str, shortNames: strings, kind: str, listKind: str, categories: strings },
};
const COLUMN: T = {
  k: 'struct',
  name: 'CustomResourceColumnDefinition',
  fields: { name: str, type: str, format: str, description: str, priority: int32, jsonPath: str },
};
const VERSION: T = {
  k: 'struct',
  name: 'CustomResourceDefinitionVersion',
  fields: {
    name: str,
    served: bool,
    storage: bool,
    deprecated: bool,
    deprecationWarning: str,
    schema: { k: 'struct', name: 'CustomResourceValidation', fields: { openAPIV3Schema: PROPS } },
    subresources: {
      k: 'struct',
      name: 'CustomResourceSubresources',
      fields: {
        status: { k: 'struct', name: 'CustomResourceSubresourceStatus', fields: {} },
        scale: { k: 'struct', name: 'CustomResourceSubresourceScale', fields: { specReplicasPath: str, statusReplicasPath: str, labelSelectorPath: str } },
      },
    },
    additionalPrinterColumns: { k: 'slice', name: '[]v1.CustomResourceColumnDefinition', elem: COLUMN },
    selectableFields: { k: 'slice', name: '[]v1.SelectableField', elem: { k: 'struct', name: 'SelectableField', fields: { jsonPath: str } } },
  },
};
const CONVERSION: T = {
  k: 'struct',
  name: 'CustomResourceConversion',
  fields: {
    strategy: { k: 'string', name: 'v1.ConversionStrategyType' },
    webhook: {
      k: 'struct',
      name: 'WebhookConversion',
      fields: {
        clientConfig: {
          k: 'struct',
          name: 'WebhookClientConfig',
          fields: {
            url: str,
            caBundle: { k: 'string', name: '[]uint8' },
            service: { k: 'struct', name: 'ServiceReference', fields: { namespace: str, name: str, path: str, port: int32 } },
          },
        },
        conversionReviewVersions: strings,
      },
    },
  },
};
const SPEC: T = {
  k: 'struct',
  name: 'CustomResourceDefinitionSpec',
  fields: {
    group: str,
    names: NAMES,
    scope: { k: 'string', name: 'v1.ResourceScope' },
    versions: { k: 'slice', name: '[]v1.CustomResourceDefinitionVersion', elem: VERSION },
    conversion: CONVERSION,
    preserveUnknownFields: bool,
  },
};
const CONDITION: T = {
  k: 'struct',
  name: 'CustomResourceDefinitionCondition',
  fields: {
    type: { k: 'string', name: 'v1.CustomResourceDefinitionConditionType' },
    status: { k: 'string', name: 'v1.ConditionStatus' },
    lastTransitionTime: { k: 'raw' },
    reason: str,
    message: str,
    observedGeneration: int64,
  },
};
const STATUS: T = {
  k: 'struct',
  name: 'CustomResourceDefinitionStatus',
  fields: {
    conditions: { k: 'slice', name: '[]v1.CustomResourceDefinitionCondition', elem: CONDITION },
    acceptedNames: NAMES,
    storedVersions: strings,
    observedGeneration: int64,
  },
};
const CRD: T = {
  k: 'struct',
  name: 'CustomResourceDefinition',
  fields: { apiVersion: str, kind: str, metadata: { k: 'objectMeta' }, spec: SPEC, status: STATUS },
};

/** CrdDecodeError is a body kube cannot decode: its message is kube's whole 400 Status message. */
export class CrdDecodeError extends Error {}

// summarizeData (apiserver handlers/rest.go): a JSON object's first 30 bytes, anything else in hex. The body is the
// document as compact JSON, as kubectl would send it.
function summarize(doc: unknown): string {
  const data = Buffer.from(JSON.stringify(doc) ?? '', 'utf8');
  const head = data.subarray(0, 30);
  const text = data[0] === 0x7b ? head.toString('utf8') : head.toString('hex');
  return data.length > 30 ? `${text} ...` : text;
}

const unrecognized = (doc: unknown, err: string) =>
  new CrdDecodeError(`the object provided is unrecognized (must be of type CustomResourceDefinition): ${err} (${summarize(doc)})`);

/**
 * typeMeta is what the apiserver reads first (SimpleMetaFactory.Interpret, then the scheme lookup): the body's
 * apiVersion and kind, defaulted from the URL when absent. Returns the kind and version decode errors are worded with.
 */
function typeMeta(doc: unknown): { kind: string; version: string } {
  const TYPE_META = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';
  if (!isObject(doc))
    throw unrecognized(doc, `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKind(doc)} into Go value of type ${TYPE_META}`);
  for (const k of Object.keys(doc)) {
    if ((k === 'apiVersion' || k === 'kind') && doc[k] !== null && typeof doc[k] !== 'string') {
      throw unrecognized(
        doc,
        `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonKind(doc[k])} into Go struct field .${k} of type string`,
      );
    }
  }
  const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
  const kind = typeof doc.kind === 'string' && doc.kind ? doc.kind : 'CustomResourceDefinition';
  if (apiVersion !== '/' && apiVersion.split('/').length > 2) throw new CrdDecodeError(`unexpected GroupVersion string: ${apiVersion}`);
  const [group, version] = apiVersion.includes('/') ? (apiVersion.split('/') as [string, string]) : ['', apiVersion];
  if (!apiVersion) return { kind, version: 'v1' };
  if (group === 'apiextensions.k8s.io' && version === 'v1beta1') {
    throw new CrdDecodeError(`the API version in the data (${apiVersion}) does not match the expected API version (apiextensions.k8s.io/v1)`);
  }
  if (group !== 'apiextensions.k8s.io' || version !== 'v1' || kind !== 'CustomResourceDefinition') {
    throw new CrdDecodeError(
      `${kind} in version "${version}" cannot be handled as a CustomResourceDefinition: no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/runtime/scheme.go:111"`,
    );
  }
  return { kind, version };
}

class Fatal extends Error {}

interface Walk {
  unknown: string[];
  meta?: ObjectMeta;
  /** The first type error (Go reports the first and decodes on). */
  typeError?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function jsonKind(v: unknown): string {
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  return Array.isArray(v) ? 'array' : 'object';
}

// A null element of a list or map decodes to the element type's zero value (kept in place, as kube stores it).
function zeroOf(t: T): unknown {
  switch (t.k) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'int':
    case 'float':
      return 0;
    case 'struct':
      return {};
    default:
      return null;
  }
}

function goTypeName(t: T): string {
  switch (t.k) {
    case 'string':
      return t.name ?? 'string';
    case 'bool':
      return 'bool';
    case 'int':
      return t.name;
    case 'float':
      return 'float64';
    case 'slice':
    case 'map':
      return t.name;
    case 'struct':
      return `v1.${t.name}`;
    case 'objectMeta':
      return 'v1.ObjectMeta';
    default:
      return 'interface {}';
  }
}

/**
 * walk checks `v` against `t`, dropping unknown struct members in place. `path` is the unknown-field path (with [i]),
 * `stack` the JSON names encoding/json's error context prints (no indexes or map keys), `struct` the innermost struct.
 */
function walk(w: Walk, v: unknown, t: T, path: string, stack: string[], struct: string, reportUnknown: boolean): void {
  if (v === null || v === undefined) return;
  const typeError = (value: string) => {
    w.typeError ??= `json: cannot unmarshal ${value} into Go struct field ${struct}.${stack.join('.')} of type ${goTypeName(t)}`;
  };
  switch (t.k) {
    case 'raw':
      return;
    case 'string':
      if (typeof v !== 'string') typeError(jsonKind(v));
      return;
    case 'bool':
      if (typeof v !== 'boolean') typeError(jsonKind(v));
      return;
    case 'float':
      if (typeof v !== 'number') typeError(jsonKind(v));
      return;
    case 'int':
      if (typeof v !== 'number') typeError(jsonKind(v));
      else if (!Number.isInteger(v) || (t.name === 'int32' && (v > 2 ** 31 - 1 || v < -(2 ** 31)))) typeError(`number ${v}`);
      return;
    case 'slice':
      if (!Array.isArray(v)) return typeError(jsonKind(v));
      v.forEach((e, i) => {
        if (e === null) v[i] = zeroOf(t.elem);
        walk(w, e, t.elem, `${path}[${i}]`, stack, struct, reportUnknown);
      });
      return;
    case 'map':
      if (!isObject(v)) return typeError(jsonKind(v));
      for (const [key, e] of Object.entries(v)) {
        if (e === null) v[key] = zeroOf(t.elem);
        walk(w, e, t.elem, `${path}.${key}`, stack, struct, reportUnknown);
      }
      return;
    case 'struct':
      if (!isObject(v)) return typeError(jsonKind(v));
      for (const key of Object.keys(v)) {
        const ft = t.fields[key];
        const sub = path ? `${path}.${key}` : key;
        if (!ft) {
          if (reportUnknown) w.unknown.push(sub);
          delete v[key];
          continue;
        }
        // null leaves a Go field at its zero value (nil): the member is dropped, except raw JSON (default: null).
        if (v[key] === null && ft.k !== 'raw' && ft.k !== 'objectMeta') {
          delete v[key];
          continue;
        }
        walk(w, v[key], ft, sub, [...stack, key], t.name, reportUnknown);
      }
      return;
    case 'orBool':
      // JSONSchemaPropsOrBool.UnmarshalJSON: a schema (decoded without unknown-field reporting) or a bool.
      if (typeof v === 'boolean') return;
      if (!isObject(v)) throw new Fatal('boolean or JSON schema expected');
      return custom(v, stack, struct);
    case 'orArray':
      // JSONSchemaPropsOrArray.UnmarshalJSON: a schema or a list of schemas; any other value leaves it nil.
      if (isObject(v)) return custom(v, stack, struct);
      if (Array.isArray(v))
        v.forEach((e) => {
          custom(e, stack, struct);
        });
      return;
    case 'orStringArray':
      if (isObject(v)) return custom(v, stack, struct);
      if (Array.isArray(v)) return;
      throw new Fatal('JSON schema or string array expected');
    case 'objectMeta':
      if (!isObject(v)) return typeError(jsonKind(v));
      return objectMeta(w, v, path);
  }
}

// ObjectMeta is decoded inline, in document order: its type errors take their turn with the others (worded with the
// path from the CRD, `ObjectMeta.metadata.labels`); a bad time ends decoding (metav1.Time's own UnmarshalJSON).
function objectMeta(w: Walk, v: Record<string, unknown>, path: string): void {
  try {
    const r = goUnmarshal(v, OBJECT_META, { sortKeys: false });
    w.meta = r.value as ObjectMeta;
    w.unknown.push(...r.unknownFields.map((f) => `${path}.${f}`));
  } catch (e) {
    if (!(e instanceof GoDecodeError)) throw e;
    const typeErr = /^(json: cannot unmarshal .* into Go struct field ObjectMeta\.)(.*)$/.exec(e.message);
    if (!typeErr) throw new Fatal(e.message);
    w.typeError ??= `${typeErr[1]}${path}.${typeErr[2]}`;
  }
}

// A schema under a custom UnmarshalJSON is decoded by a json.Unmarshal of its own: unknown fields go unreported,
// and its first type error is returned by UnmarshalJSON, which ends the whole decode at once.
function custom(v: unknown, stack: string[], struct: string): void {
  const inner: Walk = { unknown: [] };
  walk(inner, v, PROPS, '', stack, struct, false);
  if (inner.typeError) throw new Fatal(inner.typeError);
}

/**
 * decodeCrd checks a parsed document as the v1 CustomResourceDefinition decoder does: drops unknown fields in place
 * and returns their paths, or throws CrdDecodeError with Go's text when a value has the wrong type.
 * `meta` is the decoded ObjectMeta.
 */
export function decodeCrd(doc: unknown): { unknownFields: string[]; meta: ObjectMeta } {
  const gvk = typeMeta(doc);
  const cannot = (err: string) => new CrdDecodeError(`${gvk.kind} in version "${gvk.version}" cannot be handled as a CustomResourceDefinition: ${err}`);
  const w: Walk = { unknown: [] };
  try {
    walk(w, doc, CRD, '', [], 'CustomResourceDefinition', true);
  } catch (e) {
    if (e instanceof Fatal) throw cannot(e.message);
    throw e;
  }
  if (w.typeError) throw cannot(w.typeError);
  return { unknownFields: w.unknown, meta: w.meta ?? {} };
}
