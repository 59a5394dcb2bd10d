/**
 * @module kinds/crd/validation-schema
 * ValidateCustomResourceDefinitionOpenAPISchema (apiextensions validation.go): the keyword rules kube applies to every
 * node of a CRD schema on create (unsupported keywords, x-kubernetes-* consistency, list-type/map-keys rules,
 * x-kubernetes-validations shape). CEL compilation is not here (see validation.ts). Properties are visited in
 * sorted order (Go's map order is random).
 */
import { forbidden, GoJson, invalid, notSupported, required } from './validation-field.js';
import type { FieldError } from '../../apis/meta/field-path.js';
import { renderItems } from './validation-gojson.js';
import { isObject, props, sortedKeys, type Schema } from './structural.js';

const OPENAPI_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

/** Ssv is specStandardValidatorV3's state as it is cloned down the tree. */
interface Ssv {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const nonEmpty = (v: unknown) => (Array.isArray(v) ? v.length > 0 : isObject(v) ? Object.keys(v).length > 0 : false);
const hasNewlines = (s: string) => /[\n\r]/.test(s);

// specStandardValidatorV3.validate.
function ssvValidate(s: Schema, p: string, v: Ssv, errs: FieldError[]): void {
  const type = str(s.type) ?? '';
  if (type && !OPENAPI_TYPES.includes(type)) errs.push(notSupported(`${p}.type`, type, OPENAPI_TYPES));
  if (s.default !== undefined && s.default !== null && !v.allowDefaults) {
    errs.push(forbidden(`${p}.default`, `must not be set${v.disallowDefaultsReason ? ` ${v.disallowDefaultsReason}` : ''}`));
  }
  if (str(s.id)) errs.push(forbidden(`${p}.id`, 'id is not supported'));
  if (s.additionalItems !== undefined && s.additionalItems !== null) errs.push(forbidden(`${p}.additionalItems`, 'additionalItems is not supported'));
  if (nonEmpty(s.patternProperties)) errs.push(forbidden(`${p}.patternProperties`, 'patternProperties is not supported'));
  if (nonEmpty(s.definitions)) errs.push(forbidden(`${p}.definitions`, 'definitions is not supported'));
  if (isObject(s.dependencies)) errs.push(forbidden(`${p}.dependencies`, 'dependencies is not supported'));
  if (typeof s.$ref === 'string') errs.push(forbidden(`${p}.$ref`, '$ref is not supported'));
  if (type === 'null') errs.push(forbidden(`${p}.type`, 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(s.items) && s.items.length > 0) errs.push(forbidden(`${p}.items`, 'items must be a schema object and not an array'));
  if (v.insideResourceMeta && s['x-kubernetes-embedded-resource'] === true) {
    errs.push(forbidden(`${p}.x-kubernetes-embedded-resource`, 'must not be used inside of resource meta'));
  }
}

function walk(s: Schema | undefined, p: string, v: Ssv, isRoot: boolean, errs: FieldError[]): void {
  if (!s) return;
  ssvValidate(s, p, v, errs);
  if (s.uniqueItems === true) errs.push(forbidden(`${p}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));

  const ap = s.additionalProperties;
  if (ap !== undefined && ap !== null) {
    if (nonEmpty(s.properties) && (ap === false || isObject(ap))) {
      errs.push(forbidden(`${p}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    }
    const sub = v.insideResourceMeta ? { ...v, allowDefaults: false, disallowDefaultsReason: 'inside additionalProperties applying to object metadata' } : v;
    if (isObject(ap)) walk(ap, `${p}.additionalProperties`, sub, false, errs);
  }
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  for (const k of sortedKeys(s.properties)) {
    let sub = v;
    if ((isRoot || embedded) && META_FIELDS.has(k)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = { ...sub, allowDefaults: false, disallowDefaultsReason: `in top-level ${k}` };
    }
    const f = props(s)[k];
    walk(isObject(f) ? f : {}, `${p}.properties[${k}]`, sub, false, errs);
  }
  if (isObject(s.not)) walk(s.not, `${p}.not`, v, false, errs);
  for (const k of ['allOf', 'oneOf', 'anyOf']) {
    const l = s[k];
    if (Array.isArray(l))
      l.forEach((x, i) => {
        walk(isObject(x) ? x : {}, `${p}.${k}[${i}]`, v, false, errs);
      });
  }
  for (const k of sortedKeys(s.definitions)) walk((s.definitions as Schema)[k] as Schema, `${p}.definitions[${k}]`, v, false, errs);
  if (isObject(s.items)) walk(s.items, `${p}.items`, v, false, errs);
  else if (Array.isArray(s.items))
    s.items.forEach((x, i) => {
      walk(isObject(x) ? x : {}, `${p}.items[${i}]`, v, false, errs);
    });
  for (const k of sortedKeys(s.dependencies)) {
    const d = (s.dependencies as Schema)[k];
    if (isObject(d)) walk(d, `${p}.dependencies[${k}]`, v, false, errs);
  }

  if (s['x-kubernetes-preserve-unknown-fields'] === false) {
    errs.push(invalid(`${p}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
  }
  const type = str(s.type) ?? '';
  const mapType = str(s['x-kubernetes-map-type']);
  const listType = str(s['x-kubernetes-list-type']);
  if (mapType !== undefined && type !== 'object') {
    if (!type) errs.push(required(`${p}.type`, 'must be object if x-kubernetes-map-type is specified'));
    else errs.push(invalid(`${p}.type`, type, 'must be object if x-kubernetes-map-type is specified'));
  }
  if (mapType !== undefined && mapType !== 'atomic' && mapType !== 'granular') {
    errs.push(notSupported(`${p}.x-kubernetes-map-type`, mapType, ['atomic', 'granular']));
  }
  const items = isObject(s.items) ? s.items : undefined;
  if (listType !== undefined && type !== 'array') {
    if (!type) errs.push(required(`${p}.type`, 'must be array if x-kubernetes-list-type is specified'));
    else errs.push(invalid(`${p}.type`, type, 'must be array if x-kubernetes-list-type is specified'));
  } else if (listType === 'set' && items) {
    // requireAtomicSetType. The map-type message prints the item's list type (kube passes XListType there).
    if (items.type === 'array' && str(items['x-kubernetes-list-type']) !== undefined && items['x-kubernetes-list-type'] !== 'atomic') {
      errs.push(
        invalid(
          `${p}.items.x-kubernetes-list-type`,
          new GoJson(JSON.stringify(items['x-kubernetes-list-type'])),
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
    } else if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic') {
      const lt = str(items['x-kubernetes-list-type']);
      errs.push(
        invalid(
          `${p}.items.x-kubernetes-map-type`,
          new GoJson(lt === undefined ? 'null' : JSON.stringify(lt)),
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
    }
  }
  if (listType !== undefined && listType !== 'atomic' && listType !== 'set' && listType !== 'map') {
    errs.push(notSupported(`${p}.x-kubernetes-list-type`, listType, ['atomic', 'set', 'map']));
  }
  const keys = Array.isArray(s['x-kubernetes-list-map-keys']) ? (s['x-kubernetes-list-map-keys'] as unknown[]).map(String) : [];
  if (keys.length > 0) {
    if (listType === undefined) errs.push(required(`${p}.x-kubernetes-list-type`, 'must be map if x-kubernetes-list-map-keys is non-empty'));
    else if (listType !== 'map') errs.push(invalid(`${p}.x-kubernetes-list-type`, listType, 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (listType === 'map') {
    if (keys.length === 0) errs.push(required(`${p}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
    if (s.items === undefined || s.items === null) errs.push(required(`${p}.items`, 'must have a schema if x-kubernetes-list-type is map'));
    // Items set but not to one schema: a list of schemas, or a value its UnmarshalJSON ignored (`items: true`).
    if (s.items !== undefined && s.items !== null && !isObject(s.items)) {
      errs.push(invalid(`${p}.items`, new GoJson(renderItems(s.items)), 'must only have a single schema if x-kubernetes-list-type is map'));
    }
    if (items && items.type !== 'object') {
      errs.push(invalid(`${p}.items.type`, str(items.type) ?? '', "must be object if parent array's x-kubernetes-list-type is map"));
    }
    if (items && items.type === 'object') {
      const seen = new Set<string>();
      const keysJson = new GoJson(JSON.stringify(keys));
      for (const k of keys) {
        const f = props(items)[k];
        if (isObject(f)) {
          if (f.type === 'array' || f.type === 'object') {
            errs.push(invalid(`${p}.items.properties[${k}].type`, 'object', "must be a scalar type if parent array's x-kubernetes-list-type is map"));
          }
        } else {
          errs.push(invalid(`${p}.x-kubernetes-list-map-keys`, keysJson, 'entries must all be names of item properties'));
        }
        if (seen.has(k)) errs.push(invalid(`${p}.x-kubernetes-list-map-keys`, keysJson, 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  // requireMapListKeysMapSetValidation (validateMapListKeysMapSet).
  if (items && (listType === 'set' || listType === 'map')) {
    if (items.nullable === true) errs.push(forbidden(`${p}.items.nullable`, `cannot be nullable when x-kubernetes-list-type is ${listType}`));
    if (listType === 'map') {
      const req = new Set(Array.isArray(items.required) ? items.required : []);
      for (const k of keys) {
        const f = props(items)[k];
        if (!isObject(f)) continue;
        if (!req.has(k) && (f.default === undefined || f.default === null)) {
          errs.push(
            required(
              `${p}.items.properties[${k}].default`,
              'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
            ),
          );
        }
        if (f.nullable === true)
          errs.push(forbidden(`${p}.items.properties[${k}].nullable`, 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
      }
    }
  }
  const rules = s['x-kubernetes-validations'];
  if (Array.isArray(rules)) {
    rules.forEach((r0, i) => {
      const r = isObject(r0) ? r0 : {};
      const at = `${p}.x-kubernetes-validations[${i}]`;
      const rule = (str(r.rule) ?? '').trim();
      const message = str(r.message) ?? '';
      const msg = message.trim();
      if (!rule) errs.push(required(`${at}.rule`, 'rule is not specified'));
      else if (message.length > 0 && !msg) errs.push(invalid(`${at}.message`, message, 'must be non-empty if specified'));
      else if (hasNewlines(msg)) errs.push(invalid(`${at}.message`, message, 'must not contain line breaks'));
      else if (hasNewlines(rule) && !msg) errs.push(required(`${at}.message`, 'message must be specified if rule contains line breaks'));
      const me = str(r.messageExpression) ?? '';
      if (me.length > 0 && !me.trim()) errs.push(required(`${at}.messageExpression`, 'messageExpression must be non-empty if specified'));
      if (typeof r.reason === 'string' && !REASONS.includes(r.reason)) errs.push(notSupported(`${at}.reason`, r.reason, REASONS));
      const fp = str(r.fieldPath) ?? '';
      if (fp.length > 0 && !fp.trim()) errs.push(invalid(`${at}.fieldPath`, fp, 'must be non-empty if specified'));
      if (hasNewlines(fp)) errs.push(invalid(`${at}.fieldPath`, fp, 'must not contain line breaks'));
    });
  }
}

/** validateOpenAPISchema returns the keyword errors for a version's schema rooted at `p`. */
export function validateOpenAPISchema(schema: Schema, p: string): FieldError[] {
  const errs: FieldError[] = [];
  walk(schema, p, { allowDefaults: true, disallowDefaultsReason: '', insideResourceMeta: false }, true, errs);
  return errs;
}
