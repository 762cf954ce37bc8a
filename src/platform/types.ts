/**
 * The platform seam: the one place where the runtime differs. `node.ts` (imported only by deploy/node and
 * Node-side tests) and `worker.ts` (imported by the worker entry) implement it; nothing else in src/
 * touches a runtime-specific API.
 */

import type { RelayFetcher } from '../types.ts';
import type { EdgeStore } from '../upstreams/cache/store.ts';
import type { FileReader, ResolvedEndpoint } from '../upstreams/endpoint.ts';
import type { Transport } from '../upstreams/transport.ts';

export interface Platform {
  name: 'node' | 'worker';
  files: FileReader;
  transport: Transport;
  /**
   * true when the fleet must gzip large answers itself (Node); false where the runtime compresses
   * responses on its own (Workers encode bodies automatically when the client accepts gzip)
   */
  gzipResponses: boolean;
  /** simultaneous outgoing connections one request may hold (Workers: 6, Node: unbounded) */
  maxConnectionsPerRequest: number;
  /** the fleet's own relay, where the runtime limits connections per request */
  relay?: RelayFetcher;
  /** clusters one request may ask where the runtime bounds a request's work (Workers); unbounded if absent */
  maxClustersPerRequest?: number;
  /** the runtime's shared cache for kept reads (Workers: the location's Cache API; ./cache.ts) */
  edgeCache?: EdgeStore;
  /** refuse, at startup, an endpoint the runtime cannot reach as configured (e.g. a private CA on Workers) */
  checkEndpoint(endpoint: ResolvedEndpoint, where: string): void;
}

/**
 * The key under which a runtime entry puts the request's {@link UpgradeRelay} into the env it hands
 * `app.fetch` (Hono's `c.env`): per request on Node (it owns the client's socket), per isolate on Workers.
 * A request without one (in-process tests, the worker's relay entrypoint) cannot be upgraded.
 */
export const UPGRADE_RELAY = 'fleetUpgradeRelay';

/** How the route asks for the upstream upgrade: the upstream client builds the rest (hygiene, credential). */
export interface UpgradeOpen {
  method: string;
  headers: Headers;
  /** the transport that dials (a socket-splicing one on Node); the platform's own when absent */
  via?: Transport;
}

/**
 * What a route that relays exec, attach or port-forward needs of the runtime (the routing, the refusals
 * and the upstream headers stay the route's). Implemented by deploy/node/upgrade.ts (raw HTTP/1.1
 * upgrades: WebSocket and SPDY/3.1 spliced as bytes) and ./worker.ts (WebSocket messages relayed through
 * a WebSocketPair).
 */
export interface UpgradeRelay {
  /**
   * Why this runtime cannot relay this request (a message for a 400 Status), or undefined when it can.
   * Decided before anything is sent upstream.
   */
  refusal(req: Request): string | undefined;
  /**
   * Opens the upstream upgrade through `open` and joins it to the client. `joined`: the response the
   * entry gives the client (on Node the sockets are already spliced and the entry writes nothing);
   * `answer`: the upstream did not upgrade, its answer is the route's to pass on (so kubectl can fall
   * back from WebSocket to SPDY).
   */
  relay(
    req: Request,
    open: (o: UpgradeOpen) => Promise<Response>,
  ): Promise<{ joined: Response } | { answer: Response }>;
}

/** The request's upgrade relay, if the runtime entry provided one. */
export function upgradeRelayOf(env: unknown): UpgradeRelay | undefined {
  const r = (env as Record<string, unknown> | undefined)?.[UPGRADE_RELAY] as UpgradeRelay | undefined;
  return r && typeof r.relay === 'function' ? r : undefined;
}

/**
 * The env key under which a runtime entry hands the fleet-exec route (src/routes/fleetexec.ts) a transport
 * that opens upstream WebSockets, where the runtime's own fetch cannot (Node: deploy/node/exec-transport.ts).
 */
export const EXEC_TRANSPORT = 'fleetExecTransport';

/** The parts of a client WebSocket (the Workers API's shape) an exec needs. */
export interface ExecSocket {
  accept(): void;
  binaryType: string;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', f: (e: { data: string | ArrayBuffer }) => void): void;
  addEventListener(type: 'close', f: (e: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', f: () => void): void;
}

/**
 * The env key under which the Node entry hands the passthrough route (src/routes/passthrough.ts) a
 * {@link DirectRelay} for the request: the upstream's answer then goes from the upstream socket to the
 * client's (deploy/node/relay.ts) without a Web Response, Headers or ReadableStream in between, unless
 * something above reads them. Absent on Workers and in in-process tests: the route relays the Response.
 */
export const DIRECT_RELAY = 'fleetDirectRelay';

/** A passthrough answer that the runtime writes to the client itself; see {@link DIRECT_RELAY}. */
export interface DirectRelay {
  /** aborted when the client goes away before its answer is complete: the signal for upstream calls */
  readonly signal: AbortSignal;
  /**
   * The transport to send this request's upstream call through (the upstream client's `via`: hygiene,
   * credential and identity stay the client's). Its answers already carry the response header hygiene;
   * `streaming`: mark a body of unknown length `Content-Encoding: identity` as the route does (watch,
   * `logs -f`).
   */
  transport(opts: { streaming: boolean }): Transport;
  /** whether `res` is an answer of this relay's transport, to be returned as it is */
  owns(res: Response): boolean;
}

/** The request's direct relay, if the runtime entry provided one. */
export function directRelayOf(env: unknown): DirectRelay | undefined {
  const r = (env as Record<string, unknown> | undefined)?.[DIRECT_RELAY] as DirectRelay | undefined;
  return r && typeof r.owns === 'function' ? r : undefined;
}
