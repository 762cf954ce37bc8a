/**
 * The fleet API's dispatcher: the vanilla API at the root URL (clusterspace `all`), `/clusterspaces/all/…`,
 * and the in-path forms (`…/clusterspaces/<cs>/<resource>…`). Parses nothing itself: it reads the
 * RequestInfo, resolves the clusterspace to its clusters, and hands over to the verb's route.
 *
 * The one rule between the files of this folder: a route (a file that exports a handler: connect, discovery,
 * get, health, list, openapi, passthrough, watch, write) imports no other route. This file is the only one
 * in src/routes/ that imports routes (app.ts, the composition root, imports health and passthrough too).
 * The helpers any route may import, which import no route: `respond.ts` (writing answers), `locate.ts`
 * (finding an object's cluster), `gather.ts` (asking every cluster for a discovery document) and
 * `upgrade.ts` (relaying an upgrade to one cluster). `testing.ts` is the routes' tests' fake fleet.
 */
import type { Context } from 'hono';
import { failure, methodNotAllowedOnPath, notFound, statusResponse } from '../kube/status.ts';
import { listRoute } from '../list/route.ts';
import { classifyDiscovery, isOpenAPIPath } from '../plan/discovery.ts';
import { isFleetDrift } from '../plan/fleetdrift.ts';
import { isFleetExec } from '../plan/fleetexec.ts';
import { askedNamespace, askedNamespaceLines, fleetNamespace } from '../plan/namespace.ts';
import { plainNameClusterFor } from '../plan/owner.ts';
import { fleetReviewKind } from '../plan/reviews.ts';
import { isElectionLock } from '../plan/targets.ts';
import { PATH_NOT_FOUND, type RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import { clusterspaceTargets } from '../upstreams/fanout.ts';
import { watchRoute } from '../watch/route.ts';
import { CONNECT_SUBRESOURCES, connectRoute } from './connect.ts';
import { discoveryRoute } from './discovery.ts';
import { fleetDriftRoute } from './fleetdrift.ts';
import { fleetExecRoute } from './fleetexec.ts';
import { getRoute } from './get.ts';
import { resolveShortenedNames } from './locate.ts';
import { openapiRoute } from './openapi.ts';
import { unknownClusterspace } from './respond.ts';
import { reviewsRoute } from './reviews.ts';
import { writeRoute } from './write.ts';

export async function fleetRoute(c: Context, deps: FleetDeps, asked: RequestInfo): Promise<Response> {
  // Leases and LeaseCandidates at the fleet view: the federated view whatever the mode, so a plain name
  // (a leader election's lock) is the control plane's, one object in one place (plan/targets.ts)
  if (!deps.config.federation && asked.isResourceRequest && (asked.clusterspace ?? 'all') === 'all')
    if (isElectionLock(asked))
      return fleetRoute(c, { ...deps, config: { ...deps.config, federation: true } }, asked);
  // `-n shop.clusterspace.member2`: member2's `shop`, and the request is member2's alone (every verb)
  const byName = fleetNamespace(asked);
  if (byName && 'code' in byName) return statusResponse(byName);
  const info = byName ? byName.info : asked;
  const cs = info.clusterspace ?? 'all';
  const targets = await clusterspaceTargets(deps, cs, c.req.raw.signal);
  if (!targets && byName) return statusResponse(notFound('namespaces', '', byName.fleet));
  if (!targets) return unknownClusterspace(deps, cs, c.req.raw.signal);

  if (!info.isResourceRequest) {
    const path = classifyDiscovery(info.kubePath);
    if (!path) return statusResponse(failure(404, 'NotFound', PATH_NOT_FOUND));
    return isOpenAPIPath(path)
      ? openapiRoute(c, deps, info, targets, path)
      : discoveryRoute(c, deps, info, targets, path);
  }
  const plainNameCluster = plainNameClusterFor({ federation: deps.config.federation }, cs, targets);
  // shortened fleet names (names longer than 253 characters) in the URL or a field selector: made known
  const unresolved = await resolveShortenedNames(deps, info, c.req.raw, targets);
  if (unresolved) return statusResponse(unresolved);
  // auth can-i (--list) and whoami at the fleet view: asked of every cluster and merged (routes/reviews.ts)
  const review = fleetReviewKind(info);
  if (review) return reviewsRoute(c, deps, info, targets, review);
  // the fleet's own podexecs (`kubectl fleet exec`): one command in every matching pod (routes/fleetexec.ts)
  if (isFleetExec(info)) return fleetExecRoute(c, deps, info);
  // the fleet's own drifts (`kubectl fleet diff`): a template's copies against what Karmada applied
  if (isFleetDrift(info)) return fleetDriftRoute(c, deps, info);
  // exec, attach, portforward: an upgrade relayed to the owning cluster, whatever the method
  if (info.name && CONNECT_SUBRESOURCES.has(info.subresource))
    return connectRoute(c, deps, info, targets, plainNameCluster);
  // a method the path has no route for (POST to a named object, PUT or PATCH to a collection): kube's 405,
  // never forwarded (a cluster would read the POST as a create of the body's name)
  if (
    info.name ? info.verb === 'create' && !info.subresource : info.verb === 'update' || info.verb === 'patch'
  )
    return statusResponse(methodNotAllowedOnPath());
  switch (info.verb) {
    case 'list':
      return listRoute(c, deps, info, targets, plainNameCluster);
    case 'get':
      return getRoute(c, deps, info, targets, plainNameCluster);
    case 'watch': {
      const res = await watchRoute(c, deps, info, targets, plainNameCluster);
      // objects say the namespace as the client named it, as the list it started from does
      const ns = askedNamespace(info);
      return ns && res.ok && res.body
        ? new Response(res.body.pipeThrough(askedNamespaceLines(ns)), res)
        : res;
    }
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
