/**
 * Kubernetes discovery vocabulary: the documents' shapes (legacy /api, /apis; aggregated discovery v2 and
 * v2beta1; the OpenAPI v3 root), apimachinery's version priority, and how kube-apiserver negotiates and
 * tags discovery answers. Pure; the fleet's merges of these documents are in src/merge/discovery.ts.
 */

import { type MediaRange, parseAccept } from './negotiate.ts';

// ---------------------------------------------------------------------------------------------------
// Document shapes (only what the merge reads; everything else is carried through untouched)

export interface ServerAddressByClientCIDR {
  clientCIDR: string;
  serverAddress: string;
}

/** GET /api */
export interface APIVersions {
  kind: 'APIVersions';
  versions: string[];
  serverAddressByClientCIDRs?: ServerAddressByClientCIDR[];
  [k: string]: unknown;
}

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

/** GET /apis/<g>, and each entry of GET /apis */
export interface APIGroup {
  kind?: 'APIGroup';
  apiVersion?: string;
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion?: GroupVersionForDiscovery;
  serverAddressByClientCIDRs?: ServerAddressByClientCIDR[];
  [k: string]: unknown;
}

/** GET /apis */
export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion?: string;
  groups: APIGroup[];
  [k: string]: unknown;
}

export interface APIResource {
  name: string;
  singularName?: string;
  namespaced?: boolean;
  group?: string;
  version?: string;
  kind?: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
  [k: string]: unknown;
}

/** GET /api/v1, /apis/<g>/<v> */
export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion?: string;
  groupVersion: string;
  resources: APIResource[];
  [k: string]: unknown;
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface APISubresourceDiscovery {
  subresource: string;
  responseKind?: GroupVersionKind;
  acceptedTypes?: GroupVersionKind[];
  verbs?: string[];
  [k: string]: unknown;
}

export interface APIResourceDiscovery {
  resource: string;
  responseKind?: GroupVersionKind;
  scope?: 'Cluster' | 'Namespaced';
  singularResource?: string;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
  [k: string]: unknown;
}

export interface APIVersionDiscovery {
  version: string;
  resources?: APIResourceDiscovery[];
  freshness?: 'Current' | 'Stale' | string;
  [k: string]: unknown;
}

export interface APIGroupDiscovery {
  metadata?: { name?: string; [k: string]: unknown };
  versions?: APIVersionDiscovery[];
  [k: string]: unknown;
}

export type AggregatedVersion = 'v2' | 'v2beta1';

/** GET /api and /apis with `Accept: application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList` */
export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: string;
  metadata: Record<string, unknown>;
  items: APIGroupDiscovery[];
}

/** GET /openapi/v3 */
export interface OpenAPIV3Root {
  paths: Record<string, { serverRelativeURL: string }>;
}

// ---------------------------------------------------------------------------------------------------
// Version priority

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
const MAX_INT64 = 9223372036854775807n;

function parseKubeVersion(v: string): { major: bigint; type: number; minor: bigint } | undefined {
  const m = KUBE_VERSION.exec(v);
  if (!m) return undefined;
  const major = BigInt(m[1]!);
  const minor = m[3] === undefined ? 0n : BigInt(m[3]);
  // strconv.Atoi fails beyond int64: such a version is "not kube-like"
  if (major > MAX_INT64 || minor > MAX_INT64) return undefined;
  return { major, type: m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, minor };
}

/**
 * apimachinery `version.CompareKubeAwareVersionStrings`: > 0 when `a` has the higher priority. Kube-like
 * versions (v2, v1, v1beta2, v1beta1, v1alpha1) rank by GA > beta > alpha, then major, then minor; they
 * outrank any other string; other strings rank in reverse lexical order.
 */
export function compareKubeAwareVersions(a: string, b: string): number {
  if (a === b) return 0;
  const pa = parseKubeVersion(a);
  const pb = parseKubeVersion(b);
  if (!pa && !pb) return a < b ? 1 : a > b ? -1 : 0;
  if (!pa) return -1;
  if (!pb) return 1;
  if (pa.type !== pb.type) return pa.type - pb.type;
  if (pa.major !== pb.major) return pa.major > pb.major ? 1 : -1;
  return pa.minor === pb.minor ? 0 : pa.minor > pb.minor ? 1 : -1;
}

/** Sorts versions by Kubernetes version priority, highest first. */
export function sortByVersionPriority(versions: readonly string[]): string[] {
  return [...versions].sort((a, b) => compareKubeAwareVersions(b, a));
}

// ---------------------------------------------------------------------------------------------------
// Content negotiation (kube-apiserver's, restricted to what the fleet writes: JSON)

export type DiscoveryForm = { kind: 'legacy' } | { kind: 'aggregated'; version: AggregatedVersion };

function matchesJson(r: MediaRange): boolean {
  return (
    (r.type === '*' && r.subtype === '*') ||
    (r.type === 'application' && (r.subtype === '*' || r.subtype === 'json'))
  );
}

/**
 * What to answer for a discovery path, as kube-apiserver negotiates it: the first acceptable range wins.
 * A range asking for `as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2|v2beta1` selects aggregated
 * discovery where `aggregatedAllowed` (GET /api and /apis); a plain JSON range (or a wildcard) selects the
 * legacy document; a range asking for any other transformation, or any other media type (protobuf, YAML:
 * the fleet writes merged documents as JSON only), is skipped. No Accept at all means legacy JSON.
 * `undefined`: nothing acceptable (406).
 */
export function negotiateDiscovery(
  accept: string | null | undefined,
  aggregatedAllowed: boolean,
): DiscoveryForm | undefined {
  if (!accept?.trim()) return { kind: 'legacy' };
  for (const r of parseAccept(accept)) {
    if (!matchesJson(r)) continue;
    const { as, g, v } = r.params;
    if (as === undefined && g === undefined && v === undefined) return { kind: 'legacy' };
    if (
      aggregatedAllowed &&
      as === 'APIGroupDiscoveryList' &&
      g === 'apidiscovery.k8s.io' &&
      (v === 'v2' || v === 'v2beta1')
    )
      return { kind: 'aggregated', version: v };
  }
  return undefined;
}

/** The Content-Type aggregated discovery is answered with, exactly as kube-apiserver writes it. */
export function aggregatedContentType(version: AggregatedVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${version};as=APIGroupDiscoveryList`;
}

/** What the fleet asks upstreams for when it merges aggregated discovery: v2, then v2beta1, then legacy. */
export const AGGREGATED_UPSTREAM_ACCEPT = `${aggregatedContentType('v2')},${aggregatedContentType('v2beta1')},application/json`;

/** Which aggregated version an upstream answered with (from its Content-Type), or undefined for legacy. */
export function aggregatedVersionOf(contentType: string | null): AggregatedVersion | undefined {
  const r = parseAccept(contentType)[0];
  if (r?.params.as !== 'APIGroupDiscoveryList' || r.params.g !== 'apidiscovery.k8s.io') return undefined;
  return r.params.v === 'v2' || r.params.v === 'v2beta1' ? r.params.v : undefined;
}

/**
 * kube-apiserver's discovery ETag: the upper-case hex SHA-512 of the JSON body, quoted
 * (aggregated/etag.go). Web Crypto, so it runs on both runtimes.
 */
export async function discoveryETag(body: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-512', new TextEncoder().encode(body)));
  let hex = '';
  for (const b of digest) hex += b.toString(16).padStart(2, '0');
  return `"${hex.toUpperCase()}"`;
}

/** Does an If-None-Match header match `etag` (a list, `*`, or a weak form of it)? */
export function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(',')
    .map((t) => t.trim())
    .some((t) => t === '*' || t === etag || t === `W/${etag}`);
}
