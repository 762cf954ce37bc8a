/**
 * The Node-only upgrade relay for exec, attach and port-forward (WebSocket and SPDY/3.1 alike).
 *
 * node:http hands upgrade requests to the 'upgrade' event, outside the request handler. The request still
 * goes through the app (the whole middleware chain, the routing, the refusals): it is rebuilt as a Web
 * Request and given to `app.fetch` with this socket's UpgradeRelay in the env (the contract:
 * src/platform/types.ts). When the route opens the upgrade upstream through it, the relay dials the cluster with
 * node:http(s) (the endpoint's CA and client certificate, a fresh connection: an upgraded socket is never
 * pooled) and:
 * - on 101, writes the upstream's status line and headers to the client as they came, then pipes the two
 *   sockets into each other (Node streams with backpressure: no buffering beyond the socket buffers,
 *   Nagle off both ways) until either side closes;
 * - on anything else, hands the answer back to the route, which passes it through unchanged so kubectl
 *   can fall back (WebSocket → SPDY).
 * Whatever the app answers instead (a Status: not found, forbidden, ambiguous name) is written to the
 * socket as a plain HTTP/1.1 response.
 */
import { request as httpRequest, type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { failure, internalError, statusResponse } from '../../src/kube/status.ts';
import { UPGRADE_RELAY, type UpgradeRelay } from '../../src/platform/types.ts';
import { RAW_TARGET } from '../../src/request/target.ts';
import type { ResolvedEndpoint } from '../../src/upstreams/endpoint.ts';
import { HeadersTimeoutError, type Transport, type UpstreamRequest } from '../../src/upstreams/transport.ts';
import { refuseRequestHead } from './request-head.ts';

/** An upgrade request as a Web Request (no body: upgrade requests carry none). */
export function requestFromIncoming(req: IncomingMessage, scheme: 'http' | 'https'): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  return new Request(`${scheme}://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
  });
}

const NOT_RELAYED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);

/**
 * A response written on a raw socket, which is then closed. The body streams (chunked): an app answer
 * to an odd upgrade request may be anything, a watch included.
 */
export async function writeRawResponse(socket: Duplex, res: Response): Promise<void> {
  const lines = [`HTTP/1.1 ${res.status} ${STATUS_CODES[res.status] ?? ''}`];
  res.headers.forEach((v, k) => {
    if (!NOT_RELAYED.has(k)) lines.push(`${k}: ${v}`);
  });
  const bodyless = !res.body || res.status === 204 || res.status === 304;
  lines.push(bodyless ? 'Content-Length: 0' : 'Transfer-Encoding: chunked', 'Connection: close', '', '');
  if (socket.destroyed) {
    await res.body?.cancel().catch(() => {});
    return;
  }
  socket.write(lines.join('\r\n'), 'latin1');
  if (bodyless) {
    socket.end();
    return;
  }
  const reader = res.body!.getReader();
  socket.once('close', () => void reader.cancel().catch(() => {}));
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done || socket.destroyed) break;
      if (r.value.length)
        socket.write(
          Buffer.concat([Buffer.from(`${r.value.length.toString(16)}\r\n`), r.value, Buffer.from('\r\n')]),
        );
    }
    socket.end('0\r\n\r\n');
  } catch {
    socket.destroy();
  }
}

function splice(client: Duplex, upstream: Socket): void {
  (client as Duplex & { setNoDelay?(v: boolean): void }).setNoDelay?.(true);
  upstream.setNoDelay(true);
  upstream.setTimeout(0);
  let done = false;
  const end = () => {
    if (done) return;
    done = true;
    client.destroy();
    upstream.destroy();
  };
  client.on('close', end);
  upstream.on('close', end);
  client.on('error', end);
  upstream.on('error', end);
  client.pipe(upstream);
  upstream.pipe(client);
}

/** Responses that stand for "the sockets are spliced": never written to the client. */
const SPLICED = new WeakSet<Response>();

/** The transport for one client socket: dials with node:http(s) and splices on 101. */
function socketTransport(client: Duplex, head: Buffer, onSpliced: () => void): Transport {
  return {
    send(endpoint: ResolvedEndpoint, r: UpstreamRequest): Promise<Response> {
      return new Promise<Response>((resolve, reject) => {
        const u = new URL(r.url);
        const headers: Record<string, string | string[]> = {};
        const add = (k: string, v: string) => {
          const key = k.toLowerCase();
          const prev = headers[key];
          headers[key] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
        };
        r.headers.forEach((v, k) => {
          add(k, v);
        });
        for (const [k, v] of r.headerLines ?? []) add(k, v);
        const https = u.protocol === 'https:';
        const up = (https ? httpsRequest : httpRequest)({
          method: r.method,
          host: u.hostname.replace(/^\[|\]$/g, ''),
          port: u.port || (https ? 443 : 80),
          path: u.pathname + u.search,
          headers,
          agent: false,
          ...(https
            ? {
                ca: endpoint.caPem,
                cert: endpoint.certPem,
                key: endpoint.keyPem,
                rejectUnauthorized: !endpoint.insecureSkipTLSVerify,
                servername: isIP(u.hostname) ? undefined : u.hostname,
              }
            : {}),
        });
        const timer = setTimeout(
          () => up.destroy(new HeadersTimeoutError('no response headers in time')),
          r.timeoutMs,
        );
        const onClientGone = () => up.destroy();
        client.once('close', onClientGone);
        up.on('upgrade', (res: IncomingMessage, upSocket: Socket, upHead: Buffer) => {
          clearTimeout(timer);
          client.off('close', onClientGone);
          if (client.destroyed) {
            upSocket.destroy();
            return;
          }
          const lines = [
            `HTTP/1.1 ${res.statusCode} ${res.statusMessage ?? STATUS_CODES[res.statusCode ?? 101]}`,
          ];
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
            lines.push(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}`);
          client.write(`${lines.join('\r\n')}\r\n\r\n`);
          if (upHead.length) client.write(upHead);
          if (head.length) upSocket.write(head);
          splice(client, upSocket);
          onSpliced();
          const spliced = new Response(null, { status: 200 });
          SPLICED.add(spliced);
          resolve(spliced);
        });
        up.on('response', (res: IncomingMessage) => {
          clearTimeout(timer);
          client.off('close', onClientGone);
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const out = new Headers();
            for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
              out.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
            const status = res.statusCode ?? 502;
            const nullBody = status === 204 || status === 304 || r.method === 'HEAD';
            resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, headers: out }));
          });
        });
        up.on('error', (e) => {
          clearTimeout(timer);
          client.off('close', onClientGone);
          reject(e);
        });
        up.end();
      });
    },
  };
}

/**
 * The UpgradeRelay of one client socket: every upgrade (WebSocket, SPDY/3.1) is relayed as it came,
 * headers included; on 101 the sockets are already spliced and the joined response is never written.
 */
function socketRelay(client: Duplex, head: Buffer, onSpliced: () => void): UpgradeRelay {
  const via = socketTransport(client, head, onSpliced);
  return {
    refusal: () => undefined,
    async relay(req, open) {
      const res = await open({ method: req.method, headers: req.headers, via });
      return SPLICED.has(res) ? { joined: res } : { answer: res };
    },
  };
}

type AppFetch = (req: Request, env: Record<string, unknown>) => Response | Promise<Response>;

/** Serves upgrade requests of `server` through the app, with the relay above. */
export function attachUpgradeRelay(server: Server, fetch: AppFetch): void {
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {});
    let spliced = false;
    const scheme = (socket as Duplex & { encrypted?: boolean }).encrypted ? 'https' : 'http';
    // the same head checks as every other request (Go refuses a bad Host before any upgrade)
    const refused = refuseRequestHead(req);
    if (refused) {
      void writeRawResponse(socket, statusResponse(failure(400, 'BadRequest', refused)));
      return;
    }
    const relay = socketRelay(socket, head, () => {
      spliced = true;
    });
    void (async () => {
      try {
        const res = await fetch(requestFromIncoming(req, scheme), {
          incoming: req,
          outgoing: undefined,
          [UPGRADE_RELAY]: relay,
          // the target as sent: the path checks refuse dot segments before anything resolves them
          [RAW_TARGET]: req.url ?? '/',
        });
        if (spliced || SPLICED.has(res)) return;
        await writeRawResponse(socket, res);
      } catch (e) {
        if (spliced) return;
        console.error('fleet: upgrade relay failed', e);
        await writeRawResponse(socket, statusResponse(internalError('the upgrade could not be relayed')));
      }
    })();
  });
}
