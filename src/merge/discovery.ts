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
 * - **Freshness.** A group-version is `Stale` only when every copy of it is: a cluster that cannot be
 *   asked contributes its last known document with every version Stale (src/merge/lastknown.ts), and a
 *   version another cluster serves now stays as that cluster says (requests for it reach that cluster).
 *
 * Aggregated discovery v2 and v2beta1 have the same shape; the merge reads either and writes the version
 * it is asked for. No I/O here; the handlers are in src/routes/discovery.ts, the documents' shapes in src/kube/discovery.ts.
 */

import {
  type AggregatedVersion,
  type APIGroup,
  type APIGroupDiscovery,
  type APIGroupDiscoveryList,
  type APIGroupList,
  type APIResourceDiscovery,
  type APIResourceList,
  type APIVersionDiscovery,
  type APIVersions,
  compareKubeAwareVersions,
  type ServerAddressByClientCIDR,
} from '../kube/discovery.ts';

/** One cluster's document, with the cluster it came from (inputs come in fleet order). */
export interface ClusterDoc<T> {
  cluster: string;
  doc: T;
}

// ---------------------------------------------------------------------------------------------------
// Consensus order

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
  // Stale only when no cluster answered it fresh: a copy kept from a cluster that could not be asked
  // (src/merge/lastknown.ts) does not make stale what a reachable cluster serves now
  const fresh = entries.find((e) => e.freshness !== 'Stale');
  if (!fresh) out.freshness = 'Stale';
  else if (fresh.freshness === undefined) delete out.freshness;
  else out.freshness = fresh.freshness;
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
