/**
 * Kubernetes `Status` objects (meta/v1) exactly as kube-apiserver writes them.
 *
 * Field order follows the apiserver's JSON encoder (kind, apiVersion, metadata, status, message, reason,
 * details, code) so that bodies compare byte for byte with real ones (see shared/fixtures/kube-wire).
 * Pure: no I/O. Both the fleet's own errors and the simulated clusters use these builders.
 */
import { kubeJson } from './json.ts';

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

/**
 * What kube-apiserver answers for a method no route of the path takes (`POST` to a named object, `PUT` or
 * `PATCH` to a collection): go-restful's 405, written as apierrors.NewGenericServerResponse writes it
 * (no resource, no cause: `"details":{}`).
 */
export function methodNotAllowedOnPath(): Status {
  return failure(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
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

/**
 * The code of a request whose client went away before its answer (nginx's "client closed request"): no
 * body, nobody reads it; what access logs and the request metrics show instead of a 5xx, since nothing
 * failed on the server's side (src/middleware/recovery, src/metrics/fleet.ts).
 */
export const CLIENT_CLOSED_REQUEST = 499;

/** A Status as an HTTP response, with the headers kube-apiserver sends on errors. */
export function statusResponse(status: Status, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set('Content-Type', 'application/json');
  h.set('Cache-Control', 'no-cache, private');
  if (status.details?.retryAfterSeconds) h.set('Retry-After', String(status.details.retryAfterSeconds));
  return new Response(kubeJson(status), { status: status.code, headers: h });
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

/** How much of an upstream's non-Status body is quoted back (an HTML error page must not be relayed whole). */
const SERVER_MESSAGE_MAX = 256;

/**
 * The Status for an upstream answer that carried none (a proxy's `431 Request Header Fields Too Large`
 * in text, an HTML 502 page), as client-go's apierrors.NewGenericServerResponse builds it: the answer's
 * own code, the reason that code means, and the server's text as an UnexpectedServerResponse cause. So a
 * 4xx stays a 4xx for the client, never a 503 of the fleet's.
 */
export function genericServerResponse(code: number, serverText: string, verb = 'GET'): Status {
  const serverMessage = serverText.trim().slice(0, SERVER_MESSAGE_MAX);
  let reason: StatusReason = 'Unknown';
  let message = `the server responded with the status code ${code} but did not return more information`;
  switch (code) {
    case 409:
      reason = verb === 'POST' ? 'AlreadyExists' : 'Conflict';
      message = 'the server reported a conflict';
      break;
    case 404:
      reason = 'NotFound';
      message = 'the server could not find the requested resource';
      break;
    case 400:
      reason = 'BadRequest';
      message = 'the server rejected our request for an unknown reason';
      break;
    case 401:
      reason = 'Unauthorized';
      message = 'the server has asked for the client to provide credentials';
      break;
    case 403:
      reason = 'Forbidden';
      // the text says who tried what: kube keeps it as the message
      message = serverMessage;
      break;
    case 405:
      reason = 'MethodNotAllowed';
      message = 'the server does not allow this method on the requested resource';
      break;
    case 422:
      reason = 'Invalid';
      message = 'the server rejected our request due to an error in our request';
      break;
    case 503:
      reason = 'ServiceUnavailable';
      message = 'the server is currently unable to handle the request';
      break;
    case 504:
      reason = 'Timeout';
      message =
        'the server was unable to return a response in the time allotted, but may still be processing the request';
      break;
    case 429:
      reason = 'TooManyRequests';
      message = 'the server has received too many requests and has asked us to try again later';
      break;
    default:
      if (code >= 500) {
        reason = 'InternalError';
        message = `an error on the server (${JSON.stringify(serverMessage)}) has prevented the request from succeeding`;
      }
  }
  return failure(code, reason, message, {
    causes: [{ reason: 'UnexpectedServerResponse', message: serverMessage }],
  });
}

/**
 * The Status an upstream error answer means: its own body when that is a Status, else
 * {@link genericServerResponse} for its code. `code` is the HTTP status (a Status body's code wins only
 * when it is a real error code).
 */
export function statusOfAnswer(code: number, body: string, verb = 'GET'): Status {
  try {
    const v = JSON.parse(body) as Partial<Status> | null;
    if (v && typeof v === 'object' && v.kind === 'Status' && typeof v.code === 'number' && v.code >= 400)
      return v as Status;
  } catch {
    // not JSON: a proxy's or a load balancer's text
  }
  return genericServerResponse(code, body, verb);
}

/** A body's text as the Status it is (`kind: Status`), or undefined (not JSON: a proxy's or a load balancer's text). */
export function parseStatus(text: string): Status | undefined {
  try {
    const v = JSON.parse(text);
    if (v && typeof v === 'object' && v.kind === 'Status') return v as Status;
  } catch {
    // not JSON
  }
  return undefined;
}

/**
 * The Status an upstream error answer means, for the callers that read one (lists, watches, warnings):
 * - its body, when that is a Status;
 * - a 4xx without one (a proxy's bodyless `431`, a `404 page not found` in text): kube's generic Status for
 *   that code ({@link genericServerResponse}, what client-go's NewGenericServerResponse builds), so the
 *   client still sees the refusal as a 4xx of the same code, never a 503 of the fleet's;
 * - anything else (a 2xx, or a 5xx without a Status: a proxy's or load balancer's error page): none; the
 *   cluster could not really answer, and the caller's own handling (a Warning, its 503) applies.
 * Merging several clusters' refusals (kube has no rule: one apiserver answers alone, so the fleet answers
 * as a single cluster would): a merged list none served answers the first refusal in fleet order
 * (list/route.ts); discovery answers a refusal only when every cluster gave the same 4xx, else a 503
 * (routes/gather.ts judge). Either way a bodyless 431 from every cluster stays a 431.
 */
export async function readStatus(res: Response): Promise<Status | undefined> {
  const text = await res.text().catch(() => '');
  const status = parseStatus(text);
  if (status) return status;
  if (res.status >= 400 && res.status < 500) return genericServerResponse(res.status, text);
  return undefined;
}
