/**
 * The worker side of the platform seam (see ./types.ts): Workers' `fetch`, plus `mtls_certificates`
 * bindings for client certificates. What the platform cannot do per request is refused at startup with
 * a message saying what to do instead.
 */
import { ConfigError } from '../config/schema.ts';
import { type Fetcher, fetchTransport } from '../upstreams/transport.ts';
import { useNativePull } from '../util/pulled.ts';
import { locationCache } from './cache.ts';
import type { Platform, UpgradeRelay } from './types.ts';
import { workerPullReader } from './worker-pull.ts';

/** The service binding to the fleet's own `FleetRelay` entrypoint (see wrangler.toml). */
export const RELAY_BINDING = 'FLEET_RELAY';

/**
 * The default of `maxClustersPerRequest` on Workers: Cloudflare documents at most 32 Worker invocations per
 * request through service bindings, and a fan-out asks its clusters in relay groups of 6 (31 relays × 6).
 * 1,000 clusters were measured within the paid plan's CPU and memory with the setting raised, in workerd,
 * which does not count invocations (docs/deployment.md).
 */
export const WORKER_MAX_CLUSTERS = 186;

export function workerPlatform(env: Record<string, unknown>): Platform {
  // a merged list's sources read up to 64 KiB a read, not 4 KiB (./worker-pull.ts)
  useNativePull(workerPullReader);
  const relayBinding = env[RELAY_BINDING] as { fetch(req: Request): Promise<Response> } | undefined;
  const fetchers: Record<string, Fetcher> = {};
  for (const [k, v] of Object.entries(env)) {
    const f = (v as { fetch?: unknown } | null)?.fetch;
    if (typeof f === 'function') fetchers[k] = (input, init) => (f as Fetcher).call(v, input, init);
  }
  return {
    name: 'worker',
    files: {
      readText(path, field) {
        throw new ConfigError(
          `${field}: the worker runtime has no files (${path}); inline the data (…Data fields, token, or kubeconfig.inline)`,
        );
      },
    },
    transport: fetchTransport((input, init) => fetch(input, init), fetchers),
    gzipResponses: false,
    // Workers: 6 simultaneous open connections per request; wider fan-outs go through the relay
    maxConnectionsPerRequest: 6,
    relay: relayBinding ? (req) => relayBinding.fetch(req) : undefined,
    maxClustersPerRequest: WORKER_MAX_CLUSTERS,
    edgeCache: locationCache(),
    checkEndpoint(ep, where) {
      if (ep.caPem)
        throw new ConfigError(
          `${where}: the worker runtime cannot trust a private CA per request; serve the upstream with a publicly trusted certificate, or run the Node container`,
        );
      if (ep.insecureSkipTLSVerify && ep.server.startsWith('https:'))
        throw new ConfigError(`${where}.insecureSkipTLSVerify: the worker runtime always verifies TLS`);
      if ((ep.certPem || ep.keyPem) && !ep.mtlsBinding)
        throw new ConfigError(
          `${where}: the worker runtime presents client certificates only through an mtls_certificates binding; upload the certificate and set mtlsCertificateBinding`,
        );
      if (ep.mtlsBinding && !fetchers[ep.mtlsBinding])
        throw new ConfigError(
          `${where}.mtlsCertificateBinding: no binding named "${ep.mtlsBinding}" in the worker's env`,
        );
    },
  };
}

/** The parts of the Workers WebSocket API the relay uses. */
interface WorkerSocket {
  accept(): void;
  send(data: string | ArrayBuffer | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  binaryType: string;
  addEventListener(type: 'message', f: (e: { data: string | ArrayBuffer }) => void): void;
  addEventListener(type: 'close', f: (e: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', f: () => void): void;
}
type SocketPair = new () => Record<0 | 1, WorkerSocket>;

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

/** Joins two accepted sockets: every message and close crosses unchanged. */
function join(server: WorkerSocket, upstream: WorkerSocket): void {
  upstream.accept();
  server.accept();
  // the default `blob` breaks kubectl's binary channel frames
  upstream.binaryType = 'arraybuffer';
  server.binaryType = 'arraybuffer';
  server.addEventListener('message', (e) => upstream.send(e.data));
  upstream.addEventListener('message', (e) => server.send(e.data));
  server.addEventListener('close', (e) => safeClose(upstream, e.code, e.reason));
  upstream.addEventListener('close', (e) => safeClose(server, e.code, e.reason));
  server.addEventListener('error', () => safeClose(upstream, 1011, 'client error'));
  upstream.addEventListener('error', () => safeClose(server, 1011, 'upstream error'));
}

/**
 * The Workers side of UpgradeRelay: WebSocket only (the runtime has no raw HTTP upgrades, so SPDY/3.1
 * cannot be spliced). The upstream WebSocket is opened with `fetch` (the client's subprotocol offer
 * kept), a WebSocketPair answers the client with the subprotocol the upstream chose, and messages are
 * relayed both ways.
 */
export function workerUpgradeRelay(
  Pair: SocketPair | undefined = (globalThis as { WebSocketPair?: SocketPair }).WebSocketPair,
): UpgradeRelay {
  return {
    refusal(req) {
      const upgrade = req.headers.get('upgrade') ?? '';
      if (upgrade.toLowerCase() === 'websocket' && Pair) return undefined;
      const what = upgrade || (req.headers.has('x-stream-protocol-version') ? 'SPDY/3.1' : 'requested');
      return `this runtime relays exec, attach and port-forward over WebSocket only (v5.channel.k8s.io, v4.channel.k8s.io, SPDY/3.1+portforward.k8s.io); the ${what} upgrade needs the Node server`;
    },
    async relay(req, open) {
      const headers = new Headers(req.headers);
      // the runtime's fetch runs its own handshake: the client's key and extensions are not ours to reuse
      for (const h of ['sec-websocket-key', 'sec-websocket-version', 'sec-websocket-extensions'])
        headers.delete(h);
      const res = await open({ method: 'GET', headers });
      const upstream = (res as Response & { webSocket?: WorkerSocket | null }).webSocket;
      if (!upstream || !Pair) return { answer: res };
      const pair = new Pair();
      join(pair[1], upstream);
      const out = new Headers();
      const protocol = res.headers.get('sec-websocket-protocol');
      if (protocol) out.set('Sec-WebSocket-Protocol', protocol);
      return {
        joined: new Response(null, { status: 101, headers: out, webSocket: pair[0] } as ResponseInit),
      };
    },
  };
}
