/**
 * exec, attach and portforward: the HTTP/1.1 upgrade goes to the cluster that owns the pod and the bytes
 * are spliced both ways, never buffered or interpreted.
 *
 * The route decides where the upgrade goes and what is refused; joining the client to the upstream is
 * the runtime's, behind the platform seam (src/platform/types.ts, UpgradeRelay), which the runtime
 * entry hands the app in the request's env:
 * - Node (deploy/node/upgrade.ts): raw HTTP/1.1 upgrades, WebSocket and SPDY/3.1 alike, spliced as bytes.
 * - Workers (src/platform/worker.ts): WebSocket only, relayed message by message; anything else is
 *   refused with a 400 Status before anything is sent upstream.
 * An upstream answer that is not an upgrade is passed through (a Status with fleet names), so kubectl
 * can fall back from WebSocket to SPDY. A request without an Upgrade header is forwarded as a plain
 * request (the cluster answers `400 Upgrade request required`, as kube-apiserver does).
 */
import type { Context } from 'hono';
import { badRequest, type Status, statusResponse } from '../kube/status.ts';
import { rewriteStatusNames } from '../merge/names.ts';
import { type FleetView, fleetName } from '../merge/objects.ts';
import { upgradeRelayOf } from '../platform/types.ts';
import { kubePathWithName, type RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import { forwardableResponseHeaders } from '../upstreams/client.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { fleetMembership, type Target } from '../upstreams/fanout.ts';
import { ownerQuery, resolveOwner } from './get.ts';
import { locateOwner } from './write.ts';

export const CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward']);

export function isUpgradeRequest(req: Request): boolean {
  return (req.headers.get('upgrade') ?? '').trim() !== '';
}

/** exec / attach / portforward of a pod named in the fleet view. */
export async function connectRoute(
  c: Context,
  deps: FleetDeps,
  info: RequestInfo,
  targets: Target[],
  plainNameCluster: string | undefined,
): Promise<Response> {
  const req = c.req.raw;
  const resolved = await resolveOwner(deps, info, targets, plainNameCluster);
  if ('code' in resolved) return statusResponse(resolved);
  const owner =
    'search' in resolved ? await locateOwner(deps, info, targets, resolved.plain, req.signal) : resolved;
  if ('code' in owner) return statusResponse(owner);
  const membership = await fleetMembership(deps, req.signal);
  const q = ownerQuery(new URL(req.url), membership, owner.target.cluster);
  if ('code' in q) return statusResponse(q);
  const s = q.toString();
  const view: FleetView = { federation: deps.config.federation };
  const rename = (st: Status) =>
    rewriteStatusNames(st, owner.plain, fleetName(view, owner.plain, owner.target.cluster));
  return relayUpgrade(
    c,
    deps,
    owner.target.endpoint,
    kubePathWithName(info, owner.plain) + (s ? `?${s}` : ''),
    rename,
  );
}

/** Relays the request's upgrade (or plain request) to `path` on `endpoint`. Used by passthrough too. */
export async function relayUpgrade(
  c: Context,
  deps: FleetDeps,
  endpoint: ResolvedEndpoint,
  path: string,
  rename?: (s: Status) => Status,
): Promise<Response> {
  const req = c.req.raw;
  const relay = upgradeRelayOf(c.env);
  if (!isUpgradeRequest(req)) {
    // kubectl's SPDY attempt carries X-Stream-Protocol-Version; when a proxy in front of the runtime
    // dropped its Upgrade header (wrangler dev's does), a runtime that cannot relay it still answers with
    // its own Status rather than the cluster's bare "Upgrade request required"
    const refusal = req.headers.has('x-stream-protocol-version') ? relay?.refusal(req) : undefined;
    if (refusal !== undefined) return statusResponse(badRequest(refusal));
    const res = await deps.client.send(endpoint, {
      method: req.method,
      path,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
    });
    return passThrough(res, rename);
  }
  if (!relay)
    return statusResponse(
      badRequest('this server cannot relay exec, attach or port-forward (no upgrade relay for this request)'),
    );
  const refusal = relay.refusal(req);
  if (refusal !== undefined) return statusResponse(badRequest(refusal));
  const r = await relay.relay(req, (o) =>
    deps.client.send(endpoint, { method: o.method, path, headers: o.headers, upgrade: true, via: o.via }),
  );
  return 'joined' in r ? r.joined : passThrough(r.answer, rename);
}

/** An upstream answer that is not a 101, status and headers unchanged; a Status shows fleet names. */
async function passThrough(res: Response, rename?: (s: Status) => Status): Promise<Response> {
  const headers = forwardableResponseHeaders(res.headers);
  const type = res.headers.get('content-type') ?? '';
  if (!rename || !type.includes('json')) return new Response(res.body, { status: res.status, headers });
  const text = await res.text();
  try {
    const body = JSON.parse(text);
    if (body?.kind === 'Status') {
      headers.delete('content-length');
      return new Response(JSON.stringify(rename(body as Status)), { status: res.status, headers });
    }
  } catch {
    // not JSON after all: as it came
  }
  return new Response(text, { status: res.status, headers });
}
