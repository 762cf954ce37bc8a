/**
 * Non-resource GET paths: /version, discovery (legacy documents and aggregated discovery with its
 * content negotiation, ETag and Vary), OpenAPI v2 and v3.
 */

import type { Catalog } from './catalog/types.ts';
import {
  acceptsJson,
  jsonResponse,
  notAcceptable,
  pageNotFound,
  parseAccept,
  statusResponse,
  textResponse,
} from './http.ts';
import { failure } from './status.ts';

function hashHex(s: string): string {
  // two FNV-1a 32-bit lanes: cheap, synchronous, stable; only used as an ETag
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x5bd1e995) >>> 0;
  }
  return `${a.toString(16).padStart(8, '0')}${b.toString(16).padStart(8, '0')}`.toUpperCase();
}

function withEtag(
  req: Request,
  body: string,
  contentType: string,
  extra: Record<string, string> = {},
): Response {
  const etag = `"${hashHex(body)}"`;
  const headers: Record<string, string> = {
    'Content-Type': contentType,
    'Cache-Control': 'no-cache, private',
    Vary: 'Accept',
    ETag: etag,
    ...extra,
  };
  const inm = req.headers.get('if-none-match');
  if (inm?.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}`)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(req.method === 'HEAD' ? null : body, { status: 200, headers });
}

/** For /api and /apis: which document the Accept header asks for. */
function aggregatedVersion(accept: string | null): 'v2' | 'v2beta1' | 'legacy' | undefined {
  for (const r of parseAccept(accept)) {
    if (!acceptsJson(r)) continue;
    if (r.params['as'] === 'APIGroupDiscoveryList' && r.params['g'] === 'apidiscovery.k8s.io') {
      if (r.params['v'] === 'v2' || r.params['v'] === 'v2beta1') return r.params['v'];
      continue;
    }
    if (!r.params['as']) return 'legacy';
  }
  return undefined;
}

function serveRoot(catalog: Catalog, req: Request, which: 'legacy' | 'apis'): Response {
  const v = aggregatedVersion(req.headers.get('accept'));
  if (v === undefined) return statusResponse(notAcceptable());
  if (v === 'legacy') {
    const body = `${JSON.stringify(which === 'legacy' ? catalog.legacyApi() : catalog.apiGroupList())}\n`;
    return withEtag(req, body, 'application/json');
  }
  // the serializer's json.Encoder ends the document with a newline, as for every API object
  const body = `${JSON.stringify(catalog.aggregated(which, v))}\n`;
  return withEtag(req, body, `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`);
}

const OPENAPI_V2_PROTO = [
  'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
  'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
];

function wantsJson(accept: string | null): boolean {
  return parseAccept(accept).some(acceptsJson);
}

/** undefined: not a discovery/OpenAPI path. */
export function serveDiscovery(catalog: Catalog, req: Request, path: string): Response | undefined {
  const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
  const accept = req.headers.get('accept');
  if (p === '/version')
    // the version handler writes json.MarshalIndent output (two spaces, no trailing newline)
    return textResponse(JSON.stringify(catalog.version(), null, 2), 200, 'application/json');
  if (p === '/api') return serveRoot(catalog, req, 'legacy');
  if (p === '/apis') return serveRoot(catalog, req, 'apis');
  let m = /^\/api\/([^/]+)$/.exec(p);
  if (m) {
    const doc = catalog.apiResourceList('', m[1]!);
    // the legacy group's handler owns /api/*: a version it does not serve is a NotFound Status, not a page
    if (doc === undefined)
      return statusResponse(failure(404, 'NotFound', 'the server could not find the requested resource', {}));
    return jsonResponse(doc);
  }
  m = /^\/apis\/([^/]+)$/.exec(p);
  if (m) {
    const doc = catalog.apiGroup(m[1]!);
    return doc === undefined ? pageNotFound() : jsonResponse(doc);
  }
  m = /^\/apis\/([^/]+)\/([^/]+)$/.exec(p);
  if (m) {
    const doc = catalog.apiResourceList(m[1]!, m[2]!);
    return doc === undefined ? pageNotFound() : jsonResponse(doc);
  }
  if (p === '/openapi/v2') {
    // kube-openapi negotiates JSON or protobuf; the sim only writes JSON
    if (!wantsJson(accept)) {
      const onlyProto = parseAccept(accept).some((r) => OPENAPI_V2_PROTO.includes(`${r.type}/${r.subtype}`));
      if (onlyProto)
        return new Response('406 Not Acceptable\n', {
          status: 406,
          headers: { 'Content-Type': 'text/plain; charset=utf-8' },
        });
    }
    return withEtag(req, JSON.stringify(catalog.openapiV2()), 'application/json');
  }
  if (p === '/openapi/v3') return withEtag(req, JSON.stringify(catalog.openapiV3Root()), 'application/json');
  m = /^\/openapi\/v3\/(.+)$/.exec(p);
  if (m) {
    const doc = catalog.openapiV3(m[1]!);
    if (doc === undefined) return pageNotFound();
    if (!wantsJson(accept)) {
      return new Response('406 Not Acceptable\n', {
        status: 406,
        headers: { 'Content-Type': 'text/plain; charset=utf-8' },
      });
    }
    const url = new URL(req.url);
    // a hashed URL is immutable: clients cache it forever
    const extra: Record<string, string> = url.searchParams.get('hash')
      ? {
          'Cache-Control': 'public, immutable',
          Expires: new Date(Date.now() + 365 * 86400_000).toUTCString(),
        }
      : {};
    return withEtag(req, JSON.stringify(doc), 'application/json', extra);
  }
  return undefined;
}
