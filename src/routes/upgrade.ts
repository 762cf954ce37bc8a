/**
 * Not a route: relaying an HTTP/1.1 upgrade (exec, attach, port-forward) to one cluster, used by the
 * fleet view's connect route and by the passthrough proxy alike.
 *
 * The routes decide where the upgrade goes and what is refused; joining the client to the upstream is
 * the runtime's, behind the platform seam (src/platform/types.ts, UpgradeRelay), which the runtime entry
 * hands the app in the request's env:
 * - Node (deploy/node/upgrade.ts): raw HTTP/1.1 upgrades, WebSocket and SPDY/3.1 alike, spliced as bytes.
 * - Workers (src/platform/worker.ts): WebSocket only, relayed message by message; anything else is
 *   refused with a 400 Status before anything is sent upstream.
 * An upstream answer that is not an upgrade is passed through (a Status with fleet names), so kubectl
 * can fall back from WebSocket to SPDY. A request without an Upgrade header is forwarded as a plain
 * request (the cluster answers `400 Upgrade request required`, as kube-apiserver does).
 */
import type { Context } from 'hono';
import { kubeJson } from '../kube/json.ts';
import { badRequest, type Status, statusResponse } from '../kube/status.ts';
import { upgradeRelayOf } from '../platform/types.ts';
import type { FleetDeps } from '../types.ts';
import { forwardableResponseHeaders } from '../upstreams/client.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';

function hasUpgradeHeader(req: Request): boolean {
  return (req.headers.get('upgrade') ?? '').trim() !== '';
}

/**
 * Whether the client asked for an upgrade. kubectl's SPDY attempt always carries X-Stream-Protocol-Version,
 * which counts too: a proxy in front of the runtime may have dropped its Upgrade header (wrangler dev's
 * does), and the request must still reach {@link relayUpgrade} for the runtime's own answer.
 */
export function isUpgradeRequest(req: Request): boolean {
  return hasUpgradeHeader(req) || req.headers.has('x-stream-protocol-version');
}

/** Relays the request's upgrade (or plain request) to `path` on `endpoint`. Used by passthrough too. */
export async function relayUpgrade(
  c: Context,
  deps: Pick<FleetDeps, 'client'>,
  endpoint: ResolvedEndpoint,
  path: string,
  rename?: (s: Status) => Status,
): Promise<Response> {
  const req = c.req.raw;
  const relay = upgradeRelayOf(c.env);
  if (!hasUpgradeHeader(req)) {
    // a SPDY attempt whose Upgrade header a proxy dropped: a runtime that cannot relay it answers with its
    // own Status rather than the cluster's bare "Upgrade request required"
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
      return new Response(kubeJson(rename(body as Status)), { status: res.status, headers });
    }
  } catch {
    // not JSON after all: as it came
  }
  return new Response(text, { status: res.status, headers });
}
