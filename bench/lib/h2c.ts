/**
 * A Web fetch handler (a simulated cluster) served over HTTP/2 with prior knowledge (h2c), beside its
 * HTTP/1.1 port, so a fleet started with FLEET_UPSTREAM_HTTP2=h2c multiplexes its upstream watches over a
 * few connections per cluster, as client-go does with a real kube-apiserver over TLS. Enough of HTTP for
 * the bench: any method, request bodies read whole, response bodies streamed as they come (a watch's
 * events are written one by one), a stream the client resets cancels the answer.
 */
import { createServer, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';

/** kube-apiserver's default --http2-max-streams-per-connection */
const MAX_STREAMS = 1000;
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

export interface H2cServer {
  url: string;
  /** open streams now */
  streams(): number;
  /** HTTP/2 sessions (connections) now */
  sessions(): number;
  close(): Promise<void>;
}

async function handle(
  fetch: (req: Request) => Response | Promise<Response>,
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
): Promise<void> {
  const method = String(headers[':method'] ?? 'GET');
  const h = new Headers();
  for (const [k, v] of Object.entries(headers))
    if (!k.startsWith(':') && v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : String(v));
  const ac = new AbortController();
  stream.once('close', () => ac.abort());
  let body: BodyInit | undefined;
  if (method !== 'GET' && method !== 'HEAD') {
    const parts: Buffer[] = [];
    for await (const c of stream) parts.push(c as Buffer);
    body = new Uint8Array(Buffer.concat(parts));
  }
  const res = await fetch(
    new Request(`http://${headers[':authority'] ?? '127.0.0.1'}${headers[':path'] ?? '/'}`, {
      method,
      headers: h,
      body,
      signal: ac.signal,
    }),
  );
  if (stream.destroyed || stream.closed) {
    await res.body?.cancel().catch(() => {});
    return;
  }
  const out: Record<string, string | string[] | number> = { ':status': res.status };
  res.headers.forEach((v, k) => {
    if (!HOP.has(k)) out[k] = v;
  });
  stream.respond(out, { endStream: !res.body });
  if (!res.body) return;
  const reader = res.body.getReader();
  stream.once('close', () => void reader.cancel().catch(() => {}));
  for (;;) {
    const r = await reader.read().catch(() => undefined);
    if (!r || r.done) {
      if (r && !stream.destroyed) stream.end();
      else stream.destroy();
      return;
    }
    if (stream.destroyed) return;
    if (!stream.write(r.value))
      await new Promise<void>((ok) => {
        const go = () => {
          stream.off('drain', go);
          stream.off('close', go);
          ok();
        };
        stream.once('drain', go);
        stream.once('close', go);
      });
  }
}

export async function serveH2c(fetch: (req: Request) => Response | Promise<Response>): Promise<H2cServer> {
  const server = createServer({
    settings: { maxConcurrentStreams: MAX_STREAMS },
    // many idle watch streams per session: the default (10 MB) counts their buffered frames
    maxSessionMemory: 256,
  });
  let open = 0;
  const sessions = new Set<import('node:http2').ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.once('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, headers) => {
    open++;
    stream.once('close', () => open--);
    stream.on('error', () => {});
    handle(fetch, stream, headers).catch(() => stream.destroy());
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    streams: () => open,
    sessions: () => sessions.size,
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sessions) s.destroy();
        server.close(() => ok());
      }),
  };
}
