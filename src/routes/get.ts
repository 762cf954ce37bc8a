/**
 * One object by its fleet name: `<name>.clusterspace.<cluster>` goes to that cluster with the plain name;
 * a plain name means the control plane with federation on (or the one cluster of a single-cluster
 * clusterspace), and otherwise is looked up in every cluster: found once → that one, found in several →
 * 409 Conflict listing the fleet names to use (src/plan/owner.ts decides). Answers (object, Table,
 * PartialObjectMetadata, Status) come back in the fleet view. Streamed subresources (logs) are relayed as
 * they come.
 */
import type { Context } from 'hono';
import { negotiate } from '../kube/negotiate.ts';
import { readStatus, type Status, statusResponse } from '../kube/status.ts';
import type { FleetView } from '../merge/objects/index.ts';
import { askedNamespace } from '../plan/namespace.ts';
import { ownerAmong, ownerOf, ownerQuery, searchQuery, withQuery } from '../plan/owner.ts';
import { answerOf, isUnreachable, type UnservedAnswer, unservedLookup } from '../plan/unserved.ts';
import { answerView } from '../plan/view.ts';
import { kubePathWithName, type RequestInfo } from '../request/info.ts';
import type { ClustersDeps, FanOutDeps } from '../types.ts';

/** What a get uses of the fleet: asking clusters and knowing which they are. */
export type GetDeps = FanOutDeps & ClustersDeps;

import type { SendOptions } from '../upstreams/client.ts';
import { fanOut, fleetMembership, type Target } from '../upstreams/fanout.ts';
import { undialed } from './locate.ts';
import { objectPropagation } from './propagation.ts';
import { fleetAnswer } from './respond.ts';

/** subresources whose bodies are not Kubernetes objects: relayed byte for byte, streaming */
const RAW_SUBRESOURCES = new Set(['log', 'proxy']);

export async function getRoute(
  c: Context,
  deps: GetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const req = c.req.raw;
  const query = new URL(req.url).searchParams;
  const membership = await fleetMembership(deps, req.signal);
  // the name form of the answer: as the request spelled the object's name (plan/view.ts)
  const view = answerView(deps.config.federation, info, info.name);
  const owner = ownerOf(view, info, targets, plainNameCluster);
  if ('code' in owner) return statusResponse(owner);
  const raw = RAW_SUBRESOURCES.has(info.subresource);
  const neg = raw ? undefined : negotiate(req.headers.get('accept'), false);
  if (neg && 'code' in neg) return statusResponse(neg);

  // each cluster's query, checked before anyone is asked (a resourceVersion that is not this fleet's: 400)
  const queries = new Map<string, URLSearchParams>();
  const asked = 'search' in owner ? targets : [owner.target];
  for (const t of asked) {
    const q = ('search' in owner ? searchQuery : ownerQuery)(query, membership, t.cluster);
    if ('code' in q) return statusResponse(q);
    queries.set(t.cluster, q);
  }
  const request = (t: Target): SendOptions => {
    const headers = new Headers(req.headers);
    if (neg) {
      headers.set('Accept', neg.accept);
      headers.set('Accept-Encoding', 'identity');
    }
    const path = withQuery(kubePathWithName(info, owner.plain), queries.get(t.cluster)!);
    return { method: req.method, path, headers, signal: req.signal };
  };

  let found: { target: Target; res: Response };
  if ('search' in owner) {
    // federation off, several clusters: the plain name may live in one, several or none of them
    const hit = await searchAll(deps, view, info, targets, owner.plain, request);
    if ('code' in hit) return statusResponse(hit);
    found = hit;
  } else {
    found = {
      target: owner.target,
      // Karmada's cluster proxy that could not dial the member: the fleet's 503 naming it
      res: await undialed(owner.target, await deps.client.send(owner.target.endpoint, request(owner.target))),
    };
  }
  const answer = await fleetAnswer(
    view,
    membership,
    found.target.cluster,
    owner.plain,
    found.res,
    raw,
    askedNamespace(info),
  );
  // a Karmada template or copy says where it went or came from (routes/propagation.ts)
  return raw
    ? answer
    : objectPropagation(deps, info, targets, found.target.cluster, owner.plain, answer, req);
}

/**
 * GETs the object from every cluster at once; the one cluster that has it answers (its response is kept
 * to relay). Nowhere or in several clusters: the Status of src/plan/owner.ts `ownerAmong`.
 */
async function searchAll(
  deps: FanOutDeps,
  view: FleetView,
  info: RequestInfo,
  targets: Target[],
  plain: string,
  request: (t: Target) => SendOptions,
): Promise<{ target: Target; res: Response } | Status> {
  const outcomes = await fanOut(deps, targets, request);
  const hits: Array<{ target: Target; res: Response }> = [];
  const misses: UnservedAnswer[] = [];
  for (const o of outcomes) {
    if (o.ok && o.res.ok) hits.push(o);
    else if (o.ok) misses.push(answerOf(o.target.cluster, o.res.status, await readStatus(o.res)));
    else misses.push({ cluster: o.target.cluster, kind: 'failed', reason: o.error.detail });
  }
  // the resource served by no cluster that answered, while some could not be asked: 503, not 404
  const unserved = hits.length === 0 ? unservedLookup(misses) : undefined;
  if (unserved) return unserved;
  const decided = ownerAmong(
    view,
    info,
    plain,
    hits.map((h) => h.target),
    misses.filter((m) => m.kind === 'failed' && isUnreachable(m)).map((m) => m.cluster),
  );
  if ('code' in decided) {
    await Promise.all(hits.map((h) => h.res.body?.cancel()));
    return decided;
  }
  return hits[0]!;
}
