/**
 * 403 Forbidden and 401 Unauthorized Statuses exactly as kube-apiserver writes them
 * (responsewriters.Forbidden → apierrors.NewForbidden; filters.Unauthorized → apierrors.NewUnauthorized):
 *
 *   pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope
 *   pods "web" is forbidden: User "alice" cannot get resource "pods/log" in API group "" in the namespace "x"
 *   forbidden: User "alice" cannot get path "/api"
 *
 * A reason, when there is one, follows after ": ". Shared by the fleet's own filters and the simulated
 * clusters' RBAC, so both speak the same words.
 */
import { failure, type Status, statusResponse } from '../kube/status.ts';

export interface Attributes {
  user: string;
  verb: string;
  /** resource requests */
  resource?: string;
  subresource?: string;
  apiGroup?: string;
  namespace?: string;
  name?: string;
  /** non-resource requests */
  path?: string;
}

export function forbiddenMessage(a: Attributes): string {
  if (!a.resource) return `User "${a.user}" cannot ${a.verb} path "${a.path ?? ''}"`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const group = a.apiGroup ?? '';
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return `User "${a.user}" cannot ${a.verb} resource "${resource}" in API group "${group}" ${scope}`;
}

export function forbidden(a: Attributes, reason?: string): Status {
  const msg = forbiddenMessage(a);
  const err = reason ? `${msg}: ${reason}` : msg;
  if (!a.resource) return failure(403, 'Forbidden', `forbidden: ${err}`, {});
  const group = a.apiGroup ?? '';
  const gr = group ? `${a.resource}.${group}` : a.resource;
  const message = a.name ? `${gr} "${a.name}" is forbidden: ${err}` : `${gr} is forbidden: ${err}`;
  return failure(403, 'Forbidden', message, {
    ...(a.name ? { name: a.name } : {}),
    ...(group ? { group } : {}),
    kind: a.resource,
  });
}

/** 401 as kube-apiserver answers it, plus the challenge RFC 7235 asks of a 401. */
export function unauthorizedResponse(tokenRefused: boolean): Response {
  return statusResponse(failure(401, 'Unauthorized', 'Unauthorized'), {
    'WWW-Authenticate': tokenRefused
      ? 'Bearer realm="fleet-apiserver", error="invalid_token"'
      : 'Bearer realm="fleet-apiserver"',
  });
}
