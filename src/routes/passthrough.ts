/**
 * Per-cluster passthrough: `/clusterspaces/<member|karmada>/…` is a transparent proxy to that one cluster.
 * Method, path, query and body go upstream as received (minus hop-by-hop and credential headers); status,
 * headers and body come back unchanged and streamed, so watch and `logs -f` arrive event by event.
 */
import type { Context } from 'hono';
import { statusResponse } from '../kube/status.ts';
import { fleetNamespace } from '../plan/namespace.ts';
import { queryBool, type RequestInfo } from '../request/info.ts';
import type { ClientDeps } from '../types.ts';
import { forwardableResponseHeaders } from '../upstreams/client.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { unknownClusterspace } from './respond.ts';
import { isUpgradeRequest, relayUpgrade } from './upgrade.ts';

/**
 * Responses that stream (watch, follow logs, chunked bodies of unknown length) are marked
 * `Content-Encoding: identity`: worker runtimes otherwise gzip them and deliver everything at the end.
 */
function isStreaming(c: Context, info: RequestInfo, res: Response): boolean {
  if (res.headers.has('content-length') || res.headers.has('content-encoding')) return false;
  return info.verb === 'watch' || queryBool(new URL(c.req.url).searchParams, 'follow');
}

export async function proxyTo(c: Context, deps: ClientDeps, endpoint: ResolvedEndpoint, info: RequestInfo) {
  const raw = c.req.raw;
  const search = new URL(raw.url).search;
  // exec / attach / port-forward (any upgrade): spliced unchanged, see connect.ts
  if (isUpgradeRequest(raw)) return relayUpgrade(c, deps, endpoint, info.kubePath + search);
  const res = await deps.client.send(endpoint, {
    method: raw.method,
    path: info.kubePath + search,
    headers: raw.headers,
    body: raw.body,
    signal: raw.signal,
  });
  const headers = forwardableResponseHeaders(res.headers);
  if (isStreaming(c, info, res)) headers.set('Content-Encoding', 'identity');
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

export async function passthrough(c: Context, deps: ClientDeps, asked: RequestInfo): Promise<Response> {
  const cs = asked.clusterspace!;
  const endpoint = await deps.membership.endpointFor(cs, c.req.raw.signal);
  if (!endpoint) return unknownClusterspace(deps, cs, c.req.raw.signal);
  // a namespace by its fleet name (`shop.clusterspace.<this cluster>`, src/plan/namespace.ts) is this
  // cluster's plain one; another cluster's is a 400. Bodies stay as sent: this is a transparent proxy.
  const byName = fleetNamespace(asked);
  if (byName && 'code' in byName) return statusResponse(byName);
  return proxyTo(c, deps, endpoint, byName ? byName.info : asked);
}
