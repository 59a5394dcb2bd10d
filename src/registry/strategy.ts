/**
 * @module registry/strategy
 * WriteStrategy: what kube calls a kind's REST create and update strategy, for one kind. A create gets its system
 * metadata (PrepareForCreate, rest.FillObjectMetaSystemFields), an update is built from the stored object and the
 * client's version (PrepareForUpdate, rest.BeforeUpdate), and both are defaulted and validated (one 422 with every
 * cause) and record their field manager's entry in managedFields.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { conflict, invalid, OBJECT_MODIFIED, type GroupResource } from '../apis/meta/errors.js';
import { invalid as invalidField, type FieldError } from '../apis/meta/field-path.js';
import { cloneJson } from '../apis/meta/json-clone.js';
import type { KubeObject, ObjectMeta } from '../apis/meta/types.js';
import { finalizerWarnings, generateName, validateObjectMetaCreate, validateObjectMetaUpdate } from '../apis/meta/validation.js';
import { rfc3339 } from '../apis/meta/go-time.js';
import type { SchemaAdmission } from '../admission/schema.js';
import { typedShapeErrors } from '../admission/typed-shape.js';
import { trackUpdate, type FieldVersions, type Managed } from './managed-fields.js';
import { mergeTypeOf } from './merge/schema.js';
import type { ResourceDefinition } from './resource.js';

// The field errors that keep a kind's validation rules from running (customresource strategy.go hasBlockingErr).
const BLOCKING = new Set<FieldError['type']>([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);
const RULES_NOT_CHECKED = 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

/** Subresource is the part of the object a write addresses. */
export type Subresource = 'main' | 'status';

/**
 * Ownership is how a write records field ownership: tracked for a manager (on /scale, labelled so), already
 * computed by apply, or not at all (system).
 */
export type Ownership = { kind: 'update'; manager: string; subresource?: 'scale' } | { kind: 'apply' } | { kind: 'system' };

/** DeleteInstead is thrown inside an update to say "this write removes the last finalizer of a deleted object: delete it instead". */
export class DeleteInstead extends Error {}

/** WriteStrategy prepares the objects a create or an update stores. */
export class WriteStrategy {
  readonly #def: ResourceDefinition;
  readonly #gr: GroupResource;
  readonly #schema: SchemaAdmission;
  readonly #systemStatus: ((obj: KubeObject) => unknown) | undefined;
  /** What the field manager needs of the kind: its merge schema, version and reset fields. */
  readonly managed: Managed;

  /**
   * `standalone`: no cluster is configured, so the kind's standaloneStatus, if it has one (and a status
   * subresource), is written at create and on spec changes. `fields` translates managedFields paths between the
   * kind's versions.
   */
  constructor(def: ResourceDefinition, gr: GroupResource, schema: SchemaAdmission, standalone: boolean | undefined, fields: FieldVersions | undefined) {
    this.#def = def;
    this.#gr = gr;
    this.#schema = schema;
    this.#systemStatus = def.subresources.status && standalone && def.standaloneStatus ? (o) => def.standaloneStatus?.(o) : undefined;
    this.managed = { type: mergeTypeOf(def.schema), apiVersion: `${def.group}/${def.version}`, hasStatus: !!def.subresources.status, fields };
  }

  /**
   * prepareCreate readies a decoded object for its first write: system metadata, no client status when the kind has
   * a status subresource, a name from generateName, defaults and validation, the system status and, for an update
   * ownership, the manager's managedFields entry. Returns the warnings of the write (finalizers it adds) and whether
   * the name was generated (a taken name is then generated again).
   */
  prepareCreate(obj: KubeObject, own: Ownership): { generated: boolean; warnings: string[] } {
    const meta = obj.metadata;
    // System fields: whatever the client sent is replaced, as rest.FillObjectMetaSystemFields does.
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(new Date());
    meta.generation = 1;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (own.kind !== 'apply') delete meta.managedFields;
    delete meta.selfLink;
    if (this.#def.subresources.status) delete obj['status'];
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = generateName(meta.generateName ?? '');
    this.#validate(obj, undefined);
    const warnings = finalizerWarnings(meta.finalizers, undefined);
    if (this.#systemStatus) obj['status'] = this.#systemStatus(obj);
    if (own.kind === 'update') {
      const managedFields = trackUpdate(this.managed, undefined, obj, own.manager, 'main', meta.creationTimestamp);
      if (managedFields.length > 0) meta.managedFields = managedFields;
    }
    return { generated, warnings };
  }

  /**
   * prepareUpdate builds the object to store from the current one and the client's version (PrepareForUpdate):
   * null when nothing changes; DeleteInstead when the write leaves a deleted object without finalizers. `warn` hears
   * the validation rules ratcheted on an unchanged value.
   */
  prepareUpdate(cur: KubeObject, incoming: KubeObject, sub: Subresource, own: Ownership, warn: (message: string) => void = () => undefined): KubeObject | null {
    const name = cur.metadata.name ?? '';
    if (incoming.metadata.resourceVersion && incoming.metadata.resourceVersion !== cur.metadata.resourceVersion) {
      throw conflict(this.#gr, name, OBJECT_MODIFIED);
    }
    // FieldManager.Update: managedFields the client sent (non-empty) are the ones the write starts from, so a client
    // can rewrite them, or drop them all with `[{}]`; absent or empty, the stored ones are kept.
    const sent =
      own.kind === 'update' && Array.isArray(incoming.metadata.managedFields) && incoming.metadata.managedFields.length > 0
        ? incoming.metadata.managedFields
        : undefined;
    let next: KubeObject;
    if (sub === 'status') {
      // The status endpoint takes only status; metadata and spec stay as stored (but for what apply recorded).
      next = cloneJson(cur);
      if (incoming['status'] === undefined) delete next['status'];
      else next['status'] = incoming['status'];
      if (own.kind === 'apply') copyOrDelete(next.metadata, incoming.metadata, 'managedFields');
    } else {
      next = incoming;
      if (this.#def.subresources.status) {
        if (cur['status'] === undefined) delete next['status'];
        else next['status'] = cloneJson(cur['status']);
      }
      // rest.BeforeUpdate: the generation and creationTimestamp cannot be changed by a write, a missing uid is the
      // stored one, a deletion already under way keeps its timestamp and grace period. Anything else the client
      // changed among these (a uid, a deletionTimestamp) is left for validation to refuse as immutable.
      const m = next.metadata;
      const c = cur.metadata;
      if (!m.uid) m.uid = c.uid;
      m.creationTimestamp = c.creationTimestamp;
      m.generation = c.generation;
      if (c.deletionTimestamp) m.deletionTimestamp = c.deletionTimestamp;
      if (c.deletionGracePeriodSeconds !== undefined && m.deletionGracePeriodSeconds === undefined) m.deletionGracePeriodSeconds = c.deletionGracePeriodSeconds;
      if (own.kind !== 'apply') copyOrDelete(m, c, 'managedFields');
      delete m.selfLink;
    }
    next.metadata.resourceVersion = cur.metadata.resourceVersion;
    // Defaults first, as the custom resource codec applies them while decoding: a body that leaves a defaulted field
    // out does not change the spec, so it does not bump the generation.
    // An update ratchets (an unchanged invalid value is not refused again); /status validates the status alone.
    const nextValue = next as unknown as Record<string, unknown>;
    const curValue = cur as unknown as Record<string, unknown>;
    const schemaErrs =
      sub === 'status' ? this.#schema.defaultAndValidateStatusUpdate(nextValue, curValue) : this.#schema.defaultAndValidateUpdate(nextValue, curValue);
    if (sub === 'main' && !isDeepStrictEqual(specOf(next), specOf(cur))) {
      next.metadata.generation = (cur.metadata.generation ?? 0) + 1;
      if (this.#systemStatus) next['status'] = this.#systemStatus(next);
    }
    this.#validate(next, cur, schemaErrs, sub, warn);
    if (own.kind === 'update') {
      const managedFields = trackUpdate(
        this.managed,
        cur,
        next,
        own.manager,
        sub,
        rfc3339(new Date()),
        own.subresource ?? (sub === 'status' ? 'status' : undefined),
        sent,
      );
      if (managedFields.length > 0) next.metadata.managedFields = managedFields;
      else delete next.metadata.managedFields;
    }
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) throw new DeleteInstead();
    return isDeepStrictEqual(next, cur) ? null : next;
  }

  // #validate defaults and validates a complete object; every problem is one cause of a single 422.
  #validate(
    obj: KubeObject,
    old: KubeObject | undefined,
    schemaErrs?: FieldError[],
    sub: Subresource = 'main',
    warn: (message: string) => void = () => undefined,
  ): void {
    const errs: FieldError[] = [];
    const opts = { namespaced: this.#def.namespaced };
    errs.push(...(old ? validateObjectMetaUpdate(obj.metadata, old.metadata, opts) : validateObjectMetaCreate(obj.metadata, opts)));
    errs.push(...(schemaErrs ?? this.#schema.defaultAndValidate(obj as unknown as Record<string, unknown>)));
    errs.push(...(this.#def.validateScalePaths?.(obj, sub) ?? []));
    // A kind with Go types must not store what its Go clients could not decode (a custom resource may).
    if (!this.#def.customResource) errs.push(...typedShapeErrors(this.#def.schema, obj));
    if (errs.length === 0) errs.push(...(this.#def.validate?.(obj, old) ?? []));
    if (this.#def.validateRules) {
      // customresource strategy.go hasBlockingErr: the rules do not run on an object of the wrong shape, and say so.
      if (errs.some((e) => BLOCKING.has(e.type))) errs.push(invalidField('<nil>', null, RULES_NOT_CHECKED));
      else errs.push(...this.#def.validateRules(obj, old, warn));
    }
    if (errs.length > 0) throw invalid(this.#def.kind, this.#def.group, obj.metadata.name || obj.metadata.generateName || '', errs);
  }
}

function copyOrDelete(to: ObjectMeta, from: ObjectMeta, field: keyof ObjectMeta): void {
  if (from[field] === undefined) delete to[field];
  else to[field] = cloneJson(from[field]);
}

// specOf is everything that counts for metadata.generation: the object minus metadata and status.
function specOf(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
  return rest;
}
