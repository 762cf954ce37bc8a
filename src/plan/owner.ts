/**
 * Which cluster owns the object a request names. A fleet name (`<name>.clusterspace.<cluster>`, or its
 * shortened form `…-<digest>.clusterspace-h.<cluster>` once resolved: src/merge/names/index.ts) names its
 * cluster; a plain name means the plain-name cluster (the one cluster of a single-cluster clusterspace,
 * or the control plane with federation on) and otherwise has to be looked for in every cluster: found
 * once → that one; nowhere → 404; in several → 409 Conflict listing the fleet names to use.
 *
 * Pure: the decisions only. Looking a plain name up (asking every cluster) is the caller's I/O; it hands
 * the clusters that have the object to {@link ownerAmong}.
 */
import { badRequest, failure, notFound, type Status } from '../kube/status.ts';
import { decodeName } from '../merge/names/index.ts';
import { type FleetView, fleetName } from '../merge/objects/index.ts';
import { decodeComposite, ownResourceVersion } from '../merge/rv/index.ts';
import { kubePathWithName, type RequestInfo } from '../request/info.ts';

/** What owner resolution reads of the request. */
export type OwnerRequest = Pick<RequestInfo, 'name' | 'clusterspace' | 'resource' | 'apiGroup'>;

export interface Owner<T extends { cluster: string }> {
  target: T;
  /** the object's name in its cluster */
  plain: string;
  /** the name the client sees */
  fleet: string;
}

/** The owner is not known yet: look `plain` up in every cluster, then decide with {@link ownerAmong}. */
export interface OwnerSearch {
  search: true;
  plain: string;
}

/**
 * Which cluster a plain (suffix-less) name means: the one cluster of a single-cluster clusterspace; with
 * federation on, the control plane; otherwise none (it is looked up in every cluster).
 */
export function plainNameClusterFor(
  view: FleetView,
  clusterspace: string | undefined,
  targets: readonly { cluster: string }[],
): string | undefined {
  if ((clusterspace ?? 'all') !== 'all') return targets[0]?.cluster;
  return view.federation ? 'karmada' : undefined;
}

/**
 * The owner of `info.name` among `targets`, or the Status to answer instead, or a search when the name
 * is plain and nothing pins its cluster. A fleet name naming a cluster outside the clusterspace is a 400
 * when the URL named a clusterspace, and a 404 in `all` (no such object in this fleet).
 */
export function ownerOf<T extends { cluster: string }>(
  view: FleetView,
  info: OwnerRequest,
  targets: readonly T[],
  plainNameCluster: string | undefined,
): Owner<T> | OwnerSearch | Status {
  const d = decodeName(info.name);
  if (d.cluster !== undefined) {
    const target = targets.find((t) => t.cluster === d.cluster);
    // a shortened name no object of its cluster has (src/routes/locate.ts looked): not found
    if (target && d.unresolved) {
      const nf = notFound(info.resource, info.apiGroup, info.name);
      nf.message += ` (a shortened fleet name: no ${info.resource} of cluster "${d.cluster}" has a name that shortens to it)`;
      return nf;
    }
    if (target) return { target, plain: d.name, fleet: fleetName(view, d.name, d.cluster) };
    if (info.clusterspace !== undefined && info.clusterspace !== 'all')
      return badRequest(
        `the name "${info.name}" names cluster "${d.cluster}", which contradicts the clusterspace "${info.clusterspace}"`,
      );
    return notFound(info.resource, info.apiGroup, info.name);
  }
  if (plainNameCluster !== undefined) {
    const target = targets.find((t) => t.cluster === plainNameCluster);
    if (target) return { target, plain: d.name, fleet: fleetName(view, d.name, target.cluster) };
    return notFound(info.resource, info.apiGroup, info.name);
  }
  return { search: true, plain: d.name };
}

/**
 * A plain name looked up in every cluster: found once → its owner; nowhere → NotFound (naming the
 * clusters that could not be asked); in several → 409 Conflict listing the fleet names to use.
 */
export function ownerAmong<T extends { cluster: string }>(
  view: FleetView,
  info: OwnerRequest,
  plain: string,
  hits: readonly T[],
  unreachable: readonly string[],
): Owner<T> | Status {
  if (hits.length === 1) return { target: hits[0]!, plain, fleet: fleetName(view, plain, hits[0]!.cluster) };
  if (hits.length === 0) {
    const nf = notFound(info.resource, info.apiGroup, plain);
    if (unreachable.length) nf.message += ` (clusters not reachable: ${unreachable.join(', ')})`;
    return nf;
  }
  const names = hits.map((t) => fleetName(view, plain, t.cluster));
  return failure(
    409,
    'Conflict',
    `${info.resource} "${plain}" exists in several clusters; name one of them: ${names.join(', ')}`,
    {
      name: plain,
      ...(info.apiGroup ? { group: info.apiGroup } : {}),
      kind: info.resource,
      causes: names.map((n) => ({ reason: 'FieldValueDuplicate', field: 'metadata.name', message: n })),
    },
  );
}

/**
 * The request that asks one cluster whether it has the object (for a write or connect whose plain name
 * has no pinned cluster): the object itself, not its subresource, as metadata only.
 */
export function ownerProbe(
  info: RequestInfo,
  plain: string,
): { method: 'GET'; path: string; headers: Headers } {
  return {
    method: 'GET',
    path: kubePathWithName({ ...info, subresource: '', extra: [] }, plain),
    headers: new Headers({
      Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
      'Accept-Encoding': 'identity',
    }),
  };
}

/**
 * The query the owning cluster gets: the client's, with a composite resourceVersion turned into that
 * cluster's own (a Status when it is not one of this fleet's or names another membership).
 */
export function ownerQuery(
  query: URLSearchParams,
  membership: readonly string[],
  cluster: string,
): URLSearchParams | Status {
  const out = new URLSearchParams(query);
  const rv = out.get('resourceVersion');
  if (rv) {
    const own = ownResourceVersion(rv, membership, cluster);
    if (!own.ok) return own.status;
    out.set('resourceVersion', own.resourceVersion);
  }
  return out;
}

/**
 * The query every cluster gets when a plain name is looked for in all of them (federation off): the
 * owner's query (ownerQuery), except for a cluster the client's composite resourceVersion holds no entry
 * for (say the client got it from an object of another cluster): the composite says nothing about that
 * cluster, so it is asked as it is now, without resourceVersion (and resourceVersionMatch), the rest of the
 * query as sent. A resourceVersion that is not one of this fleet's is refused as ownerQuery refuses it.
 */
export function searchQuery(
  query: URLSearchParams,
  membership: readonly string[],
  cluster: string,
): URLSearchParams | Status {
  const rv = query.get('resourceVersion');
  if (rv && rv !== '0') {
    const d = decodeComposite(rv, membership);
    if (d.ok && !d.rvs.get(cluster)) {
      const out = new URLSearchParams(query);
      out.delete('resourceVersion');
      out.delete('resourceVersionMatch');
      return out;
    }
  }
  return ownerQuery(query, membership, cluster);
}

/** `?a=b` for a non-empty query, '' otherwise. */
export function withQuery(path: string, query: URLSearchParams): string {
  const s = query.toString();
  return s ? `${path}?${s}` : path;
}
