/**
 * @module kinds/crd/validation
 * A CustomResourceDefinition file checked as kube-apiserver 1.37 checks a create of it: decode as
 * apiextensions.k8s.io/v1 (unknown fields become fieldValidation=Warn warnings), v1 defaulting (in place on the
 * document), conversion to the internal version (identical per-version schema/subresources/columns/selectable fields
 * move to the top level, so a one-version CRD reports `spec.validation.openAPIV3Schema...`), then
 * ValidateCustomResourceDefinition and the create warnings. Messages, paths and order are kube's, checked against a
 * real kube-apiserver (validation.test.ts holds the recorded answers, test/e2e/crd-validation.test.ts re-checks them
 * live). Where kube iterates a Go map (schema properties) we go in sorted order, one of kube's possible orders.
 *
 * Not reproduced: duplicate keys (the document arrives parsed); the warnings of an apiextensions.k8s.io/v1beta1
 * document (refused either way); ObjectMeta checks of defaults under an embedded resource's metadata; inputs that make
 * kube-apiserver 1.37.2 itself panic (`$ref`, `$schema`, `items` as a list, `x-kubernetes-preserve-unknown-fields:
 * false`), which we refuse with the schema errors kube's validation code would report.
 */
import { compileCelRules } from '../../admission/cel/index.js';
import { invalid as invalidStatus } from '../../apis/meta/errors.js';
import type { JSONSchema } from '../../apis/meta/json-schema.js';
import type { FieldError } from '../../apis/meta/field-path.js';
import { isDNS1123Subdomain, validateObjectMetaCreate } from '../../apis/meta/validation.js';
import type { ObjectMeta } from '../../apis/meta/types.js';
import { CrdDecodeError, decodeCrd } from './crd-decode.js';
import { forbidden, GoJson, invalid, notSupported, required, tooMany } from './validation-field.js';
import { renderSchema, renderVersions, type InternalVersion } from './validation-gojson.js';
import { isObject, structuralInitError, validateStructural, type Schema } from './structural.js';
import { validateDefaults } from './structural-defaults.js';
import { validateOpenAPISchema } from './validation-schema.js';
import { validateSelectableFields } from './validation-selectable.js';
import { crdWarnings } from './validation-warnings.js';
import { isDNS1035Label } from './validation-names.js';
import { validateWebhookService, validateWebhookURL } from './validation-webhook.js';

export interface CrdCheck {
  /** kube's field errors for the CRD as a create would report them (spec.scope: Unsupported value: ...). */
  errors: FieldError[];
  /** warnings kube returns on create (unknown fields with fieldValidation=Warn, unrecognized formats, ...). */
  warnings: string[];
}

/**
 * WEBHOOK_UNSUPPORTED is this server's own refusal (not kube's) of a valid CRD whose conversion strategy is Webhook:
 * it serves every version from one stored object and cannot call a conversion webhook.
 */
export const WEBHOOK_UNSUPPORTED: FieldError = forbidden(
  'spec.conversion.strategy',
  'Webhook conversion is not supported by this server (kube-apiserver would accept it); use strategy None',
);

/** DECODE_ERROR_FIELD marks the one error of a body kube cannot decode at all (a 400, not a 422). */
export const DECODE_ERROR_FIELD = '<decode>';

type J = Record<string, unknown>;
const obj = (v: unknown): J => (isObject(v) ? v : {});
const s = (v: unknown): string => (typeof v === 'string' ? v : '');
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** InternalSpec is the internal CustomResourceDefinitionSpec, its nested values still in v1 document form. */
interface InternalSpec {
  group: string;
  version: string;
  names: J;
  scope: string;
  validation?: J;
  subresources?: J;
  versions: InternalVersion[];
  /** Whether the document had a versions list (Go prints a nil slice as null, an empty one as []). */
  versionsSet: boolean;
  additionalPrinterColumns?: unknown[];
  selectableFields?: unknown[];
  conversion?: J;
  preserveUnknownFields: boolean;
}

// Fields that are pointers in the internal types: there false or "" differs from unset. Every other bool and
// string field is a plain Go value, whose zero value is the same as unset.
const POINTER_FIELDS = new Set([
  'x-kubernetes-preserve-unknown-fields',
  '$ref',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'deprecationWarning',
  'reason',
  'optionalOldSelf',
  'labelSelectorPath',
]);
// Go maps: an empty one equals nil (an empty struct, such as `status: {}`, is still a set pointer).
const MAP_FIELDS = new Set(['properties', 'patternProperties', 'definitions', 'dependencies']);
// Values kept as JSON (apiextensions.JSON): compared as they are.
const JSON_FIELDS = new Set(['default', 'example', 'enum']);

// apiequality.Semantic.DeepEqual on the internal values: an empty list or map equals nil, a Go zero value unset.
function semanticEqual(a: unknown, b: unknown): boolean {
  const norm = (v: unknown, key: string): unknown => {
    if (v === null) return undefined;
    if (JSON_FIELDS.has(key)) return v;
    if (Array.isArray(v)) return v.length === 0 ? undefined : v.map((e) => norm(e, ''));
    if (isObject(v)) {
      const out: J = {};
      for (const k of Object.keys(v).sort()) {
        const n = norm(v[k], k);
        if (n !== undefined) out[k] = n;
      }
      return MAP_FIELDS.has(key) && Object.keys(out).length === 0 ? undefined : out;
    }
    if ((v === false || v === '') && !POINTER_FIELDS.has(key)) return undefined;
    return v;
  };
  return JSON.stringify(norm(a, '')) === JSON.stringify(norm(b, ''));
}

/** setDefaults is SetDefaults_CustomResourceDefinition (apiextensions v1 defaults.go), on the document. */
function setDefaults(doc: J): void {
  const spec = obj(doc.spec);
  if (!isObject(doc.spec)) doc.spec = spec;
  const names = obj(spec.names);
  if (!isObject(spec.names)) spec.names = names;
  const kind = s(names.kind);
  if (!s(names.singular)) names.singular = kind.toLowerCase();
  if (!s(names.listKind) && kind) names.listKind = `${kind}List`;
  if (!isObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  const service = obj(obj(obj(obj(spec.conversion).webhook).clientConfig).service);
  if (isObject(obj(obj(obj(spec.conversion).webhook).clientConfig).service) && typeof service.port !== 'number') service.port = 443;
}

// Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec.
function toInternal(spec: J): InternalSpec {
  const versions: InternalVersion[] = list(spec.versions).map((v0) => {
    const v = obj(v0);
    return {
      name: s(v.name),
      served: v.served === true,
      storage: v.storage === true,
      deprecated: v.deprecated === true,
      ...(typeof v.deprecationWarning === 'string' ? { deprecationWarning: v.deprecationWarning } : {}),
      ...(isObject(v.schema) ? { schema: v.schema } : {}),
      ...(isObject(v.subresources) ? { subresources: v.subresources } : {}),
      ...(Array.isArray(v.additionalPrinterColumns) ? { additionalPrinterColumns: v.additionalPrinterColumns } : {}),
      ...(Array.isArray(v.selectableFields) ? { selectableFields: v.selectableFields } : {}),
    };
  });
  const out: InternalSpec = {
    group: s(spec.group),
    version: '',
    names: obj(spec.names),
    scope: s(spec.scope),
    versions,
    versionsSet: Array.isArray(spec.versions),
    ...(isObject(spec.conversion) ? { conversion: spec.conversion } : {}),
    // v1's plain bool becomes the internal *bool: always set, false unless true.
    preserveUnknownFields: spec.preserveUnknownFields === true,
  };
  const first = versions[0];
  if (!first) return out;
  out.version = first.name;
  for (const [from, to] of [
    ['subresources', 'subresources'],
    ['schema', 'validation'],
    ['additionalPrinterColumns', 'additionalPrinterColumns'],
    ['selectableFields', 'selectableFields'],
  ] as const) {
    const value = first[from];
    if (!versions.every((v) => v === first || semanticEqual(v[from], value))) continue;
    if (value !== undefined) (out as unknown as J)[to] = value;
    for (const v of versions) delete v[from];
  }
  return out;
}

const dns1035 = (p: string, value: string, errs: FieldError[]) => {
  const e = isDNS1035Label(value);
  if (e.length) errs.push(invalid(p, value, e.join(',')));
};

// ValidateCustomResourceDefinitionNames.
function validateNames(names: J, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const plural = s(names.plural),
    singular = s(names.singular),
    kind = s(names.kind),
    listKind = s(names.listKind);
  if (plural) dns1035(`${p}.plural`, plural, errs);
  if (singular) dns1035(`${p}.singular`, singular, errs);
  for (const [k, v] of [
    ['kind', kind],
    ['listKind', listKind],
  ] as const) {
    const e = isDNS1035Label(v.toLowerCase());
    if (v && e.length) errs.push(invalid(`${p}.${k}`, v, `may have mixed case, but should otherwise match: ${e.join(',')}`));
  }
  list(names.shortNames).forEach((n, i) => {
    dns1035(`${p}.shortNames[${i}]`, s(n), errs);
  });
  if (kind && kind === listKind) errs.push(invalid(`${p}.listKind`, listKind, 'kind and listKind may not be the same'));
  list(names.categories).forEach((n, i) => {
    dns1035(`${p}.categories[${i}]`, s(n), errs);
  });
  return errs;
}

const PRINTER_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const PRINTER_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

function simpleJsonPath(value: string, p: string): FieldError[] {
  if (!value) return [invalid(p, value, 'must not be empty')];
  if (value[0] !== '.') return [invalid(p, value, 'must be a simple json path starting with .')];
  return [];
}

// ValidateCustomResourceColumnDefinition (its path is `JSONPath`, kube's own spelling).
function validateColumn(c: J, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!s(c.name)) errs.push(required(`${p}.name`));
  const type = s(c.type);
  if (!type) errs.push(required(`${p}.type`, `must be one of ${PRINTER_TYPES.join(',')}`));
  else if (!PRINTER_TYPES.includes(type)) errs.push(invalid(`${p}.type`, type, `must be one of ${PRINTER_TYPES.join(',')}`));
  const format = s(c.format);
  if (format && !PRINTER_FORMATS.includes(format)) errs.push(invalid(`${p}.format`, format, `must be one of ${PRINTER_FORMATS.join(',')}`));
  const jp = s(c.jsonPath);
  if (!jp) errs.push(required(`${p}.JSONPath`));
  else errs.push(...simpleJsonPath(jp, `${p}.JSONPath`));
  return errs;
}

// ValidateCustomResourceDefinitionSubresources.
function validateSubresources(sub: J | undefined, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!sub || !isObject(sub.scale)) return errs;
  const scale = sub.scale;
  for (const [k, prefix, under] of [
    ['specReplicasPath', '.spec.', '.spec'],
    ['statusReplicasPath', '.status.', '.status'],
  ] as const) {
    const v = s(scale[k]);
    if (!v) errs.push(required(`${p}.scale.${k}`));
    else {
      const e = simpleJsonPath(v, `${p}.scale.${k}`);
      if (e.length) errs.push(...e);
      else if (!v.startsWith(prefix)) errs.push(invalid(`${p}.scale.${k}`, v, `should be a json path under ${under}`));
    }
  }
  const ls = s(scale.labelSelectorPath);
  if (ls) {
    const e = simpleJsonPath(ls, `${p}.scale.labelSelectorPath`);
    if (e.length) errs.push(...e);
    // kube passes the *string here: json.Marshal prints it quoted, as %q would.
    else if (!ls.startsWith('.spec.') && !ls.startsWith('.status.'))
      errs.push(invalid(`${p}.scale.labelSelectorPath`, new GoJson(JSON.stringify(ls)), 'should be a json path under either .spec or .status'));
  }
  return errs;
}

// Go struct field order of JSONSchemaProps, with what the status-subresource root check allows.
const ROOT_FIELDS: [string, string][] = [
  ['id', 'ID'],
  ['$schema', 'Schema'],
  ['$ref', 'Ref'],
  ['description', 'Description'],
  ['type', 'Type'],
  ['nullable', 'Nullable'],
  ['format', 'Format'],
  ['title', 'Title'],
  ['default', 'Default'],
  ['maximum', 'Maximum'],
  ['exclusiveMaximum', 'ExclusiveMaximum'],
  ['minimum', 'Minimum'],
  ['exclusiveMinimum', 'ExclusiveMinimum'],
  ['maxLength', 'MaxLength'],
  ['minLength', 'MinLength'],
  ['pattern', 'Pattern'],
  ['maxItems', 'MaxItems'],
  ['minItems', 'MinItems'],
  ['uniqueItems', 'UniqueItems'],
  ['multipleOf', 'MultipleOf'],
  ['enum', 'Enum'],
  ['maxProperties', 'MaxProperties'],
  ['minProperties', 'MinProperties'],
  ['required', 'Required'],
  ['items', 'Items'],
  ['allOf', 'AllOf'],
  ['oneOf', 'OneOf'],
  ['anyOf', 'AnyOf'],
  ['not', 'Not'],
  ['properties', 'Properties'],
  ['additionalProperties', 'AdditionalProperties'],
  ['patternProperties', 'PatternProperties'],
  ['dependencies', 'Dependencies'],
  ['additionalItems', 'AdditionalItems'],
  ['definitions', 'Definitions'],
  ['externalDocs', 'ExternalDocs'],
  ['example', 'Example'],
  ['x-kubernetes-preserve-unknown-fields', 'XPreserveUnknownFields'],
  ['x-kubernetes-embedded-resource', 'XEmbeddedResource'],
  ['x-kubernetes-int-or-string', 'XIntOrString'],
  ['x-kubernetes-list-map-keys', 'XListMapKeys'],
  ['x-kubernetes-list-type', 'XListType'],
  ['x-kubernetes-map-type', 'XMapType'],
  ['x-kubernetes-validations', 'XValidations'],
];
const ALLOWED_AT_ROOT = [
  'Description',
  'Type',
  'Format',
  'Title',
  'Maximum',
  'ExclusiveMaximum',
  'Minimum',
  'ExclusiveMinimum',
  'MaxLength',
  'MinLength',
  'Pattern',
  'MaxItems',
  'MinItems',
  'UniqueItems',
  'MultipleOf',
  'Required',
  'Items',
  'Properties',
  'ExternalDocs',
  'Example',
  'XPreserveUnknownFields',
  'XValidations',
];
// reflect's zero test: a Go zero value (false, "", nil). A present empty list or map is not zero.
const isZero = (v: unknown) => v === undefined || v === null || v === false || v === '';

/**
 * compileCel is the single call site for CEL rule compilation (x-kubernetes-validations): kube's CELErrors, which
 * follow the schema errors. admission/cel owns CEL. Kube compiles a node's rules only where its subtree has no
 * schema errors; we call it only when the whole schema has none.
 */
function compileCel(schema: Schema, at: string): FieldError[] {
  let errors: FieldError[];
  try {
    errors = compileCelRules(schema as JSONSchema, at).errors;
  } catch {
    // A schema shape the CEL compiler does not expect must not stop the check; kube would compile it.
    return [];
  }
  const keyed = errors.map((e) => ({ e, key: celOrderKey(e.field, at) }));
  return keyed.sort((a, b) => compareCelKeys(a.key, b.key)).map((k) => k.e);
}

// Kube reports a node's CEL errors after those of its subtrees (additionalProperties, then properties, then items),
// so the compile errors are put in that post-order. The key is the node's path as steps; `undefined` (an error not
// on a rule, such as the whole schema's cost) sorts last.
function celOrderKey(field: string, at: string): string[] | undefined {
  if (!field.startsWith(at)) return undefined;
  const rest = field.slice(at.length);
  const own = rest.indexOf('.x-kubernetes-validations[');
  if (own < 0) return undefined;
  const steps: string[] = [];
  const re = /^\.(additionalProperties|items|properties\[([^\]]*)\])/;
  let s = rest.slice(0, own);
  for (let m = re.exec(s); m; m = re.exec(s)) {
    steps.push(m[1] === 'additionalProperties' ? '0' : m[1] === 'items' ? '2' : `1${m[2]}`);
    s = s.slice(m[0].length);
  }
  return steps;
}

function compareCelKeys(a: string[] | undefined, b: string[] | undefined): number {
  if (!a || !b) return (a ? 0 : 1) - (b ? 0 : 1);
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  // One node holds the other: the deeper one (a subtree) comes first.
  return b.length - a.length;
}

// validateCustomResourceDefinitionValidation.
function validateValidation(validation: J | undefined, statusEnabled: boolean, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!validation || !isObject(validation.openAPIV3Schema)) return errs;
  const schema = validation.openAPIV3Schema;
  const at = `${p}.openAPIV3Schema`;
  if (statusEnabled) {
    for (const [k, goName] of ROOT_FIELDS) {
      if (isZero(schema[k])) continue;
      if (goName === 'Type') {
        if (schema.type !== 'object') {
          errs.push(
            invalid(`${at}.type`, s(schema.type), 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'),
          );
          break;
        }
        continue;
      }
      if (!ALLOWED_AT_ROOT.includes(goName)) {
        errs.push(
          invalid(
            at,
            new GoJson(renderSchema(schema)),
            `only [${ALLOWED_AT_ROOT.join(' ')}] fields are allowed at the root of the schema if the status subresource is enabled`,
          ),
        );
        break;
      }
    }
  }
  if (schema.nullable === true) errs.push(forbidden(`${at}.nullable`, 'nullable cannot be true at the root'));

  let initErr: FieldError[] = [];
  let structuralOk = false;
  const initError = structuralInitError(schema);
  if (initError) initErr = [invalid(at, '', initError)];
  else {
    const structural = validateStructural(schema, at);
    if (structural.length) errs.push(...structural);
    else {
      const defaults = validateDefaults(schema, at);
      if (defaults.length) errs.push(...defaults);
      else structuralOk = true;
    }
  }
  const schemaErrs = validateOpenAPISchema(schema, at);
  errs.push(...schemaErrs);
  if (structuralOk && schemaErrs.length === 0) errs.push(...compileCel(schema, at));
  if (errs.length === 0) errs.push(...initErr);
  return errs;
}

// validateDeprecationWarning.
function deprecationWarningErrors(deprecated: boolean, warning: string | undefined): string[] {
  if (!deprecated && warning !== undefined) return ['can only be set for deprecated versions'];
  if (warning === undefined) return [];
  const out: string[] = [];
  if (Buffer.byteLength(warning) > 256) out.push('must be <= 256 characters long');
  if (warning.length === 0) out.push('must not be an empty string');
  let i = 0;
  for (const ch of warning) {
    if (/\p{Cc}/u.test(ch)) {
      out.push(`must only contain printable UTF-8 characters; control character found at index ${i}`);
      break;
    }
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      out.push(`must only contain printable UTF-8 characters; non-printable character found at index ${i}`);
      break;
    }
    i += Buffer.byteLength(ch);
  }
  return out;
}

const hasStatus = (sub: J | undefined) => !!sub && isObject(sub.status);

function specSchemas(spec: InternalSpec): Schema[] {
  const out: Schema[] = [];
  if (spec.validation && isObject(spec.validation.openAPIV3Schema)) out.push(spec.validation.openAPIV3Schema);
  for (const v of spec.versions) if (v.schema && isObject(v.schema.openAPIV3Schema)) out.push(v.schema.openAPIV3Schema);
  return out;
}

function schemaHas(sc: Schema, pred: (x: Schema) => boolean): boolean {
  if (pred(sc)) return true;
  const kids: unknown[] = [];
  if (isObject(sc.items)) kids.push(sc.items);
  else kids.push(...list(sc.items));
  kids.push(...list(sc.allOf), ...list(sc.anyOf), ...list(sc.oneOf), sc.not);
  for (const k of ['properties', 'patternProperties', 'definitions']) if (isObject(sc[k])) kids.push(...Object.values(sc[k] as J));
  if (isObject(sc.additionalProperties)) kids.push(sc.additionalProperties);
  if (isObject(sc.additionalItems)) kids.push(sc.additionalItems);
  if (isObject(sc.dependencies)) kids.push(...Object.values(sc.dependencies as J));
  return kids.some((k) => isObject(k) && schemaHas(k, pred));
}

// validateCustomResourceDefinitionVersion.
function validateVersion(v: InternalVersion, p: string, statusEnabled: boolean): FieldError[] {
  const errs: FieldError[] = [];
  for (const e of deprecationWarningErrors(v.deprecated, v.deprecationWarning)) errs.push(invalid(`${p}.deprecationWarning`, v.deprecationWarning ?? '', e));
  errs.push(...validateValidation(v.schema, statusEnabled, `${p}.schema`));
  errs.push(...validateSubresources(v.subresources, `${p}.subresources`));
  list(v.additionalPrinterColumns).forEach((c, i) => {
    errs.push(...validateColumn(obj(c), `${p}.additionalPrinterColumns[${i}]`));
  });
  if (list(v.selectableFields).length > 0) {
    const schema = v.schema && isObject(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined;
    if (!schema) errs.push(invalid(`${p}.selectableFields`, '', 'may only be set when `version.schema.openAPIV3Schema` is not included'));
    else errs.push(...selectable(list(v.selectableFields), schema, `${p}.selectableFields`, `${p}.schema.openAPIV3Schema`));
  }
  return errs;
}

function selectable(fields: unknown[], schema: Schema, p: string, schemaPath: string): FieldError[] {
  const errs: FieldError[] = [];
  const initError = structuralInitError(schema);
  if (initError) errs.push(invalid(schemaPath, '', initError));
  const r = validateSelectableFields(fields, initError ? undefined : schema, p);
  errs.push(...r.errors);
  if (r.unique > 8) errs.push(tooMany(p, r.unique, 8));
  return errs;
}

function validateSpec(spec: InternalSpec, p: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!spec.group) errs.push(required(`${p}.group`));
  else {
    const e = isDNS1123Subdomain(spec.group);
    if (e.length) errs.push(invalid(`${p}.group`, spec.group, e.join(',')));
    else if (spec.group.split('.').length < 2) errs.push(invalid(`${p}.group`, spec.group, 'should be a domain with at least one dot'));
  }
  if (!spec.scope) errs.push(required(`${p}.scope`));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced') errs.push(notSupported(`${p}.scope`, spec.scope, ['Cluster', 'Namespaced']));

  const topSchema = spec.validation && isObject(spec.validation.openAPIV3Schema);
  if (!topSchema) {
    spec.versions.forEach((v, i) => {
      if (!v.schema || !isObject(v.schema.openAPIV3Schema)) errs.push(required(`${p}.versions[${i}].schema.openAPIV3Schema`));
    });
  }
  const preserve = spec.preserveUnknownFields;
  const schemas = specSchemas(spec);
  if (schemas.some((x) => schemaHas(x, (n) => n.default !== undefined && n.default !== null)) && preserve !== false) {
    errs.push(invalid(`${p}.preserveUnknownFields`, true, 'must be false in order to use defaults in the schema'));
  }

  let storageCount = 0;
  const seen = new Set<string>();
  let unique = true;
  const perVersionSubresources = spec.versions.some((v) => v.subresources);
  spec.versions.forEach((v, i) => {
    if (v.storage) storageCount++;
    if (seen.has(v.name)) unique = false;
    seen.add(v.name);
    dns1035(`${p}.versions[${i}].name`, v.name, errs);
    const sub = perVersionSubresources ? spec.versions.find((x) => x.name === v.name)?.subresources : spec.subresources;
    errs.push(...validateVersion(v, `${p}.versions[${i}]`, hasStatus(sub)));
  });
  // (The top-level/per-version exclusivity and identical-value checks cannot fail after the v1 conversion.)
  const versionsValue = () => new GoJson(spec.versionsSet ? renderVersions(spec.versions) : 'null');
  if (!unique) errs.push(invalid(`${p}.versions`, versionsValue(), 'must contain unique version names'));
  if (storageCount !== 1) errs.push(invalid(`${p}.versions`, versionsValue(), 'must have exactly one version marked as storage version'));
  if (spec.version) {
    dns1035(`${p}.version`, spec.version, errs);
  }

  for (const k of ['plural', 'singular', 'kind', 'listKind']) if (!s(spec.names[k])) errs.push(required(`${p}.names.${k}`));
  errs.push(...validateNames(spec.names, `${p}.names`));
  const anyStatus = hasStatus(spec.subresources) || spec.versions.some((v) => hasStatus(v.subresources));
  errs.push(...validateValidation(spec.validation, anyStatus, `${p}.validation`));
  errs.push(...validateSubresources(spec.subresources, `${p}.subresources`));
  list(spec.additionalPrinterColumns).forEach((c, i) => {
    errs.push(...validateColumn(obj(c), `${p}.additionalPrinterColumns[${i}]`));
  });
  if (list(spec.selectableFields).length > 0) {
    if (!spec.validation) errs.push(invalid(`${p}.selectableFields`, '', 'may only be set when validations.schema is included'));
    else errs.push(...selectable(list(spec.selectableFields), obj(spec.validation.openAPIV3Schema), `${p}.selectableFields`, `${p}.schema.openAPIV3Schema`));
  }

  const conversion = spec.conversion;
  const strategy = s(conversion?.strategy);
  if (conversion && strategy !== 'None' && preserve !== false) {
    errs.push(invalid(`${p}.conversion.strategy`, strategy, 'must be None if spec.preserveUnknownFields is true'));
  }
  if (conversion) errs.push(...validateConversion(conversion, `${p}.conversion`));
  return errs;
}

// validateCustomResourceConversion. The internal type holds webhook.clientConfig and conversionReviewVersions at
// the top of conversion.
function validateConversion(c: J, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const strategy = s(c.strategy);
  if (!strategy) errs.push(required(`${p}.strategy`));
  else if (strategy !== 'None' && strategy !== 'Webhook') errs.push(notSupported(`${p}.strategy`, strategy, ['None', 'Webhook']));
  const webhook = isObject(c.webhook) ? c.webhook : undefined;
  const cc = webhook && isObject(webhook.clientConfig) ? webhook.clientConfig : undefined;
  const reviewVersions = webhook && Array.isArray(webhook.conversionReviewVersions) ? webhook.conversionReviewVersions.map(s) : undefined;
  if (strategy === 'Webhook') {
    if (!cc) errs.push(required(`${p}.webhookClientConfig`, 'required when strategy is set to Webhook'));
    else if ((typeof cc.url === 'string') === isObject(cc.service))
      errs.push(required(`${p}.webhookClientConfig`, 'exactly one of url or service is required'));
    else if (typeof cc.url === 'string') errs.push(...validateWebhookURL(`${p}.webhookClientConfig.url`, cc.url));
    else errs.push(...validateWebhookService(`${p}.webhookClientConfig.service`, obj(cc.service)));
    if (!reviewVersions || reviewVersions.length === 0) errs.push(required(`${p}.conversionReviewVersions`));
    else {
      const seen = new Set<string>();
      reviewVersions.forEach((v, i) => {
        if (seen.has(v)) {
          errs.push(invalid(`${p}.conversionReviewVersions[${i}]`, v, 'duplicate version'));
          return;
        }
        seen.add(v);
        for (const e of isDNS1035Label(v)) errs.push(invalid(`${p}.conversionReviewVersions[${i}]`, v, e));
      });
      if (!reviewVersions.some((v) => v === 'v1' || v === 'v1beta1')) {
        errs.push(invalid(`${p}.conversionReviewVersions`, new GoJson(JSON.stringify(reviewVersions)), 'must include at least one of v1, v1beta1'));
      }
    }
  } else {
    if (cc) errs.push(forbidden(`${p}.webhookClientConfig`, 'should not be set when strategy is not set to Webhook'));
    if (reviewVersions && reviewVersions.length > 0)
      errs.push(forbidden(`${p}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

// The groups whose CRDs need the api-approved.kubernetes.io annotation (apihelpers.IsProtectedCommunityGroup).
function isProtectedGroup(group: string): boolean {
  return ['k8s.io', 'kubernetes.io'].some((g) => group === g || group.endsWith(`.${g}`));
}

// validateAPIApproval for a create (apihelpers.GetAPIApprovalState).
function validateApproval(group: string, annotations: Record<string, string> | undefined): FieldError[] {
  if (!isProtectedGroup(group)) return [];
  const key = 'api-approved.kubernetes.io';
  const at = `metadata.annotations[${key}]`;
  const value = annotations?.[key] ?? '';
  if (value === '') return [required(at, `protected groups must have approval annotation "${key}", see https://github.com/kubernetes/enhancements/pull/1111`)];
  if (value.startsWith('unapproved')) return [];
  // url.ParseRequestURI with a scheme and a host.
  try {
    const u = new URL(value);
    if (u.protocol && u.host) return [];
  } catch {
    /* falls through */
  }
  return [
    invalid(
      at,
      value,
      `protected groups must have approval annotation "${key}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
    ),
  ];
}

// PrepareForCreate resets status and stores the first storage version; ValidateCustomResourceDefinitionStoredVersions
// then wants every storage version among them (a repeated name counts once, so its second storage flag fails).
function validateStoredVersions(versions: InternalVersion[]): FieldError[] {
  const first = versions.find((v) => v.storage);
  if (!first) return [invalid('status.storedVersions', new GoJson('null'), 'must have at least one stored version')];
  const stored = new GoJson(JSON.stringify([first.name]));
  const left = new Set([first.name]);
  const errs: FieldError[] = [];
  for (const v of versions) {
    const ok = left.has(v.name);
    if (v.storage && !ok) errs.push(invalid('status.storedVersions', stored, `must have the storage version ${v.name}`));
    if (ok) left.delete(v.name);
  }
  return errs;
}

/**
 * validateCrd checks one decoded document as an `apiextensions.k8s.io/v1` CustomResourceDefinition create: decode
 * (unknown fields dropped and warned about), kube's defaulting applied IN PLACE on the document, then
 * ValidateCustomResourceDefinition. A body kube could not decode at all gives one error whose field is
 * DECODE_ERROR_FIELD (crdInvalidMessage words it as kube's 400).
 */
export function validateCrd(doc: unknown): CrdCheck {
  const warnings: string[] = [];
  let meta: ObjectMeta;
  try {
    const decoded = decodeCrd(doc);
    meta = decoded.meta;
    warnings.push(...decoded.unknownFields.map((f) => `unknown field "${f}"`));
  } catch (e) {
    if (e instanceof CrdDecodeError) {
      return { errors: [{ type: 'FieldValueInvalid', field: DECODE_ERROR_FIELD, message: e.message }], warnings };
    }
    throw e;
  }
  const d = doc as J;
  setDefaults(d);
  const spec = toInternal(obj(d.spec));

  const name = s(meta.name);
  // The CRD registry is cluster-scoped: kube clears a namespace in the request before validating.
  const errs: FieldError[] = validateObjectMetaCreate({ ...meta, namespace: undefined }, { namespaced: false });
  // nameValidationFn adds kube's naming rule after the DNS-subdomain problems of the name.
  const requiredName = `${s(spec.names.plural)}.${spec.group}`;
  if (name && name !== requiredName) {
    const after = errs.reduce((last, e, i) => (e.field === 'metadata.name' || e.field === 'metadata.generateName' ? i + 1 : last), 0);
    errs.splice(after, 0, invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  errs.push(...validateSpec(spec, 'spec'));
  // PrepareForCreate resets status and records the storage version (if exactly any) as stored.
  errs.push(...validateStoredVersions(spec.versions));
  errs.push(...validateApproval(spec.group, meta.annotations));
  if (spec.preserveUnknownFields === true) {
    errs.push(
      invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'),
    );
  }
  // rest.BeforeCreate asks the strategy for warnings only once validation passed.
  if (errs.length === 0) warnings.push(...crdWarnings(specSchemas(spec)));
  // Not a kube error but ours: this server has no conversion webhook client, so a CRD kube would accept with
  // `strategy: Webhook` is refused here, and only then (a CRD kube refuses gets kube's message unchanged).
  if (errs.length === 0 && s(spec.conversion?.strategy) === 'Webhook') errs.push(WEBHOOK_UNSUPPORTED);
  return { errors: errs, warnings };
}

/**
 * crdInvalidMessage renders the refusal as kube's Status message: `CustomResourceDefinition.apiextensions.k8s.io
 * "flighttickets.flights.com" is invalid: [a, b]`; an undecodable body as kube's 400 text.
 */
export function crdInvalidMessage(name: string, errors: FieldError[]): string {
  const decode = errors.find((e) => e.field === DECODE_ERROR_FIELD);
  if (decode) return decode.message;
  return invalidStatus('CustomResourceDefinition', 'apiextensions.k8s.io', name, errors).status.message ?? '';
}
