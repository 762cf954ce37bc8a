/**
 * One object by its fleet name: `<name>.clusterspace.<cluster>` goes to that cluster with the plain name;
 * a plain name means the control plane with federation on (or the one cluster of a single-cluster
 * clusterspace), and otherwise is looked up in every cluster: found once → that one, found in several →
 * 409 Conflict listing the fleet names to use. Answers (object, Table, PartialObjectMetadata, Status) come
 * back in the fleet view. Streamed subresources (logs) are relayed as they come.
 */
import type { Context } from 'hono';
import { negotiate } from '../kube/negotiate.ts';
import { badRequest, failure, notFound, type Status, statusResponse } from '../kube/status.ts';
import { decodeName, rewriteStatusNames } from '../merge/names.ts';
import { type FleetView, fleetName, toFleetObject } from '../merge/objects.ts';
import { compositeWith, ownResourceVersion, prepareMembership } from '../merge/rv.ts';
import { mergeColumns, toFleetRow } from '../merge/table.ts';
import { kubePathWithName, type RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import { forwardableResponseHeaders } from '../upstreams/client.ts';
import { fanOut, fleetMembership, type Target } from '../upstreams/fanout.ts';

/** subresources whose bodies are not Kubernetes objects: relayed byte for byte, streaming */
const RAW_SUBRESOURCES = new Set(['log', 'proxy']);

export interface Owner {
  target: Target;
  /** the object's name in its cluster */
  plain: string;
  /** the name the client used / sees */
  fleet: string;
}

/**
 * Finds the cluster that owns `info.name`, or the Status to answer instead. Plain names without a cluster
 * to pin are looked up with `probe` in every target.
 */
export async function resolveOwner(
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Owner | Status | { search: true; plain: string }> {
  const view: FleetView = { federation: deps.config.federation };
  const d = decodeName(info.name);
  if (d.cluster !== undefined) {
    const target = targets.find((t) => t.cluster === d.cluster);
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
 * A plain name looked up in every cluster (federation off): found once → its owner; nowhere → NotFound
 * (naming the clusters that could not be asked); in several → 409 Conflict listing the fleet names to use.
 */
export function ownerAmong(
  deps: FleetDeps,
  info: RequestInfo,
  plain: string,
  hits: Target[],
  unreachable: string[],
): Owner | Status {
  const view: FleetView = { federation: deps.config.federation };
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

/** The query to send upstream: a composite resourceVersion becomes the owning cluster's own. */
export function ownerQuery(url: URL, membership: string[], cluster: string): URLSearchParams | Status {
  const out = new URLSearchParams(url.search);
  const rv = out.get('resourceVersion');
  if (rv) {
    const own = ownResourceVersion(rv, membership, cluster);
    if (!own.ok) return own.status;
    out.set('resourceVersion', own.resourceVersion);
  }
  return out;
}

function qs(p: URLSearchParams): string {
  const s = p.toString();
  return s ? `?${s}` : '';
}

export async function getRoute(
  c: Context,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const req = c.req.raw;
  const url = new URL(req.url);
  const membership = await fleetMembership(deps, req.signal);
  const view: FleetView = { federation: deps.config.federation };
  const owner = await resolveOwner(deps, info, targets, plainNameCluster);
  if ('code' in owner) return statusResponse(owner);
  const raw = RAW_SUBRESOURCES.has(info.subresource);
  const neg = raw ? undefined : negotiate(req.headers.get('accept'), false);
  if (neg && 'code' in neg) return statusResponse(neg);

  const request = (t: Target) => {
    const q = ownerQuery(url, membership, t.cluster);
    const headers = new Headers(req.headers);
    if (neg) {
      headers.set('Accept', neg.accept);
      headers.set('Accept-Encoding', 'identity');
    }
    return {
      method: req.method,
      path:
        kubePathWithName(info, 'search' in owner ? owner.plain : owner.plain) + ('code' in q ? '' : qs(q)),
      headers,
      signal: req.signal,
    };
  };

  let found: { target: Target; res: Response };
  if ('search' in owner) {
    // federation off, several clusters: the plain name may live in one, several or none of them
    const outcomes = await fanOut(deps, targets, request);
    const hits = outcomes.filter((o) => o.ok && o.res.ok) as Array<{
      target: Target;
      ok: true;
      res: Response;
    }>;
    for (const o of outcomes) if (o.ok && !o.res.ok) await o.res.body?.cancel();
    const decided = ownerAmong(
      deps,
      info,
      owner.plain,
      hits.map((h) => h.target),
      outcomes.filter((o) => !o.ok).map((o) => o.target.cluster),
    );
    if ('code' in decided) {
      await Promise.all(hits.map((h) => h.res.body?.cancel()));
      return statusResponse(decided);
    }
    found = { target: hits[0]!.target, res: hits[0]!.res };
  } else {
    const q = ownerQuery(url, membership, owner.target.cluster);
    if ('code' in q) return statusResponse(q);
    const res = await deps.client.send(owner.target.endpoint, request(owner.target));
    found = { target: owner.target, res };
  }
  const plain = 'search' in owner ? owner.plain : owner.plain;
  return fleetAnswer(view, membership, found.target.cluster, plain, found.res, raw);
}

/** An upstream answer about one object (or one cluster's list of them), shown in the fleet view. */
export async function fleetAnswer(
  view: FleetView,
  membership: string[],
  cluster: string,
  plain: string,
  res: Response,
  raw = false,
): Promise<Response> {
  const fleet = fleetName(view, plain, cluster);
  if (raw && res.ok) {
    const headers = forwardableResponseHeaders(res.headers);
    if (!res.headers.has('content-length')) headers.set('Content-Encoding', 'identity');
    return new Response(res.body, { status: res.status, headers });
  }
  const headers = forwardableResponseHeaders(res.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return new Response(text, { status: res.status, headers });
  }
  if (body?.kind === 'Status') {
    body = rewriteStatusNames(body as Status, plain, fleet);
  } else if (res.ok && body && typeof body === 'object') {
    const m = prepareMembership(membership);
    const base = new Map(m.names.map((n) => [n, '']));
    const rvFor = compositeWith(m, base, cluster);
    if (body.kind === 'Table' && Array.isArray(body.rows)) {
      const merged = mergeColumns([body.columnDefinitions]);
      body.columnDefinitions = merged.columns;
      body.rows = body.rows.map((r: any) => toFleetRow(view, r, merged, 0, cluster, rvFor));
      if (body.metadata?.resourceVersion)
        body.metadata.resourceVersion = rvFor(body.metadata.resourceVersion);
    } else if (Array.isArray(body.items)) {
      // one cluster's list (deletecollection answers with the deleted items)
      for (const item of body.items) toFleetObject(view, item, cluster, rvFor);
      if (body.metadata?.resourceVersion)
        body.metadata.resourceVersion = rvFor(body.metadata.resourceVersion);
    } else {
      toFleetObject(view, body, cluster, rvFor);
    }
  }
  return new Response(JSON.stringify(body), { status: res.status, headers });
}
