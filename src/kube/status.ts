/**
 * Kubernetes `Status` objects (meta/v1) exactly as kube-apiserver writes them.
 *
 * Field order follows the apiserver's JSON encoder (kind, apiVersion, metadata, status, message, reason,
 * details, code) so that bodies compare byte for byte with real ones (see shared/fixtures/kube-wire).
 * Pure: no I/O. Both the fleet's own errors and the simulated clusters use these builders.
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

export function failure(
  code: number,
  reason: StatusReason,
  message: string,
  details?: StatusDetails,
): Status {
  const s: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  };
  if (details) {
    // keep the apiserver's key order: details comes before code
    const { code: c, ...rest } = s;
    return { ...rest, details, code: c } as Status;
  }
  return s;
}

export function success(details?: StatusDetails): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };
  if (details) {
    const { code, ...rest } = s;
    return { ...rest, details, code } as Status;
  }
  return s;
}

/** `kind` in StatusDetails is the resource (plural), as the apiserver writes it: `deployments`, `pods`. */
export function notFound(resource: string, group: string, name: string): Status {
  return failure(404, 'NotFound', `${qualified(resource, group)} "${name}" not found`, {
    name,
    ...(group ? { group } : {}),
    kind: resource,
  });
}

export function alreadyExists(resource: string, group: string, name: string): Status {
  return failure(409, 'AlreadyExists', `${qualified(resource, group)} "${name}" already exists`, {
    name,
    ...(group ? { group } : {}),
    kind: resource,
  });
}

export function conflict(resource: string, group: string, name: string, why: string): Status {
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(resource, group)} "${name}": ${why}`,
    { name, ...(group ? { group } : {}), kind: resource },
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
    {
      ...(group ? { group } : {}),
      kind: resource,
    },
  );
}

export function serviceUnavailable(message: string, retryAfterSeconds?: number): Status {
  return failure(503, 'ServiceUnavailable', message, retryAfterSeconds ? { retryAfterSeconds } : undefined);
}

export function gatewayTimeout(message: string): Status {
  return failure(504, 'Timeout', message);
}

export function internalError(message: string): Status {
  return failure(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ message }],
  });
}

/** `deployments.apps` for named groups, `pods` for the core group: the apiserver's qualified resource. */
export function qualified(resource: string, group: string): string {
  return group ? `${resource}.${group}` : resource;
}

/** A Status as an HTTP response, with the headers kube-apiserver sends on errors. */
export function statusResponse(status: Status, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set('Content-Type', 'application/json');
  h.set('Cache-Control', 'no-cache, private');
  if (status.details?.retryAfterSeconds) h.set('Retry-After', String(status.details.retryAfterSeconds));
  return new Response(JSON.stringify(status), { status: status.code, headers: h });
}

/**
 * 422 Invalid as apierrors.NewInvalid builds it. `causes` carry field.Error's Type as reason, its ErrorBody
 * (`Required value: …`, `Invalid value: "x": …`, `Forbidden: …`) as message and its path as field.
 * `kind` is the Kind (not the resource): `Pod`, `Deployment` with group `apps`, `ListOptions` with `meta.k8s.io`.
 */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): Status {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  const errs = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : (c.message ?? '')));
  const agg = errs.length === 0 ? '' : errs.length === 1 ? `: ${errs[0]}` : `: [${errs.join(', ')}]`;
  return failure(422, 'Invalid', `${qualifiedKind} "${name}" is invalid${agg}`, {
    ...(name ? { name } : {}),
    ...(group ? { group } : {}),
    kind,
    causes,
  });
}
