/**
 * Wire helpers for the simulated kube-apiserver: response headers, JSON bodies, content negotiation.
 *
 * kube-apiserver negotiates with goautoneg: media ranges sorted by q, then specificity (concrete type,
 * concrete subtype, more parameters), stable otherwise. kubectl relies on that to get a Table first and
 * a plain object as the fallback.
 */

import { stringify as toYaml } from 'yaml';
import {
  acceptsJson,
  type MediaRange,
  parseAccept as parseAcceptRanges,
  parseMediaType,
} from '../src/kube/negotiate.ts';
import { failure, type Status, statusResponse } from '../src/kube/status.ts';

export type { MediaRange };
export { acceptsJson, parseMediaType };

/** The client's Accept ranges (src/kube/negotiate.ts); no header means anything. */
export function parseAccept(header: string | null): MediaRange[] {
  const ranges = parseAcceptRanges(header);
  return ranges.length ? ranges : [{ type: '*', subtype: '*', params: {}, q: 1 }];
}

export type Target =
  | { as: 'object'; yaml?: boolean }
  | { as: 'Table'; version: string }
  | { as: 'PartialObjectMetadata'; version: string }
  | { as: 'PartialObjectMetadataList'; version: string };

/**
 * Pick the response form for a resource request, or a 406 Status.
 * `list` tells whether the request returns a collection (PartialObjectMetadataList is only valid there).
 */
export function negotiateResource(accept: string | null, list: boolean, watch: boolean): Target | Status {
  for (const r of parseAccept(accept)) {
    const yaml = r.type === 'application' && r.subtype === 'yaml';
    if (!acceptsJson(r) && !(yaml && !watch)) continue;
    const as = r.params['as'];
    if (!as) return yaml ? { as: 'object', yaml: true } : { as: 'object' };
    if (r.params['g'] !== 'meta.k8s.io' || yaml) continue;
    const version = r.params['v'] ?? '';
    if (version !== 'v1' && version !== 'v1beta1') continue;
    if (as === 'Table') return { as: 'Table', version };
    if (as === 'PartialObjectMetadata' && (!list || watch)) return { as: 'PartialObjectMetadata', version };
    if (as === 'PartialObjectMetadataList' && list) {
      return watch ? { as: 'PartialObjectMetadata', version } : { as: 'PartialObjectMetadataList', version };
    }
  }
  return notAcceptable();
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
  return new Response(JSON.stringify(body), { status, headers: h });
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
