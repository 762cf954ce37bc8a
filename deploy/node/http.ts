/**
 * The Node HTTP(S) server: any Web fetch handler (the fleet, a simulated cluster, a test upstream) on a
 * real port: plain GETs and HEADs (most requests, the passthrough's included) through a request and
 * writer of its own (./listener.ts), the rest through @hono/node-server; with what the adapter does
 * not do the way a Kubernetes client needs: streamed bodies written as they come (and upstream Node streams piped straight to the socket),
 * parser errors as Statuses, `Expect` answered here, and a drain that ends watches cleanly.
 */
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { createServer as createHttpsServer, type ServerOptions as HttpsOptions } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { getRequestListener } from '@hono/node-server';
import { kubeJson } from '../../src/kube/json.ts';
import { failure } from '../../src/kube/status.ts';
import { nodeBodyOf } from '../../src/platform/node.ts';
import { attachDirect } from '../../src/platform/node-streams.ts';
import { isWatchUrl } from '../../src/platform/node-watch.ts';
import { PairHeaders } from '../../src/upstreams/pair-headers.ts';
import { recyclePiece } from '../../src/util/bytes.ts';
import { takePieces } from '../../src/util/pieces.ts';
import { drainedOrClosed, plainRequest, writeAnswer, writeFailure } from './listener.ts';
import { writeDirect } from './relay.ts';
import { refuseRequestHead } from './request-head.ts';

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
/** after a drain window, how long ended watches get to flush their last bytes before sockets are cut */
const DRAIN_CUT_MS = 500;
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

/** A 400 Status for a request refused before any handler runs; the connection is closed after it, as Go does. */
function badRequest(res: ServerResponse, message: string): void {
  const body = kubeJson(failure(400, 'BadRequest', message));
  res.writeHead(400, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
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

const awaiting = new WeakSet<IncomingMessage>();

/**
 * True while a request that said `Expect: 100-continue` has not been asked for its body: the client
 * waits for the answer before sending it, so there is nothing to read away before answering.
 */
export function awaitingContinue(req: IncomingMessage): boolean {
  return awaiting.has(req);
}

/**
 * Sends `100 Continue` on the first read of `req`'s body (Node's IncomingMessage pulls the socket in its
 * `_read`); until then the answer closes the connection: a body that was announced but not asked for
 * may still come, and would be read as the next request.
 */
function continueOnRead(req: IncomingMessage, res: ServerResponse): void {
  const keepAlive = res.shouldKeepAlive;
  res.shouldKeepAlive = false;
  awaiting.add(req);
  const read = req._read;
  req._read = function (this: IncomingMessage, n: number) {
    req._read = read;
    awaiting.delete(req);
    if (!res.headersSent) {
      res.shouldKeepAlive = keepAlive;
      res.writeContinue();
    }
    return read.call(this, n);
  };
}

/** Node's raw header lines (name, value, name, value…) without `Expect` */
function withoutExpectLines(lines: string[]): string[] {
  const out: string[] = [];
  for (let j = 0; j < lines.length; j += 2)
    if (lines[j]!.toLowerCase() !== 'expect') out.push(lines[j]!, lines[j + 1]!);
  return out.length === lines.length ? lines : out;
}

function nodeHeaders(res: Response): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  res.headers.forEach((v, k) => {
    if (k !== 'set-cookie') headers[k] = v;
  });
  const cookies = res.headers.getSetCookie();
  if (cookies.length) headers['set-cookie'] = cookies;
  return headers;
}

/** A watch being written: how to end it at the end of a drain window (see ServedHandle.close). */
type Ending = () => void;

/**
 * A watch request (`?watch=true`, or the legacy `/watch/` path). At the end of a drain its stream is
 * ended cleanly, between two events, as kube-apiserver closes watches when it shuts down: the client
 * sees a finished watch and starts a new one (on another replica or worker), not a broken connection.
 */
export function isWatchTarget(target: string | undefined): boolean {
  return target !== undefined && isWatchUrl(target);
}

const NEWLINE = 10;

/**
 * Tells @hono/node-server the response is already being written. One for all: the adapter only reads
 * its status, body and headers (`has('set-cookie')`, then every pair), so it is a Response in shape
 * only, whose headers are one pair in an array: no Headers to iterate (sorted, brand-checked) per answer.
 */
const SENT_PAIRS: ReadonlyArray<[string, string]> = [['x-hono-already-sent', '1']];
const SENT_HEADERS = Object.setPrototypeOf(
  {
    has: (name: string) => name.toLowerCase() === 'x-hono-already-sent',
    get: (name: string) => (name.toLowerCase() === 'x-hono-already-sent' ? '1' : null),
    forEach: (f: (v: string, k: string) => void) => f('1', 'x-hono-already-sent'),
    entries: () => SENT_PAIRS[Symbol.iterator](),
    [Symbol.iterator]: () => SENT_PAIRS[Symbol.iterator](),
  },
  Headers.prototype,
) as Headers;
const ALREADY_SENT = Object.setPrototypeOf(
  { status: 200, body: null, headers: SENT_HEADERS },
  Response.prototype,
) as Response;

/** A chunk of a streamed body: a Web reader's read, or a generator's next. */
type BodyRead = ReadableStreamReadResult<Uint8Array> | IteratorResult<Uint8Array>;

interface PumpOptions {
  /**
   * ask for the next chunk before the socket drains this one: a merge makes its next piece while the
   * socket takes this one, as behind the Web stream's one-piece queue (waiting for the drain first left
   * the merge idle for it: a later last byte)
   */
  ahead?: boolean;
  /** each chunk, as it is written (a watch's event boundaries) */
  chunk?(chunk: Uint8Array): void;
  /** a read failed, before the answer is cut (the merge's own report of it) */
  failed?(err: unknown): void;
}

/**
 * Writes a streamed body into `out` as `read` gives it, waiting for the socket's drain when it is full,
 * until the body ends (and `out` with it) or `out` is ended or destroyed meanwhile (the client gone, a
 * drain ending a watch). A failed read rejects: the caller cuts the answer.
 */
async function pump(out: ServerResponse, read: () => Promise<BodyRead>, o: PumpOptions): Promise<void> {
  let next = read();
  for (;;) {
    let r: BodyRead;
    try {
      r = await next;
    } catch (err) {
      o.failed?.(err);
      throw err;
    }
    if (out.writableEnded || out.destroyed) return;
    if (r.done) return void out.end();
    const value = r.value;
    o.chunk?.(value);
    // a merged list's piece (src/util/bytes.ts) is this writer's alone once read: given back when the
    // socket has taken its bytes, the merge writes its next piece into it
    const room = out.write(value, (err) => err || recyclePiece(value));
    if (o.ahead) {
      next = read();
      next.catch(() => {});
    }
    if (!room) await drainedOrClosed(out);
    if (out.destroyed) return;
    if (!o.ahead) next = read();
  }
}

/**
 * Writes streamed bodies (no Content-Length: watch, logs, merged lists) itself, for two reasons:
 * - a body that is an upstream's Node stream is piped straight into the socket (see nodeBodies);
 * - a body that fails midway (an upstream cut) must end as a broken connection, the honest signal:
 *   @hono/node-server would log it and append an `Error: …` text to the stream first.
 * Answers with a known length go the adapter's own (faster) way; the direct relay's answers (./relay.ts)
 * are written by it. A watch registers in `watches` how to end it cleanly when the server drains.
 */
function writeStreamed(res: Response, out: ServerResponse, watches: Set<Ending>): boolean {
  // JSON watch events end with a newline: the stream may be ended cleanly only right after one
  const watch = isWatchTarget(out.req?.url) && /json/i.test(res.headers.get('content-type') ?? '');
  // a passthrough answer of the direct relay (./relay.ts), before anything touches its body; a watch
  // among them is ended cleanly at the end of a drain like the others
  const directWatch = watch
    ? (end: Ending) => {
        watches.add(end);
        out.on('close', () => watches.delete(end));
      }
    : undefined;
  if (writeDirect(res, out, nodeHeaders, directWatch)) return true;
  const body = res.body;
  if (!body || body.locked) return false;
  const src = nodeBodyOf(body);
  if (!src && res.headers.has('content-length')) return false;
  out.writeHead(res.status, nodeHeaders(res));
  // a watch's (or a slow list's) client must see the head before the first event; a body whose first
  // bytes are already here carries the head in the same write (one syscall fewer per small answer)
  if (!res.headers.has('content-length') && !(src && src.readableLength > 0)) out.flushHeaders();
  let atBoundary = true;
  const track = (chunk: Uint8Array) => {
    atBoundary = chunk.length === 0 ? atBoundary : chunk[chunk.length - 1] === NEWLINE;
  };
  const finish = () => {
    if (atBoundary) out.end();
    else out.destroy();
  };
  // a merged watch's answer (src/platform/node-streams.ts): written straight into `out` by its writer
  const direct = src ? undefined : attachDirect(body, out, watch ? { chunk: track } : undefined);
  const pieces = src || direct || watch ? undefined : takePieces(body);
  if (direct) {
    if (watch) {
      const ending = () => {
        direct.cancel();
        finish();
      };
      watches.add(ending);
      // one listener for both: an idle watch holds each listener it has for as long as it runs
      out.on('close', () => {
        direct.cancel();
        watches.delete(ending);
      });
    } else out.on('close', () => direct.cancel());
  } else if (src) {
    src.on('error', (err) => out.destroy(err));
    out.on('close', () => {
      if (!src.readableEnded) {
        src.on('error', () => {});
        src.destroy();
      }
    });
    if (watch) {
      src.on('data', track);
      const ending = () => {
        src.off('data', track);
        src.unpipe(out);
        src.on('error', () => {});
        src.destroy();
        finish();
      };
      watches.add(ending);
      out.on('close', () => watches.delete(ending));
    }
    src.pipe(out);
  } else if (pieces) {
    // a merged list's pieces taken from its merge as it makes them: no Web stream between (≈ µs a piece)
    const merge = pieces.pieces;
    out.on('close', () => void merge.return(undefined).catch(() => {}));
    pump(out, () => merge.next(), { ahead: true, failed: (err) => pieces.failed(err) }).catch((err) =>
      out.destroy(err as Error),
    );
  } else {
    const reader = body.getReader();
    out.on('close', () => void reader.cancel().catch(() => {}));
    if (watch) {
      const ending = () => {
        finish();
        void reader.cancel().catch(() => {});
      };
      watches.add(ending);
      out.on('close', () => watches.delete(ending));
    }
    pump(out, () => reader.read(), watch ? { chunk: track } : {}).catch((err) => out.destroy(err as Error));
  }
  return true;
}

/** Serves a Web fetch handler over real HTTP(S) on Node. Port 0 lets the OS pick a free one. */
export async function serveFetch(
  fetch: (req: Request, env: NodeRequestEnv) => Response | Promise<Response>,
  opts: ServeOptions = {},
): Promise<ServedHandle> {
  const watches = new Set<Ending>();
  const listener = getRequestListener(
    async (req: Request, env: unknown) => {
      // a GET or HEAD has no body in the Web Request @hono/node-server builds (it drops one that was
      // sent); saying so up front spares reading `body` the construction of the full Request behind it
      if (req.method === 'GET' || req.method === 'HEAD') Object.defineProperty(req, 'body', { value: null });
      // the request's headers from the lines Node parsed, read without a Fetch Headers being built (the
      // adapter's own make one as soon as they are iterated, which the filters do: src/upstreams/pair-headers.ts)
      // (`Expect` left out, see withoutExpect, here by its lines: rebuilding the Request would create its
      // body, which starts reading it, and so send `100 Continue` before the limits are checked)
      Object.defineProperty(req, 'headers', {
        value: new PairHeaders(withoutExpectLines((env as NodeRequestEnv).incoming.rawHeaders)),
      });
      const res = await fetch(req, env as NodeRequestEnv);
      return writeStreamed(res, (env as NodeRequestEnv).outgoing, watches) ? ALREADY_SENT : res;
    },
    { overrideGlobalObjects: false },
  );
  const write = (res: Response, out: ServerResponse) => {
    try {
      if (!writeStreamed(res, out, watches)) writeAnswer(res, out, nodeHeaders);
    } catch (err) {
      writeFailure(err, out);
    }
  };
  // a GET or HEAD with a plain target: the request and its answer made here (./listener.ts); not an
  // async function, whose suspended frame would be allocated per request: one `then` waits instead
  const served = (req: Request, env: NodeRequestEnv): void => {
    const out = env.outgoing;
    let answer: Response | Promise<Response>;
    try {
      answer = fetch(withoutExpect(req), env);
    } catch (err) {
      writeFailure(err, out);
      return;
    }
    if (answer instanceof Promise)
      answer.then(
        (res) => write(res, out),
        (err: unknown) => writeFailure(err, out),
      );
    else write(answer, out);
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (opts.admit && !opts.admit(req)) {
      req.socket.destroy();
      return;
    }
    const refused = refuseRequestHead(req);
    if (refused) {
      badRequest(res, refused);
      return;
    }
    const plain = plainRequest(req, res);
    if (plain) served(plain, { incoming: req, outgoing: res });
    else void listener(req, res);
  };
  const headersTimeout = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  // connectionsCheckingInterval: how often Node looks for requests past their time (default 30 s)
  const checks = Math.max(50, Math.min(30_000, Math.floor(headersTimeout / 4)));
  // the Host checks are the handler's (a Status, not Node's bodyless 400)
  const head = {
    maxHeaderSize: opts.maxHeaderSize,
    connectionsCheckingInterval: checks,
    requireHostHeader: false,
  };
  const server: Server = opts.tls
    ? createHttpsServer({ ...opts.tls, ...head }, handler)
    : createHttpServer(head, handler);
  // Expect: 100-continue: `100 Continue` when the body is first read, as Go's net/http (kube-apiserver)
  // sends it; a request refused before its body is read (a Content-Length over the limit: the limits
  // filter answers from the headers) gets its answer alone, and the connection closes after it, as the
  // client may or may not send the body it announced
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    continueOnRead(req, res);
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
        // at the end of the window, watches end cleanly between events; whatever is still open a
        // moment later (a request that would not finish, a watch cut mid-event) is cut
        const t = setTimeout(() => {
          for (const end of [...watches]) end();
          watches.clear();
          server.closeIdleConnections();
          setTimeout(() => {
            for (const s of sockets) s.destroy();
          }, DRAIN_CUT_MS).unref();
        }, graceMs);
        t.unref();
      });
    },
  };
}
