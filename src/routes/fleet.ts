/**
 * The fleet API: the vanilla API at the root URL (clusterspace `all`), `/clusterspaces/all/…`, and the
 * in-path forms (`…/clusterspaces/<cs>/<resource>…`). Parses nothing itself: it reads the RequestInfo,
 * resolves the clusterspace to its clusters, and hands over to the verb's route.
 */
import type { Context } from 'hono';
import { failure, statusResponse } from '../kube/status.ts';
import type { RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import { clusterspaceTargets, type Target } from '../upstreams/fanout.ts';
import { CONNECT_SUBRESOURCES, connectRoute } from './connect.ts';
import { discoveryRoute } from './discovery.ts';
import { getRoute } from './get.ts';
import { listRoute } from './list.ts';
import { unknownClusterspace } from './passthrough.ts';
import { watchRoute } from './watch.ts';
import { writeRoute } from './write.ts';

/**
 * Which cluster a plain (suffix-less) name means: the one cluster of a single-cluster clusterspace; with
 * federation on, the control plane; otherwise none (it is looked up in every cluster).
 */
export function plainNameClusterFor(
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
): string | undefined {
  const cs = info.clusterspace ?? 'all';
  if (cs !== 'all') return targets[0]?.cluster;
  return deps.config.federation ? 'karmada' : undefined;
}

export async function fleetRoute(c: Context, deps: FleetDeps, info: RequestInfo): Promise<Response> {
  const cs = info.clusterspace ?? 'all';
  const targets = await clusterspaceTargets(deps, cs, c.req.raw.signal);
  if (!targets) return unknownClusterspace(deps, cs, c.req.raw.signal);

  if (!info.isResourceRequest) {
    const r = await discoveryRoute(c, deps, info, targets);
    return r ?? statusResponse(failure(404, 'NotFound', 'the server could not find the requested resource'));
  }
  const plainNameCluster = plainNameClusterFor(deps, info, targets);
  // exec, attach, portforward: an upgrade relayed to the owning cluster, whatever the method
  if (info.name && CONNECT_SUBRESOURCES.has(info.subresource))
    return connectRoute(c, deps, info, targets, plainNameCluster);
  switch (info.verb) {
    case 'list':
      return listRoute(c, deps, info, targets, plainNameCluster);
    case 'get':
      return getRoute(c, deps, info, targets, plainNameCluster);
    case 'watch':
      return watchRoute(c, deps, info, targets, plainNameCluster);
    case 'create':
    case 'update':
    case 'patch':
    case 'delete':
    case 'deletecollection':
      return writeRoute(c, deps, info, targets, plainNameCluster);
    default:
      return statusResponse(
        failure(
          405,
          'MethodNotAllowed',
          `${info.verb} through the merged fleet view is not served yet; address one cluster with /clusterspaces/<cluster>/…`,
        ),
      );
  }
}
