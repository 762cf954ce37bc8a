/**
 * Per-cluster passthrough: `/clusterspaces/<member|karmada>/…` is a transparent proxy to that one cluster.
 * Method, path, query and body go upstream as received (minus hop-by-hop and credential headers); status,
 * headers and body come back unchanged and streamed, so watch and `logs -f` arrive event by event.
 *
 * Where the runtime entry offers a direct relay (Node: deploy/node/relay.ts), the upstream call goes
 * through it: the same client (hygiene, credential, identity, audit, metrics), but the answer is written
 * from the upstream's socket to the client's by the runtime, with no Web objects in between.
 */
import type { Context } from 'hono';
import { statusResponse } from '../kube/status.ts';
import { fleetNamespace } from '../plan/namespace.ts';
import { directRelayOf } from '../platform/types.ts';
import { queryBool, type RequestInfo } from '../request/info.ts';
import type { ClientDeps } from '../types.ts';
import { readKind } from '../upstreams/cache/policy.ts';
import { forwardableResponseHeaders, type SendOptions } from '../upstreams/client.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { undialed } from './locate.ts';
import { unknownClusterspace } from './respond.ts';
import { isUpgradeRequest, relayUpgrade } from './upgrade.ts';

/**
 * Responses that stream (watch, follow logs, chunked bodies of unknown length) are marked
 * `Content-Encoding: identity`: worker runtimes otherwise gzip them and deliver everything at the end.
 * `streamingAsked` is the request's half of that test, the missing Content-Length the answer's.
 */
function streamingAsked(info: RequestInfo, search: string): boolean {
  return (
    info.verb === 'watch' || (search.includes('follow') && queryBool(new URLSearchParams(search), 'follow'))
  );
}

function isStreaming(asked: boolean, res: Response): boolean {
  return asked && !res.headers.has('content-length') && !res.headers.has('content-encoding');
}

/** The query of the request URL as `URL#search` gives it ('' for none or a lone '?'), without parsing the URL. */
export function searchOf(url: string): string {
  const hash = url.indexOf('#');
  const end = hash < 0 ? url.length : hash;
  const q = url.indexOf('?');
  return q < 0 || q >= end - 1 ? '' : url.slice(q, end);
}

/**
 * The request relayed to `endpoint`. Neither this nor {@link passthrough} is an async function: the
 * passthrough is the fleet's busiest path, and each suspended async frame (its registers, the awaits'
 * closures and reactions) is allocated per request; one `then` carries the answer instead.
 */
export function proxyTo(
  c: Context,
  deps: ClientDeps,
  endpoint: ResolvedEndpoint,
  info: RequestInfo,
): Promise<Response> {
  const raw = c.req.raw;
  const search = searchOf(raw.url);
  // exec / attach / port-forward (any upgrade): spliced unchanged, see connect.ts
  if (isUpgradeRequest(raw)) return relayUpgrade(c, deps, endpoint, info.kubePath + search);
  const path = info.kubePath + search;
  const asked = streamingAsked(info, search);
  const direct = directRelayOf(c.env);
  // reads the fleet may share (discovery, OpenAPI, resourceVersion=0) go the usual way: the platform's
  // transport is where they are kept and coalesced (a resource read without a query is none of them)
  const shared = raw.method === 'GET' && (search !== '' || !info.isResourceRequest);
  const via = direct && !(shared && readKind(raw.method, path) !== undefined) ? direct : undefined;
  const cluster = info.clusterspace;
  const send: SendOptions = {
    method: raw.method,
    path,
    headers: raw.headers,
    body: raw.body,
    signal: via ? via.signal : raw.signal,
  };
  if (via) send.via = via.transport({ streaming: asked });
  return deps.client.send(endpoint, send).then((res) => {
    // Karmada's cluster proxy saying it could not dial the member: the fleet's 503 naming it, as get and
    // the merged reads answer (a member's own 500 passes unchanged, see locate.ts)
    if (res.status === 500 && cluster)
      return undialed({ cluster, endpoint }, res).then((swapped) =>
        swapped.status !== 500 ? swapped : passOn(swapped, asked),
      );
    if (via?.owns(res)) return res;
    return passOn(res, asked);
  });
}

/** `res` as the client gets it: the upstream's status and body, its forwardable headers */
function passOn(res: Response, asked: boolean): Response {
  const headers = forwardableResponseHeaders(res.headers);
  if (isStreaming(asked, res)) headers.set('Content-Encoding', 'identity');
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

export function passthrough(c: Context, deps: ClientDeps, asked: RequestInfo): Promise<Response> {
  const cs = asked.clusterspace!;
  // a static member, or membership listed within its TTL: no listing to wait for
  const known = deps.membership.knownEndpoint(cs);
  if (known !== undefined) return toEndpoint(c, deps, asked, known ?? undefined);
  return deps.membership
    .endpointFor(cs, signalOf(c))
    .then((endpoint) => toEndpoint(c, deps, asked, endpoint));
}

/** the request's signal: the direct relay's (the client's connection) where the entry offers one */
function signalOf(c: Context): AbortSignal {
  return directRelayOf(c.env)?.signal ?? c.req.raw.signal;
}

function toEndpoint(
  c: Context,
  deps: ClientDeps,
  asked: RequestInfo,
  endpoint: ResolvedEndpoint | undefined,
): Promise<Response> {
  const cs = asked.clusterspace!;
  if (!endpoint) return unknownClusterspace(deps, cs, signalOf(c));
  // a namespace by its fleet name (`shop.clusterspace.<this cluster>`, src/plan/namespace.ts) is this
  // cluster's plain one; another cluster's is a 400. Bodies stay as sent: this is a transparent proxy.
  const byName = fleetNamespace(asked);
  if (byName && 'code' in byName) return Promise.resolve(statusResponse(byName));
  return proxyTo(c, deps, endpoint, byName ? byName.info : asked);
}
