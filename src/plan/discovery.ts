/**
 * Which discovery document a non-resource path asks for, and the small pure decisions around the merged
 * answers (cache keys, where a redirect points). No I/O.
 */
import type { RequestInfo } from '../request/info.ts';

export type DiscoveryPath =
  | { kind: 'version' }
  | { kind: 'root'; which: 'api' | 'apis' }
  | { kind: 'group'; group: string }
  | { kind: 'resources'; group: string; version: string }
  | { kind: 'openapi-v3-root' }
  | { kind: 'openapi-v3-doc'; gv: string }
  | { kind: 'openapi-v2' };

/** The OpenAPI paths (src/routes/openapi.ts); the rest are discovery documents (src/routes/discovery.ts). */
export type OpenAPIPath = Extract<
  DiscoveryPath,
  { kind: 'openapi-v2' | 'openapi-v3-root' | 'openapi-v3-doc' }
>;
export type DocumentPath = Exclude<DiscoveryPath, OpenAPIPath>;

export function isOpenAPIPath(p: DiscoveryPath): p is OpenAPIPath {
  return p.kind === 'openapi-v2' || p.kind === 'openapi-v3-root' || p.kind === 'openapi-v3-doc';
}

/** The discovery document `kubePath` names, or undefined for any other non-resource path (404). */
export function classifyDiscovery(kubePath: string): DiscoveryPath | undefined {
  const segs = kubePath.split('/').filter(Boolean);
  const [a, b, c, ...rest] = segs;
  if (a === 'version' && segs.length === 1) return { kind: 'version' };
  if (a === 'api') {
    if (segs.length === 1) return { kind: 'root', which: 'api' };
    if (segs.length === 2) return { kind: 'resources', group: '', version: b! };
    return undefined;
  }
  if (a === 'apis') {
    if (segs.length === 1) return { kind: 'root', which: 'apis' };
    if (segs.length === 2) return { kind: 'group', group: b! };
    if (segs.length === 3) return { kind: 'resources', group: b!, version: c! };
    return undefined;
  }
  if (a === 'openapi') {
    if (b === 'v2' && segs.length === 2) return { kind: 'openapi-v2' };
    if (b === 'v3' && segs.length === 2) return { kind: 'openapi-v3-root' };
    if (b === 'v3' && c !== undefined) return { kind: 'openapi-v3-doc', gv: [c, ...rest].join('/') };
  }
  return undefined;
}

/** Who asks, as far as discovery answers may differ between callers (each cluster's RBAC filters them). */
export interface CallerKey {
  user: string;
  groups: readonly string[];
  uid?: string;
  extra?: Record<string, readonly string[]>;
}

/** The cache key of a merged document: the clusters asked, the caller, and the document's own parts. */
export function discoveryCacheKey(
  clusters: readonly { cluster: string }[],
  caller: CallerKey | undefined,
  ...parts: string[]
): string {
  const who = caller
    ? JSON.stringify([caller.user, caller.groups, caller.uid ?? '', caller.extra ?? {}])
    : '';
  return JSON.stringify([clusters.map((t) => t.cluster), who, ...parts]);
}

/** The path prefix the client used in front of the Kubernetes path (`/clusterspaces/all`, or nothing). */
export function clientPrefix(info: Pick<RequestInfo, 'rawPath' | 'kubePath'>): string {
  return info.rawPath.endsWith(info.kubePath) ? info.rawPath.slice(0, -info.kubePath.length) : '';
}

/**
 * kube-openapi redirects a stale `?hash=` to `/openapi/v3/<gv>?hash=<current>` (a server-absolute path):
 * keep it pointing at the fleet, under the prefix the client used, whatever proxy path the upstream saw.
 */
export function openapiLocation(prefix: string): (loc: string) => string {
  return (loc) => {
    let path = loc;
    try {
      const u = new URL(loc, 'http://upstream.invalid');
      path = u.pathname + u.search;
    } catch {
      return loc;
    }
    const i = path.indexOf('/openapi/v3/');
    return i < 0 ? loc : prefix + path.slice(i);
  };
}
