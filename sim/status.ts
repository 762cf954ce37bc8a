/**
 * meta/v1 Status bodies as kube-apiserver writes them, for the simulated clusters only.
 *
 * Written from apimachinery's `pkg/api/errors` constructors and apiserver's `responsewriters` (not shared
 * with the fleet's src/: the simulator is the oracle the fleet is tested against, so it must not reuse the
 * code it checks). What kube does and this file copies:
 * - field order of the Go struct: kind, apiVersion, metadata, status, message, reason, details, code;
 * - `json.Encoder` ends every body with a newline (shared/fixtures/kube-wire/status_404_notfound.json);
 * - the 5xx constructors fill `details`: NewInternalError the cause, NewTimeoutError / NewServerTimeout /
 *   NewTooManyRequests the retry hint (an empty `details: {}` when it is zero), NewServiceUnavailable none.
 */

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout'
  | 'ServerTimeout'
  | 'Unknown';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason | string;
  details?: StatusDetails;
  code: number;
}

/** A Failure in the Go struct's field order; `details` only when given (Go's omitempty on a nil pointer). */
export function failure(code: number, reason: string, message: string, details?: StatusDetails): Status {
  const s: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
  } as Status;
  if (details) s.details = details;
  s.code = code;
  return s;
}

export function success(details?: StatusDetails): Status {
  const s = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' } as Status;
  if (details) s.details = details;
  s.code = 200;
  return s;
}

/** `pods`, `deployments.apps`: schema.GroupResource's String(). */
export function qualified(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

function resourceDetails(resource: string, group: string, name?: string): StatusDetails {
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (group) d.group = group;
  d.kind = resource;
  return d;
}

export function notFound(resource: string, group: string, name: string): Status {
  return failure(
    404,
    'NotFound',
    `${qualified(resource, group)} "${name}" not found`,
    resourceDetails(resource, group, name),
  );
}

export function alreadyExists(resource: string, group: string, name: string): Status {
  return failure(
    409,
    'AlreadyExists',
    `${qualified(resource, group)} "${name}" already exists`,
    resourceDetails(resource, group, name),
  );
}

export function conflict(resource: string, group: string, name: string, why: string): Status {
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(resource, group)} "${name}": ${why}`,
    resourceDetails(resource, group, name),
  );
}

export function badRequest(message: string): Status {
  return failure(400, 'BadRequest', message);
}

export function expired(message: string): Status {
  return failure(410, 'Expired', message);
}

export function methodNotSupported(resource: string, group: string, verb: string): Status {
  return failure(
    405,
    'MethodNotAllowed',
    `${verb} is not supported on resources of kind "${qualified(resource, group)}"`,
    resourceDetails(resource, group),
  );
}

/**
 * go-restful's 405 for a method the path has no route for (POST to a named object, PUT or PATCH to a
 * collection), as apierrors.NewGenericServerResponse writes it: no resource, no cause.
 */
export function noRouteForMethod(): Status {
  return failure(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
}

/** NewInternalError: the message prefixed, the error itself as the one cause. */
export function internalError(message: string): Status {
  return failure(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/** NewServiceUnavailable: no details at all. */
export function serviceUnavailable(message: string): Status {
  return failure(503, 'ServiceUnavailable', message);
}

/** NewTimeoutError: 504, `Timeout: ` prefix, details always present (empty when no retry hint). */
export function timeout(message: string, retryAfterSeconds = 0): Status {
  return failure(504, 'Timeout', `Timeout: ${message}`, retryAfterSeconds ? { retryAfterSeconds } : {});
}

/** NewTooManyRequests. */
export function tooManyRequests(message: string, retryAfterSeconds = 0): Status {
  return failure(429, 'TooManyRequests', message, retryAfterSeconds ? { retryAfterSeconds } : {});
}

/**
 * A Status for a code and reason the way the matching apierrors constructor would build it (used by the
 * fault knobs, which name only code, reason and message): the 5xx ones get the details kube gives them.
 */
export function statusFor(code: number, reason: string, message: string): Status {
  if (code === 500 && reason === 'InternalError') {
    const m = message.startsWith('Internal error occurred: ') ? message.slice(25) : message;
    return internalError(m);
  }
  if (reason === 'Timeout' || reason === 'ServerTimeout' || reason === 'TooManyRequests')
    return failure(code, reason, message, {});
  return failure(code, reason, message);
}

/**
 * 422 as apierrors.NewInvalid builds it: causes carry field.Error's type, body and path; the message
 * aggregates them (`: x` for one, `: [x, y]` for several). `kind` is the Kind, not the resource.
 */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): Status {
  const gk = group ? `${kind}.${group}` : kind;
  const errs = causes.map((c) => (c.field ? `${c.field}: ${c.message ?? ''}` : (c.message ?? '')));
  let agg = '';
  if (errs.length === 1) agg = `: ${errs[0]}`;
  else if (errs.length > 1) agg = `: [${errs.join(', ')}]`;
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (group) d.group = group;
  d.kind = kind;
  d.causes = causes;
  return failure(422, 'Invalid', `${gk} "${name}" is invalid${agg}`, d);
}

/** The body bytes: JSON plus the newline Go's json.Encoder writes after every value. */
export function statusBody(status: Status): string {
  return `${JSON.stringify(status)}\n`;
}

/** A Status as kube-apiserver answers it: its code, JSON, no-cache, Retry-After when details carry one. */
export function statusResponse(status: Status, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set('Content-Type', 'application/json');
  h.set('Cache-Control', 'no-cache, private');
  if (status.details?.retryAfterSeconds) h.set('Retry-After', String(status.details.retryAfterSeconds));
  return new Response(statusBody(status), { status: status.code, headers: h });
}

/** Who asked for what, as the authorizer saw it (authorizer.Attributes). */
export interface ForbiddenAttributes {
  user: string;
  verb: string;
  resource?: string;
  subresource?: string;
  apiGroup?: string;
  namespace?: string;
  name?: string;
  /** non-resource requests */
  path?: string;
}

/** Go's %q for the names kube quotes (JSON string escaping agrees with it for everything a name holds). */
const goQuote = (s: string): string => JSON.stringify(s);

/**
 * responsewriters.Forbidden: forbiddenMessage's sentence, wrapped by apierrors.NewForbidden with the
 * group-resource and name (a non-resource request gets `forbidden: …` and empty details).
 */
export function forbidden(a: ForbiddenAttributes, reason?: string): Status {
  let msg: string;
  if (a.resource === undefined) {
    msg = `User ${goQuote(a.user)} cannot ${a.verb} path ${goQuote(a.path ?? '')}`;
  } else {
    const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    const where = a.namespace ? `in the namespace ${goQuote(a.namespace)}` : 'at the cluster scope';
    msg = `User ${goQuote(a.user)} cannot ${a.verb} resource ${goQuote(res)} in API group ${goQuote(a.apiGroup ?? '')} ${where}`;
  }
  const err = reason ? `${msg}: ${reason}` : msg;
  const resource = a.resource ?? '';
  const group = a.apiGroup ?? '';
  let message: string;
  if (!resource && !group) message = `forbidden: ${err}`;
  else if (!a.name) message = `${qualified(resource, group)} is forbidden: ${err}`;
  else message = `${qualified(resource, group)} ${goQuote(a.name)} is forbidden: ${err}`;
  const d: StatusDetails = {};
  if (a.name) d.name = a.name;
  if (group) d.group = group;
  if (resource) d.kind = resource;
  return failure(403, 'Forbidden', message, d);
}
