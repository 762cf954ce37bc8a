/**
 * Wire helpers for the simulated kube-apiserver: response headers, JSON bodies, content negotiation.
 *
 * Negotiation itself is in negotiate.ts.
 */

import { stringify as toYaml } from 'yaml';
import {
  acceptsJson,
  type Encoding,
  type MediaRange,
  negotiateTarget,
  parseAccept,
  parseMediaType,
  type Target,
} from './negotiate.ts';
import { failure, type Status, statusResponse } from './status.ts';

export type { Encoding, MediaRange, Target };
export { acceptsJson, parseAccept, parseMediaType };

/**
 * Pick the response form for a resource request, or a 406 Status (negotiate.ts). `list`: the request returns
 * a collection; `protobuf`: the kind can be answered in protobuf (built-in kinds, once their codec exists).
 */
export function negotiateResource(
  accept: string | null,
  list: boolean,
  watch: boolean,
  protobuf = false,
): Target | Status {
  // a resource handler's 406 is the generic HTTP error's wording (measured on kube 1.35), not discovery's
  return (
    negotiateTarget(accept, { list, watch, protobuf }) ??
    failure(
      406,
      'NotAcceptable',
      `406: Not Acceptable\n\nAvailable representations: application/json, application/yaml${protobuf ? ', application/vnd.kubernetes.protobuf' : ''}`,
      {},
    )
  );
}

export function notAcceptable(): Status {
  return failure(
    406,
    'NotAcceptable',
    'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf',
  );
}

export function unsupportedMediaType(accepted: string[]): Status {
  return failure(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

export const BODY_TYPES = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

export function jsonResponse(body: unknown, status = 200, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  if (!h.has('Content-Type')) h.set('Content-Type', 'application/json');
  h.set('Cache-Control', 'no-cache, private');
  // Go's json.Encoder, which kube-apiserver's serializer writes with, ends every value with a newline
  return new Response(`${JSON.stringify(body)}\n`, { status, headers: h });
}

/** A resource body in the negotiated encoding: JSON, or YAML when the client asked for application/yaml. */
export function objectResponse(target: Target, body: unknown, status = 200): Response {
  if (target.as === 'object' && target.yaml) {
    return new Response(toYaml(body), {
      status,
      headers: { 'Content-Type': 'application/yaml', 'Cache-Control': 'no-cache, private' },
    });
  }
  return jsonResponse(body, status);
}

export function textResponse(
  body: string,
  status = 200,
  contentType = 'text/plain; charset=utf-8',
): Response {
  return new Response(body, {
    status,
    headers: { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private' },
  });
}

/** Go's http.NotFound, which kube-apiserver's mux answers for paths nothing is registered at. */
export function pageNotFound(): Response {
  return new Response('404 page not found\n', {
    status: 404,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' },
  });
}

export { statusResponse };

/** Thrown anywhere in the request path; the router turns it into a Status response. */
export class StatusError extends Error {
  /** Warning header texts the failed request still carries (an API's deprecation) */
  warnings: string[] = [];
  constructor(readonly status: Status) {
    super(status.message ?? status.reason ?? 'error');
  }
}

export function isStatus(x: unknown): x is Status {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'Status';
}

/** Apply the headers every kube-apiserver response carries (audit id, APF uids, date). */
export function decorate(res: Response, extra: Record<string, string>): Response {
  let headers: Headers;
  try {
    for (const [k, v] of Object.entries(extra)) if (!res.headers.has(k)) res.headers.set(k, v);
    return res;
  } catch {
    // immutable headers (a Response from elsewhere): rebuild around the same body
    headers = new Headers(res.headers);
    for (const [k, v] of Object.entries(extra)) if (!headers.has(k)) headers.set(k, v);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }
}
