/**
 * @module endpoints/handlers/request
 * What every verb handler shares (handlers/rest.go RequestScope): the request's types, its namespace and name, the
 * negotiation of its answer, and the patch type of a PATCH. A handler is parse options → negotiate → one store call
 * → reply; the installer (endpoints/installer.ts) picks which handler serves which method of which path.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unsupportedMediaType } from '../../apis/meta/errors.js';
import type { KubeObject } from '../../apis/meta/types.js';
import { APPLY_PATCH_TYPE, SUPPORTED_PATCH_TYPES, type PatchType } from '../../registry/patch.js';
import type { ResourceDefinition } from '../../registry/resource.js';
import type { IncludeObject } from '../../registry/table.js';
import { negotiate, type Target } from '../negotiation.js';
import { parseTableOptions, requestQuery, type Query } from '../query.js';
import { answerInYaml } from '../response-encoding.js';
import { transformObject } from '../transform.js';

/** Req is a resource request as the routes declare it. */
export type Req = FastifyRequest<{ Params: Record<string, string>; Querystring: Query }>;

/** Call is what a handler knows of its request beyond the request itself (the installer makes one per request). */
export interface Call {
  /** name is the object's name from the path ('' on a collection). */
  name: string;
  /**
   * namespace is the request's namespace: undefined for a cluster-scoped kind and across all namespaces; `.` and
   * `..` name no namespace (IsValidPathSegmentName), so 404. Read where the handler needs it, which decides which
   * refusal a request with several faults gets.
   */
  namespace(): string | undefined;
  /** negotiate picks the answer's representation (406 when none fits) and records YAML (response-encoding.ts). */
  negotiate(single: boolean): Target;
}

/** Handler serves one verb. */
export type Handler = (req: Req, reply: FastifyReply, call: Call) => Promise<unknown>;

/** Answer renders what a store call gave in the negotiated representation. */
export type Answer = (obj: KubeObject, target: Target) => unknown;

/** transformed renders an object of `def` as negotiated (the object and /status: handlers/response.go). */
export const transformed =
  (def: ResourceDefinition): Answer =>
  (obj, target) =>
    transformObject(def, obj, target, 'Metadata');

/** asIs sends what the store answered as it is, in JSON or YAML as negotiated (a Scale). */
export const asIs: Answer = (obj) => obj;

/** negotiated negotiates the answer and records the format it goes out in (response-encoding.ts converts it). */
export function negotiated(req: FastifyRequest, single: boolean): Target {
  const target = negotiate(req.headers.accept, single);
  if (target.yaml) answerInYaml(req);
  return target;
}

/**
 * representation adds the Table options (`includeObject`, `-` for noHeaders) to a target, read only for a Table
 * (handlers/response.go optionsForTransform).
 */
export function representation(req: Req, target: Target): { target: Target; includeObject: IncludeObject; noHeaders: boolean } {
  return { target, ...(target.kind === 'Table' ? parseTableOptions(requestQuery(req)) : { includeObject: 'Metadata', noHeaders: false }) };
}

const mediaType = (req: FastifyRequest) => (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/** isApplyPatch tells a server-side apply request: the object, /status and /scale take it. */
export const isApplyPatch = (req: FastifyRequest) => mediaType(req) === APPLY_PATCH_TYPE;

/**
 * patchType is the patch type of a non-apply PATCH, or 415 listing what every endpoint accepts (CRDs give /status
 * and /scale the same list as the object: customresource_handler.go serveStatus, serveScale), a Status with the
 * accepted list and no details (negotiation.NewUnsupportedMediaTypeError).
 */
export function patchType(req: FastifyRequest): Exclude<PatchType, typeof APPLY_PATCH_TYPE> {
  const ct = mediaType(req);
  if (!(SUPPORTED_PATCH_TYPES as readonly string[]).includes(ct) || ct === APPLY_PATCH_TYPE) throw unsupportedMediaType(SUPPORTED_PATCH_TYPES);
  return ct as Exclude<PatchType, typeof APPLY_PATCH_TYPE>;
}
