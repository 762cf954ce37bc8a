/**
 * exec, attach and portforward: the HTTP/1.1 upgrade goes to the cluster that owns the pod and the bytes
 * are spliced both ways, never buffered or interpreted.
 *
 * Two ways to splice, chosen by what the runtime offers (same routing and refusals either way):
 * - Node: the entry (deploy/node/upgrade.ts) hands the app a relay in the request's env under
 *   {@link UPGRADE_RELAY}; it dials the upstream with the upgrade headers unchanged, and on 101 joins the
 *   two sockets (WebSocket and SPDY/3.1 alike). Any other answer comes back here and is passed through, so
 *   kubectl can fall back from WebSocket to SPDY.
 * - Workers (workerd): WebSocket only. The upstream WebSocket is opened with `fetch` (Upgrade: websocket,
 *   the client's Sec-WebSocket-Protocol offer), a WebSocketPair answers the client with the subprotocol
 *   the upstream chose, and messages are relayed both ways with `binaryType = 'arraybuffer'` (the default
 *   `blob` breaks kubectl's binary channel frames). A SPDY upgrade gets a 400 saying so.
 * A request without an Upgrade header is forwarded as a plain request (the cluster answers
 * `400 Upgrade request required`, as kube-apiserver does).
 */
import type { Context } from 'hono';
import { badRequest, type Status, statusResponse } from '../kube/status.ts';
import { rewriteStatusNames } from '../merge/names.ts';
import { type FleetView, fleetName } from '../merge/objects.ts';
import { kubePathWithName, type RequestInfo } from '../request/info.ts';
import type { FleetDeps } from '../types.ts';
import { forwardableResponseHeaders } from '../upstreams/client.ts';
import type { ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { fleetMembership, type Target } from '../upstreams/fanout.ts';
import type { Transport } from '../upstreams/transport.ts';
import { ownerQuery, resolveOwner } from './get.ts';
import { locateOwner } from './write.ts';

export const CONNECT_SUBRESOURCES: ReadonlySet<string> = new Set(['exec', 'attach', 'portforward']);

/**
 * The key under which a runtime entry that can splice sockets puts its relay into the request's env: a
 * Transport for this one request (the upstream client still builds the headers: hygiene, credential,
 * identity). On 101 it joins the sockets and resolves with a response registered in {@link SPLICED};
 * any other upstream answer resolves as it came.
 */
export const UPGRADE_RELAY = 'fleetUpgradeRelay';

/** Responses that stand for "the sockets are spliced": never written to the client. */
export const SPLICED = new WeakSet<Response>();

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
  if (!isUpgradeRequest(req)) {
    const res = await deps.client.send(endpoint, {
      method: req.method,
      path,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
    });
    return passThrough(res, rename);
  }
  const relay = (c.env as Record<string, unknown> | undefined)?.[UPGRADE_RELAY] as Transport | undefined;
  if (relay && typeof relay.send === 'function') {
    const res = await deps.client.send(endpoint, {
      method: req.method,
      path,
      headers: req.headers,
      upgrade: true,
      via: relay,
    });
    // spliced: the socket belongs to the relay now; this response is never written
    if (SPLICED.has(res)) return res;
    return passThrough(res, rename);
  }
  const Pair = (globalThis as { WebSocketPair?: new () => Record<0 | 1, WorkerSocket> }).WebSocketPair;
  if ((req.headers.get('upgrade') ?? '').toLowerCase() === 'websocket' && Pair)
    return relayWebSocket(deps, endpoint, path, req, Pair, rename);
  return statusResponse(
    badRequest(
      `this runtime relays exec, attach and port-forward over WebSocket only (v5.channel.k8s.io, v4.channel.k8s.io, SPDY/3.1+portforward.k8s.io); the ${req.headers.get('upgrade')} upgrade needs the Node server`,
    ),
  );
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

/** The parts of the Workers WebSocket API the relay uses. */
interface WorkerSocket {
  accept(): void;
  send(data: string | ArrayBuffer | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  binaryType: string;
  readyState: number;
  addEventListener(type: 'message', f: (e: { data: string | ArrayBuffer }) => void): void;
  addEventListener(type: 'close', f: (e: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', f: () => void): void;
}

/** Codes a peer may not send in a close frame (1005 no status, 1006 abnormal, 1015 TLS). */
function closeCode(code: number): number {
  if (code === 1005) return 1000;
  if (code === 1006 || code === 1015 || code < 1000 || code >= 5000) return 1011;
  return code;
}

function safeClose(ws: WorkerSocket, code: number, reason: string): void {
  try {
    ws.close(closeCode(code), reason);
  } catch {
    // already closing
  }
}

async function relayWebSocket(
  deps: FleetDeps,
  endpoint: ResolvedEndpoint,
  path: string,
  req: Request,
  Pair: new () => Record<0 | 1, WorkerSocket>,
  rename?: (s: Status) => Status,
): Promise<Response> {
  const headers = new Headers(req.headers);
  // the runtime's fetch runs its own handshake: the client's key and extensions are not ours to reuse
  for (const h of ['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions'])
    headers.delete(h);
  const res = await deps.client.send(endpoint, { method: 'GET', path, headers, upgrade: true });
  const upstream = (res as Response & { webSocket?: WorkerSocket | null }).webSocket;
  if (!upstream) return passThrough(res, rename);
  const pair = new Pair();
  const client = pair[0];
  const server = pair[1];
  upstream.accept();
  server.accept();
  upstream.binaryType = 'arraybuffer';
  server.binaryType = 'arraybuffer';
  server.addEventListener('message', (e) => upstream.send(e.data));
  upstream.addEventListener('message', (e) => server.send(e.data));
  server.addEventListener('close', (e) => safeClose(upstream, e.code, e.reason));
  upstream.addEventListener('close', (e) => safeClose(server, e.code, e.reason));
  server.addEventListener('error', () => safeClose(upstream, 1011, 'client error'));
  upstream.addEventListener('error', () => safeClose(server, 1011, 'upstream error'));
  const out = new Headers();
  const protocol = res.headers.get('sec-websocket-protocol');
  if (protocol) out.set('Sec-WebSocket-Protocol', protocol);
  return new Response(null, { status: 101, headers: out, webSocket: client } as ResponseInit);
}
