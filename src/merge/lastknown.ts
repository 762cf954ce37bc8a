/**
 * A cluster's discovery as last seen, for when it cannot be asked: pure conversions of the aggregated
 * document the fleet kept (src/routes/lastknown.ts keeps it, per process) into what each discovery
 * request needs.
 *
 * - Aggregated discovery (v2, v2beta1): every version of the kept document marked `freshness: Stale`,
 *   as kube-aggregator marks an APIService whose discovery it could not fetch (it keeps serving the last
 *   document it had). The merge (src/merge/discovery.ts) keeps a version Stale only when no cluster
 *   answered it fresh.
 * - Legacy discovery has no freshness: the kept document yields the cluster's entries in `/api`, `/apis`,
 *   `/apis/<g>` and `/apis/<g>/<v>` (as client-go converts aggregated documents to legacy ones: the first
 *   version is the preferred one, subresources become `resource/subresource` entries).
 *
 * No I/O.
 */
import type {
  APIGroup,
  APIGroupDiscovery,
  APIGroupList,
  APIResource,
  APIResourceDiscovery,
  APIResourceList,
  APIVersions,
} from '../kube/discovery.ts';

/** The kept document with every version marked Stale (a copy: the kept one stays as it was). */
export function markStale(items: readonly APIGroupDiscovery[]): APIGroupDiscovery[] {
  return items.map((g) => ({
    ...g,
    versions: (g.versions ?? []).map((v) => ({ ...v, freshness: 'Stale' })),
  }));
}

const gvOf = (group: string, version: string) => (group ? `${group}/${version}` : version);
const nameOf = (g: APIGroupDiscovery) => g.metadata?.name ?? '';

/** GET /api from the kept `/api` document: the core group's versions. */
export function legacyVersions(items: readonly APIGroupDiscovery[]): APIVersions {
  const core = items.find((g) => nameOf(g) === '');
  return { kind: 'APIVersions', versions: (core?.versions ?? []).map((v) => v.version) };
}

function legacyGroup(g: APIGroupDiscovery): APIGroup {
  const name = nameOf(g);
  const versions = (g.versions ?? []).map((v) => ({
    groupVersion: gvOf(name, v.version),
    version: v.version,
  }));
  const out: APIGroup = { name, versions };
  if (versions[0]) out.preferredVersion = versions[0];
  return out;
}

/** GET /apis from the kept `/apis` document. */
export function legacyGroupList(items: readonly APIGroupDiscovery[]): APIGroupList {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: items.map(legacyGroup) };
}

/** GET /apis/<g> from the kept `/apis` document (undefined: the cluster did not serve it). */
export function legacyGroupDoc(items: readonly APIGroupDiscovery[], group: string): APIGroup | undefined {
  const g = items.find((x) => nameOf(x) === group);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...legacyGroup(g) } : undefined;
}

function legacyResource(group: string, version: string, r: APIResourceDiscovery): APIResource[] {
  const kindOf = (k: { group: string; version: string; kind: string } | undefined): Partial<APIResource> => {
    if (!k) return {};
    const out: Partial<APIResource> = { kind: k.kind };
    // legacy lists name a group and version only where they differ from the list's (e.g. scale);
    // aggregated documents leave both empty where they are the list's own
    const own = (!k.group && !k.version) || (k.group === group && k.version === version);
    if (!own) Object.assign(out, { group: k.group, version: k.version });
    return out;
  };
  const base: APIResource = {
    name: r.resource,
    singularName: r.singularResource ?? '',
    namespaced: r.scope === 'Namespaced',
    ...kindOf(r.responseKind),
    verbs: r.verbs ?? [],
  };
  if (r.shortNames?.length) base.shortNames = r.shortNames;
  if (r.categories?.length) base.categories = r.categories;
  const subs = (r.subresources ?? []).map(
    (s): APIResource => ({
      name: `${r.resource}/${s.subresource}`,
      // kube-apiserver's legacy lists give subresources no singular name
      singularName: '',
      namespaced: r.scope === 'Namespaced',
      ...kindOf(s.responseKind),
      verbs: s.verbs ?? [],
    }),
  );
  return [base, ...subs];
}

/** GET /api/<v>, /apis/<g>/<v> from the kept document (undefined: the cluster did not serve it). */
export function legacyResourceList(
  items: readonly APIGroupDiscovery[],
  group: string,
  version: string,
): APIResourceList | undefined {
  const v = items.find((x) => nameOf(x) === group)?.versions?.find((x) => x.version === version);
  if (!v) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: gvOf(group, version),
    resources: (v.resources ?? []).flatMap((r) => legacyResource(group, version, r)),
  };
}
