/**
 * The Node side of the platform seam (see ./types.ts). Node-only: imported by deploy/node and by tests
 * that run on Node, never by code the worker bundles.
 *
 * - Transport: undici.request over one keep-alive pool (Agent) per upstream, with the endpoint's CA and
 *   client certificate. Measured faster than WHATWG fetch for relaying (RUNTIME-NOTES: ≈0.63× vs ≈0.38× of
 *   raw node:http piping).
 * - serveFetch: any Web fetch handler (the fleet, a simulated cluster) on a real HTTP(S) port.
 */
import { readFileSync } from 'node:fs';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsOptions } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import { Agent, type Dispatcher, request } from 'undici';
import { ConfigError } from '../config/schema.ts';
import { failure } from '../kube/status.ts';
import type { FileReader, ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { HeadersTimeoutError, type Transport, type UpstreamRequest } from '../upstreams/transport.ts';
import type { Platform } from './types.ts';

export const nodeFiles: FileReader = {
  readText(path, field) {
    const p = path.startsWith('~/') ? `${process.env.HOME ?? ''}${path.slice(1)}` : path;
    try {
      return readFileSync(p, 'utf8');
    } catch (e) {
      throw new ConfigError(
        `${field}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
  },
};

const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * undici's errors as the neutral ones the rest of src/ knows: an aborted request (the caller went away)
 * is the Web-standard AbortError on every runtime, so nothing above the seam matches undici's codes.
 */
function neutralError(err: unknown): unknown {
  if ((err as { code?: string })?.code === 'UND_ERR_ABORTED')
    return new DOMException((err as Error).message || 'the request was aborted', 'AbortError');
  return err;
}

/**
 * A Node Readable as a Web ReadableStream. Not `Readable.toWeb`: on Node 20 it crashes the process
 * ("Controller is already closed") when the client disconnects mid-body. Cancelling destroys the source,
 * which closes the upstream request (a watch stops at once).
 */
export function toWebStream(source: Readable): ReadableStream<Uint8Array> {
  // the iterator is made on first read: until then the Node stream stays untouched, so writeStreamed
  // can still pipe it (highWaterMark 0: nothing is pulled before someone reads)
  let it: AsyncIterator<Uint8Array> | undefined;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          it ??= source[Symbol.asyncIterator]();
          const { value, done } = await it.next();
          if (done) controller.close();
          else controller.enqueue(value as Uint8Array);
        } catch (err) {
          controller.error(neutralError(err));
        }
      },
      cancel() {
        // undici's body emits an AbortError on destroy; nobody reads it any more, so it must not go unhandled
        source.on('error', () => {});
        source.destroy();
      },
    },
    { highWaterMark: 0 },
  );
  nodeBodies.set(stream, source);
  return stream;
}

/**
 * Upstream bodies relayed unchanged (passthrough, logs) keep their Node stream here, so serveFetch can
 * pipe it straight into the client's socket instead of pumping it through a Web ReadableStream: same
 * bytes, same per-chunk flushing, without a promise per chunk (and without @hono/node-server's
 * content-length probe, which waits a timer tick on every streamed response).
 */
const nodeBodies = new WeakMap<ReadableStream<Uint8Array>, Readable>();

function nodeHeaders(res: Response): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  res.headers.forEach((v, k) => {
    if (k !== 'set-cookie') headers[k] = v;
  });
  const cookies = res.headers.getSetCookie();
  if (cookies.length) headers['set-cookie'] = cookies;
  return headers;
}

/**
 * Writes streamed bodies (no Content-Length: watch, logs, merged lists) itself, for two reasons:
 * - a body that is an upstream's Node stream is piped straight into the socket (see nodeBodies);
 * - a body that fails midway (an upstream cut) must end as a broken connection, the honest signal:
 *   @hono/node-server would log it and append an `Error: …` text to the stream first.
 * Answers with a known length go the adapter's own (faster) way.
 */
function writeStreamed(res: Response, out: ServerResponse): Response | undefined {
  const body = res.body;
  if (!body || body.locked) return undefined;
  const src = nodeBodies.get(body);
  if (!src && res.headers.has('content-length')) return undefined;
  out.writeHead(res.status, nodeHeaders(res));
  if (!res.headers.has('content-length')) out.flushHeaders();
  if (src) {
    nodeBodies.delete(body);
    src.on('error', (err) => out.destroy(err));
    out.on('close', () => {
      if (!src.readableEnded) {
        src.on('error', () => {});
        src.destroy();
      }
    });
    src.pipe(out);
  } else {
    const reader = body.getReader();
    out.on('close', () => void reader.cancel().catch(() => {}));
    const pump = async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return void out.end();
        if (!out.write(value))
          await new Promise<void>((r) => {
            // whichever comes first; the other listener is removed, so long bodies do not pile them up
            const done = () => {
              out.off('drain', done);
              out.off('close', done);
              r();
            };
            out.once('drain', done);
            out.once('close', done);
          });
        if (out.destroyed) return;
      }
    };
    pump().catch((err) => out.destroy(err as Error));
  }
  // tells @hono/node-server the response is already being written
  return new Response(null, { headers: { 'x-hono-already-sent': '1' } });
}

export class UndiciTransport implements Transport {
  private readonly agents = new Map<string, Agent>();

  private agentFor(ep: ResolvedEndpoint): Agent {
    let agent = this.agents.get(ep.poolKey);
    if (!agent) {
      agent = new Agent({
        connect: {
          // a blackholed host must fail within the endpoint's timeout too
          timeout: Math.min(ep.timeoutMs, 30_000),
          ca: ep.caPem,
          cert: ep.certPem,
          key: ep.keyPem,
          rejectUnauthorized: !ep.insecureSkipTLSVerify,
        },
        keepAliveTimeout: 30_000,
        // the client's own timeout covers time to headers; bodies (watch, logs -f) may stay open for hours
        headersTimeout: 0,
        bodyTimeout: 0,
        // no cap: every merged watch holds one upstream connection per cluster for as long as it runs
        // (HTTP/1.1), so a capped pool would leave the watch after the cap waiting forever
      });
      this.agents.set(ep.poolKey, agent);
    }
    return agent;
  }

  async send(ep: ResolvedEndpoint, req: UpstreamRequest): Promise<Response> {
    const headers: Record<string, string | string[]> = {};
    req.headers.forEach((v, k) => {
      const prev = headers[k];
      headers[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    });
    // identity lines (one Impersonate-Group per group): an array value is sent as one line per element
    for (const [name, v] of req.headerLines ?? []) {
      const k = name.toLowerCase();
      const prev = headers[k];
      headers[k] = prev === undefined ? [v] : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    const body = req.body as UpstreamRequest['body'];
    let r: Dispatcher.ResponseData;
    try {
      r = await request(req.url, {
        method: req.method as 'GET',
        headers,
        body: body as never,
        signal: req.signal,
        dispatcher: this.agentFor(ep),
        // undici's own timer: cheaper than an AbortController and a setTimeout per request
        headersTimeout: req.timeoutMs,
        bodyTimeout: 0,
      });
    } catch (err) {
      if (
        (err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT' ||
        (err as { code?: string }).code === 'UND_ERR_CONNECT_TIMEOUT'
      )
        throw new HeadersTimeoutError('no response headers in time');
      throw neutralError(err);
    }
    const out = new Headers();
    for (const [k, v] of Object.entries(r.headers)) {
      if (Array.isArray(v)) for (const x of v) out.append(k, x);
      else if (v !== undefined) out.set(k, v);
    }
    if (NULL_BODY.has(r.statusCode) || req.method === 'HEAD') {
      // drain (not destroy): an empty body leaves the pooled connection reusable
      await r.body.dump().catch(() => {});
      return new Response(null, { status: r.statusCode === 101 ? 502 : r.statusCode, headers: out });
    }
    return new Response(toWebStream(r.body), { status: r.statusCode, headers: out });
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((a) => a.close()));
    this.agents.clear();
  }
}

export function nodePlatform(): Platform {
  return {
    name: 'node',
    files: nodeFiles,
    transport: new UndiciTransport(),
    gzipResponses: true,
    maxConnectionsPerRequest: Number.POSITIVE_INFINITY,
    checkEndpoint() {
      // Node can do everything the config can say: private CAs, client certificates, skip-verify
    },
  };
}

/** What @hono/node-server hands the fetch handler besides the Request: the Node request and response. */
export interface NodeRequestEnv {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
}

export interface ServeOptions {
  port?: number;
  host?: string;
  tls?: HttpsOptions;
  /** largest request head Node accepts (default 16 KiB); larger ones get Node's bare 431 */
  maxHeaderSize?: number;
  /** time allowed for a request head, and for a whole request (defaults: HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS) */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** called per request before the handler; returning false destroys the connection (a "down" server) */
  admit?: (req: IncomingMessage) => boolean;
}

export interface ServedHandle {
  server: Server;
  url: string;
  port: number;
  /** stop accepting, end keep-alive connections, wait for in-flight ones (bounded by `graceMs`) */
  close(graceMs?: number): Promise<void>;
}

/**
 * How long Node waits for a request head, and for a whole request (head and body), before it answers
 * 408 itself: a slow client holds a socket for this long at most. The whole-request bound sits above the
 * fleet's own body deadline (src/middleware/limits), which answers first for a body the fleet reads;
 * Node's catches a body nobody reads (a refused request's). Neither affects a response: a watch runs on.
 */
export const HEADERS_TIMEOUT_MS = 30_000;
export const REQUEST_TIMEOUT_MS = 90_000;

/** Node's parser errors (node:http `clientError`), as the Status a Kubernetes client can read. */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'RequestHeaderFieldsTooLarge', 'request header fields too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Timeout', 'the request was not received in time'],
};

/** A Status written straight on the socket, which is then closed (the parser cannot go on after it). */
function rawStatus(socket: Duplex, code: number, reason: string, message: string): void {
  const body = JSON.stringify(failure(code, reason as never, message));
  socket.end(
    `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  // as Node's own handler: nothing to say to a socket that is gone, or one a response is already on
  const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || current?.headersSent) {
    socket.destroy();
    return;
  }
  const known = CLIENT_ERRORS[err.code ?? ''];
  if (known) rawStatus(socket, ...known);
  else rawStatus(socket, 400, 'BadRequest', `malformed HTTP request (${err.code ?? 'parse error'})`);
}

/**
 * `Expect` is answered here, by the server that reads the body, and never goes further: undici refuses
 * to send it ("expect header not supported"), and a 100 from a cluster could not reach the client anyway.
 * (Node's IncomingMessage cannot lose a header: its lazy `headers`/`headersDistinct` walk rawHeaders
 * by the count parsed, so the Web Request is rebuilt instead; only requests that carry it pay.)
 */
function withoutExpect(req: Request): Request {
  if (!req.headers.has('expect')) return req;
  const headers = new Headers(req.headers);
  headers.delete('expect');
  return new Request(req.url, {
    method: req.method,
    headers,
    body: req.body,
    signal: req.signal,
    duplex: 'half',
  } as RequestInit);
}

/** Serves a Web fetch handler over real HTTP(S) on Node. Port 0 lets the OS pick a free one. */
export async function serveFetch(
  fetch: (req: Request, env: NodeRequestEnv) => Response | Promise<Response>,
  opts: ServeOptions = {},
): Promise<ServedHandle> {
  const listener = getRequestListener(
    async (req: Request, env: unknown) => {
      const res = await fetch(withoutExpect(req), env as NodeRequestEnv);
      return writeStreamed(res, (env as NodeRequestEnv).outgoing) ?? res;
    },
    { overrideGlobalObjects: false },
  );
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (opts.admit && !opts.admit(req)) {
      req.socket.destroy();
      return;
    }
    void listener(req, res);
  };
  const headersTimeout = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  // connectionsCheckingInterval: how often Node looks for requests past their time (default 30 s)
  const checks = Math.max(50, Math.min(30_000, Math.floor(headersTimeout / 4)));
  const head = { maxHeaderSize: opts.maxHeaderSize, connectionsCheckingInterval: checks };
  const server: Server = opts.tls
    ? createHttpsServer({ ...opts.tls, ...head }, handler)
    : createHttpServer(head, handler);
  // Expect: 100-continue: the body is read by this server (within the fleet's limits), so it may come
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    res.writeContinue();
    handler(req, res);
  });
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const st = failure(417, 'ExpectationFailed' as never, `unsupported expectation: ${req.headers.expect}`);
    res.writeHead(417, { 'Content-Type': 'application/json', Connection: 'close' }).end(JSON.stringify(st));
  });
  server.on('clientError', answerClientError);
  server.headersTimeout = headersTimeout;
  server.requestTimeout = opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const scheme = opts.tls ? 'https' : 'http';
  return {
    server,
    port,
    url: `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close(graceMs = 5_000) {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        const t = setTimeout(() => {
          for (const s of sockets) s.destroy();
        }, graceMs);
        t.unref();
      });
    },
  };
}
