/**
 * The Node fast path of passthrough (`/clusterspaces/<cluster>/…`, src/routes/passthrough.ts): the
 * upstream's answer goes from undici's parser straight to the client's ServerResponse.
 *
 * The request still runs the whole chain (limits, authentication, audit, impersonation, authorization,
 * metrics) and the upstream client still builds what goes upstream (header hygiene, the fleet's
 * credential, Impersonate-* lines, traceparent) and hears the answer (audit, upstream metrics): only the
 * last hop differs. Instead of undici.request (a body Readable, a promise) wrapped in a Web Response with
 * a Headers and a ReadableStream, the call is a raw `dispatch` whose handler:
 * - settles the send with a {@link DirectResponse}: a Response whose headers and body are made only if
 *   someone above reads them (a long-running request's metrics wrap the body, for instance);
 * - holds the first bytes (at most {@link HOLD_BYTES}; the parser is paused past that) until the Node
 *   entry attaches the client's ServerResponse (deploy/node/http.ts), then writes status, the upstream's
 *   headers minus hop-by-hop ones, and the body as it comes, with backpressure both ways.
 * An upstream cut mid-body destroys the client's connection (the honest signal, as the piped path does);
 * a client that goes away aborts the upstream request.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Dispatcher } from 'undici';
import { neutralError, type UndiciTransport } from '../../src/platform/node.ts';
import type { DirectRelay } from '../../src/platform/types.ts';
import { headerPairs } from '../../src/request/headers.ts';
import type { ResolvedEndpoint } from '../../src/upstreams/endpoint.ts';
import type { Transport, UpstreamRequest } from '../../src/upstreams/transport.ts';
import { bodyEnded } from '../../src/util/ends.ts';
import { DirectResponse, Exchange, exchangeOfBody, type Pairs } from './relay-answer.ts';

/** "scheme://host:port" and "/path?query" of an absolute URL, split without parsing it again. */
function splitUrl(url: string): { origin: string; path: string } {
  const at = url.indexOf('/', url.indexOf('//') + 2);
  return at < 0 ? { origin: url, path: '/' } : { origin: url.slice(0, at), path: url.slice(at) };
}

/** What the relay needs of the platform's transport: its keep-alive pool for an endpoint. */
export type Pools = Pick<UndiciTransport, 'dispatcherFor'>;

/** The transport a direct relay hands the upstream client: a raw dispatch into the endpoint's pool. */
function directTransport(pools: Pools, markStreaming: boolean, relay: NodeDirectRelay): Transport {
  return {
    // it reads only `aborted`: the client going away is heard from its response (NodeDirectRelay)
    signalUnheard: true,
    send(ep: ResolvedEndpoint, req: UpstreamRequest): Promise<Response> {
      // the client's entries as they are, then the identity lines (one Impersonate-Group per group),
      // each its own line: one array of the final length (a copy grown by pushes is copied again)
      const pairs = headerPairs(req.headers);
      const lines = req.headerLines ?? [];
      const headers = new Array<string>(pairs.length + 2 * lines.length);
      for (let i = 0; i < pairs.length; i++) headers[i] = pairs[i]!;
      for (let i = 0, j = pairs.length; i < lines.length; i++, j += 2) {
        headers[j] = lines[i]![0];
        headers[j + 1] = lines[i]![1];
      }
      const { origin, path } = splitUrl(req.url);
      return new Promise<Response>((resolve, reject) => {
        const ex = new Exchange(markStreaming, { resolve, reject });
        relay.track(ex);
        if (req.signal?.aborted) return reject(neutralError(req.signal.reason));
        pools.dispatcherFor(ep, req.method, req.body).dispatch(
          {
            origin,
            path,
            method: req.method as Dispatcher.HttpMethod,
            headers,
            body: req.body as Dispatcher.DispatchOptions['body'],
            headersTimeout: req.timeoutMs,
            bodyTimeout: 0,
          },
          ex,
        );
      });
    },
  };
}

/** the signal of each client connection that has carried a passthrough request */
const connectionSignals = new WeakMap<Socket, AbortController>();

/**
 * One request's direct relay (created per request by deploy/node/server.ts; costs nothing until the
 * passthrough route uses it). When the client's response closes before an answer is complete, the
 * upstream call is aborted and `signal` fires.
 */
export class NodeDirectRelay implements DirectRelay {
  private ac?: AbortController;
  /** the calls sent through it: a passthrough makes one (a Set per request was ≈ 0.4 KiB of garbage) */
  private exchange?: Exchange;
  private more?: Exchange[];
  private watching = false;

  constructor(
    private readonly pools: Pools,
    private readonly out: ServerResponse,
  ) {}

  get signal(): AbortSignal {
    this.watch();
    const socket = this.out.socket;
    if (!socket || socket.destroyed) {
      this.ac ??= new AbortController();
      return this.ac.signal;
    }
    // one per connection, not per request: an answer left unfinished means the socket goes with it
    // (Node destroys it), so "the client went away" is "its connection closed"
    let ac = connectionSignals.get(socket);
    if (!ac) {
      const made = new AbortController();
      connectionSignals.set(socket, made);
      socket.once('close', () => made.abort(new DOMException('the client went away', 'AbortError')));
      ac = made;
    }
    return ac.signal;
  }

  transport(opts: { streaming: boolean }): Transport {
    this.watch();
    return directTransport(this.pools, opts.streaming, this);
  }

  /** `ex` is one of this request's calls */
  track(ex: Exchange): void {
    if (!this.exchange) this.exchange = ex;
    else if (this.more) this.more.push(ex);
    else this.more = [ex];
  }

  owns(res: Response): boolean {
    if (!(res instanceof DirectResponse)) return false;
    const ex = res.exchange;
    return ex === this.exchange || (this.more?.includes(ex) ?? false);
  }

  private watch(): void {
    if (this.watching) return;
    this.watching = true;
    // a response closes once: `on` spares the wrapper `once` makes per request
    this.out.on('close', () => {
      if (this.out.writableFinished) return;
      const reason = new DOMException('the client went away', 'AbortError');
      this.ac?.abort(reason);
      this.exchange?.cancel(reason);
      if (this.more) for (const ex of this.more) ex.cancel(reason);
    });
  }
}

/** how long the head of a body of unknown length waits for the body's first bytes to go out with them */
const HEAD_ALONE_MS = 5;

const NEWLINE = 10;

/**
 * A watch being written directly, as the Node entry ends it at the end of a drain window
 * (deploy/node/http.ts): `register` is handed the function that ends it cleanly between two events.
 */
export type WatchEnding = (end: () => void) => void;

/**
 * Writes a direct answer to the client, if `res` is one (or carries one's untouched body) and nothing
 * has read its body yet. Returns false otherwise: the caller writes `res` its usual way.
 * `headersOf`: the Response's headers as Node takes them, for a Response whose headers were read.
 * `watch`: given for a JSON watch, whose stream may then be ended between two events.
 */
export function writeDirect(
  res: Response,
  out: ServerResponse,
  headersOf: (res: Response) => Record<string, string | string[]>,
  watch?: WatchEnding,
): boolean {
  let ex: Exchange | undefined;
  let head: Pairs | Record<string, string | string[]>;
  let sized: boolean;
  // the body stream someone took without reading it (to hear its end): told when the answer is over
  let taken: ReadableStream<Uint8Array> | undefined;
  if (res instanceof DirectResponse) {
    if (res.bodyRead || !res.exchange.attachable) return false;
    ex = res.exchange;
    head = res.headersChanged ? headersOf(res as unknown as Response) : res.pairs;
    sized = res.sized;
    taken = res.bodyTaken;
  } else {
    ex = exchangeOfBody(res.body);
    if (!ex) return false;
    head = headersOf(res);
    sized = res.headers.has('content-length');
    taken = res.body ?? undefined;
  }
  if (taken) {
    const body = taken;
    out.once('close', () => bodyEnded(body));
  }
  const whole = ex.takeWhole();
  out.writeHead(res.status, head as never);
  if (whole) {
    // head and a small body in one write
    if (whole.length === 1) out.end(whole[0]);
    else {
      for (const c of whole) out.write(c);
      out.end();
    }
    return true;
  }
  stream(ex, out, sized, watch);
  return true;
}

/** The rest of an answer as it comes, with backpressure both ways; see {@link writeDirect}. */
function stream(exchange: Exchange, out: ServerResponse, sized: boolean, watch?: WatchEnding): void {
  // the head goes out with the first body bytes; a body of unknown length slow to start (a cluster
  // still listing) gets its head on its own after HEAD_ALONE_MS
  let headTimer = sized
    ? undefined
    : setTimeout(() => {
        headTimer = undefined;
        if (!out.destroyed) out.flushHeaders();
      }, HEAD_ALONE_MS);
  const stopTimer = () => {
    if (headTimer) clearTimeout(headTimer);
    headTimer = undefined;
  };
  // what the parser hands over in one go (a small body and its end, often) leaves in one write
  let corked = false;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    out.uncork();
  };
  // a watch ended by a drain: what the upstream still does is no longer the client's
  let stopped = false;
  let atBoundary = true;
  if (watch) {
    const end = () => {
      if (stopped) return;
      stopped = true;
      stopTimer();
      corked = false;
      if (atBoundary) out.end();
      else out.destroy();
      exchange.cancel(new DOMException('the server is draining', 'AbortError'));
    };
    watch(end);
  }
  exchange.attach({
    data(chunk) {
      stopTimer();
      if (stopped || out.destroyed) return false;
      if (chunk.length) atBoundary = chunk[chunk.length - 1] === NEWLINE;
      if (!corked) {
        corked = true;
        out.cork();
        process.nextTick(uncork);
      }
      if (out.write(chunk)) return true;
      out.once('drain', () => exchange.resume());
      return false;
    },
    end() {
      stopTimer();
      if (stopped) return;
      // end() uncorks the socket fully
      corked = false;
      out.end();
    },
    fail(err) {
      stopTimer();
      if (stopped) return;
      corked = false;
      out.destroy(err);
    },
  });
}
