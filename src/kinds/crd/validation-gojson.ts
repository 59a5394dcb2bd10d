/**
 * @module kinds/crd/validation-gojson
 * How kube prints a CRD's values in its field errors. Validation runs on the *internal* apiextensions types, which
 * have no json tags, and field.Invalid prints a non-scalar value with json.Marshal: so `spec.versions: Invalid value:
 * [{"Name":"v1","Served":true,...}]` uses Go field names, in struct order, every field present (nil as null).
 * These renderers take the v1 document form (what the file holds) and print the internal struct it converts to.
 */
import { goMarshal, goString } from '../../apis/meta/go-json.js';

type J = Record<string, unknown>;
const isObject = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

// Go prints nil pointers, slices and maps as null; a present value (even empty) as itself.
const str = (v: unknown) => goString(typeof v === 'string' ? v : '');
const ptrStr = (v: unknown) => (typeof v === 'string' ? goString(v) : 'null');
const bool = (v: unknown) => (v === true ? 'true' : 'false');
const ptrBool = (v: unknown) => (typeof v === 'boolean' ? String(v) : 'null');
const num = (v: unknown) => (typeof v === 'number' ? goMarshal(v) : 'null');
const int = (v: unknown) => (typeof v === 'number' ? goMarshal(v) : '0');
const json = (v: unknown) => (v === undefined || v === null ? 'null' : goMarshal(v));
const list = (v: unknown, each: (e: unknown) => string) => (Array.isArray(v) ? `[${v.map(each).join(',')}]` : 'null');
const map = (v: unknown, each: (e: unknown) => string) =>
  isObject(v)
    ? `{${Object.keys(v)
        .sort()
        .map((k) => `${goString(k)}:${each(v[k])}`)
        .join(',')}}`
    : 'null';
const struct = (fields: [string, string][]) => `{${fields.map(([k, v]) => `"${k}":${v}`).join(',')}}`;

/** propsOrBool renders JSONSchemaPropsOrBool: v1 `true`/`false` or a schema (a schema means Allows: true). */
function propsOrBool(v: unknown): string {
  if (typeof v === 'boolean')
    return struct([
      ['Allows', bool(v)],
      ['Schema', 'null'],
    ]);
  if (isObject(v))
    return struct([
      ['Allows', 'true'],
      ['Schema', renderSchema(v)],
    ]);
  return 'null';
}

// An items value that is neither a schema nor a list still allocates the struct (both fields nil); null does not.
function propsOrArray(v: unknown): string {
  if (isObject(v))
    return struct([
      ['Schema', renderSchema(v)],
      ['JSONSchemas', 'null'],
    ]);
  if (Array.isArray(v))
    return struct([
      ['Schema', 'null'],
      ['JSONSchemas', list(v, renderSchema)],
    ]);
  if (v === undefined || v === null) return 'null';
  return struct([
    ['Schema', 'null'],
    ['JSONSchemas', 'null'],
  ]);
}

function propsOrStringArray(v: unknown): string {
  if (isObject(v))
    return struct([
      ['Schema', renderSchema(v)],
      ['Property', 'null'],
    ]);
  return struct([
    ['Schema', 'null'],
    ['Property', list(v, str)],
  ]);
}

function validationRule(v: unknown): string {
  const r = isObject(v) ? v : {};
  return struct([
    ['Rule', str(r.rule)],
    ['Message', str(r.message)],
    ['MessageExpression', str(r.messageExpression)],
    ['Reason', ptrStr(r.reason)],
    ['FieldPath', str(r.fieldPath)],
    ['OptionalOldSelf', ptrBool(r.optionalOldSelf)],
  ]);
}

/** renderSchema prints a v1 schema as the internal apiextensions.JSONSchemaProps json.Marshal output. */
export function renderSchema(v: unknown): string {
  if (!isObject(v)) return 'null';
  const s = v;
  const ext = s.externalDocs;
  return struct([
    ['ID', str(s.id)],
    ['Schema', str(s.$schema)],
    ['Ref', ptrStr(s.$ref)],
    ['Description', str(s.description)],
    ['Type', str(s.type)],
    ['Nullable', bool(s.nullable)],
    ['Format', str(s.format)],
    ['Title', str(s.title)],
    ['Default', json(s.default)],
    ['Maximum', num(s.maximum)],
    ['ExclusiveMaximum', bool(s.exclusiveMaximum)],
    ['Minimum', num(s.minimum)],
    ['ExclusiveMinimum', bool(s.exclusiveMinimum)],
    ['MaxLength', num(s.maxLength)],
    ['MinLength', num(s.minLength)],
    ['Pattern', str(s.pattern)],
    ['MaxItems', num(s.maxItems)],
    ['MinItems', num(s.minItems)],
    ['UniqueItems', bool(s.uniqueItems)],
    ['MultipleOf', num(s.multipleOf)],
    ['Enum', list(s.enum, json)],
    ['MaxProperties', num(s.maxProperties)],
    ['MinProperties', num(s.minProperties)],
    ['Required', list(s.required, str)],
    ['Items', propsOrArray(s.items)],
    ['AllOf', list(s.allOf, renderSchema)],
    ['OneOf', list(s.oneOf, renderSchema)],
    ['AnyOf', list(s.anyOf, renderSchema)],
    ['Not', renderSchema(s.not)],
    ['Properties', map(s.properties, renderSchema)],
    ['AdditionalProperties', propsOrBool(s.additionalProperties)],
    ['PatternProperties', map(s.patternProperties, renderSchema)],
    ['Dependencies', map(s.dependencies, propsOrStringArray)],
    ['AdditionalItems', propsOrBool(s.additionalItems)],
    ['Definitions', map(s.definitions, renderSchema)],
    [
      'ExternalDocs',
      isObject(ext)
        ? struct([
            ['Description', str(ext.description)],
            ['URL', str(ext.url)],
          ])
        : 'null',
    ],
    ['Example', json(s.example)],
    ['XPreserveUnknownFields', ptrBool(s['x-kubernetes-preserve-unknown-fields'])],
    ['XEmbeddedResource', bool(s['x-kubernetes-embedded-resource'])],
    ['XIntOrString', bool(s['x-kubernetes-int-or-string'])],
    ['XListMapKeys', list(s['x-kubernetes-list-map-keys'], str)],
    ['XListType', ptrStr(s['x-kubernetes-list-type'])],
    ['XMapType', ptrStr(s['x-kubernetes-map-type'])],
    ['XValidations', list(s['x-kubernetes-validations'], validationRule)],
  ]);
}

/** renderItems prints a v1 `items` value as *JSONSchemaPropsOrArray. */
export const renderItems = propsOrArray;

function subresources(v: unknown): string {
  if (!isObject(v)) return 'null';
  const scale = v.scale;
  return struct([
    ['Status', isObject(v.status) ? '{}' : 'null'],
    [
      'Scale',
      isObject(scale)
        ? struct([
            ['SpecReplicasPath', str(scale.specReplicasPath)],
            ['StatusReplicasPath', str(scale.statusReplicasPath)],
            ['LabelSelectorPath', ptrStr(scale.labelSelectorPath)],
          ])
        : 'null',
    ],
  ]);
}

function column(v: unknown): string {
  const c = isObject(v) ? v : {};
  return struct([
    ['Name', str(c.name)],
    ['Type', str(c.type)],
    ['Format', str(c.format)],
    ['Description', str(c.description)],
    ['Priority', int(c.priority)],
    ['JSONPath', str(c.jsonPath)],
  ]);
}

/** InternalVersion is one version after the v1 → internal conversion (hoisted fields set to undefined). */
export interface InternalVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
  schema?: J;
  subresources?: J;
  additionalPrinterColumns?: unknown[];
  selectableFields?: unknown[];
}

/** renderVersions prints the internal []CustomResourceDefinitionVersion. */
export function renderVersions(versions: InternalVersion[]): string {
  return list(versions, (e) => {
    const v = e as InternalVersion;
    return struct([
      ['Name', str(v.name)],
      ['Served', bool(v.served)],
      ['Storage', bool(v.storage)],
      ['Deprecated', bool(v.deprecated)],
      ['DeprecationWarning', ptrStr(v.deprecationWarning)],
      ['Schema', isObject(v.schema) ? struct([['OpenAPIV3Schema', renderSchema(v.schema.openAPIV3Schema)]]) : 'null'],
      ['Subresources', subresources(v.subresources)],
      ['AdditionalPrinterColumns', list(v.additionalPrinterColumns, column)],
      ['SelectableFields', list(v.selectableFields, (f) => struct([['JSONPath', str(isObject(f) ? f.jsonPath : '')]]))],
    ]);
  });
}
