/**
 * @module registry/object-codec
 * ObjectCodec: a request body decoded into an object of one kind (the custom resource codec, then the handlers'
 * checks of type, namespace and name), and the checks kube's field manager makes of an apply body before applying.
 */
import { badRequest, invalid } from '../apis/meta/errors.js';
import { invalid as invalidField, type FieldError } from '../apis/meta/field-path.js';
import { cloneJsonSharing } from '../apis/meta/json-clone.js';
import type { FieldValidation, KubeObject } from '../apis/meta/types.js';
import { decodeObjectMeta, GoDecodeError, interpretTypeMeta } from '../apis/meta/decode.js';
import { goMarshal } from '../apis/meta/go-json.js';
import { CoercionError, type SchemaAdmission } from '../admission/schema.js';
import { decodeFailure, groupOf, type DecodeMode } from './decode-errors.js';
import { duplicatesOf } from './duplicate-fields.js';
import type { ResourceDefinition } from './resource.js';

/** ObjectCodec decodes request bodies into objects of one kind, pruned by the kind's compiled schema. */
export class ObjectCodec {
  readonly #def: ResourceDefinition;
  readonly #schema: SchemaAdmission;

  constructor(def: ResourceDefinition, schema: SchemaAdmission) {
    this.#def = def;
    this.#schema = schema;
  }

  get #apiVersion(): string {
    return `${this.#def.group}/${this.#def.version}`;
  }

  /**
   * decode is the custom resource codec (apiextensions-apiserver customresource_handler.go: the JSON serializer's
   * type sniffing, schemaCoercingDecoder, unstructuredSchemaCoercer.apply) and then the handlers' checks (create.go,
   * update.go, patch.go checkName). In order:
   * - the type: apiVersion and kind must be strings, kind must be there;
   * - metadata decoded as metav1.ObjectMeta (objectmeta.GetObjectMetaWithOptions) and replaced by its stored form, so
   *   nothing a Go client could not decode goes on (`"labels": true` is 400 `Website in version "v1alpha1" cannot
   *   be handled as a Website: json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type
   *   map[string]string`);
   * - unknown fields (metadata's first, then the rest in sorted order) refused, warned about or dropped per
   *   fieldValidation;
   * - the API version (400), the kind (422, ValidateTypeMeta), the namespace (400) and, for an update or a patch, the
   *   name, which must be in the object (checkName: 400 `... was undeterminable: name must be provided`).
   * A patch's result fails as patch.go reports it: 422 ` "" is invalid: patch: Invalid value: "<the object>": ...`.
   */
  decode(
    body: unknown,
    namespace: string | undefined,
    name: string | undefined,
    fieldValidation: FieldValidation,
    mode: DecodeMode,
  ): { obj: KubeObject; warnings: string[] } {
    const failure = (message: string, unrecognized: boolean, handledAs?: { kind: string; apiVersion: string }) =>
      decodeFailure(body, mode, this.#def.kind, message, unrecognized, handledAs);
    if (body === undefined) throw failure("couldn't get version/kind; json parse error: unexpected end of JSON input", true);
    let tm: { apiVersion: string; kind: string };
    try {
      tm = interpretTypeMeta(body);
    } catch (e) {
      if (e instanceof GoDecodeError) throw failure(e.message, true);
      throw e;
    }
    if (tm.kind === '') throw failure(`Object 'Kind' is missing in '${mode === 'patch' ? goMarshal(body) : JSON.stringify(body)}'`, true);
    // The metadata is not copied: its decoded form replaces it below.
    const obj = cloneJsonSharing(body, 'metadata') as KubeObject;
    const unknown: string[] = [];
    if (Object.hasOwn(obj, 'metadata')) {
      try {
        const decoded = decodeObjectMeta(obj.metadata);
        obj.metadata = decoded.meta;
        unknown.push(...decoded.unknownFields);
      } catch (e) {
        if (e instanceof GoDecodeError) throw failure(e.message, false, tm);
        throw e;
      }
    } else {
      obj.metadata = {};
    }
    const ours = groupOf(tm.apiVersion) === this.#def.group && tm.kind === this.#def.kind;
    // Pruning and unknown fields apply to our own kind only (unstructuredSchemaCoercer.apply).
    if (ours) {
      try {
        // An applied configuration is merged as sent (kube decodes it as plain YAML): its nulls are not dropped.
        unknown.push(...this.#schema.pruneUnknown(obj as unknown as Record<string, unknown>, { keepNulls: mode === 'apply' }));
      } catch (e) {
        // An embedded resource the decoder cannot coerce (an apiVersion not a string, metadata that does not decode).
        if (e instanceof CoercionError) throw failure(e.message, false, tm);
        throw e;
      }
    }
    const warnings: string[] = [];
    // The decoder's duplicate members come first, then the pruned unknown fields (strict decoding error order).
    const strict = [...duplicatesOf(body).map((f) => `duplicate field ${JSON.stringify(f)}`), ...unknown.map((f) => `unknown field ${JSON.stringify(f)}`)];
    if (strict.length > 0 && fieldValidation === 'Strict') throw failure(`strict decoding error: ${strict.join(', ')}`, false, tm);
    if (fieldValidation === 'Warn') warnings.push(...strict);
    this.#checkType(tm, obj.metadata.name ?? '', mode);
    obj.apiVersion = this.#apiVersion;
    obj.kind = this.#def.kind;
    const meta = obj.metadata;
    if (this.#def.namespaced) {
      if (!meta.namespace) meta.namespace = namespace ?? '';
      else if (meta.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
    } else delete meta.namespace;
    if (name !== undefined) {
      if (!meta.name) {
        // An apply takes the name from the URL; an update or a patch result must carry it (handlers checkName).
        if (mode === 'apply') meta.name = name;
        else throw badRequest(`the name of the object (${name} based on URL) was undeterminable: name must be provided`);
      } else if (meta.name !== name) throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    return { obj, warnings };
  }

  // #checkType is the handlers' API version check (400; a patch has none) and ValidateTypeMeta (422, named after the
  // object's own kind and group, as customresource validator.go reports it).
  #checkType(tm: { apiVersion: string; kind: string }, name: string, mode: DecodeMode): void {
    if (mode !== 'patch' && tm.apiVersion !== this.#apiVersion) {
      throw badRequest(`the API version in the data (${tm.apiVersion}) does not match the expected API version (${this.#apiVersion})`);
    }
    const errs: FieldError[] = [];
    if (tm.kind !== this.#def.kind) errs.push(invalidField('kind', tm.kind, `must be ${this.#def.kind}`));
    if (tm.apiVersion !== this.#apiVersion) errs.push(invalidField('apiVersion', tm.apiVersion, `must be ${this.#apiVersion}`));
    if (errs.length) throw invalid(tm.kind, groupOf(tm.apiVersion), name, errs);
  }
}

/**
 * checkApplyBody refuses what kube's field manager refuses before applying: an object of another type
 * (versionCheckManager: `invalid object type: <group>/<version>, Kind=<kind>`) and one carrying managedFields
 * (structuredMergeManager.Apply: `metadata.managedFields must be nil`).
 */
export function checkApplyBody(body: unknown, apiVersion: string, kind: string): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body of an apply patch must be a YAML or JSON object');
  const b = body as { apiVersion?: unknown; kind?: unknown; metadata?: { managedFields?: unknown } };
  const gvk = groupVersionKind(b.apiVersion, b.kind);
  if (gvk !== groupVersionKind(apiVersion, kind)) throw badRequest(`invalid object type: ${gvk}`);
  const mf = typeof b.metadata === 'object' && b.metadata !== null ? b.metadata.managedFields : undefined;
  if (mf !== undefined && mf !== null) throw badRequest('metadata.managedFields must be nil');
}

// groupVersionKind prints an unstructured object's GVK as schema.GroupVersionKind.String does; an apiVersion that
// does not parse (more than one '/') gives the empty GVK, kind included.
function groupVersionKind(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const parts = av === '' ? ['', ''] : av.split('/');
  if (parts.length > 2) return '/, Kind=';
  const [group, version] = parts.length === 1 ? ['', parts[0]] : parts;
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}
