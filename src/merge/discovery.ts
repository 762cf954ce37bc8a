/**
 * Discovery across the fleet: pure merges of what each cluster's discovery endpoints return.
 *
 * Inputs are always `{ cluster, doc }` in the fleet's cluster order (control plane first, then members by
 * name). The rules, applied the same way to every document:
 *
 * - **Union.** A group, group-version or resource served by any cluster appears; one served by several
 *   appears once. Where clusters disagree on an entry's details (verbs, short names, categories, kind,
 *   storageVersionHash…), **the first cluster in fleet order wins** the whole entry. Subresources of a
 *   resource are unioned the same way (first cluster wins each), so the aggregated document lists what
 *   the legacy one does.
 * - **Order.** kube-apiserver orders groups by APIService priority and versions by version priority; a
 *   fleet of clusters of the same Kubernetes minor lists them identically. The merged order is the
 *   topological consensus of every cluster's order, as kube-apiserver's own peer-merged discovery does
 *   (apimachinery `util/sort.SortDiscoveryGroupsTopo`): if one cluster lists every entry, its order is
 *   used as is; otherwise an entry only some clusters know lands between the neighbours those clusters give
 *   it, and entries nothing orders relative to each other fall back to a fixed tie-break (names
 *   lexically for groups and resources, Kubernetes version priority for versions). Computed with Kahn's
 *   algorithm so that the result is deterministic even when clusters contradict each other.
 * - **Preferred version.** Of a group's versions, the highest-priority one that *every* cluster serving
 *   the group serves (so that `kubectl get` of the group's resources reaches every cluster); when the
 *   clusters share none, the highest-priority version overall. Priority is the consensus order above,
 *   whose tie-break is `version.CompareKubeAwareVersionStrings` (GA > beta > alpha, higher numbers
 *   first). The preferred version is listed first, as in kube-apiserver's documents (aggregated
 *   discovery has no other way to say which version is preferred).
 *
 * Aggregated discovery v2 and v2beta1 have the same shape; the merge reads either and writes the version
 * it is asked for. No I/O here; the handlers are in src/routes/discovery.ts.
 */

import { type MediaRange, parseAccept } from '../kube/negotiate.ts';

// ---------------------------------------------------------------------------------------------------
// Document shapes (only what the merge reads; everything else is carried through untouched)

export interface ClusterDoc<T> {
  cluster: string;
  doc: T;
}

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
// Version priority and consensus order

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

const lexical = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byPriority = (a: string, b: string) => compareKubeAwareVersions(b, a);

/**
 * One order that respects every list's relative order when the lists agree (a topological sort of the
 * "comes right before" relation of all lists). Ties — entries no list orders relative to each other — go
 * by `tie` (< 0: `a` first); if several entries tie equally, the one seen first (lists in the given order)
 * goes first. If one list holds every entry, it is the answer as is (kube-apiserver's shortcut). When
 * lists contradict each other (a cycle), the best remaining entry by `tie` is taken next, so the result
 * is still deterministic and contains every entry exactly once.
 */
export function consensusOrder(
  lists: ReadonlyArray<readonly string[]>,
  tie: (a: string, b: string) => number,
): string[] {
  const items: string[] = [];
  const next = new Map<string, Set<string>>();
  const indegree = new Map<string, number>();
  for (const l of lists)
    for (const x of l)
      if (!next.has(x)) {
        items.push(x);
        next.set(x, new Set());
        indegree.set(x, 0);
      }
  for (const l of lists) if (l.length === items.length && new Set(l).size === items.length) return [...l];
  for (const l of lists)
    for (let i = 0; i + 1 < l.length; i++) {
      const a = l[i]!;
      const b = l[i + 1]!;
      const succ = next.get(a)!;
      if (a === b || succ.has(b)) continue;
      succ.add(b);
      indegree.set(b, indegree.get(b)! + 1);
    }
  const out: string[] = [];
  const done = new Set<string>();
  const best = (ready: boolean): string | undefined => {
    let pick: string | undefined;
    for (const x of items) {
      if (done.has(x) || (ready && indegree.get(x)! > 0)) continue;
      if (pick === undefined || tie(x, pick) < 0) pick = x;
    }
    return pick;
  };
  while (out.length < items.length) {
    const pick = (best(true) ?? best(false))!;
    done.add(pick);
    out.push(pick);
    for (const y of next.get(pick)!) indegree.set(y, indegree.get(y)! - 1);
  }
  return out;
}

/**
 * A group's merged versions, preferred first (see the module comment), from each serving cluster's
 * versions in its own priority order.
 */
export function mergeGroupVersions(perCluster: ReadonlyArray<readonly string[]>): {
  versions: string[];
  preferred: string | undefined;
} {
  const serving = perCluster.filter((l) => l.length > 0);
  const order = consensusOrder(serving, byPriority);
  const preferred = order.find((v) => serving.every((l) => l.includes(v))) ?? order[0];
  if (preferred === undefined) return { versions: [], preferred };
  return { versions: [preferred, ...order.filter((v) => v !== preferred)], preferred };
}

// ---------------------------------------------------------------------------------------------------
// Legacy documents

/**
 * GET /api: the union of the clusters' core versions. `serverAddressByClientCIDRs` names the fleet, not
 * an upstream (the caller passes the address clients reached the fleet at; upstream addresses never leak).
 */
export function mergeAPIVersions(
  inputs: ReadonlyArray<ClusterDoc<APIVersions>>,
  serverAddressByClientCIDRs: ServerAddressByClientCIDR[] = [],
): APIVersions {
  const { versions } = mergeGroupVersions(inputs.map((i) => i.doc.versions ?? []));
  return { ...(inputs[0]?.doc ?? {}), kind: 'APIVersions', versions, serverAddressByClientCIDRs };
}

function gvString(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** A cluster's versions of a group in its priority order, its preferred version first. */
function clusterVersionOrder(g: APIGroup): string[] {
  const vs = (g.versions ?? []).map((v) => v.version);
  const p = g.preferredVersion?.version;
  return p && vs.includes(p) ? [p, ...vs.filter((v) => v !== p)] : vs;
}

function mergeGroupEntries(name: string, entries: APIGroup[]): APIGroup {
  const { versions, preferred } = mergeGroupVersions(entries.map(clusterVersionOrder));
  const { serverAddressByClientCIDRs: _upstreamAddresses, ...base } = entries[0]!;
  const out: APIGroup = {
    ...base,
    name,
    versions: versions.map((v) => ({ groupVersion: gvString(name, v), version: v })),
  };
  if (preferred !== undefined)
    out.preferredVersion = { groupVersion: gvString(name, preferred), version: preferred };
  return out;
}

/** GET /apis: every group any cluster serves, each with the union of its versions. */
export function mergeAPIGroupList(inputs: ReadonlyArray<ClusterDoc<APIGroupList>>): APIGroupList {
  const byName = new Map<string, APIGroup[]>();
  for (const { doc } of inputs)
    for (const g of doc.groups ?? []) {
      const l = byName.get(g.name);
      if (l) l.push(g);
      else byName.set(g.name, [g]);
    }
  const order = consensusOrder(
    inputs.map((i) => (i.doc.groups ?? []).map((g) => g.name)),
    lexical,
  );
  return {
    ...(inputs[0]?.doc ?? {}),
    kind: 'APIGroupList',
    apiVersion: inputs[0]?.doc.apiVersion ?? 'v1',
    groups: order.map((n) => mergeGroupEntries(n, byName.get(n)!)),
  };
}

/** GET /apis/<g>: the group as served by the clusters that serve it (`undefined` when none does). */
export function mergeAPIGroup(inputs: ReadonlyArray<ClusterDoc<APIGroup>>): APIGroup | undefined {
  if (inputs.length === 0) return undefined;
  const first = inputs[0]!.doc;
  const merged = mergeGroupEntries(
    first.name,
    inputs.map((i) => i.doc),
  );
  return { kind: 'APIGroup', apiVersion: first.apiVersion ?? 'v1', ...merged };
}

/** Union of entries keyed by `key`, the first occurrence (fleet order) winning, in consensus order. */
function unionByKey<T>(lists: ReadonlyArray<readonly T[]>, key: (t: T) => string): T[] {
  const first = new Map<string, T>();
  for (const l of lists) for (const t of l) if (!first.has(key(t))) first.set(key(t), t);
  return consensusOrder(
    lists.map((l) => l.map(key)),
    lexical,
  ).map((k) => first.get(k)!);
}

/**
 * GET /api/v1, /apis/<g>/<v>: every resource (and `resource/subresource` entry) any cluster serves in
 * that group-version, once, with the first cluster's details. `undefined` when no cluster serves it.
 */
export function mergeAPIResourceList(
  inputs: ReadonlyArray<ClusterDoc<APIResourceList>>,
): APIResourceList | undefined {
  if (inputs.length === 0) return undefined;
  const first = inputs[0]!.doc;
  return {
    ...first,
    resources: unionByKey(
      inputs.map((i) => i.doc.resources ?? []),
      (r) => r.name,
    ),
  };
}

// ---------------------------------------------------------------------------------------------------
// Aggregated discovery

const groupName = (g: APIGroupDiscovery) => g.metadata?.name ?? '';

function mergeResourceDiscovery(entries: APIResourceDiscovery[]): APIResourceDiscovery {
  const first = entries[0]!;
  if (!entries.some((e) => e.subresources?.length)) return first;
  const subresources = unionByKey(
    entries.map((e) => e.subresources ?? []),
    (s) => s.subresource,
  );
  return { ...first, subresources };
}

function mergeVersionDiscovery(version: string, entries: APIVersionDiscovery[]): APIVersionDiscovery {
  const byName = new Map<string, APIResourceDiscovery[]>();
  for (const e of entries)
    for (const r of e.resources ?? []) {
      const l = byName.get(r.resource);
      if (l) l.push(r);
      else byName.set(r.resource, [r]);
    }
  const order = consensusOrder(
    entries.map((e) => (e.resources ?? []).map((r) => r.resource)),
    lexical,
  );
  const out: APIVersionDiscovery = {
    ...entries[0]!,
    version,
    resources: order.map((n) => mergeResourceDiscovery(byName.get(n)!)),
  };
  // a version is only as fresh as its stalest copy
  if (entries.some((e) => e.freshness === 'Stale')) out.freshness = 'Stale';
  return out;
}

function mergeGroupDiscovery(name: string, entries: APIGroupDiscovery[]): APIGroupDiscovery {
  const { versions } = mergeGroupVersions(entries.map((g) => (g.versions ?? []).map((v) => v.version)));
  const byVersion = new Map<string, APIVersionDiscovery[]>();
  for (const g of entries)
    for (const v of g.versions ?? []) {
      const l = byVersion.get(v.version);
      if (l) l.push(v);
      else byVersion.set(v.version, [v]);
    }
  const first = entries[0]!;
  return {
    ...first,
    metadata: { ...(first.metadata ?? {}), ...(name ? { name } : {}) },
    versions: versions.map((v) => mergeVersionDiscovery(v, byVersion.get(v)!)),
  };
}

/**
 * GET /api or /apis as aggregated discovery: the union of the clusters' APIGroupDiscoveryLists (v2 or
 * v2beta1, in any mix), written as `apidiscovery.k8s.io/<version>`.
 */
export function mergeAggregated(
  inputs: ReadonlyArray<ClusterDoc<{ items?: APIGroupDiscovery[] }>>,
  version: AggregatedVersion,
): APIGroupDiscoveryList {
  const byName = new Map<string, APIGroupDiscovery[]>();
  for (const { doc } of inputs)
    for (const g of doc.items ?? []) {
      const l = byName.get(groupName(g));
      if (l) l.push(g);
      else byName.set(groupName(g), [g]);
    }
  const order = consensusOrder(
    inputs.map((i) => (i.doc.items ?? []).map(groupName)),
    lexical,
  );
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: order.map((n) => mergeGroupDiscovery(n, byName.get(n)!)),
  };
}

/**
 * One group's aggregated entry built from legacy documents, for a cluster that answers aggregated
 * discovery with the legacy APIGroupList (Kubernetes before 1.26, or a non-Kubernetes server). `versions`
 * in the group's priority order; `lists` holds the APIResourceList of each version it could fetch.
 */
export function aggregatedFromLegacy(
  group: string,
  versions: readonly string[],
  lists: ReadonlyMap<string, APIResourceList>,
): APIGroupDiscovery {
  const out: APIVersionDiscovery[] = [];
  for (const v of versions) {
    const list = lists.get(v);
    if (!list) continue;
    const parents = new Map<string, APIResourceDiscovery>();
    for (const r of list.resources ?? []) {
      if (r.name.includes('/')) continue;
      const e: APIResourceDiscovery = {
        resource: r.name,
        responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind ?? '' },
        scope: r.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: r.singularName ?? '',
        verbs: r.verbs ?? [],
      };
      if (r.shortNames?.length) e.shortNames = r.shortNames;
      if (r.categories?.length) e.categories = r.categories;
      parents.set(r.name, e);
    }
    for (const r of list.resources ?? []) {
      const slash = r.name.indexOf('/');
      if (slash < 0) continue;
      const parent = parents.get(r.name.slice(0, slash));
      if (!parent) continue; // a subresource without its resource: nothing to hang it on
      parent.subresources ??= [];
      parent.subresources.push({
        subresource: r.name.slice(slash + 1),
        responseKind: { group: r.group ?? '', version: r.version ?? '', kind: r.kind ?? '' },
        verbs: r.verbs ?? [],
      });
    }
    for (const p of parents.values()) p.subresources?.sort((a, b) => lexical(a.subresource, b.subresource));
    out.push({
      version: v,
      resources: [...parents.values()].sort((a, b) => lexical(a.resource, b.resource)),
      freshness: 'Current',
    });
  }
  return { metadata: group ? { name: group } : {}, versions: out };
}

// ---------------------------------------------------------------------------------------------------
// OpenAPI v3

export interface OpenAPIServer {
  cluster: string;
  /** the `hash` of the cluster's serverRelativeURL, when it has one */
  hash?: string;
}

function hashOf(serverRelativeURL: string): string | undefined {
  const q = serverRelativeURL.indexOf('?');
  if (q < 0) return undefined;
  return new URLSearchParams(serverRelativeURL.slice(q + 1)).get('hash') ?? undefined;
}

/**
 * GET /openapi/v3: every group-version path any cluster publishes, with the serverRelativeURL of the first
 * cluster (fleet order) that publishes it, left relative: the fleet serves `/openapi/v3/<gv>?hash=…` by
 * asking that cluster, so the URL (and its hash) stays valid through the fleet, under any base path the
 * client uses. Keys sorted, as kube-openapi writes them. `servedBy` lists, per path, every cluster that
 * publishes it (fleet order) and its hash.
 */
export function mergeOpenAPIV3Roots(inputs: ReadonlyArray<ClusterDoc<OpenAPIV3Root>>): {
  root: OpenAPIV3Root;
  servedBy: Map<string, OpenAPIServer[]>;
} {
  const servedBy = new Map<string, OpenAPIServer[]>();
  const first = new Map<string, string>();
  for (const { cluster, doc } of inputs)
    for (const [path, entry] of Object.entries(doc.paths ?? {})) {
      const url = entry?.serverRelativeURL;
      if (typeof url !== 'string') continue;
      if (!first.has(path)) first.set(path, url);
      const hash = hashOf(url);
      const l = servedBy.get(path) ?? [];
      l.push(hash === undefined ? { cluster } : { cluster, hash });
      servedBy.set(path, l);
    }
  const paths: OpenAPIV3Root['paths'] = {};
  for (const p of [...first.keys()].sort(lexical)) paths[p] = { serverRelativeURL: first.get(p)! };
  return { root: { paths }, servedBy };
}

/**
 * Which clusters to ask for `/openapi/v3/<path>?hash=<hash>`, best first: those whose document has that
 * very hash (fleet order), then the others serving the path (fleet order; a stale hash makes the first of
 * them redirect to its current one, as kube-openapi does).
 */
export function openAPIClustersFor(servers: readonly OpenAPIServer[], hash: string | undefined): string[] {
  const match = hash ? servers.filter((s) => s.hash === hash) : [];
  return [...match, ...servers.filter((s) => !match.includes(s))].map((s) => s.cluster);
}

// ---------------------------------------------------------------------------------------------------
// Content negotiation (kube-apiserver's, restricted to what the fleet writes: JSON)

// the one Accept parser (negotiate.ts), re-exported for the discovery route
export type { MediaRange };
export { parseAccept };

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
