/**
 * @module registry/scale
 * ScaleSubresource: the /scale subresource of one kind, the autoscaling/v1 Scale view of an object mapped through
 * the kind's ScaleMapping: the view itself, the decoding of a Scale body, and the replicas a Scale sets.
 */
import { badRequest, conflict, invalid, notFound, OBJECT_MODIFIED, type GroupResource } from '../apis/meta/errors.js';
import { invalid as invalidField, path, required } from '../apis/meta/field-path.js';
import { cloneJson } from '../apis/meta/json-clone.js';
import type { FieldValidation, KubeObject } from '../apis/meta/types.js';
import { decodeScaleBody, GoDecodeError, interpretTypeMeta, type DecodedScale } from '../apis/meta/decode.js';
import { goMarshal } from '../apis/meta/go-json.js';
import { invalidPatch, type DecodeMode } from './decode-errors.js';
import { getAt, leafPaths, setAt } from './object-paths.js';
import type { ResourceDefinition } from './resource.js';

/** ScaleSubresource maps autoscaling/v1 Scale onto objects of one kind. */
export class ScaleSubresource {
  readonly #def: ResourceDefinition;
  readonly #gr: GroupResource;

  constructor(def: ResourceDefinition, gr: GroupResource) {
    this.#def = def;
    this.#gr = gr;
  }

  /** toScale is the Scale view of an object; 404 when the kind has no /scale. */
  toScale(obj: KubeObject): KubeObject {
    const scale = this.#def.subresources.scale;
    if (!scale) throw notFound(this.#gr, obj.metadata.name ?? '');
    const m = obj.metadata;
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      // A cluster-scoped kind's Scale has no namespace (not an undefined one, which a patch would carry on).
      metadata: {
        name: m.name,
        ...(m.namespace === undefined ? {} : { namespace: m.namespace }),
        uid: m.uid,
        resourceVersion: m.resourceVersion,
        creationTimestamp: m.creationTimestamp,
      },
      spec: { replicas: scale.specReplicas(obj) },
      status: { replicas: scale.statusReplicas(obj), selector: scale.selector(obj) },
    };
  }

  /**
   * decode decodes an autoscaling/v1 Scale as a typed object: its type, then Go's type errors (400 `Scale in
   * version "v1" cannot be handled as a Scale: ...`, or the 422 of a patch), unknown fields per fieldValidation, and
   * the name (checkName). kube-apiserver words the type errors of a custom resource's /scale as `no kind is
   * registered for the type v1.Scale in scheme ...` (its decoder cannot name the type); the decoder's own error is
   * given instead, with the same code and reason.
   */
  decode(body: unknown, name: string, mode: DecodeMode, fieldValidation: FieldValidation, raw?: Uint8Array): { scale: DecodedScale; warnings: string[] } {
    const fail = (message: string) => (mode === 'patch' ? invalidPatch(goMarshal(body), message) : badRequest(message));
    if (body === undefined) throw fail("couldn't get version/kind; json parse error: unexpected end of JSON input");
    let scale: DecodedScale;
    try {
      const tm = interpretTypeMeta(body);
      if ((tm.kind !== '' && tm.kind !== 'Scale') || (tm.apiVersion !== '' && tm.apiVersion !== 'autoscaling/v1')) {
        throw fail(
          `no kind ${JSON.stringify(tm.kind || 'Scale')} is registered for version ${JSON.stringify(tm.apiVersion || 'autoscaling/v1')} in scheme "pkg/runtime/scheme.go:111"`,
        );
      }
      scale = decodeScaleBody(body, raw);
    } catch (e) {
      if (!(e instanceof GoDecodeError)) throw e;
      throw fail(mode === 'patch' || e.message.startsWith("couldn't") ? e.message : `Scale in version "v1" cannot be handled as a Scale: ${e.message}`);
    }
    const warnings: string[] = [];
    const unknown = scale.unknownFields.map((f) => `unknown field ${JSON.stringify(f)}`);
    if (unknown.length && fieldValidation === 'Strict') {
      throw fail(
        mode === 'patch'
          ? `strict decoding error: ${unknown.join(', ')}`
          : `Scale in version "v1" cannot be handled as a Scale: strict decoding error: ${unknown.join(', ')}`,
      );
    }
    if (fieldValidation === 'Warn') warnings.push(...unknown);
    const got = scale.metadata.name;
    if (!got && mode !== 'apply') throw badRequest(`the name of the object (${name} based on URL) was undeterminable: name must be provided`);
    if (got && got !== name) throw badRequest(`the name of the object (${got}) does not match the name on the URL (${name})`);
    return { scale, warnings };
  }

  /**
   * withReplicas is a copy of the object with the replicas of a decoded Scale (409 when the Scale names another
   * resourceVersion). The number is not judged here: the object's own validation does, as a custom resource's scale
   * update does (a negative count is the Website's 422, not the Scale's).
   */
  withReplicas(cur: KubeObject, scale: { replicas: number; resourceVersion: string | undefined }): KubeObject {
    const name = cur.metadata.name ?? '';
    if (scale.resourceVersion && scale.resourceVersion !== cur.metadata.resourceVersion) throw conflict(this.#gr, name, OBJECT_MODIFIED);
    const next = cloneJson(cur);
    this.#def.subresources.scale?.setSpecReplicas(next, scale.replicas);
    return next;
  }

  /**
   * appliedReplicas is the configuration an apply on /scale applies to the object, in the object's own terms: only
   * its replicas field, set to the Scale's spec.replicas (checked first: required, an integer >= 0).
   */
  appliedReplicas(cur: KubeObject, replicas: unknown, name: string): KubeObject {
    const checked = checkReplicas(replicas, name);
    const applied: KubeObject = { metadata: {} };
    setAt(applied, this.#replicasPath(cur), checked);
    return applied;
  }

  // #replicasPath is where the kind keeps spec replicas (a CRD's specReplicasPath), found through its scale mapping.
  #replicasPath(cur: KubeObject): string[] {
    const probe = cloneJson(cur);
    const marker = -0.5; // no object holds this replica count
    this.#def.subresources.scale?.setSpecReplicas(probe, marker);
    const found = leafPaths(probe, 'main').find((p) => getAt(probe, p) === marker);
    if (!found) throw new Error(`the scale mapping of ${this.#def.kind} sets no field`);
    return found;
  }
}

// checkReplicas validates a Scale's spec.replicas (required, an integer >= 0).
function checkReplicas(r: unknown, name: string): number {
  if (r === undefined || r === null) throw invalid('Scale', 'autoscaling', name, [required(path('spec', 'replicas'))]);
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 0) {
    throw invalid('Scale', 'autoscaling', name, [invalidField(path('spec', 'replicas'), r, 'must be greater than or equal to 0')]);
  }
  return r;
}
