/**
 * @module apis/meta/errors
 * StatusError and the one catalogue of constructors for every API error (k8s.io/apimachinery/pkg/api/errors).
 * Handlers throw StatusError; the server's error handler serialises `.status` as the response body.
 */
import type { FieldError } from './field-path.js';
import type { Status, StatusCause, StatusDetails } from './types.js';

/** GroupResource names a resource for messages: `websites.extensions.example.com`. */
export interface GroupResource {
  group: string;
  resource: string;
}

const qualified = (gr: GroupResource) => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);

/** StatusError carries a complete metav1.Status; `code` is the HTTP status. */
export class StatusError extends Error {
  readonly status: Status;
  /** For a 415: the media types a body may have here, which the answer's `Accept` header lists (RFC 9110 §15.5.16). */
  acceptedMediaTypes?: readonly string[];
  /** The warnings the request gathered before it failed: they are sent with the error, as kube sends them. */
  warnings?: readonly string[];
  constructor(status: Omit<Status, 'kind' | 'apiVersion' | 'metadata' | 'status' | 'code'> & { code: number }, options?: { cause?: unknown }) {
    super(status.message ?? status.reason ?? 'error', options);
    // metav1.Status's field order, so the JSON is kube's byte for byte: message, reason, details, then code.
    const { message, reason, details, code } = status;
    this.status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      ...(message !== undefined ? { message } : {}),
      ...(reason !== undefined ? { reason } : {}),
      ...(details !== undefined ? { details } : {}),
      code,
    };
  }
  get code(): number {
    return this.status.code ?? 500;
  }
  get reason(): string | undefined {
    return this.status.reason;
  }
}

function err(code: number, reason: string, message: string, details?: StatusDetails): StatusError {
  // metav1.StatusDetails.Group is omitempty: the core group is left out rather than sent as "".
  if (details && details.group === '') delete details.group;
  return new StatusError(details ? { code, reason, message, details } : { code, reason, message });
}

/** badRequest: 400 BadRequest. */
export const badRequest = (message: string, causes?: StatusCause[]) => err(400, 'BadRequest', message, causes ? { causes } : undefined);

/** unauthorized: 401 Unauthorized. */
export const unauthorized = (message = 'Unauthorized') => err(401, 'Unauthorized', message);

/**
 * forbidden: 403 Forbidden worded as errors.NewForbidden: `websites.extensions.example.com "x" is forbidden: <why>`,
 * or `forbidden: <why>` for a request that names no resource.
 */
export function forbidden(gr: GroupResource | undefined, name: string, why: string, causes?: StatusCause[]): StatusError {
  const message = !gr?.resource ? `forbidden: ${why}` : name ? `${qualified(gr)} "${name}" is forbidden: ${why}` : `${qualified(gr)} is forbidden: ${why}`;
  const details: StatusDetails = gr?.resource ? { ...(name ? { name } : {}), group: gr.group, kind: gr.resource } : {};
  if (causes) details.causes = causes;
  return err(403, 'Forbidden', message, details);
}

/** notFound: 404 NotFound `websites.extensions.example.com "x" not found`. */
export const notFound = (gr: GroupResource, name: string) =>
  err(404, 'NotFound', `${qualified(gr)} "${name}" not found`, { name, group: gr.group, kind: gr.resource });

/** notFoundPath: 404 for a URL that names no resource, worded like kube-apiserver's `the server could not find the requested resource`. */
export const notFoundPath = () => err(404, 'NotFound', 'the server could not find the requested resource', {});

/** methodNotSupported: 405 MethodNotAllowed. */
export const methodNotSupported = (gr: GroupResource, action: string) =>
  err(405, 'MethodNotAllowed', `${action} is not supported on resources of kind "${qualified(gr)}"`, { group: gr.group, kind: gr.resource });

/** notAcceptable: 406 NotAcceptable. */
export const notAcceptable = (accepted: string[]) => err(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);

/** alreadyExists: 409 AlreadyExists. */
export const alreadyExists = (gr: GroupResource, name: string) =>
  err(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, { name, group: gr.group, kind: gr.resource });

/** conflict: 409 Conflict `Operation cannot be fulfilled on …: <why>`. */
export const conflict = (gr: GroupResource, name: string, why: string) =>
  err(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`, { name, group: gr.group, kind: gr.resource });

/** The message kube-apiserver gives for a stale resourceVersion. */
export const OBJECT_MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

/** expired: 410 Expired (never the deprecated Gone: the client-go pager only recognises Expired). */
export const expired = (message: string) => err(410, 'Expired', message);

/** tooLarge: 413 RequestEntityTooLarge. */
export const tooLarge = (message: string) => err(413, 'RequestEntityTooLarge', message);

/**
 * unsupportedMediaType: 415 worded as negotiation.NewUnsupportedMediaTypeError, a Status without details whose
 * message names `listed`; `accepted`, the types a body is really decoded from here, goes to the `Accept` header.
 */
export function unsupportedMediaType(listed: readonly string[], accepted: readonly string[] = listed): StatusError {
  const e = err(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${listed.join(', ')}`);
  e.acceptedMediaTypes = accepted;
  return e;
}

/** invalid: 422 Invalid `Website.extensions.example.com "x" is invalid: [a, b]` with one cause per field. */
export function invalid(kind: string, group: string, name: string, errors: FieldError[]): StatusError {
  // ErrorList.ToAggregate prints each message once; the causes keep every error (duplicates included).
  const list = [...new Set(errors.map((e) => e.message))];
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  const causes: StatusCause[] = errors.map((e) => ({ reason: e.type, message: messageWithoutField(e), field: e.field }));
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  // StatusDetails.Name is omitempty.
  return err(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${summary}`, { ...(name ? { name } : {}), group, kind, causes });
}

// A cause's message omits the leading "field: " because `field` carries it (as field.Error.ErrorBody does).
function messageWithoutField(e: FieldError): string {
  return e.message.startsWith(`${e.field}: `) ? e.message.slice(e.field.length + 2) : e.message;
}

/** invalidParams: 422 Invalid for bad query options (kind/name empty, as kube-apiserver reports ListOptions errors). */
export const invalidParams = (what: string, errors: FieldError[]) => invalid(what, '', '', errors);

/** internalError: 500 InternalError. */
export const internalError = (message: string) => err(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });

/**
 * serviceUnavailable: 503 ServiceUnavailable, as errors.NewServiceUnavailable ("the request itself was valid, but
 * the requested service is unavailable at this time"), with details.retryAfterSeconds (sent as Retry-After, which
 * makes client-go retry: rest/with_retry.go checkWait) when given.
 */
export const serviceUnavailable = (message: string, retryAfterSeconds?: number) =>
  new StatusError({ code: 503, reason: 'ServiceUnavailable', message, ...(retryAfterSeconds ? { details: { retryAfterSeconds } } : {}) });

/**
 * tooManyRequests: 429 TooManyRequests with details.retryAfterSeconds, as errors.NewTooManyRequests; the error handler
 * sends it as Retry-After, on which client-go and kubectl retry the request by themselves (rest/with_retry.go).
 */
export const tooManyRequests = (message: string, retryAfterSeconds: number) =>
  new StatusError({ code: 429, reason: 'TooManyRequests', message, details: { retryAfterSeconds } });

/** tooLargeResourceVersion: 504 Timeout with cause ResourceVersionTooLarge (client-go relists on it). */
export const tooLargeResourceVersion = (requested: string, current: string) =>
  new StatusError({
    code: 504,
    reason: 'Timeout',
    message: `Too large resource version: ${requested}, current: ${current}`,
    details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
  });

/**
 * successStatus: the Status a delete returns once the object is gone, as the generic registry store's finalizeDelete
 * builds it: without a code (only a deleter that returns nothing gets handlers/delete.go's Status with code 200).
 */
export function successStatus(gr: GroupResource, name: string, uid: string | undefined): Status {
  const details: StatusDetails = { name, group: gr.group, kind: gr.resource };
  if (uid) details.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

/**
 * timeout: 504 Timeout worded as errors.NewTimeoutError (`Timeout: <message>`, details with the retry hint, empty
 * when there is none).
 */
export const timeout = (message: string, retryAfterSeconds = 0) =>
  new StatusError({ code: 504, reason: 'Timeout', message: `Timeout: ${message}`, details: retryAfterSeconds ? { retryAfterSeconds } : {} });

/**
 * isNotFound tells a 404 from other failures, whoever raised it: our StatusError, or @kubernetes/client-node's
 * ApiException (both carry the HTTP code as `code`), as apimachinery's errors.IsNotFound reads a Status.
 */
export function isNotFound(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 404;
}

/** isConflict tells a 409 (a lost optimistic-concurrency race, or AlreadyExists) from other failures. */
export function isConflict(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 409;
}
