/**
 * exec, attach and portforward of a pod named in the fleet view: the upgrade goes to the cluster that
 * owns the pod (found as writes find it: routes/locate.ts), with the plain name and that cluster's own
 * resourceVersion, and is relayed by ./upgrade.ts; a Status from the cluster shows the fleet name.
 */
import type { Context } from 'hono';
import { type Status, statusResponse } from '../kube/status.ts';
import { rewriteStatusNames } from '../merge/names/index.ts';
import { ownerQuery, withQuery } from '../plan/owner.ts';
import { kubePathWithName, type RequestInfo } from '../request/info.ts';
import type { ClustersDeps, FleetDeps } from '../types.ts';
import { fleetMembership, type Target } from '../upstreams/fanout.ts';
import { findOwner, type LocateDeps, undialed } from './locate.ts';
import { relayUpgrade } from './upgrade.ts';

export const CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward']);

export type ConnectDeps = LocateDeps & ClustersDeps & Pick<FleetDeps, 'client'>;

/** exec / attach / portforward of a pod named in the fleet view. */
export async function connectRoute(
  c: Context,
  deps: ConnectDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const req = c.req.raw;
  const owner = await findOwner(deps, info, targets, plainNameCluster, req.signal);
  if ('code' in owner) return statusResponse(owner);
  const membership = await fleetMembership(deps, req.signal);
  const q = ownerQuery(new URL(req.url).searchParams, membership, owner.target.cluster);
  if ('code' in q) return statusResponse(q);
  const rename = (st: Status) => rewriteStatusNames(st, owner.plain, owner.fleet);
  const res = await relayUpgrade(
    c,
    deps,
    owner.target.endpoint,
    withQuery(kubePathWithName(info, owner.plain), q),
    rename,
  );
  // an answer that is no upgrade from Karmada's cluster proxy that could not dial the member: the fleet's 503
  return undialed(owner.target, res);
}
