/**
 * Finding the cluster that owns the object a write or connect names: src/plan/owner.ts decides, and
 * when a plain name pins no cluster, every cluster is asked whether it has the object (metadata only).
 * Not a route: routes import it; it imports no route.
 */
import type { Status } from '../kube/status.ts';
import type { FleetView } from '../merge/objects.ts';
import { type Owner, ownerAmong, ownerOf, ownerProbe } from '../plan/owner.ts';
import type { RequestInfo } from '../request/info.ts';
import type { ClustersDeps, FanOutDeps } from '../types.ts';

/** What finding an owner uses of the fleet: asking clusters, and the fleet view for names. */
export type LocateDeps = FanOutDeps & Pick<ClustersDeps, 'config'>;

import { fanOut, type Target } from '../upstreams/fanout.ts';

/**
 * The owner of `info.name` among `targets`, or the Status to answer (400 contradicting clusterspace, 404
 * nowhere, 409 in several clusters). Asks the clusters only when the name is plain and nothing pins it.
 */
export async function findOwner(
  deps: LocateDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
  signal: AbortSignal,
): Promise<Owner<Target> | Status> {
  const view: FleetView = { federation: deps.config.federation };
  const planned = ownerOf(view, info, targets, plainNameCluster);
  if (!('search' in planned)) return planned;
  const probe = ownerProbe(info, planned.plain);
  const outcomes = await fanOut(deps, targets, () => ({
    ...probe,
    headers: new Headers(probe.headers),
    signal,
  }));
  await Promise.all(outcomes.map((o) => (o.ok ? o.res.body?.cancel() : undefined)));
  return ownerAmong(
    view,
    info,
    planned.plain,
    outcomes.filter((o) => o.ok && o.res.ok).map((o) => o.target),
    outcomes.filter((o) => !o.ok).map((o) => o.target.cluster),
  );
}
