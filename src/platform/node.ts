/**
 * The Node side of the platform seam (see ./types.ts). Node-only: imported by deploy/node and by tests
 * that run on Node, never by code the worker bundles.
 *
 * - Transport: undici.request over one keep-alive pool (Agent) per upstream, with the endpoint's CA and
 *   client certificate. Measured faster than WHATWG fetch for relaying (RUNTIME-NOTES: ≈0.63× vs ≈0.38× of
 *   raw node:http piping).
 * - Upstream bodies keep their Node stream (nodeBodyOf), so the Node server (deploy/node/http.ts, where
 *   any Web fetch handler is served on a real HTTP(S) port) can pipe them to the client's socket.
 */
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { connect as h2Connect } from 'node:http2';
import { isIP, connect as netConnect } from 'node:net';
import type { Readable } from 'node:stream';
import { createSecureContext, type SecureContext, connect as tlsConnect } from 'node:tls';
import { setFlagsFromString } from 'node:v8';
import { Agent, type Dispatcher, request } from 'undici';
import { ConfigError, type FleetConfig } from '../config/schema.ts';
import { useWasmScanner } from '../merge/jsonsplit/wasm/lane.ts';
import { useLazyHeaders } from '../upstreams/client.ts';
import type { FileReader, ResolvedEndpoint } from '../upstreams/endpoint.ts';
import { PairHeaders } from '../upstreams/pair-headers.ts';
import { HeadersTimeoutError, type Transport, type UpstreamRequest } from '../upstreams/transport.ts';
import { useNativeChunks, usePushBodies } from '../util/chunks.ts';
import { type IndexOf, useNativeIndexOf } from '../util/lines.ts';
import { useNativePull } from '../util/pulled.ts';
import { shareHeartbeatTicks } from '../watch/heartbeat.ts';
import { useNativeEquality } from '../watch/read.ts';
import { codedError, connectTimeoutMs } from './node-dispatch.ts';
import { pulledReaderOf, sendPulled } from './node-list.ts';
import { H1Lists } from './node-list-h1.ts';
import { directPushBodies, nodeStreamChunks } from './node-streams.ts';
import { isWatchUrl, sendWatch, watchAnswerChunks } from './node-watch.ts';
import { H1Watches, type WatchConnect, type WatchSocket } from './node-watch-h1.ts';
import { type H2Session, H2Watches, type SessionConnector } from './node-watch-h2.ts';
import { SpareWatchSockets } from './node-watch-spare.ts';
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
export function neutralError(err: unknown): unknown {
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
 * Upstream bodies relayed unchanged (passthrough, logs) keep their Node stream here, so the Node server
 * can pipe it straight into the client's socket instead of pumping it through a Web ReadableStream: same
 * bytes, same per-chunk flushing, without a promise per chunk (and without @hono/node-server's
 * content-length probe, which waits a timer tick on every streamed response).
 */
const nodeBodies = new WeakMap<ReadableStream<Uint8Array>, Readable>();

/** The Node stream behind a Web body made by toWebStream, handed over once (the caller then owns it). */
export function nodeBodyOf(body: ReadableStream<Uint8Array>): Readable | undefined {
  const src = nodeBodies.get(body);
  if (src) nodeBodies.delete(body);
  return src;
}

let hooksInstalled = false;

/**
 * Node's process-wide hooks into src/ (each a `use…` of the module named), installed by one explicit
 * call from deploy/node (`startNodeFleet`), never by importing this module: a process that only reads a
 * helper from here, or runs the fleet as a plain Web app (mounted in another Node app), keeps the
 * runtime-neutral ways, which are also the Workers ones. Idempotent.
 *
 * Bodies read chunk by chunk (watch streams, src/util/chunks.ts) are read from undici's parser (a watch
 * answer, ./node-watch.ts) or from their Node stream's 'data' events: an idle watch then holds no Web
 * stream, reader or pending promise per upstream.
 */
export function installNodeHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  useNativeChunks(
    (body, sink) => watchAnswerChunks(body, sink) ?? nodeStreamChunks(nodeBodyOf(body), sink, neutralError),
  );
  // Node's timers belong to no request: every watch's heartbeat ticks from one interval
  shareHeartbeatTicks();
  // a merged watch's answer is written by its writer straight into the server's response (./node-streams.ts)
  usePushBodies(directPushBodies);
  // a merged list's sources are read from undici's parser, the connection read only as asked (./node-list.ts)
  useNativePull(pulledReaderOf);
  // watch lines are found by memchr (Buffer#indexOf takes any Uint8Array), not a byte at a time
  useNativeIndexOf(Buffer.prototype.indexOf as IndexOf);
  // the item scanner recognises values it validated before by memcmp (src/merge/jsonsplit/memo.ts)
  useNativeEquality((m, b, at) => Buffer.prototype.compare.call(m, b, at, at + m.length) === 0);
  // the item scanner's fast lane in WebAssembly SIMD (src/merge/jsonsplit/wasm/lane.ts)
  useWasmScanner(nodeScannerWasm());
  // the headers the upstream client hands on read as a Headers without an undici one built behind them
  useLazyHeaders((p) => new PairHeaders(p, true) as unknown as Headers);
}

/** the committed skip.wasm, beside the bundle (scripts/build-node.mjs copies it next to dist/node/main.js) or beside its text source (tsx, tests) */
function scannerWasmBytes(): Uint8Array<ArrayBuffer> | undefined {
  for (const place of ['./skip.wasm', '../merge/jsonsplit/wasm/skip.wasm']) {
    try {
      return new Uint8Array(readFileSync(new URL(place, import.meta.url)));
    } catch {}
  }
  return undefined;
}

let optimisedScanner: WebAssembly.Module | undefined;

/**
 * Compiles skip.wasm now, every function by V8's optimising compiler, for a process about to set
 * --liftoff-only (deploy/node/memory.ts): V8 compiles a wasm function at its first call with the flags then
 * in force, so the scanner would run on the baseline compiler for good, at 1.5× the in-process JSON merge's
 * CPU and 1.2× Table's (bench/lib/wasmtier-ab.ts). Its functions are small: < 5 ms, < 1 MiB of compiler
 * memory. nodeScannerWasm hands this module out.
 */
export function compileScannerWasmOptimised(): void {
  const bytes = scannerWasmBytes();
  if (!bytes) return;
  setFlagsFromString('--no-wasm-lazy-compilation');
  setFlagsFromString('--no-liftoff');
  try {
    optimisedScanner = new WebAssembly.Module(bytes);
  } catch {
    // refused: nodeScannerWasm tries again (and falls back to the JavaScript lane)
  } finally {
    setFlagsFromString('--liftoff');
    setFlagsFromString('--wasm-lazy-compilation');
  }
}

/**
 * The item scanner's WebAssembly lane (src/merge/jsonsplit/wasm/lane.ts): skip.wasm compiled once (by
 * {@link compileScannerWasmOptimised} in a fleet process). `off` (FLEET_SCANNER_WASM), no file, a module
 * refused: the JavaScript lane.
 */
export function nodeScannerWasm(env = process.env.FLEET_SCANNER_WASM): WebAssembly.Module | undefined {
  if (env === 'off') return undefined;
  if (optimisedScanner) return optimisedScanner;
  const bytes = scannerWasmBytes();
  if (!bytes) return undefined;
  try {
    return new WebAssembly.Module(bytes);
  } catch {
    return undefined;
  }
}

/**
 * HTTP/2 to the clusters (config `upstreamHttp2`, overridden by FLEET_UPSTREAM_HTTP2 when that is set):
 * `alpn` offers h2 to TLS upstreams (kube-apiserver speaks it, and client-go multiplexes every watch of a
 * host over one connection the same way); `h2c` speaks h2 with prior knowledge to plain-HTTP upstreams (a
 * test or bench upstream that serves h2c). `off`/unset: HTTP/1.1, one connection per upstream request.
 * With h2 a merged watch holds a stream per cluster, not a socket: no descriptor, socket buffers and
 * HTTP/1.1 client per upstream watch.
 */
export type UpstreamHttp2 = 'alpn' | 'h2c' | undefined;

const HTTP2_MODES = ['off', 'alpn', 'h2c'] as const;

/**
 * The upstream HTTP/2 mode: FLEET_UPSTREAM_HTTP2 (`env`) when set and not empty, else the configured one.
 * A value the variable cannot mean stops the start-up, as an invalid configuration does.
 */
export function upstreamHttp2Mode(
  configured: (typeof HTTP2_MODES)[number] | undefined,
  env: string | undefined = process.env.FLEET_UPSTREAM_HTTP2,
): UpstreamHttp2 {
  const mode = env ? env.trim() : configured;
  if (mode !== undefined && !(HTTP2_MODES as readonly string[]).includes(mode))
    throw new ConfigError(`FLEET_UPSTREAM_HTTP2: "${mode}" is not one of ${HTTP2_MODES.join(', ')}`);
  return mode === 'alpn' || mode === 'h2c' ? mode : undefined;
}

/** `ep` is spoken to over TLS, where ALPN lets the server offer h2 and HTTP/1.1 alike */
function overTls(ep: ResolvedEndpoint): boolean {
  return ep.server.startsWith('https:');
}

/** Agent options, and connector options (where undici's pool reads `useH2c`), for `mode` and `ep`. */
function http2Options(mode: UpstreamHttp2, ep: ResolvedEndpoint): { agent: object; connect: object } {
  const tls = overTls(ep);
  // the pool opens a session per request while its sessions are still connecting: a cap makes them
  // share (up to connections × streams, 64,000 watches a cluster, before a request waits for a stream)
  const h2 = { allowH2: true, maxConcurrentStreams: 1000, pipelining: 1000, connections: 64 };
  if (mode === 'h2c' && !tls) return { agent: h2, connect: { allowH2: true, useH2c: true } };
  if ((mode === 'alpn' || mode === 'h2c') && tls) return { agent: h2, connect: { allowH2: true } };
  return { agent: {}, connect: {} };
}

/** The endpoint's TLS settings, as every connection to it takes them (undici's pool, the watch connections). */
function endpointTls(ep: ResolvedEndpoint) {
  return { ca: ep.caPem, cert: ep.certPem, key: ep.keyPem, rejectUnauthorized: !ep.insecureSkipTLSVerify };
}

/**
 * A TLS connection to `host` with the endpoint's settings, SNI for a name (not an address), offering
 * `alpn`; `onread` as node:net takes it (node:tls hands it to the socket it makes).
 */
function tlsTo(host: string, port: number, ep: ResolvedEndpoint, alpn: string[], onread?: OnRead) {
  const to = `${host}:${port}`;
  const session = tlsSessions.get(ep)?.get(to);
  const socket = tlsConnect({
    host,
    port,
    ...(isIP(host) ? {} : { servername: host }),
    secureContext: secureContextOf(ep),
    rejectUnauthorized: !ep.insecureSkipTLSVerify,
    ALPNProtocols: alpn,
    ...(onread ? { onread } : {}),
    ...(session ? { session } : {}),
  });
  socket.once('session', (s: Buffer) => {
    const byHost = tlsSessions.get(ep) ?? new Map<string, Buffer>();
    tlsSessions.set(ep, byHost.set(to, s));
  });
  return socket;
}

/**
 * Each endpoint's TLS context (its CA, client certificate and key, parsed), made once: tls.connect given
 * the PEMs parses them again per connection, 5-25 ms of a watch's start on the loaded real bed, each
 * member's in turn before the next is dialled. Keyed like the sessions: new credentials, a new context.
 */
const secureContexts = new WeakMap<ResolvedEndpoint, SecureContext>();
function secureContextOf(ep: ResolvedEndpoint): SecureContext {
  let ctx = secureContexts.get(ep);
  if (!ctx) {
    const { ca, cert, key } = endpointTls(ep);
    ctx = createSecureContext({ ca, cert, key });
    secureContexts.set(ep, ctx);
  }
  return ctx;
}

/**
 * The last TLS session (ticket) each endpoint's server gave, by host and port: a watch opens a connection
 * of its own (./node-watch-h1.ts), and a resumed handshake skips the certificates and both signatures
 * (the client certificate's too), the most of a watch's start that is the fleet's own CPU. Keyed by the
 * resolved endpoint, so new credentials never resume an old session.
 */
const tlsSessions = new WeakMap<ResolvedEndpoint, Map<string, Buffer>>();

type OnRead = { buffer: Uint8Array; callback: (n: number, buf: Uint8Array) => boolean };

/**
 * Where every HTTP/1.1 watch connection reads (node:net's `onread`; node:tls passes it to the socket it
 * makes): a read is handed on synchronously and nothing keeps a view of it past that (./node-h1-call.ts
 * WatchConnector), so one buffer serves them all. A socket's own reads (its 'data' events) cost a new
 * buffer each and the stream's machinery: same run, alternating, 15 MiB over 10 plain connections 26-29 ms
 * of CPU that way against 7-8 ms into one buffer; 3 MiB over TLS 24.4 against 7.3 ms (medians of 16).
 * A list's connections (./node-list-h1.ts, no `reader`) read their 'data' events: the merge holds their
 * chunks past the read (./node-list.ts), which a shared buffer would overwrite.
 */
const WATCH_READS = Buffer.allocUnsafe(64 * 1024);

/**
 * An HTTP/1.1 connection to a cluster, a watch's (./node-watch-h1.ts) or a list's (./node-list-h1.ts),
 * with the endpoint's TLS settings and what undici's connector sets: no Nagle delay, TCP keep-alive
 * probes after 60 s (an idle watch notices a dead host), ALPN http/1.1. A watch's reads go to its
 * `reader`, as views of WATCH_READS; a list's are its 'data' events.
 */
export function connectWatch(
  { tls, host, port, ep }: WatchConnect,
  reader?: { feed(b: Buffer): void },
): WatchSocket {
  const onread: OnRead | undefined = reader && {
    buffer: WATCH_READS,
    callback: (n, buf) => {
      reader.feed((buf as Buffer).subarray(0, n));
      // false would pause the socket: the reader pauses it itself when it must
      return true;
    },
  };
  const socket = tls
    ? tlsTo(host, port, ep, ['http/1.1'], onread)
    : netConnect({ host, port, ...(onread ? { onread } : {}) });
  socket.setNoDelay(true);
  socket.setKeepAlive(true, 60_000);
  return socket as unknown as WatchSocket;
}

/**
 * An HTTP/2 watch session (./node-watch-h2.ts): h2c with prior knowledge, or TLS offering h2 and
 * HTTP/1.1 by ALPN (`ready(undefined)`: the server picked HTTP/1.1), within the pool's connect timeout.
 */
const connectSession: SessionConnector = (origin, ep, ready, failed) => {
  if (origin.protocol !== 'https:') {
    ready(h2Connect(origin.origin) as unknown as H2Session);
    return;
  }
  const host = origin.hostname.startsWith('[') ? origin.hostname.slice(1, -1) : origin.hostname;
  const socket = tlsTo(host, Number(origin.port) || 443, ep, ['h2', 'http/1.1']);
  const timer = setTimeout(
    () => socket.destroy(codedError('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT')),
    connectTimeoutMs(ep),
  );
  socket.once('error', (err) => {
    clearTimeout(timer);
    failed(err);
  });
  socket.once('secureConnect', () => {
    clearTimeout(timer);
    socket.removeAllListeners('error');
    socket.setKeepAlive(true, 60_000);
    if (socket.alpnProtocol !== 'h2') {
      socket.destroy();
      ready(undefined);
      return;
    }
    ready(h2Connect(origin.origin, { createConnection: () => socket }) as unknown as H2Session);
  });
};

/** `ep` is spoken to over HTTP/2 (or offered it by ALPN) in `mode`: what http2Options gives undici */
function speaksH2(mode: UpstreamHttp2, ep: ResolvedEndpoint): boolean {
  return mode !== undefined && (mode === 'h2c' || overTls(ep));
}

/**
 * A call undici's pool may send over h2: a bodyless GET or HEAD. undici 7.30's h2 client fails the rest
 * (docs/upstream-http2.md): a DELETE with a body throws in its write and leaves its connection counting
 * a call that never ends; a write, or any body it streams, waits until no other call runs on the
 * connection, for ever behind a watch or `logs -f`. Those go over HTTP/1.1 where the server speaks it.
 */
function viaH2(method: string, body: unknown): boolean {
  return (method === 'GET' || method === 'HEAD') && (body === null || body === undefined);
}

/** the methods undici's h2 client sends a body's length for (writeH2's `expectsPayload`) */
const H2_LENGTHS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * A write on an h2c pool as undici 7.30's h2 client can send it (docs/upstream-http2.md): not held back
 * until the connection is idle (`idempotent`), and another method's body (a DELETE's DeleteOptions) as
 * an iterable, which it sends without the length it would assert on.
 */
const h2cWrites: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
  if (opts.method === 'GET' || opts.method === 'HEAD') return dispatch(opts, handler);
  const body = opts.body;
  const bytes = body instanceof Uint8Array || typeof body === 'string';
  const wrapped =
    bytes && !H2_LENGTHS.has(opts.method) ? [typeof body === 'string' ? Buffer.from(body) : body] : body;
  return dispatch({ ...opts, body: wrapped as never, idempotent: true }, handler);
};

export class UndiciTransport implements Transport {
  private readonly agents = new Map<string, Dispatcher>();
  /** HTTP/1.1 watches: a connection of their own each, not undici's pool (./node-watch-h1.ts) */
  private readonly h1Watches = new Map<string, H1Watches>();
  /** HTTP/2 watches: streams of node:http2 sessions, not undici's pool (./node-watch-h2.ts) */
  private readonly h2Watches = new Map<string, H2Watches>();
  /** merged lists' pulled answers over HTTP/1.1: kept-alive connections of their own (./node-list-h1.ts) */
  private readonly h1Lists = new Map<string, H1Lists>();
  /** pulled calls listen through ./node-dispatch.ts's DispatchAnswer, one listener per signal */
  readonly pulledSignalShared = true;

  constructor(private readonly http2: UpstreamHttp2 = upstreamHttp2Mode(undefined)) {}

  /** HTTP/1.1 pools of endpoints spoken to over h2: their writes go there ({@link viaH2}) */
  private readonly h1Agents = new Map<string, Dispatcher>();

  private agentFor(ep: ResolvedEndpoint, method = 'GET', body: unknown = null): Dispatcher {
    // over TLS, where ALPN lets the server speak HTTP/1.1 too (h2c's server may speak nothing else)
    if (!viaH2(method, body) && this.http2 && overTls(ep)) return this.pool(this.h1Agents, ep, undefined);
    return this.pool(this.agents, ep, this.http2);
  }

  private pool(agents: Map<string, Dispatcher>, ep: ResolvedEndpoint, mode: UpstreamHttp2): Dispatcher {
    let agent = agents.get(ep.poolKey);
    if (!agent) {
      const h2 = http2Options(mode, ep);
      const made = new Agent({
        ...h2.agent,
        connect: { ...h2.connect, timeout: connectTimeoutMs(ep), ...endpointTls(ep) },
        keepAliveTimeout: 30_000,
        // the client's own timeout covers time to headers; bodies (watch, logs -f) may stay open for hours
        headersTimeout: 0,
        bodyTimeout: 0,
        // no cap: every merged watch holds one upstream connection per cluster for as long as it runs
        // (HTTP/1.1), so a capped pool would leave the watch after the cap waiting forever
      });
      // h2c: the server may speak nothing but h2, so its writes stay on it, as undici can send them
      agent = mode === 'h2c' && !overTls(ep) ? made.compose(h2cWrites) : made;
      agents.set(ep.poolKey, agent);
    }
    return agent;
  }

  /** where an endpoint's watches are sent: undici's pool over HTTP/2, a connection of their own over 1.1 */
  private watchesFor(ep: ResolvedEndpoint): H1Watches | H2Watches {
    if (speaksH2(this.http2, ep)) {
      let w = this.h2Watches.get(ep.poolKey);
      if (!w) {
        w = new H2Watches(ep, connectSession, this.agentFor(ep));
        this.h2Watches.set(ep.poolKey, w);
      }
      return w;
    }
    let w = this.h1Watches.get(ep.poolKey);
    if (!w) {
      w = new H1Watches(ep, connectWatch, new SpareWatchSockets(connectWatch));
      this.h1Watches.set(ep.poolKey, w);
    }
    return w;
  }

  /** where an endpoint's pulled answers are read: undici's pool over HTTP/2, connections of their own over 1.1 */
  private listsFor(ep: ResolvedEndpoint): H1Lists | Dispatcher {
    if (speaksH2(this.http2, ep)) return this.agentFor(ep);
    let l = this.h1Lists.get(ep.poolKey);
    if (!l) {
      l = new H1Lists(ep, connectWatch);
      this.h1Lists.set(ep.poolKey, l);
    }
    return l;
  }

  /** the keep-alive pool for a call to an endpoint (deploy/node/relay.ts dispatches into it directly) */
  dispatcherFor(ep: ResolvedEndpoint, method?: string, body?: unknown): Dispatcher {
    return this.agentFor(ep, method, body);
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
    // watches: a dispatch handler of their own, so an idle one holds no body stream (./node-watch.ts)
    if (req.method === 'GET' && !body && isWatchUrl(req.url))
      return sendWatch(this.watchesFor(ep), req, headers, neutralError);
    if (req.pulled && req.method === 'GET' && !body)
      return sendPulled(this.listsFor(ep), req, headers, neutralError);
    let r: Dispatcher.ResponseData;
    try {
      r = await request(req.url, {
        method: req.method as 'GET',
        headers,
        body: body as never,
        signal: req.signal,
        dispatcher: this.agentFor(ep, req.method, body),
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
    for (const w of [...this.h1Watches.values(), ...this.h2Watches.values(), ...this.h1Lists.values()])
      w.close();
    this.h1Watches.clear();
    this.h2Watches.clear();
    this.h1Lists.clear();
    await Promise.all([...this.agents.values(), ...this.h1Agents.values()].map((a) => a.close()));
    this.agents.clear();
    this.h1Agents.clear();
  }
}

/** The Node platform; `config.upstreamHttp2` (or FLEET_UPSTREAM_HTTP2) chooses the upstream protocol. */
export function nodePlatform(config?: Pick<FleetConfig, 'upstreamHttp2'>): Platform {
  return {
    name: 'node',
    files: nodeFiles,
    transport: new UndiciTransport(upstreamHttp2Mode(config?.upstreamHttp2)),
    gzipResponses: true,
    maxConnectionsPerRequest: Number.POSITIVE_INFINITY,
    checkEndpoint() {
      // Node can do everything the config can say: private CAs, client certificates, skip-verify
    },
  };
}
